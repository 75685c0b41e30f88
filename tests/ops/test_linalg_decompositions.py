"""torchlib/ops/linalg/{lu,cholesky,ldl,qr,spectral,matrix_functions}.py against torch, eagerly and
traced, with static and dynamic batch dimensions; and an exported model in onnxruntime."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from graph_builder import types
from graph_builder.builder import GraphBuilder
from graph_builder.ir import Value
from graph_builder.opset import as_array
from torchlib.ops.linalg import cholesky as C
from torchlib.ops.linalg import ldl as LDL
from torchlib.ops.linalg import lstsq as LS
from torchlib.ops.linalg import lu as L
from torchlib.ops.linalg import matrix_functions as M
from torchlib.ops.linalg import qr as Q
from torchlib.ops.linalg import spectral as S
from torchlib.testing import check_function, run_dynamic, run_model
from torchlib.torch_version import torch_has_op

A = torch.ops.aten
F32, F64 = torch.float32, torch.float64
TOL = {F32: {"rtol": 1e-4, "atol": 2e-5}, F64: {}}


def rand(*shape: int, dtype: torch.dtype = F64, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64).to(dtype)


def spd(*shape: int, dtype: torch.dtype = F64, seed: int = 0) -> torch.Tensor:
    x = rand(*shape, dtype=F64, seed=seed)
    return (x @ x.mT + shape[-1] * torch.eye(shape[-1], dtype=F64)).to(dtype)


def check(fn: Any, aten: Any, *args: Any, **kwargs: Any) -> None:
    dtype = next(a.dtype for a in args if isinstance(a, torch.Tensor) and a.dtype.is_floating_point)
    check_function(fn, args, kwargs, expected=aten(*args, **kwargs), **TOL[dtype])


def run_batch_dynamic(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """fn traced with the first dimension of every tensor argument symbolic ("batch")."""
    g = GraphBuilder()
    feeds: dict[str, Any] = {}
    inputs = []
    for i, a in enumerate(args):
        if not isinstance(a, torch.Tensor):
            inputs.append(a)
            continue
        v = g.input(f"x{i}", types.from_torch(a.dtype), ["batch", *a.shape[1:]])
        feeds[v.name] = as_array(a)
        inputs.append(v)
    with g:
        result = fn(*inputs, **kwargs)
    outputs = result if isinstance(result, tuple) else (result,)
    names = tuple(g.output(v, f"y{i}").name for i, v in enumerate(outputs) if isinstance(v, Value))
    return run_model(g.to_model(), feeds, names)


# -- LU ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 5), (3, 5), (5, 3), (1, 1), (0, 3, 3), (2, 0, 0)], ids=str)
def test_lu_factor_det_slogdet(dtype, shape):
    a = rand(*shape, dtype=dtype)
    check(L.aten_linalg_lu_factor_ex, A.linalg_lu_factor_ex.default, a)
    check(L.aten_linalg_lu, A.linalg_lu.default, a)
    if shape[-1] == shape[-2]:
        check(L.aten__linalg_det, A._linalg_det.default, a)
        check(L.aten__linalg_slogdet, A._linalg_slogdet.default, a)
        check(L.aten_linalg_inv_ex, A.linalg_inv_ex.default, a)


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_solve_and_lu_solve(dtype):
    a, b = rand(2, 4, 4, dtype=dtype), rand(2, 4, 3, dtype=dtype, seed=1)
    check(L.aten__linalg_solve_ex, A._linalg_solve_ex.default, a, b)
    check(L.aten__linalg_solve_ex, A._linalg_solve_ex.default, a, b[..., 0])  # a batch of vectors
    check(L.aten__linalg_solve_ex, A._linalg_solve_ex.default, a, b[0, :, 0])  # one vector, broadcast
    check(L.aten__linalg_solve_ex, A._linalg_solve_ex.default, a, b.mT, left=False)
    check(L.aten__linalg_solve_ex, A._linalg_solve_ex.default, a[0], b)  # A broadcast over B's batch
    check(L.aten_linalg_solve_ex, A.linalg_solve_ex.default, a, b)
    lu, piv = torch.linalg.lu_factor(a)
    for left in [True, False]:
        for adjoint in [True, False]:
            rhs = b if left else b.mT
            check(L.aten_linalg_lu_solve, A.linalg_lu_solve.default, lu, piv, rhs, left=left, adjoint=adjoint)
    check(L.aten_lu_unpack, A.lu_unpack.default, lu, piv)
    check(L.aten_lu_unpack, A.lu_unpack.default, lu, piv, False, True)
    check(L.aten_lu_unpack, A.lu_unpack.default, lu, piv, True, False)


def test_singular_matrices_give_info_and_inf_like_torch():
    a = rand(3, 4, 4)
    a[1, :, 2] = 0  # singular: a zero column
    a[2] = 0
    check(L.aten_linalg_lu_factor_ex, A.linalg_lu_factor_ex.default, a)
    check(L.aten__linalg_det, A._linalg_det.default, a)
    check(L.aten__linalg_slogdet, A._linalg_slogdet.default, a)  # sign 0, logabsdet -inf
    # the first zero pivot of A's LU (torch 2.11 on) or of Aᵀ's (2.10: lu._solve_factors_transpose)
    assert L.aten_linalg_inv_ex(a)[1].tolist() == A.linalg_inv_ex.default(a)[1].tolist() in ([0, 3, 1], [0, 4, 1])
    check(L.aten_linalg_inv_ex, A.linalg_inv_ex.default, a[:1])


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_triangular_solves(dtype):
    a, b = rand(2, 5, 5, dtype=dtype), rand(2, 5, 3, dtype=dtype, seed=1)
    a = a + 5 * torch.eye(5, dtype=dtype)  # well conditioned triangles
    for upper in [True, False]:
        for unit in [True, False]:
            check(L.aten_linalg_solve_triangular, A.linalg_solve_triangular.default, a, b, upper=upper, unitriangular=unit)
            check(L.aten_linalg_solve_triangular, A.linalg_solve_triangular.default, a, b.mT, upper=upper, left=False, unitriangular=unit)
        for transpose in [True, False]:
            check(L.aten_triangular_solve, A.triangular_solve.default, b, a, upper, transpose)
    check(L.aten_triangular_solve, A.triangular_solve.default, b, a[0])  # coefficient broadcast


# -- Cholesky ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("upper", [False, True], ids=str)
def test_cholesky_family(dtype, upper):
    a, b = spd(2, 5, 5, dtype=dtype), rand(2, 5, 2, dtype=dtype, seed=1)
    check(C.aten_linalg_cholesky_ex, A.linalg_cholesky_ex.default, a, upper=upper)
    if torch_has_op("aten::cholesky"):  # removed in torch 2.14
        check(C.aten_cholesky, A.cholesky.default, a, upper)
    factor = torch.linalg.cholesky(a, upper=upper)
    check(C.aten_cholesky_solve, A.cholesky_solve.default, b, factor, upper)
    check(C.aten_cholesky_inverse, A.cholesky_inverse.default, factor, upper)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_sets_info():
    a = spd(3, 4, 4)
    a[1, 2, 2] = -10
    a[2, 0, 0] = float("nan")
    assert C.aten_linalg_cholesky_ex(a)[1].tolist() == A.linalg_cholesky_ex.default(a)[1].tolist() == [0, 3, 1]
    check(C.aten_linalg_cholesky_ex, A.linalg_cholesky_ex.default, spd(0, 3, 3))


# -- QR ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("shape", [(2, 5, 3), (3, 5), (4, 4), (1, 3)], ids=str)
def test_qr_matches_torch_signs_included(dtype, shape):
    a = rand(*shape, dtype=dtype)
    check(Q.aten_geqrf, A.geqrf.default, a)
    for mode in ["reduced", "complete", "r"]:
        check(Q.aten_linalg_qr, A.linalg_qr.default, a, mode)
    g, tau = torch.geqrf(a)
    if shape[-2] >= shape[-1]:
        check(Q.aten_linalg_householder_product, A.linalg_householder_product.default, g, tau)
    m = shape[-2]
    for left in [True, False]:
        for transpose in [True, False]:
            c = rand(*shape[:-2], m, 2, dtype=dtype, seed=2)
            check(Q.aten_ormqr, A.ormqr.default, g, tau, c if left else c.mT, left, transpose)


def test_qr_of_a_matrix_with_zero_columns():
    a = torch.zeros(4, 3, dtype=F64)
    a[:, 1] = 1.0
    check(Q.aten_geqrf, A.geqrf.default, a)
    check(Q.aten_linalg_qr, A.linalg_qr.default, a)


# -- eigh and SVD: compared through invariants (signs of vectors are LAPACK's choice) ----------
def _close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> None:
    torch.testing.assert_close(torch.as_tensor(actual), expected, **(TOL[dtype] or {"rtol": 1e-10, "atol": 1e-12}))


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("n", [1, 2, 5, 8], ids=str)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, n, uplo):
    a = rand(2, n, n, dtype=dtype)
    w, v = A._linalg_eigh.default(a, uplo)
    for run in (S.aten__linalg_eigh, lambda *x: run_batch_dynamic(S.aten__linalg_eigh, *x)):
        w2, v2 = run(a, uplo)
        _close(w2, w, dtype)
        _close((v2 * w2.unsqueeze(-2)) @ v2.mT, (v * w.unsqueeze(-2)) @ v.mT, dtype)
        _close(v2.mT @ v2, torch.eye(n, dtype=dtype).expand(2, n, n), dtype)
    w3, v3 = S.aten__linalg_eigh(a, uplo, False)
    _close(w3, w, dtype)
    assert v3.shape == (0,)


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("shape", [(2, 4, 4), (2, 6, 3), (3, 6), (1, 1), (5, 1)], ids=str)
@pytest.mark.parametrize("full", [False, True], ids=["reduced", "full"])
def test_svd(dtype, shape, full):
    a = rand(*shape, dtype=dtype)
    u, s, vh = A._linalg_svd.default(a, full)
    u2, s2, vh2 = S.aten__linalg_svd(a, full)
    assert u2.shape == u.shape and vh2.shape == vh.shape and u2.dtype == dtype
    k = s.shape[-1]
    _close(s2, s, dtype)
    _close((u2[..., :k] * s2.unsqueeze(-2)) @ vh2[..., :k, :], a, dtype)
    _close(u2.mT @ u2, torch.eye(u.shape[-1], dtype=dtype).expand(u.mT.shape[:-1] + (u.shape[-1],)), dtype)
    _close(vh2 @ vh2.mT, torch.eye(vh.shape[-2], dtype=dtype).expand(vh.shape[:-1] + (vh.shape[-2],)), dtype)
    assert S.aten__linalg_svd(a, full, False)[0].shape == (0,)


def test_svd_of_rank_deficient_matrices_completes_u():
    a = rand(6, 2) @ rand(2, 4, seed=1)  # rank 2
    u2, s2, vh2 = S.aten__linalg_svd(a, True)
    _close(s2, torch.linalg.svdvals(a), F64)
    _close(u2.mT @ u2, torch.eye(6, dtype=F64), F64)
    _close((u2[:, :4] * s2) @ vh2, a, F64)


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_pinv(dtype):
    for a in [rand(2, 5, 3, dtype=dtype), rand(3, 5, dtype=dtype), (rand(5, 2) @ rand(2, 5, seed=1)).to(dtype)]:
        check(S.aten_linalg_pinv_atol_rtol_tensor, A.linalg_pinv.atol_rtol_tensor, a)
        check(S.aten_linalg_pinv_atol_rtol_float, A.linalg_pinv.atol_rtol_float, a, rtol=0.3)
        check(S.aten_linalg_pinv_atol_rtol_tensor, A.linalg_pinv.atol_rtol_tensor, a, atol=torch.tensor(0.5, dtype=dtype))
    sym = spd(4, 4, dtype=dtype)
    check(S.aten_linalg_pinv_atol_rtol_tensor, A.linalg_pinv.atol_rtol_tensor, sym, hermitian=True)


# -- matrix_exp -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("scale", [0.0, 0.3, 3.0, 20.0], ids=str)
def test_matrix_exp(dtype, scale):
    a = rand(3, 4, 4, dtype=dtype) * scale
    expected = A.linalg_matrix_exp.default(a)
    rtol = 1e-5 if dtype == F32 else 1e-12
    for got in (M.aten_linalg_matrix_exp(a), run_batch_dynamic(M.aten_linalg_matrix_exp, a)[0]):
        torch.testing.assert_close(got, expected, rtol=rtol, atol=rtol * float(expected.abs().max()))


def test_matrix_exp_edges():
    check(M.aten_linalg_matrix_exp, A.linalg_matrix_exp.default, rand(0, 3, 3))
    check(M.aten_linalg_matrix_exp, A.linalg_matrix_exp.default, rand(2, 0, 0))
    nan = torch.full((1, 2, 2), float("nan"), dtype=F64)
    assert M.aten_linalg_matrix_exp(nan).isnan().all()


# -- dynamic batch dimensions, errors ---------------------------------------------------------
def test_dynamic_batch():
    a, b = spd(3, 4, 4), rand(3, 4, 2, seed=1)
    torch.testing.assert_close(run_batch_dynamic(L.aten__linalg_solve_ex, a, b)[0], torch.linalg.solve(a, b))
    torch.testing.assert_close(run_batch_dynamic(L.aten_linalg_inv_ex, a)[0], torch.linalg.inv(a))
    torch.testing.assert_close(run_batch_dynamic(L.aten__linalg_det, a)[0], torch.linalg.det(a))
    torch.testing.assert_close(run_batch_dynamic(C.aten_linalg_cholesky_ex, a)[0], torch.linalg.cholesky(a))
    torch.testing.assert_close(run_batch_dynamic(Q.aten_linalg_qr, a), torch.linalg.qr(a))
    torch.testing.assert_close(run_batch_dynamic(S.aten__linalg_svd, a, False, False)[1], torch.linalg.svdvals(a))


def test_errors_name_the_op_and_the_reason():
    with pytest.raises(TypeError, match="linalg.inv: A must be float32 or float64"):
        L.aten_linalg_inv_ex(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="linalg.det: A must be a batch of square matrices"):
        L.aten__linalg_det(rand(2, 3))
    with pytest.raises(ValueError, match="must be static"):
        run_dynamic(L.aten_linalg_inv_ex, rand(2, 2))  # every dimension symbolic
    with pytest.raises(ValueError, match="LU without pivoting"):
        L.aten_linalg_lu_factor_ex(rand(3, 3), pivot=False)


# -- an exported model ------------------------------------------------------------------------
class _Solver(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        m = a @ a.mT + 4 * torch.eye(a.shape[-1])
        return torch.linalg.solve(m, b), torch.linalg.inv(m), torch.linalg.cholesky(m), torch.linalg.svdvals(a), torch.linalg.det(m)


def test_export_with_a_dynamic_batch_runs_in_onnxruntime():
    import torchlib

    a, b = rand(3, 4, 4, dtype=F32), rand(3, 4, 2, dtype=F32, seed=1)
    batch = torch.export.Dim("batch")
    result = torchlib.export(_Solver(), (a, b), dynamic_shapes=({0: batch}, {0: batch}))
    assert [i.name for i in result.model_proto.graph.input] == ["a", "b"]  # no effect token
    a5, b5 = rand(5, 4, 4, dtype=F32, seed=2), rand(5, 4, 2, dtype=F32, seed=3)
    for got, expected in zip(result(a5, b5), _Solver()(a5, b5)):
        torch.testing.assert_close(torch.as_tensor(got), expected, rtol=1e-4, atol=1e-4)


# -- accuracy at the sizes models use (slow) --------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_accuracy_64x64(dtype):
    a = rand(2, 64, 64, dtype=dtype)
    sym = (a + a.mT) / 2
    eps = torch.finfo(dtype).eps
    scale = 64 * eps
    w, v = run_batch_dynamic(S.aten__linalg_eigh, sym)
    assert (w - torch.linalg.eigvalsh(sym)).abs().max() <= scale * 10 * sym.abs().max()
    assert ((sym @ v - v * w.unsqueeze(-2)).abs().max()) <= scale * 10 * sym.abs().max()
    u, s, vh = run_batch_dynamic(S.aten__linalg_svd, a, False, True)
    assert (s - torch.linalg.svdvals(a)).abs().max() <= scale * 10 * s.max()
    assert ((u * s.unsqueeze(-2)) @ vh - a).abs().max() <= scale * 10 * s.max()
    x = run_batch_dynamic(L.aten_linalg_inv_ex, a)[0]
    assert (x @ a - torch.eye(64, dtype=dtype)).abs().max() <= scale * 1e3 * torch.linalg.cond(a).max()
    torch.testing.assert_close(run_batch_dynamic(Q.aten_linalg_qr, a), torch.linalg.qr(a), **TOL[dtype])


@pytest.mark.parametrize("driver", [None, "gelsy", "gelsd", "gelss", "gels"])
@pytest.mark.parametrize("m,n,batch", [(5, 3, (2,)), (3, 5, ()), (4, 4, (3,)), (1, 1, ())])
def test_linalg_lstsq(driver: str | None, m: int, n: int, batch: tuple[int, ...]) -> None:
    g = torch.Generator().manual_seed(0)
    A, B = torch.randn(*batch, m, n, generator=g, dtype=torch.float64), torch.randn(*batch, m, 2, generator=g, dtype=torch.float64)
    check_function(LS.aten_linalg_lstsq, (A, B), {"driver": driver}, expected=tuple(torch.ops.aten.linalg_lstsq(A, B, driver=driver)))


def test_linalg_lstsq_rank_deficient_and_vector() -> None:
    """gelsd on a rank-2 5x3 matrix: the minimum-norm solution and rank 2 (residuals: see lstsq.py);
    a vector right-hand side."""
    g = torch.Generator().manual_seed(1)
    A = torch.randn(5, 2, generator=g, dtype=torch.float64) @ torch.randn(2, 3, generator=g, dtype=torch.float64)
    B = torch.randn(5, 2, generator=g, dtype=torch.float64)
    solution, _, rank, s = LS.aten_linalg_lstsq(A, B, driver="gelsd")
    expected = torch.ops.aten.linalg_lstsq(A, B, driver="gelsd")
    torch.testing.assert_close((solution, rank, s), (expected[0], expected[2], expected[3]))
    b = torch.randn(5, generator=g, dtype=torch.float64)
    check_function(LS.aten_linalg_lstsq, (A[:, :2], b), {"driver": "gelsd"}, expected=tuple(torch.ops.aten.linalg_lstsq(A[:, :2], b, driver="gelsd")))


# -- LDLᵀ (Bunch-Kaufman) ---------------------------------------------------------------------
def _sym_zero_diagonal(*shape: int, seed: int = 0) -> torch.Tensor:
    """Symmetric with a zero diagonal: every first step takes a 2x2 pivot block."""
    a = rand(*shape, seed=seed)
    return (a + a.mT) * (1 - torch.eye(shape[-1], dtype=F64))


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 5), (3, 2, 6, 6), (1, 1), (0, 3, 3), (2, 0, 0), (0, 0)], ids=str)
@pytest.mark.parametrize("hermitian", [False, True], ids=["symmetric", "hermitian"])
def test_ldl_factor_matches_torch_pivots_included(dtype, shape, hermitian):
    a = rand(*shape, dtype=dtype)  # not symmetric: only the lower triangle is read
    check(LDL.aten_linalg_ldl_factor_ex, A.linalg_ldl_factor_ex.default, a, hermitian=hermitian)
    check(LDL.aten_linalg_ldl_factor, A.linalg_ldl_factor.default, a, hermitian=hermitian)


def test_ldl_factor_2x2_pivot_blocks():
    swap = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=F64)
    assert LDL.aten_linalg_ldl_factor_ex(swap)[1].tolist() == [-2, -2]
    check(LDL.aten_linalg_ldl_factor_ex, A.linalg_ldl_factor_ex.default, swap)
    # a batch whose matrices take different pivots: 2x2 blocks, 1x1 with and without interchange
    a = torch.cat([_sym_zero_diagonal(4, 5, 5), rand(4, 5, 5, seed=1), spd(2, 5, 5, seed=2)])
    pivots = A.linalg_ldl_factor_ex.default(a)[1]
    assert (pivots < 0).any() and (pivots > 0).any() and (pivots == torch.arange(1, 6, dtype=torch.int32)).all(-1).any()
    for dtype in (F32, F64):
        check(LDL.aten_linalg_ldl_factor_ex, A.linalg_ldl_factor_ex.default, a.to(dtype))
    # small integers: many ties, where the first largest entry is the pivot (as idamax)
    ties = torch.randint(-2, 3, (30, 6, 6), generator=torch.Generator().manual_seed(0)).to(F64)
    check(LDL.aten_linalg_ldl_factor_ex, A.linalg_ldl_factor_ex.default, ties)


def test_ldl_factor_of_singular_matrices_sets_info_like_torch():
    a = _sym_zero_diagonal(4, 4, 4)
    a[1, :, 2] = a[1, 2, :] = 0  # a zero row and column
    a[2] = 0
    a[3, 0, :] = a[3, :, 0] = 0
    a[3, 0, 0] = 2.0
    assert LDL.aten_linalg_ldl_factor_ex(a)[2].tolist() == A.linalg_ldl_factor_ex.default(a)[2].tolist()
    assert A.linalg_ldl_factor_ex.default(a)[2].tolist()[1:3] == [3, 1]
    check(LDL.aten_linalg_ldl_factor_ex, A.linalg_ldl_factor_ex.default, a)


def test_ldl_factor_with_nan_and_inf_like_torchs_mkl():
    """MKL's idamax takes the first NaN; its max(NaN, 0) is 0 (a NaN diagonal entry whose column
    is otherwise zero sets info); dsyr does nothing for an infinite 1x1 pivot (1/d = 0)."""
    inf, nan = float("inf"), float("nan")
    a = rand(6, 4, 4)
    a[0, 0, 0] = nan
    a[1, 2, 0] = nan
    a[2, 3, 3], a[2, 3, :3] = nan, 0.0
    a[3, 1, 0] = a[3, 1, 1] = inf
    a[4, 0, 0] = -inf
    a[5, 2, 1] = -inf
    for dtype in (F32, F64):
        check(LDL.aten_linalg_ldl_factor_ex, A.linalg_ldl_factor_ex.default, a.to(dtype))
    ld, piv, _ = torch.linalg.ldl_factor_ex(a)  # ldl_factor raises on info > 0
    check(LDL.aten_linalg_ldl_solve, A.linalg_ldl_solve.default, ld, piv, rand(6, 4, 2, seed=1))


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_ldl_solve(dtype):
    a = torch.cat([_sym_zero_diagonal(2, 5, 5), rand(2, 5, 5, seed=1)]).to(dtype)
    ld, piv = torch.linalg.ldl_factor(a)
    assert (piv < 0).any()
    b = rand(4, 5, 3, dtype=dtype, seed=2)
    check(LDL.aten_linalg_ldl_solve, A.linalg_ldl_solve.default, ld, piv, b)
    check(LDL.aten_linalg_ldl_solve, A.linalg_ldl_solve.default, ld, piv, b[0], hermitian=True)  # B broadcast
    check(LDL.aten_linalg_ldl_solve, A.linalg_ldl_solve.default, ld[0], piv[0], b)  # LD broadcast
    check(LDL.aten_linalg_ldl_solve, A.linalg_ldl_solve.default, ld[1], piv[1], b[1, :, :1])
    ld0, piv0 = torch.linalg.ldl_factor(rand(0, 3, 3, dtype=dtype))
    check(LDL.aten_linalg_ldl_solve, A.linalg_ldl_solve.default, ld0, piv0, rand(3, 2, dtype=dtype))
    ld00, piv00 = torch.linalg.ldl_factor(rand(0, 0, dtype=dtype))
    check(LDL.aten_linalg_ldl_solve, A.linalg_ldl_solve.default, ld00, piv00, rand(0, 5, dtype=dtype))
    # the solution solves the symmetric system the lower triangle defines
    sym = torch.tril(a) + torch.tril(a, -1).mT
    x = LDL.aten_linalg_ldl_solve(ld, piv, b)
    torch.testing.assert_close(sym @ x, b, **(TOL[dtype] or {"rtol": 1e-10, "atol": 1e-10}))


def test_ldl_with_a_dynamic_batch():
    a = torch.cat([_sym_zero_diagonal(2, 5, 5), rand(2, 5, 5, seed=1)])
    ld, piv, info = A.linalg_ldl_factor_ex.default(a)
    torch.testing.assert_close(run_batch_dynamic(LDL.aten_linalg_ldl_factor_ex, a), (ld, piv, info))
    b = rand(4, 5, 2, seed=3)
    torch.testing.assert_close(run_batch_dynamic(LDL.aten_linalg_ldl_solve, ld, piv, b)[0], torch.linalg.ldl_solve(ld, piv, b))


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_ldl_64x64(dtype):
    """64 is LAPACK's block size: torch's ?sytrf runs the unblocked ?sytf2 up to it (larger
    matrices go through the blocked ?lasyf: the same pivots, other rounding)."""
    a = torch.cat([rand(1, 64, 64), _sym_zero_diagonal(1, 64, 64, seed=1)]).to(dtype)
    ld, piv, info = A.linalg_ldl_factor_ex.default(a)
    for got in (LDL.aten_linalg_ldl_factor_ex(a), run_batch_dynamic(LDL.aten_linalg_ldl_factor_ex, a)):
        assert torch.equal(torch.as_tensor(got[1]), piv) and torch.equal(torch.as_tensor(got[2]), info)
        torch.testing.assert_close(torch.as_tensor(got[0]), ld, **TOL[dtype])
    b = rand(2, 64, 3, dtype=dtype, seed=2)
    torch.testing.assert_close(LDL.aten_linalg_ldl_solve(ld, piv, b), torch.linalg.ldl_solve(ld, piv, b), **TOL[dtype])


def test_ldl_errors():
    with pytest.raises(TypeError, match="linalg.ldl_factor_ex: self must be float32 or float64"):
        LDL.aten_linalg_ldl_factor_ex(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="linalg.ldl_factor: self must be a batch of square matrices"):
        LDL.aten_linalg_ldl_factor(rand(2, 3))
    ld, piv = torch.linalg.ldl_factor(rand(3, 3))
    with pytest.raises(TypeError, match="LD and B must have one dtype"):
        LDL.aten_linalg_ldl_solve(ld, piv, rand(3, 1, dtype=F32))
