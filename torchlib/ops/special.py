"""Special functions and the smaller elementwise math ops: erfc, erfinv, ndtr, ndtri, lgamma,
digamma, mvlgamma, the Bessel I0/I1 family, logit, xlogy, sinc, hypot, logaddexp, copysign,
heaviside, nan_to_num, frexp, float_power, floor_divide, ldexp, bitwise shifts, ...

ONNX has no operator for most special functions: they are written as the classic rational or
series approximations (Cephes, Lanczos), accurate to double precision. The erf family (erfc,
erfinv, ndtr, log_ndtr, erfcx) computes in double for every dtype: onnxruntime's Erf has no
double kernel, so erf itself is a rational approximation here too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import (
    BFLOAT16, BOOL, DOUBLE, FLOAT, FLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT64, DType, TFloat, TReal, TRealOrBool,
    TTensor,
)  # fmt: skip
from torchlib.ops import elementwise as ew
from torchlib.ops._unary import unary
from torchlib.ops._kernels import FLOATS, MIN_MAX, NUMERIC, OPMATH, as_float, kernel, like, run_supported
from torchlib.promotion import INT_TO_FLOAT, elementwise
from torchlib.registry import aten_op


def _polyval(coefs: list[float], x: Value) -> Value:
    """coefs[0] * x**(n-1) + ... + coefs[-1] by Horner's rule."""
    acc = like(coefs[0], x)
    for c in coefs[1:]:
        acc = op.Add(op.Mul(acc, x), c)
    return acc


# -- the error function family (in double) ---------------------------------------------------------

# Cephes' ndtr.c rational approximations (double precision): erf(x) = x T(x^2) / U(x^2) for
# |x| <= 1; erfc(x) = exp(-x^2) P(x) / Q(x) for 1 <= x < 8, exp(-x^2) R(x) / S(x) for x >= 8
# (U, Q and S have an implied leading 1). onnxruntime's Erf has no double kernel, so they
# compute in double for every dtype.
_ERF_T = [9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3, 7.00332514112805075473e3,
          5.55923013010394962768e4]  # fmt: skip
_ERF_U = [1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3, 2.26290000613890934246e4,
          4.92673942608635921086e4]  # fmt: skip
_ERFC_P = [2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0, 4.86371970985681366614e1,
           1.96520832956077098242e2, 5.26445194995477358631e2, 9.34528527171957607540e2, 1.02755188689515710272e3,
           5.57535335369399327526e2]  # fmt: skip
_ERFC_Q = [1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2, 9.75708501743205489753e2,
           1.82390916687909736289e3, 2.24633760818710981792e3, 1.65666309194161350182e3, 5.57535340817727675546e2]  # fmt: skip
_ERFC_R = [5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0, 6.16021097993053585195e0,
           7.40974269950448939160e0, 2.97886665372100240670e0]  # fmt: skip
_ERFC_S = [1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1, 1.70814450747565897222e1,
           9.60896809063285878198e0, 3.36907645100081516050e0]  # fmt: skip
D64 = frozenset({DOUBLE})
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _erf_small(x: Value) -> Value:
    """erf(x) for |x| <= 1."""
    z = op.Mul(x, x)
    return op.Div(op.Mul(x, _polyval(_ERF_T, z)), _polyval(_ERF_U, z))


def _erfcx_big(a: Value) -> Value:
    """erfcx(a) = exp(a^2) erfc(a) for a >= 1 (inf for a = inf)."""
    a = op.Max(a, like(1.0, a))
    mid = op.Div(_polyval(_ERFC_P, a), _polyval(_ERFC_Q, a))
    far = op.Div(_polyval(_ERFC_R, a), _polyval(_ERFC_S, a))
    far = op.Where(op.IsInf(a), like(0.0, a), far)
    return op.Where(op.Less(a, 8.0), mid, far)


def _exp_neg_square(a: Value) -> Value:
    """exp(-a^2) without the rounding error of a^2 (Cephes' expx2): a = m + f with m a multiple
    of 1/128, so m^2 is exact, and exp(-a^2) = exp(-m^2) exp(-(2m + f) f)."""
    m = op.Div(op.Round(op.Mul(a, 128.0)), 128.0)
    f = op.Sub(a, m)
    out = op.Mul(op.Exp(op.Neg(op.Mul(m, m))), op.Exp(op.Neg(op.Mul(op.Add(op.Mul(m, 2.0), f), f))))
    return op.Where(op.IsInf(a), like(0.0, a), out)


def _erfc_pos(a: Value) -> Value:
    """erfc(a) for a >= 0."""
    big = op.Mul(_exp_neg_square(a), _erfcx_big(a))
    return op.Where(op.Less(a, 1.0), op.Sub(1.0, _erf_small(op.Min(a, like(1.0, a)))), big)


