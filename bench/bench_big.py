"""Big models: export time and peak memory over 2 GB of weights, torchlib vs the reference.

    python bench/bench_big.py [--only linear,reference,decoder,scaling] [--markdown]

Each measurement runs in its own subprocess, one at a time (peak RSS is the subprocess's
`ru_maxrss`; the model is built there first, so the weights are part of it):

- `linear`: 9 x Linear(8192, 8192, bias=False), 2.4 GB of float32 weights. torchlib exports,
  saves (external data), loads the file in onnxruntime and runs it, and verifies.
- `reference`: the same model through `torch.onnx.export(..., dynamo=True)` (onnxscript).
- `decoder`: a Llama-style decoder, hidden 2048, 16 layers, vocab 32000 (about 1 B float32
  parameters, random weights): export and verify.
- `scaling`: export time of the same decoder with 2, 4, 8, 16 and 32 layers (weights left
  uninitialized: export does not read them).

Both exporters first export a tiny model in the same process (imports, registries), then the
big one is timed. Needs about 10 GB of memory at its peak (onnxruntime's session for verify).
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
import warnings

GIB = 2**30


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _nbytes(model) -> int:
    return sum(t.numel() * t.element_size() for t in model.state_dict().values())


def _linear_model():
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(8192, 8192, bias=False) for _ in range(9)]).eval()
    return model, (torch.randn(2, 8192),)


def _warm_up(export) -> None:
    import torch
    from torch import nn

    export(nn.Sequential(nn.Linear(4, 4), nn.ReLU()).eval(), (torch.randn(1, 4),))


def _reference_export(model, args):
    import torch

    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.onnx.export(model, args, dynamo=True, verbose=False)


def job_linear(tmp: str) -> dict:
    import onnxruntime as ort
    import torch

    import torchlib

    model, args = _linear_model()
    _warm_up(torchlib.export)
    out = {"weights_bytes": _nbytes(model), "rss_before_export": _rss()}
    start, cpu = time.perf_counter(), time.process_time()
    result = torchlib.export(model, args)
    out["export_s"], out["export_cpu_s"] = time.perf_counter() - start, time.process_time() - cpu
    out["peak_rss_export"] = _peak_rss()
    path = os.path.join(tmp, "linear9.onnx")
    start = time.perf_counter()
    result.save(path)
    out["save_s"] = time.perf_counter() - start
    out["file_bytes"] = os.path.getsize(path)
    out["data_bytes"] = os.path.getsize(path + ".data")
    start = time.perf_counter()
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {result.graph.inputs[0].name: args[0].numpy()})
    out["ort_load_run_s"] = time.perf_counter() - start
    del session
    with torch.no_grad():
        expected = model(*args)
    out["saved_max_abs"] = float((torch.from_numpy(got) - expected).abs().max())
    start = time.perf_counter()
    (diff,) = result.verify(*args)
    out["verify_s"] = time.perf_counter() - start
    out["verify_max_abs"], out["verify_ok"] = diff.max_abs, diff.ok()
    return out


def job_reference(tmp: str) -> dict:
    model, args = _linear_model()
    _warm_up(_reference_export)
    out = {"weights_bytes": _nbytes(model), "rss_before_export": _rss()}
    start, cpu = time.perf_counter(), time.process_time()
    _reference_export(model, args)
    out["export_s"], out["export_cpu_s"] = time.perf_counter() - start, time.process_time() - cpu
    out["peak_rss_export"] = _peak_rss()
    return out


def _decoder(layers: int, init: bool):
    import torch

    from torchlib.exporter.decoder import DecoderConfig, decoder

    config = DecoderConfig(layers=layers)
    model = decoder(config, init=init)
    idx = torch.randint(0, config.vocab, (1, 32), generator=torch.Generator().manual_seed(0))
    return model, (idx,), config


def job_decoder(tmp: str) -> dict:
    import torchlib

    model, args, config = _decoder(16, init=True)
    _warm_up(torchlib.export)
    out = {"parameters": config.parameters, "weights_bytes": _nbytes(model), "rss_before_export": _rss()}
    start, cpu = time.perf_counter(), time.process_time()
    result = torchlib.export(model, args)
    out["export_s"], out["export_cpu_s"] = time.perf_counter() - start, time.process_time() - cpu
    out["peak_rss_export"] = _peak_rss()
    out["nodes"] = result.node_count
    start = time.perf_counter()
    (diff,) = result.verify(*args)
    out["verify_s"] = time.perf_counter() - start
    out["verify_max_abs"], out["verify_max_rel"], out["verify_ok"] = diff.max_abs, diff.max_rel, diff.ok()
    out["peak_rss_verify"] = _peak_rss()
    return out


def job_layers(tmp: str, layers: int) -> dict:
    import torchlib

    model, args, config = _decoder(layers, init=False)
    _warm_up(torchlib.export)
    start, cpu = time.perf_counter(), time.process_time()
    result = torchlib.export(model, args)
    return {"layers": layers, "parameters": config.parameters, "export_s": time.perf_counter() - start,
            "export_cpu_s": time.process_time() - cpu, "nodes": result.node_count, "timings": result.timings}  # fmt: skip


def _child(job: str, *extra: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, __file__, "--child", job, *extra], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{job} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="linear,reference,decoder,scaling")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        import tempfile

        job, *extra = ns.child
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
            fn = {"linear": job_linear, "reference": job_reference, "decoder": job_decoder, "layers": job_layers}[job]
            out = fn(tmp, *map(int, extra))
        print(json.dumps(out))
        return 0
    wanted = ns.only.split(",")
    results: dict = {}
    for job in ("linear", "reference", "decoder"):
        if job in wanted:
            results[job] = _child(job)
            _report(job, results[job])
    if "scaling" in wanted:
        rows = [_child("layers", str(n)) for n in (2, 4, 8, 16, 32)]
        print("\n| layers | parameters | export s | export CPU s | CPU s per layer | torch.export s | translate s | nodes |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            t = r["timings"]
            print(f"| {r['layers']} | {r['parameters'] / 1e9:.2f} B | {r['export_s']:.2f} | {r['export_cpu_s']:.2f} "
                  f"| {r['export_cpu_s'] / r['layers']:.3f} "
                  f"| {t['torch.export']:.2f} | {t['translate']:.2f} | {r['nodes']} |")  # fmt: skip
    if "linear" in results and "reference" in results:
        ours, ref = results["linear"], results["reference"]
        print(f"\nexport time ours/reference: wall {ours['export_s'] / ref['export_s']:.2f}, "
              f"CPU {ours['export_cpu_s'] / ref['export_cpu_s']:.2f}; "
              f"peak RSS ours {ours['peak_rss_export'] / ours['weights_bytes']:.2f}x the weights, "
              f"reference {ref['peak_rss_export'] / ref['weights_bytes']:.2f}x")  # fmt: skip
    return 0


def _report(job: str, r: dict) -> None:
    weights = r["weights_bytes"]
    print(f"\n{job}: weights {weights / GIB:.2f} GiB, RSS before export {r['rss_before_export'] / GIB:.2f} GiB, "
          f"export {r['export_s']:.2f} s (CPU {r['export_cpu_s']:.2f} s), peak RSS through export {r['peak_rss_export'] / GIB:.2f} GiB "
          f"({r['peak_rss_export'] / weights:.2f}x the weights)")  # fmt: skip
    rest = {k: v for k, v in r.items() if k not in ("weights_bytes", "rss_before_export", "export_s", "export_cpu_s", "peak_rss_export")}
    print("  " + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in rest.items()))


if __name__ == "__main__":
    sys.exit(main())
