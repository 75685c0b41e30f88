"""The decode step's attention in three forms, timed in onnxruntime: which one the optimizer writes.

    OMP_NUM_THREADS=1 python bench/bench_attention_past.py [--runs 100] [--past 128,1024]

The model is bench_decode's (LlamaForCausalLM, hidden 512, 4 layers, 8 heads over 4 KV heads,
random weights), exported once per form with torchlib, the forms made by the optimizer itself:

- `concat + repeat_kv`: Concat(past, new) -> transformers' repeat_kv (Unsqueeze, Expand,
  Reshape: a copy of the cache per query head) -> Attention (the GQA and PAST rules left out);
- `concat`: Concat(past, new) -> Attention reading the 4 KV heads (`attention.GQA` only);
- `past`: Attention(q, k, v, mask, past_key, past_value) whose present_key / present_value are
  the `present.*` outputs (`attention.GQA` then `attention.PAST`: what torchlib.export writes).

One token, batch 1, after a past of 128 or 1024 tokens; onnxruntime CPU, 1 intra-op thread, all
graph optimizations; median of `runs` runs after 5 warm-up runs, the sessions timed run by run
in alternation. The three models' outputs are compared too (they must agree exactly).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_decode  # noqa: E402
import torch  # noqa: E402

import torchlib  # noqa: E402
from graph_builder.optimizer import attention  # noqa: E402

FORMS = {"concat + repeat_kv": ([], []), "concat": (attention.GQA, []), "past": (attention.GQA, attention.PAST)}


def export_form(model, inputs, dynamic, gqa, past, path: str) -> None:
    saved = attention.GQA, attention.PAST
    attention.GQA, attention.PAST = gqa, past
    try:
        torchlib.export(model, (), inputs, dynamic_shapes=dynamic).save(path)
    finally:
        attention.GQA, attention.PAST = saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--past", default="128,1024")
    options = parser.parse_args()
    torch.set_num_threads(1)
    model, inputs, dynamic = bench_decode.model_and_inputs()
    with tempfile.TemporaryDirectory() as tmp:
        sessions = {}
        for i, (name, (gqa, past)) in enumerate(FORMS.items()):
            export_form(model, inputs, dynamic, gqa, past, f"{tmp}/{i}.onnx")
            sessions[name] = bench_decode.session(f"{tmp}/{i}.onnx")
        for past in (int(p) for p in options.past.split(",")):
            feeds = {name: bench_decode.step_feeds(s, past) for name, s in sessions.items()}
            results = {name: s.run(None, feeds[name]) for name, s in sessions.items()}
            first = next(iter(results.values()))
            worst = max(float(np.abs(a - b).max()) for r in results.values() for a, b in zip(first, r))
            times = bench_decode.time_alternating(sessions, feeds, options.runs)
            figures = ", ".join(f"{name} {statistics.median(t) * 1e3:.2f} ms" for name, t in times.items())
            print(f"past {past}, median of {options.runs}: {figures} (outputs differ by {worst:.1e} at most)")


if __name__ == "__main__":
    main()
