"""onnxruntime runs of the default export and of the reference counted by valgrind: instructions
and data-cache misses per run, for the vision bench's and bench_latency.py's models.

    python bench/bench_latency_callgrind.py [--models googlenet,bert,...] [--image 32] [--runs 5]
        [--timed-runs 300] [--reference-cache DIR] [--keep DIR] [--no-cache-sim] [--distinct-norms]

Each graph (torchlib's default export, the reference `torch.onnx.export(..., dynamo=True)`) gets
one process under callgrind (valgrind --tool=callgrind [--cache-sim=yes] --instr-atstart=no):
onnxruntime CPU, 1 thread, ORT_ENABLE_ALL (bench_latency.session), the session built and run
5 times uninstrumented, then `--runs` runs with instrumentation switched on around them only, so
neither the session's creation nor the warm-up is counted; glibc's fast bins are off
(GLIBC_TUNABLES=glibc.malloc.mxfast=0), whose occasional consolidation moved a small model's
count by up to 20 % from process to process. Vision models are exported as
bench_vision.py does (image `--image` or the model's minimum, batch 2, dynamic batch; the
reference cached in `--reference-cache` under the same keys), the small ones as bench_latency.py
does (its inputs, static shapes; cached as `small_NAME`).

Counts do not depend on what else runs on the machine, where wall-clock times do (2 cores shared
by several sessions move A/B latency ratios by +-15 %): a difference of a few tenths of a percent
is visible. They are a simulation, not time: instructions executed and a modelled cache's misses.
valgrind emulates no AVX-512, so onnxruntime's kernels (MLAS) take their AVX2 paths under it on a
machine whose native runs use AVX-512 (and an NCHWc block of 8 channels, not 16: a grouped
convolution of 8 channels per group is NCHWc under valgrind and NCHW natively, which changes the
graph onnxruntime runs). So each model is also timed natively: `--timed-runs` runs, the two
graphs alternated run by run (half in each session creation order), wall-clock median and mean
CPU time (`time.process_time`), with the load average.

Prints one JSON line per graph, then a table (per run; ratio: ours over the reference's).
`--keep DIR` leaves the two models and their inputs there (NAME.ours.onnx, NAME.reference.onnx,
NAME.npz) for onnxruntime's profiling or its optimized graph.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

COUNTS = {"instructions": r"I\s+refs:\s+([\d,]+)", "L1 data misses": r"D1\s+misses:\s+([\d,]+)",
          "last-level data misses": r"LLd\s+misses:\s+([\d,]+)"}  # fmt: skip
WARMUP = 5
CALLGRIND_H = "/usr/include/valgrind/callgrind.h"


TOGGLE_C = """#include <valgrind/callgrind.h>
void start(void) { CALLGRIND_START_INSTRUMENTATION; }
void stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""


def toggles(folder: str):
    """callgrind's start/stop client requests as a C library (gcc and valgrind's callgrind.h):
    exact at the Python call, where `callgrind_control -i on` from outside lands wherever the
    process is when valgrind's gdbserver answers (a shared machine moved such counts by up to 5 %)."""
    import ctypes

    source, library = Path(folder) / "toggle.c", Path(folder) / "toggle.so"
    source.write_text(TOGGLE_C)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(library), str(source)], check=True)
    return ctypes.CDLL(str(library))


