"""Which is faster in onnxruntime (CPU, 1 thread): the fused opset-23 `Attention` operator, or
the same attention written as MatMul / Softmax / MatMul? The optimizer writes a mid-sized
`Attention` as MatMul / Softmax by the rule this (and whole-model A/B runs for the smallest
shapes) measured: graph_builder/optimizer/attention.py, docs/optimizer.md.

    OMP_NUM_THREADS=1 python bench/bench_attention.py [--runs 300]

Each graph is laid out as exported models are: Q, K and V come as [batch, sequence, heads * size]
projections, are split into heads by Reshape + Transpose, and the result is transposed back and
reshaped; onnxruntime runs with its default graph optimizations (it folds those transposes and
the scale into FusedMatMul in the MatMul / Softmax form, and copies them for `Attention`).
For each (batch, heads, sequence, head size, causal): median ms of both graphs, timed run by run
in alternation, their ratio (fused / unfused; above 1 the fused operator is slower), the work per
head seq * seq * head size, and the form the optimizer picks (`prefer_unfused`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph_builder import FLOAT, GraphBuilder, op  # noqa: E402
from graph_builder.optimizer.attention import prefer_unfused, unfused_attention  # noqa: E402

SHAPES = [(2, 4, 16, 16), (2, 4, 16, 64), (4, 4, 32, 16), (4, 4, 32, 32), (4, 4, 32, 64), (2, 4, 65, 32),
          (2, 8, 64, 64), (2, 4, 128, 16), (2, 4, 128, 32), (1, 8, 128, 64), (1, 4, 256, 32), (1, 8, 256, 64),
          (1, 12, 512, 64), (1, 8, 1024, 64)]


def graphs(b: int, h: int, s: int, d: int, causal: bool):
    models = []
    for fused in (True, False):
        g = GraphBuilder()
        xs = [g.input(n, FLOAT, [b, s, h * d]) for n in "qkv"]
        with g:
            q, k, v = (op.Transpose(op.Reshape(x, [b, s, h, d]), perm=[0, 2, 1, 3]) for x in xs)
            y = op.Attention(q, k, v, is_causal=int(causal)) if fused else unfused_attention(op, q, k, v, int(causal))
            y = op.Reshape(op.Transpose(y, perm=[0, 2, 1, 3]), [b, s, h * d])
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
    for _ in range(runs):
        for s, out in zip(sessions, samples):
            start = time.perf_counter()
            s.run(None, feeds)
            out.append(time.perf_counter() - start)
    return [statistics.median(x) * 1e3 for x in samples]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    ns = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| batch | heads | seq | head size | causal | seq² x size | Attention ms | MatMul/Softmax ms | ratio | optimizer picks |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for b, h, s, d in SHAPES:
        for causal in (False, True):
            feeds = {n: rng.standard_normal((b, s, h * d)).astype(np.float32) for n in "qkv"}
            fused, unfused = median_ms(graphs(b, h, s, d, causal), feeds, ns.runs)
            pick = "MatMul/Softmax" if prefer_unfused(s, s, d) else "Attention"
            print(f"| {b} | {h} | {s} | {d} | {causal} | {s * s * d} | {fused:.3f} | {unfused:.3f} | {fused / unfused:.2f} | {pick} |",
                  flush=True)


if __name__ == "__main__":
    main()
