"""Expectations for torchlib/ops/linalg/composites.py."""

from __future__ import annotations

from typing import Any

import torch

from torchlib.conformance.spec import Entry, Skip, TorchLessAccurate, sample_input

from .linalg_decompositions import _eigh_invariants, _svd_invariants


def _svd_v_invariants(out: Any) -> Any:
    """svd returns V (not Vh): the invariants of (U, S, Vᵀ), see _svd_invariants."""
    u, s, v = (torch.as_tensor(x) for x in out)
    return _svd_invariants((u, s, v.mT))


def _pinv_rcond(tensor: bool):
    """Matrices (batched, wide, tall, rank-deficient, symmetric) with rcond as a float or a tensor
    (the public linalg.pinv reaches the atol/rtol overloads, never these)."""

    def samples(dtype: torch.dtype):
        torch.manual_seed(0)
        sym = torch.randn(3, 3, dtype=dtype)
        for a, rcond, hermitian in ((torch.randn(2, 3, 3, dtype=dtype), 1e-15, False), (torch.randn(3, 5, dtype=dtype), 0.1, False),
                                    (torch.randn(5, 2, dtype=dtype), 0.0, False), (torch.ones(3, 3, dtype=dtype), 1e-5, False),
                                    (sym + sym.mT, 1e-7, True)):  # fmt: skip
            yield sample_input(a, torch.tensor(rcond, dtype=dtype) if tensor else rcond, hermitian)

    return samples


def _cond_str(dtype: torch.dtype):
    """Invertible matrices (batched, ill-conditioned) for 'fro' and 'nuc'; for 'fro' also a
    singular one (infinite) and 0x0 matrices (zeros), which torch's nuc inverse would refuse."""
    torch.manual_seed(0)
    hilbert = 1 / (torch.arange(4, dtype=dtype)[:, None] + torch.arange(4, dtype=dtype) + 1)
    for p in ("fro", "nuc"):
        for a in (torch.randn(3, 3, dtype=dtype), torch.randn(2, 4, 4, dtype=dtype), hilbert):
            yield sample_input(a, p)
    yield sample_input(torch.ones(3, 3, dtype=dtype), "fro")
    yield sample_input(torch.ones(3, 0, 0, dtype=dtype), "fro")


def _matrix_rank_tol(tensor: bool):
    """Matrices of full and deficient rank (batched, wide, tall, symmetric, empty) with tol as a
    float or a tensor (the public linalg.matrix_rank reaches the atol/rtol overloads, never these)."""

    def samples(dtype: torch.dtype):
        torch.manual_seed(0)
        low = torch.randn(5, 2, dtype=dtype) @ torch.randn(2, 4, dtype=dtype)
        sym = torch.randn(4, 4, dtype=dtype)
        for a, tol, hermitian in ((torch.randn(2, 3, 3, dtype=dtype), 1e-5, False), (low, 1e-3, False), (low.mT, 0.0, False),
                                  (torch.randn(3, 5, dtype=dtype), 1.5, False), (sym + sym.mT, 0.5, True), (low @ low.mT, 1e-3, True),
                                  (torch.randn(0, 3, dtype=dtype), 0.1, False)):  # fmt: skip
            if tensor:
                yield sample_input(a, torch.tensor(tol, dtype=dtype), hermitian)
                if a.dim() == 3:  # a tolerance per matrix
                    yield sample_input(a, torch.tensor([tol, 10.0], dtype=dtype), hermitian)
            else:
                yield sample_input(a, tol, hermitian)

    return samples


_NO_HALF_SVD = Skip("torch has no float16/bfloat16 SVD on CPU", dtypes=[torch.float16, torch.bfloat16])

