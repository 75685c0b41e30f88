"""torchlib/ops/histogram.py, distance.py and tensor_meta.py against torch, eagerly and traced."""

from __future__ import annotations

import math

import pytest
import torch

from torchlib.ops import distance as D
from torchlib.ops import histogram as H
from torchlib.ops import tensor_meta as T
from torchlib.testing import check_function

A = torch.ops.aten


@pytest.mark.parametrize("weights", [None, torch.tensor([0.5, -1.0, 2.0, 3.0]), torch.tensor([1, 2, 3, 4])])
@pytest.mark.parametrize("minlength", [0, 9])
def test_bincount(weights: torch.Tensor | None, minlength: int) -> None:
    x = torch.tensor([0, 3, 1, 1])
    check_function(H.aten_bincount, (x, weights, minlength), expected=torch.bincount(x, weights, minlength))


def test_bincount_empty() -> None:
    x = torch.zeros(0, dtype=torch.int64)
    check_function(H.aten_bincount, (x, None, 2), expected=torch.bincount(x, None, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("bins,low,high", [(10, 0, 0), (7, -2, 2.5), (1, -1, 1)])
def test_histc(dtype: torch.dtype, bins: int, low: float, high: float) -> None:
    x = (torch.randn(300, generator=torch.Generator().manual_seed(0)) * 3).to(dtype)
    x[5] = float("nan") if (low, high) != (0, 0) else x[5]
    check_function(H.aten_histc, (x, bins, low, high), expected=torch.histc(x, bins, low, high))


def test_histc_constant_data() -> None:
    x = torch.tensor([2.0, 2.0])
    check_function(H.aten_histc, (x, 3), expected=torch.histc(x, 3))


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.5, float("inf")])
def test_pdist_and_dist(p: float) -> None:
    x = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    check_function(D.aten__pdist_forward, (x, p), expected=A._pdist_forward(x, p))
    check_function(D.aten_dist, (x, x.flip(0), p), expected=torch.dist(x, x.flip(0), p))


def test_dist_int_promotes() -> None:
    a, b = torch.tensor([1, 2]), torch.tensor([1.0, 4.0])
    check_function(D.aten_dist, (a, b), expected=torch.dist(a, b))


def test_metadata() -> None:
    x = torch.ones(2, 3, 5)
    assert [T.aten_sym_stride_int(x, d) for d in (0, 1, 2, -1)] == list(x.stride()) + [1]
    assert T.aten_sym_storage_offset(x) == 0 and T.aten_sym_is_contiguous(x) is True
    with pytest.raises(ValueError, match="contiguous format"):
        T.aten_sym_is_contiguous(x, torch.channels_last)


@pytest.mark.parametrize("x", [torch.tensor([2.5]), torch.tensor([[7]]), torch.tensor(True)])
def test_local_scalar_dense(x: torch.Tensor) -> None:
    """item() as a graph holds it: a symbolic float is DOUBLE, a symbolic int INT64."""
    dtype = torch.bool if x.dtype == torch.bool else torch.float64 if x.dtype.is_floating_point else torch.int64
    check_function(T.aten_item, (x,), expected=torch.tensor(x.item(), dtype=dtype))


def test_copy_casts_and_broadcasts() -> None:
    self, src = torch.zeros(2, 3, dtype=torch.int32), torch.tensor([[1.5], [-2.75]], dtype=torch.float64)
    from torchlib.ops.casting import aten_copy

    check_function(aten_copy, (self, src), expected=A.copy(self, src))


def test_addbmm_and_diff() -> None:
    from torchlib.ops import batch_sums as S

    m, b1, b2 = torch.randn(3, 4, dtype=torch.float64), torch.randn(5, 3, 2, dtype=torch.float64), torch.randn(5, 2, 4, dtype=torch.float64)
    check_function(S.aten_addbmm, (m, b1, b2), {"beta": 0.5, "alpha": 2}, expected=torch.addbmm(m, b1, b2, beta=0.5, alpha=2))
    x = torch.tensor([[1, 5, 2], [3, -3, 0]])
    check_function(S.aten_diff, (x, 2, 1, torch.tensor([[0], [1]])), expected=torch.diff(x, 2, 1, torch.tensor([[0], [1]])))
    check_function(S.aten_diff, (x, 0, 0, None, x), expected=torch.diff(x, 0, 0, None, x))  # n=0: self, append ignored


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_index_reduce(reduce: str, include_self: bool, dtype: torch.dtype) -> None:
    from torchlib.ops import batch_sums as S

    x, src = torch.tensor([[7.0, -7], [2, 3], [1, 1]]).to(dtype), torch.tensor([[2.0, 5], [0, -4], [3, 3]]).to(dtype)
    if dtype.is_floating_point:  # NaN propagates through amax / amin as in torch
        src[0, 0] = float("nan")
    idx = torch.tensor([1, 1, 0])
    check_function(S.aten_index_reduce, (x, 0, idx, src, reduce), {"include_self": include_self},
                   expected=x.index_reduce(0, idx, src, reduce, include_self=include_self))  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.bool, torch.int8])
def test_put_accumulate_duplicates_and_negative(dtype: torch.dtype) -> None:
    from torchlib.ops import scatter_extra as X

    x, idx = torch.zeros(2, 3, dtype=dtype), torch.tensor([0, -1, 0, 4])
    src = torch.tensor([100, 2, 100, 1]).to(dtype)
    check_function(X.aten_put, (x, idx, src, True), expected=x.put(idx, src, True))


