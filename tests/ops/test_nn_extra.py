"""torchlib/ops/nn_extra.py against torch, eagerly and traced (bfloat16 traced only)."""

from __future__ import annotations

import pytest
import torch
from test_elementwise import ALL_DTYPES, FLOAT_DTYPES, check, make

from torchlib.ops import nn_extra as N
from torchlib.testing import check_function, run_dynamic

A = torch.ops.aten
HALF_ATOL = {torch.float16: {"rtol": 4e-3, "atol": 2e-3}, torch.bfloat16: {"rtol": 3e-2, "atol": 2e-2}}
DATA_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", DATA_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(2, 8, 3, 5), (12, 2, 3), (2, 1, 4, 2, 3)], ids=str)
def test_pixel_shuffle(dtype, shape):
    x = make(shape, dtype)
    r = 2 if shape[-3] % 4 == 0 else 1
    check(N.aten_pixel_shuffle, A.pixel_shuffle.default, x, r)


@pytest.mark.parametrize("dtype", DATA_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 4, 6), (3, 6, 6), (2, 1, 2, 6, 3)], ids=str)
def test_pixel_unshuffle(dtype, shape):
    x = make(shape, dtype)
    r = 3 if shape[-1] % 3 == 0 and shape[-2] % 3 == 0 else (2 if shape[-1] % 2 == 0 and shape[-2] % 2 == 0 else 1)
    check(N.aten_pixel_unshuffle, A.pixel_unshuffle.default, x, r)


def test_shuffles_dynamic_and_empty():
    x = make((2, 8, 3, 5), torch.float32)
    torch.testing.assert_close(run_dynamic(N.aten_pixel_shuffle, x, 2), torch.pixel_shuffle(x, 2))
    torch.testing.assert_close(run_dynamic(N.aten_pixel_unshuffle, x[:, :, :2, :4], 2), torch.pixel_unshuffle(x[:, :, :2, :4], 2))
    torch.testing.assert_close(run_dynamic(N.aten_channel_shuffle, x, 4), A.channel_shuffle(x, 4))
    e = make((0, 8, 3, 5), torch.float32)
    check(N.aten_pixel_shuffle, A.pixel_shuffle.default, e, 2)
    check(N.aten_channel_shuffle, A.channel_shuffle.default, e, 2)


@pytest.mark.parametrize("dtype", DATA_DTYPES, ids=str)
@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((1, 8, 2, 3), 2), ((2, 4, 1, 2, 2), 4)], ids=str)
def test_channel_shuffle(dtype, shape, groups):
    x = make(shape, dtype)
    check(N.aten_channel_shuffle, A.channel_shuffle.default, x, groups)
    check(N.aten_native_channel_shuffle, A.native_channel_shuffle.default, x, groups)


PADS = {1: [[2, 1], [0, 3]], 2: [[1, 2, 2, 0], [0, 0, 1, 1]], 3: [[1, 1, 1, 0, 0, 2]]}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["reflection", "replication"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_pad(d, kind, dtype):
    fn, aten = getattr(N, f"aten_{kind}_pad{d}d"), getattr(A, f"{kind}_pad{d}d").default
    for batched in (False, True):
        shape = (2, 3, 4, 5, 6)[-(d + 1 + batched):]
        x = make(shape, dtype)
        for padding in PADS[d]:
            check(fn, aten, x, padding)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("interpolation_mode", [0, 1, 2])
@pytest.mark.parametrize("padding_mode", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d(dtype, interpolation_mode, padding_mode, align_corners):
    x = make((2, 3, 5, 6), dtype)
    grid = make((2, 4, 7, 2), dtype, -1.2, 1.2, seed=1)
    args = (interpolation_mode, padding_mode, align_corners)
    tol = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-5, 1e-5)}.get(dtype, (2e-2, 2e-2))
    # half types compute in float32 (torch's bfloat16 kernel rounds its intermediates to bfloat16)
    expected = A.grid_sampler_2d(x.float(), grid.float(), *args).to(dtype) if dtype in (torch.float16, torch.bfloat16) else None
    check(N.aten_grid_sampler_2d, A.grid_sampler_2d.default, x, grid, *args, rtol=tol[0], atol=tol[1], expected=expected)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_prelu(dtype):
    x = make((2, 3, 4), dtype)
    for w in (make((3,), dtype, 0, 1, seed=1), make((1,), dtype, 0, 1, seed=1)):
        check(N.aten_prelu, A.prelu.default, x, w)
    check(N.aten_prelu, A.prelu.default, make((5,), dtype), make((1,), dtype, 0, 1, seed=1))
    check(N.aten__prelu_kernel, A._prelu_kernel.default, x, make((3, 1), dtype, 0, 1, seed=1))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("bounds", [(0.125, 1 / 3), (0.0, 0.5)], ids=str)
