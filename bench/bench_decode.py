"""Decode-step latency of a Llama-shaped transformers model in onnxruntime: torchlib's export
against torch.onnx.export(dynamo=True) of the same step, or torch eager where that fails.

    OMP_NUM_THREADS=1 python bench/bench_decode.py [--runs 50] [--past 128,1024]

The model: LlamaForCausalLM, hidden 512, 4 layers, 8 heads (4 KV heads), MLP 1376, vocab
32000, random weights (no download). One exported model serves every past length (dynamic
batch, sequence and past sequence); the step timed is one token (batch 1) after a past of
128 or 1024 tokens. onnxruntime CPU, 1 intra-op thread, all graph optimizations, median of
`runs` runs after 5 warm-up runs; the sessions are timed run by run in alternation so that
machine noise hits them alike. torch eager runs the same step with 1 thread under no_grad.

The reference is given the caches registered as pytree nodes by torchlib
(`with torchlib.exporter.hf_cache.registered(): torch.onnx.export(...)`, the cache's
dynamic_shapes in that registration's layout, one dict per layer) and `use_cache`'s entry in
dynamic_shapes. Without a registration it cannot take a DynamicCache at all, and with
transformers' own (`register_dynamic_cache_export_support()`) it fails at its step 2/3 ("Failed
to decompose the FX graph for ONNX compatibility"; tried on 2026-11-29 with transformers 5.24 and
torch 2.13), so torchlib's registration is what a user of the reference can use.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torchlib  # noqa: E402
from torchlib.conformance import torchvision_reference  # noqa: E402
from torchlib.exporter import hf_cache  # noqa: E402

torchvision_reference.register()  # transformers imports torchvision, whose CUDA-built ops do not load here

LAYERS, KV_HEADS, HEAD_DIM = 4, 4, 64


def model_and_inputs():
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1376, num_hidden_layers=LAYERS,
                                      num_attention_heads=8, num_key_value_heads=KV_HEADS, max_position_embeddings=2048)
    model = transformers.LlamaForCausalLM(config).eval()
    past = 5
    cache = transformers.DynamicCache([(torch.randn(2, KV_HEADS, past, HEAD_DIM), torch.randn(2, KV_HEADS, past, HEAD_DIM))
                                       for _ in range(LAYERS)])
    inputs = {"input_ids": torch.randint(0, 32000, (2, 3)), "attention_mask": torch.ones(2, past + 3, dtype=torch.long),
              "cache": cache, "use_cache": True}
    d = {0: "batch", 2: "past_sequence"}
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
               "cache": [[d] * LAYERS, [d] * LAYERS]}
    return model, inputs, dynamic


def step_feeds(session: ort.InferenceSession, past: int) -> dict[str, np.ndarray]:
    """One token after `past` tokens, batch 1, by input position: ids, mask, keys, values."""
    rng = np.random.default_rng(0)
    names = [i.name for i in session.get_inputs()]
    arrays = [rng.integers(0, 32000, (1, 1)), np.ones((1, past + 1), dtype=np.int64)]
    arrays += [rng.standard_normal((1, KV_HEADS, past, HEAD_DIM), dtype=np.float32) for _ in range(2 * LAYERS)]
    return dict(zip(names, arrays))


def session(path: str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def time_alternating(sessions: dict[str, ort.InferenceSession], feeds: dict[str, dict[str, np.ndarray]], runs: int,
                     also: dict[str, tuple] | None = None) -> dict[str, list[float]]:
    """Seconds per run of each session (after 5 warm-up runs), run by run in alternation; `also`:
    name -> (prepare, run) timed in the same rotation, run() timed, prepare() not."""
    also = also or {}
    times: dict[str, list[float]] = {name: [] for name in [*sessions, *also]}
    for i in range(runs + 5):
        for name, s in sessions.items():
            start = time.perf_counter()
            s.run(None, feeds[name])
            if i >= 5:
                times[name].append(time.perf_counter() - start)
        for name, (prepare, run) in also.items():
            prepared = prepare()
            start = time.perf_counter()
            run(prepared)
            if i >= 5:
                times[name].append(time.perf_counter() - start)
    return times


def export_reference(model, inputs, dynamic, path: str) -> str:
    """torch.onnx.export(dynamo=True) of the same step; '' or the reason it failed."""
    try:
        with hf_cache.registered(), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            shapes = {**dynamic, "cache": hf_cache.cache_spec(inputs["cache"], dynamic["cache"]), "use_cache": None}
            program = torch.onnx.export(model, (), path, kwargs=inputs, dynamic_shapes=shapes, dynamo=True)
            program.save(path)
        return ""
    except Exception as e:  # noqa: BLE001  (the reason is the figure)
        return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200]}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--past", default="128,1024")
    options = parser.parse_args()
    torch.set_num_threads(1)
    model, inputs, dynamic = model_and_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = torchlib.export(model, (), inputs, dynamic_shapes=dynamic)
        ours_export = time.perf_counter() - start
        result.save(f"{tmp}/ours.onnx")
        start = time.perf_counter()
        failure = export_reference(model, inputs, dynamic, f"{tmp}/reference.onnx")
        reference_export = time.perf_counter() - start
        sessions = {"torchlib": session(f"{tmp}/ours.onnx")}
        if not failure:
            sessions["reference"] = session(f"{tmp}/reference.onnx")
        print(f"export: torchlib {ours_export:.1f} s, {len(result.graph.nodes)} nodes; reference "
              + (f"{reference_export:.1f} s" if not failure else f"failed ({failure})"))
        for past in (int(p) for p in options.past.split(",")):
            feeds = {name: step_feeds(s, past) for name, s in sessions.items()}
            logits = {name: s.run(None, feeds[name])[0] for name, s in sessions.items()}
            agree = "" if len(logits) < 2 else f" (logits of the two models differ by {np.abs(logits['torchlib'] - logits['reference']).max():.1e})"
            eager_inputs = eager_step(model, past)  # outside the timing: building the cache copies the past

            def eager(step: dict) -> None:
                with torch.no_grad():
                    model(**step)

            times = time_alternating(sessions, feeds, options.runs, {"torch eager": (eager_inputs, eager)})
            figures = ", ".join(f"{name} {statistics.median(t) * 1e3:.2f} ms" for name, t in times.items())
            print(f"past {past}: decode step (batch 1, 1 token) median of {options.runs}: {figures}{agree}")


def eager_step(model, past: int):
    """A fresh cache of `past` tokens per call (the model grows the one it is given)."""
    import transformers

    torch.manual_seed(0)
    keys = [(torch.randn(1, KV_HEADS, past, HEAD_DIM), torch.randn(1, KV_HEADS, past, HEAD_DIM)) for _ in range(LAYERS)]
    ids = torch.randint(0, 32000, (1, 1))
    mask = torch.ones(1, past + 1, dtype=torch.long)
    return lambda: {"input_ids": ids, "attention_mask": mask, "cache": transformers.DynamicCache(keys), "use_cache": True}


if __name__ == "__main__":
    main()
