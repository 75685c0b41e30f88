"""torchlib/ops/linalg/eig.py against torch: eagerly and traced with a dynamic batch, edge cases
(0, 1 and 2 rows, complex pairs, repeated and defective eigenvalues, empty batches), geev's
normalisation, and an exported model."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

from graph_builder import types
from graph_builder.builder import GraphBuilder
from graph_builder.ir import Value
from graph_builder.opset import as_array
from torchlib.ops.linalg import eig as E
from torchlib.testing import run_model, run_traced

F32, F64 = torch.float32, torch.float64
C64, C128 = torch.complex64, torch.complex128


def rand(*shape: int, dtype: torch.dtype = F64, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=F64).to(dtype)


def run_batch_dynamic(fn: Any, a: torch.Tensor) -> Any:
    """fn traced with the first dimension of its argument symbolic ("batch")."""
    g = GraphBuilder()
    x = g.input("a", types.from_torch(a.dtype), ["batch", *a.shape[1:]])
    with g:
        result = fn(x)
    outputs = result if isinstance(result, tuple) else (result,)
    names = tuple(g.output(v, f"y{i}").name for i, v in enumerate(outputs) if isinstance(v, Value))
    got = run_model(g.to_model(), {x.name: as_array(a)}, names)
    return got if isinstance(result, tuple) else got[0]


def sort_eigvals(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(w sorted by (real, imaginary) part, the permutation)."""
    order = torch.sort(w.imag, dim=-1, stable=True).indices
    order = order.gather(-1, torch.sort(w.real.gather(-1, order), dim=-1, stable=True).indices)
    return w.gather(-1, order), order


def check_eig(a: torch.Tensor, w: Any, v: Any, eps_factor: float = 50.0) -> None:
    """w, v are a's eigen-decomposition with geev's conventions: dtypes, shapes, eigenvalues as
    torch's up to order, A V = V diag(w), unit columns whose largest component is real, exact
    conjugate pairs."""
    complex_dtype = C64 if a.dtype == F32 else C128
    w, v = torch.as_tensor(w), torch.as_tensor(v)
    assert w.dtype == complex_dtype and v.dtype == complex_dtype
    n = a.shape[-1]
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    if a.numel() == 0:
        return
    eps = torch.finfo(a.dtype).eps
    scale = float(a.abs().max()) or 1.0
    expected = torch.linalg.eigvals(a.to(F64))
    got, order = sort_eigvals(w.to(C128))
    exp, _ = sort_eigvals(expected)
    assert (got - exp).abs().max() <= eps_factor * n * eps * scale
    a64, v64, w64 = a.to(C128), v.to(C128), w.to(C128)
    residual = (a64 @ v64 - v64 * w64.unsqueeze(-2)).abs().max()
    assert residual <= eps_factor * n * eps * scale
    torch.testing.assert_close(v64.abs().pow(2).sum(-2), torch.ones(w.shape, dtype=F64), rtol=0, atol=10 * n * eps)
    pair = w64.imag != 0
    # a component of largest modulus (up to rounding: ties) is real
    top = v64.abs() >= v64.abs().amax(-2, keepdim=True) * (1 - 10 * eps)
    assert ((top & (v64.imag == 0)).any(-2) | ~pair).all()
    assert (v64.imag[(~pair).unsqueeze(-2).expand(v.shape)] == 0).all()  # real eigenvalue: real vector
    # a pair is (a + ib, a - ib) at (i, i + 1) with conjugate vectors
    first = pair & (w64.imag > 0)
    idx = first.nonzero()
    for *b, i in idx.tolist():
        assert w64[(*b, i + 1)] == w64[(*b, i)].conj()
        assert torch.equal(v64[(*b, slice(None), i + 1)], v64[(*b, slice(None), i)].conj())
    del order


