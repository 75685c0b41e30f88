"""Expectations for torchlib/ops/random.py: samples are compared by shape and dtype only."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

ENTRIES = [
    Entry('aten_bernoulli', opinfo=['bernoulli'], compare='shape'),
    Entry('aten_bernoulli_p', opinfo=['bernoulli'], compare='shape'),
    Entry('aten_exponential', opinfo=['exponential'], compare='shape'),
    Entry('aten_normal_float_float', opinfo=['normal', 'normal.number_mean'], compare='shape'),
    Entry('aten_normal_float_tensor', opinfo=['normal.number_mean'], compare='shape'),
    Entry('aten_normal_tensor_float', opinfo=['normal'], compare='shape'),
    Entry('aten_normal_tensor_tensor', opinfo=['normal'], compare='shape'),
    Entry('aten_rand', opinfo=['rand_like'], compare='shape'),
    Entry('aten_rand_like', opinfo=['rand_like'], compare='shape'),
    Entry('aten_randint', opinfo=['randint'], compare='shape'),
    Entry('aten_randint_like', opinfo=['randint_like'], compare='shape'),
    Entry('aten_randint_like_low_dtype', opinfo=['randint_like'], compare='shape'),
    Entry('aten_randint_low', opinfo=['randint'], compare='shape'),
    Entry('aten_randn', opinfo=['randn'], compare='shape'),
    Entry('aten_randn_like', opinfo=['randn_like'], compare='shape'),
    Entry('aten_uniform', opinfo=['uniform'], compare='shape'),
]
