"""torchlib/ops/casting.py against torch, eagerly and traced (bfloat16 traced only)."""

from __future__ import annotations

import pytest
import torch
from test_elementwise import ALL_DTYPES, check, make

from torchlib.ops import casting

A = torch.ops.aten


def _data(dtype):
    """Values every target dtype holds after torch's conversion (no float -> int overflow)."""
    if dtype.is_floating_point:
        return torch.tensor([[0.0, -0.0, 1.5, -2.75], [3.25, 100.5, -7.0, 0.25]], dtype=dtype)
    return make((2, 4), dtype, 0 if dtype == torch.uint8 else -9, 9)


@pytest.mark.parametrize("target", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("source", ALL_DTYPES, ids=str)
def test_to_copy(source, target):
    x = _data(source)
    if target == torch.uint8 and source != torch.bool:
        x = x.abs()  # negative floats to uint8 are undefined in C++
    check(casting.aten__to_copy, A._to_copy.default, x, dtype=target)
    check(casting.aten_to_dtype, A.to.dtype, x, target)
    check(casting.aten_type_as, A.type_as.default, x, torch.zeros(1, dtype=target))


def test_to_copy_without_dtype_and_other_arguments():
    x = make((2, 3), torch.float32)
    check(casting.aten__to_copy, A._to_copy.default, x)
    check(casting.aten__to_copy, A._to_copy.default, x, dtype=torch.float16, layout=torch.strided,
          device=torch.device("cpu"), pin_memory=False, non_blocking=True, memory_format=torch.contiguous_format)  # fmt: skip


def test_to_device_and_other():
    x = make((2, 3), torch.int64)
    check(casting.aten_to_device, A.to.device, x, torch.device("cpu"), torch.float64)
    check(casting.aten_to_other, A.to.other, x, torch.zeros(2, dtype=torch.bool))
    check(casting.aten_to_dtype, A.to.dtype, x, torch.int64, False, True)


def test_float_to_int_truncates_and_nan_to_bool_is_true():
    x = torch.tensor([2.9, -2.9, 0.5, -0.5])
    check(casting.aten__to_copy, A._to_copy.default, x, dtype=torch.int32)
    y = torch.tensor([float("nan"), 0.0, -0.0, float("inf")])
    check(casting.aten__to_copy, A._to_copy.default, y, dtype=torch.bool)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0, 2), (2, 3)], ids=str)
def test_lift_fresh(dtype, shape):
    x = make(shape, dtype)
    check(casting.aten_lift_fresh, A.lift_fresh.default, x)
    check(casting.aten_lift_fresh_copy, A.lift_fresh_copy.default, x)
