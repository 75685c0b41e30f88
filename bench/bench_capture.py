"""Export wall time against `torch.export.export` alone: what the exporter adds to capture.

    OMP_NUM_THREADS=1 python bench/bench_capture.py [--repeat 3] [--models resnet,lstm,...]

For each model, `repeat` runs of each of two intervals, alternating so that machine noise hits
both alike:

- "torch.export": `torch.export.export(model, args)`, the very call the exporter's capture makes
  first (non-strict, no dynamic shapes), called from this script;
- "torch.export, stack room": the same call made through `with_stack_room`, as the exporter makes
  it. torch.export's time depends on the caller's stack depth (CPython's frame-stack chunks can
  thrash under its deep dispatch: see torchlib/exporter/stack_room.py), so this is torch.export
  at its best, the stricter baseline;
- "torchlib export": `torchlib.export(model, args)` with its defaults (optimizer on, the graph
  checked by onnx.checker): capture as above inside `quiet_torch`, translation, optimizer,
  `to_graph` and its check. Not inside: `model_proto` / `save` / verify (done only when asked).

The program or result of the previous run is released before the clock starts, so neither
interval pays for freeing the other's. Columns: the median wall time of each; our ratio to each
baseline (the target is at most 1.15); the ratio to the stack-room baseline in CPU time of this
process (`process_time`), which a loaded machine disturbs far less than wall time; "same-run ratio", each export's total
divided by the torch.export call inside it (median over runs); and whether the exporter had to
re-decompose the whole program (it says why in `result.diagnostics`); "self-check share", the
part of our export spent in the self-check on the sample (one eager run, one run of the
captured program, one onnxruntime session and run; see torchlib/exporter/self_check.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_export import MODELS as EXPORT_MODELS

import torchlib
from graph_builder.progress import progress, write
from torchlib.exporter import demo_models
from torchlib.exporter.stack_room import with_stack_room

MODELS = {
    **EXPORT_MODELS,
    "resnet_inplace": demo_models.resnet,
    "masked_encoder": demo_models.masked_encoder,
    "rms_rope_decoder": demo_models.rms_rope_decoder,
    "lstm_head": demo_models.lstm_model,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    model, args = EXPORT_MODELS["mlp"]()
    torchlib.export(model, args)  # import costs are not charged to the first model
    print("| model | torch.export s | torch.export, stack room s | torchlib export s | ratio | ratio to stack room "
          "| CPU ratio to stack room | same-run ratio | whole-program decomposition | self-check share |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in progress(ns.models.split(","), desc="models", unit="model", enabled=not ns.no_progress):
        model, args = MODELS[name]()
        capture, roomy, ours, roomy_cpu, ours_cpu, same_run, checks = [], [], [], [], [], [], []
        result = program = None
        for _ in range(ns.repeat):
            program = None
            start, cpu = time.perf_counter(), time.process_time()
            program = torch.export.export(model, args)
            capture.append(time.perf_counter() - start)
            program = None
            start, cpu = time.perf_counter(), time.process_time()
            program = with_stack_room(torch.export.export, model, args)
            roomy.append(time.perf_counter() - start)
            roomy_cpu.append(time.process_time() - cpu)
            del program  # the previous capture's memory goes before timing the next
            result = None
            start, cpu = time.perf_counter(), time.process_time()
            result = torchlib.export(model, args)
            ours.append(time.perf_counter() - start)
            ours_cpu.append(time.process_time() - cpu)
            same_run.append(ours[-1] / result.timings["torch.export"])
            checks.append(result.timings.get("self_check", 0.0) / ours[-1])
        t_capture, t_roomy, t_ours = statistics.median(capture), statistics.median(roomy), statistics.median(ours)
        cpu_ratio = statistics.median(ours_cpu) / statistics.median(roomy_cpu)
        decomposed = "yes" if result is not None and "decompositions" in result.timings else "no"
        write(f"| {name} | {t_capture:.3f} | {t_roomy:.3f} | {t_ours:.3f} | {t_ours / t_capture:.2f} | {t_ours / t_roomy:.2f} | {cpu_ratio:.2f} | "
              f"{statistics.median(same_run):.2f} | {decomposed} | {statistics.median(checks):.0%} |")

if __name__ == "__main__":
    main()