def test_index_copy() -> None:
    from torchlib.ops import scatter_extra as X

    x, idx, src = torch.zeros(4, 3), torch.tensor([3, 0]), torch.randn(4, 2)
    check_function(X.aten_index_copy, (x, 1, torch.tensor([2, 0]), src), expected=x.index_copy(1, torch.tensor([2, 0]), src))
    check_function(X.aten_index_copy, (x, 0, idx, torch.ones(2, 3)), expected=x.index_copy(0, idx, torch.ones(2, 3)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_histogram_edges(dtype: torch.dtype) -> None:
    """NaN (not counted when a range is given), an empty range, no data, constant data, weights
    with density, given bin edges, and histogramdd's three ops."""
    aten = torch.ops.aten
    g = torch.Generator().manual_seed(0)
    x, w = (torch.randn(50, generator=g) * 3).to(dtype), torch.rand(50, generator=g).to(dtype)
    with_nan = x.clone()
    with_nan[3] = float("nan")
    for data, kw in [(x, {}), (with_nan, {"range": [-1.0, 2.0]}), (x, {"weight": w, "density": True}), (x, {"range": [1.0, 1.0]})]:
        check_function(H.aten_histogram_bin_ct, (data, 7), kw, expected=tuple(aten.histogram.bin_ct(data, 7, **kw)))
    for data in (torch.zeros(0, dtype=dtype), torch.full((4,), 2.0, dtype=dtype), x[:1]):
        check_function(H.aten_histogram_bin_ct, (data, 3), expected=tuple(aten.histogram.bin_ct(data, 3)))
    b = torch.tensor([-2.0, 0.0, 0.5, 3.0], dtype=dtype)
    check_function(H.aten_histogram_bins_tensor, (with_nan, b), {"weight": w, "density": True},
                   expected=tuple(aten.histogram.bins_tensor(with_nan, b, weight=w, density=True)))
    p, pw = torch.randn(40, 3, generator=g).to(dtype), torch.rand(40, generator=g).to(dtype)
    check_function(H.aten_histogramdd, (p, [2, 3, 4]), expected=aten.histogramdd(p, [2, 3, 4]))
    rng = [-1.0, 1.0, 0.0, 2.0, -3.0, 3.0]
    check_function(H.aten__histogramdd_from_bin_cts, (p, [2, 3, 4]), {"range": rng, "weight": pw, "density": True},
                   expected=aten._histogramdd_from_bin_cts(p, [2, 3, 4], range=rng, weight=pw, density=True))
    check_function(H.aten__histogramdd_bin_edges, (p, [2, 3, 4]), expected=aten._histogramdd_bin_edges(p, [2, 3, 4]))
    bs = [torch.tensor(e, dtype=dtype) for e in ([-1.0, 0.0, 1.0], [0.0, 2.0], [-3.0, -1.0, 0.0, 0.1, 3.0])]
    check_function(H.aten__histogramdd_from_bin_tensors, (p, bs), {"weight": pw},
                   expected=aten._histogramdd_from_bin_tensors(p, bs, weight=pw))


def test_resize_as_in_an_exported_graph() -> None:
    """torch.export keeps resize_as_; the exporter runs its functional form resize_as."""
    import torchlib

    class Resize(torch.nn.Module):
        def forward(self, x: torch.Tensor, template: torch.Tensor) -> torch.Tensor:
            y = x.clone()
            y.resize_as_(template)
            return y * 2

    args = (torch.arange(6.0).reshape(2, 3), torch.zeros(2, 3))
    result = torchlib.export(Resize(), args)
    torch.testing.assert_close(result(*args), Resize()(*args))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
@pytest.mark.parametrize("shape,size", [((0, 3), [2, 3]), ((1, 3), [2, 3]), ((1, 3), [6]), ((2, 3), [2, 2]), ((2, 3), [0]), ((), [1, 3])])
def test_resize_changing_the_element_count(shape: tuple[int, ...], size: list[int], dtype: torch.dtype) -> None:
    """The fuzz pass's [empty] / [size1] repros: torch keeps the first min(old, new) elements
    (row-major) and leaves the rest uninitialised; ours are zeros there."""
    from torchlib.testing import run_dynamic

    x = (torch.arange(math.prod(shape)).reshape(shape) % 2 if dtype == torch.bool else torch.arange(1, math.prod(shape) + 1).reshape(shape)).to(dtype)
    torch_result = x.clone().resize_(size)
    kept = min(x.numel(), torch_result.numel())
    expected = torch.zeros(size, dtype=dtype)
    expected.view(-1)[:kept] = torch_result.reshape(-1)[:kept]  # torch's defined elements, zeros past them
    check_function(T.aten_resize, (x, size), expected=expected)
    check_function(T.aten_resize_as, (x, torch.zeros(size, dtype=dtype)), expected=expected)
    torch.testing.assert_close(run_dynamic(T.aten_resize_as, x, torch.zeros(size, dtype=dtype)), expected)


def test_resize_bfloat16_grows_with_zeros() -> None:
    from torchlib.testing import check_traced_bfloat16

    x = torch.tensor([[1.5, -2.0, 3.0]], dtype=torch.bfloat16)
    expected = torch.tensor([[1.5, -2.0, 3.0], [0.0, 0.0, 0.0]], dtype=torch.bfloat16)
    check_traced_bfloat16(T.aten_resize, (x, [2, 3]), expected=expected)
