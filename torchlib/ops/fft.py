"""Discrete Fourier transforms (`_fft_r2c`, `_fft_c2c`, `_fft_c2r`, which every `torch.fft.*`
function becomes), one axis at a time: a direct sum (one MatMul) for static lengths up to 128,
ONNX `DFT` (opset 20) above.

Complex tensors are real views with a trailing (real, imaginary) dimension (see complex.py),
which is also DFT's own layout.

Small lengths: the direct sum. For a length that is not a power of two onnxruntime's DFT is a
chirp-z (Bluestein) transform, whose roundoff is about eps * max|x| in EVERY bin, and its
power-of-two FFT leaks the same way (a 1e10 spike in float64: 1.8e-6 in the parts it does not
enter, at n = 4 as at 128); torch's MKL keeps a twiddle part that is exactly 0 or +-1 exact and
is accurate part by part there (1e-15): fft of [1e10, 1, 1, ...] (float64) had errors of 1e-6 on
bins of size 1, and a float64 sample near finfo.max at j = 0 put 5e292 into imaginary parts that
torch gives as 1.75. So a static length n <= 128 (_MATMUL_MAX_LENGTH) is computed as x
[..., n * parts] times a constant real matrix [n * parts, bins * 2] of the twiddles
(`_twiddle_matrix`: each exactly rounded, exactly 0 or +-1 where they are so): a sample enters
only the parts where its twiddle is not 0, with a relative error of its own size. In a real
signal (n >= 5) samples j and n - j (equal c, opposite s) enter through their sum and difference
(`_fold`), as an FFT's butterflies pair them, so an even signal (a symmetric window's frame
centred by reflect padding) gets imaginary parts exactly 0, as in torch. A direct sum is not
immune to cancellation otherwise: two spikes that cancel in a bin (1e10 at j = 0, -1e10 at
j = n/2) leave eps * 1e10 there. At lengths MKL factorises (32 and 64 tried) torch's r2c itself
leaks a spike into parts it does not enter (float64 n = 64: 8e-7 with a 1e10 spike at j = 0,
float32: 7 with 1e12); the direct sum gives 1e-15 (float64), 3e-6 (float32).

The threshold, measured (bench/bench_dft_matmul.py: whole traced _fft_r2c onesided / _fft_c2c
of 1000 signals, onnxruntime 1.31, 1 intra-op thread, median of 60 runs alternating the forms;
microseconds DFT -> MatMul, r2c / c2c):
    float64  n=3 449 -> 87 / 430 -> 64       n=4 61 -> 76 / 53 -> 62     n=8 91 -> 107 / 83 -> 71
             n=10 986 -> 110 / 916 -> 81     n=16 155 -> 123 / 147 -> 95 n=31 1901 -> 167 / 1728 -> 172
             n=64 616 -> 296 / 643 -> 420    n=100 7379 -> 555 / 6933 -> 1063
             n=127 7670 -> 768 / 7067 -> 1519                            n=128 1284 -> 643 / 1370 -> 1364
    float32  n=4 59 -> 76 / 53 -> 62         n=10 961 -> 58 / 908 -> 26  n=64 598 -> 195 / 617 -> 234
             n=128 1274 -> 389 / 1373 -> 661 (lengths that are not powers of two compute in float64)
A length that is not a power of two is 5-30x faster; powers of two 1.2-3x faster from 16 on (c2c
128 float64 the same time), 1.2-1.3x slower at n = 4 and r2c n = 8 (15 us per 1000 signals: the
per-signal scaling against overflow), kept for the accuracy. Longer lengths keep DFT: at batch 100
(an earlier build of the bare MatMul) c2c n=256 took 1.75x the DFT's time and n=512 3.4x, and
the matrix grows as n^2 (1.3 MB at n = 400 float64 r2c, though that would be 8x faster than the
chirp-z). Whole functions (same timing, DFT -> MatMul, model size): rfft float32 [1000, 10]
1154 -> 65 us (5.0 -> 6.3 kB), rfft float64 [1000, 100] 7417 -> 565 us (6.5 -> 90 kB), fft
complex64 [1000, 128] 1378 -> 670 us (6 -> 270 kB; the matrix is one constant of the outer graph,
shared by both branches of the inf/NaN If), fft2 complex64 [100, 24, 24] 'ortho' 7991 -> 1169
us, irfft complex64 [1000, 33] -> 64 1437 -> 1023 us, stft n_fft=64 hop 16 of 1 s at 16 kHz
798 -> 405 us; stft n_fft=400 hop 160 (DFT, unchanged) 3514 -> 3512 us.

Two onnxruntime facts shape the precision rules:
- its float32 DFT of a length that is not a power of two is a direct sum in float32 (relative
  error 1e-5 at n = 100, 1e-4 at n = 400), so such float32 transforms compute in float64 and
  round once, as accurate as torch's pocketfft (the MatMul of such small lengths too: a float32
  direct sum would be as inaccurate; there it needs no scaling against overflow);
- its inverse DFT (inverse=1) of such lengths is off by 2e-8 relative even in float64, so an
  inverse transform is the forward one between two conjugations, ifft(x) = conj(fft(conj(x))) / n.
torch's `normalization` (0: none, 1: 1/sqrt(n), 2: 1/n, over the product of the transformed
sizes) is applied axis by axis inside each DFT (its n^-1/2 or 1/n), so that an intermediate whose
normalized result is finite does not overflow (irfft2 'ortho' of float64 values near finfo.max:
torch finite, ours inf when scaled at the end); with a dynamic length, at the end by one scale.
(torch's own 1-D float64 'ortho' transforms overflow there where ours are finite: the fuzz pass
counts those as "overflow".)

Infinities and NaNs. onnxruntime's DFT makes every bin of a signal holding an inf or NaN NaN
(its chirp-z and float64 paths multiply them by every twiddle). torch's CPU FFT (MKL DFTI) gives,
for the lengths it computes directly, the direct sum with IEEE arithmetic in which a twiddle
part that is exactly 0 contributes nothing: with w^{jk} = c + i s (c = cos(2 pi m / n), s = -+
sin(2 pi m / n), m = jk mod n; c is exactly 0 iff 4m = n or 3n, s iff m = 0 or 2m = n), a sample
a + i b adds a c - b s to Re X_k and a s + b c to Im X_k, and a NaN or inf times an exact 0 adds
nothing (so Im X_0 of a real signal stays finite). Each transformed axis computes that: the DFT of
the finite values, plus, per output part, the special terms' total: NaN if one is NaN or +inf
and -inf both occur, else the infinity that occurs (counted with MatMuls of 0/1 indicators
against the twiddles' signs; see `_dft` for when it runs). Multi-axis transforms apply it axis
after axis, as torch's row-column transforms do; c2r to the Hermitian-extended spectrum.

Where this differs from torch (measured on torch 2.13's MKL 2024.2, AVX512, single and several
inf/NaN per signal): at the lengths MKL factorises (9, 15, 18, 20-22, 24-28, 30, 32, and every
longer non-prime length tried: 64, 100, 400; c2c float32 also 16), and in float64 c2c axes (of
c2c, or c2r's first axes) of 10, 13, 17, 19, 23, 29 and 31 when scaled by 1/sqrt(n) or
transformed with other axes, torch combines infinities inside its butterflies and scaling
(inf - inf), so a part may be NaN where the direct sum is +-inf or finite. Every part where
torch is not NaN equals this answer; this, the mathematically exact answer, is kept. The other
cases up to length 32 (1-8, 10-14, 16, 17, 19, 23, 29, 31 but those above) match torch exactly
in r2c, c2c and c2r, one axis or several.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import GraphBuilder, current_opset, op
from graph_builder.evaluator import current_evaluator
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TTensor
from graph_builder.types import DOUBLE, FLOAT
from torchlib.ops._helpers import normalize_dim, one_output
from torchlib.registry import aten_op

_NORM_NAMES = {0: "none (backward)", 1: "1/sqrt(n) (ortho)", 2: "1/n (forward)"}


def _check(name: str, x: Value, dim: Sequence[int], normalization: int) -> list[int]:
    if current_opset() < 20:
        raise ValueError(f"aten::{name} needs ONNX DFT with the axis as an input (opset 20 or later); export with opset >= 20")
    if normalization not in _NORM_NAMES:
        raise ValueError(f"aten::{name}: normalization must be 0, 1 or 2, got {normalization}")
    rank = x.logical_rank
    if rank is None:
        raise ValueError(f"aten::{name}: the input's rank must be known")
    axes = [normalize_dim(d, rank) for d in dim]
    if len(set(axes)) != len(axes):
        raise ValueError(f"aten::{name}: dims {list(dim)} repeat an axis")
    return axes


def _size(x: Value, axis: int) -> Any:
    """The length of an axis of the real view: an int, or an INT64 scalar Value when dynamic."""
    d = x.shape[axis] if x.shape is not None else None
    if isinstance(d, int):
        return d
    return op.Squeeze(op.Shape(x, start=axis, end=axis + 1), [0])


def _compute_dtype(x: Value, lengths: Sequence[Any]) -> Any:
    """DOUBLE for float32 transforms of a length that is not a static power of two (see the
    module docstring), else x's dtype."""
    if x.dtype is FLOAT and not all(isinstance(n, int) and n > 0 and n & (n - 1) == 0 for n in lengths):
        return DOUBLE
    return x.dtype


