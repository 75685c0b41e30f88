"""Run one torchlib function eagerly and as a traced ONNX graph, and compare with torch.

    from torchlib.testing import run_traced, check_function
    y = run_traced(aten_add, torch.randn(3), torch.randn(3), alpha=2)   # graph built, run in ORT
    check_function(aten_add, (a, b), {"alpha": 2}, expected=torch.add(a, b, alpha=2))
"""

from __future__ import annotations

from typing import Any

import onnx
import onnxruntime as ort
import torch

from graph_builder import GraphBuilder, types
from graph_builder.evaluator import _NOT_IN_ORT_NUMPY, _run_with_ort_values
from graph_builder.ir import COMPLEX_KEY, Value, complex_from_real_view, real_view
from graph_builder.ir import type_from_proto as ir_type_from_proto
from graph_builder.opset import as_array, numpy_to_torch

_SESSION_OPTIONS = ort.SessionOptions()
_SESSION_OPTIONS.intra_op_num_threads = 1
_SESSION_OPTIONS.log_severity_level = 3


def trace(fn: Any, args: tuple, kwargs: dict[str, Any] | None = None, opset: int = 23,
          dynamic: bool = False) -> tuple[onnx.ModelProto, dict[str, Any], Any]:
    """Build the graph of fn(*args, **kwargs): every torch tensor argument (also inside lists)
    becomes a graph input, with symbolic dims (`input_0_d0`, ...) when dynamic. Returns (model,
    feeds, output structure of Value names)."""
    g = GraphBuilder(opset=opset)
    feeds: dict[str, Any] = {}

    def to_input(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            name = f"input_{len(feeds)}"
            shape = [f"{name}_d{i}" for i in range(x.dim())] if dynamic else list(x.shape)
            dtype = types.from_torch(x.dtype)
            v = g.input(name, dtype, shape if dynamic else types.onnx_shape(dtype, shape))  # complex: its real view
            feeds[v.name] = real_view(as_array(x)) if x.is_complex() else as_array(x)
            return v
        if isinstance(x, (list, tuple)):
            return type(x)(to_input(v) for v in x)
        return x

    traced_args = tuple(to_input(a) for a in args)
    traced_kwargs = {k: to_input(v) for k, v in (kwargs or {}).items()}
    with g:
        result = fn(*traced_args, **traced_kwargs)

    def to_output(x: Any) -> Any:
        if isinstance(x, Value):
            return g.output(x, f"output_{len(g.graph.outputs)}").name
        if isinstance(x, (list, tuple)):
            return type(x)(to_output(v) for v in x)
        if x is None:
            return None
        raise TypeError(f"{getattr(fn, '__name__', fn)} returned {type(x).__name__}, not Values")

    structure = to_output(result)
    return g.to_model(), feeds, structure


def run_model(model: onnx.ModelProto, feeds: dict[str, Any], structure: Any) -> Any:
    session = ort.InferenceSession(model.SerializeToString(), _SESSION_OPTIONS, providers=["CPUExecutionProvider"])
    names = [o.name for o in model.graph.output]
    output_dtypes = [ir_type_from_proto(o.type)[0] for o in model.graph.output]
    if any(types.from_numpy(as_array(a).dtype).numpy in _NOT_IN_ORT_NUMPY for a in feeds.values()) or any(
        d is not None and d.numpy in _NOT_IN_ORT_NUMPY for d in output_dtypes
    ):  # bfloat16 / float8 go through OrtValues: onnxruntime's numpy bridge lacks them
        results = dict(zip(names, _run_with_ort_values(session, {k: as_array(a) for k, a in feeds.items()}, output_dtypes)))
    else:
        results = dict(zip(names, session.run(names, feeds)))

    complex_outputs = {o.name for o in model.graph.output if any(p.key == COMPLEX_KEY for p in o.metadata_props)}

    def build(s: Any) -> Any:
        if isinstance(s, str):
            return numpy_to_torch(complex_from_real_view(results[s]) if s in complex_outputs else results[s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(v) for v in s)
        return None

    return build(structure)


def run_traced(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """fn traced into an ONNX graph (checked by onnx.checker) and run in onnxruntime."""
    model, feeds, structure = trace(fn, args, kwargs)
    return run_model(model, feeds, structure)


def run_dynamic(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """run_traced with every input dimension symbolic: the shape arithmetic must then happen in
    the graph. fn may be a lambda that derives SymInts from its inputs (sym_size) to pass on."""
    model, feeds, structure = trace(fn, args, kwargs, dynamic=True)
    return run_model(model, feeds, structure)


def check_function(fn: Any, args: tuple, kwargs: dict[str, Any] | None = None, *, expected: Any,
                   rtol: float | None = None, atol: float | None = None) -> None:
    """Eager and traced results both equal `expected` (dtype and shape included)."""
    kwargs = kwargs or {}
    eager = fn(*args, **kwargs)
    torch.testing.assert_close(eager, expected, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"eager: {m}")
    traced = run_traced(fn, *args, **kwargs)
    torch.testing.assert_close(traced, expected, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"traced: {m}")


def check_traced_bfloat16(fn: Any, args: tuple, kwargs: dict[str, Any] | None = None, *, expected: Any,
                          rtol: float | None = None, atol: float | None = None) -> None:
    """check_function for bfloat16, traced only: onnxruntime's Python API can neither feed nor
    fetch bfloat16 arrays, so bfloat16 tensor arguments are fed as float32 and cast to bfloat16
    inside the graph, and bfloat16 results are cast to float32 at its end. The results' dtypes
    in the graph must equal `expected`'s; the values are compared as float32."""
    from graph_builder import op

    def widen(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16:
            return x.float()
        if isinstance(x, (list, tuple)):
            return type(x)(widen(v) for v in x)
        return x

    def narrow(original: Any, x: Any) -> Any:
        if isinstance(original, torch.Tensor) and original.dtype == torch.bfloat16:
            return op.Cast(x, to=types.BFLOAT16.onnx)
        if isinstance(original, (list, tuple)):
            return type(x)(narrow(o, v) for o, v in zip(original, x))
        return x

    dtypes: list[Any] = []

    def fetch(x: Any) -> Any:
        if isinstance(x, Value):
            dtypes.append(x.dtype.to_torch())
            return op.Cast(x, to=types.FLOAT.onnx) if x.dtype is types.BFLOAT16 else x
        if isinstance(x, (list, tuple)):
            return type(x)(fetch(v) for v in x)
        return x

    def wrapped(*traced_args: Any, **traced_kwargs: Any) -> Any:
        traced_args = tuple(narrow(o, v) for o, v in zip(args, traced_args))
        traced_kwargs = {k: narrow(kwargs_[k], v) for k, v in traced_kwargs.items()}
        return fetch(fn(*traced_args, **traced_kwargs))

    kwargs_ = kwargs or {}
    traced = run_traced(wrapped, *widen(args), **widen(kwargs_))
    flat = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    assert dtypes == [e.dtype for e in flat], f"traced: dtypes {dtypes}, torch gives {[e.dtype for e in flat]}"
    torch.testing.assert_close(traced, widen(expected), rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"traced: {m}")


def with_nan_inf(x: torch.Tensor, fraction: float = 0.1) -> torch.Tensor:
    """A copy of x with about `fraction` of its elements set to nan, inf and -inf (a third each),
    at places drawn from torch's global generator."""
    x = x.clone()
    u = torch.rand(x.shape)
    x[u < fraction / 3] = float("nan")
    x[(u >= fraction / 3) & (u < 2 * fraction / 3)] = float("inf")
    x[(u >= 2 * fraction / 3) & (u < fraction)] = float("-inf")
    return x
