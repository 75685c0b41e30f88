"""Complex tensors: views between complex and real, construction, and complex arithmetic.

A complex tensor of shape S is held in a graph as its real view: a FLOAT (complex64) or DOUBLE
(complex128) tensor of shape S + [2] holding (real, imaginary), marked `Value.is_complex`
(see graph_builder/ir.py and docs/complex.md). The functions here are the complex variants
(`complex=True`) of their ATen ops, chosen by the exporter when an input or output of the node
is complex; a few take real inputs and make complex outputs (view_as_complex, complex, polar).

Arithmetic works on the pair (re, im) of each operand; a real operand has im = None (zero),
which keeps a complex-by-real product as cheap and as exact as torch's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TTensor
from graph_builder.types import COMPLEX64, COMPLEX128, DOUBLE, FLOAT, DType
from torchlib.ops._helpers import as_shape
from torchlib.ops._kernels import full_of, like, run_supported
from torchlib.registry import aten_op

Pair = tuple[Any, Any | None]  # (re, im); im None means zero


# -- the real view ------------------------------------------------------------------------------
def re_part(x: Value) -> Value:
    """The real part of a complex Value (its real view's [..., 0])."""
    return op.Gather(x, np.array(0, dtype=np.int64), axis=-1)


def im_part(x: Value) -> Value:
    """The imaginary part of a complex Value (its real view's [..., 1])."""
    return op.Gather(x, np.array(1, dtype=np.int64), axis=-1)


def join(re: Any, im: Any) -> Value:
    """The complex Value with these real and imaginary parts (broadcast against each other)."""
    if not isinstance(re, Value) or not isinstance(im, Value) or re.shape is None or re.shape != im.shape or not re.is_static:
        re, im = op.Expand(re, op.Shape(im)), op.Expand(im, op.Shape(re))
    out = op.Concat(op.Unsqueeze(re, [-1]), op.Unsqueeze(im, [-1]), axis=-1)
    if isinstance(out, np.ndarray):  # eagerly, ops on constants alone give arrays
        out = Value("", types.from_numpy(out.dtype), out.shape, const_value=out)
    return out.as_complex()


def real_dtype(*xs: Any) -> DType:
    """The storage dtype of the result: DOUBLE when any tensor operand is complex128/float64."""
    for x in xs:
        if isinstance(x, Value) and x.dtype is DOUBLE:
            return DOUBLE
    return FLOAT


def pair(x: Any, dtype: DType) -> Pair:
    """(re, im) in dtype of a complex Value, a real Value (im None) or a Python number."""
    if isinstance(x, Value) and x.is_complex:
        view = x if x.dtype is dtype else op.Cast(x, to=dtype.onnx)
        return re_part(view), im_part(view)
    if isinstance(x, Value):
        return (x if x.dtype is dtype else op.Cast(x, to=dtype.onnx)), None
    if isinstance(x, complex):
        return np.array(x.real, dtype=dtype.numpy), np.array(x.imag, dtype=dtype.numpy)
    return np.array(x, dtype=dtype.numpy), None


def _np_dtype(x: Any) -> Any:
    return x.known_dtype.numpy if isinstance(x, Value) else x.dtype


def _zeros_like(x: Any) -> Any:
    return op.ConstantOfShape(op.Shape(x), value=np.zeros(1, dtype=_np_dtype(x))) if isinstance(x, Value) else np.zeros_like(x)


def from_pair(p: Pair) -> Value:
    """The complex Value of (re, im); a missing im is zero."""
    re, im = p
    if im is None:
        im = _zeros_like(re)
    return join(re, im)


def _add(a: Pair, b: Pair, sign: float = 1.0) -> Pair:
    f = op.Add if sign > 0 else op.Sub
    re = f(a[0], b[0])
    if a[1] is None and b[1] is None:
        return re, None
    if b[1] is None:
        return re, a[1]
    if a[1] is None:
        return re, (b[1] if sign > 0 else op.Neg(b[1]))
    return re, f(a[1], b[1])


def mul_pairs(a: Pair, b: Pair) -> Pair:
    (ar, ai), (br, bi) = a, b
    if ai is None and bi is None:
        return op.Mul(ar, br), None
    if bi is None:
        return op.Mul(ar, br), op.Mul(ai, br)
    if ai is None:
        return op.Mul(ar, br), op.Mul(ar, bi)
    return op.Sub(op.Mul(ar, br), op.Mul(ai, bi)), op.Add(op.Mul(ar, bi), op.Mul(ai, br))


def div_pairs(a: Pair, b: Pair) -> Pair:
    (ar, ai), (br, bi) = a, b
    if bi is None:
        return op.Div(ar, br), (None if ai is None else op.Div(ai, br))
    # Smith's scaling: divide through by s = |br| + |bi| so that br^2 + bi^2 cannot overflow
    s = op.Add(op.Abs(br), op.Abs(bi))
    cr, ci = op.Div(br, s), op.Div(bi, s)
    den = op.Mul(op.Add(op.Mul(cr, cr), op.Mul(ci, ci)), s)
    if ai is None:
        return op.Div(op.Mul(ar, cr), den), op.Div(op.Neg(op.Mul(ar, ci)), den)
    re = op.Add(op.Mul(ar, cr), op.Mul(ai, ci))
    im = op.Sub(op.Mul(ai, cr), op.Mul(ar, ci))
    return op.Div(re, den), op.Div(im, den)


def _hypot(re: Any, im: Any) -> Value:
    """|re + i im| without overflow or underflow in the squares (torch's std::abs)."""
    ar, ai = op.Abs(re), op.Abs(im)
    big, small = op.Max(ar, ai), op.Min(ar, ai)
    ratio = op.Div(small, big)
    scaled = op.Mul(big, op.Sqrt(op.Add(op.Mul(ratio, ratio), like(1, big))))
    scaled = op.Where(op.Equal(big, like(0, big)), big, scaled)  # 0 / 0
    # an infinite part gives inf even when the other is NaN (C99), inf / inf is NaN above
    return op.Where(op.IsInf(big), big, scaled)


def _atan2(y: Value, x: Value) -> Value:
    """atan2 with torch's signs of zero, computed in float32 when the dtype is double
    (onnxruntime has no double Atan kernel)."""

    def fn(y: Value, x: Value) -> Value:
        pi = like(math.pi, y)
        angle = op.Atan(op.Div(y, x))
        # 1/x < 0 for x = -0: atan2(+-0, -0) = +-pi, atan2(+-0, +0) = +-0
        negative_x = op.Or(op.Less(x, like(0, x)), op.And(op.Equal(x, like(0, x)), op.Less(op.Reciprocal(x), like(0, x))))
        y_negative = op.Or(op.Less(y, like(0, y)), op.And(op.Equal(y, like(0, y)), op.Less(op.Reciprocal(y), like(0, y))))
        half_plane = op.Where(y_negative, op.Sub(angle, pi), op.Add(angle, pi))
        both_inf = op.And(op.IsInf(x), op.IsInf(y))
        quarter = op.Mul(pi, like(0.25, y))
        inf_angle = op.Where(negative_x, op.Sub(pi, quarter), quarter)
        inf_angle = op.Where(y_negative, op.Neg(inf_angle), inf_angle)
        result = op.Where(negative_x, half_plane, angle)
        result = op.Where(op.And(op.Equal(x, like(0, x)), op.Equal(y, like(0, y))),
                          op.Where(negative_x, op.Where(y_negative, op.Neg(pi), pi), y), result)
        return op.Where(both_inf, inf_angle, result)

    if y.dtype is not DOUBLE:
        return run_supported(fn, frozenset({FLOAT}), y, x)
    # float64: divided by max(|x|, |y|) (the angle stays; float64 subnormals and values beyond
    # float32's range stay apart in float32), then one Newton step from the float32 angle t,
    # tan(exact - t) = (y cos t - x sin t) / (x cos t + y sin t), brings it to double precision.
    # Where that ratio is undefined (zeros, infinities) the angle is a multiple of pi / 4: the
    # float32 one, rounded to the nearest such multiple in float64.
    big = op.Max(op.Abs(x), op.Abs(y))
    scalable = op.And(op.Greater(big, like(0, big)), op.Not(op.IsInf(big)))
    big = op.Where(scalable, big, like(1, big))
    y, x = op.Div(y, big), op.Div(x, big)
    angle = run_supported(fn, frozenset({FLOAT}), y, x)
    cos, sin = op.Cos(angle), op.Sin(angle)
    num = op.Sub(op.Mul(y, cos), op.Mul(x, sin))
    den = op.Add(op.Mul(x, cos), op.Mul(y, sin))
    step = op.Div(num, den)
    usable = op.And(op.Not(op.IsNaN(step)), op.Not(op.IsInf(step)))
    quarter = like(math.pi / 4, angle)
    snapped = op.Mul(op.Round(op.Div(angle, quarter)), quarter)
    snapped = op.Where(op.Equal(angle, like(0, angle)), angle, snapped)  # keeps the sign of zero
    return op.Where(usable, op.Add(angle, step), snapped)


# -- views between complex and real ------------------------------------------------------------
@aten_op("aten::view_as_real", complex=True)
def aten_view_as_real(self: TTensor) -> TTensor:
    """view_as_real(Tensor(a) self) -> Tensor(a)"""
    return op.Identity(self)  # the real view itself, no longer marked complex


@aten_op("aten::view_as_complex")
def aten_view_as_complex(self: TFloat) -> TTensor:
    """view_as_complex(Tensor(a) self) -> Tensor(a)"""
    if self.dtype not in (FLOAT, DOUBLE):
        raise TypeError(f"aten::view_as_complex takes a float32 or float64 tensor, got {self.dtype} (torch also refuses it)")
    if self.shape is not None and (not self.shape or self.shape[-1] != 2):
        raise ValueError(f"aten::view_as_complex: the last dimension must have size 2, got shape {list(self.shape)}")
    return op.Identity(self).as_complex()


@aten_op("aten::complex")
def aten_complex(real: TFloat, imag: TFloat) -> TTensor:
    """complex(Tensor real, Tensor imag) -> Tensor"""
    if real.dtype not in (FLOAT, DOUBLE) or imag.dtype is not real.dtype:
        raise TypeError(f"aten::complex takes two float32 or two float64 tensors (torch too), got {real.dtype} and {imag.dtype}")
    return join(real, imag)


@aten_op("aten::polar")
def aten_polar(abs: TFloat, angle: TFloat) -> TTensor:
    """polar(Tensor abs, Tensor angle) -> Tensor"""
    if abs.dtype not in (FLOAT, DOUBLE) or angle.dtype is not abs.dtype:
        raise TypeError(
            f"aten::polar takes two float32 or two float64 tensors, got {abs.dtype} and {angle.dtype} (torch raises "
            "too, except for two float16, which torch 2.14 on turns into complex32: ONNX has no complex32)"
        )
    return join(op.Mul(abs, op.Cos(angle)), op.Mul(abs, op.Sin(angle)))


@aten_op("aten::real", complex=True)
def aten_real(self: TTensor) -> TTensor:
    """real(Tensor(a) self) -> Tensor(a)"""
    return re_part(self)


@aten_op("aten::real")
def aten_real_real(self: TTensor) -> TTensor:
    """real(Tensor(a) self) -> Tensor(a)"""
    return op.Identity(self)  # the real part of a real tensor is itself


@aten_op("aten::imag", complex=True)
def aten_imag(self: TTensor) -> TTensor:
    """imag(Tensor(a) self) -> Tensor(a)"""
    return im_part(self)


@aten_op("aten::conj_physical", "aten::conj", "aten::_conj", "aten::_conj_physical", complex=True)
def aten_conj_physical(self: TTensor) -> TTensor:
    """conj_physical(Tensor self) -> Tensor"""
    return op.Mul(self, np.array([1, -1], dtype=self.known_dtype.numpy)).as_complex()


@aten_op("aten::conj_physical", "aten::conj", "aten::_conj", "aten::_conj_physical", "aten::resolve_conj", "aten::resolve_neg")
def aten_conj_physical_real(self: TTensor) -> TTensor:
    """conj_physical(Tensor self) -> Tensor"""
    return op.Identity(self)  # the conjugate of a real tensor is itself


@aten_op("aten::resolve_conj", "aten::resolve_neg", complex=True)
def aten_resolve_conj(self: TTensor) -> TTensor:
    """resolve_conj(Tensor(a) self) -> Tensor(a)"""
    # a conjugate is computed when taken (conj, _conj), never a lazy bit: nothing to resolve
    return op.Identity(self).as_complex()


# -- functions of one complex tensor -----------------------------------------------------------
@aten_op("aten::abs", complex=True)
def aten_abs_complex(self: TTensor) -> TFloat:
    """abs(Tensor self) -> Tensor"""
    return _hypot(re_part(self), im_part(self))


@aten_op("aten::angle", complex=True)
def aten_angle_complex(self: TTensor) -> TFloat:
    """angle(Tensor self) -> Tensor"""
    return _atan2(im_part(self), re_part(self))


@aten_op("aten::angle")
def aten_angle(self: TTensor) -> TFloat:
    """angle(Tensor self) -> Tensor"""
    x = self if self.known_dtype.is_floating else op.Cast(self, to=FLOAT.onnx)

    def fn(x: Value) -> Value:
        angle = op.Where(op.Less(x, like(0, x)), like(math.pi, x), like(0, x))
        return op.Where(op.IsNaN(x), x, angle)

    return run_supported(fn, frozenset({FLOAT, DOUBLE}), x)


@aten_op("aten::sgn", complex=True)
def aten_sgn_complex(self: TTensor) -> TTensor:
    """sgn(Tensor self) -> Tensor"""
    re, im = re_part(self), im_part(self)
    magnitude = _hypot(re, im)
    zero = op.Equal(magnitude, like(0, magnitude))
    safe = op.Where(zero, like(1, magnitude), magnitude)
    return join(op.Where(zero, re, op.Div(re, safe)), op.Where(zero, im, op.Div(im, safe)))


@aten_op("aten::neg", complex=True)
def aten_neg_complex(self: TTensor) -> TTensor:
    """neg(Tensor self) -> Tensor"""
    return op.Neg(self).as_complex()


@aten_op("aten::reciprocal", complex=True)
def aten_reciprocal_complex(self: TTensor) -> TTensor:
    """reciprocal(Tensor self) -> Tensor"""
    return from_pair(_reciprocal((re_part(self), im_part(self))))


@aten_op("aten::rsqrt", complex=True)
def aten_rsqrt_complex(self: TTensor) -> TTensor:
    """rsqrt(Tensor self) -> Tensor"""
    return from_pair(_reciprocal(_sqrt((re_part(self), im_part(self)))))


def _reciprocal(z: Pair) -> Pair:
    """1 / (c + d i) as torch's c10::complex division computes it (numpy's Smith algorithm):
    with |c| >= |d|, r = d / c and s = 1 / (c + d r) give (s, -r s), else r = c / d and
    s = 1 / (d + c r) give (r s, -s). Near the largest float c + d r overflows and the result
    is 0 as in torch; (c^2 + d^2 or |c| + |d| would overflow sooner and give NaN)."""
    c, d = z
    if d is None:
        return op.Reciprocal(c), None
    one = like(1, c)
    c_larger = op.GreaterOrEqual(op.Abs(c), op.Abs(d))
    big, small = op.Where(c_larger, c, d), op.Where(c_larger, d, c)
    r = op.Div(small, big)
    s = op.Div(one, op.Add(big, op.Mul(small, r)))
    # (1 + 0 r) s and (0 - 1 r) s as torch computes them, for the signs of zero and inf * 0
    re_c, im_c = op.Mul(op.Add(one, op.Mul(like(0, r), r)), s), op.Mul(op.Sub(like(0, r), r), s)
    re_d, im_d = op.Mul(op.Add(r, like(0, r)), s), op.Mul(op.Sub(op.Mul(like(0, r), r), one), s)
    re, im = op.Where(c_larger, re_c, re_d), op.Where(c_larger, im_c, im_d)
    # both parts 0: 1 / |c| and 0 / |d| (inf and NaN), as torch
    zero = op.And(op.Equal(c, like(0, c)), op.Equal(d, like(0, d)))
    return op.Where(zero, op.Div(one, op.Abs(c)), re), op.Where(zero, op.Div(like(0, d), op.Abs(d)), im)


def _exp(z: Pair) -> Pair:
    re, im = z
    magnitude = op.Exp(re)
    if im is None:
        return magnitude, None
    # exp(x + 0i) = exp(x) + 0i also for x = inf (inf * sin 0 would be NaN)
    return op.Mul(magnitude, op.Cos(im)), op.Where(op.Equal(im, like(0, im)), im, op.Mul(magnitude, op.Sin(im)))


def _scales(re: Any, im: Any) -> tuple[Value, Value]:
    """(f, g) per element: powers of 2, f = 1/4 and g = 2 when a part is near the largest float
    (above max / 4), f = 4^k and g = 2^-k when both are below the smallest normal float (k = 12
    for float32, 27 for float64: their subnormals become normal), else 1 and 1. z f is exact, and
    sqrt(z) = sqrt(z f) g, log|z| = log|z f| + 2 log g."""
    info = np.finfo(_np_dtype(re))
    k = 12 if info.dtype == np.float32 else 27
    big = op.Max(op.Abs(re), op.Abs(im))
    large, small = op.Greater(big, like(float(info.max) / 4, re)), op.Less(big, like(float(info.tiny), re))
    up = op.Where(large, like(0.25, re), op.Where(small, like(4.0 ** k, re), like(1, re)))
    down = op.Where(large, like(2, re), op.Where(small, like(2.0 ** -k, re), like(1, re)))
    return up, down


def _log(z: Pair) -> Pair:
    """log|z| + i arg z; |z| from parts scaled by a power of 2 (`_scales`), so that it neither
    overflows near the largest float nor loses digits among subnormals (as std::log does)."""
    re, im = z
    if im is None:
        im = _zeros_like(re)
    up, down = _scales(re, im)
    magnitude = op.Add(op.Log(_hypot(op.Mul(re, up), op.Mul(im, up))), op.Mul(op.Log(down), like(2, re)))
    return magnitude, _atan2(im, re)


@aten_op("aten::exp", complex=True)
def aten_exp_complex(self: TTensor) -> TTensor:
    """exp(Tensor self) -> Tensor"""
    return from_pair(_exp((re_part(self), im_part(self))))


@aten_op("aten::log", complex=True)
def aten_log_complex(self: TTensor) -> TTensor:
    """log(Tensor self) -> Tensor"""
    return from_pair(_log((re_part(self), im_part(self))))


@aten_op("aten::sqrt", complex=True)
def aten_sqrt_complex(self: TTensor) -> TTensor:
    """sqrt(Tensor self) -> Tensor"""
    return from_pair(_sqrt((re_part(self), im_part(self))))


def _sqrt(z: Pair) -> Pair:
    """The principal square root, without cancellation: t = sqrt((|z| + |re|) / 2) is the part
    of larger magnitude, the other is |im| / (2 t)."""
    re, im = z
    if im is None:
        im = _zeros_like(re)
    # (|z| + |re|) / 2 overflows from a part near the largest float: sqrt(z) = 2 sqrt(z / 4) there,
    # exact as std::sqrt scales; subnormal parts: sqrt(z) = sqrt(z 4^k) / 2^k
    up, down = _scales(re, im)
    t = op.Mul(op.Sqrt(op.Mul(op.Add(_hypot(op.Mul(re, up), op.Mul(im, up)), op.Abs(op.Mul(re, up))), like(0.5, re))), down)
    other = op.Div(op.Abs(im), op.Mul(t, like(2, t)))
    other = op.Where(op.Equal(t, like(0, t)), like(0, t), other)
    negative_im = op.Or(op.Less(im, like(0, im)), op.And(op.Equal(im, like(0, im)), op.Less(op.Reciprocal(im), like(0, im))))
    positive_re = op.Not(op.Less(re, like(0, re)))
    out_re = op.Where(positive_re, t, other)
    out_im = op.Where(positive_re, other, t)
    out_im = op.Where(negative_im, op.Neg(out_im), out_im)
    # infinite imaginary part: sqrt(x +- inf i) = inf +- inf i whatever x (C99)
    inf_im = op.IsInf(im)
    return op.Where(inf_im, op.Abs(im), out_re), op.Where(inf_im, im, out_im)


# -- binary arithmetic --------------------------------------------------------------------------
def _operands(self: Any, other: Any) -> tuple[Pair, Pair]:
    dtype = real_dtype(self, other)
    return pair(self, dtype), pair(other, dtype)


def _scaled(p: Pair, alpha: Any, dtype: DType) -> Pair:
    if alpha == 1:
        return p
    return mul_pairs(p, pair(alpha, dtype))


@aten_op("aten::add.Tensor", complex=True)
def aten_add_complex(self: TTensor, other: TTensor, *, alpha: float = 1) -> TTensor:
    """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    a, b = _operands(self, other)
    return from_pair(_add(a, _scaled(b, alpha, real_dtype(self, other))))


@aten_op("aten::add.Scalar", complex=True)
def aten_add_scalar_complex(self: TTensor, other: complex, alpha: complex = 1) -> TTensor:
    """add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    return aten_add_complex.__wrapped__(self, other, alpha=alpha)


@aten_op("aten::sub.Tensor", complex=True)
def aten_sub_complex(self: TTensor, other: TTensor, *, alpha: float = 1) -> TTensor:
    """sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    a, b = _operands(self, other)
    return from_pair(_add(a, _scaled(b, alpha, real_dtype(self, other)), sign=-1.0))


@aten_op("aten::sub.Scalar", complex=True)
def aten_sub_scalar_complex(self: TTensor, other: complex, alpha: complex = 1) -> TTensor:
    """sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    return aten_sub_complex.__wrapped__(self, other, alpha=alpha)


@aten_op("aten::rsub.Tensor", complex=True)
def aten_rsub_complex(self: TTensor, other: TTensor, *, alpha: float = 1) -> TTensor:
    """rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    a, b = _operands(self, other)
    return from_pair(_add(b, _scaled(a, alpha, real_dtype(self, other)), sign=-1.0))


@aten_op("aten::mul.Tensor", "aten::mul.Scalar", complex=True)
def aten_mul_complex(self: TTensor, other: TTensor) -> TTensor:
    """mul.Tensor(Tensor self, Tensor other) -> Tensor"""
    a, b = _operands(self, other)
    return from_pair(mul_pairs(a, b))


@aten_op("aten::div.Tensor", "aten::div.Scalar", complex=True)
def aten_div_complex(self: TTensor, other: TTensor) -> TTensor:
    """div.Tensor(Tensor self, Tensor other) -> Tensor"""
    a, b = _operands(self, other)
    return from_pair(div_pairs(a, b))


def _pow(base: Pair, exponent: Any, dtype: DType) -> Pair:
    """base ** exponent; small integer Python exponents by repeated products as torch does."""
    if isinstance(exponent, (int, float)) and not isinstance(exponent, bool) and float(exponent).is_integer() and abs(exponent) <= 4:
        n = int(exponent)
        one = np.array(1, dtype=dtype.numpy)
        if n == 0:
            re = op.Add(op.Mul(base[0], np.array(0, dtype=dtype.numpy)), one)
            return op.Where(op.IsNaN(re), one, re), None  # z ** 0 = 1, NaN included
        result = base
        for _ in range(abs(n) - 1):
            result = mul_pairs(result, base)
        return div_pairs((one, None), result) if n < 0 else result
    if isinstance(exponent, float) and exponent == 0.5:
        return _sqrt(base)
    w = pair(exponent, dtype)
    if dtype is FLOAT:  # exp(w log z) loses digits in float32 when |w log z| is large: compute in double
        wide = [None if v is None else op.Cast(op.CastLike(v, base[0]) if not isinstance(v, Value) else v, to=DOUBLE.onnx) for v in (*base, *w)]
        re, im = _exp(mul_pairs((wide[2], wide[3]), _log((wide[0], wide[1]))))
        return op.Cast(re, to=FLOAT.onnx), (None if im is None else op.Cast(im, to=FLOAT.onnx))
    return _exp(mul_pairs(w, _log(base)))


@aten_op("aten::pow.Tensor_Tensor", "aten::pow.Tensor_Scalar", complex=True)
def aten_pow_complex(self: TTensor, exponent: TTensor) -> TTensor:
    """pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor"""
    dtype = real_dtype(self, exponent)
    return from_pair(_pow(pair(self, dtype), exponent, dtype))


@aten_op("aten::pow.Scalar", complex=True)
def aten_pow_scalar_complex(self: float, exponent: TTensor) -> TTensor:
    """pow.Scalar(Scalar self, Tensor exponent) -> Tensor"""
    dtype = real_dtype(exponent)
    re, im = pair(self, dtype)
    ref = re_part(exponent)  # the base as Values (formulas below need a Value to take the dtype from)
    base = (op.CastLike(re, ref), None if im is None else op.CastLike(im, ref))
    return from_pair(_pow(base, exponent, dtype))


# -- conversions -------------------------------------------------------------------------------
@aten_op("aten::_to_copy", complex=True)
def aten__to_copy_complex(self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                          pin_memory: bool | None = None, non_blocking: bool = False, memory_format: Any = None) -> TTensor:
    """_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"""
    if dtype is None:
        return op.Identity(self).as_complex() if self.is_complex else op.Identity(self)
    if dtype in (COMPLEX64, COMPLEX128):
        storage = FLOAT if dtype is COMPLEX64 else DOUBLE
        if self.is_complex:
            return op.Cast(self, to=storage.onnx).as_complex()
        real = self if self.dtype is storage else op.Cast(self, to=storage.onnx)
        return from_pair((real, None))
    if not self.is_complex:
        return op.Cast(self, to=dtype.onnx)
    # complex -> real: the real part (torch warns that the imaginary part is discarded)
    real = re_part(self)
    return real if real.dtype is dtype else op.Cast(real, to=dtype.onnx)



@aten_op("aten::to.dtype", complex=True)
def aten_to_dtype_complex(self: TTensor, dtype: DType, non_blocking: bool = False, copy: bool = False,
                          memory_format: Any = None) -> TTensor:
    """to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    return aten__to_copy_complex(self, dtype=dtype)


@aten_op("aten::to.dtype_layout", complex=True)
def aten_to_dtype_layout_complex(self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                                 pin_memory: bool | None = None, non_blocking: bool = False, copy: bool = False,
                                 memory_format: Any = None) -> TTensor:
    """to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    return aten__to_copy_complex(self, dtype=dtype)


# -- creation ----------------------------------------------------------------------------------
def _full(shape: Any, value: Any, dtype: DType) -> Value:
    """A tensor of `shape` filled with `value`; a complex dtype gives its real view."""
    if dtype not in (COMPLEX64, COMPLEX128):
        return full_of(shape, value, dtype)
    storage = FLOAT if dtype is COMPLEX64 else DOUBLE
    if isinstance(value, Value):  # a SymFloat / SymInt fill: a real number
        return join(full_of(shape, value, storage), full_of(shape, 0, storage))
    value = complex(value)
    return join(full_of(shape, value.real, storage), full_of(shape, value.imag, storage))


def _shape_of(self: Value) -> Value:
    """The logical shape of self as an INT64 1-D Value."""
    return op.Shape(self, end=-1) if self.is_complex else op.Shape(self)


@aten_op("aten::full", complex=True)
def aten_full_complex(size: Sequence[Any], fill_value: complex, *, dtype: DType | None = None, layout: Any = None,
                      device: Any = None, pin_memory: bool | None = None) -> TTensor:
    """full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(as_shape(size), fill_value, dtype or COMPLEX64)


@aten_op("aten::zeros", complex=True)
def aten_zeros_complex(size: Sequence[Any], *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                       pin_memory: bool | None = None) -> TTensor:
    """zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(as_shape(size), 0, dtype or COMPLEX64)


@aten_op("aten::ones", complex=True)
def aten_ones_complex(size: Sequence[Any], *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                      pin_memory: bool | None = None) -> TTensor:
    """ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(as_shape(size), 1, dtype or COMPLEX64)


@aten_op("aten::full_like", complex=True)
def aten_full_like_complex(self: TTensor, fill_value: complex, *, dtype: DType | None = None, layout: Any = None,
                           device: Any = None, pin_memory: bool | None = None, memory_format: Any = None) -> TTensor:
    """full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full(_shape_of(self), fill_value, dtype or self.known_logical_dtype)


@aten_op("aten::zeros_like", complex=True)
def aten_zeros_like_complex(self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                            pin_memory: bool | None = None, memory_format: Any = None) -> TTensor:
    """zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full(_shape_of(self), 0, dtype or self.known_logical_dtype)


@aten_op("aten::ones_like", complex=True)
def aten_ones_like_complex(self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                           pin_memory: bool | None = None, memory_format: Any = None) -> TTensor:
    """ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full(_shape_of(self), 1, dtype or self.known_logical_dtype)


@aten_op("aten::where.self", complex=True)
def aten_where_complex(condition: TTensor, self: TTensor, other: TTensor) -> TTensor:
    """where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"""
    a, b = _operands(self, other)
    if condition.dtype is not types.BOOL:
        condition = op.Cast(condition, to=types.BOOL.onnx)
    zero = np.array(0, dtype=real_dtype(self, other).numpy)
    re = op.Where(condition, a[0], b[0])
    im = op.Where(condition, zero if a[1] is None else a[1], zero if b[1] is None else b[1])
    return join(re, im)
