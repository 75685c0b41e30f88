"""The noise floor of the latency ratios in bench_vision.py / bench_latency.py: one and the same
ONNX model loaded into three onnxruntime sessions (1 intra-op thread), timed run by run in
alternation as those benches time ours against the reference, median of `--runs` runs, in
`--rounds` rounds (fixed order, then rotated so that each session runs first as often).
Each line prints every session's median over the first session's: with identical graphs every
ratio would be 1.00, and the spread is what a ratio of two different graphs cannot resolve.

    OMP_NUM_THREADS=1 python bench/bench_session_spread.py [--models resnet18,densenet121] [--runs 200]

The models are torchvision's (random weights), exported once with torchlib at 32 px, batch 2.
Setup as bench_vision.py (torchvision's CPU kernels are registered from the conformance table's
torch ports).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torchlib  # noqa: E402
from torchlib.conformance import torchvision_reference  # noqa: E402


def spread(proto: bytes, x: np.ndarray, runs: int, rotate: bool) -> list[float]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    sessions = [ort.InferenceSession(proto, options, providers=["CPUExecutionProvider"]) for _ in range(3)]
    feed = {sessions[0].get_inputs()[0].name: x}
    for s in sessions:
        for _ in range(10):
            s.run(None, feed)
    times: list[list[float]] = [[] for _ in sessions]
    for r in range(runs):
        order = [(r + k) % 3 for k in range(3)] if rotate else [0, 1, 2]
        for i in order:
            start = time.perf_counter()
            sessions[i].run(None, feed)
            times[i].append(time.perf_counter() - start)
    medians = [statistics.median(t) for t in times]
    return [m / medians[0] for m in medians]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet18,densenet121,regnet_y_400mf")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    torchvision_reference.register()
    import torchvision

    worst = 0.0
    for name in ns.models.split(","):
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None).eval()
        args = (torch.randn(2, 3, 32, 32),)
        proto = torchlib.export(model, args).model_proto.SerializeToString()
        for k in range(ns.rounds):
            for rotate in (False, True):
                ratios = spread(proto, args[0].numpy(), ns.runs, rotate)
                worst = max(worst, max(abs(r - 1) for r in ratios))
                print(f"{name} round {k} {'rotated' if rotate else 'fixed  '}: "
                      + ", ".join(f"{r:.3f}" for r in ratios), flush=True)
    print(f"\nlargest difference between sessions of one model: {100 * worst:.1f} %")


if __name__ == "__main__":
    main()