def _runs(fn: Any) -> list[Any]:
    return [fn, lambda x: run_traced(fn, x), lambda x: run_batch_dynamic(fn, x)]


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("shape", [(3, 1, 1), (3, 2, 2), (2, 3, 3), (2, 5, 5), (2, 8, 8), (1, 2, 4, 4)], ids=str)
def test_eig_random(dtype, shape):
    a = rand(*shape, dtype=dtype)
    for run in _runs(E.aten_linalg_eig):
        w, v = run(a)
        check_eig(a, w, v)
    for fn in (E.aten_linalg_eigvals, E.aten__linalg_eigvals):
        for run in _runs(fn):
            torch.testing.assert_close(torch.as_tensor(run(a)), torch.as_tensor(E.aten_linalg_eig(a)[0]), rtol=0, atol=0)


def _similar(d: torch.Tensor) -> torch.Tensor:
    """P diag(d) P⁻¹ for a well-conditioned P."""
    p = torch.eye(len(d), dtype=F64) + 0.3 * rand(len(d), len(d), seed=5)
    return p @ torch.diag(d.to(F64)) @ torch.linalg.inv(p)


def _edge_matrices() -> dict[str, torch.Tensor]:
    return {
        "1x1": torch.tensor([[-3.0]]),
        "complex_pair": torch.tensor([[1.0, 2.0], [-3.0, 1.0]]),
        "rotation": torch.tensor([[0.0, -1.0], [1.0, 0.0]]),
        "rotation_3d": torch.tensor([[0.6, -0.8, 0.0], [0.8, 0.6, 0.0], [0.0, 0.0, 1.0]]),
        "identity": torch.eye(5),
        "zeros": torch.zeros(4, 4),
        "repeated": _similar(torch.tensor([2.0, 1.0, 2.0, 1.0])),  # not defective
        "jordan": torch.tensor([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]]),
        "companion": torch.tensor([[0.0, 0.0, 0.0, -1.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]),  # x^4 + 1
        "triangular": torch.triu(rand(5, 5)),
        "cyclic": torch.roll(torch.eye(8), 1, 0),  # roots of unity: standard shifts stall, exceptional ones do not
        "rank_2": (rand(7, 2) @ rand(2, 7, seed=1)).float(),  # 0 five times
        "block_pairs": torch.block_diag(torch.tensor([[0.0, -2.0], [2.0, 0.0]]), torch.tensor([[1.0, 5.0], [-1.0, 1.0]]), torch.tensor([[3.0]])),
    }


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("name", list(_edge_matrices()))
def test_eig_edges(dtype, name):
    a = _edge_matrices()[name].to(dtype)
    wt, vt = torch.linalg.eig(a)
    for run in _runs(E.aten_linalg_eig):
        w, v = run(a.unsqueeze(0))
        if name == "jordan":  # defective: one eigenvector, computed to sqrt(eps) by everyone
            got, _ = sort_eigvals(torch.as_tensor(w)[0].to(C128))
            torch.testing.assert_close(got, torch.full((3,), 2.0, dtype=C128), rtol=0, atol=1e-12)
            continue
        check_eig(a.unsqueeze(0), w, v)
    w, _ = E.aten_linalg_eig(a)
    if name in ("rotation", "complex_pair"):  # as LAPACK: the pair with positive imaginary part first
        torch.testing.assert_close(w, wt)
        torch.testing.assert_close(E.aten_linalg_eig(a)[1], vt)
    if name == "rotation":
        assert torch.equal(w.real, torch.zeros(2, dtype=dtype))


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3), (0, 1, 1)], ids=str)
def test_eig_empty(shape):
    a = rand(*shape, dtype=F32)
    wt, vt = torch.linalg.eig(a)
    for run in (E.aten_linalg_eig, lambda x: run_traced(E.aten_linalg_eig, x)):
        w, v = (torch.as_tensor(t) for t in run(a))
        assert w.shape == wt.shape and w.dtype == C64 and v.shape == vt.shape and v.dtype == C64
    if len(shape) == 3:
        w, v = (torch.as_tensor(t) for t in run_batch_dynamic(E.aten_linalg_eig, a))
        assert w.shape == wt.shape and v.shape == vt.shape