def _erf(x: Value) -> Value:
    a = op.Abs(x)
    big = op.Sub(1.0, _erfc_pos(a))
    big = op.Where(op.Less(x, 0), op.Neg(big), big)
    return op.Where(op.LessOrEqual(a, 1.0), _erf_small(op.Clip(x, like(-1.0, x), like(1.0, x))), big)


def _erfc(x: Value) -> Value:
    pos = _erfc_pos(op.Abs(x))
    return op.Where(op.Less(x, 0), op.Sub(2.0, pos), pos)


def _erfcx(x: Value) -> Value:
    a = op.Abs(x)
    small = op.Mul(op.Exp(op.Mul(a, a)), op.Sub(1.0, _erf_small(op.Min(a, like(1.0, a)))))
    pos = op.Where(op.Less(a, 1.0), small, _erfcx_big(a))  # erfcx(|x|)
    neg = op.Sub(op.Mul(op.Exp(op.Mul(x, x)), 2.0), pos)  # erfcx(-a) = 2 exp(a^2) - erfcx(a)
    return op.Where(op.Less(x, 0), neg, pos)


# Giles, "Approximating the erfinv function" (GPU Computing Gems), single precision, refined
# below by Newton steps on the double erf (erfc near 1, where 1 - y is exact).
_ERFINV_CENTRAL = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]  # fmt: skip
_ERFINV_TAIL = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]  # fmt: skip


def _erfinv_abs(a: Value, c: Value) -> Value:
    """x >= 0 with erf(x) = a and erfc(x) = c = 1 - a, for 0 <= a < 1; c must be exact where
    a > 0.5 (the tail is solved from it)."""
    w = op.Neg(op.Log(op.Mul(c, op.Add(1.0, a))))
    central = _polyval(_ERFINV_CENTRAL, op.Sub(w, 2.5))
    tail = _polyval(_ERFINV_TAIL, op.Sub(op.Sqrt(op.Max(w, like(5.0, w))), 3.0))
    x = op.Mul(op.Where(op.Less(w, 5.0), central, tail), a)
    # beyond float32's range (w > 16): the asymptotic erfc(x) ~ exp(-x^2) / (x sqrt(pi))
    log_c = op.Neg(op.Log(op.Max(c, like(1e-300, c))))
    far = op.Sqrt(op.Sub(log_c, op.Mul(op.Log(op.Mul(log_c, math.pi)), 0.5)))
    x = op.Where(op.Greater(w, 16.0), far, x)
    near_one = op.Greater(a, 0.5)
    log_c = op.Log(c)
    for _ in range(3):
        # near 1: Newton on log(erfc(x)) = log(1 - a), nearly linear in the tail
        xs = op.Min(x, like(1.0, x))
        small = op.Sub(1.0, _erf_small(xs))
        erfcx = op.Where(op.Less(x, 1.0), op.Mul(op.Exp(op.Mul(xs, xs)), small), _erfcx_big(x))
        log_erfc = op.Where(op.Less(x, 1.0), op.Log(small), op.Sub(op.Log(erfcx), op.Mul(x, x)))
        tail_step = op.Mul(op.Sub(log_erfc, log_c), op.Mul(erfcx, math.sqrt(math.pi) / 2))
        central_step = op.Div(op.Sub(a, _erf(x)), op.Mul(op.Exp(op.Neg(op.Mul(x, x))), _TWO_OVER_SQRT_PI))
        x = op.Add(x, op.Where(near_one, tail_step, central_step))
    return x


def _erfinv(y: Value) -> Value:
    a = op.Abs(y)
    x = _erfinv_abs(a, op.Sub(1.0, a))  # 1 - a is exact for a >= 0.5
    x = op.Where(op.Equal(a, 1.0), like(math.inf, a), x)
    x = op.Where(op.Greater(a, 1.0), like(math.nan, a), x)
    return op.Where(op.Less(y, 0), op.Neg(x), x)


def _ndtri(p: Value) -> Value:
    """ndtri(p) = -sqrt(2) erfcinv(2p): solved from c = 2 min(p, 1 - p), exact, so that the
    tails keep full precision."""
    lower = op.Less(p, 0.5)
    c = op.Where(lower, op.Mul(p, 2.0), op.Mul(op.Sub(1.0, p), 2.0))
    x = _erfinv_abs(op.Sub(1.0, c), c)
    x = op.Where(op.Equal(c, 0.0), like(math.inf, c), x)
    x = op.Mul(op.Where(lower, op.Neg(x), x), math.sqrt(2))
    return op.Where(op.Or(op.Less(p, 0.0), op.Greater(p, 1.0)), like(math.nan, p), x)


def _ndtr(x: Value) -> Value:
    return op.Mul(_erfc(op.Mul(x, -1 / math.sqrt(2))), 0.5)


