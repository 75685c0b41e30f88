"""`python -m torchlib genai` on a checkpoint bigger than memory: peak RSS against 2 GiB + the largest tensor.

    python bench/bench_genai_big.py [--preset 7b|1b|small] [--layers N] [--dir DIR] [--keep]

1. `write`: a Hugging Face Llama folder (config.json, model.safetensors, a tokenizer): 7b is
   Llama-2-7B's shape (hidden 4096, 32 layers, 32 heads, MLP 11008, vocab 32000, float32,
   25.1 GiB), random normal weights (std 0.02) written tensor by tensor under transformers'
   own names (`write_safetensors`), never the whole model in memory.
2. `genai`: `python -m torchlib genai FOLDER -o OUT` (fp32, the onnxruntime target) in a process
   of its own: wall time, that process's peak RSS (`ru_maxrss`, which counts the pages of the
   mapped checkpoint it holds as well), nodes, the bytes written.

Needs the checkpoint's size twice on disk (the checkpoint and model.onnx.data), both removed at
the end unless --keep. Prints one JSON line per step and a summary.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

GIB = 2**30
PRESETS = {
    "7b": dict(vocab_size=32000, hidden_size=4096, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
               intermediate_size=11008, max_position_embeddings=4096),
    "1b": dict(vocab_size=32000, hidden_size=2048, num_hidden_layers=16, num_attention_heads=16, num_key_value_heads=16,
               intermediate_size=5632, max_position_embeddings=2048),
    "small": dict(vocab_size=8000, hidden_size=1024, num_hidden_layers=6, num_attention_heads=16, num_key_value_heads=8,
                  intermediate_size=2816, max_position_embeddings=2048),
}  # fmt: skip
_PRELUDE = ("import sys; sys.path.insert(0, {root!r})\n"
            "from torchlib.conformance import torchvision_reference; torchvision_reference.register()\n")  # fmt: skip


def job_write(folder: Path, sizes: dict) -> dict:
    import numpy as np
    import torch
    import transformers

    from graph_builder.weight_sources import write_safetensors
    from torchlib.genai import demo_folders
    from torchlib.genai.model_folder import parameters_on_meta

    config = transformers.LlamaConfig(**sizes, **demo_folders.SPECIAL)
    with parameters_on_meta():
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    specs = {name: (np.float32, tuple(p.shape)) for name, p in model.named_parameters()}
    rng = np.random.default_rng(0)

    def arrays():
        for _, shape in specs.values():
            if len(shape) == 1:  # norm weights
                yield (1.0 + 0.1 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
            else:
                yield rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)

    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    write_safetensors(folder / "model.safetensors", specs, arrays())
    config.save_pretrained(folder)
    demo_folders.tokenizer().save_pretrained(folder)
    largest = max(int(np.prod(shape)) * 4 for _, shape in specs.values())
    return {"write_s": round(time.perf_counter() - start, 1), "checkpoint_bytes": os.path.getsize(folder / "model.safetensors"),
            "tensors": len(specs), "largest_tensor": largest}  # fmt: skip


def job_genai(folder: Path, out: Path) -> dict:
    import resource

    import onnx

    from torchlib.__main__ import main as torchlib_main

    start = time.perf_counter()
    code = torchlib_main(["genai", str(folder), "-o", str(out)])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if code != 0:
        raise RuntimeError(f"python -m torchlib genai exited with {code}")
    proto = onnx.load(out / "model.onnx", load_external_data=False)
    return {"genai_s": round(seconds, 1), "peak_rss": peak, "nodes": len(proto.graph.node),
            "data_bytes": os.path.getsize(out / "model.onnx.data"), "files": sorted(os.listdir(out))}  # fmt: skip


def _child(step: str, *args: str) -> dict:
    root = str(Path(__file__).resolve().parents[1])
    code = _PRELUDE.format(root=root) + f"import runpy; sys.argv = [{__file__!r}, '--child', *sys.argv[1:]]\n" \
        f"runpy.run_path({__file__!r}, run_name='__main__')"  # fmt: skip
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    proc = subprocess.run([sys.executable, "-c", code, step, *args], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{step} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="7b", choices=sorted(PRESETS))
    parser.add_argument("--layers", type=int, help="override the preset's layer count")
    parser.add_argument("--dir", default=os.path.join(os.environ.get("BENCH_TMP", "/tmp"), "bench_genai_big"))
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    sizes = dict(PRESETS[ns.preset], **({"num_hidden_layers": ns.layers} if ns.layers else {}))
    if ns.child:
        step, *rest = ns.child
        result = job_write(Path(rest[0]), sizes) if step == "write" else job_genai(Path(rest[0]), Path(rest[1]))
        print(json.dumps(result))
        return 0
    work = Path(ns.dir)
    folder, out = work / "model", work / "out"
    common = ["--preset", ns.preset] + (["--layers", str(ns.layers)] if ns.layers else [])
    h, layers, mlp, vocab = sizes["hidden_size"], sizes["num_hidden_layers"], sizes["intermediate_size"], sizes["vocab_size"]
    need = 2 * 4 * (2 * vocab * h + layers * (4 * h * h + 3 * h * mlp))
    free = shutil.disk_usage(work.parent if not work.exists() else work).free
    print(f"needs {need / GIB:.1f} GiB of disk, {free / GIB:.1f} GiB free", flush=True)
    if need > free - 5 * GIB:
        print("not enough disk (5 GiB are left for others): use a smaller --layers", file=sys.stderr)
        return 1
    try:
        written = _child("write", str(folder), *common)
        print(json.dumps({"step": "write", **written}), flush=True)
        built = _child("genai", str(folder), str(out), *common)
        print(json.dumps({"step": "genai", **built}), flush=True)
    finally:
        if not ns.keep:
            shutil.rmtree(work, ignore_errors=True)
    limit = 2 * GIB + written["largest_tensor"]
    print(f"\n{ns.preset}{f' ({ns.layers} layers)' if ns.layers else ''}: checkpoint {written['checkpoint_bytes'] / GIB:.2f} GiB "
          f"({written['tensors']} tensors, written in {written['write_s']:.0f} s)\n"
          f"python -m torchlib genai: {built['genai_s']:.0f} s, {built['nodes']} nodes, {built['data_bytes'] / GIB:.2f} GiB "
          f"of external data; peak RSS {built['peak_rss'] / GIB:.2f} GiB against 2 GiB + the largest tensor "
          f"({written['largest_tensor'] / GIB:.2f} GiB) = {limit / GIB:.2f} GiB: "
          f"{'within' if built['peak_rss'] <= limit else 'OVER'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
