"""Edge inputs on the dtypes after each function's first (issue 13, the fuzz pass run with
`--dtypes int64`, `int32,bool`, `float16,bfloat16`, ...): integer extremes (torch's integer
arithmetic wraps around), integer division rounding, bool promotion, half-precision rounding.
Each test is the repro of a wrong answer or an error bench/fuzz_ops.py found, checked eagerly
and traced."""

from __future__ import annotations

import math

import pytest
import torch

from torchlib.ops import aliases as Al
from torchlib.ops import batch_sums as B
from torchlib.ops import complex_shape as Cs
from torchlib.ops import conv_pool as C
from torchlib.ops import creation as Cr
from torchlib.ops import elementwise as E
from torchlib.ops import histogram as H
from torchlib.ops import scans as S
from torchlib.ops import symbolic as Sy
from torchlib.ops.special import misc as M
from torchlib.testing import check_function

A = torch.ops.aten
I64 = torch.iinfo(torch.int64)


# -- integer division: c10's div_floor_integer in exact integers -------------------------------
FLOOR_A = torch.tensor([-9223372036854775801, -11, 11, 2**62 + 1, I64.min, I64.max, -7, 7])
FLOOR_B = torch.tensor([2, 2, 2, 2, 3, -2, 7, -7])


@pytest.mark.parametrize("fn, args, torch_fn", [
    # floor(-(2^63 - 7) / 2) = -(2^62 - 3) - 1: the remainder test went through double (Mod fmod=1)
    (M.aten_floor_divide, (FLOOR_A, FLOOR_B), A.floor_divide.default),
    (E.aten_div_mode, (FLOOR_A, FLOOR_B), lambda a, b: A.div.Tensor_mode(a, b, rounding_mode="floor")),
])  # fmt: skip
def test_int64_floor_division_is_exact(fn, args, torch_fn):
    kwargs = {"rounding_mode": "floor"} if fn is E.aten_div_mode else {}
    check_function(fn, args, kwargs, expected=torch_fn(*args))


# -- index_reduce on integers: in the dtype's wrapping arithmetic, floor-divided means -----------
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_integer_index_reduce_wraps_like_torch(dtype, reduce, include_self):
    """The fuzz row: index_reduce(i64[]=MAX, 0, [0], 6, 'prod') gave MAX * 6 through float64
    (torch: -6, wrapped). Sums of means wrap in the dtype before the floor division."""
    info = torch.iinfo(dtype)
    x = torch.tensor([5, info.max, 3, 9, info.min], dtype=dtype)
    source = torch.tensor([info.max, 3, 100, 6, info.max - 1, 7], dtype=dtype)
    index = torch.tensor([0, 0, 1, 2, 1, 4])
    args = (x, 0, index, source, reduce)
    expected = A.index_reduce(*args, include_self=include_self)
    check_function(B.aten_index_reduce, args, {"include_self": include_self}, expected=expected)


def test_int64_scalar_index_reduce_prod_wraps():
    args = (torch.tensor(I64.max), 0, torch.tensor([0]), torch.tensor(6), "prod")
    check_function(B.aten_index_reduce, args, expected=A.index_reduce(*args))


# -- _add_relu: torch's add_clamp kernel clamps to [0, finfo.max] --------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_add_relu_clamps_inf_to_the_dtype_max(dtype):
    """+inf gives finfo.max (was inf). NaN stays NaN as torch's vectorised loop gives it on 20
    elements (its scalar tail on short tensors gives 0: torch depends on the length there)."""
    a = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.0, -1.0] * 4, dtype=dtype)
    b = torch.ones_like(a)
    check_function(Al.aten__add_relu, (a, b), expected=A._add_relu.Tensor(a, b))
    check_function(Al.aten__add_relu_scalar, (a, 1.0), expected=A._add_relu.Scalar(a, 1.0))


# -- complex mean of nothing is NaN -------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("shape, dim", [((0,), None), ((0, 3), [0]), ((3, 0), [1]), ((2, 3, 4), [0, 2])])
def test_complex_mean_of_an_empty_input_is_nan(dtype, shape, dim):
    """onnxruntime's ReduceMean of nothing gives 0; torch's sum / count gives nan+nanj."""
    x = torch.randn(shape, dtype=dtype)
    if dim is None:
        check_function(Cs.aten_mean_complex, (x,), expected=A.mean.default(x))
    else:
        check_function(Cs.aten_mean_dim_complex, (x, dim, True), expected=A.mean.dim(x, dim, True))