def _axis_scales(lengths: Sequence[Any], normalization: int) -> list[float]:
    """Per transformed axis, its share n^p of torch's normalization (p = 0, -1/2, -1), applied
    inside that axis's DFT so that an intermediate whose normalized result is finite does not
    overflow; all 1 when a length is dynamic (`_scale` then)."""
    power = {0: 0.0, 1: -0.5, 2: -1.0}[normalization]
    if power == 0 or not all(isinstance(n, int) for n in lengths):
        return [1.0] * len(lengths)
    return [float(n) ** power for n in lengths]


def _scale(x: Value, lengths: Sequence[Any], normalization: int) -> Value:
    """x times torch's normalization over the product of `lengths` when a length is dynamic
    (static ones were applied per axis: `_axis_scales`)."""
    power = {0: 0.0, 1: -0.5, 2: -1.0}[normalization]
    if power == 0 or all(isinstance(n, int) for n in lengths):
        return x
    total: Any = None
    for n in lengths:
        n = op.Cast(n, to=x.known_dtype.onnx) if isinstance(n, Value) else np.array(n, dtype=x.known_dtype.numpy)
        total = n if total is None else op.Mul(total, n)
    return op.Mul(x, op.Pow(total, np.array(power, dtype=x.known_dtype.numpy)))


