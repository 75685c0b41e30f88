"""torchlib/ops/tensor_extra.py against torch, eagerly and traced (bfloat16: traced only, see
torchlib.testing.check_traced_bfloat16), with a few dynamic-shape checks."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from torchlib.ops import tensor_extra as T
from torchlib.testing import check_function, check_traced_bfloat16, run_dynamic

A = torch.ops.aten
BF16 = torch.bfloat16
FLOATS = [torch.float32, torch.float16, BF16, torch.float64]
ALL = FLOATS + [torch.int32, torch.int64, torch.bool]
NUMBERS = FLOATS + [torch.int32, torch.int64]


def make(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 6 - 3).to(dtype)
    return torch.randint(-3, 4, shape, generator=g).to(dtype)


def check(fn: Any, aten: Any, *args: Any, **kwargs: Any) -> None:
    expected = aten(*args, **kwargs)
    flat = [a for a in args if isinstance(a, torch.Tensor)] + [t for a in args if isinstance(a, list) for t in a
                                                                if isinstance(t, torch.Tensor)]  # fmt: skip
    if any(a.dtype == BF16 for a in flat):
        check_traced_bfloat16(fn, args, kwargs, expected=expected)
    else:
        check_function(fn, args, kwargs, expected=expected)


@pytest.mark.parametrize("shape,num_classes", [((5,), -1), ((5,), 6), ((2, 3), -1), ((2, 3), 5), ((0,), 3)])
def test_one_hot(shape: tuple[int, ...], num_classes: int) -> None:
    check(T.aten_one_hot, A.one_hot, torch.randint(0, 5, shape), num_classes)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(3, 4), (5,), (), (0, 3), (2, 2, 2)])
def test_nonzero(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    check(T.aten_nonzero, A.nonzero, make(shape, dtype))


@pytest.mark.parametrize("size,fill", [(2, -1), (10, 7), (0, -1)])
def test_nonzero_static(size: int, fill: int) -> None:
    check(T.aten_nonzero_static, A.nonzero_static, make((3, 4), torch.float32), size=size, fill_value=fill)


@pytest.mark.parametrize("repeats", [[1, 0, 3], [2], [], [0, 0]])
def test_repeat_interleave_Tensor(repeats: list[int]) -> None:
    check(T.aten_repeat_interleave_Tensor, A.repeat_interleave.Tensor, torch.tensor(repeats, dtype=torch.int64))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("repeats,dim", [(2, None), (3, 1), (1, 0), (2, -1), (0, 0)])
def test_repeat_interleave_self_int(dtype: torch.dtype, repeats: int, dim: int | None) -> None:
    check(T.aten_repeat_interleave_self_int, A.repeat_interleave.self_int, make((2, 3), dtype), repeats, dim)


def test_repeat_interleave_self_int_dynamic() -> None:
    x = make((2, 3), torch.float32)
    torch.testing.assert_close(run_dynamic(T.aten_repeat_interleave_self_int, x, 2, 1), x.repeat_interleave(2, 1))


@pytest.mark.parametrize("dtype", [torch.float32, BF16, torch.int64, torch.bool])
@pytest.mark.parametrize("repeats,dim", [([1, 0, 2], 0), ([2, 1, 1, 0], 1), ([3], 1), (2, None)])
def test_repeat_interleave_self_Tensor(dtype: torch.dtype, repeats: Any, dim: int | None) -> None:
    check(T.aten_repeat_interleave_self_Tensor, A.repeat_interleave.self_Tensor, make((3, 4), dtype),
          torch.tensor(repeats), dim)  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, BF16, torch.int64, torch.bool])
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("shapes", [[(3,), (2,)], [(3,), (), (4,)], [(5,)], [(2,), (0,)]])
def test_meshgrid(dtype: torch.dtype, indexing: str, shapes: list[tuple[int, ...]]) -> None:
    tensors = [make(s, dtype, i) for i, s in enumerate(shapes)]
    check(T.aten_meshgrid_indexing, A.meshgrid.indexing, tensors, indexing=indexing)
    if indexing == "ij":
        check(T.aten_meshgrid, A.meshgrid, tensors)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
@pytest.mark.parametrize("a0,a1", [(0, 2), (-1, 0), (1, 1)])
def test_swapaxes(dtype: torch.dtype, a0: int, a1: int) -> None:
    check(T.aten_swapaxes, A.swapaxes, make((2, 3, 4), dtype), a0, a1)


@pytest.mark.parametrize("dtype", [torch.float32, BF16, torch.int32, torch.bool])
@pytest.mark.parametrize("k", [0, 1, 2, 3, -1, 6])
@pytest.mark.parametrize("dims", [[0, 1], [1, 0], [-1, 0]])
def test_rot90(dtype: torch.dtype, k: int, dims: list[int]) -> None:
    check(T.aten_rot90, A.rot90, make((2, 3, 4), dtype), k, dims)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shape", [(3, 4), (4, 2), (0, 3)])
def test_trace(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    try:
        A.trace(torch.zeros(2, 2, dtype=dtype))
    except NotImplementedError:
        pytest.skip(f"the installed torch's CPU trace has no {dtype} kernel (torch 2.10 has none for half types)")
    check(T.aten_trace, A.trace, make(shape, dtype))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,diagonal", [((4,), 0), ((3,), 2), ((3,), -1), ((3, 4), 1), ((3, 4), -2), ((0,), 1)])
def test_diag(dtype: torch.dtype, shape: tuple[int, ...], diagonal: int) -> None:
    check(T.aten_diag, A.diag, make(shape, dtype), diagonal)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,offset,dim1,dim2", [((2, 3), 0, -2, -1), ((2, 3), 1, 0, 2), ((2, 3), -2, 2, 0),
                                                    ((4,), 0, 0, 1), ((2, 2, 3), 1, 1, 3)])  # fmt: skip
def test_diag_embed(dtype: torch.dtype, shape: tuple[int, ...], offset: int, dim1: int, dim2: int) -> None:
    check(T.aten_diag_embed, A.diag_embed, make(shape, dtype), offset, dim1, dim2)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("a,b,dim", [((4, 3), (4, 3), -1), ((3, 5), (3, 5), 0), ((2, 3, 2), (1, 3, 1), 1)])
def test_linalg_cross(dtype: torch.dtype, a: tuple[int, ...], b: tuple[int, ...], dim: int) -> None:
    check(T.aten_linalg_cross, A.linalg_cross, make(a, dtype), make(b, dtype, 1), dim=dim)


@pytest.mark.parametrize("dim", [None, 1])
def test_cross(dim: int | None) -> None:
    check(T.aten_cross, A.cross, make((2, 3, 3), torch.float32), make((2, 3, 3), torch.float32, 1), dim)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("equation,shapes", [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
                                             ("i,j", [(3,), (2,)]), ("ij->", [(2, 3)]), ("ii->i", [(3, 3)]),
                                             ("...ij->...ji", [(2, 3, 4)]), ("i j , j", [(2, 3), (3,)]),
                                             ("...ik,...j->ij", [(1, 2, 3), (3,)]), ("b...,...->b...", [(2, 3), (3,)])])  # fmt: skip
def test_einsum(dtype: torch.dtype, equation: str, shapes: list[tuple[int, ...]]) -> None:
    tensors = [make(s, dtype, i) for i, s in enumerate(shapes)]
    tol = {"rtol": 1e-2, "atol": 1e-2} if dtype in (torch.float16, BF16) else {}
    expected = torch.einsum(equation, tensors)
    if dtype == BF16:
        check_traced_bfloat16(T.aten_einsum, (equation, tensors), expected=expected, **tol)
    else:
        check_function(T.aten_einsum, (equation, tensors), expected=expected, **tol)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("a,b", [((2, 3), (2, 2)), ((3,), (2, 2)), ((2, 1, 2), (3,)), ((), (2,))])
def test_kron(dtype: torch.dtype, a: tuple[int, ...], b: tuple[int, ...]) -> None:
    check(T.aten_kron, A.kron, make(a, dtype), make(b, dtype, 1))


@pytest.mark.parametrize("row,col,offset", [(3, 4, 0), (4, 3, 1), (3, 3, -1), (0, 3, 0), (3, 5, 10)])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_tri_indices(row: int, col: int, offset: int, dtype: torch.dtype) -> None:
    check(T.aten_tril_indices, A.tril_indices, row, col, offset, dtype=dtype)
    check(T.aten_triu_indices, A.triu_indices, row, col, offset, dtype=dtype)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dim,index", [((3, 4), 1, [0, -1]), ((3, 4), 0, [1, 1]), ((3, 4), -1, []),
                                             ((5,), 0, [2]), ((), 0, [0])])  # fmt: skip
def test_index_fill(dtype: torch.dtype, shape: tuple[int, ...], dim: int, index: list[int]) -> None:
    x, idx = make(shape, dtype), torch.tensor(index, dtype=torch.int64)
    value = True if dtype == torch.bool else 2
    check(T.aten_index_fill_int_Scalar, A.index_fill.int_Scalar, x, dim, idx, value)
    check(T.aten_index_fill_int_Tensor, A.index_fill.int_Tensor, x, dim, idx, torch.tensor(value, dtype=dtype))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,mask_shape", [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((0, 2), (0, 2))])
def test_masked_scatter(dtype: torch.dtype, shape: tuple[int, ...], mask_shape: tuple[int, ...]) -> None:
    mask = make(mask_shape, torch.bool, 1)
    check(T.aten_masked_scatter, A.masked_scatter, make(shape, dtype), mask, make((13,), dtype, 2))


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("out_int32", [False, True])
def test_bucketize(dtype: torch.dtype, right: bool, out_int32: bool) -> None:
    boundaries = torch.tensor([-2, -1, 0, 1, 2]).to(dtype)
    for x in (make((3, 4), dtype), torch.tensor(1).to(dtype), torch.arange(-3, 4).to(dtype)):
        check(T.aten_bucketize_Tensor, A.bucketize.Tensor, x, boundaries, out_int32=out_int32, right=right)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("kwargs", [{}, {"right": True}, {"side": "right"}, {"out_int32": True}, {"sorter": True}])
def test_searchsorted(dtype: torch.dtype, kwargs: dict[str, Any]) -> None:
    values = make((2, 5), dtype)
    for seq in (torch.tensor([-2, -1, 0, 0, 2]).to(dtype), torch.sort(make((2, 4), dtype, 1)).values):
        kw = dict(kwargs)
        if kw.get("sorter"):
            seq = seq.flip(-1)
            kw["sorter"] = torch.argsort(seq, dim=-1, stable=True)
        check(T.aten_searchsorted_Tensor, A.searchsorted.Tensor, seq, values, **kw)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("size,stride,offset", [([2, 2], [1, 2], 0), ([2, 3], [3, 1], 1), ([3], [0], 2),
                                                ([2, 1, 2], [4, 7, 1], None), ([], [], 5)])  # fmt: skip
def test_as_strided(dtype: torch.dtype, size: list[int], stride: list[int], offset: int | None) -> None:
    check(T.aten_as_strided, A.as_strided, make((3, 4), dtype), size, stride, offset)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,kernel,dilation,padding,stride", [
    ((2, 3, 5, 6), [2, 3], [1, 2], [1, 0], [2, 1]), ((3, 4, 4), [2, 2], [1, 1], [0, 0], [1, 1]),
    ((1, 2, 5, 5), [3, 3], [2, 2], [2, 2], [2, 3]), ((0, 1, 4, 4), [2, 2], [1, 1], [1, 1], [1, 1]),
])  # fmt: skip
def test_im2col(dtype: torch.dtype, shape: Any, kernel: Any, dilation: Any, padding: Any, stride: Any) -> None:
    check(T.aten_im2col, A.im2col, make(shape, dtype), kernel, dilation, padding, stride)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,out,kernel,dilation,padding,stride", [
    ((2, 12, 12), [4, 5], [2, 2], [1, 1], [0, 0], [1, 1]), ((8, 6), [3, 4], [2, 2], [1, 1], [1, 1], [2, 2]),
    ((1, 6, 9), [5, 5], [1, 3], [2, 1], [0, 1], [2, 2]), ((0, 4, 4), [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]),
])  # fmt: skip
def test_col2im(dtype: torch.dtype, shape: Any, out: Any, kernel: Any, dilation: Any, padding: Any, stride: Any) -> None:
    check(T.aten_col2im, A.col2im, make(shape, dtype), out, kernel, dilation, padding, stride)


def test_index_fill_float64_keeps_full_precision():
    # regression (issue 13): the Python float became a float32 constant before reaching float64
    from torchlib.ops import tensor_extra
    x, index = torch.zeros(2, 3, dtype=torch.float64), torch.tensor([0, 2])
    expected = torch.ops.aten.index_fill.int_Scalar(x, 1, index, 0.1)
    check_function(tensor_extra.aten_index_fill_int_Scalar, (x, 1, index, 0.1), expected=expected, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("right", [False, True])
def test_bucketize_nan_goes_past_every_boundary(dtype: torch.dtype, right: bool) -> None:
    nan, inf = float("nan"), float("inf")
    boundaries = torch.tensor([-inf, -1.0, 0.0, 2.0, inf], dtype=dtype)
    x = torch.tensor([nan, inf, -inf, 0.0, 1.0, 2.5], dtype=dtype)
    check_function(T.aten_bucketize_Tensor, (x, boundaries), {"right": right}, expected=torch.bucketize(x, boundaries, right=right))
    check_function(T.aten_bucketize_Tensor, (x[0], boundaries), {"right": right}, expected=torch.bucketize(x[0], boundaries, right=right))
    check_function(T.aten_searchsorted_Tensor, (boundaries, x), {"right": right}, expected=torch.searchsorted(boundaries, x, right=right))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
@pytest.mark.parametrize("n,r", [(4, 2), (4, 3), (3, 0), (3, 1), (2, 3), (0, 2), (1, 2), (5, 5)])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations(dtype: torch.dtype, n: int, r: int, with_replacement: bool) -> None:
    x = torch.tensor([1, 0, 3, 4, 0][:n]).to(dtype)
    check_function(T.aten_combinations, (x, r, with_replacement), expected=torch.combinations(x, r, with_replacement))