def _log_ndtr(x: Value) -> Value:
    # x < -1: log(erfc(z) / 2) with z = -x/sqrt(2) = log(erfcx(z) / 2) - z^2, no underflow
    z = op.Mul(x, -1 / math.sqrt(2))
    left = op.Sub(op.Log(op.Mul(_erfcx(op.Max(z, like(0.0, z))), 0.5)), op.Mul(z, z))
    # x > 0: log1p(-ndtr(-x)), accurate when ndtr(x) is close to 1
    right = ew.log1p(op.Neg(_ndtr(op.Neg(x))))
    middle = op.Log(_ndtr(x))
    return op.Where(op.Less(x, -1.0), left, op.Where(op.Greater(x, 0.0), right, middle))


def _rounding_to(dtype: DType) -> Callable[[Value], Value]:
    """Round an intermediate to a half type and back: torch's half kernels round after every
    step, and matching them needs the same roundings."""
    if dtype not in (FLOAT16, BFLOAT16):
        return lambda v: v
    return lambda v: op.Cast(op.Cast(v, to=dtype.onnx), to=v.dtype.onnx)


@aten_op("aten::special_ndtr")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_ndtr(self: TReal) -> TFloat:
    """special_ndtr(Tensor self) -> Tensor"""
    if self.dtype not in (FLOAT16, BFLOAT16):
        return run_supported(_ndtr, D64, self)
    r = _rounding_to(self.dtype)  # torch: (1 + erf(x / sqrt(2))) / 2, step by step in the half type
    return run_supported(lambda x: r(op.Mul(r(op.Add(r(_erf(r(op.Mul(x, 1 / math.sqrt(2))))), 1.0)), 0.5)), D64, self)


def _float32_or_64(name: str, x: Value) -> None:
    if x.dtype not in (FLOAT, DOUBLE):
        raise TypeError(f"aten::{name} is implemented for float32 and float64 only (torch has no {x.dtype} kernel either)")


aten_erfc = unary("erfc", kernel(_erfc, D64), INT_TO_FLOAT)
aten_erfinv = unary("erfinv", kernel(_erfinv, D64), INT_TO_FLOAT)


@aten_op("aten::special_log_ndtr")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_log_ndtr(self: TFloat) -> TFloat:
    """special_log_ndtr(Tensor self) -> Tensor"""
    _float32_or_64("special_log_ndtr", self)
    return run_supported(_log_ndtr, D64, self)


@aten_op("aten::special_ndtri")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_ndtri(self: TFloat) -> TFloat:
    """special_ndtri(Tensor self) -> Tensor"""
    _float32_or_64("special_ndtri", self)
    return run_supported(_ndtri, D64, self)


@aten_op("aten::special_erfcx")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_erfcx(self: TFloat) -> TFloat:
    """special_erfcx(Tensor self) -> Tensor"""
    _float32_or_64("special_erfcx", self)
    return run_supported(_erfcx, D64, self)


# -- gamma family (double precision formulas) ---------------------------------------------------

# Lanczos (g = 7, n = 9), about 1e-15 relative.
_LANCZOS_G = 7.0
_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
            12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7]  # fmt: skip


def _sin_pi(x: Value) -> Value:
    """sin(pi x), exact zeros at the integers: reduce x to [-1, 1] first."""
    r = op.Sub(x, op.Mul(op.Round(op.Mul(x, 0.5)), 2.0))
    return op.Sin(op.Mul(r, math.pi))


def _lgamma_right(x: Value) -> Value:
    """lgamma(x) for x >= 0.5."""
    z = op.Sub(x, 1.0)
    series = like(_LANCZOS[0], x)
    for i, c in enumerate(_LANCZOS[1:], start=1):
        series = op.Add(series, op.Div(like(c, x), op.Add(z, float(i))))
    t = op.Add(z, _LANCZOS_G + 0.5)
    # (z + 0.5) * log(t) - t, written to keep large arguments finite
    return op.Add(op.Add(op.Sub(op.Mul(op.Add(z, 0.5), op.Log(t)), t), 0.5 * math.log(2 * math.pi)), op.Log(series))


def _lgamma(x: Value) -> Value:
    left = op.Sub(op.Sub(like(math.log(math.pi), x), op.Log(op.Abs(_sin_pi(x)))), _lgamma_right(op.Sub(1.0, x)))
    right = _lgamma_right(op.Max(x, like(0.5, x)))
    out = op.Where(op.Less(x, 0.5), left, right)
    out = op.Where(op.And(op.LessOrEqual(x, 0.0), op.Equal(x, op.Floor(x))), like(math.inf, x), out)
    return op.Where(op.IsInf(x), like(math.inf, x), out)