_MATMUL_MAX_LENGTH = 128  # static lengths up to this: one MatMul with the twiddles (module docstring)


def _plain_dft(x: Value, axis: int, onesided: bool = False, scale: float = 1.0, bounded: bool = False) -> Value:
    """One forward DFT along `axis` of the real view x ([..., 1] real or [..., 2] complex) of
    finite values (an inf or NaN makes bins NaN: `_dft` adds torch's special terms): a direct sum
    (`_matmul_dft`) for static lengths up to _MATMUL_MAX_LENGTH, else onnxruntime's DFT; times
    `scale` (this axis's share of torch's normalization).

    A float64 x near finfo.max: onnxruntime's DFT of a length that is not a power of two is a
    chirp-z transform whose intermediate sums overflow (NaN) long before the result does. Such an
    x is scaled down by 2^-k first (k from the length: the sums grow up to n * m^2, m the padded
    length) and the result scaled back, exactly (powers of two); smaller inputs are left alone,
    so subnormal ones lose no bits."""
    length = x.shape[axis] if x.shape is not None else None
    parts = x.shape[-1] if x.shape is not None else None
    if isinstance(length, int) and isinstance(parts, int) and 1 <= length <= _MATMUL_MAX_LENGTH:
        return _matmul_dft(x, axis, onesided, scale, bounded)
    if x.dtype is not DOUBLE or not isinstance(length, int) or length < 2 or length & (length - 1) == 0:
        y = op.DFT(x, None, np.array(axis, dtype=np.int64), onesided=int(onesided))
        return y if scale == 1 else op.Mul(y, np.array(scale, x.known_dtype.numpy))
    k = 2 * math.ceil(math.log2(length)) + 2
    big = op.GreaterOrEqual(op.ReduceMax(op.Abs(x), keepdims=0), np.array(2.0 ** (1023 - k)))
    down = op.Where(big, np.array(2.0**-k), np.array(1.0))
    y = op.DFT(op.Mul(x, down), None, np.array(axis, dtype=np.int64), onesided=int(onesided))
    return op.Mul(y, op.Where(big, np.array(2.0**k * scale), np.array(scale)))


