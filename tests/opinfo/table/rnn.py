"""Expectations for torchlib/ops/rnn.py.

op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db): these samples build the
modules' flat weights and call the ATen overloads directly, over layer counts, directions,
batch_first, biases and an empty batch (onnxruntime's kernels abort the process on it)."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate

from . import _own_samples as own

# op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db): samples of their own.
ENTRIES = [
    Entry('aten_gru', samples=own.rnn('gru'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16])]),
    Entry('aten_lstm', samples=own.rnn('lstm'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16])]),
    Entry('aten_rnn_relu', samples=own.rnn('rnn_relu'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16])]),
    Entry('aten_rnn_tanh', samples=own.rnn('rnn_tanh'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16])]),
]
