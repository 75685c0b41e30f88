"""Python scalar arguments of float16 / bfloat16 (and float32) ops, used as torch's kernels use
them: some round the scalar to the tensor's dtype (comparisons, remainder, fmod, add / sub
with alpha, hardshrink, xlogy, pow's exponent, softshrink from torch 2.14), others take it
unrounded in float32 (mul, div, threshold, softshrink up to torch 2.13: the function probes the
installed torch) (issue 19, section 7). Inputs sit on the scalar rounded to the dtype and
its neighbours, where the two readings differ."""

from __future__ import annotations

import math

import pytest
import torch

import torchlib.ops  # noqa: F401  (registers every function)
from torchlib.registry import REGISTRY
from torchlib.testing import check_function, check_traced_bfloat16

S = 0.3


def around(dtype: torch.dtype, s: float = S) -> torch.Tensor:
    """s rounded to dtype, its negation and neighbours, then random values."""
    r = torch.tensor(s, dtype=dtype)
    up, down = torch.tensor(math.inf, dtype=dtype), torch.tensor(-math.inf, dtype=dtype)
    near = [r, -r, torch.nextafter(r, up), torch.nextafter(r, down), -torch.nextafter(r, up), -torch.nextafter(r, down)]
    g = torch.Generator().manual_seed(0)
    return torch.cat([torch.stack(near), torch.randn(58, generator=g).to(dtype)])


CASES = {
    "aten::le.Scalar": lambda x: (x, S), "aten::lt.Scalar": lambda x: (x, -S), "aten::ge.Scalar": lambda x: (x, -S),
    "aten::gt.Scalar": lambda x: (x, S), "aten::eq.Scalar": lambda x: (x, S), "aten::ne.Scalar": lambda x: (x, S),
    "aten::remainder.Scalar": lambda x: (x, S), "aten::fmod.Scalar": lambda x: (x, S),
    "aten::mul.Scalar": lambda x: (x, S), "aten::div.Scalar": lambda x: (x, S),
    "aten::add.Scalar": lambda x: (x, S, 3.3), "aten::sub.Scalar": lambda x: (x, S, 1.0029),
    "aten::rsub.Scalar": lambda x: (x, S, 3.3), "aten::pow.Tensor_Scalar": lambda x: (x, 2.00578125), "aten::pow.Tensor_Scalar.near_two": lambda x: (x, 2 + 1e-9),
    "aten::xlogy.Scalar_Other": lambda x: (x, 3.3), "aten::special_xlog1py.other_scalar": lambda x: (x, 3.3),
    "aten::hardshrink": lambda x: (x, S), "aten::softshrink": lambda x: (x, S), "aten::threshold": lambda x: (x, S, 3.3),
    "aten::threshold_backward": lambda x: (torch.ones_like(x), x, S), "aten::hardshrink_backward": lambda x: (torch.ones_like(x), x, S),
}


def _reference(name: str):
    name = name.removesuffix(".near_two")
    op_name, _, overload = name.split("::")[1].partition(".")
    return getattr(getattr(torch.ops.aten, op_name), overload or "default")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("name", list(CASES))
def test_scalar_argument_as_torch_uses_it(name, dtype):
    args = CASES[name](around(dtype))
    expected = _reference(name)(*args)
    fn = REGISTRY.lookup(name.removesuffix(".near_two")).function
    check = check_traced_bfloat16 if dtype == torch.bfloat16 else check_function
    # exact: the two readings of the scalar differ by whole ulps of the dtype (or a flipped compare);
    # float32 pow is within an ulp of torch's, whose vectorised and scalar paths differ themselves
    rtol = 3e-7 if name == "aten::pow.Tensor_Scalar" and dtype == torch.float32 else 0
    check(fn, args, expected=expected, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_add_and_sub_with_alpha_as_torchs_fused_kernel(dtype):
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, generator=g).to(dtype), torch.randn(64, generator=g).to(dtype)
    for name, ref in (("aten::add.Tensor", torch.ops.aten.add.Tensor), ("aten::sub.Tensor", torch.ops.aten.sub.Tensor),
                      ("aten::rsub.Tensor", torch.ops.aten.rsub.Tensor)):
        fn = REGISTRY.lookup(name).function
        check = check_traced_bfloat16 if dtype == torch.bfloat16 else check_function
        check(fn, (x, y), {"alpha": 1.0029}, expected=ref(x, y, alpha=1.0029), rtol=0, atol=0)
