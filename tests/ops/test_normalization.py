"""torchlib/ops/normalization.py against torch, eagerly and traced (bfloat16: traced only, see
torchlib.testing.check_traced_bfloat16), with static and dynamic shapes."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from torchlib.ops import normalization as N
from torchlib.ops.symbolic import aten_sym_size_int as sym_size
from torchlib.testing import check_function, check_traced_bfloat16, run_dynamic, trace

A = torch.ops.aten
BF16 = torch.bfloat16
FLOATS = [torch.float32, torch.float16, BF16, torch.float64]
TOL = {torch.float16: (2e-3, 2e-3), BF16: (1.6e-2, 2e-2)}


def make(shape: tuple[int, ...], dtype: torch.dtype = torch.float32, seed: int = 0, low: float = -2.0, high: float = 2.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)


def _clone(x: Any) -> Any:
    return x.clone() if isinstance(x, torch.Tensor) else x


def check(fn: Any, aten: Any, *args: Any, **kwargs: Any) -> None:
    """fn(*args) equals aten(*args) (called on copies: some batch norms update running stats in
    place), dtype and shape included, eagerly and traced."""
    expected = aten(*(_clone(a) for a in args), **kwargs)
    first = expected[0] if isinstance(expected, tuple) else expected
    rtol, atol = TOL.get(first.dtype, (None, None))
    if any(isinstance(a, torch.Tensor) and a.dtype == BF16 for a in args):
        check_traced_bfloat16(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    else:
        check_function(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)


def bn_args(shape: tuple[int, ...], dtype: torch.dtype, param_dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    c = shape[1]
    return (make(shape, dtype, 1), make((c,), param_dtype, 2), make((c,), param_dtype, 3),
            make((c,), param_dtype, 4), make((c,), param_dtype, 5, 0.5, 2.0))  # fmt: skip


# float16/bfloat16 inputs with parameters of their own dtype, and with float32 ones ("mixed")
DTYPE_PAIRS = [(d, d) for d in FLOATS] + [(torch.float16, torch.float32), (BF16, torch.float32)]


# -- batch norm ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids=str)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 4, 5)], ids=str)
def test_batch_norm_inference(dtypes, shape):
    x, w, b, rm, rv = bn_args(shape, *dtypes)
    check(N.aten__native_batch_norm_legit_no_training, A._native_batch_norm_legit_no_training.default, x, w, b, rm, rv, 0.1, 1e-5)
    check(N.aten__native_batch_norm_legit_no_training, A._native_batch_norm_legit_no_training.default, x, None, None, rm, rv, 0.1, 1e-3)
    check(N.aten__native_batch_norm_legit, A._native_batch_norm_legit.default, x, w, b, rm, rv, False, 0.1, 1e-5)
    check(N.aten_native_batch_norm, A.native_batch_norm.default, x, w, None, rm, rv, False, 0.1, 1e-5)
    check(N.aten_batch_norm, A.batch_norm.default, x, None, b, rm, rv, False, 0.1, 1e-5, False)
    check(N.aten__batch_norm_no_update, A._batch_norm_no_update.default, x, w, b, rm, rv, 0.1, 1e-5)


@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids=str)
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 4, 5)], ids=str)
def test_batch_norm_training(dtypes, shape):
    x, w, b, rm, rv = bn_args(shape, *dtypes)
    check(N.aten__native_batch_norm_legit, A._native_batch_norm_legit.default, x, w, b, rm, rv, True, 0.1, 1e-5)
    check(N.aten__native_batch_norm_legit_no_stats, A._native_batch_norm_legit.no_stats, x, w, b, True, 0.1, 1e-5)
    check(N.aten_native_batch_norm, A.native_batch_norm.default, x, None, None, rm, rv, True, 0.1, 1e-5)
    check(N.aten_native_batch_norm, A.native_batch_norm.default, x, w, b, None, None, True, 0.1, 1e-5)
    check(N.aten_batch_norm, A.batch_norm.default, x, w, b, None, None, True, 0.1, 1e-5, False)
    check(N.aten__batch_norm_with_update, A._batch_norm_with_update.default, x, w, b, rm, rv, 0.1, 1e-5)


@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids=str)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_functional(dtypes, training):
    """The five outputs, the updated running statistics included."""
    x, w, b, rm, rv = bn_args((2, 3, 5), *dtypes)  # (N, C, L), as BatchNorm1d on sequences
    check(N.aten__native_batch_norm_legit_functional, A._native_batch_norm_legit_functional.default,
          x, w, b, rm, rv, training, 0.1, 1e-5)  # fmt: skip
    check(N.aten__native_batch_norm_legit_functional, A._native_batch_norm_legit_functional.default,
          x, None, None, rm, rv, training, 0.3, 1e-3)  # fmt: skip


def test_batch_norm_one_element_per_channel():
    """The unbiased running variance divides by 0: NaN, as in torch. (torch's output is off by
    ~1e-5 here: its x * s + (b - mean * s) form cancels, where ours gives b exactly.)"""
    x, w, b, rm, rv = bn_args((1, 3), torch.float32, torch.float32)
    args = (x, w, b, rm, rv, True, 0.1, 1e-5)
    expected = A._native_batch_norm_legit_functional.default(*(_clone(a) for a in args))
    check_function(N.aten__native_batch_norm_legit_functional, args, expected=expected, rtol=1e-4, atol=1e-4)
    assert expected[4].isnan().all()


def test_batch_norm_needs_statistics():
    x = make((2, 3))
    with pytest.raises(ValueError):  # torch crashes on these
        N.aten__native_batch_norm_legit_no_stats(x, None, None, False, 0.1, 1e-5)
    with pytest.raises(ValueError):
        N.aten_native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)


# -- layer norm ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids=str)
@pytest.mark.parametrize("normalized", [[5], [4, 5]], ids=str)
def test_layer_norm(dtypes, normalized):
    dtype, param_dtype = dtypes
    x = make((2, 3, 4, 5), dtype, 1)
    w, b = make(tuple(normalized), param_dtype, 2), make(tuple(normalized), param_dtype, 3)
    check(N.aten_native_layer_norm, A.native_layer_norm.default, x, normalized, w, b, 1e-5)
    check(N.aten_native_layer_norm, A.native_layer_norm.default, x, normalized, None, None, 1e-3)
    check(N.aten_native_layer_norm, A.native_layer_norm.default, x, normalized, w, None, 1e-5)
    check(N.aten_layer_norm, A.layer_norm.default, x, normalized, None, b)


def test_layer_norm_whole_input_and_fused_op():
    x = make((3, 4))
    check(N.aten_native_layer_norm, A.native_layer_norm.default, x, [3, 4], None, None, 1e-5)
    check(N.aten_layer_norm, A.layer_norm.default, make((6,)), [6])
    model, _, _ = trace(N.aten_native_layer_norm, (x, [4], make((4,)), make((4,)), 1e-5))
    assert [n.op_type for n in model.graph.node] == ["LayerNormalization"]
    with pytest.raises(ValueError):
        N.aten_native_layer_norm(x, [], None, None, 1e-5)


# -- group norm ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids=str)
@pytest.mark.parametrize("shape, groups", [((2, 6), 3), ((2, 6, 5), 2), ((2, 6, 3, 4), 1), ((2, 6, 3, 4), 6)], ids=str)
def test_group_norm(dtypes, shape, groups):
    dtype, param_dtype = dtypes
    x = make(shape, dtype, 1)
    n, c = shape[:2]
    hxw = x.numel() // (n * c)
    w, b = make((c,), param_dtype, 2), make((c,), param_dtype, 3)
    check(N.aten_native_group_norm, A.native_group_norm.default, x, w, b, n, c, hxw, groups, 1e-5)
    check(N.aten_native_group_norm, A.native_group_norm.default, x, None, None, n, c, hxw, groups, 1e-3)
    check(N.aten_group_norm, A.group_norm.default, x, groups, w, None)
    check(N.aten_group_norm, A.group_norm.default, x, groups, None, b, 1e-2)


# -- RMS norm ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids=str)
@pytest.mark.parametrize("normalized", [[5], [4, 5]], ids=str)
def test_rms_norm(dtypes, normalized):
    dtype, param_dtype = dtypes
    x = make((2, 3, 4, 5), dtype, 1)
    w = make(tuple(normalized), param_dtype, 2)
    check(N.aten_rms_norm, A.rms_norm.default, x, normalized, w)
    check(N.aten_rms_norm, A.rms_norm.default, x, normalized, None, 1e-3)
    check(N.aten__fused_rms_norm, A._fused_rms_norm.default, x, normalized, w, None)
    check(N.aten__fused_rms_norm, A._fused_rms_norm.default, x, normalized, None, 1e-2)


def test_rms_norm_default_eps_and_fused_op():
    """eps=None is the machine epsilon of the computation dtype (float32 for float16 input):
    visible for inputs whose mean square is tiny."""
    for dtype in [torch.float32, torch.float16, torch.float64]:
        x = torch.full((2, 4), 1e-3, dtype=dtype)
        check(N.aten_rms_norm, A.rms_norm.default, x, [4])
        check(N.aten__fused_rms_norm, A._fused_rms_norm.default, x, [4], None, None)
    model, _, _ = trace(N.aten_rms_norm, (make((3, 4)), [4], make((4,))))
    assert [n.op_type for n in model.graph.node] == ["RMSNormalization"]


# -- dynamic shapes ------------------------------------------------------------------------------
def test_dynamic_shapes():
    x, w, b, rm, rv = bn_args((2, 3, 4, 5), torch.float32, torch.float32)

    def close(actual: Any, expected: Any) -> None:
        torch.testing.assert_close(actual, expected, equal_nan=True)

    close(run_dynamic(lambda *a: N.aten__native_batch_norm_legit_no_training(*a, 0.1, 1e-5), x, None, None, rm, rv),
          A._native_batch_norm_legit_no_training.default(x, None, None, rm, rv, 0.1, 1e-5))
    close(run_dynamic(lambda *a: N.aten__native_batch_norm_legit_functional(*a, True, 0.1, 1e-5), x, None, b, rm, rv),
          A._native_batch_norm_legit_functional.default(x, None, b, rm.clone(), rv.clone(), True, 0.1, 1e-5))
    close(run_dynamic(lambda t: N.aten_native_layer_norm(t, [sym_size(t, 2), sym_size(t, 3)], None, None, 1e-5), x),
          A.native_layer_norm.default(x, [4, 5], None, None, 1e-5))
    close(run_dynamic(lambda t: N.aten_rms_norm(t, [sym_size(t, 3)]), x), A.rms_norm.default(x, [5]))
    close(run_dynamic(lambda t, bias: N.aten_native_group_norm(t, None, bias, sym_size(t, 0), 3, 20, 3, 1e-5), x, b),
          A.native_group_norm.default(x, None, b, 2, 3, 20, 3, 1e-5))


# -- regression (issue 13): empty batch / empty groups ------------------------------------------
@pytest.mark.parametrize("shape", [(0, 4, 3), (0, 4), (2, 4, 0), (2, 4, 3, 0), (3, 4, 2, 2)], ids=str)
def test_group_norm_empty_dims(shape):
    # batch 0 made Reshape(x, [0, group, -1]) fail; HxW 0 gave rstd 1/sqrt(eps) where torch gives NaN
    x, w, b = make(shape, seed=1), make((4,), seed=2), make((4,), seed=3)
    hxw = math.prod(shape[2:])
    if hxw == 0 and len(shape) > 2 and N._empty_hxw_raises():  # torch 2.14 on refuses HxW = 0
        with pytest.raises(RuntimeError, match="HxW"):
            A.native_group_norm.default(x, w, b, shape[0], 4, hxw, 2, 1e-5)
        with pytest.raises(ValueError, match="HxW = 0"):
            N.aten_group_norm(x, 2, w, b)
        return
    check(N.aten_native_group_norm, A.native_group_norm.default, x, w, b, shape[0], 4, hxw, 2, 1e-5)
    check(N.aten_group_norm, A.group_norm.default, x, 2, w, b)
    out = run_dynamic(N.aten_native_group_norm, x, w, b, shape[0], 4, hxw, 2, 1e-5)
    for got, want in zip(out, A.native_group_norm.default(x, w, b, shape[0], 4, hxw, 2, 1e-5)):
        torch.testing.assert_close(got, want, equal_nan=True)


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_empty_1d_input(training):
    x = torch.zeros(0)
    check(N.aten_batch_norm, A.batch_norm.default, x, None, None, torch.zeros(0), torch.ones(0), training, 0.1, 1e-5, False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_layer_and_rms_norm_over_empty_dims(dtype):
    # onnxruntime's LayerNormalization / RMSNormalization refuse a normalized size of 0; torch gives mean 0, rstd NaN
    x = make((3, 0), dtype)
    check(N.aten_native_layer_norm, A.native_layer_norm.default, x, [0], None, None, 1e-5)
    check(N.aten_native_layer_norm, A.native_layer_norm.default, make((2, 3, 0), dtype), [3, 0], None, None, 1e-5)
    check(N.aten_rms_norm, A.rms_norm.default, x, [0])
