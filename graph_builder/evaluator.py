"""Evaluators give one op call its meaning: eager runs it in onnxruntime, tracing records a node.

`current_evaluator()` is the innermost `with builder:` or, outside any, the eager evaluator.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np
import onnx
import onnxruntime as ort

from graph_builder import ir, types
from graph_builder.opset import DEFAULT_OPSET, OpError, OpSignature, as_array, numpy_to_torch, torch_to_numpy


class Evaluator(Protocol):
    def eval_op(self, sig: OpSignature, inputs: list[Any], attrs: dict[str, Any], n_outputs: int) -> list[Any]: ...


_state = threading.local()


def _stack() -> list[Evaluator]:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def current_evaluator() -> Evaluator:
    stack = _stack()
    return stack[-1] if stack else EAGER


def push_evaluator(evaluator: Evaluator) -> None:
    _stack().append(evaluator)


def pop_evaluator(evaluator: Evaluator) -> None:
    stack = _stack()
    if not stack or stack[-1] is not evaluator:
        raise RuntimeError("evaluators must be entered and exited in nested order")
    stack.pop()


class EagerEvaluator:
    """Runs each op in onnxruntime on real data, one cached single-node session per
    (op, attributes, input dtypes). Returns torch tensors if any input was a torch tensor,
    else Values if any input was a Value, else numpy arrays."""

    def __init__(self) -> None:
        self._sessions: dict[Any, tuple[ort.InferenceSession, list[tuple[str, int]]]] = {}
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
            elif isinstance(x, np.ndarray):
                arrays.append(x)
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
        session, names = entry
        feeds = {name: arrays[i] for name, i in names}
        try:
            return session.run(None, feeds)
        except Exception as e:  # onnxruntime raises its own exception types
            raise OpError(f"onnxruntime failed to run {_describe_call(sig, arrays, attrs)}: {e}") from None

    def _make_session(
        self, sig: OpSignature, arrays: list[np.ndarray | None], attrs: dict[str, Any], n_outputs: int
    ) -> tuple[ort.InferenceSession, list[tuple[str, int]]]:
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
        return session, names


def _describe_call(sig: OpSignature, arrays: list[np.ndarray | None], attrs: dict[str, Any]) -> str:
    """`op.Add(FLOAT[3], FLOAT[4]) with attributes {}` for error messages."""
    described = ", ".join("None" if a is None else f"{types.from_numpy(a.dtype)}{list(a.shape)}" for a in arrays)
    return f"op.{sig.name}({described}) with attributes {attrs}"


EAGER = EagerEvaluator()


def to_numpy(x: Any) -> np.ndarray:
    return as_array(x)