def test_eig_matches_lapack_order_and_phases_on_random_matrices():
    """The same steps as dgeev: on random float64 matrices the eigenvalue order and the
    eigenvectors (phases included) are torch's for nearly all of them."""
    a = rand(100, 6, 6)
    w, v = E.aten_linalg_eig(a)
    wt, vt = torch.linalg.eig(a)
    same_order = (w - wt).abs().amax(-1) < 1e-10
    same_vectors = (v - vt).abs().amax((-1, -2)) < 1e-10
    assert same_order.float().mean() >= 0.95
    assert same_vectors.float().mean() >= 0.85


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_eig_of_a_badly_scaled_matrix_keeps_its_accuracy(dtype):
    """D R D⁻¹ with D from 1e-4 to 1e4: balancing undoes D (without it the eigenvalues of this
    float64 matrix were off by 8e-4)."""
    d = torch.logspace(-4, 4, 6, dtype=F64)
    r = rand(6, 6, seed=3)
    a = (d[:, None] * r / d[None, :]).to(dtype)
    w, v = E.aten_linalg_eig(a)
    got, _ = sort_eigvals(w.to(C128))
    exp, _ = sort_eigvals(torch.linalg.eigvals(r))
    assert (got - exp).abs().max() <= 100 * torch.finfo(dtype).eps * float(r.abs().max())
    v64 = v.to(C128) / d[:, None]  # eigenvectors of R, each up to scale
    residual = r.to(C128) @ v64 - v64 * w.to(C128)
    assert residual.abs().max() <= 100 * torch.finfo(dtype).eps * float(r.abs().max()) * float(v64.abs().max())


def test_eig_of_non_finite_matrices_gives_nan_without_iterating_to_the_budget():
    """torch raises on them (LAPACK's geev fails); a graph cannot: NaN for those matrices, the
    others of the batch exact."""
    a = rand(3, 8, 8)
    a[1, 2, 3], a[2, 0, 0] = float("nan"), float("inf")
    w, v = E.aten_linalg_eig(a)
    assert w[1:].isnan().any(-1).all() and v[1:].isnan().any()
    check_eig(a[:1], w[:1], v[:1])


def test_errors_name_the_op_and_the_reason():
    with pytest.raises(TypeError, match="linalg.eig: A must be float32 or float64"):
        E.aten_linalg_eig(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="linalg.eig: A must be a batch of square matrices"):
        E.aten_linalg_eigvals(rand(2, 3))
    with pytest.raises(TypeError, match="has no complex variant"):
        E.aten_linalg_eig(torch.ones(2, 2, dtype=C64))


class _Eig(torch.nn.Module):
    def forward(self, a: torch.Tensor) -> tuple[torch.Tensor, ...]:
        w, v = torch.linalg.eig(a)
        return w, v, torch.linalg.eigvals(a)


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_export_with_a_dynamic_batch_runs_in_onnxruntime(dtype):
    import torchlib

    a = rand(3, 4, 4, dtype=dtype)
    # eigenvectors are defined up to a phase: the self-check compares outputs as numbers, so where
    # they differ it says "inconclusive" and names linalg_eig (this test checks the invariants)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result = torchlib.export(_Eig(), (a,), dynamic_shapes=({0: torch.export.Dim("batch")},))
    assert result.self_check.startswith(("passed", "inconclusive")), result.self_check
    if result.self_check.startswith("inconclusive"):
        assert "aten::linalg_eig" in result.self_check
    a5 = rand(5, 4, 4, dtype=dtype, seed=2)
    w, v, w2 = (torch.as_tensor(t) for t in result(a5))
    check_eig(a5, w, v)
    torch.testing.assert_close(w2, w)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
def test_accuracy_64x64(dtype):
    a = rand(2, 64, 64, dtype=dtype)
    w, v = run_batch_dynamic(E.aten_linalg_eig, a)
    check_eig(a, w, v, eps_factor=20.0)
