"""Expectations for torchlib/ops/aliases.py: each alias is checked on the samples (and with the
expectations) of the function it calls, routed through the aliased ATen overloads: torch's
OpInfo for an alias (`arccos`, `special.expit`, ...) runs the aliased op (`acos`, `sigmoid`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import torch

from torchlib.conformance.spec import Call, Entry, call, sample_input

from . import activations, comparison, elementwise, reductions, special
from ._helpers import _values, tensor_and_scalar


def _aten_names(function: str) -> tuple[str, ...]:
    import torchlib

    return tuple(i.name for i in torchlib.get_registry().items() if i.function.__name__ == function and not i.complex)


def alias(function: str, of: str, entries: Sequence[Entry]) -> Entry:
    """The entry of `of` (found in `entries`) for the alias `function`: same OpInfos, adapter,
    tolerances and expected failures, routed through the calls that reach `of`."""
    base = next(e for e in entries if e.function == of)
    aten = tuple(base.aten) or _aten_names(of)
    route = base.route
    if route is None:
        implicit = all(torch._C._dispatch_has_kernel_for_dispatch_key(n, "CompositeImplicitAutograd") for n in aten)
        route = "pre_dispatch" if implicit else "aten"
    return dataclasses.replace(base, function=function, aten=aten, route=route)


_ELEMENTWISE = [*elementwise.ENTRIES, *special.ENTRIES, *activations.ENTRIES, *comparison.ENTRIES, *reductions.ENTRIES]

ALIASES = {
    'aten_arccos': 'aten_acos',
    'aten_arcsin': 'aten_asin',
    'aten_arctan': 'aten_atan',
    'aten_arccosh': 'aten_acosh',
    'aten_arcsinh': 'aten_asinh',
    'aten_arctanh': 'aten_atanh',
    'aten_arctan2': 'aten_atan2',
    'aten_negative': 'aten_neg',
    'aten_fix': 'aten_trunc',
    'aten_subtract': 'aten_sub',
    'aten_subtract_scalar': 'aten_sub_scalar',
    'aten_multiply': 'aten_mul',
    'aten_divide': 'aten_div',
    'aten_divide_mode': 'aten_div_mode',
    'aten_clip': 'aten_clamp',
    'aten_clip_tensor': 'aten_clamp_tensor',
    'aten_greater': 'aten_gt',
    'aten_greater_equal': 'aten_ge',
    'aten_less': 'aten_lt',
    'aten_less_equal': 'aten_le',
    'aten_not_equal': 'aten_ne',
    'aten_special_expit': 'aten_sigmoid',
    'aten_special_exp2': 'aten_exp2',
    'aten_special_expm1': 'aten_expm1',
    'aten_special_erf': 'aten_erf',
    'aten_special_erfc': 'aten_erfc',
    'aten_special_erfinv': 'aten_erfinv',
    'aten_special_gammaln': 'aten_lgamma',
    'aten_special_digamma': 'aten_digamma',
    'aten_special_psi': 'aten_digamma',
    'aten_special_i0': 'aten_i0',
    'aten_special_log1p': 'aten_log1p',
    'aten_special_sinc': 'aten_sinc',
    'aten_special_logit': 'aten_logit',
    'aten_special_softmax': 'aten_softmax',
    'aten_special_logsumexp': 'aten_logsumexp',
    'aten_special_polygamma': 'aten_polygamma',
    'aten_special_multigammaln': 'aten_mvlgamma',
    'aten_special_xlogy': 'aten_xlogy',
}



def _dtype_keyword(c: Call) -> Call:
    """log_softmax.int takes dtype positionally, special_log_softmax by keyword only."""
    self, dim, *dtype = c.args
    return call(self, dim, dtype=dtype[0] if dtype else c.kwargs.get('dtype'))


def _add_relu_pairs(dtype: torch.dtype):
    for shape, alpha in (((3, 4), 1), ((5,), 2), ((), 1)):
        yield sample_input(_values(dtype, shape), _values(dtype, shape, seed=1), alpha=alpha)


_NUMERIC = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32]

ENTRIES = [
    Entry('aten__add_relu', samples=_add_relu_pairs, dtypes=_NUMERIC),
    Entry('aten__add_relu_scalar', samples=tensor_and_scalar, dtypes=_NUMERIC),
    Entry('aten_isposinf', opinfo=['isposinf']),
    Entry('aten_isneginf', opinfo=['isneginf']),
    Entry('aten_isreal', opinfo=['isreal']),
    *(alias(function, of, _ELEMENTWISE) for function, of in ALIASES.items()),
    # special_round: round without decimals, round.decimals with
    dataclasses.replace(alias('aten_special_round', 'aten_round', _ELEMENTWISE), aten=('aten::round', 'aten::round.decimals'),
                        opinfo=['round', ('round', 'decimals_0'), ('round', 'decimals_3'), ('round', 'decimals_neg_3')]),
    dataclasses.replace(alias('aten_special_log_softmax', 'aten_log_softmax', _ELEMENTWISE), adapter=_dtype_keyword),
]
