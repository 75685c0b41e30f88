"""Expectations for torchlib/ops/rnn.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry

ENTRIES = [
    Entry('aten_gru', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
    Entry('aten_lstm', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
    Entry('aten_rnn_relu', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
    Entry('aten_rnn_tanh', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
]
