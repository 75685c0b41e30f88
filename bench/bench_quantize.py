"""Weight-only quantization: size, error and onnxruntime latency of float32 / int8 / int4 exports.

    python bench/bench_quantize.py [--hidden 1024] [--layers 4] [--runs 30]

A Llama-style decoder (torchlib.exporter.decoder, random weights, std 0.02; default hidden 1024,
4 layers, MLP 2816, vocab 8000) is exported with `weight_quantization=` None, "int8", "int4"
(block 32, symmetric) and an asymmetric int4 of block 128, and saved. For each:

- model size: the .onnx file (and its .data file);
- max |logits - float32 logits|, mean KL(softmax(float32) || softmax(quantized)) per token and
  top-1 agreement, on 4 x 64 random token ids;
- whether onnxruntime (1.31, CPU, default optimization level) fused DequantizeLinear + MatMul
  into its MatMulNBits kernel (counted in `SessionOptions.optimized_model_filepath`);
- latency, 1 thread, median of --runs: a 128-token forward and a 1-token forward (batch 1), at
  the default optimization level and at ORT_ENABLE_BASIC (no MatMulNBits fusion: DequantizeLinear
  runs and MatMul is float).

The sessions are timed in alternation, run by run, so that load on the machine spreads evenly.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import collections
import os
import statistics
import tempfile
import time

import numpy as np

VARIANTS = [("float32", None), ("int8 b32 sym", "int8"), ("int4 b32 sym", "int4"), ("int4 b128 asym", ("int4", 128, False))]


def _session(path: str, level, optimized: str | None = None):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = level
    options.log_severity_level = 3
    if optimized:
        options.optimized_model_filepath = optimized
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _kl(p_logits: np.ndarray, q_logits: np.ndarray) -> float:
    def log_softmax(x):
        x = x.astype(np.float64)
        x = x - x.max(-1, keepdims=True)
        return x - np.log(np.exp(x).sum(-1, keepdims=True))

    lp, lq = log_softmax(p_logits), log_softmax(q_logits)
    return float((np.exp(lp) * (lp - lq)).sum(-1).mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=2816)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--runs", type=int, default=30)
    ns = parser.parse_args()

    import onnx
    import onnxruntime as ort
    import torch

    import torchlib
    from graph_builder.optimizer.quantization import WeightQuantization
    from torchlib.exporter.decoder import DecoderConfig, decoder

    config = DecoderConfig(vocab=ns.vocab, hidden=ns.hidden, layers=ns.layers, heads=ns.hidden // 64,
                           intermediate=ns.intermediate, max_seq=256)  # fmt: skip
    model = decoder(config)
    sample = torch.randint(0, config.vocab, (1, 8))
    ids = np.random.default_rng(0).integers(0, config.vocab, (4, 64))
    prefill, step = ids[:1, :64].repeat(2, axis=1), ids[:1, :1]  # 128 tokens; 1 token
    print(f"decoder: hidden {config.hidden}, {config.layers} layers, MLP {config.intermediate}, vocab {config.vocab}: "
          f"{config.parameters / 1e6:.1f} M parameters; onnxruntime {ort.__version__}, 1 thread")  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sessions = {}
        for label, spec in VARIANTS:
            if isinstance(spec, tuple):
                spec = WeightQuantization(*spec)
            result = torchlib.export(model, (sample,), dynamic_shapes=({0: "batch", 1: "seq"},), weight_quantization=spec)
            path = os.path.join(tmp, label.replace(" ", "_") + ".onnx")
            result.save(path)
            size = os.path.getsize(path) + (os.path.getsize(path + ".data") if os.path.exists(path + ".data") else 0)
            optimized = path + ".opt.onnx"
            full = _session(path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL, optimized)
            ops = collections.Counter(n.op_type for n in onnx.load(optimized, load_external_data=False).graph.node)
            basic = _session(path, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
            logits = full.run(None, {"idx": ids})[0]
            sessions[label] = (full, basic)
            rows.append({"label": label, "size": size, "logits": logits,
                         "fused": ops.get("MatMulNBits", 0), "dq": ops.get("DequantizeLinear", 0), "matmul": ops.get("MatMul", 0)})  # fmt: skip
        times = {(label, kind, feed): [] for label in sessions for kind in ("all", "basic") for feed in ("128", "1")}
        feeds = {"128": {"idx": prefill}, "1": {"idx": step}}
        for _ in range(ns.runs):
            for label, (full, basic) in sessions.items():
                for kind, session in (("all", full), ("basic", basic)):
                    for feed, inputs in feeds.items():
                        start = time.perf_counter()
                        session.run(None, inputs)
                        times[(label, kind, feed)].append(time.perf_counter() - start)
    reference = rows[0]["logits"]
    print("\n| weights | model size | max abs logits error | mean KL per token | top-1 agreement | ORT nodes after optimization "
          "| 128 tokens ms | 1 token ms | 128 tokens ms, no fusion | 1 token ms, no fusion |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        label = r["label"]
        err = float(np.abs(r["logits"] - reference).max())
        agree = float((r["logits"].argmax(-1) == reference.argmax(-1)).mean())
        med = {k: statistics.median(v) * 1e3 for k, v in times.items() if k[0] == label}
        nodes = f"{r['fused']} MatMulNBits, {r['dq']} DequantizeLinear, {r['matmul']} MatMul"
        print(f"| {label} | {r['size'] / 2**20:.1f} MiB | {err:.4f} (of {np.abs(reference).max():.2f}) | {_kl(reference, r['logits']):.2e} "
              f"| {agree:.3f} | {nodes} | {med[(label, 'all', '128')]:.1f} | {med[(label, 'all', '1')]:.2f} "
              f"| {med[(label, 'basic', '128')]:.1f} | {med[(label, 'basic', '1')]:.2f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    _sys.exit(main())
