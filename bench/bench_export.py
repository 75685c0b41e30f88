"""Export time, node count and onnxruntime latency: torchlib vs torch.onnx.export(dynamo=True).

    python bench/bench_export.py [--repeat 3] [--models mlp,cnn,...] [--markdown]

The reference column needs onnxscript (`pip install -c constraints.txt -e '.[bench]'`); without
it only torchlib is measured. Latency: onnxruntime CPU, 1 intra-op thread, median of runs.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import contextlib
import io
import statistics
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

import torchlib
from graph_builder.progress import progress, write
from torchlib.exporter.demo import small_cnn, tiny_gpt


def mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 10)).eval()
    return model, (torch.randn(32, 64),)


def transformer_encoder():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval(), (torch.randn(4, 32, 64),)


def lstm():
    torch.manual_seed(0)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(32, 64, num_layers=2, batch_first=True)

        def forward(self, x):
            return self.rnn(x)[0]

    return M().eval(), (torch.randn(4, 16, 32),)


MODELS = {"mlp": mlp, "cnn": small_cnn, "gpt": tiny_gpt, "transformer": transformer_encoder, "lstm": lstm}


def ours(model, args):
    return torchlib.export(model, args).model_proto


def reference(model, args):
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.onnx.export(model, args, dynamo=True, verbose=False).model_proto


def timed(fn, model, args, repeat):
    times, proto = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        proto = fn(model, args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), proto


def latency(proto: onnx.ModelProto, args, runs: int = 50) -> float:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)}
    for _ in range(5):
        session.run(None, feeds)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, feeds)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    ns = parser.parse_args()
    try:
        import onnxscript  # noqa: F401

        have_reference = True
    except ImportError:
        have_reference = False
    # warm up both exporters once so import costs are not charged to the first model
    ours(*mlp())
    if have_reference:
        reference(*mlp())
    print("| model | export s (torchlib) | export s (reference) | nodes (torchlib) | nodes (reference) "
          "| ORT ms (torchlib) | ORT ms (reference) |")
    print("|---|---|---|---|---|---|---|")
    for name in progress(ns.models.split(","), desc="models", unit="model", enabled=not ns.no_progress):
        model, args = MODELS[name]()
        t_ours, p_ours = timed(ours, model, args, ns.repeat)
        lat_ours = latency(p_ours, args)
        if have_reference:
            t_ref, p_ref = timed(reference, model, args, ns.repeat)
            lat_ref = latency(p_ref, args)
            ref = (f"{t_ref:.2f}", str(len(p_ref.graph.node)), f"{lat_ref:.3f}")
        else:
            ref = ("n/a", "n/a", "n/a")
        write(f"| {name} | {t_ours:.2f} | {ref[0]} | {len(p_ours.graph.node)} | {ref[1]} | {lat_ours:.3f} | {ref[2]} |")


if __name__ == "__main__":
    np.random.seed(0)
    main()