def test_rrelu_eval(dtype, bounds):
    check(N.aten_rrelu, A.rrelu.default, make((3, 4), dtype), *bounds)
    with pytest.raises(ValueError, match="training"):
        N.aten_rrelu(torch.ones(2), training=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_forward(dtype, p):
    a, b = make((2, 4, 3), dtype, seed=1), make((2, 5, 3), dtype, seed=2)
    check(N.aten__cdist_forward, A._cdist_forward.default, a, b, p, None)
    check(N.aten__cdist_forward, A._cdist_forward.default, a[0], b[0], p, None)
    check(N.aten__cdist_forward, A._cdist_forward.default, a[:1], b, p, None)  # broadcast batch


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_cosine_similarity(dtype):
    a, b = make((3, 4, 5), dtype, seed=1), make((1, 4, 5), dtype, seed=2)
    tol = HALF_ATOL.get(dtype, {})  # torch rounds the half types' intermediates; these compute in float32
    check(N.aten_cosine_similarity, A.cosine_similarity.default, a, b, **tol)
    check(N.aten_cosine_similarity, A.cosine_similarity.default, a, b, -1, **tol)
    if dtype in (torch.float32, torch.float64):  # in the half types torch's eps 1e-8 underflows to 0 (nan)
        check(N.aten_cosine_similarity, A.cosine_similarity.default, a, torch.zeros_like(a), 0)  # eps clamp


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(dtype, p, keepdim):
    a, b = make((3, 5), dtype, seed=1), make((5,), dtype, seed=2)
    check(N.aten_pairwise_distance, A.pairwise_distance.default, a, b, p, 1e-6, keepdim, **HALF_ATOL.get(dtype, {}))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float16], ids=str)
@pytest.mark.parametrize("padding", [[-4, 5, 0, 0], [0, 0, 2, -4], [5, -4, -4, 3], [-1, 2, 1, -2]], ids=str)
def test_negative_padding(dtype, padding):
    x = make((2, 3, 4, 4), dtype)
    check(N.aten_replication_pad2d, A.replication_pad2d.default, x, padding)
    if all(abs(q) < 4 for q in padding):
        check(N.aten_reflection_pad2d, A.reflection_pad2d.default, x, padding)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 6), (1, 2, 2, 3, 2)], ids=str)
def test_instance_norm(dtype, shape):
    x = make(shape, dtype)
    c = shape[1]
    w, b = make((c,), dtype, 0.5, 2, seed=1), make((c,), dtype, seed=2)
    rm, rv = make((c,), dtype, seed=3), make((c,), dtype, 0.5, 2, seed=4)
    tol = HALF_ATOL.get(dtype, {"rtol": 1e-4, "atol": 1e-5})
    check(N.aten_instance_norm, A.instance_norm.default, x, w, b, None, None, True, 0.1, 1e-5, False, **tol)
    check(N.aten_instance_norm, A.instance_norm.default, x, None, None, None, None, True, 0.1, 1e-3, False, **tol)
    check(N.aten_instance_norm, A.instance_norm.default, x, w, b, rm, rv, False, 0.1, 1e-5, False, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_nan_and_inf_as_torch(dtype: torch.dtype, p: float) -> None:
    # torch: p=0 gives NaN for a NaN difference, p=inf drops it (std::max from 0)
    nan, inf = float("nan"), float("inf")
    a = torch.tensor([[nan, 1.0], [inf, 2.0], [-inf, 0.0], [1.0, 2.0], [nan, nan]], dtype=dtype)
    b = torch.tensor([[1.0, 1.0], [inf, 2.0], [0.0, 0.0]], dtype=dtype)
    check_function(N.aten__cdist_forward, (a, b, p, None), expected=torch.ops.aten._cdist_forward(a, b, p, None))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32])
@pytest.mark.parametrize("batch", [(), (0,), (1,), (2, 3)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_bilinear(dtype: torch.dtype, batch: tuple[int, ...], with_bias: bool) -> None:
    g = torch.Generator().manual_seed(0)
    x1, x2 = (torch.randn(*batch, 3, generator=g) * 3).to(dtype), (torch.randn(*batch, 4, generator=g) * 3).to(dtype)
    w, b = (torch.randn(2, 3, 4, generator=g) * 3).to(dtype), (torch.randn(2, generator=g) * 3).to(dtype)
    args = (x1, x2, w, b if with_bias else None)
    check_function(N.aten_bilinear, args, expected=torch.ops.aten.bilinear(*args))


@pytest.mark.parametrize("rank", [4, 5])
@pytest.mark.parametrize("mode, padding, align_corners", [(0, 0, False), (1, 2, True), (0, 1, True)])
def test_grid_sampler_takes_the_2d_or_3d_kernel_by_rank(rank: int, mode: int, padding: int, align_corners: bool) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, *(4, 5, 6)[: rank - 2], generator=g)
    grid = torch.rand(2, *(3, 2, 4)[: rank - 2], rank - 2, generator=g) * 3 - 1.5
    args = (x, grid, mode, padding, align_corners)
    check_function(N.aten_grid_sampler, args, expected=torch.ops.aten.grid_sampler(*args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_3d(mode: int, padding: int, align_corners: bool) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 4, 1, 6, generator=g, dtype=torch.float64)  # a size-1 spatial dim
    grid = torch.rand(2, 3, 2, 4, 3, generator=g, dtype=torch.float64) * 3 - 1.5  # samples outside [-1, 1]
    args = (x, grid, mode, padding, align_corners)
    check_function(N.aten_grid_sampler_3d, args, expected=torch.grid_sampler_3d(*args))
