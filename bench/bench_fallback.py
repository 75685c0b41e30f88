"""What capture's fallback chain costs when non-strict capture fails, against one strict capture.

    OMP_NUM_THREADS=1 python bench/bench_fallback.py [--repeat 3]

Each model is a transformer encoder (bench_export's) with one line non-strict capture cannot
trace:

- `data_dependent`: a branch on a tensor's value (`if x.mean() > 0`); strict fails alike, so the
  chain goes straight to draft_export;
- `numpy`: numpy in forward, which only strict (TorchDynamo) traces;
- `own_error`: forward raises for the sample; every strategy fails.

Columns (median of `repeat` runs, seconds): `torch.export` non-strict and strict alone (to their
result or failure); the chain after non-strict, i.e. what `torchlib.export` spends in capture
beyond the non-strict attempt (`timings["torch.export"]` minus non-strict); its ratio to one
strict capture (the target is at most 1); the strategy that captured, or "error"; the time of
the self-check that follows (always run after draft_export).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_export import transformer_encoder

import torchlib


class Wrapped(nn.Module):
    def __init__(self, kind: str):
        super().__init__()
        self.encoder = transformer_encoder()[0]
        self.kind = kind

    def forward(self, x):
        y = self.encoder(x)
        if self.kind == "data_dependent":
            return y + 1 if y.mean() > 0 else y - 1
        if self.kind == "numpy":
            return torch.from_numpy(np.tanh(y.numpy()))
        raise ValueError("the model's own error")


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    try:
        out = fn(*args, **kwargs)
    except Exception:  # noqa: BLE001  (a failing capture is what is timed)
        out = None
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    args = transformer_encoder()[1]
    torchlib.export(transformer_encoder()[0], args)  # imports and first-use costs are not charged
    print("| model | non-strict s | strict s | chain after non-strict s | chain / strict | captured by | self-check s |")
    print("|---|---|---|---|---|---|---|")
    for kind in ("data_dependent", "numpy", "own_error"):
        model = Wrapped(kind).eval()
        non_strict, strict, chain, check = [], [], [], []
        strategy = "error"
        for _ in range(ns.repeat):
            non_strict.append(timed(torch.export.export, model, args, strict=False)[0])
            strict.append(timed(torch.export.export, model, args, strict=True)[0])
            seconds, result = timed(torchlib.export, model, args)
            if result is None:  # the error: all of it is capture
                chain.append(seconds - non_strict[-1])
            else:
                strategy = result.capture_strategy
                chain.append(result.timings["torch.export"] - non_strict[-1])
                check.append(result.timings.get("self_check", 0.0))
        s, c = statistics.median(strict), statistics.median(chain)
        print(f"| {kind} | {statistics.median(non_strict):.3f} | {s:.3f} | {c:.3f} | {c / s:.2f} | {strategy} | "
              f"{statistics.median(check) if check else 0:.3f} |", flush=True)


if __name__ == "__main__":
    main()
