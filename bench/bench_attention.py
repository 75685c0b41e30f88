"""Which is faster in onnxruntime (CPU, 1 thread): the fused opset-23 `Attention` operator, or
the same attention written as MatMul / Softmax / MatMul? The exporter keeps `Attention` because
of what this prints: the fused operator is as fast or faster at every shape measured.

    OMP_NUM_THREADS=1 python bench/bench_attention.py [--runs 200]

For each (batch, heads, sequence, head size, causal): median ms of both graphs, timed in
alternating rounds, and their ratio (fused / unfused; above 1 the fused operator is slower).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
import onnxruntime as ort

from graph_builder import FLOAT, GraphBuilder, op


def unfused_attention(q, k, v, mask, causal: bool, scale: float | None):  # type: ignore[no-untyped-def]
    """softmax(q @ k^T * scale + mask) @ v for [batch, heads, length, size] inputs, as ONNX's
    Attention defines it (a boolean mask keeps the positions that are True; causal masks the
    keys after each query)."""
    size = q.shape[-1]
    scale = 1.0 / math.sqrt(size) if scale is None else scale
    scores = op.Mul(op.MatMul(q, op.Transpose(k, perm=[0, 1, 3, 2])), scale)
    if causal:
        s, t = q.shape[-2], k.shape[-2]
        keep = np.tril(np.ones((s, t), dtype=bool), k=t - s)
        scores = op.Where(keep, scores, -np.inf)
    if mask is not None:
        scores = op.Where(mask, scores, -np.inf) if mask.dtype.is_bool else op.Add(scores, mask)
    return op.MatMul(op.Softmax(scores, axis=-1), v)


def graphs(b: int, h: int, s: int, d: int, causal: bool):
    models = []
    for fused in (True, False):
        g = GraphBuilder()
        q, k, v = (g.input(n, FLOAT, [b, h, s, d]) for n in "qkv")
        with g:
            y = op.Attention(q, k, v, is_causal=int(causal)) if fused else unfused_attention(q, k, v, None, causal, None)
        g.output(y, "y")
        models.append(g.to_model())
    return models


def median_ms(models, feeds, runs: int) -> list[float]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    sessions = [ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"]) for m in models]
    for s in sessions:
        for _ in range(10):
            s.run(None, feeds)
    samples: list[list[float]] = [[] for _ in sessions]
    for _ in range(max(1, runs // 10)):
        for s, out in zip(sessions, samples):
            for _ in range(10):
                start = time.perf_counter()
                s.run(None, feeds)
                out.append(time.perf_counter() - start)
    return [statistics.median(x) * 1e3 for x in samples]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    ns = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| batch | heads | seq | head size | causal | Attention ms | MatMul/Softmax ms | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for b, h, s, d in [(2, 4, 16, 16), (2, 4, 33, 32), (4, 4, 32, 16), (2, 8, 64, 64), (1, 8, 128, 64), (1, 8, 256, 64),
                       (1, 12, 512, 64), (1, 8, 1024, 64)]:
        for causal in (False, True):
            feeds = {n: rng.standard_normal((b, h, s, d)).astype(np.float32) for n in "qkv"}
            fused, unfused = median_ms(graphs(b, h, s, d, causal), feeds, ns.runs)
            print(f"| {b} | {h} | {s} | {d} | {causal} | {fused:.3f} | {unfused:.3f} | {fused / unfused:.2f} |", flush=True)


if __name__ == "__main__":
    main()
