"""int4 MatMulNBits: what each accuracy level costs in accuracy, against the float32 model.

    python bench/bench_accuracy_levels.py [--tokens 128] [--levels 0,1,2,3,4] [--runs 100] [--init-std 0.02]

The model: bench_genai.py's Llama (hidden 512, 4 layers, 8 heads over 4 KV heads, MLP 1376, vocab
32000), random weights (`initializer_range` = --init-std), saved with save_pretrained. Folders from
`torchlib.genai.build`: fp32, and int4 (blocks of 32, symmetric) at each accuracy level (the
type MatMulNBits computes its activations in: 0 unset = float32 on the CPU, 1 float32, 2
float16, 3 bfloat16, 4 int8 per block).

- The float32 model generates `--tokens` greedy tokens after a fixed prompt (onnxruntime-genai).
- Teacher-forced: every model runs that whole sequence at once (plain onnxruntime, one thread);
  on the positions that predict the generated tokens: the largest absolute logit error against
  the float32 model's logits (and against int4 at level 0: the part the level adds to the
  weights' rounding), the mean KL(float32 || int4) per token, the share of positions whose
  top token is the float32 model's.
- Free-running: each int4 folder generates `--tokens` greedy tokens in onnxruntime-genai; how
  many equal the float32 model's, and where the first difference is.
- Decode step: one token after a past of 128, plain onnxruntime, one thread, median of `--runs`
  runs timed in alternation.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from torchlib.conformance import torchvision_reference

torchvision_reference.register()  # transformers imports torchvision, whose CUDA-built ops do not load here

PROMPT = [5, 17, 99, 250, 1000, 7, 3, 4242, 31000, 12]


def session(folder: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])


def feeds(sess, ids: list[int], past: int, kv_heads: int, head_size: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    out: dict[str, np.ndarray] = {}
    for i in sess.get_inputs():
        if i.name == "input_ids":
            out[i.name] = np.array([ids], np.int64)
        elif i.name == "attention_mask":
            out[i.name] = np.ones((1, past + len(ids)), np.int64)
        elif i.name == "position_ids":
            out[i.name] = np.arange(past, past + len(ids), dtype=np.int64)[None]
        else:
            out[i.name] = rng.standard_normal((1, kv_heads, past, head_size), dtype=np.float32)
    return out


def greedy(folder: Path, tokens: int) -> list[int]:
    import onnxruntime_genai as og

    model = og.Model(str(folder))
    params = og.GeneratorParams(model)
    length = len(PROMPT) + tokens
    params.set_search_options(do_sample=False, max_length=length, min_length=length)
    generator = og.Generator(model, params)
    generator.append_tokens(np.array([PROMPT], np.int64))
    while not generator.is_done():
        generator.generate_next_token()
    return [int(t) for t in generator.get_sequence(0)][len(PROMPT):]


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--levels", default="0,1,2,3,4")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--init-std", type=float, default=0.02, help="the random weights' std (default 0.02)")
    parser.add_argument("--dir", help="work folder (default: a temporary one)")
    ns = parser.parse_args()
    import torchlib.genai
    from torchlib.genai import demo_folders

    work = Path(ns.dir) if ns.dir else Path(tempfile.mkdtemp(prefix="bench_levels_"))
    model = demo_folders.write("llama", work / "model", initializer_range=ns.init_std, **demo_folders.BENCH_LLAMA)
    levels = [int(x) for x in ns.levels.split(",")]
    folders = {"fp32": work / "fp32"}
    torchlib.genai.build(model, folders["fp32"])
    for level in levels:
        folders[f"int4 level {level}"] = work / f"int4_level{level}"
        torchlib.genai.build(model, folders[f"int4 level {level}"], precision="int4", accuracy_level=level)
    config = json.loads((folders["fp32"] / "genai_config.json").read_text())["model"]["decoder"]
    kv, size = config["num_key_value_heads"], config["head_size"]
    generated = greedy(folders["fp32"], ns.tokens)
    sequence = PROMPT + generated
    positions = slice(len(PROMPT) - 1, len(sequence) - 1)  # the logits that predict the generated tokens
    logits = {}
    for name, folder in folders.items():
        s = session(folder)
        logits[name] = s.run(["logits"], feeds(s, sequence, 0, kv, size))[0][0, positions]
    reference = logits["fp32"]
    base = f"int4 level {levels[0]}"

    def drift(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
        """(max abs error, mean KL(a || b) per token, top-1 agreement) of logits b against a."""
        la, lb = log_softmax(a), log_softmax(b)
        return (float(np.abs(a - b).max()), float((np.exp(la) * (la - lb)).sum(-1).mean()),
                float((a.argmax(-1) == b.argmax(-1)).mean()))

    free = {name: greedy(folders[name], ns.tokens) for name in folders if name != "fp32"}
    rows = []
    for name in free:
        err, kl, top1 = drift(reference, logits[name])
        err0, kl0, top10 = drift(logits[base], logits[name])
        same = sum(a == b for a, b in zip(free[name], generated))
        first = next((i for i, (a, b) in enumerate(zip(free[name], generated)) if a != b), None)
        same0 = sum(a == b for a, b in zip(free[name], free[base]))
        rows.append({"folder": name, "max_abs_logit_error": err, "mean_kl": kl, "top1_teacher_forced": top1,
                     "greedy_equal": same, "first_difference": first, "vs_level0_max_abs": err0, "vs_level0_kl": kl0,
                     "vs_level0_top1": top10, "vs_level0_greedy_equal": same0})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    sessions = {name: session(folder) for name, folder in folders.items()}
    inputs = {name: feeds(s, [5], 128, kv, size) for name, s in sessions.items()}
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(ns.runs):
        for name, s in sessions.items():
            start = time.perf_counter()
            s.run(None, inputs[name])
            times[name].append(time.perf_counter() - start)
    step = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    print(json.dumps({"decode_step_ms_past_128": {k: round(v, 3) for k, v in step.items()}}), flush=True)
    scale = float(np.abs(reference).max())
    print(f"\nfloat32 logits up to {scale:.2f} in magnitude; {ns.tokens} tokens; weights' std {ns.init_std}; "
          f"load average {os.getloadavg()[0]:.2f}\n")
    print("| int4, accuracy level | against float32: max abs logit error / mean KL / top-1 (teacher-forced) / "
          "greedy tokens equal (first difference) | against int4 level 0: max abs / mean KL / top-1 / greedy equal | "
          "decode step, past 128 |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['folder'].removeprefix('int4 level ')} | {row['max_abs_logit_error']:.3g} / {row['mean_kl']:.2e} / "
              f"{row['top1_teacher_forced']:.3f} / {row['greedy_equal']}/{ns.tokens} ({row['first_difference']}) | "
              f"{row['vs_level0_max_abs']:.3g} / {row['vs_level0_kl']:.2e} / {row['vs_level0_top1']:.3f} / "
              f"{row['vs_level0_greedy_equal']}/{ns.tokens} | {step[row['folder']]:.2f} ms |")
    print(f"| float32 | 0 | | {step['fp32']:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
