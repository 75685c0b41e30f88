"""torchlib/ops/sort_topk.py against torch, eagerly and traced (bfloat16: traced only, see
torchlib.testing.check_traced_bfloat16), with static and dynamic shapes.

Data for topk has distinct values: torch.topk does not promise an order among the indices of
equal values, so with ties its indices may differ from ONNX TopK's (lower index first) while
the values agree. sort/argsort are checked with ties too, against torch's stable sort.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from torchlib.ops import sort_topk as S
from torchlib.ops.symbolic import aten_sym_size_int as sym_size
from torchlib.testing import check_function, check_traced_bfloat16, run_dynamic

A = torch.ops.aten
BF16 = torch.bfloat16
DTYPES = [torch.float32, torch.float16, BF16, torch.float64, torch.int32, torch.int64, torch.uint8,
          torch.int8, torch.int16]  # fmt: skip


def distinct(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    """No two elements equal (exactly representable in every dtype above)."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    values = torch.randperm(n, generator=g).reshape(shape)
    return (values if dtype == torch.uint8 else values - n // 2).to(dtype)


def with_ties(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    return torch.randint(0 if dtype == torch.uint8 else -2, 3, shape, generator=g).to(dtype)


def check(fn: Any, aten: Any, *args: Any, expected: Any = None, **kwargs: Any) -> None:
    expected = aten(*args, **kwargs) if expected is None else expected
    if any(isinstance(a, torch.Tensor) and a.dtype == BF16 for a in args):
        check_traced_bfloat16(fn, args, kwargs, expected=expected)
    else:
        check_function(fn, args, kwargs, expected=expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_topk(dtype):
    x = distinct((3, 4, 5), dtype)
    check(S.aten_topk, A.topk.default, x, 2)
    check(S.aten_topk, A.topk.default, x, 3, 1, False)
    check(S.aten_topk, A.topk.default, x, 1, 0, True)
    check(S.aten_topk, A.topk.default, x, 5, -1, False, True)


def test_topk_unsorted():
    """sorted=False: the order is unspecified (torch and onnxruntime may differ), the set is not."""
    x = distinct((4, 6), torch.float32)
    values, indices = S.aten_topk(x, 3, 1, True, False)
    expected = A.topk.default(x, 3, 1, True, True)
    torch.testing.assert_close(values.sort(1, descending=True).values, expected[0])
    torch.testing.assert_close(x.gather(1, indices), values)


def test_topk_edge_cases():
    check(S.aten_topk, A.topk.default, distinct((3, 4), torch.float32), 0)
    check(S.aten_topk, A.topk.default, torch.zeros(2, 0), 0)
    check(S.aten_topk, A.topk.default, torch.tensor(2.5), 1)
    check(S.aten_topk, A.topk.default, torch.tensor(7), 1, 0)
    # bool: torch's CPU topk refuses it; we sort it as uint8
    x = torch.tensor([[True, False, False, True]])
    values, indices = S.aten_topk(x, 2)
    assert values.dtype == torch.bool and values.tolist() == [[True, True]] and indices.tolist() == [[0, 3]]


@pytest.mark.parametrize("dtype", DTYPES + [torch.bool], ids=str)
def test_sort_argsort(dtype):
    x = with_ties((3, 4, 6), dtype)  # ties: checked against the stable sort
    for dim, descending in [(-1, False), (1, True), (0, False)]:
        check(S.aten_sort_stable, A.sort.stable, x, stable=True, dim=dim, descending=descending)
        check(S.aten_argsort_stable, A.argsort.stable, x, stable=True, dim=dim, descending=descending)
    y = distinct((3, 4, 6), dtype) if dtype != torch.bool else x
    check(S.aten_sort, A.sort.default, y)
    check(S.aten_sort, A.sort.default, y, 1, True)
    check(S.aten_argsort, A.argsort.default, y, 0)
    check(S.aten_argsort, A.argsort.default, y, -2, True)


def test_sort_scalar_and_empty():
    check(S.aten_sort, A.sort.default, torch.tensor(3.0))
    check(S.aten_argsort, A.argsort.default, torch.tensor(3.0), 0)
    check(S.aten_sort, A.sort.default, torch.zeros(2, 0))
    check(S.aten_argsort, A.argsort.default, torch.zeros(0, 3), 0, True)


def test_sort_infinities():
    x = torch.tensor([[1.0, -math.inf, math.inf, 0.0, -2.0]])
    check(S.aten_sort, A.sort.default, x)
    check(S.aten_sort, A.sort.default, x, -1, True)


def test_sort_nan():
    check(S.aten_sort, A.sort.default, torch.tensor([3.0, float("nan"), 1.0, 2.0]))


def test_dynamic_shapes():
    x = distinct((3, 7), torch.float32)
    torch.testing.assert_close(run_dynamic(S.aten_sort, x, 1, True), A.sort.default(x, 1, True))
    torch.testing.assert_close(run_dynamic(S.aten_argsort, x, 0), A.argsort.default(x, 0))
    # k as a SymInt computed in the graph: the size of dim 0
    expected = A.topk.default(x, 3)
    torch.testing.assert_close(run_dynamic(lambda t: S.aten_topk(t, sym_size(t, 0)), x), expected)


# -- regression (issue 13 / 10): NaN order, ties ----------------------------------------------------
NAN_ROWS = [[math.nan, 1.0, math.inf, -math.inf, math.nan, 2.0, math.inf, 1.0],
            [3.0, 2.0, 1.0, math.nan, 0.0, math.nan, math.nan, math.inf]]  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, BF16, torch.float64], ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_orders_nan_like_torch(dtype, descending):
    # NaN after +inf ascending, before it descending, ties in index order (torch's stable sort)
    x = torch.tensor(NAN_ROWS, dtype=dtype)
    expected = A.sort.stable(x, stable=True, descending=descending)
    check(S.aten_sort_stable, A.sort.stable, x, stable=True, descending=descending)
    check(S.aten_sort, A.sort.default, x, -1, descending, expected=expected)
    check(S.aten_argsort, A.argsort.default, x, 1, descending, expected=expected[1])
    torch.testing.assert_close(run_dynamic(lambda v: S.aten_sort(v, -1, descending), x), tuple(expected), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, BF16, torch.float64], ids=str)
def test_topk_values_with_nan(dtype):
    # NaN is the largest value; torch.topk's order among equal values is its partial sort's
    x = torch.tensor(NAN_ROWS, dtype=dtype)
    for largest in (True, False):
        got, want = S.aten_topk(x, 3, -1, largest), A.topk.default(x, 3, -1, largest)
        torch.testing.assert_close(got[0], want[0], equal_nan=True)
        torch.testing.assert_close(x.gather(-1, got[1]), want[0], equal_nan=True)  # indices point at those values


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.float16, BF16], ids=str)
def test_sort_ties_in_index_order(dtype):
    # many equal values: the stable order (what torch gives with stable=True)
    x = torch.randint(0, 3, (3, 700), generator=torch.Generator().manual_seed(0)).to(dtype)
    for descending in (False, True):
        expected = A.sort.stable(x, stable=True, descending=descending)
        check(S.aten_sort_stable, A.sort.stable, x, stable=True, descending=descending)
        check(S.aten_argsort_stable, A.argsort.stable, x, stable=True, descending=descending)
        check(S.aten_sort, A.sort.default, x, -1, descending, expected=expected)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool, torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_mode_ties_pick_smallest_value_last_index(dtype: torch.dtype) -> None:
    x = torch.tensor([[1, 0, 0, 1, 1, 0], [3, 3, 2, 2, 1, 5], [4, 4, 4, 4, 4, 4]]).to(dtype)
    for dim, keepdim in [(-1, False), (1, True), (0, False)]:
        check_function(S.aten_mode, (x, dim, keepdim), expected=tuple(torch.mode(x, dim, keepdim)))