ENTRIES = [
    Entry('aten_linalg_det', opinfo=['linalg.det']),
    Entry('aten_det', opinfo=['linalg.det'], aten=['aten::linalg_det']),
    Entry('aten_linalg_slogdet', opinfo=['linalg.slogdet']),
    Entry('aten_slogdet', opinfo=['linalg.slogdet'], aten=['aten::linalg_slogdet']),
    Entry('aten_logdet', opinfo=['logdet']),
    Entry('aten_linalg_inv', opinfo=['linalg.inv']),
    Entry('aten_inverse', opinfo=['linalg.inv'], aten=['aten::linalg_inv']),
    Entry('aten_linalg_cholesky', opinfo=['linalg.cholesky']),
    Entry('aten_linalg_eigh', opinfo=['linalg.eigh'], canonical=_eigh_invariants, normwise=True),
    Entry('aten_linalg_eigvalsh', opinfo=['linalg.eigvalsh'], normwise=True),
    Entry('aten_linalg_svd', opinfo=['linalg.svd'], canonical=_svd_invariants, normwise=True, skip=[_NO_HALF_SVD]),
    Entry('aten_linalg_svdvals', opinfo=['linalg.svdvals'], normwise=True, skip=[_NO_HALF_SVD]),
    Entry('aten_svd', opinfo=['svd'], canonical=_svd_v_invariants, normwise=True, skip=[_NO_HALF_SVD]),
    Entry('aten_qr', opinfo=['qr'], torch_version='<2.14'),  # torch 2.14 removed aten::qr
    Entry('aten_linalg_pinv', samples=_pinv_rcond(False), dtypes=[torch.float32, torch.float64]),
    Entry('aten_linalg_pinv_rcond_tensor', samples=_pinv_rcond(True), dtypes=[torch.float32, torch.float64]),
    Entry('aten_pinverse', opinfo=['pinverse']),
    Entry('aten_linalg_matrix_power', opinfo=['linalg.matrix_power']),
    Entry('aten_matrix_power', opinfo=['linalg.matrix_power'], aten=['aten::linalg_matrix_power']),
    Entry('aten_linalg_matmul', opinfo=['matmul'], aten=['aten::matmul']),
    Entry('aten_chain_matmul', opinfo=['linalg.multi_dot'], aten=['aten::linalg_multi_dot'],
          adapter=lambda c: c if all(t.dim() == 2 for t in c.args[0]) else None),
    Entry('aten_linalg_multi_dot', opinfo=['linalg.multi_dot']),
    Entry('aten_tensordot', opinfo=['tensordot']),
    Entry('aten_inner', opinfo=['inner']),
    Entry('aten_vdot', opinfo=['vdot']),
    Entry('aten_addr', opinfo=['addr'], xfail=[TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16])]),  # we round once from float32
    Entry('aten_ger', opinfo=['outer'], aten=['aten::outer']),
    Entry('aten_linalg_vecdot', opinfo=['linalg.vecdot']),
    Entry('aten_linalg_diagonal', opinfo=['linalg.diagonal']),
    Entry('aten_linalg_lu_factor', opinfo=['linalg.lu_factor']),
    Entry('aten_linalg_tensorinv', opinfo=['linalg.tensorinv']),
    Entry('aten_linalg_tensorsolve', opinfo=['linalg.tensorsolve']),
    Entry('aten_linalg_vander', opinfo=['linalg.vander']),
    Entry('aten_linalg_matrix_norm', opinfo=['linalg.matrix_norm', 'linalg.norm', ('linalg.norm', 'subgradients_at_zero'), 'linalg.cond']),
    Entry('aten_linalg_matrix_norm_str_ord', opinfo=['linalg.matrix_norm', 'linalg.norm', ('linalg.norm', 'subgradients_at_zero'), 'linalg.cond']),
    Entry('aten_linalg_norm', opinfo=['linalg.norm', ('linalg.norm', 'subgradients_at_zero')]),
    Entry('aten_linalg_norm_ord_str', opinfo=['linalg.norm', ('linalg.norm', 'subgradients_at_zero')]),
    Entry('aten_linalg_cond', opinfo=['linalg.cond']),
    # the float32 4x4 Hilbert matrix (condition 1.6e4): torch's float32 LAPACK inverse is further
    # from the float64 result than our LU (fro: 0.37 vs 0.25, nuc: 0.53 vs 0.27)
    Entry('aten_linalg_cond_p_str', samples=_cond_str, dtypes=[torch.float32, torch.float64],
          xfail=[TorchLessAccurate(dtypes=[torch.float32], samples=[2, 5])]),
    Entry('aten_linalg_matrix_rank', samples=_matrix_rank_tol(False), dtypes=[torch.float32, torch.float64]),
    Entry('aten_linalg_matrix_rank_atol_rtol_float', opinfo=['linalg.matrix_rank', ('linalg.matrix_rank', 'hermitian')]),
    Entry('aten_linalg_matrix_rank_atol_rtol_tensor', opinfo=['linalg.matrix_rank', ('linalg.matrix_rank', 'hermitian')]),
    Entry('aten_linalg_matrix_rank_tol_tensor', samples=_matrix_rank_tol(True), dtypes=[torch.float32, torch.float64]),
]
