"""A model bigger than memory: export from the meta device with weights=<safetensors checkpoint>.

    python bench/bench_meta_export.py [--preset 7b|1b|small] [--layers N] [--dir DIR] [--keep]

Steps, each in its own subprocess (peak RSS is that process's `ru_maxrss`, which counts the
pages of the mapped checkpoint it holds as well as its own memory):

1. `write`: a Llama-shaped checkpoint (torchlib.exporter.decoder.Decoder; 7b: hidden 4096,
   32 layers, 32 heads, MLP 11008, vocab 32000, 6.74 B float32 parameters, 25.1 GiB) with random
   normal weights (std 0.02), written tensor by tensor (`write_safetensors`).
2. `export`: the model is built on the meta device, exported with `weights=<the file>` and
   saved with external data: wall time, peak RSS, the largest tensor.
3. `check`: every saved initializer's bytes against the checkpoint, both mapped and compared
   tensor by tensor (a folded weight transpose against the checkpoint tensor's transpose).
4. `cut`: the first 2 layers of the same checkpoint (with its embedding, norm and head), built
   on the meta device, exported with the checkpoint's tensors for those names, run in
   onnxruntime and compared with torch eager running on the same tensors.

Needs the checkpoint's size twice on disk (checkpoint and the ONNX model's data file), both
removed at the end unless --keep. Prints one JSON line per step and a summary.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

GIB = 2**30
PRESETS = {
    "7b": dict(vocab=32000, hidden=4096, layers=32, heads=32, intermediate=11008),
    "1b": dict(vocab=32000, hidden=2048, layers=16, heads=16, intermediate=5632),
    "small": dict(vocab=8000, hidden=1024, layers=6, heads=16, intermediate=2816),  # ~ 270 MB
}


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _config(preset: str, layers: int | None):
    from torchlib.exporter.decoder import DecoderConfig

    fields = dict(PRESETS[preset])
    if layers is not None:
        fields["layers"] = layers
    return DecoderConfig(max_seq=256, **fields)


def _meta_model(config):
    import torch

    from torchlib.exporter.decoder import Decoder, _rotary_tables

    with torch.device("meta"):
        model = Decoder(config).eval()
    model.cos, model.sin = _rotary_tables(config)  # non-persistent buffers: computed, never in a checkpoint
    return model


def _ids(config, n: int = 16):
    import torch

    return torch.randint(0, config.vocab, (1, n), generator=torch.Generator().manual_seed(0))


def job_write(config, path: str) -> dict:
    import numpy as np

    from graph_builder.weight_sources import write_safetensors

    model = _meta_model(config)
    specs = {name: (np.float32, tuple(t.shape)) for name, t in model.state_dict().items()}
    rng = np.random.default_rng(0)

    def arrays():
        for name, (_, shape) in specs.items():
            if len(shape) == 1:  # norm weights
                yield (1.0 + 0.1 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
            else:
                yield rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)

    start = time.perf_counter()
    write_safetensors(path, specs, arrays())
    return {"write_s": time.perf_counter() - start, "bytes": os.path.getsize(path), "tensors": len(specs),
            "parameters": config.parameters, "peak_rss_write": _peak_rss()}  # fmt: skip


def job_export(config, path: str, onnx_path: str) -> dict:
    import torchlib
    from graph_builder.weight_sources import read_header

    model = _meta_model(config)
    ids = _ids(config)
    header, _, _ = read_header(path)
    largest = max(e["data_offsets"][1] - e["data_offsets"][0] for e in header.values())
    rss_before = _rss()
    start = time.perf_counter()
    result = torchlib.export(model, (ids,), weights=path)
    export_s = time.perf_counter() - start
    peak_export = _peak_rss()
    start = time.perf_counter()
    result.save(onnx_path, external_data=True)
    save_s = time.perf_counter() - start
    return {"export_s": export_s, "save_s": save_s, "rss_before_export": rss_before, "peak_rss_export": peak_export,
            "peak_rss": _peak_rss(), "largest_tensor": largest, "nodes": result.node_count,
            "initializers": len(result.graph.initializers), "data_bytes": os.path.getsize(onnx_path + ".data"),
            "diagnostics": result.diagnostics, "timings": result.timings}  # fmt: skip


def job_check(path: str, onnx_path: str) -> dict:
    """Each saved initializer against the checkpoint, one tensor at a time (both files mapped,
    each tensor's pages given back after its comparison)."""
    import numpy as np
    import onnx

    from graph_builder import types
    from graph_builder.weight_sources import map_file, open_safetensors, release

    checkpoint = open_safetensors(path)
    model = onnx.load(onnx_path, load_external_data=False)
    data = map_file(onnx_path + ".data")
    same = transposed = 0
    unmatched: list[str] = []
    computed: list[str] = []  # not from the checkpoint (the rotary tables, computed by the model)
    for t in model.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        offset, length = int(info["offset"]), int(info["length"])
        saved = data[offset:offset + length].view(types.from_onnx(t.data_type).numpy).reshape(tuple(t.dims))
        name = t.name.removesuffix("_folded")
        source = checkpoint.get(name)
        if source is None:
            computed.append(t.name)
        elif source.shape == saved.shape and np.array_equal(source, saved):
            same += 1
        elif source.ndim == 2 and source.T.shape == saved.shape and np.array_equal(source.T, saved):
            transposed += 1
        else:
            unmatched.append(t.name)
        if source is not None:
            release(source)
        release(saved)
    return {"initializers_equal": same, "initializers_equal_transposed": transposed, "unmatched": unmatched,
            "computed": computed, "peak_rss_check": _peak_rss()}  # fmt: skip


def job_cut(config, path: str) -> dict:
    import dataclasses

    import numpy as np
    import torch

    import torchlib
    from graph_builder.arrays import torch_view
    from graph_builder.weight_sources import open_safetensors

    cut = dataclasses.replace(config, layers=2)
    checkpoint = open_safetensors(path)
    model = _meta_model(cut)
    weights = {k: checkpoint[k] for k in model.state_dict()}
    ids = _ids(cut)
    result = torchlib.export(model, (ids,), weights=weights)
    onnx_logits = result(ids).numpy()
    eager = _meta_model(cut)
    eager.load_state_dict({k: torch_view(v) for k, v in weights.items()}, assign=True, strict=False)
    with torch.no_grad():
        torch_logits = eager(ids).numpy()
    diff = np.abs(onnx_logits.astype(np.float64) - torch_logits)
    scale = float(np.abs(torch_logits).max())
    return {"cut_layers": 2, "cut_parameters": cut.parameters, "cut_max_abs": float(diff.max()), "cut_scale": scale,
            "cut_ok": bool(diff.max() <= 1e-4 * max(1.0, scale)), "peak_rss_cut": _peak_rss()}  # fmt: skip


def _child(*args: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{args[0]} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(preset: str, layers: int | None, directory: str, keep: bool) -> dict:
    """All four steps; returns their results merged (the test calls this with a small preset)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "checkpoint.safetensors")
    onnx_path = os.path.join(directory, "model.onnx")
    common = ["--preset", preset] + (["--layers", str(layers)] if layers is not None else [])
    out: dict = {"preset": preset}
    try:
        for step, files in (("write", [path]), ("export", [path, onnx_path]), ("check", [path, onnx_path]), ("cut", [path])):
            r = _child(step, *files, *common)
            print(json.dumps({"step": step, **r}), flush=True)
            out.update(r)
    finally:
        if not keep:
            for p in (path, onnx_path, onnx_path + ".data"):
                if os.path.exists(p):
                    os.remove(p)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="7b", choices=sorted(PRESETS))
    parser.add_argument("--layers", type=int, default=None, help="override the preset's layer count")
    parser.add_argument("--dir", default=os.path.join(os.environ.get("BENCH_TMP", "/tmp"), "bench_meta_export"))
    parser.add_argument("--keep", action="store_true", help="keep the checkpoint and the ONNX files")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        step, *files = ns.child
        config = _config(ns.preset, ns.layers)
        r = {"write": lambda: job_write(config, *files), "export": lambda: job_export(config, *files),
             "check": lambda: job_check(*files), "cut": lambda: job_cut(config, *files)}[step]()  # fmt: skip
        print(json.dumps(r))
        return 0
    need = 2 * _config(ns.preset, ns.layers).parameters * 4
    free = shutil.disk_usage(os.path.dirname(os.path.abspath(ns.dir)) if not os.path.exists(ns.dir) else ns.dir).free
    print(f"needs {need / GIB:.1f} GiB of disk, {free / GIB:.1f} GiB free", flush=True)
    if need > free - 5 * GIB:
        print("not enough disk (5 GiB are left for others): use a smaller --layers", file=sys.stderr)
        return 1
    r = run(ns.preset, ns.layers, ns.dir, ns.keep)
    print(f"\n{ns.preset}{f' ({ns.layers} layers)' if ns.layers else ''}: {r['parameters'] / 1e9:.2f} B parameters, "
          f"checkpoint {r['bytes'] / GIB:.2f} GiB (written in {r['write_s']:.0f} s)\n"
          f"export {r['export_s']:.1f} s + save {r['save_s']:.1f} s; peak RSS {r['peak_rss'] / GIB:.2f} GiB "
          f"(before export {r['rss_before_export'] / GIB:.2f} GiB; largest tensor {r['largest_tensor'] / GIB:.2f} GiB; "
          f"limit 2 GiB + largest = {(2 * GIB + r['largest_tensor']) / GIB:.2f} GiB)\n"
          f"saved initializers equal to the checkpoint: {r['initializers_equal']} as stored, "
          f"{r['initializers_equal_transposed']} transposed, {len(r['unmatched'])} unmatched {r['unmatched'][:5]},"
          f" {len(r['computed'])} computed by the model (not in the checkpoint)\n"
          f"2-layer cut vs torch: max abs {r['cut_max_abs']:.2e} (logits scale {r['cut_scale']:.2f}), ok={r['cut_ok']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
