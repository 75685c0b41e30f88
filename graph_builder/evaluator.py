"""Evaluators give one op call its meaning: eager runs it in onnxruntime, tracing records a node.

`current_evaluator()` is the innermost `with builder:` or, outside any, the eager evaluator.
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import threading
from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np
import onnx
import onnxruntime as ort

from graph_builder import ir, types
from graph_builder.arrays import as_array, numpy_to_torch, torch_to_numpy, unpack_nibbles
from graph_builder.schema import DEFAULT_OPSET, OpError, OpSignature


class Evaluator(Protocol):
    def eval_op(self, sig: OpSignature, inputs: list[Any], attrs: dict[str, Any], n_outputs: int) -> list[Any]: ...


class _State(threading.local):
    """Per thread: the stack of evaluators entered with `with builder:`."""

    def __init__(self) -> None:
        self.stack: list[Evaluator] = []
        self.exact_nan: list[bool] = [False]
        self.loose_reads = 0  # times current_exact_nan() answered False


_state = _State()


def _stack() -> list[Evaluator]:
    return _state.stack


def current_evaluator() -> Evaluator:
    stack = _state.stack
    return stack[-1] if stack else EAGER


def push_evaluator(evaluator: Evaluator) -> None:
    _stack().append(evaluator)


def pop_evaluator(evaluator: Evaluator) -> None:
    stack = _stack()
    if not stack or stack[-1] is not evaluator:
        raise RuntimeError("evaluators must be entered and exited in nested order")
    stack.pop()


class CheckFailed(RuntimeError):
    """A condition given to `require` does not hold."""


def require(condition: Any, message: str, value: Any = None) -> Any:
    """A condition the computation relies on, checked whenever it runs (torch's `_assert_scalar`,
    `_assert_async`, the size conditions of an exported program's path).

    `condition` is a Python or numpy bool, a bool tensor (every element must hold) or a BOOL
    Value. Eagerly, or when the condition is a constant, a false one raises CheckFailed(message)
    now. While tracing, the builder records it and ties it into the next output it declares
    (`GraphBuilder.output`): the model then stops in onnxruntime, at a Reshape node named
    `check: <message>`, on any input where it does not hold, instead of computing on. ONNX has no
    assertion operator; a Reshape to an impossible shape is the failure it is given.

    With `value`, the check is tied into that value at once instead, and what is returned (the
    same data) is to be read in its place: every node that reads it runs after the check, so
    onnxruntime stops at the check before any of them fails on its own (a graph input checked
    for the sizes the program holds for). Returns `value` (None without one)."""
    record = getattr(current_evaluator(), "require", None)
    if isinstance(condition, ir.Value) and condition.const_value is None:
        if record is None:
            raise OpError(f"require({message!r}): a graph value outside of the graph being built")
        return record(condition, message, value)
    array = condition.const_value if isinstance(condition, ir.Value) else as_array(condition)
    if not bool(np.all(array)):
        raise CheckFailed(message)
    return value


class EagerEvaluator:
    """Runs each op in onnxruntime on real data, one cached single-node session per
    (op, attributes, input dtypes). Returns torch tensors if any input was a torch tensor,
    else Values if any input was a Value, else numpy arrays."""

    def __init__(self) -> None:
        # (op, outputs, input dtypes, attributes) -> (session, feed names and input indices,
        # output dtypes when they or the inputs need OrtValues, else None)
        self._sessions: dict[Any, tuple[ort.InferenceSession, list[tuple[str, int]], Any]] = {}
        self._options = ort.SessionOptions()
        self._options.intra_op_num_threads = 1
        self._options.inter_op_num_threads = 1
        self._options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self._options.log_severity_level = 4  # failures are raised as OpError, not logged

    def eval_op(self, sig: OpSignature, inputs: list[Any], attrs: dict[str, Any], n_outputs: int) -> list[Any]:
        arrays: list[np.ndarray | None] = []
        kind = "numpy"
        for x in inputs:
            t = type(x)
            if t is np.ndarray or x is None:
                arrays.append(x)
            elif t is ir.Value:
                if x.const_value is None:
                    raise OpError(
                        f"op.{sig.name}: input {x.name!r} belongs to a graph being built; "
                        "call ops on it inside `with builder:`"
                    )
                arrays.append(x.const_value)
                if kind == "numpy":
                    kind = "value"
            elif isinstance(x, (np.ndarray, np.generic)):
                arrays.append(np.asarray(x))
            else:  # torch tensor
                arrays.append(torch_to_numpy(x))
                kind = "torch"
        outputs = self.run_arrays(sig, arrays, attrs, n_outputs)
        if kind == "torch":
            return [numpy_to_torch(a) for a in outputs]
        if kind == "value":
            return [ir.Value("", types._BY_NUMPY[a.dtype], a.shape, const_value=a) for a in outputs]
        return outputs

    def run_arrays(
        self, sig: OpSignature, arrays: list[np.ndarray | None], attrs: dict[str, Any], n_outputs: int
    ) -> list[np.ndarray]:
        key = (
            sig, n_outputs,
            tuple([None if a is None else a.dtype for a in arrays]),
            tuple([(k, ir._freeze(v)) for k, v in attrs.items()]) if attrs else (),
        )  # fmt: skip
        entry = self._sessions.get(key)
        if entry is None:
            entry = self._sessions[key] = self._make_session(sig, arrays, attrs, n_outputs)
        session, names, outputs_numpy_lacks = entry
        try:
            feeds = {name: a for name, i in names if (a := arrays[i]) is not None}  # names: the arrays given
            if outputs_numpy_lacks is None:
                return session.run(None, feeds)
            return _run_with_ort_values(session, feeds, outputs_numpy_lacks)
        except Exception as e:  # onnxruntime raises its own exception types
            raise OpError(f"onnxruntime failed to run {_describe_call(sig, arrays, attrs)}: {e}") from None

    def _make_session(
        self, sig: OpSignature, arrays: list[np.ndarray | None], attrs: dict[str, Any], n_outputs: int
    ) -> tuple[ort.InferenceSession, list[tuple[str, int]], list[types.DType | None] | None]:
        imports = {"": sig.opset} if not sig.domain else {"": DEFAULT_OPSET, sig.domain: sig.opset}
        graph = ir.Graph("eager", imports)
        names: list[tuple[str, int]] = []
        values: list[ir.Value | None] = []
        for i, a in enumerate(arrays):
            if a is None:
                values.append(None)
            else:
                v = ir.Value(f"input_{i}", types.from_numpy(a.dtype), None)
                graph.inputs.append(v)
                values.append(v)
                names.append((v.name, i))
        node = ir.Node(sig.domain, sig.name, values, attrs, sig.attr_types, sig.name)
        node.outputs = [ir.Value(f"output_{i}", None, None, node, i) for i in range(n_outputs)]
        graph.nodes.append(node)
        graph.outputs = node.outputs
        model = graph.to_model()
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        except Exception as e:
            raise OpError(f"{_describe_call(sig, arrays, attrs)} is invalid: {e}") from None
        del model.graph.output[:]
        model.graph.output.extend(inferred.graph.output)
        try:
            session = ort.InferenceSession(model.SerializeToString(), self._options, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise OpError(f"onnxruntime cannot build {_describe_call(sig, arrays, attrs)}: {e}") from None
        # bfloat16 and float8 tensors go in and out through OrtValues: onnxruntime's numpy
        # bridge does not know ml_dtypes
        output_dtypes = [ir.type_from_proto(o.type)[0] for o in inferred.graph.output]
        in_special = any(a is not None and a.dtype in _NOT_IN_ORT_NUMPY for a in arrays)
        out_special = any(d is not None and d.numpy in _NOT_IN_ORT_NUMPY for d in output_dtypes)
        return session, names, output_dtypes if in_special or out_special else None


_NOT_IN_ORT_NUMPY = {d.numpy for d in (types.BFLOAT16, types.FLOAT8E4M3FN, types.FLOAT8E4M3FNUZ, types.FLOAT8E5M2, types.FLOAT8E5M2FNUZ, types.FLOAT8E8M0,
                                        types.FLOAT4E2M1)}
_RAW_VIEW = {1: np.uint8, 2: np.uint16}


def to_ort_value(array: np.ndarray) -> ort.OrtValue:
    """An OrtValue over the array's memory (a copy only when it is not C-contiguous); bfloat16
    and float8 through an integer view of the same bytes, which the numpy bridge does not take;
    FLOAT4E2M1 packed two a byte (a copy) at the start of a uint8 buffer of the element shape,
    where onnxruntime reads it."""
    if array.dtype == types.FLOAT4E2M1.numpy:
        buffer = np.zeros(array.shape, np.uint8)
        packed = np.frombuffer(ir.raw_bytes(array), np.uint8)
        buffer.reshape(-1)[: packed.size] = packed
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(buffer, types.FLOAT4E2M1.onnx)
    if array.dtype in _NOT_IN_ORT_NUMPY:
        raw = np.ascontiguousarray(array).reshape(array.shape).view(_RAW_VIEW[array.dtype.itemsize])  # keeps rank 0
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(raw, types.from_numpy(array.dtype).onnx)
    return ort.OrtValue.ortvalue_from_numpy(ir.contiguous(array).reshape(array.shape))


def _from_ort_value(value: ort.OrtValue, dtype: types.DType | None) -> np.ndarray:
    if dtype is None or dtype.numpy not in _NOT_IN_ORT_NUMPY:
        return value.numpy()
    shape = tuple(value.shape())
    count = int(np.prod(shape, dtype=np.int64))
    size = value.tensor_size_in_bytes() if dtype.bits == 4 else count * dtype.itemsize  # 4 bits: packed two a byte
    if size == 0:
        return np.empty(shape, dtype.numpy)
    buffer = np.frombuffer(memoryview((ctypes.c_char * size).from_address(value.data_ptr())), dtype=np.uint8).copy()
    if dtype.bits == 4:
        return unpack_nibbles(buffer, dtype)[:count].reshape(shape)
    return buffer.view(dtype.numpy).reshape(shape)


def _run_with_ort_values(
    session: ort.InferenceSession, feeds: dict[str, np.ndarray], output_dtypes: list[types.DType | None],
    output_names: list[str] | None = None,
) -> list[np.ndarray]:
    names = [o.name for o in session.get_outputs()] if output_names is None else output_names
    values = session.run_with_ort_values(names, {k: to_ort_value(a) for k, a in feeds.items()})
    return [_from_ort_value(v, d) for v, d in zip(values, output_dtypes)]


def run_session(session: ort.InferenceSession, feeds: dict[str, np.ndarray], output_names: list[str] | None = None) -> list[np.ndarray]:
    """session.run, also for bfloat16 and float8 inputs and outputs (as ml_dtypes arrays), which
    onnxruntime's numpy bridge does not take or give. A run-time check of the graph (`require`)
    that does not hold raises CheckFailed with its condition."""
    outputs = {o.name: types.from_type_str(o.type) for o in session.get_outputs()}
    names = list(outputs) if output_names is None else list(output_names)
    dtypes = [outputs.get(n) for n in names]
    try:
        if all(a.dtype not in _NOT_IN_ORT_NUMPY for a in feeds.values()) and all(
            d is None or d.numpy not in _NOT_IN_ORT_NUMPY for d in dtypes
        ):
            return session.run(names, feeds)
        return _run_with_ort_values(session, feeds, dtypes, names)
    except Exception as e:
        found = re.search(r"Name:'" + re.escape(ir.CHECK_PREFIX) + r"(.*?)' Status Message", str(e))
        if found is None:
            raise
        raise CheckFailed(f"the model's run-time check does not hold for these inputs: {found.group(1)} (onnxruntime "
                          f"stopped at the node checking it)") from e


def _describe_call(sig: OpSignature, arrays: list[np.ndarray | None], attrs: dict[str, Any]) -> str:
    """`op.Add(FLOAT[3], FLOAT[4]) with attributes {}` for error messages."""
    described = ", ".join("None" if a is None else f"{types.from_numpy(a.dtype)}{list(a.shape)}" for a in arrays)
    return f"op.{sig.name}({described}) with attributes {attrs}"


EAGER = EagerEvaluator()


def current_exact_nan() -> bool:
    """Whether functions must give NaN exactly where the source framework does
    (`exact_nan(True)`, a graph built with `GraphBuilder(exact_nan=True)`), or may use a
    runtime's native op that differs only on NaN inputs and at values near the dtype's largest
    (the default; each such difference is written down in docs/nan_latency.md). A builder's own
    setting wins."""
    own = getattr(current_evaluator(), "exact_nan", None)
    exact = _state.exact_nan[-1] if own is None else own
    if not exact:
        _state.loose_reads += 1
    return exact


def loose_reads() -> int:
    """How many times `current_exact_nan()` has answered False in this thread: a caller compares
    two readings to learn whether a function chose a form that may differ on NaN inputs."""
    return _state.loose_reads


@contextlib.contextmanager
def exact_nan(exact: bool) -> Iterator[None]:
    """Inside: `current_exact_nan()` is `exact` (for eager calls and builders without a setting)."""
    _state.exact_nan.append(bool(exact))
    try:
        yield
    finally:
        _state.exact_nan.pop()


def current_opset() -> int:
    """The ONNX opset the current evaluator writes: the graph's inside `with builder:`, else the
    default. Functions use it to choose a formula when a fused op is newer than the target."""
    return getattr(current_evaluator(), "opset", DEFAULT_OPSET)
