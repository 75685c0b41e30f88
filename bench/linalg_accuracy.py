"""Accuracy of torchlib's linear algebra against torch (LAPACK) for random n x n matrices,
traced into ONNX with a dynamic batch dimension and run in onnxruntime.

    OMP_NUM_THREADS=1 python bench/linalg_accuracy.py [--sizes 8,32,64]

Prints, per dtype and size, the largest error relative to the largest magnitude of the result
(max |ours - torch| / max |torch|), and for eigh/svd the invariants (the vectors' signs are
LAPACK's choice): eigenvalues / singular values, |A V - V diag(w)|, |U diag(S) Vh - A|.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import time
from typing import Any

import torch

from graph_builder import types
from graph_builder.builder import GraphBuilder
from graph_builder.opset import as_array
from torchlib.ops.linalg import cholesky, lu, matrix_functions, qr, spectral
from torchlib.testing import run_model


def run(fn: Any, *args: Any) -> Any:
    g = GraphBuilder()
    feeds, inputs = {}, []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            v = g.input(f"x{i}", types.from_torch(a.dtype), ["batch", *a.shape[1:]])
            feeds[v.name] = as_array(a)
            a = v
        inputs.append(a)
    with g:
        out = fn(*inputs)
    out = out if isinstance(out, tuple) else (out,)
    names = tuple(g.output(v, f"y{i}").name for i, v in enumerate(out))
    return run_model(g.to_model(), feeds, names)


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).abs().max() / b.double().abs().max().clamp_min(1e-300))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="8,32,64")
    args = parser.parse_args()
    for dtype in (torch.float32, torch.float64):
        for n in [int(s) for s in args.sizes.split(",")]:
            g = torch.Generator().manual_seed(n)
            a = torch.randn(2, n, n, generator=g, dtype=torch.float64).to(dtype)
            sym = (a + a.mT) / 2
            pd = a @ a.mT + n * torch.eye(n, dtype=dtype)
            row: dict[str, float] = {}
            t = time.perf_counter()
            row["det"] = rel(run(lu.aten__linalg_det, a)[0], torch.linalg.det(a))
            row["inv"] = rel(run(lu.aten_linalg_inv_ex, a)[0], torch.linalg.inv(a))
            row["solve"] = rel(run(lu.aten__linalg_solve_ex, a, pd)[0], torch.linalg.solve(a, pd))
            row["cholesky"] = rel(run(cholesky.aten_linalg_cholesky_ex, pd)[0], torch.linalg.cholesky(pd))
            q, r = run(qr.aten_linalg_qr, a)
            tq, tr_ = torch.linalg.qr(a)
            row["qr"] = max(rel(q, tq), rel(r, tr_))
            w, v = run(spectral.aten__linalg_eigh, sym)
            row["eigh w"] = rel(w, torch.linalg.eigvalsh(sym))
            row["eigh |AV-Vw|"] = float((sym @ v - v * w.unsqueeze(-2)).abs().max() / sym.abs().max())
            u, s, vh = run(spectral.aten__linalg_svd, a, False, True)
            row["svd S"] = rel(s, torch.linalg.svdvals(a))
            row["svd |USVh-A|"] = rel((u * s.unsqueeze(-2)) @ vh, a)
            row["pinv"] = rel(run(spectral.aten_linalg_pinv_atol_rtol_tensor, a)[0], torch.linalg.pinv(a))
            row["matrix_exp"] = rel(run(matrix_functions.aten_linalg_matrix_exp, a / n**0.5)[0], torch.linalg.matrix_exp(a / n**0.5))
            seconds = time.perf_counter() - t
            print(f"{dtype!s:14} n={n:3}  " + "  ".join(f"{k} {v:.1e}" for k, v in row.items()) + f"  ({seconds:.1f} s)")


if __name__ == "__main__":
    main()