def _digamma_large(y: Value) -> Value:
    """digamma(y) for y >= 6: the asymptotic series, error below 1e-11."""
    inv2 = op.Reciprocal(op.Mul(y, y))
    series = op.Mul(inv2, _polyval([-1 / 132, 1 / 240, -1 / 252, 1 / 120, -1 / 12], inv2))
    return op.Add(op.Sub(op.Log(y), op.Div(0.5, y)), series)


def _digamma_pos(x: Value) -> Value:
    """digamma(x) for x > 0: digamma(x) = digamma(x + 6) - sum 1/(x + k), k < 6."""
    y = op.Add(x, 6.0)
    out = _digamma_large(y)
    for k in range(6):
        out = op.Sub(out, op.Reciprocal(op.Add(x, float(k))))
    return op.Where(op.Greater(x, 1e6), _digamma_large(op.Max(x, like(6.0, x))), out)


def _digamma(x: Value) -> Value:
    # x < 0: digamma(1 - x) - pi cos(pi x) / sin(pi x), both reduced to [-1, 1] first
    r = op.Sub(x, op.Mul(op.Round(op.Mul(x, 0.5)), 2.0))
    cot = op.Div(op.Mul(op.Cos(op.Mul(r, math.pi)), math.pi), op.Sin(op.Mul(r, math.pi)))
    out = op.Where(op.Less(x, 0.0), op.Sub(_digamma_pos(op.Sub(1.0, x)), cot), _digamma_pos(x))
    out = op.Where(op.Equal(x, 0.0), op.Neg(op.Reciprocal(x)), out)  # torch: -inf at 0, inf at -0
    out = op.Where(op.And(op.Less(x, 0.0), op.Equal(x, op.Floor(x))), like(math.nan, x), out)
    return op.Where(op.Equal(x, like(math.inf, x)), x, out)


# Cephes' Chebyshev coefficients for exp(-|x|) I0(x) on [0, 8] (A) and sqrt(x) exp(-x) I0(x) on (8, inf) (B).
_I0_A = [-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16, 1.71539128555513303061e-15,
         -1.16853328779934516808e-14, 7.67618549860493561688e-14, -4.85644678311192946090e-13, 2.95505266312963983461e-12,
         -1.72682629144155570723e-11, 9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
         -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7, 1.11738753912010371815e-6,
         -4.41673835845875056359e-6, 1.64484480707288970893e-5, -5.75419501008210370398e-5, 1.88502885095841655729e-4,
         -5.76375574538582365885e-4, 1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
         -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2, 1.71620901522208775349e-1,
         -3.04682672343198398683e-1, 6.76795274409476084995e-1]  # fmt: skip
_I0_B = [-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17, 3.46122286769746109310e-17,
         -2.82762398051658348494e-16, -3.42548561967721913462e-16, 1.77256013305652638360e-15, 3.81168066935262242075e-15,
         -9.55484669882830764870e-15, -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11, -3.14991652796324136454e-11,
         1.18891471078464383424e-11, 4.94060238822496958910e-10, 3.39623202570838634515e-9, 2.26666899049817806459e-8,
         2.04891858946906374183e-7, 2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
         8.04490411014108831608e-1]  # fmt: skip


def _chbevl(x: Value, coefs: list[float]) -> Value:
    b0 = like(coefs[0], x)
    b1 = like(0.0, x)
    b2 = b1
    for c in coefs[1:]:
        b2 = b1
        b1 = b0
        b0 = op.Add(op.Sub(op.Mul(x, b1), b2), c)
    return op.Mul(op.Sub(b0, b2), 0.5)


# exp(-|x|) I1(x) / x on [0, 8] (A) and sqrt(x) exp(-x) I1(x) on (8, inf) (B).
_I1_A = [2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16, -1.10559694773538630805e-15,
         7.60068429473540693410e-15, -5.04218550472791168711e-14, 3.22379336594557470981e-13, -1.98397439776494371520e-12,
         1.17361862988909016308e-11, -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
         9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7, -8.56872026469545474066e-7,
         3.47025130813767847674e-6, -1.32731636560394358279e-5, 4.78156510755005422638e-5, -1.61760815825896745588e-4,
         5.12285956168575772895e-4, -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
         2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1, -1.76416518357834055153e-1,
         2.52587186443633654823e-1]  # fmt: skip
_I1_B = [7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17, -3.20952592199342395980e-17,
         2.96262899764595013876e-16, 3.30820231092092828324e-16, -1.88035477551078244854e-15, -3.81440307243700780478e-15,
         1.04202769841288027642e-14, 4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
         -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11, 3.25260358301548823856e-11,
         -1.89749581235054123450e-11, -5.58974346219658380687e-10, -3.83538038596423702205e-9, -2.63146884688951950684e-8,
         -2.51223623787020892529e-7, -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
         7.78576235018280120474e-1]  # fmt: skip


