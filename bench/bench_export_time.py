"""Export time of the default export (self-check included) against `torch.export` alone and
against the reference exporter, `torch.onnx.export(..., dynamo=True)`.

    OMP_NUM_THREADS=1 python bench/bench_export_time.py [--repeat 3] [--models bert,llama,...]
    OMP_NUM_THREADS=1 python bench/bench_export_time.py --vision [--models resnet18,...] [--image 64]

Per model, `repeat` rounds; each round times, one after the other so that machine noise hits
all alike: `torch.export.export(model, args)`; `torchlib.export(model, args)` with its defaults
(`check=None`: the self-check runs when cheap, see torchlib/exporter/self_check.py);
`torchlib.export(..., check=False)`; and the reference (skipped with `--no-reference`). Columns
are the medians over the rounds, the ratios of ours (default) to torch.export and to the
reference (and to torch.export in CPU seconds of this process, `process_time`, which a loaded
machine disturbs less than wall time), the ratio with check=False (in wall and in CPU seconds), what the self-check did (`result.self_check`)
and where the default export's time went (`result.timings`, medians): the capture (`torch.export`
inside ours), translation, the self-check and its parts (torch eager on the sample / building the
check session / running it: `self_check.eager`, `.session`, `.onnxruntime`), and what is left of
the total (`other`: the check's decision, copies and comparison, the notes). `added / torch.export`:
what ours adds to its capture (the default's total less its capture) over torch.export alone; on
a loaded machine two runs of the same capture differ by 10-30 %, this column far less. Targets (issue 30):
ours / torch.export at most 1.15, ours / reference at most 0.3.

`--latency RUNS` adds, from the same run, the graphs' side: the nodes of the last round's default
export and of the reference's model, and their onnxruntime latency (1 thread, ORT_ENABLE_ALL,
`bench_latency.latencies`: the two sessions timed run by run in alternation, RUNS runs, median ms)
at the sample. With it a row holds the issue's whole comparison, export time, nodes and latency,
measured in one run. It needs the reference (not with `--no-reference`).

The six small models are bench_latency's (bert, llama, vit, resnet, lstm, and nn.TransformerEncoder
as "transformer"). `--vision` takes bench_vision's models (torchvision and timm from their
configs, random weights, no download) with its sample (batch 2, `--image` pixels, the model's
own minimum) and its dynamic shapes (`bench_vision.dynamic_shapes`: a dynamic batch, static for
raft_small, whose batch torch.export cannot keep dynamic), given to all three exporters alike.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_export import MODELS as EXPORT_MODELS  # noqa: E402
from bench_latency import MODELS as LATENCY_MODELS  # noqa: E402
from bench_latency import latencies  # noqa: E402

import torchlib  # noqa: E402
from graph_builder.progress import progress, write  # noqa: E402

SMALL = ["bert", "llama", "vit", "resnet", "lstm", "transformer"]


def small_model(name: str) -> tuple[torch.nn.Module, tuple, Any]:
    model, args = LATENCY_MODELS[name]()
    return model, args, None


def vision_model(name: str, image: int) -> tuple[torch.nn.Module, tuple, Any]:
    import bench_vision

    model, args, dyn = bench_vision.load(name, image)
    with torch.no_grad():  # as bench_vision: timm's levit caches its attention biases on its first eval call
        model(*args)
    return model, args, dyn


def reference(model: torch.nn.Module, args: tuple, dyn: Any) -> Any:
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.onnx.export(model, args, dynamic_shapes=dyn, dynamo=True, verbose=False)


def timed(fn: Any, cpu: list[float]) -> tuple[Any, float]:
    """fn()'s result and wall seconds; its CPU seconds in this process are appended to `cpu`."""
    gc.collect()  # the previous run's garbage is not charged to this one
    start, start_cpu = time.perf_counter(), time.process_time()
    out = fn()
    cpu.append(time.process_time() - start_cpu)
    return out, time.perf_counter() - start


def bench(model: torch.nn.Module, args: tuple, dyn: Any, repeat: int, with_reference: bool,
          latency_runs: int = 0) -> dict[str, Any]:
    runs: dict[str, list[float]] = {"torch.export": [], "ours": [], "ours, check=False": [], "reference": []}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    parts: dict[str, list[float]] = {k: [] for k in _PARTS}
    checked = ""
    ours_proto: Any = None
    reference_proto: Any = None
    for _ in range(repeat):
        _, s = timed(lambda: torch.export.export(model, args, dynamic_shapes=dyn), cpu["torch.export"])
        runs["torch.export"].append(s)
        result, s = timed(lambda: torchlib.export(model, args, dynamic_shapes=dyn), cpu["ours"])
        runs["ours"].append(s)
        for k in _PARTS:
            parts[k].append(_part(result.timings, k))
        checked = result.self_check.split(":")[0]
        ours_proto = result.model_proto if latency_runs else None
        result = None
        _, s = timed(lambda: torchlib.export(model, args, dynamic_shapes=dyn, check=False), cpu["ours, check=False"])
        runs["ours, check=False"].append(s)
        if with_reference:
            program, s = timed(lambda: reference(model, args, dyn), cpu["reference"])
            runs["reference"].append(s)
            reference_proto = program.model_proto if latency_runs else None
            program = None
    row: dict[str, Any] = {k: statistics.median(v) if v else float("nan") for k, v in runs.items()}
    row["CPU ratio"] = statistics.median(cpu["ours"]) / statistics.median(cpu["torch.export"])
    row["CPU ratio, check=False"] = statistics.median(cpu["ours, check=False"]) / statistics.median(cpu["torch.export"])
    row.update({"part " + k: statistics.median(v) for k, v in parts.items()})
    row["self-check"] = checked
    if latency_runs and ours_proto is not None and reference_proto is not None:
        row["nodes"], row["reference nodes"] = len(ours_proto.graph.node), len(reference_proto.graph.node)
        row["ms"], row["reference ms"] = latencies([ours_proto, reference_proto], args, latency_runs)
    return row


