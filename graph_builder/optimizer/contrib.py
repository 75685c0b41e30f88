"""onnxruntime's contrib operators (domain com.microsoft) that target="onnxruntime" writes.

Each is declared with its inputs, outputs, type constraints and attributes as onnxruntime 1.31
registers them (`onnxruntime.capi.onnxruntime_pybind11_state.get_all_operator_schema()`), so a
rewrite calls it like any `op.X`; the schemas are kept here, not registered in onnx.defs (onnx's
checker and reference evaluator behave as before). onnx cannot infer their outputs: `call` gives
each output the type the rewrite knows it has.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from onnx import defs

from graph_builder.ir import Value
from graph_builder.opset import OpFunction
from graph_builder.schema import OpSignature
from graph_builder.types import DType

DOMAIN = "com.microsoft"
_FLOATS = ["tensor(float)", "tensor(float16)", "tensor(bfloat16)"]
_OPTION = {"": defs.OpSchema.FormalParameterOption.Single, "?": defs.OpSchema.FormalParameterOption.Optional}
_ATTR = {int: defs.OpSchema.AttrType.INT, float: defs.OpSchema.AttrType.FLOAT, str: defs.OpSchema.AttrType.STRING}

# name -> (inputs "name:T[?]", outputs, type constraints, attributes)
SCHEMAS: dict[str, tuple[list[str], list[str], dict[str, list[str]], dict[str, type]]] = {
    "SkipSimplifiedLayerNormalization": (
        ["input:T", "skip:T", "gamma:T", "bias:T?"], ["output:T", "mean:U?", "inv_std_var:U?", "input_skip_bias_sum:T?"],
        {"T": _FLOATS, "U": ["tensor(float)"]}, {"epsilon": float}),
    "SkipLayerNormalization": (
        ["input:T", "skip:T", "gamma:T", "beta:T?", "bias:T?"], ["output:T", "mean:U?", "inv_std_var:U?",
                                                                 "input_skip_bias_sum:T?"],
        {"T": _FLOATS, "U": ["tensor(float)"]}, {"epsilon": float}),
    "MatMulNBits": (
        ["A:T1", "B:T2", "scales:T1", "zero_points:T3?", "g_idx:T4?", "bias:T1?"], ["Y:T1"],
        {"T1": _FLOATS, "T2": ["tensor(uint8)"], "T3": ["tensor(uint8)", *_FLOATS], "T4": ["tensor(int32)"]},
        {"K": int, "N": int, "bits": int, "block_size": int, "accuracy_level": int}),
    "GroupQueryAttention": (
        ["query:T", "key:T?", "value:T?", "past_key:T?", "past_value:T?", "seqlens_k:M", "total_sequence_length:M",
         "cos_cache:T?", "sin_cache:T?", "position_ids:P?", "attention_bias:T?"],
        ["output:T", "present_key:T?", "present_value:T?"],
        {"T": _FLOATS, "M": ["tensor(int32)"], "P": ["tensor(int64)"]},
        {"num_heads": int, "kv_num_heads": int, "scale": float, "softcap": float, "local_window_size": int,
         "do_rotary": int, "rotary_interleaved": int, "causal": int}),
}  # fmt: skip


@functools.cache
def declare(name: str) -> OpFunction:
    """The contrib operator `name` as a callable op (onnxruntime's schema, version 1)."""
    inputs, outputs, constraints, attributes = SCHEMAS[name]

    def param(spec: str) -> defs.OpSchema.FormalParameter:
        pname, type_str = spec.split(":")
        optional = type_str.endswith("?")
        return defs.OpSchema.FormalParameter(pname, type_str.rstrip("?"), param_option=_OPTION["?" if optional else ""])

    schema = defs.OpSchema(
        name, DOMAIN, 1,
        inputs=[param(p) for p in inputs], outputs=[param(p) for p in outputs],
        type_constraints=[(t, allowed, "") for t, allowed in constraints.items()],
        attributes=[defs.OpSchema.Attribute(a, _ATTR[t], "", required=False) for a, t in attributes.items()],
    )  # fmt: skip
    return OpFunction(OpSignature(schema, 1))


def call(name: str, inputs: Sequence[Value | None], types: Sequence[tuple[DType, tuple | None]],
         **attributes: Any) -> list[Value]:
    """A `name` node (in the graph being built) reading `inputs` (None: an omitted optional
    input), with len(types) outputs of those (dtype, shape)s."""
    given = list(inputs)
    while given and given[-1] is None:
        given.pop()
    result = declare(name)(*given, _outputs=len(types), **attributes)
    results = list(result) if isinstance(result, tuple) else [result]
    for value, (dtype, shape) in zip(results, types):
        value.set_type(dtype, shape)
    return results
