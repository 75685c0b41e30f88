"""Expectations for torchlib/ops/rnn.py."""

from __future__ import annotations

import math
import operator

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

from . import _helpers as h
from ._helpers import scalar_arg

ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]

ENTRIES = [
    Entry('aten_gru', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
    Entry('aten_lstm', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
    Entry('aten_rnn_relu', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
    Entry('aten_rnn_tanh', reason='op_db has no OpInfo for nn.LSTM/GRU/RNN (they live in module_db); tests/ops/test_rnn.py checks it against the torch.nn modules'),
]
