"""Expectations for torchlib/ops/elementwise.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate, call

from . import _helpers as h
from . import _own_samples as own
from ._helpers import scalar_arg

ENTRIES = [
    Entry('aten_abs', opinfo=['abs']),  # abs
    Entry('aten_acos', opinfo=['acos'], xfail=[
    ]),  # acos
    Entry('aten_acosh', opinfo=['acosh']),  # acosh
    Entry('aten_add', opinfo=['add'], xfail=[TorchLessAccurate(dtypes=[torch.float16])]),  # add.Tensor
    Entry('aten_add_scalar', opinfo=['add', 'nn.functional.margin_ranking_loss'], aten=['aten::add.Tensor', 'aten::add.Scalar'], adapter=scalar_arg(1),
          samples=own.tensor_scalar_alpha, dtypes=[torch.bool]),  # no OpInfo sample adds a Python bool
    Entry('aten_addcdiv', opinfo=['addcdiv']),  # addcdiv
    Entry('aten_addcmul', opinfo=['addcmul']),  # addcmul
    Entry('aten_asin', opinfo=['asin']),  # asin
    Entry('aten_asinh', opinfo=['asinh']),  # asinh
    Entry('aten_atan', opinfo=['atan']),  # atan
    Entry('aten_atan2', opinfo=['atan2']),  # atan2
    Entry('aten_atanh', opinfo=['atanh']),  # atanh
    Entry('aten_ceil', opinfo=['ceil']),  # ceil
    Entry('aten_clone', opinfo=['clone']),  # clone
    Entry('aten_cos', opinfo=['cos']),  # cos
    Entry('aten_cosh', opinfo=['cosh']),  # cosh
    Entry('aten_div', opinfo=[('div', 'no_rounding_mode')]),  # div.Tensor, div.Scalar
    Entry('aten_div_mode', opinfo=[('div', 'trunc_rounding'), ('div', 'floor_rounding')], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16], samples=[*range(4, 8)], opinfo='div.trunc_rounding'),
        TorchLessAccurate(dtypes=[torch.float16], samples=[6, 7], opinfo='div.trunc_rounding'),
        # torch 2.10 and 2.11 round a broadcast bfloat16 quotient to bfloat16 before truncating
        # (trunc(-6.3125 / 1.0546875) = -6, its contiguous kernel -5, the exact value -5.985...)
        TorchLessAccurate(dtypes=[torch.bfloat16], samples=[2], opinfo='div.trunc_rounding', torch_version='<2.12'),
    ]),  # div.Tensor_mode, div.Scalar_mode
    Entry('aten_erf', opinfo=['erf']),  # erf
    Entry('aten_exp', opinfo=['exp']),  # exp
    Entry('aten_exp2', opinfo=['exp2']),  # exp2
    Entry('aten_expm1', opinfo=['expm1']),  # expm1
    Entry('aten_fill', opinfo=['fill']),  # fill.Scalar
    Entry('aten_fill_tensor', opinfo=['fill'], aten=['aten::fill.Scalar'], adapter=lambda c: call(c.args[0], torch.tensor(c.args[1], dtype=c.args[0].dtype))),
    Entry('aten_floor', opinfo=['floor']),  # floor
    Entry('aten_fmod', opinfo=['fmod']),  # fmod.Tensor, fmod.Scalar
    Entry('aten_frac', opinfo=['frac']),  # frac
    Entry('aten_gcd', opinfo=['gcd']),  # gcd
    Entry('aten_lcm', opinfo=['lcm']),  # lcm
    Entry('aten_lerp', opinfo=['lerp']),  # lerp.Scalar
    Entry('aten_lerp_tensor', opinfo=['lerp']),  # lerp.Tensor
    Entry('aten_log', opinfo=['log']),  # log
    Entry('aten_log10', opinfo=['log10']),  # log10
    Entry('aten_log1p', opinfo=['log1p']),  # log1p
    Entry('aten_log2', opinfo=['log2']),  # log2
    Entry('aten_mul', opinfo=['mul']),  # mul.Tensor, mul.Scalar
    Entry('aten_neg', opinfo=['neg']),  # neg
    Entry('aten_pow', opinfo=['pow']),  # pow.Tensor_Tensor
    Entry('aten_pow_scalar', samples=h.scalar_and_tensor, dtypes=[torch.float32, torch.float64, torch.int64, torch.int32]),
    Entry('aten_pow_tensor_scalar', opinfo=['pow', 'nn.functional.gaussian_nll_loss'], aten=['aten::pow.Tensor_Tensor', 'aten::pow.Tensor_Scalar'], adapter=scalar_arg(1),
          samples=own.tensor_int_exponent, dtypes=[torch.int64, torch.int32]),  # no OpInfo sample raises an int tensor to a Python int
    Entry('aten_reciprocal', opinfo=['reciprocal']),  # reciprocal
    Entry('aten_remainder', opinfo=['remainder']),  # remainder.Tensor, remainder.Scalar, remainder.Scalar_Tensor
    Entry('aten_round', opinfo=['round']),  # round
    Entry('aten_round_decimals', opinfo=[('round', 'decimals_0'), ('round', 'decimals_3'), ('round', 'decimals_neg_3')]),  # round.decimals
    Entry('aten_rsqrt', opinfo=['rsqrt']),  # rsqrt
    Entry('aten_rsub', opinfo=['rsub']),  # rsub.Tensor
    Entry('aten_rsub_scalar', opinfo=['rsub', 'signal.windows.bartlett'], aten=['aten::rsub.Tensor', 'aten::rsub.Scalar'], adapter=scalar_arg(1),
          samples=own.tensor_scalar_alpha, dtypes=[torch.float16, torch.bfloat16, torch.int64, torch.int32]),  # OpInfo samples with a Python scalar are float32/float64 only
    Entry('aten_sign', opinfo=['sign']),  # sign
    Entry('aten_sin', opinfo=['sin']),  # sin
    Entry('aten_sinh', opinfo=['sinh']),  # sinh
    Entry('aten_sqrt', opinfo=['sqrt']),  # sqrt
    Entry('aten_square', opinfo=['square']),  # square (CompositeImplicit)
    Entry('aten_sub', opinfo=['sub']),  # sub.Tensor
    Entry('aten_sub_scalar', opinfo=['sub', 'nanquantile'], aten=['aten::sub.Tensor', 'aten::sub.Scalar'], adapter=scalar_arg(1),
          samples=own.tensor_scalar_alpha, dtypes=[torch.float16, torch.bfloat16, torch.int64, torch.int32]),  # OpInfo samples with a Python scalar are float32/float64 only
    Entry('aten_nextafter', opinfo=['nextafter']),  # nextafter
    Entry('aten_tan', opinfo=['tan']),  # tan
    Entry('aten_tanh', opinfo=['tanh']),  # tanh
    Entry('aten_trunc', opinfo=['trunc']),  # trunc
]