def _bessel_e(x: Value, a_coefs: list[float], b_coefs: list[float], times_x: bool) -> Value:
    """exp(-|x|) I(|x|) from the two Chebyshev expansions (times |x| on [0, 8] for I1)."""
    a = op.Abs(x)
    small = _chbevl(op.Sub(op.Mul(op.Min(a, like(8.0, a)), 0.5), 2.0), a_coefs)
    if times_x:
        small = op.Mul(small, a)
    big_a = op.Max(a, like(8.0, a))
    big = op.Div(_chbevl(op.Sub(op.Div(32.0, big_a), 2.0), b_coefs), op.Sqrt(big_a))
    return op.Where(op.LessOrEqual(a, 8.0), small, big)


def _i0e(x: Value) -> Value:
    return _bessel_e(x, _I0_A, _I0_B, times_x=False)


def _i1e(x: Value) -> Value:
    out = _bessel_e(x, _I1_A, _I1_B, times_x=True)
    return op.Where(op.Less(x, 0), op.Neg(out), out)


def _i0(x: Value) -> Value:
    return op.Mul(op.Exp(op.Abs(x)), _i0e(x))


def _i1(x: Value) -> Value:
    return op.Mul(op.Exp(op.Abs(x)), _i1e(x))


aten_lgamma = unary("lgamma", kernel(_lgamma, OPMATH), INT_TO_FLOAT)
aten_digamma = unary("digamma", kernel(_digamma, OPMATH), INT_TO_FLOAT)
aten_i0 = unary("i0", kernel(_i0, OPMATH), INT_TO_FLOAT)
aten_special_i0e = unary("special_i0e", kernel(_i0e, OPMATH), INT_TO_FLOAT)
aten_special_i1 = unary("special_i1", kernel(_i1, OPMATH), INT_TO_FLOAT)
aten_special_i1e = unary("special_i1e", kernel(_i1e, OPMATH), INT_TO_FLOAT)


@aten_op("aten::special_modified_bessel_i0")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_modified_bessel_i0(self: TFloat) -> TFloat:
    """special_modified_bessel_i0(Tensor self) -> Tensor"""
    _float32_or_64("special_modified_bessel_i0", self)
    return _i0(self)


@aten_op("aten::special_modified_bessel_i1")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_modified_bessel_i1(self: TFloat) -> TFloat:
    """special_modified_bessel_i1(Tensor self) -> Tensor"""
    _float32_or_64("special_modified_bessel_i1", self)
    return _i1(self)


@aten_op("aten::special_spherical_bessel_j0")
@elementwise("x", kind=INT_TO_FLOAT)
def aten_special_spherical_bessel_j0(x: TFloat) -> TFloat:
    """special_spherical_bessel_j0(Tensor x) -> Tensor"""
    _float32_or_64("special_spherical_bessel_j0", x)
    # sin(x) / x; near 0 its Taylor series, as torch
    x2 = op.Mul(x, x)
    series = _polyval([1 / 6227020800, -1 / 39916800, 1 / 362880, -1 / 5040, 1 / 120, -1 / 6, 1.0], x2)
    out = op.Where(op.Less(op.Abs(x), 0.5), series, op.Div(op.Sin(x), x))
    return op.Where(op.IsInf(x), like(0.0, x), out)


@aten_op("aten::mvlgamma")
def aten_mvlgamma(self: TReal, p: int) -> TFloat:
    """mvlgamma(Tensor self, int p) -> Tensor"""
    # torch also checks that every element is > (p - 1) / 2: a check on the data, not done here
    if self.dtype is BOOL:
        raise TypeError("aten::mvlgamma: the input tensor may not be a bool tensor (torch raises too)")
    if p < 1:
        raise ValueError(f"aten::mvlgamma: p must be >= 1, got {p}")

    def fn(x: Value) -> Value:
        total = like(p * (p - 1) / 4 * math.log(math.pi), x)
        for j in range(p):
            total = op.Add(total, _lgamma(op.Sub(x, j / 2)))
        return total

    return run_supported(fn, OPMATH, as_float(self))  # ints: float32, as torch


