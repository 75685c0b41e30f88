"""torchlib/ops/creation.py against torch, eagerly and traced (bfloat16 traced only), and with
dynamic sizes (SymInt Values) through run_dynamic."""

from __future__ import annotations

import pytest
import torch
from test_elementwise import ALL_DTYPES, BF16, check, make

from graph_builder import op
from torchlib.ops import creation
from torchlib.ops import elementwise as ew
from torchlib.testing import run_dynamic
from torchlib.torch_version import torch_matches

A = torch.ops.aten
DTYPES = [None] + ALL_DTYPES
SIZES = [[2, 3], [], [0, 4], [1]]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("size", SIZES, ids=str)
def test_full_zeros_ones_empty(size, dtype):
    for fill in [2, -1.5, True]:
        check(creation.aten_full, A.full.default, size, fill, dtype=dtype)
    check(creation.aten_zeros, A.zeros.default, size, dtype=dtype)
    check(creation.aten_ones, A.ones.default, size, dtype=dtype)
    # empty: uninitialized in torch, zeros here: compare dtype and shape with zeros
    expected = torch.zeros(size, dtype=dtype)
    check(creation.aten_empty, None, size, dtype=dtype, expected=expected)
    check(creation.aten_empty_strided, None, size, [1] * len(size), dtype=dtype, expected=expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("self_dtype", [torch.float32, torch.int64, torch.bool, BF16], ids=str)
def test_like_and_new(self_dtype, dtype):
    x = make((2, 0, 3) if self_dtype == torch.bool else (2, 3), self_dtype)
    check(creation.aten_full_like, A.full_like.default, x, 7, dtype=dtype)
    check(creation.aten_full_like, A.full_like.default, x, 0.5, dtype=dtype)
    check(creation.aten_zeros_like, A.zeros_like.default, x, dtype=dtype)
    check(creation.aten_ones_like, A.ones_like.default, x, dtype=dtype)
    check(creation.aten_empty_like, None, x, dtype=dtype, expected=torch.zeros_like(x, dtype=dtype))
    check(creation.aten_new_zeros, A.new_zeros.default, x, [3, 1], dtype=dtype)
    check(creation.aten_new_ones, A.new_ones.default, x, [4], dtype=dtype)
    check(creation.aten_new_full, A.new_full.default, x, [2, 2], 3.5, dtype=dtype)
    check(creation.aten_new_empty, None, x, [1, 2], dtype=dtype, expected=x.new_zeros([1, 2], dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("s", [3, -2.5, True])
def test_scalar_tensor(s, dtype):
    check(creation.aten_scalar_tensor, A.scalar_tensor.default, s, dtype=dtype)


ARANGE = [(5,), (0,), (2.5,), (1, 7), (-3, 4.5), (0, 10, 3), (10, 0, -3), (0.1, 1.0, 0.1), (-1.0, 1.0, 0.25),
          (0, 2.5, 1), (0.5, 3, 1), (1, 1), (0, 1000, 7), (0, 100.5, 0.3)]  # fmt: skip


@pytest.mark.parametrize("dtype", [None, torch.float32, torch.float64, torch.float16, BF16, torch.int64, torch.int32,
                                   torch.int16, torch.uint8], ids=str)  # fmt: skip
@pytest.mark.parametrize("bounds", ARANGE, ids=str)
def test_arange(bounds, dtype):
    if dtype == torch.uint8 and any(b < 0 for b in bounds):
        pytest.skip("negative values in uint8")
    if dtype in (torch.float16, BF16, torch.int16, torch.uint8) and max(abs(b) for b in bounds) > 200:
        pytest.skip("out of the dtype's exact range")
    aten = {1: A.arange.default, 2: A.arange.start, 3: A.arange.start_step}[len(bounds)]
    fn = {1: creation.aten_arange, 2: creation.aten_arange_start, 3: creation.aten_arange_start_step}[len(bounds)]
    if dtype == torch.int64 and len(bounds) == 3 and int(bounds[2]) == 0 and torch_matches("<2.13"):
        # torch 2.12.1's kernel divides by the step truncated to 0 and the process dies (SIGFPE);
        # 2.13 raises "step must be nonzero", 2.14 counts in double. Ours raises.
        with pytest.raises((TypeError, ValueError)):
            fn(*bounds, dtype=dtype)
        return
    check(fn, aten, *bounds, dtype=dtype)


def test_arange_errors():
    check(creation.aten_arange_start_step, A.arange.start_step, 0, 5, 0)
    check(creation.aten_arange_start_step, A.arange.start_step, 0, 5, -1)
    check(creation.aten_arange, A.arange.default, 3, dtype=torch.bool)


def test_arange_float32_accumulates_without_drift():
    # start + i * step for every i (in double, rounded once): within a unit in the last place of
    # torch's vectorized kernel, where a running float32 sum would drift by thousands of them
    check(creation.aten_arange_start_step, A.arange.start_step, 0.0, 3000.0, 0.1, rtol=1.2e-7, atol=0)


@pytest.mark.parametrize("dtype", [None, torch.float32, torch.float64, torch.float16, BF16, torch.int64, torch.int32], ids=str)
@pytest.mark.parametrize("bounds", [(0, 10, 5), (-1, 1, 7), (3.5, -2.5, 4), (0, 10, 4), (2, 5, 1), (2, 5, 0), (0, 1, 100)], ids=str)
def test_linspace(bounds, dtype):
    start, end, steps = bounds
    check(creation.aten_linspace, A.linspace.default, start, end, steps, dtype=dtype)
    t_start, t_end = torch.tensor(start), torch.tensor(end)
    check(creation.aten_linspace_tensor_tensor, A.linspace.Tensor_Tensor, t_start, t_end, steps, dtype=dtype)
    check(creation.aten_linspace_tensor_scalar, A.linspace.Tensor_Scalar, t_start, end, steps, dtype=dtype)
    check(creation.aten_linspace_scalar_tensor, A.linspace.Scalar_Tensor, start, t_end, steps, dtype=dtype)


# -- dynamic sizes: SymInt Values in the size lists and arange bounds ------------------------------


def _dim(x, i):
    return op.Squeeze(op.Shape(x, start=i, end=i + 1), [0])


def test_dynamic_sizes():
    x = make((3, 5), torch.float32)
    result = run_dynamic(lambda t: creation.aten_zeros([_dim(t, 0), 2, _dim(t, 1)], dtype=torch.int32), x)
    torch.testing.assert_close(result, torch.zeros(3, 2, 5, dtype=torch.int32))
    result = run_dynamic(lambda t: creation.aten_full([_dim(t, 1)], _dim(t, 0)), x)
    torch.testing.assert_close(result, torch.full([5], 3))
    result = run_dynamic(lambda t: creation.aten_new_ones(t, [_dim(t, 1), 1]), x)
    torch.testing.assert_close(result, torch.ones(5, 1))
    result = run_dynamic(lambda t: creation.aten_ones_like(t, dtype=torch.bool), x)
    torch.testing.assert_close(result, torch.ones(3, 5, dtype=torch.bool))
    result = run_dynamic(lambda t: creation.aten_full_like(t, 2), x)
    torch.testing.assert_close(result, torch.full_like(x, 2))
    result = run_dynamic(lambda t: ew.aten_fill_tensor(t, _dim(t, 0)), x)
    torch.testing.assert_close(result, torch.full_like(x, 3))


def test_dynamic_arange():
    x = make((7, 2), torch.float32)
    result = run_dynamic(lambda t: creation.aten_arange(_dim(t, 0)), x)
    torch.testing.assert_close(result, torch.arange(7))
    result = run_dynamic(lambda t: creation.aten_arange_start_step(1, _dim(t, 0), 2, dtype=torch.float32), x)
    torch.testing.assert_close(result, torch.arange(1, 7, 2, dtype=torch.float32))
    result = run_dynamic(lambda t: creation.aten_arange_start_step(_dim(t, 1), 0.5, -0.5, dtype=torch.int32), x)
    torch.testing.assert_close(result, torch.arange(2, 0.5, -0.5, dtype=torch.int32))