# -- bincount of nothing: torch's int64 zeros, whatever the weights ---------------------------------
@pytest.mark.parametrize("weights", [torch.zeros(0, dtype=torch.int64), torch.zeros(0), torch.zeros(0, dtype=torch.float64), None])
def test_bincount_of_an_empty_input_is_int64_zeros(weights):
    """The fuzz row: bincount(i64[0], i64[0]) gave float64[0] (the weighted dtype); torch
    returns zeros(minlength) of int64 before looking at the weights."""
    args = (torch.zeros(0, dtype=torch.int64), weights, 3)
    check_function(H.aten_bincount, args, expected=A.bincount(*args))


# -- integer and double convolution (im2col + MatMul) of an empty batch --------------------------
@pytest.mark.parametrize("dtype", [torch.int64, torch.float64])
@pytest.mark.parametrize("batch", [0, 2])
def test_grouped_matmul_convolution_of_an_empty_batch(dtype, batch):
    """The fuzz row: conv1d(i64[0, 4, 8], i64[2, 2, 3], groups=2) failed in onnxruntime's MatMul,
    which cannot broadcast a batch dim holding 0 against the groups."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-5, 5, (batch, 4, 8), generator=g).to(dtype)
    w = torch.randint(-5, 5, (2, 2, 3), generator=g).to(dtype)
    b = torch.randint(-5, 5, (2,), generator=g).to(dtype)
    args = (x, w, b, [3], [1], [2], 2)
    check_function(C.aten_conv1d, args, expected=A.conv1d(*args))
    args2 = (x.unsqueeze(-1).expand(-1, -1, -1, 3).contiguous(), w.unsqueeze(-1), None, [1, 1], [0, 1], [1, 1], 2)
    check_function(C.aten_conv2d, args2, expected=A.conv2d(*args2))


# -- SymInt floor division at the int64 extremes --------------------------------------------------
@pytest.mark.parametrize("a, b", [(I64.max, -5), (I64.min, 3), (I64.min, 7), (-7, 2), (7, -2), (0, -3)])
def test_symint_floordiv_at_the_int64_extremes(a, b):
    """The fuzz row: operator_floordiv(MAX, -5) gave +1844674407370955161; `a - a mod b` was
    MAX + 3, which wrapped. Now truncating division, one less where the signs differ."""
    check_function(Sy.operator_floordiv, (torch.tensor(a), torch.tensor(b)), expected=torch.tensor(a // b))


# -- integer linspace: torch's loop rounds start + step * i once (a fused multiply-add) ----------
@pytest.mark.parametrize("start, end, steps, dtype", [
    (-2, I64.max, 50, torch.int64),  # the fuzz row: one double ulp (64) off on 7 of 50 values
    (121, -305, 67, torch.int32),  # truncation crosses an integer: 1 value off before
    (-(2**62), 2**62, 99, torch.int64),
    (0, 10, 7, torch.int64),
])  # fmt: skip
def test_integer_linspace_rounds_once_like_torch(start, end, steps, dtype):
    expected = A.linspace.Scalar_Tensor(start, torch.tensor(end), steps, dtype=dtype)
    check_function(Cr.aten_linspace_scalar_tensor, (start, torch.tensor(end), steps), {"dtype": dtype}, expected=expected)
    args = (torch.tensor(float(start)), torch.tensor(end), steps)
    check_function(Cr.aten_linspace_tensor_tensor, args, {"dtype": dtype}, expected=A.linspace.Tensor_Tensor(*args, dtype=dtype))


# -- nanmedian: a +inf median's index is a +inf's, never a NaN's ----------------------------------
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("values", [[math.nan, math.inf], [math.nan, math.inf, 1.0, math.nan, math.inf], [-math.inf, math.nan, math.inf, math.nan, math.inf, math.inf]])
def test_nanmedian_index_of_an_inf_median_skips_nan(dtype, values):
    """The fuzz row: nanmedian.dim([nan, inf], 0) gave index 0 (the NaN, sorted as +inf and
    first among the ties); torch gives 1."""
    x = torch.tensor(values, dtype=dtype)
    check_function(S.aten_nanmedian_dim, (x, 0, True), expected=A.nanmedian.dim(x, 0, True))