def child(model_file: str, inputs_file: str, runs: int) -> None:
    """Build the session, run it WARMUP times, then `runs` times with callgrind counting."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()  # bench_latency.session's, without importing torch here
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(model_file, options, providers=["CPUExecutionProvider"])
    with np.load(inputs_file) as data:
        arrays = [data[f"arg{i}"] for i in range(len(data.files))]
    feed = {i.name: a for i, a in zip(sess.get_inputs(), arrays)}
    with tempfile.TemporaryDirectory() as tmp:
        toggle = toggles(tmp)
        for _ in range(WARMUP):
            sess.run(None, feed)
        gc.collect()  # Python's collector does not run in the counted runs
        gc.disable()
        toggle.start()
        for _ in range(runs):
            sess.run(None, feed)
        toggle.stop()


def count(model_file: Path, inputs_file: Path, runs: int, cache_sim: bool) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--cache-sim={'yes' if cache_sim else 'no'}",
                               "--instr-atstart=no", f"--callgrind-out-file={tmp}/out", sys.executable, __file__,
                               "--child", str(model_file), str(inputs_file), "--runs", str(runs)],
                              capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1", GLIBC_TUNABLES="glibc.malloc.mxfast=0"), check=False)  # fmt: skip
    found = {k: re.search(p, proc.stderr) for k, p in COUNTS.items() if cache_sim or k == "instructions"}
    if proc.returncode != 0 or not all(found.values()):
        raise RuntimeError(f"valgrind on {model_file} failed:\n{proc.stderr[-3000:]}")
    return {k: int(m.group(1).replace(",", "")) for k, m in found.items()}  # type: ignore[union-attr]


def timed(paths: list[Path], inputs: Path, runs: int) -> list[tuple[float, float]]:
    """(median wall ms, mean CPU ms) per graph, natively, the graphs alternated run by run: half
    of the runs with the sessions created in the given order, half with fresh ones created in the
    reverse order (bench_latency.latencies' scheme). CPU time (time.process_time) counts only
    this process's own cycles, so a loaded machine moves it less than the wall clock."""
    import time

    import numpy as np
    import onnx
    from bench_latency import session

    with np.load(inputs) as data:
        arrays = [data[f"arg{i}"] for i in range(len(data.files))]
    wall: list[list[float]] = [[] for _ in paths]
    cpu: list[list[float]] = [[] for _ in paths]
    for order in (list(range(len(paths))), list(range(len(paths)))[::-1]):
        sessions = {k: session(onnx.load(str(paths[k]))) for k in order}
        feeds = {k: {i.name: a for i, a in zip(s.get_inputs(), arrays)} for k, s in sessions.items()}
        for k in order:
            for _ in range(10):
                sessions[k].run(None, feeds[k])
        for _ in range(runs // 2):
            for k in order:
                start, start_cpu = time.perf_counter(), time.process_time()
                sessions[k].run(None, feeds[k])
                wall[k].append(time.perf_counter() - start)
                cpu[k].append(time.process_time() - start_cpu)
    return [(statistics.median(w) * 1e3, statistics.fmean(c) * 1e3) for w, c in zip(wall, cpu)]


def graphs(name: str, image: int, cache: Path | None, distinct_norms: bool = False):
    """(ours, reference, args) for a model of bench_vision.py or bench_latency.py."""
    import bench_latency
    import bench_vision
    import torch

    import torchlib

    if name in bench_vision.MODELS:
        factory, least, *channels = bench_vision.MODELS[name]
        torch.manual_seed(0)
        model = factory().eval()
        if distinct_norms:
            bench_vision._distinct_norms(model)
        size = max(image, least)
        args = (torch.randn(2, channels[0] if channels else 3, size, size),)
        dyn = ({0: torch.export.Dim("batch", min=1, max=64)},)
        ref, _ = bench_vision._cached_reference(
            model, args, dyn, cache, f"{name}_{size}" + ("_distinct_norms" if distinct_norms else "")
        )
        return torchlib.export(model, args, dynamic_shapes=dyn).model_proto, ref, args
    model, args = bench_latency.MODELS[name]()
    ref, _ = bench_vision._cached_reference(model, args, None, cache, f"small_{name}")
    return torchlib.export(model, args).model_proto, ref, args


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mobilenet_v3_small,googlenet,regnet_y_400mf,fastvit_t8,resnet,llama,bert,vit,lstm,transformer")  # fmt: skip
    parser.add_argument(
        "--image", type=int, default=32, help="vision models' image size (at least the model's minimum)"
    )
    parser.add_argument("--runs", type=int, default=5, help="counted runs per graph (default 5)")
    parser.add_argument("--reference-cache", type=Path, default=None, help="keep the reference's models here")
    parser.add_argument("--keep", type=Path, default=None, help="leave the models and inputs in this folder")
    parser.add_argument("--timed-runs", type=int, default=300, help="runs of the native A/B timing (default 300)")
    parser.add_argument("--no-cache-sim", action="store_true", help="count instructions only (about 2x faster)")
    parser.add_argument(
        "--distinct-norms", action="store_true", help="vision models' BatchNorms drawn at random (bench_vision.py's)"
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        child(*ns.child, ns.runs)
        return 0
    if shutil.which("valgrind") is None or shutil.which("gcc") is None or not Path(CALLGRIND_H).exists():
        parser.error(f"valgrind, gcc and {CALLGRIND_H} are needed (apt install valgrind gcc)")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import numpy as np
    import onnx
    import torch

    from torchlib.conformance import torchvision_reference

    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    torchvision_reference.register()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = ns.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name in ns.models.split(","):
            ours, ref, args = graphs(name, ns.image, ns.reference_cache, ns.distinct_norms)
            inputs = folder / f"{name}.npz"
            np.savez(inputs, **{f"arg{i}": a.numpy() for i, a in enumerate(args)})
            row = {"model": name}
            for side, proto in (("ours", ours), ("reference", ref)):
                path = folder / f"{name}.{side}.onnx"
                onnx.save(proto, str(path))
                counts = count(path, inputs, ns.runs, not ns.no_cache_sim)
                row[side] = {"nodes": len(proto.graph.node), **{k: v / ns.runs for k, v in counts.items()}}
            paths = [folder / f"{name}.{side}.onnx" for side in ("ours", "reference")]
            for side, (wall, cpu) in zip(("ours", "reference"), timed(paths, inputs, ns.timed_runs)):
                row[side].update({"wall ms": wall, "CPU ms": cpu, "load": os.getloadavg()[0]})
                print(json.dumps({"model": name, "graph": side, "runs": ns.runs, **row[side]}), flush=True)
            rows.append(row)
    counted = [k for k in COUNTS if rows and k in rows[0]["ours"]]
    print(f"\nper run: {ns.runs} counted runs after {WARMUP} warm-up runs under callgrind; {ns.timed_runs} native runs"
          " alternated (wall: median, CPU: mean of time.process_time); 1 thread; ratio = ours / reference\n")  # fmt: skip
    print("| model | nodes (ours / reference) | " + " | ".join(f"{k} (ours / reference)" for k in counted)
          + " | instruction ratio | CPU ms (ours / reference) | CPU ratio | wall ratio | load |")  # fmt: skip
    print("|---|---|" + "---|" * (len(counted) + 5))
    ratios: dict[str, list[float]] = {"instructions": [], "CPU ms": [], "wall ms": []}
    for row in rows:
        ours, ref = row["ours"], row["reference"]
        for k, values in ratios.items():
            values.append(ours[k] / ref[k])
        cells = [f"{ours[k] / 1e6:.3f} M / {ref[k] / 1e6:.3f} M" for k in counted]
        print(f"| {row['model']} | {ours['nodes']} / {ref['nodes']} | " + " | ".join(cells)
              + f" | {ratios['instructions'][-1]:.4f} | {ours['CPU ms']:.3f} / {ref['CPU ms']:.3f}"
              + f" | {ratios['CPU ms'][-1]:.3f} | {ratios['wall ms'][-1]:.3f} | {ref['load']:.1f} |")  # fmt: skip
    if rows:
        geo = {k: math.exp(statistics.fmean(map(math.log, v))) for k, v in ratios.items()}
        print(
            f"\ngeomean ratio: instructions {geo['instructions']:.4f}, CPU time {geo['CPU ms']:.3f}, wall {geo['wall ms']:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
