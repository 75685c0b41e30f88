"""The `op` namespace: every ONNX operator of an opset as `op.Name(*inputs, **attributes)`.

Each call is bound and checked against the operator's schema (`schema.OpSignature`) and handed
to the current evaluator: eager (onnxruntime on real data) outside a graph, tracing inside
`with builder:`.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from onnx import defs

from graph_builder import evaluator as _evaluator
from graph_builder import types
from graph_builder.arrays import as_array, numpy_to_torch, torch_to_numpy
from graph_builder.ir import Value
from graph_builder.schema import DEFAULT_OPSET, OpError, OpSignature, python_constant

__all__ = [
    "DEFAULT_OPSET", "OpError", "OpFunction", "OpSignature", "Opset", "as_array", "numpy_to_torch", "opset",
    "python_constant", "torch_to_numpy",
]



# Eager Values made by ops from Python values only (`op.Constant(...)`, `op.Add(1, 2)`): they
# take the kind of whatever they meet (numpy with numpy, torch with torch), as a Python scalar would.
_CONSTANTS: weakref.WeakSet[Value] = weakref.WeakSet()


def _constant(array: Any) -> Value:
    value = Value("", types.from_numpy(array.dtype), array.shape, const_value=array)
    _CONSTANTS.add(value)
    return value


def _eager_kind(inputs: list[Any]) -> str:
    """What an eager call returns, from the kinds of its inputs: 'torch' if any torch tensor,
    else 'value' if any Value of the user's, else 'numpy' if any numpy array, else 'constant'."""
    kind = "constant"
    for x in inputs:
        t = type(x)
        if x is None or t in (int, float, bool, list, tuple):
            continue
        if t is Value:
            if x not in _CONSTANTS and kind != "torch":
                kind = "value"
        elif isinstance(x, (np.ndarray, np.generic)):
            if kind == "constant":
                kind = "numpy"
        else:
            return "torch"
    return kind


_PYTHON_TYPES = (int, float, bool, list, tuple)


def _python_like(sig: Any, value: Any, like: Any) -> Any:
    """The Python value of op.CastLike(value, like) as a constant of like's dtype, at full
    precision: `op.CastLike(1 / 3, x_f64)` is the double nearest 1/3, not the float32 one
    widened. A value that dtype cannot hold (-1 for UINT8, NaN for an integer type), or a `like`
    that is a Python value too, is left to the cast's own conversion."""
    if like is None or type(like) in _PYTHON_TYPES:
        return value
    target = like.known_dtype if isinstance(like, Value) else types.from_numpy(as_array(like).dtype)
    if target.numpy is None:
        return value
    try:
        return python_constant(value, target, sig, 0)
    except OpError:
        return value


# ai.onnx operators whose versions differ in meaning for the same call (the builder refuses to
# write such an op at another opset than the one it was called at)
CHANGED_MEANING = {"GroupNormalization": "scale and bias are per channel since opset 21, per group before"}


def _at_graph_opset(sig: OpSignature, evaluator: Any) -> OpSignature | None:
    """The same ai.onnx operator's signature at the opset the graph being built targets, when
    that is a later version of it that means the same (the builder checks the call there)."""
    target = getattr(evaluator, "opset", None)
    if sig.domain or sig.name in CHANGED_MEANING or not isinstance(target, int) or target <= sig.since_version:
        return None
    try:
        newer = getattr(opset(target), sig.name).signature
    except AttributeError:
        return None
    return newer if newer.since_version != sig.since_version else None


class OpFunction:
    """A callable ONNX operator of one opset: `op.Add(a, b)`."""

    def __init__(self, signature: OpSignature):
        self.signature = signature
        self.__name__ = signature.name
        self.__doc__ = signature.schema.doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sig = self.signature
        inputs, attrs, n_outputs = sig.bind(args, kwargs)
        if sig.name == "CastLike" and len(inputs) == 2 and type(inputs[0]) in _PYTHON_TYPES and not sig.domain:
            inputs[0] = _python_like(sig, inputs[0], inputs[1])
        evaluator = _evaluator.current_evaluator()
        kind = _eager_kind(inputs) if evaluator is _evaluator.EAGER else None
        try:
            inputs, _ = sig.resolve_types(inputs)
        except OpError:
            newer = _at_graph_opset(sig, evaluator)
            if newer is None:
                raise
            sig = newer  # a dtype that only a later version of the op takes (Cast of FLOAT8E8M0 at opset 24+)
            inputs, _ = sig.resolve_types(inputs)
        n = sig.output_count(attrs, inputs, n_outputs) if n_outputs is None and sig.variadic_output else (
            sig.n_required_outputs if n_outputs is None else n_outputs)
        outputs = evaluator.eval_op(sig, inputs, attrs, n)
        if kind == "constant":  # eagerly, an op given only Python values (and constants) makes constants
            outputs = [_constant(a.numpy() if type(a) is Value else a) for a in outputs]
        elif kind == "numpy" and outputs and type(outputs[0]) is Value:
            outputs = [a.numpy() for a in outputs]  # numpy in, numpy out, constants mixed in or not
        return outputs[0] if n == 1 else tuple(outputs)

    def __repr__(self) -> str:
        return f"<ONNX op {self.signature.domain or 'ai.onnx'}::{self.signature.name}-{self.signature.since_version}>"