@aten_op("aten::frexp.Tensor")
def aten_frexp(self: TFloat) -> tuple[TFloat, TTensor]:
    """frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)"""
    if not self.dtype.is_floating:
        raise TypeError(f"aten::frexp supports floating-point dtypes only (torch raises too), got {self.dtype}")
    x = op.Cast(self, to=DOUBLE.onnx)  # every float is exact in double, subnormals included
    finite = op.And(op.Not(op.IsInf(x)), op.Not(op.Equal(x, 0.0)))
    finite = op.And(finite, op.Not(op.IsNaN(x)))
    a = op.Where(finite, op.Abs(x), like(1.0, x))
    e = op.Add(op.Floor(op.Div(op.Log(a), math.log(2))), 1.0)

    def scaled(e: Value) -> Value:  # a / 2^e, in two halves: 2^-1074 and 2^1024 do not fit one double
        half = op.Floor(op.Div(e, 2.0))
        return op.Div(op.Div(a, op.Pow(like(2.0, half), half)), op.Pow(like(2.0, e), op.Sub(e, half)))

    # log2 may round across a power of two: put the mantissa into [0.5, 1)
    m = scaled(e)
    e = op.Add(e, op.Sub(op.Cast(op.GreaterOrEqual(m, 1.0), to=DOUBLE.onnx), op.Cast(op.Less(m, 0.5), to=DOUBLE.onnx)))
    m = scaled(e)
    mantissa = op.Where(finite, op.Mul(m, op.Sign(x)), x)
    exponent = op.Where(finite, e, like(0.0, e))
    return op.Cast(mantissa, to=self.dtype.onnx), op.Cast(exponent, to=INT32.onnx)


# -- simple unary math ---------------------------------------------------------------------------


def _sinc(x: Value) -> Value:
    px = op.Mul(x, math.pi)
    return op.Where(op.Equal(x, 0.0), like(1.0, x), op.Div(op.Sin(px), px))


def _entr(x: Value) -> Value:
    out = op.Neg(op.Mul(x, op.Log(x)))
    out = op.Where(op.Equal(x, 0.0), like(0.0, x), out)
    return op.Where(op.Less(x, 0.0), like(-math.inf, x), out)


aten_sinc = unary("sinc", kernel(_sinc, OPMATH), INT_TO_FLOAT)
aten_special_entr = unary("special_entr", kernel(_entr, OPMATH), INT_TO_FLOAT)
aten_deg2rad = unary("deg2rad", kernel(lambda x: op.Mul(x, math.pi / 180), FLOATS), INT_TO_FLOAT)
aten_rad2deg = unary("rad2deg", kernel(lambda x: op.Mul(x, 180 / math.pi), FLOATS), INT_TO_FLOAT)


@aten_op("aten::logit")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_logit(self: TReal, eps: float | None = None) -> TFloat:
    """logit(Tensor self, float? eps=None) -> Tensor"""

    r = _rounding_to(self.dtype)  # torch: log(x / (1 - x)), step by step in self's dtype

    def fn(x: Value) -> Value:
        if eps is not None:
            x = op.Min(op.Max(x, r(like(eps, x))), r(like(1.0 - eps, x)))
        return r(op.Log(r(op.Div(x, r(op.Sub(1.0, x))))))

    return run_supported(fn, OPMATH, self)


@aten_op("aten::sgn")
def aten_sgn(self: TRealOrBool) -> TRealOrBool:
    """sgn(Tensor self) -> Tensor"""
    return ew.aten_sign(self)


@aten_op("aten::positive")
def aten_positive(self: TReal) -> TReal:
    """positive(Tensor(a) self) -> Tensor(a)"""
    if self.dtype is BOOL:
        raise TypeError("aten::positive: the `+` operator on a bool tensor is not supported (torch raises too)")
    return op.Identity(self)


def _float_signbit(x: Value) -> Value:
    """x < 0, or x is -0.0 (1/x is -inf). The sign of a NaN cannot be read in ONNX: False."""
    return op.Or(op.Less(x, 0.0), op.And(op.Equal(x, 0.0), op.Less(op.Reciprocal(x), 0.0)))


@aten_op("aten::signbit")
def aten_signbit(self: TRealOrBool) -> TRealOrBool:
    """signbit(Tensor self) -> Tensor"""
    if self.dtype is BOOL:
        return op.Xor(self, self)
    if self.dtype.is_floating:
        return run_supported(_float_signbit, FLOATS, self)
    return run_supported(lambda x: op.Less(x, 0), NUMERIC, self)


@aten_op("aten::nan_to_num")
def aten_nan_to_num(self: TRealOrBool, nan: float | None = None, posinf: float | None = None,
                    neginf: float | None = None) -> TRealOrBool:  # fmt: skip
    """nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"""
    if not self.dtype.is_floating:
        return op.Identity(self)
    import torch

    finfo = torch.finfo(self.dtype.to_torch())
    values = [0.0 if nan is None else nan, finfo.max if posinf is None else posinf, finfo.min if neginf is None else neginf]

    def fn(x: Value) -> Value:
        # the replacements are rounded to self's dtype first, as in torch
        nan_v, pos_v, neg_v = (op.Cast(op.Cast(np.asarray(v), to=self.dtype.onnx), to=x.dtype.onnx) for v in values)
        out = op.Where(op.IsNaN(x), nan_v, x)
        out = op.Where(op.IsInf(x, detect_negative=0), pos_v, out)
        return op.Where(op.IsInf(x, detect_positive=0), neg_v, out)

    return run_supported(fn, FLOATS, self)


