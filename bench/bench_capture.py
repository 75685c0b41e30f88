"""Export wall time against `torch.export.export` alone: what the exporter adds to capture.

    OMP_NUM_THREADS=1 python bench/bench_capture.py [--repeat 3] [--models resnet,lstm,...]

For each model: the median of `repeat` runs of `torch.export.export(model, args)` and of
`torchlib.export(model, args)` (which includes its own torch.export), their ratio (the target is
at most 1.15), and whether the exporter had to re-decompose the whole program (it says why in
`result.diagnostics`). Runs alternate between the two so that machine noise hits both alike.
On a loaded machine the two medians come from different runs; "same-run ratio" divides each
export's total time by the time of the torch.export call inside it (median over the runs),
which measures what the exporter adds without that noise.
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
from torchlib.exporter import demo_models

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
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    model, args = EXPORT_MODELS["mlp"]()
    torchlib.export(model, args)  # import costs are not charged to the first model
    print("| model | torch.export s | torchlib export s | ratio | same-run ratio | whole-program decomposition |")
    print("|---|---|---|---|---|---|")
    for name in ns.models.split(","):
        model, args = MODELS[name]()
        capture, ours, same_run = [], [], []
        result = None
        for _ in range(ns.repeat):
            start = time.perf_counter()
            torch.export.export(model, args)
            capture.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = torchlib.export(model, args)
            ours.append(time.perf_counter() - start)
            same_run.append(ours[-1] / result.timings["torch.export"])
        t_capture, t_ours = statistics.median(capture), statistics.median(ours)
        decomposed = "yes" if result is not None and "decompositions" in result.timings else "no"
        print(f"| {name} | {t_capture:.3f} | {t_ours:.3f} | {t_ours / t_capture:.2f} | "
              f"{statistics.median(same_run):.2f} | {decomposed} |")


if __name__ == "__main__":
    main()
