"""Whole-model exports of torch.nn's recurrent layers with a dynamic batch and sequence length,
at two sizes, against torch: onnxruntime's LSTM/GRU kernels, one node per layer; the cell
equations (a Scan over the dynamic sequence) for LSTM projections, which ONNX's LSTM lacks, and
for RNN_TANH/RELU, faster than onnxruntime's RNN kernel."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.export import Dim

import torchlib

KINDS = {
    "lstm": lambda i, h, **kw: nn.LSTM(i, h, **kw),
    "gru": lambda i, h, **kw: nn.GRU(i, h, **kw),
    "rnn_tanh": lambda i, h, **kw: nn.RNN(i, h, nonlinearity="tanh", **kw),
    "rnn_relu": lambda i, h, **kw: nn.RNN(i, h, nonlinearity="relu", **kw),
    "lstm_proj": lambda i, h, **kw: nn.LSTM(i, h, proj_size=h // 2, **kw),
}
KERNEL = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": None, "rnn_relu": None, "lstm_proj": None}
SIZES = {  # input features, hidden, layers, bidirectional, batch_first, (batch, seq) of the sample
    "small": (5, 7, 1, False, False, (3, 4)),
    "bench": (32, 64, 2, True, True, (4, 16)),
}


def _model(kind, size):
    torch.manual_seed(0)
    features, hidden, layers, bidirectional, batch_first, (batch, seq) = SIZES[size]
    model = KINDS[kind](features, hidden, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first).eval()

    def example(batch, seq):
        return torch.randn((batch, seq, features) if batch_first else (seq, batch, features))

    dims = {0: Dim("batch"), 1: Dim("seq")} if batch_first else {0: Dim("seq"), 1: Dim("batch")}
    return model, example, dims, (batch, seq), layers


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("kind", list(KINDS))
def test_recurrent_export_matches_torch_at_other_lengths(kind, size):
    model, example, dims, (batch, seq), layers = _model(kind, size)
    result = torchlib.export(model, (example(batch, seq),), dynamic_shapes=(dims,))
    ops = [n.op_type for n in result.model_proto.graph.node]
    if KERNEL[kind]:  # one kernel node per layer (both directions), no loop
        assert ops.count(KERNEL[kind]) == layers and "Scan" not in ops
    else:  # the cell equations, one Scan per layer and direction
        assert not {"LSTM", "RNN"} & set(ops) and ops.count("Scan") == layers * (2 if size == "bench" else 1)
    for b, t in [(batch, seq), (1, 1), (2, 37)]:
        x = example(b, t)
        with torch.no_grad():
            expected = model(x)
        torch.testing.assert_close(result(x), expected, atol=1e-5, rtol=1e-4)  # output and final states


@pytest.mark.parametrize("proj_size", [0, 3])
def test_lstm_with_initial_states_and_dynamic_sequence(proj_size):
    torch.manual_seed(0)
    model = nn.LSTM(4, 6, num_layers=2, proj_size=proj_size).eval()
    out = proj_size or 6

    def states(batch):
        return torch.randn(2, batch, out), torch.randn(2, batch, 6)

    batch = Dim("batch")
    result = torchlib.export(model, (torch.randn(5, 2, 4), states(2)),
                             dynamic_shapes=({0: Dim("seq"), 1: batch}, ({1: batch}, {1: batch})))
    for t, b in [(5, 2), (1, 3), (29, 1)]:
        x, hc = torch.randn(t, b, 4), states(b)
        with torch.no_grad():
            expected = model(x, hc)
        torch.testing.assert_close(result(x, hc), expected, atol=1e-5, rtol=1e-4)