def _matmul_dft(x: Value, axis: int, onesided: bool, scale: float, bounded: bool) -> Value:
    """The DFT of a static length n along `axis` as the direct sum: x with `axis` moved next to
    the parts, folded when real (`_folds`) and flattened ([..., n * parts]), times the constant
    `_twiddle_matrix`, reshaped to [..., bins, 2] and moved back. Each bin part is a sum of
    products with the exactly rounded twiddles, a part that is exactly 0 contributing exactly 0
    (so a spike at j = 0 does not enter imaginary parts, as in torch's MKL).

    A signal whose largest |part| is at least 2^(emax - k), k = max(1, ceil(log2(n))), is scaled by
    2^-k first and the result back by 2^k (exact, powers of two) times `scale`: the folded pairs
    and the sum of n products of size <= max|x| * 2^-k cannot overflow in any order, and the result
    overflows only where the scaled one does. Per signal, so that the others lose no subnormal
    bits. Skipped when `bounded` (float32 values computing in float64: far from float64's max)."""
    n, parts, rank = x.static_dim(axis), x.static_dim(-1), x.known_rank
    bins = n // 2 + 1 if onesided else n
    dtype = x.known_dtype.numpy
    perm = [*(d for d in range(rank - 1) if d != axis), axis, rank - 1]  # the samples next to the parts
    moved = perm != list(range(rank))
    if moved:
        x = op.Transpose(x, perm=perm)
    up: Any = np.array(scale, dtype)
    if not bounded:
        k = max(1, math.ceil(math.log2(n)))
        # (positive axes: onnxruntime 1.31 does not reduce negative ones of an empty tensor)
        emax = np.finfo(dtype).maxexp  # 1024 (float64), 128 (float32)
        big = op.GreaterOrEqual(op.ReduceMax(op.Abs(x), np.array([rank - 2, rank - 1], np.int64), keepdims=1), np.array(2.0 ** (emax - k), dtype))
        x = op.Mul(x, op.Where(big, np.array(2.0**-k, dtype), np.array(1.0, dtype)))
        up = op.Where(big, np.array(2.0**k * scale, dtype), up)
    flat = op.Reshape(_fold(x, n) if _folds(n, parts) else x, np.array([0] * (rank - 2) + [n * parts], np.int64))
    y = op.Reshape(op.MatMul(flat, _twiddle_matrix(n, bins, parts).astype(dtype)), np.array([0] * (rank - 2) + [bins, 2], np.int64))
    y = y if isinstance(up, np.ndarray) and scale == 1 else op.Mul(y, up)
    return op.Transpose(y, perm=[perm.index(d) for d in range(rank)]) if moved else y


def _folds(n: int, parts: int) -> bool:
    """Whether `_matmul_dft` folds: real signals of 5 samples or more. Below, the direct sum of an
    even signal is exact anyway (n = 3, 4: the imaginary part is two opposite products and zeros);
    complex ones are not folded (measured: c2c n = 128 1.24x the DFT's time folded, 1.0x not)."""
    return parts == 1 and n >= 5


