"""Bessel functions: modified I0, I1 (and exponentially scaled), K0, K1 (and scaled), Bessel
J0, J1, Y0, Y1, spherical J0 and Airy Ai.

The Chebyshev expansions and rational approximations of torch's CPU kernels
(aten/src/ATen/native/Math.h, from Cephes: Steven Moshier, 3-clause BSD), evaluated in the
input's floating dtype with the same operations in the same order, so results agree with
torch to a few ulps.
"""

from __future__ import annotations

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import TFloat
from torchlib.ops._cephes import polyval
from torchlib.ops._kernels import OPMATH, kernel, like
from torchlib.ops._unary import unary
from torchlib.ops.special._common import float32_or_64
from torchlib.promotion import INT_TO_FLOAT, elementwise
from torchlib.registry import aten_op

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


aten_i0 = unary("i0", kernel(_i0, OPMATH), INT_TO_FLOAT)
aten_special_i0e = unary("special_i0e", kernel(_i0e, OPMATH), INT_TO_FLOAT)
aten_special_i1 = unary("special_i1", kernel(_i1, OPMATH), INT_TO_FLOAT)
aten_special_i1e = unary("special_i1e", kernel(_i1e, OPMATH), INT_TO_FLOAT)


@aten_op("aten::special_modified_bessel_i0")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_modified_bessel_i0(self: TFloat) -> TFloat:
    """special_modified_bessel_i0(Tensor self) -> Tensor"""
    float32_or_64("special_modified_bessel_i0", self)
    return _i0(self)


@aten_op("aten::special_modified_bessel_i1")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_modified_bessel_i1(self: TFloat) -> TFloat:
    """special_modified_bessel_i1(Tensor self) -> Tensor"""
    float32_or_64("special_modified_bessel_i1", self)
    return _i1(self)


@aten_op("aten::special_spherical_bessel_j0")
@elementwise("x", kind=INT_TO_FLOAT)
def aten_special_spherical_bessel_j0(x: TFloat) -> TFloat:
    """special_spherical_bessel_j0(Tensor x) -> Tensor"""
    float32_or_64("special_spherical_bessel_j0", x)
    # sin(x) / x; near 0 its Taylor series, as torch
    x2 = op.Mul(x, x)
    series = polyval([1 / 6227020800, -1 / 39916800, 1 / 362880, -1 / 5040, 1 / 120, -1 / 6, 1.0], x2)
    out = op.Where(op.Less(op.Abs(x), 0.5), series, op.Div(op.Sin(x), x))
    return op.Where(op.IsInf(x), like(0.0, x), out)
