"""Expectations for torchlib/ops/rnn.py.

op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db): these samples build the
modules' flat weights and call the ATen overloads directly, over layer counts, directions,
batch_first, biases and an empty batch (onnxruntime's kernels abort the process on it)."""

from __future__ import annotations


import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate, XFail

from . import _own_samples as own

_NO_KERNEL = XFail("onnxruntime's LSTM/GRU/RNN kernels are float32/float16 only: bfloat16 has no kernel and the double kernel raises 'does not support double yet' (issue 13 item 8: a Scan-based form)", dtypes=[torch.bfloat16, torch.float64])

# op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db): samples of their own.
ENTRIES = [
    Entry('aten_gru', samples=own.rnn('gru'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),_NO_KERNEL]),
    Entry('aten_lstm', samples=own.rnn('lstm'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),_NO_KERNEL]),
    Entry('aten_rnn_relu', samples=own.rnn('rnn_relu'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),_NO_KERNEL]),
    Entry('aten_rnn_tanh', samples=own.rnn('rnn_tanh'), dtypes=own.FLOATS, xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),_NO_KERNEL]),
]
