"""Cephes-style rational approximations written with ONNX ops that have double kernels in
onnxruntime (Add, Mul, Div, Exp, Log, Sqrt, Where, ...): erf, erfc, erfcx, atan, asin, acos and
atan2. onnxruntime has no double kernel for Erf, Atan, Asin or Acos, so float64 inputs compute
with these, accurate to a few ulps as torch's own (glibc) kernels; the special-function modules
build on them too. Coefficients from the Cephes Math Library (Steven Moshier, 3-clause BSD),
as in torch's aten/src/ATen/native/Math.h.
"""

from __future__ import annotations

import math

from graph_builder import op
from graph_builder.ir import Value
from torchlib.ops._kernels import like


def polyval(coefs: list[float], x: Value) -> Value:
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
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def erf_small(x: Value) -> Value:
    """erf(x) for |x| <= 1."""
    z = op.Mul(x, x)
    return op.Div(op.Mul(x, polyval(_ERF_T, z)), polyval(_ERF_U, z))


def erfcx_big(a: Value) -> Value:
    """erfcx(a) = exp(a^2) erfc(a) for a >= 1 (inf for a = inf)."""
    a = op.Max(a, like(1.0, a))
    mid = op.Div(polyval(_ERFC_P, a), polyval(_ERFC_Q, a))
    # beyond 1e3 the asymptotic series (1 - 1/(2a^2) + 3/(4a^4)) / (a sqrt(pi)), to 2e-18 (the
    # rational function loses digits there and overflows beyond 1e61)
    bounded = op.Min(a, like(1e3, a))
    far = op.Div(polyval(_ERFC_R, bounded), polyval(_ERFC_S, bounded))
    inv2 = op.Reciprocal(op.Mul(a, a))
    series = op.Div(op.Mul(op.Add(op.Mul(op.Sub(op.Mul(inv2, 0.75), 0.5), inv2), 1.0), 1 / math.sqrt(math.pi)), a)
    far = op.Where(op.Greater(a, 1e3), series, far)
    return op.Where(op.Less(a, 8.0), mid, far)


def exp_neg_square(a: Value) -> Value:
    """exp(-a^2) without the rounding error of a^2 (Cephes' expx2): a = m + f with m a multiple
    of 1/128, so m^2 is exact, and exp(-a^2) = exp(-m^2) exp(-(2m + f) f)."""
    # beyond 40 the result is 0 in every dtype: clamp first, so that exp(-m^2) = 0 never meets
    # exp(-(2m + f) f) = inf (0 * inf is NaN); NaN stays NaN
    a = op.Where(op.Greater(op.Abs(a), 40.0), like(40.0, a), op.Abs(a))
    m = op.Div(op.Round(op.Mul(a, 128.0)), 128.0)
    f = op.Sub(a, m)
    return op.Mul(op.Exp(op.Neg(op.Mul(m, m))), op.Exp(op.Neg(op.Mul(op.Add(op.Mul(m, 2.0), f), f))))


def erfc_pos(a: Value) -> Value:
    """erfc(a) for a >= 0."""
    big = op.Mul(exp_neg_square(a), erfcx_big(a))
    return op.Where(op.Less(a, 1.0), op.Sub(1.0, erf_small(op.Min(a, like(1.0, a)))), big)


def erf(x: Value) -> Value:
    a = op.Abs(x)
    big = op.Sub(1.0, erfc_pos(a))
    big = op.Where(op.Less(x, 0), op.Neg(big), big)
    return op.Where(op.LessOrEqual(a, 1.0), erf_small(op.Clip(x, like(-1.0, x), like(1.0, x))), big)


def erfc(x: Value) -> Value:
    pos = erfc_pos(op.Abs(x))
    return op.Where(op.Less(x, 0), op.Sub(2.0, pos), pos)


def erfcx(x: Value) -> Value:
    a = op.Abs(x)
    small = op.Mul(op.Exp(op.Mul(a, a)), op.Sub(1.0, erf_small(op.Min(a, like(1.0, a)))))
    pos = op.Where(op.Less(a, 1.0), small, erfcx_big(a))  # erfcx(|x|)
    neg = op.Sub(op.Mul(op.Exp(op.Mul(x, x)), 2.0), pos)  # erfcx(-a) = 2 exp(a^2) - erfcx(a)
    return op.Where(op.Less(x, 0), neg, pos)



