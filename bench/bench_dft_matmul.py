"""onnxruntime latency of small FFTs: onnxruntime's DFT node vs the direct sum (one MatMul).

    OMP_NUM_THREADS=1 python bench/bench_dft_matmul.py [--runs 100] [--batch 1000] [--lengths 3,5,...]

The whole traced function, `_fft_r2c(x, [1], 0, onesided=True)` on a real x [batch, n] or
`_fft_c2c(z, [1], 0, forward=True)` on a complex z [batch, n] (the inf/NaN check, the float32 ->
float64 casts of lengths that are not powers of two, the transform), built with
torchlib.ops.fft._MATMUL_MAX_LENGTH set to 0 (dft: every length through DFT, as before) or to
128 (matmul: lengths up to 128 through `_matmul_dft`). Median microseconds per run, 1 intra-op
thread, the two forms timed run by run in alternation.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnxruntime as ort
import torch

from torchlib.ops import fft
from torchlib.testing import trace


def build(form: str, x: torch.Tensor) -> tuple[ort.InferenceSession, dict[str, np.ndarray]]:
    saved = fft._MATMUL_MAX_LENGTH
    fft._MATMUL_MAX_LENGTH = 0 if form == "dft" else 128
    try:
        if x.is_complex():
            model, feeds, _ = trace(lambda t: fft.aten__fft_c2c(t, [1], 0, True), (x,))
        else:
            model, feeds, _ = trace(lambda t: fft.aten__fft_r2c(t, [1], 0, True), (x,))
    finally:
        fft._MATMUL_MAX_LENGTH = saved
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session, {k: np.asarray(v) for k, v in feeds.items()}


def timed(sessions: dict[str, tuple[ort.InferenceSession, dict[str, np.ndarray]]], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in sessions}
    for s, feeds in sessions.values():
        s.run(None, feeds)
    for _ in range(runs):
        for k, (s, feeds) in sessions.items():
            t = time.perf_counter()
            s.run(None, feeds)
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e6 for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--lengths", default="3,4,5,6,7,8,10,12,16,24,31,32,48,64,80,96,100,127,128")
    parser.add_argument("--dtypes", default="float64,float32")
    args = parser.parse_args()
    g = torch.Generator().manual_seed(0)
    print(f"batch {args.batch}, median us of {args.runs} runs (dft | matmul | ratio matmul/dft)")
    for name in args.dtypes.split(","):
        real = getattr(torch, name)
        for n in (int(v) for v in args.lengths.split(",")):
            row = [f"{name} n={n:4d}"]
            for label, x in (("r2c", torch.randn(args.batch, n, dtype=real, generator=g)),
                             ("c2c", torch.randn(args.batch, n, dtype=real.to_complex(), generator=g))):
                t = timed({f: build(f, x) for f in ("dft", "matmul")}, args.runs)
                row.append(f"{label} {t['dft']:8.0f} {t['matmul']:8.0f} {t['matmul'] / t['dft']:5.2f}")
            print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
