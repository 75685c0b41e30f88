"""onnxruntime-genai: torchlib's folder against its own model builder's, from one saved checkpoint.

    python bench/bench_genai.py [--tokens 200] [--rounds 7] [--runs 200] [--threads 1] [--accuracy-level 4]

1. A LlamaForCausalLM with random weights (hidden 512, 4 layers, 8 heads over 4 KV heads, MLP
   1376, vocab 32000, context 2048: bench_decode.py's) saved with `save_pretrained`, and a BPE
   tokenizer trained by the `tokenizers` package (torchlib/genai/demo_folders.py): no download.
2. Folders built from it: onnxruntime-genai's builder (`python -m onnxruntime_genai.models.builder
   -i MODEL -o OUT -p fp32|int4 -e cpu`, accuracy_level given), and `torchlib.genai.build` with
   the onnxruntime target (the default) and the standard one (`target="onnx"`). int4: blocks of
   32, symmetric, the same accuracy level for both.
3. Per folder: nodes; fp32: the greedy tokens onnxruntime-genai generates against HF
   `generate`'s (same prompt, `--tokens` new ones); tokens/s of `--tokens` greedy tokens in
   onnxruntime-genai (min_length set, so that none stops early), the folders run in turn, round
   after round, median of `--rounds`; the decode step (one token, batch 1) in plain onnxruntime
   after a past of 128 and 1024 (past tensors of that length, no shared buffer), sessions timed
   run by run in alternation, median of `--runs`.

Each time is taken twice: wall clock, and the CPU time of this process (`time.process_time`:
with one thread, what the run costs whatever else the machine runs; on a machine shared with
other work the wall clock also counts the time the process waited for a core). The ratio to the
builder is the median, over rounds (runs), of the ratio within each round (run): the folders of
one round ran seconds apart, under the same load.

Every session runs `--threads` intra-op threads (genai_config.json's session_options for
onnxruntime-genai), all graph optimizations. Prints one JSON line per measurement, then a table.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from torchlib.conformance import torchvision_reference

torchvision_reference.register()  # transformers imports torchvision, whose CUDA-built ops do not load here

PROMPT = [5, 17, 99, 250, 1000, 7, 3, 4242, 31000, 12]


def build_builder(model: Path, out: Path, precision: str, accuracy_level: int, cache: Path) -> float:
    """onnxruntime-genai's model builder, in a process of its own (as a user runs it)."""
    code = ("from torchlib.conformance import torchvision_reference; torchvision_reference.register()\n"
            "import runpy, sys; sys.argv = ['builder'] + sys.argv[1:]\n"
            "runpy.run_module('onnxruntime_genai.models.builder', run_name='__main__')")  # fmt: skip
    args = ["-i", str(model), "-o", str(out), "-p", precision, "-e", "cpu", "-c", str(cache)]
    if precision == "int4":
        args += ["--extra_options", f"accuracy_level={accuracy_level}", "block_size=32"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the builder failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - start


def build_ours(model: Path, out: Path, precision: str, accuracy_level: int, target: str) -> float:
    import torchlib.genai

    start = time.perf_counter()
    torchlib.genai.build(model, out, precision=precision, accuracy_level=accuracy_level, target=target)
    return time.perf_counter() - start


def set_threads(folder: Path, threads: int) -> None:
    path = folder / "genai_config.json"
    config = json.loads(path.read_text())
    config["model"]["decoder"]["session_options"]["intra_op_num_threads"] = threads
    path.write_text(json.dumps(config, indent=4))


def nodes(folder: Path) -> tuple[int, dict[str, int]]:
    import onnx

    proto = onnx.load(folder / "model.onnx", load_external_data=False)
    return len(proto.graph.node), dict(collections.Counter(n.op_type for n in proto.graph.node).most_common())


def genai_tokens(folder: Path, new_tokens: int, og) -> tuple[list[int], float, float]:
    """(the sequence, wall seconds, CPU seconds of the new tokens) for a greedy run of exactly new_tokens."""
    model = og.Model(str(folder))
    params = og.GeneratorParams(model)
    length = len(PROMPT) + new_tokens
    params.set_search_options(do_sample=False, max_length=length, min_length=length)
    generator = og.Generator(model, params)
    start, cpu = time.perf_counter(), time.process_time()
    generator.append_tokens(np.array([PROMPT], np.int64))
    while not generator.is_done():
        generator.generate_next_token()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return [int(t) for t in generator.get_sequence(0)], seconds, cpu


def hf_tokens(model: Path, new_tokens: int) -> list[int]:
    import torch
    import transformers

    hf = transformers.AutoModelForCausalLM.from_pretrained(model).eval()
    prompt = torch.tensor([PROMPT])
    with torch.no_grad():
        out = hf.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens,
                          min_new_tokens=new_tokens, do_sample=False)  # fmt: skip
    return out[0].tolist()


def decode_step_ms(folders: dict[str, Path], past: int, runs: int, threads: int) -> dict[str, dict[str, list[float]]]:
    """Per folder, {"wall": [ms per run], "cpu": [ms per run]}, the runs alternated."""
    import onnxruntime as ort

    sessions = {}
    for name, folder in folders.items():
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        config = json.loads((folder / "genai_config.json").read_text())["model"]["decoder"]
        level = config["session_options"].get("session.qdq_matmulnbits_accuracy_level")
        if level is not None:
            options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", level)
        session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        feeds = {}
        for i in session.get_inputs():
            if i.name == "input_ids":
                feeds[i.name] = np.array([[5]], np.int64)
            elif i.name == "attention_mask":
                feeds[i.name] = np.ones((1, past + 1), np.int64)
            elif i.name == "position_ids":
                feeds[i.name] = np.array([[past]], np.int64)
            else:
                feeds[i.name] = rng.standard_normal((1, config["num_key_value_heads"], past, config["head_size"]),
                                                    dtype=np.float32)  # fmt: skip
        sessions[name] = (session, feeds)
    times: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in sessions}
    for _ in range(5):
        for session, feeds in sessions.values():
            session.run(None, feeds)
    for _ in range(runs):
        for name, (session, feeds) in sessions.items():
            start, cpu = time.perf_counter(), time.process_time()
            session.run(None, feeds)
            times[name]["wall"].append((time.perf_counter() - start) * 1e3)
            times[name]["cpu"].append((time.process_time() - cpu) * 1e3)
    return times