# -- inverse trigonometric functions (Cephes atan.c, asin.c) -------------------------------------

_ATAN_P = [-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1, -1.228866684490136173410e2,
           -6.485021904942025371773e1]  # fmt: skip
_ATAN_Q = [1.0, 2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2, 4.853903996359136964868e2,
           1.945506571482613964425e2]  # fmt: skip
_T3P8 = 2.41421356237309504880  # tan(3 pi / 8)
_MOREBITS = 6.123233995736765886130e-17  # pi/2 - fl(pi/2)
_PIO4 = 7.85398163397448309616e-1


def atan(x: Value) -> Value:
    """atan(x): |x| reduced to [0, 0.66] by atan(x) = pi/4 + atan((x-1)/(x+1)) or
    pi/2 - atan(1/x), then x + x^3 P(x^2)/Q(x^2)."""
    a = op.Abs(x)
    big = op.Greater(a, _T3P8)
    mid = op.And(op.Not(big), op.Greater(a, 0.66))
    safe = op.Where(op.Equal(a, 0.0), like(1.0, a), a)  # -1/a for a = 0 is never chosen
    t = op.Where(big, op.Neg(op.Reciprocal(safe)), op.Where(mid, op.Div(op.Sub(a, 1.0), op.Add(a, 1.0)), a))
    z = op.Mul(t, t)
    z = op.Add(op.Mul(t, op.Div(op.Mul(z, polyval(_ATAN_P, z)), polyval(_ATAN_Q, z))), t)
    base = op.Where(big, like(2 * _PIO4, a), op.Where(mid, like(_PIO4, a), like(0.0, a)))
    extra = op.Where(big, like(_MOREBITS, a), op.Where(mid, like(0.5 * _MOREBITS, a), like(0.0, a)))
    out = op.Add(base, op.Add(z, extra))
    out = op.Where(op.IsInf(a), like(2 * _PIO4, a), out)  # (-1/inf is -0: z = 0 already; exact)
    out = op.Where(op.Less(x, 0.0), op.Neg(out), out)
    return op.Where(op.Not(op.Equal(x, 0.0)), out, x)  # -0.0 stays (a Where's first branch loses it)


_ASIN_R = [2.967721961301243206100e-3, -5.634242780008963776856e-1, 6.968710824104713396794e0, -2.556901049652824852289e1,
           2.853665548261061424989e1]  # fmt: skip
_ASIN_S = [1.0, -2.194779531642920639778e1, 1.470656354026814941758e2, -3.838770957603691357202e2, 3.424398657913078477438e2]  # fmt: skip
_ASIN_P = [4.253011369004428248960e-3, -6.019598008014123785661e-1, 5.444622390564711410273e0, -1.626247967210700244449e1,
           1.956261983317594739197e1, -8.198089802484824371615e0]  # fmt: skip
_ASIN_Q = [1.0, -1.474091372988853791896e1, 7.049610280856842141659e1, -1.471791292232726029859e2, 1.395105614657485689735e2,
           -4.918853881490881290097e1]  # fmt: skip


def asin(x: Value) -> Value:
    """asin(x): a + a^3 P(a^2)/Q(a^2) for |x| <= 0.625, else pi/2 - 2 asin(sqrt((1 - a)/2))
    written with the rational R/S in 1 - a. NaN outside [-1, 1]."""
    a = op.Abs(x)
    zz = op.Mul(a, a)
    small = op.Add(op.Mul(a, op.Div(op.Mul(zz, polyval(_ASIN_P, zz)), polyval(_ASIN_Q, zz))), a)
    w = op.Max(op.Sub(1.0, a), like(0.0, a))
    p = op.Div(op.Mul(w, polyval(_ASIN_R, w)), polyval(_ASIN_S, w))
    s = op.Sqrt(op.Add(w, w))
    big = op.Add(op.Sub(op.Sub(like(_PIO4, a), s), op.Sub(op.Mul(s, p), _MOREBITS)), _PIO4)
    out = op.Where(op.Greater(a, 0.625), big, small)
    out = op.Where(op.Greater(a, 1.0), like(math.nan, a), out)
    out = op.Where(op.Less(x, 0.0), op.Neg(out), out)
    return op.Where(op.Not(op.Equal(x, 0.0)), out, x)  # -0.0 stays (a Where's first branch loses it)


