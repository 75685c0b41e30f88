"""torchlib/ops/elementwise.py"""

from __future__ import annotations

from torchlib.conformance.spec import Entry

ENTRIES = [
    Entry("aten_abs", opinfo=["abs"]),
    Entry("aten_add", opinfo=["add"]),
    Entry("aten_clone", opinfo=["clone"]),
    Entry("aten_exp", opinfo=["exp"]),
    Entry("aten_mul", opinfo=["mul"]),
    Entry("aten_neg", opinfo=["neg"]),
    Entry("aten_relu", opinfo=["nn.functional.relu"]),
    Entry("aten_sqrt", opinfo=["sqrt"]),
    Entry("aten_sub", opinfo=["sub"]),
    Entry('aten_acos', opinfo=['acos']),  # aten::acos; candidates ['acos']
    Entry('aten_acosh', opinfo=['acosh']),  # aten::acosh; candidates ['acosh']
    Entry('aten_add_scalar', opinfo=['add']),  # aten::add.Scalar; candidates ['add']
    Entry('aten_addcdiv', opinfo=['addcdiv']),  # aten::addcdiv; candidates ['addcdiv']
    Entry('aten_addcmul', opinfo=['addcmul']),  # aten::addcmul; candidates ['addcmul']
    Entry('aten_asin', opinfo=['asin']),  # aten::asin; candidates ['asin']
    Entry('aten_asinh', opinfo=['asinh']),  # aten::asinh; candidates ['asinh']
    Entry('aten_atan', opinfo=['atan']),  # aten::atan; candidates ['atan']
    Entry('aten_atan2', opinfo=['atan2']),  # aten::atan2; candidates ['atan2']
    Entry('aten_atanh', opinfo=['atanh']),  # aten::atanh; candidates ['atanh']
    Entry('aten_ceil', opinfo=['ceil']),  # aten::ceil; candidates ['ceil']
    Entry('aten_cos', opinfo=['cos']),  # aten::cos; candidates ['cos']
    Entry('aten_cosh', opinfo=['cosh']),  # aten::cosh; candidates ['cosh']
    Entry('aten_div', opinfo=[('div', 'no_rounding_mode')]),  # aten::div.Tensor, aten::div.Scalar; candidates [('div', 'no_rounding_mode'), ('div', 'trunc_rounding'), ('div', 'floor_rounding')]
    Entry('aten_div_mode', opinfo=[('div', 'no_rounding_mode')]),  # aten::div.Tensor_mode, aten::div.Scalar_mode; candidates [('div', 'no_rounding_mode'), ('div', 'trunc_rounding'), ('div', 'floor_rounding')]
    Entry('aten_erf', opinfo=['erf']),  # aten::erf; candidates ['erf']
    Entry('aten_exp2', opinfo=['exp2']),  # aten::exp2; candidates ['exp2']
    Entry('aten_expm1', opinfo=['expm1']),  # aten::expm1; candidates ['expm1']
    Entry('aten_fill', opinfo=['fill']),  # aten::fill.Scalar; candidates ['fill']
    Entry('aten_fill_tensor', opinfo=['fill']),  # aten::fill.Tensor; candidates ['fill']
    Entry('aten_floor', opinfo=['floor']),  # aten::floor; candidates ['floor']
    Entry('aten_fmod', opinfo=['fmod']),  # aten::fmod.Tensor, aten::fmod.Scalar; candidates ['fmod']
    Entry('aten_frac', opinfo=['frac']),  # aten::frac; candidates ['frac']
    Entry('aten_lerp', opinfo=['lerp']),  # aten::lerp.Scalar; candidates ['lerp']
    Entry('aten_lerp_tensor', opinfo=['lerp']),  # aten::lerp.Tensor; candidates ['lerp']
    Entry('aten_log', opinfo=['log']),  # aten::log; candidates ['log']
    Entry('aten_log10', opinfo=['log10']),  # aten::log10; candidates ['log10']
    Entry('aten_log1p', opinfo=['log1p']),  # aten::log1p; candidates ['log1p']
    Entry('aten_log2', opinfo=['log2']),  # aten::log2; candidates ['log2']
    Entry('aten_pow', opinfo=['pow']),  # aten::pow.Tensor_Tensor; candidates ['pow']
    Entry('aten_pow_scalar', opinfo=['pow']),  # aten::pow.Scalar; candidates ['pow']
    Entry('aten_pow_tensor_scalar', opinfo=['pow']),  # aten::pow.Tensor_Scalar; candidates ['pow']
    Entry('aten_reciprocal', opinfo=['reciprocal']),  # aten::reciprocal; candidates ['reciprocal']
    Entry('aten_remainder', opinfo=['remainder']),  # aten::remainder.Tensor, aten::remainder.Scalar, aten::remainder.Scalar_Tensor; candidates ['remainder']
    Entry('aten_round', opinfo=['round']),  # aten::round; candidates ['round', ('round', 'decimals_0'), ('round', 'decimals_3'), ('round', 'decimals_neg_3')]
    Entry('aten_round_decimals', opinfo=['round']),  # aten::round.decimals; candidates ['round', ('round', 'decimals_0'), ('round', 'decimals_3'), ('round', 'decimals_neg_3')]
    Entry('aten_rsqrt', opinfo=['rsqrt']),  # aten::rsqrt; candidates ['rsqrt']
    Entry('aten_rsub', opinfo=['rsub']),  # aten::rsub.Tensor; candidates ['rsub']
    Entry('aten_rsub_scalar', opinfo=['rsub']),  # aten::rsub.Scalar; candidates ['rsub']
    Entry('aten_sign', opinfo=['sign']),  # aten::sign; candidates ['sign']
    Entry('aten_sin', opinfo=['sin']),  # aten::sin; candidates ['sin']
    Entry('aten_sinh', opinfo=['sinh']),  # aten::sinh; candidates ['sinh']
    Entry('aten_square', opinfo=['square']),  # aten::square; candidates ['square']
    Entry('aten_sub_scalar', opinfo=['sub']),  # aten::sub.Scalar; candidates ['sub']
    Entry('aten_tan', opinfo=['tan']),  # aten::tan; candidates ['tan']
    Entry('aten_tanh', opinfo=['tanh']),  # aten::tanh; candidates ['tanh']
    Entry('aten_trunc', opinfo=['trunc']),  # aten::trunc; candidates ['trunc']
]