def _fold(x: Value, n: int) -> Value:
    """x [..., n, parts] -> [..., n, parts]: x_0, the sums x_j + x_{n-j} (j = 1 .. h, h = (n-1)//2),
    the differences x_j - x_{n-j}, then x_{n/2} for an even n. The twiddles of j and n - j have
    equal c and opposite s (exactly), so each pair enters through its sum (times c) and its
    difference (times s), as an FFT's butterflies pair them: an even signal (x_{n-j} = x_j, e.g. a
    symmetric window's frame centred by reflect padding) gets imaginary parts exactly 0, not the
    roundoff of summing +t and -t among larger terms."""
    h = (n - 1) // 2
    if h == 0:
        return x
    axis = x.known_rank - 2
    head = op.Slice(x, [1], [1 + h], [axis])  # x_1 .. x_h
    tail = op.Slice(x, [n - 1], [n - 1 - h], [axis], [-1])  # x_{n-1} .. x_{n-h}
    pieces = [op.Slice(x, [0], [1], [axis]), op.Add(head, tail), op.Sub(head, tail)]
    if n % 2 == 0:
        pieces.append(op.Slice(x, [n // 2], [n // 2 + 1], [axis]))
    return op.Concat(*pieces, axis=axis)


def _twiddles(n: int) -> tuple[np.ndarray, np.ndarray]:
    """c = cos(2 pi m / n) and s = -sin(2 pi m / n), m = 0 .. n-1, float64, each the rounding of
    the exact value: the angle folded by symmetry into [0, pi/4] in integers (u = 4m in units of
    pi / 2n) and evaluated in long double, so parts that are exactly 0, 1 or -1 come out exact
    (numpy's cos(pi / 2) is 6e-17, not 0)."""
    u = 4 * np.arange(n)
    sin_sign = np.where(u > 2 * n, -1, 1)
    u = np.minimum(u, 4 * n - u)  # [0, 2n]: angle in [0, pi]
    cos_sign = np.where(u > n, -1, 1)
    u = np.where(u > n, 2 * n - u, u)  # [0, n]: angle in [0, pi/2]
    swap = 2 * u > n
    u = np.where(swap, n - u, u)  # [0, n/2]: angle in [0, pi/4]
    angle = u.astype(np.longdouble) * (np.longdouble("3.14159265358979323846264338327950288") / (2 * n))
    cos, sin = np.cos(angle).astype(np.float64), np.sin(angle).astype(np.float64)
    cos, sin = np.where(swap, sin, cos), np.where(swap, cos, sin)
    return cos_sign * cos + 0.0, -sin_sign * sin + 0.0  # + 0.0: no -0


def _twiddle_matrix(n: int, bins: int, parts: int) -> np.ndarray:
    """The forward DFT of n samples into `bins` bins as a real float64 matrix [n * parts,
    bins * 2] in DFT's interleaved layout: row r * parts + p is row r's part p (real a, imaginary
    b) of the samples, `_fold`ed when `_folds`, column k * 2 + q is bin k's part q. A sample
    a + i b times w^{jk} = c + i s adds a c - b s to Re X_k and a s + b c to Im X_k (m = jk mod n in
    integers); for a pair j, n - j (c equal, s opposite) that is (a_j + a_{n-j}) c - (b_j - b_{n-j})
    s and (a_j - a_{n-j}) s + (b_j + b_{n-j}) c."""
    c_tab, s_tab = _twiddles(n)
    if not _folds(n, parts):
        m = np.arange(n)[:, None] * np.arange(bins)[None, :] % n
        c, s = c_tab[m], s_tab[m]
        w = np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], 1)[:, :parts]  # [n, parts, bins, 2]
        return w.reshape(n * parts, bins * 2) + 0.0  # + 0.0: no -0
    h = (n - 1) // 2
    rows = [0, *range(1, 1 + h), *range(1, 1 + h)] + ([n // 2] if n % 2 == 0 and n > 1 else [])  # the j of each folded row
    m = np.array(rows)[:, None] * np.arange(bins)[None, :] % n
    c, s = c_tab[m], s_tab[m]  # [n, bins]
    plain, sums, diffs = np.r_[0, 1 + 2 * h : n], np.arange(1, 1 + h), np.arange(1 + h, 1 + 2 * h)
    w = np.zeros((n, parts, bins, 2))
    w[plain, 0, :, 0], w[plain, 0, :, 1] = c[plain], s[plain]  # x_0 (and x_{n/2}): a c, a s
    w[sums, 0, :, 0] = c[sums]  # a_j + a_{n-j} enters Re through c
    w[diffs, 0, :, 1] = s[diffs]  # a_j - a_{n-j} enters Im through s
    return w.reshape(n * parts, bins * 2) + 0.0  # + 0.0: no -0


_MAX_SPECIAL_MATRIX = 1 << 22  # n * bins above this: the special-value counts are not built (see _dft)


def _twiddle_signs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The signs (-1, 0 or 1, float32) of c = cos(2 pi m / n) and s = -sin(2 pi m / n), m = 0 .. n-1,
    the real and imaginary parts of the forward DFT's twiddle w^m; a 0 where the part is exactly 0
    (4m = n or 3n for c; m = 0 or 2m = n for s). Integer arithmetic: exact for every n."""
    m4 = 4 * np.arange(n)
    c = np.where((m4 < n) | (m4 > 3 * n), 1, np.where((m4 == n) | (m4 == 3 * n), 0, -1))
    s = -np.sign(2 * n - m4) * (m4 != 0)  # sin > 0 for 0 < 2m < n, < 0 for 2m > n
    return c.astype(np.float32), s.astype(np.float32)


def _special_terms(x: Value, axis: int, bins: int) -> tuple[Value, Value]:
    """For the real view x holding infs and NaNs: per output part (the layout of the DFT of x,
    bins long along `axis`), whether its direct sum has a special term, and that term's total
    (NaN, +inf or -inf), as if each inf/NaN sample times a twiddle part that is exactly 0 gave 0.

    A sample part a (real) or b (imaginary) times w^{jk} = c + i s enters Re as a c - b s and Im as
    a s + b c; per part and bin, MatMuls of 0/1 indicators of x against the twiddle signs count the
    +inf and -inf terms (their difference and their sum) and the NaN terms."""
    n, parts, rank = x.static_dim(axis), x.static_dim(-1), x.known_rank
    c_tab, s_tab = _twiddle_signs(n)
    others = [d for d in range(rank - 1) if d != axis]
    perm = [*others, rank - 1, axis]  # [..., parts, n]: the samples last, a's then b's
    signal = op.Reshape(op.Transpose(x, perm=perm), np.array([0] * len(others) + [parts * n], np.int64))
    index = op.Mod(op.Mul(np.arange(n, dtype=np.int64)[:, None], np.arange(bins, dtype=np.int64)[None, :]), np.array(n, np.int64))
    c, s = op.Gather(c_tab, index), op.Gather(s_tab, index)  # [n, bins]
    signs = op.Concat(c, s, axis=1)  # rows a_j: columns Re X_k then Im X_k
    if parts == 2:
        signs = op.Concat(signs, op.Concat(op.Neg(s), c, axis=1), axis=0)  # rows b_j
    magnitudes = op.Abs(signs)
    pos = op.Cast(op.IsInf(signal, detect_negative=0), to=FLOAT.onnx)
    neg = op.Cast(op.IsInf(signal, detect_positive=0), to=FLOAT.onnx)
    nan = op.Cast(op.IsNaN(signal), to=FLOAT.onnx)
    direction = op.MatMul(op.Sub(pos, neg), signs)  # (+inf terms) - (-inf terms)
    infs = op.MatMul(op.Add(pos, neg), magnitudes)
    nans = op.MatMul(nan, magnitudes)
    # back to the DFT's layout: [..., 2 * bins] -> [..., 2, bins] -> bins at `axis`, parts last
    back = [perm.index(d) for d in range(rank)]
    split = np.array([0] * len(others) + [2, bins], np.int64)
    direction, infs, nans = (op.Transpose(op.Reshape(v, split), perm=back) for v in (direction, infs, nans))
    dtype = x.known_dtype.numpy
    is_nan = op.Or(op.Greater(nans, np.array(0, np.float32)), op.Less(op.Abs(direction), infs))
    signed = op.Where(op.Greater(direction, np.array(0, np.float32)), np.array(np.inf, dtype), np.array(-np.inf, dtype))
    total = op.Where(is_nan, np.array(np.nan, dtype), signed)
    return op.Greater(op.Add(infs, nans), np.array(0, np.float32)), total


def _exact_dft(x: Value, axis: int, onesided: bool, scale: float, bounded: bool) -> Value:
    """_plain_dft of x's finite values plus the special terms of its infs and NaNs (IEEE sums:
    an overflowed finite part of the other sign gives NaN, as the direct sum would)."""
    finite = op.Where(op.IsNaN(op.Mul(x, np.array(0, x.known_dtype.numpy))), np.array(0, x.known_dtype.numpy), x)
    y = _plain_dft(finite, axis, onesided, scale, bounded)
    bins = x.static_dim(axis) // 2 + 1 if onesided else x.static_dim(axis)
    has, total = _special_terms(x, axis, bins)
    return op.Where(has, op.Add(y, total), y)


def _dft(x: Value, axis: int, onesided: bool = False, scale: float = 1.0, bounded: bool = False) -> Value:
    """One forward DFT along `axis` of the real view x ([..., 1] real or [..., 2] complex), with
    torch's answer on infs and NaNs (the module docstring's rule). The exact path runs only when
    x holds one: IsNaN(ReduceSum(x) * 0), also true when the sum overflows, which takes the exact
    path harmlessly; traced, as the condition of an If, so that finite inputs cost one ReduceSum.
    A dynamic length, or n * bins above 2^22 (the counts' matrix, [parts * n, 2 * bins] float32,
    would pass 64 MB), keeps onnxruntime's answer: every bin of the signal NaN. The result is
    times `scale`; `bounded`: x holds float32 values (computing in float64), so `_matmul_dft` needs
    no scaling against overflow."""
    n = x.shape[axis] if x.shape is not None else None
    parts = x.shape[-1] if x.shape is not None else None
    if not isinstance(n, int) or not isinstance(parts, int) or n < 1 or n * (n // 2 + 1 if onesided else n) > _MAX_SPECIAL_MATRIX:
        return _plain_dft(x, axis, onesided, scale, bounded)
    special = op.IsNaN(op.Mul(op.ReduceSum(x, keepdims=0), np.array(0, x.known_dtype.numpy)))
    builder = current_evaluator()
    if not isinstance(builder, GraphBuilder):  # eager: the values are known
        return _exact_dft(x, axis, onesided, scale, bounded) if bool(special.const_value) else _plain_dft(x, axis, onesided, scale, bounded)
    if n <= _MATMUL_MAX_LENGTH:  # the twiddles in this graph: both branches use this one constant (equal arrays are one)
        builder.constant(_twiddle_matrix(n, n // 2 + 1 if onesided else n, parts).astype(x.known_dtype.numpy))
    then_branch, else_branch = builder.subgraph("dft_with_inf_nan"), builder.subgraph("dft")
    with then_branch:
        then_branch.output(_exact_dft(x, axis, onesided, scale, bounded))
    with else_branch:
        else_branch.output(_plain_dft(x, axis, onesided, scale, bounded))
    return one_output(op.If(special, then_branch=then_branch, else_branch=else_branch))


def _real_input_zeros(x: Value, axis: int, length: Any) -> Value:
    """The imaginary parts that a DFT of real input has exactly 0 (bin 0, and bin n/2 for an
    even n), set to 0 as torch's pocketfft leaves them (its half-complex result does not hold
    them): onnxruntime's chirp-z DFT puts its roundoff there (eps * max|x|), or NaN."""
    bins = x.shape[axis] if x.shape is not None else None
    zero = np.array(0, x.known_dtype.numpy)
    if isinstance(length, int) and isinstance(bins, int):
        if bins == 0:
            return x
        mask = np.zeros([bins] + [1] * (x.known_rank - axis - 2) + [2], bool)
        mask[0, ..., 1] = True
        if length % 2 == 0 and length // 2 < bins:
            mask[length // 2, ..., 1] = True
        return op.Where(mask, zero, x)
    # a dynamic length: the same mask, from the bin indices at run time
    k = op.Range(np.array(0, np.int64), _size(x, axis), np.array(1, np.int64))
    edge = op.Or(op.Equal(k, np.array(0, np.int64)), op.Equal(op.Mul(k, np.array(2, np.int64)), length))
    edge = op.Reshape(edge, np.array([-1] + [1] * (x.known_rank - axis - 1), np.int64))
    return op.Where(op.And(edge, np.array([False, True])), zero, x)


def _conj(x: Value) -> Value:
    return op.Mul(x, np.array([1, -1], dtype=x.known_dtype.numpy))


def _back(x: Value, dtype: Any) -> Value:
    return x if x.dtype is dtype else op.Cast(x, to=dtype.onnx)


@aten_op("aten::_fft_c2c", complex=True)
def aten__fft_c2c(self: TTensor, dim: Sequence[int], normalization: int, forward: bool) -> TTensor:
    """_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor"""
    axes = _check("_fft_c2c", self, dim, normalization)
    if not axes:
        return op.Identity(self).as_complex()
    lengths = [_size(self, a) for a in axes]
    dtype = _compute_dtype(self, lengths)
    bounded = self.dtype is FLOAT and dtype is DOUBLE  # float32 values: no float64 overflow
    x = _back(self, dtype) if forward else _conj(_back(self, dtype))
    for a, scale in zip(axes, _axis_scales(lengths, normalization)):
        x = _dft(x, a, scale=scale, bounded=bounded)
    x = x if forward else _conj(x)
    return _back(_scale(x, lengths, normalization), self.dtype).as_complex()


@aten_op("aten::_fft_r2c")
def aten__fft_r2c(self: TFloat, dim: Sequence[int], normalization: int, onesided: bool) -> TTensor:
    """_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor"""
    if self.dtype not in (FLOAT, DOUBLE):
        raise TypeError(f"aten::_fft_r2c takes a float32 or float64 tensor, got {self.dtype} (torch.fft promotes before it)")
    axes = _check("_fft_r2c", self, dim, normalization)
    if not axes:
        raise ValueError("aten::_fft_r2c needs at least one dim (torch raises too)")
    lengths = [_size(self, a) for a in axes]
    dtype = _compute_dtype(self, lengths)
    bounded = self.dtype is FLOAT and dtype is DOUBLE  # float32 values: no float64 overflow
    scales = _axis_scales(lengths, normalization)
    # the last dim is the real-to-complex one (halved when onesided), the others complex
    x = _real_input_zeros(_dft(op.Unsqueeze(_back(self, dtype), [-1]), axes[-1], onesided=onesided, scale=scales[-1], bounded=bounded), axes[-1], lengths[-1])
    for a, scale in zip(axes[:-1], scales):
        x = _dft(x, a, scale=scale, bounded=bounded)
    return _back(_scale(x, lengths, normalization), self.dtype).as_complex()


@aten_op("aten::_fft_c2r", complex=True)
def aten__fft_c2r(self: TTensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> TFloat:
    """_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor"""
    axes = _check("_fft_c2r", self, dim, normalization)
    if not axes:
        raise ValueError("aten::_fft_c2r needs at least one dim (torch raises too)")
    if not isinstance(last_dim_size, int):
        raise ValueError("aten::_fft_c2r: the output length (last_dim_size) must be static; pass n= explicitly")
    if last_dim_size < 1:
        raise ValueError(f"aten::_fft_c2r: invalid output length {last_dim_size} (torch raises too)")
    n, last = last_dim_size, axes[-1]
    lengths = [_size(self, a) for a in axes[:-1]] + [n]
    dtype = _compute_dtype(self, lengths)
    bounded = self.dtype is FLOAT and dtype is DOUBLE  # float32 values: no float64 overflow
    # inverse transforms as forward ones of the conjugate; the real part is the same either way
    scales = _axis_scales(lengths, normalization)
    x = _conj(_back(self, dtype))
    for a, scale in zip(axes[:-1], scales):
        x = _dft(x, a, scale=scale, bounded=bounded)
    # the full Hermitian spectrum along the last dim: X[0 .. n//2] then conj(X[n - k]) for the rest
    half = n // 2 + 1
    have = x.shape[last] if x.shape is not None else None
    if isinstance(have, int) and have < half:
        pads = [0] * (2 * x.known_rank)
        pads[x.known_rank + last] = half - have
        x = op.Pad(x, pads)
    else:
        x = op.Slice(x, [0], [half], [last])
    if n - half > 0:
        mirrored = op.Slice(x, [n - half], [0], [last], [-1])  # X[n - half], ..., X[1]
        mirrored = op.Mul(mirrored, np.array([1, -1], dtype=dtype.numpy))
        x = op.Concat(x, mirrored, axis=last)
    x = _dft(x, last, scale=scales[-1], bounded=bounded)
    real = op.Gather(x, np.array(0, dtype=np.int64), axis=-1)  # the imaginary parts of X[0], X[n/2] drop out
    return _back(_scale(real, lengths, normalization), self.dtype)