def acos(x: Value) -> Value:
    """acos(x) = 2 asin(sqrt((1 - x)/2)) for x > 0.5, pi - 2 asin(sqrt((1 + x)/2)) for x < -0.5,
    else pi/2 - asin(x) (with the low bits of pi/2)."""
    right = op.Mul(asin(op.Sqrt(op.Mul(op.Sub(1.0, x), 0.5))), 2.0)
    left = op.Sub(like(math.pi, x), op.Mul(asin(op.Sqrt(op.Mul(op.Add(x, 1.0), 0.5))), 2.0))
    middle = op.Add(op.Add(op.Sub(like(_PIO4, x), asin(x)), _MOREBITS), _PIO4)
    out = op.Where(op.Greater(x, 0.5), right, op.Where(op.Less(x, -0.5), left, middle))
    return op.Where(op.Greater(op.Abs(x), 1.0), like(math.nan, x), out)


def signbit(x: Value) -> Value:
    """x < 0, or x is -0.0 (1/x is -inf). False for NaN."""
    return op.Or(op.Less(x, 0.0), op.And(op.Equal(x, 0.0), op.Less(op.Reciprocal(x), 0.0)))


def atan2(y: Value, x: Value, atan_fn=None) -> Value:
    """atan2(y, x) as C's: atan(y/x) moved to the right quadrant, with C's signed zeros and
    infinities (atan2(+-0, -0) = +-pi, atan2(+-inf, -inf) = +-3pi/4, ...). `atan_fn` computes
    atan in y's dtype (this module's atan by default)."""
    atan_fn = atan_fn or atan
    y_neg = signbit(y)
    x_neg = signbit(x)
    pi = op.Where(y_neg, like(-math.pi, y), like(math.pi, y))
    angle = atan_fn(op.Div(y, x))
    angle = op.Where(x_neg, op.Add(angle, pi), angle)
    # both infinite: +-pi/4 or +-3pi/4
    both_inf = op.And(op.IsInf(x), op.IsInf(y))
    quarter = op.Where(x_neg, like(3 * math.pi / 4, y), like(math.pi / 4, y))
    angle = op.Where(both_inf, op.Where(y_neg, op.Neg(quarter), quarter), angle)
    # y = +-0: +-0 (x > 0 or +0) or +-pi (x < 0 or -0); x = +-0 and y != 0: +-pi/2 (atan(+-inf))
    zero_y = op.Where(x_neg, pi, y)
    out = op.Where(op.Or(op.Not(op.Equal(y, 0.0)), op.IsNaN(x)), angle, zero_y)
    # onnxruntime's Where turns a -0.0 of its first branch into +0.0: a zero result takes y's sign
    signed_zero = op.Where(op.Not(y_neg), like(0.0, y), like(-0.0, y))
    return op.Where(op.Not(op.Equal(out, 0.0)), out, signed_zero)


# pi in three parts, the first two with 26 trailing zero bits, so that k * part is exact for |k| < 2^26
_PI_1, _PI_2, _PI_3 = 3.1415926218032837, 3.1786509424591713e-08, 1.2246467991473532e-16


def sin(x: Value) -> Value:
    """sin(x) of a double x, reduced first by the nearest multiple of pi (Cody-Waite, exact for
    |x| < 2^26 pi): onnxruntime's double Sin loses the low bits next to the multiples of pi
    (Sin(fl(pi)) gives -0.0 where glibc gives 1.2246e-16)."""
    k = op.Round(op.Div(x, math.pi))
    small = op.Less(op.Abs(k), 2.0**26)
    kk = op.Where(small, k, like(0.0, k))
    r = op.Sub(op.Sub(op.Sub(x, op.Mul(kk, _PI_1)), op.Mul(kk, _PI_2)), op.Mul(kk, _PI_3))
    s = op.Sin(r)
    odd = op.Equal(op.Abs(op.Mod(kk, like(2.0, kk), fmod=1)), 1.0)
    return op.Where(odd, op.Neg(s), s)