class Opset:
    """The operators of one domain at one version, resolved from onnx.defs on first use."""

    def __init__(self, version: int = DEFAULT_OPSET, domain: str = ""):
        self.version = version
        self.domain = domain

    def __getattr__(self, name: str) -> OpFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            schema = defs.get_schema(name, self.version, self.domain)
        except defs.SchemaError:
            raise AttributeError(
                f"ONNX has no operator {name!r} in domain {self.domain or 'ai.onnx'!r} at opset {self.version}"
            ) from None
        fn = OpFunction(OpSignature(schema, self.version))
        setattr(self, name, fn)
        return fn

    def _call(self, op_type: str, /, *args: Any, **kwargs: Any) -> Any:
        """`op.<op_type>(*args, **kwargs)` through the same binding: what the typed methods of the
        generated opsets call (graph_builder/generated, written by `python -m codegen opset`)."""
        functions = self.__dict__.setdefault("_functions", {})
        fn = functions.get(op_type)
        if fn is None:
            fn = functions[op_type] = OpFunction(OpSignature(defs.get_schema(op_type, self.version, self.domain), self.version))
        return fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Opset({self.version}, domain={self.domain!r})"


_OPSETS: dict[tuple[str, int], Opset] = {}


def opset(version: int, domain: str = "") -> Opset:
    """The shared Opset object for a version (`opset(18).Add`): an instance of the typed class
    OpsetN when graph_builder/generated/opsetN.py exists (`python -m codegen opset --opset N`)."""
    key = (domain, version)
    if key not in _OPSETS:
        typed = _generated_class(version) if domain == "" else None
        _OPSETS[key] = typed() if typed is not None else Opset(version, domain)
    return _OPSETS[key]


def _generated_class(version: int) -> type[Opset] | None:
    import importlib

    name = f"graph_builder.generated.opset{version}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name in (name, "graph_builder.generated"):
            return None
        raise
    return getattr(module, f"Opset{version}")




_ATTRIBUTE_TYPES = {
    int: defs.OpSchema.AttrType.INT, float: defs.OpSchema.AttrType.FLOAT, str: defs.OpSchema.AttrType.STRING,
    "ints": defs.OpSchema.AttrType.INTS, "floats": defs.OpSchema.AttrType.FLOATS, "strings": defs.OpSchema.AttrType.STRINGS,
}  # fmt: skip


_CUSTOM_SCHEMAS: dict[tuple, defs.OpSchema] = {}


def custom_op(
    domain: str,
    name: str,
    inputs: Sequence[str] = ("X",),
    outputs: Sequence[str] = ("Y",),
    *,
    version: int = 1,
    attributes: dict[str, Any] | None = None,
) -> OpFunction:
    """Declare an operator of a domain other than ONNX's (`com.microsoft`, your runtime's own)
    so that functions can emit it, and return it:

        gelu = custom_op("com.microsoft", "Gelu")
        y = gelu(x)  # a com.microsoft::Gelu node; the model imports com.microsoft at version 1

    Every input and output has the same tensor type (the output's dtype is the first input's);
    `attributes` maps each attribute's name to int, float, str, "ints", "floats" or "strings"
    (all optional). The declaration makes an ONNX schema for `domain::name` at `version`, kept by
    graph_builder (not registered in onnx.defs, so onnx's checker and reference evaluator behave
    as before); declaring it again with the same arguments gives the same schema.
    Eagerly the op runs in onnxruntime, which must implement it (com.microsoft ops do)."""
    if not domain or domain in ("ai.onnx", "ai.onnx.ml"):
        raise ValueError(f"custom_op declares ops outside ONNX's domains; {domain!r} is ONNX's own (use `op`)")
    key = (domain, name, version, tuple(inputs), tuple(outputs), tuple(sorted((attributes or {}).items())))
    schema = _CUSTOM_SCHEMAS.get(key)
    if schema is None:
        all_types = [t for t in defs.get_schema("Identity", DEFAULT_OPSET).type_constraints[0].allowed_type_strs
                     if t.startswith("tensor(")]
        unknown = [t for t in (attributes or {}).values() if t not in _ATTRIBUTE_TYPES]
        if unknown:
            raise ValueError(f"custom_op {domain}::{name}: attribute types must be among int, float, str, 'ints', 'floats', 'strings'; got {unknown}")
        schema = defs.OpSchema(
            name, domain, version,
            inputs=[defs.OpSchema.FormalParameter(i, "T") for i in inputs],
            outputs=[defs.OpSchema.FormalParameter(o, "T") for o in outputs],
            type_constraints=[("T", all_types, "any tensor type")],
            attributes=[defs.OpSchema.Attribute(a, _ATTRIBUTE_TYPES[t], "", required=False) for a, t in (attributes or {}).items()],
        )  # fmt: skip
        # kept here, not registered in onnx.defs: a registered schema would change what onnx's
        # checker and reference evaluator do for every model in the process
        _CUSTOM_SCHEMAS[key] = schema
    return OpFunction(OpSignature(schema, version))
