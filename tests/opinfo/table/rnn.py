"""Expectations for torchlib/ops/rnn.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_gru', reason='TODO'),  # gru.input CIA
    Entry('aten_lstm', reason='TODO'),  # lstm.input CIA
    Entry('aten_rnn_relu', reason='TODO'),  # rnn_relu.input CIA
    Entry('aten_rnn_tanh', reason='TODO'),  # rnn_tanh.input CIA
]
