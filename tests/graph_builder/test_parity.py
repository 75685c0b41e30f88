"""Eager and traced evaluation of the same functions give the same results.

Each case is a small function written with `op`. It runs eagerly (every op in onnxruntime, on
numpy arrays) and traced (a graph built by GraphBuilder, checked, run in one onnxruntime
session with the default graph optimizations). Results must be bitwise equal, dtype and shape
included, except for the cases marked `close`: there onnxruntime's graph optimizer rewrites
the traced graph into a fused kernel whose rounding differs from running the ops one by one.
The one such case is attention: Transpose, MatMul and Div by a constant become one FusedMatMul
(transposed operand, scale folded into its alpha), which multiplies by the reciprocal inside
the kernel instead of dividing afterwards. The results then agree to float tolerance only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from graph_builder import BOOL, FLOAT, GraphBuilder, Value, op, types

RNG = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def f16(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float16)


def f64(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def i64(*shape: int, low: int = -5, high: int = 6) -> np.ndarray:
    return RNG.integers(low, high, shape).astype(np.int64)


def i32(*shape: int) -> np.ndarray:
    return RNG.integers(-5, 6, shape).astype(np.int32)


def b(*shape: int) -> np.ndarray:
    return RNG.random(shape) > 0.5


def positive(x: np.ndarray) -> np.ndarray:
    return np.abs(x) + x.dtype.type(0.5)


class Case:
    def __init__(self, name: str, fn: Callable[..., Any], *inputs: np.ndarray, close: bool = False, dynamic: bool = False):
        self.name = name
        self.fn = fn
        self.inputs = inputs
        self.close = close
        self.dynamic = dynamic  # trace with a symbolic first dimension

    def __repr__(self) -> str:
        return self.name


def _gelu_tanh(x: Value) -> Value:
    inner = op.Mul(op.Add(x, op.Mul(op.Pow(x, 3.0), 0.044715)), float(np.sqrt(2 / np.pi)))
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Tanh(inner), 1.0))


def _attention(q: Value, k: Value, v: Value) -> Value:
    scores = op.Div(op.MatMul(q, op.Transpose(k, perm=[0, 2, 1])), float(np.sqrt(q.shape[-1])))
    return op.MatMul(op.Softmax(scores, axis=-1), v)


def _dynamic_reshape(x: Value) -> Value:
    shape = op.Shape(x)
    return op.Reshape(x, op.Concat(op.Slice(shape, [0], [1]), [-1], axis=0))


CASES = [
    # arithmetic, several dtypes, Python scalars typed by the other input
    Case("add_f32", lambda x, y: op.Add(x, y), f32(3, 4), f32(4)),
    Case("add_f16_scalar", lambda x: op.Add(x, 1), f16(3, 4)),
    Case("add_i64", lambda x, y: op.Add(x, y), i64(2, 3), i64(2, 3)),
    Case("sub_i32", lambda x, y: op.Sub(x, y), i32(5), i32(5)),
    Case("mul_f16", lambda x, y: op.Mul(x, y), f16(2, 3), f16(2, 1)),
    Case("div_f64", lambda x, y: op.Div(x, y), f64(4), positive(f64(4))),
    Case("div_i64", lambda x: op.Div(x, 3), i64(6)),
    Case("mod_i64", lambda x: op.Mod(x, 4), i64(8)),
    Case("pow_f32", lambda x: op.Pow(x, 2.5), positive(f32(6))),
    Case("neg_abs_i64", lambda x: op.Abs(op.Neg(x)), i64(7)),
    Case("sqrt_exp_log_f32", lambda x: op.Log(op.Exp(op.Sqrt(x))), positive(f32(3, 3))),
    Case("floor_ceil_round_f16", lambda x: op.Add(op.Floor(x), op.Add(op.Ceil(x), op.Round(x))), f16(10)),
    Case("erf_f32", lambda x: op.Erf(x), f32(8)),
    Case("max_min_variadic_f32", lambda x, y, z: op.Sub(op.Max(x, y, z), op.Min(x, y)), f32(3), f32(3), f32(1)),
    Case("clip_f32", lambda x: op.Clip(x, -0.5, 0.5), f32(10)),
    Case("clip_i64_min_only", lambda x: op.Clip(x, 0), i64(10)),
    # activations
    Case("relu_f16", lambda x: op.Relu(x), f16(4, 4)),
    Case("sigmoid_tanh_f32", lambda x: op.Tanh(op.Sigmoid(x)), f32(4, 4)),
    Case("softmax_f32", lambda x: op.Softmax(x, axis=-1), f32(2, 3, 5)),
    Case("logsoftmax_f16", lambda x: op.LogSoftmax(x, axis=1), f16(3, 4)),
    Case("leaky_relu_f32", lambda x: op.LeakyRelu(x, alpha=0.2), f32(9)),
    Case("gelu_tanh_chain_f32", _gelu_tanh, f32(16)),
    Case("gelu_op_f32", lambda x: op.Gelu(x, approximate="tanh"), f32(16)),
    # linear algebra and normalization
    Case("matmul_f32", lambda x, y: op.MatMul(x, y), f32(2, 3, 4), f32(4, 5)),
    Case("matmul_add_f32", lambda x, w, c: op.Add(op.MatMul(x, w), c), f32(3, 4), f32(4, 5), f32(5)),
    Case("gemm_f32", lambda a, bb, c: op.Gemm(a, bb, c, alpha=0.5, beta=2.0, transB=1), f32(3, 4), f32(5, 4), f32(5)),
    Case("einsum_f32", lambda x, y: op.Einsum(x, y, equation="bij,bjk->bik"), f32(2, 3, 4), f32(2, 4, 2)),
    Case("layer_norm_f32", lambda x, s, bb: op.LayerNormalization(x, s, bb, axis=-1, epsilon=1e-5), f32(2, 3, 8), f32(8), f32(8)),
    Case("attention_f32", _attention, f32(2, 4, 8), f32(2, 4, 8), f32(2, 4, 8), close=True),
    Case("conv_f32", lambda x, w: op.Conv(x, w, pads=[1, 1, 1, 1], strides=[2, 2]), f32(1, 2, 6, 6), f32(3, 2, 3, 3)),
    # reductions
    Case("reduce_sum_i64", lambda x: op.ReduceSum(x, [1], keepdims=0), i64(3, 4)),
    Case("reduce_mean_f32", lambda x: op.ReduceMean(x, [0, 2]), f32(3, 4, 5)),
    Case("reduce_max_f16_all", lambda x: op.ReduceMax(x, keepdims=0), f16(3, 4)),
    Case("argmax_f32", lambda x: op.ArgMax(x, axis=1, keepdims=0), f32(4, 6)),
    Case("cumsum_i64", lambda x: op.CumSum(x, np.array(0, np.int64)), i64(6)),
    Case("topk_f32", lambda x: op.TopK(x, [2], axis=-1), f32(3, 5)),
    # comparison and logic: bool results and inputs
    Case("compare_f32", lambda x, y: op.And(op.Less(x, y), op.Not(op.Equal(x, y))), f32(6), f32(6)),
    Case("greater_i64_scalar", lambda x: op.Greater(x, 0), i64(8)),
    Case("or_xor_bool", lambda x, y: op.Xor(op.Or(x, y), x), b(5), b(5)),
    Case("where_f16", lambda c, x, y: op.Where(c, x, y), b(3, 4), f16(3, 4), f16(4)),
    Case("where_scalar_i64", lambda c, x: op.Where(c, x, -1), b(6), i64(6)),
    Case("isnan_f32", lambda x: op.IsNaN(op.Div(x, x)), np.array([0.0, 1.0, -2.0], np.float32)),
    Case("nonzero_bool", lambda x: op.NonZero(x), b(3, 4)),
    # casts
    Case("cast_f32_f16", lambda x: op.Cast(x, to=types.FLOAT16.onnx), f32(7) * 100),
    Case("cast_bool_i64", lambda x: op.Cast(x, to=types.INT64), b(7)),
    Case("cast_like_i64_f32", lambda x, y: op.CastLike(x, y), i64(5), f32(1)),
    # shapes and indexing
    Case("reshape_f16", lambda x: op.Reshape(x, [2, -1]), f16(2, 3, 4)),
    Case("reshape_dynamic_f32", _dynamic_reshape, f32(3, 2, 4), dynamic=True),
    Case("transpose_i64", lambda x: op.Transpose(x, perm=[2, 0, 1]), i64(2, 3, 4)),
    Case("concat_bool", lambda x, y: op.Concat(x, y, axis=0), b(2, 3), b(1, 3)),
    Case("split_f32", lambda x: op.Split(x, num_outputs=2, axis=1), f32(2, 6)),
    Case("slice_step_f32", lambda x: op.Slice(x, [4, 1], [0, 100], [1, 0], [-2, 1]), f32(3, 6)),
    Case("gather_f32", lambda x, i: op.Gather(x, i, axis=1), f32(3, 5), i64(2, 2, low=0, high=5)),
    Case("gather_elements_i64", lambda x, i: op.GatherElements(x, i, axis=0), i64(3, 3), i64(2, 3, low=0, high=3)),
    Case("scatter_elements_f32", lambda x, i, u: op.ScatterElements(x, i, u, axis=1), f32(2, 4), np.array([[1], [3]]), f32(2, 1)),
    Case("squeeze_unsqueeze_f16", lambda x: op.Unsqueeze(op.Squeeze(x, [1]), [0, -1]), f16(3, 1, 2)),
    Case("expand_i64", lambda x: op.Expand(x, [3, 1, 4]), i64(2, 1)),
    Case("tile_bool", lambda x: op.Tile(x, [2, 3]), b(2, 2)),
    Case("flatten_f32", lambda x: op.Flatten(x, axis=2), f32(2, 3, 4)),
    Case("pad_f32", lambda x: op.Pad(x, [0, 1, 0, 2], 0.5), f32(2, 3)),
    Case("trilu_i64", lambda x: op.Trilu(x, upper=0), i64(4, 4)),
    Case("range_i64", lambda n: op.Range(0, op.ReduceMax(n, keepdims=0), 2), np.array([7], np.int64)),
    Case("shape_constant_of_shape", lambda x: op.ConstantOfShape(op.Shape(x), value=np.array([3], np.int64)), f32(2, 3)),
    Case("shape_gather_dynamic", lambda x: op.Mul(op.Gather(op.Shape(x), 0), 2), f32(5, 2), dynamic=True),
    Case("size_f16", lambda x: op.Size(x), f16(3, 7)),
]


def run_eager(case: Case) -> list[np.ndarray]:
    result = case.fn(*case.inputs)
    return list(result) if isinstance(result, tuple) else [result]


def run_traced(case: Case) -> list[np.ndarray]:
    g = GraphBuilder(opset=23, name=case.name)
    values = []
    for i, array in enumerate(case.inputs):
        shape: list[Any] = list(array.shape)
        if case.dynamic and shape:
            shape[0] = "N"
        values.append(g.input(f"x{i}", types.from_numpy(array.dtype), shape))
    with g:
        result = case.fn(*values)
    outputs = list(result) if isinstance(result, tuple) else [result]
    for i, v in enumerate(outputs):
        assert isinstance(v, Value) and v.dtype is not None, f"traced output {i} has no dtype"
        g.output(v, f"out{i}")
    g.to_model()  # passes onnx.checker.check_model(full_check=True)
    return g.run({f"x{i}": a for i, a in enumerate(case.inputs)})


def test_cases_cover_enough_ops_and_dtypes() -> None:
    g = GraphBuilder()
    seen_ops: set[str] = set()
    seen_dtypes = set()
    for case in CASES:
        values = [g.input(f"{case.name}_{i}", types.from_numpy(a.dtype), list(a.shape)) for i, a in enumerate(case.inputs)]
        start = len(g.graph.nodes)
        with g:
            case.fn(*values)
        seen_ops.update(n.op_type for n in g.graph.nodes[start:])
        seen_dtypes.update(v.dtype for v in values)
    assert len(seen_ops) >= 30, sorted(seen_ops)
    assert {types.FLOAT16, types.INT64, BOOL, FLOAT} <= seen_dtypes


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_eager_and_traced_agree(case: Case) -> None:
    eager = run_eager(case)
    traced = run_traced(case)
    assert len(eager) == len(traced)
    for e, t in zip(eager, traced):
        assert isinstance(e, np.ndarray)
        assert e.dtype == t.dtype and e.shape == t.shape, (e.dtype, e.shape, t.dtype, t.shape)
        if case.close:
            np.testing.assert_allclose(t, e, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(t, e, strict=True)
