"""Expectations for torchlib/ops/random.py: samples are compared by shape and dtype only.

Functional `uniform`, `exponential`, `bernoulli.p` and `rand(_like)` appear in exported graphs
(functionalized from `uniform_`, `exponential_`, ...), but the OpInfos call the in-place or
decomposed forms, so those functions get samples of their own here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
_SHAPES = [(2, 3), (5,), (), (0, 4)]


def _tensors(dtype: torch.dtype) -> Iterator[torch.Tensor]:
    for shape in _SHAPES:
        yield torch.full(shape, 0.5, dtype=dtype)


def sizes(dtype: torch.dtype) -> Iterator[Any]:
    for shape in _SHAPES:
        yield sample_input(list(shape), dtype=dtype)


def like(dtype: torch.dtype) -> Iterator[Any]:
    for x in _tensors(dtype):
        yield sample_input(x)


def bernoulli_p(dtype: torch.dtype) -> Iterator[Any]:
    for x, p in zip(_tensors(dtype), (0.0, 0.3, 1.0, 0.5)):
        yield sample_input(x, p)


def uniform(dtype: torch.dtype) -> Iterator[Any]:
    for x, bounds in zip(_tensors(dtype), ((0.0, 1.0), (-2.0, 5.0), (3.0, 3.5), (0.0, 1.0))):
        yield sample_input(x, *bounds)


def exponential(dtype: torch.dtype) -> Iterator[Any]:
    for x, lambd in zip(_tensors(dtype), (1.0, 0.5, 3.0, 1.0)):
        yield sample_input(x, lambd)


def normal_float_tensor(dtype: torch.dtype) -> Iterator[Any]:
    for x, mean in zip(_tensors(dtype), (0.0, -1.0, 2.0, 0.0)):
        yield sample_input(mean, x)


def normal_functional(dtype: torch.dtype) -> Iterator[Any]:
    for x, (mean, std) in zip(_tensors(dtype), ((0.0, 1.0), (-1.0, 0.5), (2.0, 0.0), (0.0, 3.0))):
        yield sample_input(x, mean, std)


ENTRIES = [
    Entry('aten_bernoulli', opinfo=['bernoulli'], compare='shape'),
    Entry('aten_bernoulli_p', samples=bernoulli_p, dtypes=FLOATS + [torch.int64, torch.bool], compare='shape'),
    Entry('aten_exponential', samples=exponential, dtypes=FLOATS, compare='shape'),
    Entry('aten_multinomial', opinfo=['multinomial'], compare='shape'),
    Entry('aten_normal_float_float', opinfo=['normal', ('normal', 'number_mean')], compare='shape'),
    Entry('aten_normal_float_tensor', samples=normal_float_tensor, dtypes=FLOATS, compare='shape'),
    Entry('aten_normal_functional', samples=normal_functional, dtypes=FLOATS, compare='shape'),  # normal_ in an exported graph
    Entry('aten_normal_tensor_float', opinfo=['normal'], compare='shape'),
    Entry('aten_normal_tensor_tensor', opinfo=['normal'], compare='shape'),
    Entry('aten_rand', samples=sizes, dtypes=FLOATS, compare='shape'),
    Entry('aten_rand_like', samples=like, dtypes=FLOATS, compare='shape'),
    Entry('aten_randint', opinfo=['randint'], compare='shape'),
    Entry('aten_randint_like', opinfo=['randint_like'], compare='shape'),
    Entry('aten_randint_like_low_dtype', opinfo=['randint_like'], compare='shape'),
    Entry('aten_randint_low', opinfo=['randint'], compare='shape'),
    Entry('aten_randn', opinfo=['randn'], compare='shape'),
    Entry('aten_randn_like', opinfo=['randn_like'], compare='shape'),
    Entry('aten_uniform', samples=uniform, dtypes=FLOATS, compare='shape'),
    Entry('aten_randperm', samples=lambda dtype: iter([sample_input(5, dtype=dtype), sample_input(0, dtype=dtype),
                                                        sample_input(1, dtype=dtype)]),
          dtypes=[torch.int64, torch.int32, torch.float32], compare='shape'),  # randperm
    Entry('aten_randperm_generator', samples=lambda dtype: iter([sample_input(7, generator=None, dtype=dtype)]),
          dtypes=[torch.int64], compare='shape'),  # randperm.generator
]
