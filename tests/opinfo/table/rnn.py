"""Expectations for torchlib/ops/rnn.py.

op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db): these samples build the
modules' flat weights and call the ATen overloads directly, over layer counts, directions,
batch_first, biases and an empty batch (onnxruntime's kernels abort the process on it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# (num_layers, bidirectional, batch_first, bias, batch)
_CONFIGS = [(1, False, False, True, 3), (2, True, True, True, 2), (2, False, True, False, 1), (1, True, False, True, 0)]


def recurrent(mode: str) -> Callable[[torch.dtype], Iterator[Any]]:
    def samples(dtype: torch.dtype) -> Iterator[Any]:
        for num_layers, bidirectional, batch_first, bias, batch in _CONFIGS:
            torch.manual_seed(0)
            cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(mode, torch.nn.RNN)
            extra = {"nonlinearity": mode.split("_")[1]} if mode.startswith("rnn") else {}
            module = cls(5, 7, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias, **extra)
            params = [p.detach().to(dtype) for p in module._flat_weights]
            x = torch.randn((batch, 4, 5) if batch_first else (4, batch, 5)).to(dtype)
            h0 = torch.randn(num_layers * (2 if bidirectional else 1), batch, 7).to(dtype)
            hx: Any = [h0, torch.randn_like(h0)] if mode == "lstm" else h0
            yield sample_input(x, hx, params, bias, num_layers, 0.0, False, bidirectional, batch_first)

    return samples


ENTRIES = [
    Entry('aten_gru', samples=recurrent("gru"), dtypes=FLOATS),
    Entry('aten_lstm', samples=recurrent("lstm"), dtypes=FLOATS),
    Entry('aten_rnn_relu', samples=recurrent("rnn_relu"), dtypes=FLOATS),
    Entry('aten_rnn_tanh', samples=recurrent("rnn_tanh"), dtypes=FLOATS),
]