def builder_of(name: str) -> str:
    return name.replace("torchlib standard", "builder").replace("torchlib", "builder")


def paired_ratio(mine: list[float], builder: list[float]) -> float:
    """The median over rounds of builder / mine (times: above 1, mine is faster)."""
    return statistics.median(b / m for m, b in zip(mine, builder))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200, help="new tokens per generation (default 200)")
    parser.add_argument("--rounds", type=int, default=7, help="generations per folder, alternated (default 7)")
    parser.add_argument("--runs", type=int, default=200, help="decode steps per session, alternated (default 200)")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads of every session (default 1)")
    parser.add_argument("--accuracy-level", type=int, default=4, help="int4 MatMulNBits accuracy level (default 4)")
    parser.add_argument("--past", default="128,1024", help="past lengths of the decode step (default 128,1024)")
    parser.add_argument("--dir", help="work folder (default: a temporary one, removed)")
    ns = parser.parse_args()
    import onnxruntime_genai as og

    from torchlib.genai import demo_folders

    work = Path(ns.dir) if ns.dir else Path(tempfile.mkdtemp(prefix="bench_genai_"))
    model = demo_folders.write("llama", work / "model", **demo_folders.BENCH_LLAMA)
    folders: dict[str, Path] = {}
    for precision in ("fp32", "int4"):
        for who, target in (("builder", None), ("torchlib", "onnxruntime"), ("torchlib standard", "onnx")):
            name = f"{who} {precision}"
            out = work / name.replace(" ", "_")
            if target is None:
                seconds = build_builder(model, out, precision, ns.accuracy_level, work / "builder_cache")
            else:
                seconds = build_ours(model, out, precision, ns.accuracy_level, target)
            set_threads(out, ns.threads)
            count, ops = nodes(out)
            folders[name] = out
            print(json.dumps({"folder": name, "build_s": round(seconds, 1), "nodes": count, "ops": ops}), flush=True)
    expected = hf_tokens(model, ns.tokens)
    equal = {}
    for name, folder in folders.items():
        if name.endswith("fp32"):
            tokens, _, _ = genai_tokens(folder, ns.tokens, og)
            same = sum(a == b for a, b in zip(tokens[len(PROMPT):], expected[len(PROMPT):]))
            equal[name] = f"{same}/{ns.tokens}" + (" (all)" if tokens == expected else "")
            print(json.dumps({"folder": name, "tokens_equal_to_generate": equal[name]}), flush=True)
    wall: dict[str, list[float]] = {name: [] for name in folders}  # seconds per generation, round by round
    cpu: dict[str, list[float]] = {name: [] for name in folders}
    for _ in range(ns.rounds):
        for name, folder in folders.items():
            _, seconds, cpu_seconds = genai_tokens(folder, ns.tokens, og)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
    print(json.dumps({"tokens_per_s_wall": {k: [round(ns.tokens / x, 1) for x in v] for k, v in wall.items()},
                      "tokens_per_s_cpu": {k: [round(ns.tokens / x, 1) for x in v] for k, v in cpu.items()}}),
          flush=True)  # fmt: skip
    pasts = [int(p) for p in ns.past.split(",")]
    steps: dict[tuple[str, int], dict[str, list[float]]] = {}
    for past in pasts:
        for precision in ("fp32", "int4"):
            chosen = {k: v for k, v in folders.items() if k.endswith(precision)}
            steps.update({(k, past): v for k, v in decode_step_ms(chosen, past, ns.runs, ns.threads).items()})
        print(json.dumps({"past": past, "decode_step_ms_median": {k: {c: round(statistics.median(t[c]), 3) for c in t}
                                                                  for (k, p), t in steps.items() if p == past}}),
              flush=True)  # fmt: skip
    print(f"\n{ns.tokens} tokens, {ns.threads} thread(s), accuracy level {ns.accuracy_level} for int4, {ns.rounds} rounds, "
          f"{ns.runs} decode steps; load average {os.getloadavg()[0]:.2f} at the end\n")
    for clock, times in (("CPU time", cpu), ("wall clock", wall)):
        key = "cpu" if clock == "CPU time" else "wall"
        print(f"{clock}: tokens/s median (ratio: median of the rounds' ratios); decode step median (ratio likewise)\n")
        print("| folder | nodes | tokens = generate (fp32) | tokens/s (genai) | " +
              " | ".join(f"decode step, past {p}" for p in pasts) + " |")
        print("|---|---|---|---|" + "---|" * len(pasts))
        for name, folder in folders.items():
            builder = builder_of(name)
            speed = statistics.median(ns.tokens / x for x in times[name])
            cells = " | ".join(f"{statistics.median(steps[(name, p)][key]):.2f} ms "
                               f"({paired_ratio(steps[(name, p)][key], steps[(builder, p)][key]):.2f}x)" for p in pasts)  # fmt: skip
            print(f"| {name} | {nodes(folder)[0]} | {equal.get(name, '-')} | {speed:.1f} "
                  f"({paired_ratio(times[name], times[builder]):.2f}x) | {cells} |")
        print()
    print("(x: the builder's time over this folder's, or this folder's tokens/s over the builder's: above 1 is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