# -- binary math ---------------------------------------------------------------------------------


def _both(a: Any, b: Any) -> tuple[Value, Value]:
    """Both operands as Values of one dtype (a Python scalar takes the other side's dtype)."""
    ref = a if isinstance(a, Value) else b
    return like(a, ref), like(b, ref)


def _xlogy(a: Any, b: Any) -> Value:
    x, y = _both(a, b)
    out = op.Where(op.Equal(x, 0.0), like(0.0, x), op.Mul(x, op.Log(y)))
    return op.Where(op.IsNaN(y), y, out)


def _xlog1py(a: Any, b: Any) -> Value:
    x, y = _both(a, b)
    out = op.Where(op.Equal(x, 0.0), like(0.0, x), op.Mul(x, ew.log1p(y)))
    return op.Where(op.IsNaN(y), y, out)


@aten_op("aten::xlogy.Tensor", "aten::xlogy.Scalar_Self", "aten::xlogy.Scalar_Other")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_xlogy(self: TReal, other: TReal) -> TFloat:
    """xlogy.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(_xlogy, FLOATS, self, other)


@aten_op("aten::special_xlog1py", "aten::special_xlog1py.self_scalar", "aten::special_xlog1py.other_scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_special_xlog1py(self: TReal, other: TReal) -> TFloat:
    """special_xlog1py(Tensor self, Tensor other) -> Tensor"""
    return run_supported(_xlog1py, OPMATH, self, other)


def _floating_only(name: str, x: Value) -> None:
    if not x.dtype.is_floating:
        raise TypeError(f"aten::{name} is defined for floating tensors only (torch raises too), got {x.dtype}")


def _hypot(a: Value, b: Value) -> Value:
    """sqrt(a^2 + b^2) scaled by max(|a|, |b|) so that it neither overflows nor underflows."""
    a, b = op.Abs(a), op.Abs(b)
    big, small = op.Max(a, b), op.Min(a, b)
    ratio = op.Div(small, big)
    out = op.Mul(big, op.Sqrt(op.Add(op.Mul(ratio, ratio), 1.0)))
    out = op.Where(op.Equal(big, 0.0), big, out)
    return op.Where(op.Or(op.IsInf(a), op.IsInf(b)), like(math.inf, big), out)  # even with a nan


@aten_op("aten::hypot")
@elementwise("self", "other")
def aten_hypot(self: TFloat, other: TFloat) -> TFloat:
    """hypot(Tensor self, Tensor other) -> Tensor"""
    _floating_only("hypot", self)
    return run_supported(_hypot, OPMATH, self, other)


def _logaddexp(a: Value, b: Value, base2: bool) -> Value:
    big = op.Max(a, b)
    neg_gap = op.Neg(op.Abs(op.Sub(a, b)))
    if base2:
        out = op.Add(big, op.Div(ew.log1p(op.Pow(like(2.0, a), neg_gap)), math.log(2)))
        same = op.Add(a, 1.0)
    else:
        out = op.Add(big, ew.log1p(op.Exp(neg_gap)))
        same = op.Add(a, math.log(2))
    return op.Where(op.And(op.Equal(a, b), op.IsInf(a)), same, out)  # inf - inf is nan


@aten_op("aten::logaddexp")
@elementwise("self", "other")
def aten_logaddexp(self: TFloat, other: TFloat) -> TFloat:
    """logaddexp(Tensor self, Tensor other) -> Tensor"""
    _floating_only("logaddexp", self)
    return run_supported(lambda a, b: _logaddexp(a, b, base2=False), OPMATH, self, other)


@aten_op("aten::logaddexp2")
@elementwise("self", "other")
def aten_logaddexp2(self: TFloat, other: TFloat) -> TFloat:
    """logaddexp2(Tensor self, Tensor other) -> Tensor"""
    _floating_only("logaddexp2", self)
    return run_supported(lambda a, b: _logaddexp(a, b, base2=True), OPMATH, self, other)


def _copysign(a: Any, b: Any) -> Value:
    x, y = _both(a, b)
    magnitude = op.Abs(x)
    return op.Where(_float_signbit(y), op.Neg(magnitude), magnitude)


@aten_op("aten::copysign.Tensor", "aten::copysign.Scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_copysign(self: TReal, other: TReal) -> TFloat:
    """copysign.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(_copysign, FLOATS, self, other)


