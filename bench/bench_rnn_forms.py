"""onnxruntime's LSTM/GRU/RNN kernels against the cell equations torchlib/ops/rnn.py writes out
(MatMul of every step's input at once, then per step MatMul/Add/Sigmoid/Tanh/Relu), as a Scan
over a dynamic sequence and unrolled over a static one: which form each recurrent op exports
(`rnn._CELL_EQUATIONS_FASTER`).

    OMP_NUM_THREADS=1 python bench/bench_rnn_forms.py [--runs 100]

2-layer torch.nn modules, batch_first, float32; onnxruntime CPU, 1 intra-op thread, the three
graphs timed run by run in alternation (bench_latency.latencies), median ms.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import torch
from torch import nn
from torch.export import Dim

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_latency import latencies  # noqa: E402

import torchlib  # noqa: E402
from torchlib.ops import rnn  # noqa: E402

SIZES = [(32, 64, 4, 16), (64, 256, 1, 64), (64, 256, 16, 64), (128, 512, 8, 32)]  # features, hidden, batch, seq
ONNX_OP = {"LSTM": "LSTM", "GRU": "GRU", "RNN": "RNN"}


class Recurrent(nn.Module):
    def __init__(self, cls, features: int, hidden: int):
        super().__init__()
        self.rnn = cls(features, hidden, num_layers=2, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


def export(model, args, cell_equations: bool, dynamic: bool):
    kind = type(model.rnn).__name__
    default = rnn._CELL_EQUATIONS_FASTER
    rnn._CELL_EQUATIONS_FASTER = frozenset({ONNX_OP[kind]}) if cell_equations else frozenset()
    try:
        shapes = ({1: Dim("seq")},) if dynamic else None
        return torchlib.export(model, args, dynamic_shapes=shapes, check=False).model_proto
    finally:
        rnn._CELL_EQUATIONS_FASTER = default


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    print("| module | features, hidden, batch, seq | kernel ms | cell equations, Scan ms (/ kernel) | cell equations, unrolled ms (/ kernel) |")
    print("|---|---|---|---|---|")
    for cls in (nn.RNN, nn.GRU, nn.LSTM):
        for features, hidden, batch, seq in SIZES:
            torch.manual_seed(0)
            model, args = Recurrent(cls, features, hidden).eval(), (torch.randn(batch, seq, features),)
            protos = [export(model, args, False, True), export(model, args, True, True), export(model, args, True, False)]
            kernel, scan, unrolled = latencies(protos, args, ns.runs)
            print(f"| {cls.__name__} | {features}, {hidden}, {batch}, {seq} | {kernel:.3f} | {scan:.3f} ({scan / kernel:.2f}) "
                  f"| {unrolled:.3f} ({unrolled / kernel:.2f}) |", flush=True)


if __name__ == "__main__":
    main()
