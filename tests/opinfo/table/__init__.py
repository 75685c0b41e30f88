"""The OpInfo expectations table: one Entry per registered function (see
torchlib/conformance/spec.py for the vocabulary), one module per torchlib/ops family."""

from __future__ import annotations

from . import activations, casting, comparison, conv_pool, creation, elementwise, linalg, normalization, reductions, rnn, sort_topk

ENTRIES = [
    *activations.ENTRIES,
    *casting.ENTRIES,
    *comparison.ENTRIES,
    *conv_pool.ENTRIES,
    *creation.ENTRIES,
    *elementwise.ENTRIES,
    *linalg.ENTRIES,
    *normalization.ENTRIES,
    *reductions.ENTRIES,
    *rnn.ENTRIES,
    *sort_topk.ENTRIES,
]