@aten_op("aten::heaviside")
def aten_heaviside(self: TRealOrBool, values: TRealOrBool) -> TRealOrBool:
    """heaviside(Tensor self, Tensor values) -> Tensor"""
    if self.dtype is not values.dtype:
        raise TypeError(f"aten::heaviside is not implemented for tensors with different dtypes ({self.dtype}, {values.dtype}), as in torch")
    if self.dtype is BOOL:
        return op.Or(self, op.And(op.Not(self), values))

    def fn(x: Value, v: Value) -> Value:
        return op.Where(op.Equal(x, 0), v, op.Cast(op.Greater(x, 0), to=x.dtype.onnx))

    return run_supported(fn, MIN_MAX, self, values)


@aten_op("aten::float_power.Tensor_Tensor", "aten::float_power.Tensor_Scalar", "aten::float_power.Scalar")
def aten_float_power(self: TReal, exponent: TReal) -> TFloat:
    """float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor"""
    if any(isinstance(x, Value) and x.dtype.is_complex for x in (self, exponent)):
        raise TypeError("aten::float_power: complex tensors are not supported")
    base, power = (op.Cast(x, to=DOUBLE.onnx) if isinstance(x, Value) else float(x) for x in (self, exponent))
    return op.Pow(*_both(base, power))


@aten_op("aten::true_divide.Tensor", "aten::true_divide.Scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_true_divide(self: TReal, other: TReal) -> TFloat:
    """true_divide.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(op.Div, FLOATS, self, other)


@aten_op("aten::floor_divide", "aten::floor_divide.Scalar")
@elementwise("self", "other")
def aten_floor_divide(self: TReal, other: TReal) -> TReal:
    """floor_divide(Tensor self, Tensor other) -> Tensor"""
    if self.dtype is BOOL:
        raise TypeError("aten::floor_divide is not defined for bool tensors (torch raises too)")
    if self.dtype.is_floating:
        return run_supported(ew._div_floor_float, OPMATH, self, other)
    return run_supported(ew._div_floor_int, NUMERIC, self, other)


@aten_op("aten::ldexp.Tensor")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_ldexp(self: TReal, other: TReal) -> TFloat:
    """ldexp.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(lambda x, e: op.Mul(x, op.Pow(like(2.0, e), e)), OPMATH, self, other)


_SHIFT_TYPES = frozenset({UINT8, INT8, INT16, INT32, INT64})


def _shift(name: str, a: Any, b: Any, left: bool) -> Value:
    """torch's shifts: a shift by a negative amount or by the width or more gives 0 (left) or
    the sign fill (right); a right shift of a signed value is arithmetic. Computed on uint64
    (ONNX BitShift is unsigned only) from int64 values, then truncated back."""
    a, b = _both(a, b)
    if a.dtype not in _SHIFT_TYPES:
        raise TypeError(f"aten::{name} is defined for integer tensors only (torch raises too), got {a.dtype}")
    width = 8 * np.dtype(a.dtype.numpy).itemsize
    max_shift = width if left or a.dtype.kind == "u" else width - 1
    x = op.Cast(a, to=INT64.onnx)
    n = op.Cast(b, to=INT64.onnx)
    invalid = op.Or(op.Less(n, 0), op.GreaterOrEqual(n, max_shift))
    n = op.Cast(op.Where(invalid, like(max_shift if not left else 0, n), n), to=UINT64.onnx)
    if left:
        shifted = op.Cast(op.BitShift(op.Cast(x, to=UINT64.onnx), n, direction="LEFT"), to=INT64.onnx)
        out = op.Where(invalid, like(0, shifted), shifted)
    else:
        negative = op.Less(x, 0)
        magnitude = op.Where(negative, op.Sub(-1, x), x)  # ~x for negative x: a right shift of it is ~(x >> n)
        shifted = op.Cast(op.BitShift(op.Cast(magnitude, to=UINT64.onnx), n, direction="RIGHT"), to=INT64.onnx)
        out = op.Where(negative, op.Sub(-1, shifted), shifted)
    return op.Cast(out, to=a.dtype.onnx)


@aten_op("aten::bitwise_left_shift.Tensor", "aten::bitwise_left_shift.Tensor_Scalar", "aten::bitwise_left_shift.Scalar_Tensor",
         "aten::__lshift__.Tensor", "aten::__lshift__.Scalar")  # fmt: skip
@elementwise("self", "other")
def aten_bitwise_left_shift(self: TReal, other: TReal) -> TReal:
    """bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _shift("bitwise_left_shift", self, other, left=True)


@aten_op("aten::bitwise_right_shift.Tensor", "aten::bitwise_right_shift.Tensor_Scalar", "aten::bitwise_right_shift.Scalar_Tensor",
         "aten::__rshift__.Tensor", "aten::__rshift__.Scalar")  # fmt: skip
@elementwise("self", "other")
def aten_bitwise_right_shift(self: TReal, other: TReal) -> TReal:
    """bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _shift("bitwise_right_shift", self, other, left=False)