def test_mode_with_nan() -> None:
    nan, inf = float("nan"), float("inf")
    # torch where its sort keeps equal numbers together (NaN after them, or NaN only)
    x = torch.tensor([[nan, 1.0, 1.0, 2.0], [2.0, inf, inf, nan], [nan, nan, nan, nan], [3.0, nan, 2.0, 1.0]])
    check_function(S.aten_mode, (x, 1), expected=tuple(torch.mode(x, 1)))
    # NaN splits the run of 1 in torch's insertion sort ([nan, 1, nan, 1]: torch says NaN, index 0,
    # an artefact of sorting NaN with `<`): here 1 occurs twice and is the mode, NaN is never
    ours = S.aten_mode(torch.tensor([nan, 1.0, nan, 1.0]))
    assert ours[0].item() == 1.0 and ours[1].item() == 3
    ours = S.aten_mode(torch.tensor([nan, nan, 1.0, 2.0], dtype=torch.float64))  # each NaN a run of its own
    assert ours[0].item() == 1.0 and ours[1].item() == 2


def test_mode_edges() -> None:
    check_function(S.aten_mode, (torch.tensor(2.5),), expected=tuple(torch.mode(torch.tensor(2.5))))  # 0-d
    x = torch.tensor([[7.0], [-1.0]])
    check_function(S.aten_mode, (x, 1), expected=tuple(torch.mode(x, 1)))  # size-1 dim
    e = torch.zeros(0, 3)
    check_function(S.aten_mode, (e, 1), expected=tuple(torch.mode(e, 1)))  # empty, not the reduced dim
    big = torch.tensor([-(2**63), 2**63 - 1, 2**63 - 1, -(2**63)])
    check_function(S.aten_mode, (big,), expected=tuple(torch.mode(big)))  # int extremes
    with pytest.raises(ValueError, match="size 0"):
        S.aten_mode(e, 0)