_PARTS = ("torch.export", "translate", "self_check", "self_check.eager", "self_check.session", "self_check.onnxruntime",
          "other", "added")


def _part(timings: dict[str, float], key: str) -> float:
    """A part of the default export's seconds; "other": the total less capture, decompositions,
    translation and the check; "added": the total less the capture."""
    if key == "added":
        return timings["total"] - timings["torch.export"]
    if key == "other":
        return timings["total"] - sum(timings.get(k, 0.0) for k in ("torch.export", "decompositions", "translate",
                                                                   "self_check"))
    return timings.get(key, 0.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", default=None, help="comma-separated; default: the six small models, or with "
                        "--vision bench_vision's models")
    parser.add_argument("--vision", action="store_true", help="bench_vision's models (needs torchvision and timm)")
    parser.add_argument("--image", type=int, default=64, help="with --vision: image size (at least the model's minimum)")
    parser.add_argument("--no-reference", action="store_true", help="skip torch.onnx.export")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    parser.add_argument("--latency", type=int, default=0, metavar="RUNS",
                        help="also nodes and onnxruntime latency of ours (default export) and the reference, RUNS "
                        "alternated runs at the sample")
    ns = parser.parse_args()
    if ns.latency and ns.no_reference:
        parser.error("--latency compares with the reference: drop --no-reference")
    warnings.simplefilter("ignore")
    if ns.vision:
        import bench_vision

        bench_vision.torchvision_reference.register()
        names = ns.models.split(",") if ns.models else list(bench_vision.MODELS)
    else:
        names = ns.models.split(",") if ns.models else SMALL
    warm, warm_args = EXPORT_MODELS["mlp"]()
    torchlib.export(warm, warm_args)  # import costs are not charged to the first model
    torch.export.export(warm, warm_args)
    if not ns.no_reference:
        reference(warm, warm_args, None)
    print("| model | torch.export s | ours s (default) | ours s (check=False) | reference s | ours / torch.export "
          "| same, CPU s | check=False / torch.export | same, CPU s | ours / reference | self-check | capture s "
          "| translate s | self-check s | eager / session / onnxruntime s | other s | added / torch.export |"
          + (" nodes | reference nodes | ms | reference ms | ms / reference |" if ns.latency else ""))
    print("|---" * (17 + (5 if ns.latency else 0)) + "|")
    latency_ratios: list[float] = []
    ratios: list[float] = []
    failed = []
    for name in progress(names, desc="models", unit="model", enabled=not ns.no_progress):
        try:
            model, args, dyn = vision_model(name, ns.image) if ns.vision else small_model(name)
            r = bench(model, args, dyn, ns.repeat, not ns.no_reference, ns.latency)
        except Exception as e:  # one model's failure is a row, not the end of the table
            write(f"| {name} | failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''} |")
            failed.append(name)
            continue
        ratios.append(r["ours"] / r["torch.export"])
        write(f"| {name} | {r['torch.export']:.3f} | {r['ours']:.3f} | {r['ours, check=False']:.3f} | {r['reference']:.3f} "
              f"| {r['ours'] / r['torch.export']:.2f} | {r['CPU ratio']:.2f} | {r['ours, check=False'] / r['torch.export']:.2f} "
              f"| {r['CPU ratio, check=False']:.2f} | {r['ours'] / r['reference']:.2f} | {r['self-check']} "
              f"| {r['part torch.export']:.3f} | {r['part translate']:.3f} | {r['part self_check']:.3f} "
              f"| {r['part self_check.eager']:.3f} / {r['part self_check.session']:.3f} "
              f"/ {r['part self_check.onnxruntime']:.3f} | {r['part other']:.3f} | {r['part added'] / r['torch.export']:.2f} |"
              + (f" {r['nodes']} | {r['reference nodes']} | {r['ms']:.3g} | {r['reference ms']:.3g} "
                 f"| {r['ms'] / r['reference ms']:.2f} |" if "ms" in r else ""))
        if "ms" in r:
            latency_ratios.append(r["ms"] / r["reference ms"])
    if ratios:
        print(f"\nmedian ours / torch.export: {statistics.median(ratios):.2f}, worst {max(ratios):.2f}")
    if latency_ratios:
        print(f"geomean latency ours / reference: {statistics.geometric_mean(latency_ratios):.3f}, "
              f"worst {max(latency_ratios):.2f}")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
