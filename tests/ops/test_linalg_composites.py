"""Norms, condition numbers, ranks, lu_factor, tensorinv and tensorsolve
(torchlib/ops/linalg/composites.py): eager and traced against torch in float32 and float64,
every order, dims, keepdim, dtype=, empty matrices, and the errors torch raises too."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from graph_builder import op
from torchlib.ops.linalg import composites as C
from torchlib.testing import check_function, run_dynamic

DTYPES = [torch.float32, torch.float64]
INF = math.inf


def _x(shape, dtype, seed=0):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def _tol(dtype):
    return (1e-4, 1e-5) if dtype == torch.float32 else (1e-10, 1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", [1.0, -1.0, 2.0, -2.0, INF, -INF])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False), ((1, 0), True)])
def test_matrix_norm(ord, dim, keepdim, dtype):
    a = _x((3, 4, 5), dtype)
    rtol, atol = _tol(dtype)
    check_function(C.aten_linalg_matrix_norm, (a, ord, dim, keepdim), expected=torch.linalg.matrix_norm(a, ord, dim, keepdim), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ord", ["fro", "nuc"])
def test_matrix_norm_str_ord(ord, dtype):
    a = _x((2, 4, 3), dtype)
    rtol, atol = _tol(dtype)
    for dim, keepdim in (((-2, -1), False), ((2, 0), True)):
        check_function(C.aten_linalg_matrix_norm_str_ord, (a, ord, dim, keepdim), expected=torch.linalg.matrix_norm(a, ord, dim, keepdim), rtol=rtol, atol=atol)


def test_matrix_norm_dtype_and_empty():
    a = _x((3, 4), torch.float32)
    check_function(C.aten_linalg_matrix_norm, (a, 2.0), {"dtype": torch.float64}, expected=torch.linalg.matrix_norm(a, 2, dtype=torch.float64))
    check_function(C.aten_linalg_matrix_norm, (a, 1.0), {"dtype": torch.float64}, expected=torch.linalg.matrix_norm(a, 1, dtype=torch.float64))
    for shape, ord in (((2, 0, 3), 2.0), ((0, 3), INF), ((4, 0), -INF), ((0, 5), -1.0), ((0, 0), "nuc")):
        e = torch.zeros(shape)
        fn = C.aten_linalg_matrix_norm_str_ord if isinstance(ord, str) else C.aten_linalg_matrix_norm
        for keepdim in (False, True):
            check_function(fn, (e, ord, (-2, -1), keepdim), expected=torch.linalg.matrix_norm(e, ord, keepdim=keepdim))
    with pytest.raises(ValueError, match="minimum of nothing"):
        C.aten_linalg_matrix_norm(torch.zeros(0, 3), -2.0)
    with pytest.raises(ValueError, match="not supported"):
        C.aten_linalg_matrix_norm(a, 3.0)
    with pytest.raises(TypeError, match="cannot hold"):
        C.aten_linalg_matrix_norm(a.double(), 1.0, dtype=torch.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_routes_like_torch(dtype):
    rtol, atol = _tol(dtype)
    v, m, t = _x((6,), dtype), _x((4, 3), dtype), _x((2, 3, 4), dtype)
    cases = [(v, None, None), (v, 3.0, None), (m, None, None), (m, 2.0, None), (m, -INF, None), (t, None, None),
             (t, 0.5, (1,)), (t, -1.0, (2, 0)), (t, None, (0, 1))]
    for x, ord, dim in cases:
        for keepdim in (False, True):
            check_function(C.aten_linalg_norm, (x, ord, dim, keepdim), expected=torch.linalg.norm(x, ord, dim, keepdim), rtol=rtol, atol=atol)
    for x, ord, dim in ((m, "fro", None), (m, "nuc", None), (t, "nuc", (2, 1))):
        check_function(C.aten_linalg_norm_ord_str, (x, ord, dim), expected=torch.linalg.norm(x, ord, dim), rtol=rtol, atol=atol)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        C.aten_linalg_norm(t, 2.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [None, 1.0, -1.0, 2.0, -2.0, INF, -INF])
def test_cond(p, dtype):
    a = _x((3, 4, 4), dtype)
    rtol, atol = (1e-4, 1e-4) if dtype == torch.float32 else (1e-9, 1e-9)
    check_function(C.aten_linalg_cond, (a, p), expected=torch.linalg.cond(a, p), rtol=rtol, atol=atol)
    if p is not None and abs(p) != 2:  # a singular matrix: an infinite condition number
        check_function(C.aten_linalg_cond, (torch.ones(3, 3, dtype=dtype), p), expected=torch.linalg.cond(torch.ones(3, 3, dtype=dtype), p))
    wide = _x((2, 3, 5), dtype)
    if p is None or abs(p) == 2:
        check_function(C.aten_linalg_cond, (wide, p), expected=torch.linalg.cond(wide, p), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_str_and_empty(dtype):
    a = _x((2, 3, 3), dtype)
    for p in ("fro", "nuc"):
        check_function(C.aten_linalg_cond_p_str, (a, p), expected=torch.linalg.cond(a, p), rtol=1e-4, atol=1e-4)
    for e in (torch.zeros(2, 0, 0, dtype=dtype), torch.zeros(0, 3, 3, dtype=dtype)):
        for p in (None, 1.0, -2.0):
            check_function(C.aten_linalg_cond, (e, p), expected=torch.linalg.cond(e, p))
        check_function(C.aten_linalg_cond_p_str, (e, "fro"), expected=torch.linalg.cond(e, "fro"))
    with pytest.raises(ValueError, match="invalid norm type"):
        C.aten_linalg_cond(a, 3.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_matrix_rank(hermitian, dtype):
    g = torch.Generator().manual_seed(0)
    low = torch.randn(3, 5, 2, dtype=dtype, generator=g) @ torch.randn(3, 2, 5, dtype=dtype, generator=g)
    a = low @ low.mT if hermitian else low
    check_function(C.aten_linalg_matrix_rank_atol_rtol_float, (a,), {"hermitian": hermitian}, expected=torch.linalg.matrix_rank(a, hermitian=hermitian))
    for atol, rtol in ((0.5, None), (None, 0.3), (0.0, 1e-2), (2.0, 0.1)):
        kwargs = {"atol": atol, "rtol": rtol, "hermitian": hermitian}
        check_function(C.aten_linalg_matrix_rank_atol_rtol_float, (a,), kwargs, expected=torch.linalg.matrix_rank(a, **kwargs))
        tensors = {k: None if v is None else torch.tensor(v, dtype=dtype) for k, v in kwargs.items() if k != "hermitian"}
        check_function(C.aten_linalg_matrix_rank_atol_rtol_tensor, (a,), {**tensors, "hermitian": hermitian},
                       expected=torch.linalg.matrix_rank(a, **tensors, hermitian=hermitian))
    tol = torch.tensor([1e-3, 1.0, 100.0], dtype=dtype)
    check_function(C.aten_linalg_matrix_rank_tol_tensor, (a, tol, hermitian), expected=torch.ops.aten.linalg_matrix_rank.tol_tensor(a, tol, hermitian))
    check_function(C.aten_linalg_matrix_rank, (a, 0.5, hermitian), expected=torch.ops.aten.linalg_matrix_rank(a, 0.5, hermitian))
    e = torch.zeros(2, 0, 3, dtype=dtype)
    check_function(C.aten_linalg_matrix_rank_atol_rtol_float, (e,), expected=torch.linalg.matrix_rank(e))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_factor_tensorinv_tensorsolve(dtype):
    rtol, atol = _tol(dtype)
    a = _x((2, 4, 4), dtype)
    check_function(C.aten_linalg_lu_factor, (a,), expected=torch.linalg.lu_factor(a), rtol=rtol, atol=atol)
    t = _x((4, 6, 8, 3), dtype)
    check_function(C.aten_linalg_tensorinv, (t, 2), expected=torch.linalg.tensorinv(t, 2), rtol=rtol, atol=atol)
    t1 = _x((6, 2, 3), dtype)
    check_function(C.aten_linalg_tensorinv, (t1, 1), expected=torch.linalg.tensorinv(t1, 1), rtol=rtol, atol=atol)
    s, b = _x((2, 3, 6), dtype), _x((2, 3), dtype)
    check_function(C.aten_linalg_tensorsolve, (s, b), expected=torch.linalg.tensorsolve(s, b), rtol=rtol, atol=atol)
    s2 = _x((6, 2, 3), dtype)
    check_function(C.aten_linalg_tensorsolve, (s2, b, [0]), expected=torch.linalg.tensorsolve(s2, b, dims=[0]), rtol=rtol, atol=atol)
    with pytest.raises(ValueError, match="prod"):
        C.aten_linalg_tensorinv(_x((2, 3, 4), dtype), 1)
    with pytest.raises(ValueError, match="strictly positive"):
        C.aten_linalg_tensorinv(t, 0)


@pytest.mark.parametrize("dtype", DTYPES + [torch.int32, torch.int64])
def test_vander(dtype):
    x = torch.tensor([[1, -2, 3], [0, 4, 5]], dtype=dtype)
    for n in (None, 2, 5):
        check_function(C.aten_linalg_vander, (x,), {"N": n}, expected=torch.linalg.vander(x, N=n))
    check_function(C.aten_linalg_vander, (torch.tensor(3, dtype=dtype),), {"N": 3}, expected=torch.linalg.vander(torch.tensor(3, dtype=dtype), N=3))
    with pytest.raises(ValueError, match="greater than 1"):
        C.aten_linalg_vander(x, N=1)


def test_tensordot_broadcasts_a_size_one_dim_against_a_symbolic_one():
    """A contracted static 1 against the other side's symbolic size: the expand takes that size
    from the graph (it once went to int() as the dim's name)."""
    b = torch.arange(20.0).reshape(4, 5)
    ones = np.ones((3, 1), np.float32)
    left = run_dynamic(lambda t: C.aten_tensordot(op.Constant(value=ones), t, [1], [0]), b)
    torch.testing.assert_close(left, torch.tensordot(torch.ones(3, 1), b, dims=([1], [0])))
    right = run_dynamic(lambda t: C.aten_tensordot(t, op.Constant(value=ones.T.copy()), [0], [0]), b.T.contiguous())
    torch.testing.assert_close(right, torch.tensordot(b.T, torch.ones(1, 3), dims=([0], [0])))

