"""Eigenvalues and eigenvectors of general real matrices (linalg_eig, linalg_eigvals), LAPACK's
geev step by step, in float64 (float32 inputs too, rounded at the end):

0. Balancing (gebal's scaling, not its permutations): B = D⁻¹ A D with D a diagonal of powers
   of 2 evening out the rows' and columns' norms, so that badly scaled matrices keep their
   accuracy (the eigenvectors are D times B's).
1. Householder reduction to upper Hessenberg form H = Qᵀ B Q (gehd2, unrolled).
2. Francis double-shift QR iteration on H (lahqr), in an ONNX Loop: each iteration deflates
   negligible subdiagonal entries (lahqr's Ahues-Tisseur test), takes the bottom unreduced block
   of size 3 or more of each matrix of the batch as its window, and chases one double-shift
   bulge through it (3-element reflectors, unrolled over the matrix dimension, a step that lies
   outside a matrix's window being the identity for that matrix). Shifts are the eigenvalues of
   the window's trailing 2x2 block, with lahqr's exceptional shifts every 10 iterations without
   deflation and its search for a start below two small subdiagonal entries. The Loop ends when
   every matrix is in real Schur form (blocks of size 1 or 2) or after 30·max(10, n) iterations.
3. Each 2x2 block is put in standard form (lanv2): split into two 1x1 blocks when its
   eigenvalues are real, else equal diagonal entries, giving the pair a ± i·sqrt(|b c|).
4. Eigenvectors (trevc): a unitary 2x2 rotation per complex block makes the Schur form complex
   upper triangular; back substitution solves (T - λ_j) x_j = 0 for every j at once, row by row
   (a near-zero pivot replaced by ulp·|λ_j| as trevc does), x_j is back-transformed by the Schur
   vectors, and normalised as geev does: Euclidean norm 1, and for a complex pair the component
   of largest modulus made real (with the sign of its real part), the second vector of the pair
   being the conjugate of the first.

The eigenvalues come in the order of the Schur form's diagonal (where the iteration deflated
them), as LAPACK's. On random float64 matrices the order is torch's and so are the eigenvectors,
phases included, for most of them (200 random 6x6: every order, 93% of the eigenvector sets);
where they differ it is by the sign of a vector. float32 inputs iterate in float64 where torch's
sgeev iterates in float32, which can end in other signs (and, for clustered eigenvalues, another
order). gebal's permutations (which isolate eigenvalues of triangular parts) are not done.
Complex outputs are real views (..., 2) marked complex (docs/complex.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TTensor
from torchlib.ops.linalg._common import check_square, loop, reduce, tr
from torchlib.registry import aten_op

ULP = float(np.finfo(np.float64).eps)  # LAPACK's dlamch('P'), 2^-52
SAFMIN = float(np.finfo(np.float64).tiny)
EXCEPTIONAL = 10  # lahqr's KEXSH


# -- vectors along the matrix dimension ------------------------------------------------------------
def _band(x: Value, k: int) -> Value:
    """(..., n): element i is x[i, i + k] (0 where out of range)."""
    n = x.static_dim(-1)
    return reduce("Sum", op.Where(np.eye(n, k=k, dtype=bool), x, 0.0), [-1])


def _shift(v: Value, s: int) -> Value:
    """(..., n): element i is v[i + s] (0 where out of range)."""
    n = v.static_dim(-1)
    index = np.arange(n) + s
    valid = (index >= 0) & (index < n)
    return op.Where(valid, op.Gather(v, np.clip(index, 0, n - 1), axis=-1), 0.0)


def _pick(v: Value, index: Value) -> Value:
    """v[..., index[...]] for a batch of indices (clipped to the range)."""
    n = v.static_dim(-1)
    index = op.Clip(index, np.array(0, np.int64), np.array(max(n - 1, 0), np.int64))
    return op.Squeeze(op.GatherElements(v, op.Unsqueeze(index, [-1]), axis=-1), [-1])


def _at(v: Value) -> Value:
    """A batch of scalars (...) as (..., 1), to combine with vectors (..., n)."""
    return op.Unsqueeze(v, [-1])


def _sign(x: Value) -> Value:
    """Fortran's SIGN(1, x): -1 for x < 0, else 1."""
    return op.Where(op.Less(x, 0.0), np.array(-1.0), np.array(1.0))


def _diag_matrix(v: Value, k: int = 0) -> Value:
    """(..., n, n) with v[i] at (i, i + k)."""
    n = v.static_dim(-1)
    return op.Mul(_at(v), np.eye(n, k=k))


def _any(b: Value) -> Value:
    return op.Greater(reduce("Max", op.Cast(op.Reshape(b, [-1]), to=types.DOUBLE.onnx), [0]), 0.0)


# -- 0. balancing ----------------------------------------------------------------------------------
def _balance(a: Value) -> tuple[Value, Value]:
    """(D⁻¹ A D, D) with D a diagonal of powers of 2 (the vector (..., n)) making each row and
    column of similar norm: gebal's scaling (not its permutations). Sweeps over the indices in
    order, each scaling row i by 1/f and column i by f when that reduces their norms' sum below
    0.95 of what it was, until a sweep changes nothing (or 30 sweeps)."""
    n = a.static_dim(-1)
    idx = np.arange(n)
    scale = op.Expand(np.ones(1), op.Shape(a, end=-1))  # (..., n)

    def body(_: Value, carried: list[Value]) -> tuple[Value, list[Value]]:
        a, scale = carried
        changed: Value | None = None
        for i in range(n):
            c = op.Sqrt(reduce("Sum", op.Mul(op.Gather(a, i, axis=-1), op.Gather(a, i, axis=-1)), [-1]))
            r = op.Sqrt(reduce("Sum", op.Mul(op.Gather(a, i, axis=-2), op.Gather(a, i, axis=-2)), [-1]))
            zero = op.Or(op.Equal(c, 0.0), op.Equal(r, 0.0))
            c1, r1 = op.Where(zero, 1.0, c), op.Where(zero, 1.0, r)
            # f = 2^(k1 - k2), gebal's two loops: k1 the fewest doublings of c (halvings of r)
            # with c 2^k1 >= r 2^-k1 / 2, k2 the fewest halvings of c with c 2^-k2 / 2 < r 2^k2
            k1 = _fewest(op.Div(r1, op.Mul(c1, 2.0)), lambda p: op.GreaterOrEqual(op.Mul(c1, p), op.Div(op.Div(r1, p), 2.0)))
            k2 = _fewest(op.Div(c1, op.Mul(r1, 2.0)), lambda p: op.Less(op.Div(op.Div(c1, p), 2.0), op.Mul(r1, p)), above=True)
            f = op.Pow(np.array(2.0), op.Sub(k1, k2))
            keep = op.GreaterOrEqual(op.Add(op.Mul(c1, f), op.Div(r1, f)), op.Mul(op.Add(c1, r1), 0.95))
            f = op.Where(op.Or(op.Or(zero, keep), op.IsNaN(f)), 1.0, f)  # NaN: left alone
            fm = op.Unsqueeze(f, [-1, -2])
            a = op.Where((idx == i)[:, None], op.Div(a, fm), a)
            a = op.Where((idx == i)[None, :], op.Mul(a, fm), a)
            scale = op.Where(idx == i, op.Mul(scale, _at(f)), scale)
            step = op.Not(op.Equal(f, 1.0))
            changed = step if changed is None else op.Or(changed, step)
        assert changed is not None, "_balance takes matrices of size 2 or more"
        return _any(changed), [a, scale]

    a, scale = loop(30, [a, scale], body)
    return a, scale


def _fewest(ratio: Value, done: Callable[[Value], Value], above: bool = False) -> Value:
    """The smallest k >= 0 with done(2^k) (monotone in k): about log4(ratio) (rounded up, or
    down plus one when `above`), checked exactly on the neighbours of that estimate."""
    log4 = op.Div(op.Log(ratio), float(np.log(4.0)))
    guess = op.Add(op.Floor(log4), 1.0) if above else op.Ceil(log4)
    guess = op.Max(op.Sub(guess, 1.0), 0.0)  # try guess - 1, guess, guess + 1
    power = op.Pow(np.array(2.0), guess)
    k = op.Where(done(power), guess, op.Where(done(op.Mul(power, 2.0)), op.Add(guess, 1.0), op.Add(guess, 2.0)))
    return k


# -- 1. Hessenberg reduction -----------------------------------------------------------------------
def _hessenberg(a: Value) -> tuple[Value, Value]:
    """(H, Q) with H = Qᵀ A Q upper Hessenberg: gehd2's reflectors (dlarfg), Q accumulated."""
    n = a.static_dim(-1)
    q = op.Expand(np.eye(n), op.Shape(a))
    idx = np.arange(n)
    for k in range(n - 2):
        x = op.Gather(a, k, axis=-1)  # column k (..., n)
        alpha = op.Gather(x, [k + 1], axis=-1)  # (..., 1)
        below = idx > k + 1
        xnorm = op.Sqrt(reduce("Sum", op.Where(below, op.Mul(x, x), 0.0), [-1], keepdims=1))
        norm = op.Sqrt(op.Add(op.Mul(alpha, alpha), op.Mul(xnorm, xnorm)))
        beta = op.Mul(op.Neg(_sign(alpha)), norm)
        trivial = op.Equal(xnorm, 0.0)
        tau = op.Where(trivial, 0.0, op.Div(op.Sub(beta, alpha), beta))
        scale = op.Where(trivial, 0.0, op.Div(1.0, op.Where(trivial, 1.0, op.Sub(alpha, beta))))
        v = op.Where(below, op.Mul(x, scale), (idx == k + 1).astype(np.float64))  # (..., n)
        a = _reflect(a, v, tau, left=True, right=True)
        q = _reflect(q, v, tau, left=False, right=True)
        column = op.Where(idx == k + 1, op.Where(trivial, alpha, beta), op.Where(idx > k + 1, 0.0, x))
        a = op.Where(idx[None, :] == k, op.Unsqueeze(column, [-1]), a)
    return a, q


def _reflect(x: Value, v: Value, tau: Value, left: bool, right: bool) -> Value:
    """(I - tau v vᵀ) x (left) and/or x (I - tau v vᵀ) (right), v (..., n), tau (..., 1)."""
    t = op.Unsqueeze(tau, [-1])  # (..., 1, 1)
    row, column = op.Unsqueeze(v, [-2]), op.Unsqueeze(v, [-1])
    if left:
        x = op.Sub(x, op.Mul(op.Mul(column, t), op.MatMul(row, x)))
    if right:
        x = op.Sub(x, op.Mul(op.MatMul(x, column), op.Mul(row, t)))
    return x


# -- 2. Francis double-shift QR iteration ----------------------------------------------------------
def _deflate(h: Value) -> Value:
    """h with its negligible subdiagonal entries set to zero (lahqr's test)."""
    n = h.static_dim(-1)
    smlnum = SAFMIN * (n / ULP)
    d, sub = _band(h, 0), _band(h, -1)  # d[i] = h[i, i], sub[i] = h[i, i - 1]
    sup = _shift(_band(h, 1), -1)  # sup[i] = h[i - 1, i]
    dprev = _shift(d, -1)
    asub = op.Abs(sub)
    tst = op.Add(op.Abs(dprev), op.Abs(d))
    tst = op.Where(op.Equal(tst, 0.0), op.Add(tst, op.Add(op.Abs(_shift(sub, -1)), op.Abs(_shift(sub, 1)))), tst)
    ab, ba = op.Max(asub, op.Abs(sup)), op.Min(asub, op.Abs(sup))
    diff = op.Abs(op.Sub(dprev, d))
    aa, bb = op.Max(op.Abs(d), diff), op.Min(op.Abs(d), diff)
    s = op.Add(aa, ab)
    fine = op.LessOrEqual(op.Mul(ba, op.Div(ab, s)), op.Max(op.CastLike(smlnum, h), op.Mul(op.Mul(bb, op.Div(aa, s)), ULP)))
    negligible = op.Or(op.LessOrEqual(asub, smlnum), op.And(op.LessOrEqual(asub, op.Mul(tst, ULP)), fine))
    mask = op.And(np.eye(n, k=-1, dtype=bool), op.Unsqueeze(negligible, [-1]))
    return op.Where(mask, 0.0, h)


def _window(h: Value) -> tuple[Value, Value]:
    """(lo, hi) of the bottom unreduced block of size >= 3 of each matrix; hi = -1 when there is
    none (the matrix is in real Schur form)."""
    n = h.static_dim(-1)
    idx = np.arange(n)
    split = op.Or(op.Equal(_band(h, -1), 0.0), idx == 0)  # a block starts at i
    # the start of the block holding j: the largest i <= j where a block starts
    starts = op.Where(op.And(op.Unsqueeze(split, [-2]), idx[None, :] <= idx[:, None]), idx[None, :], 0)
    start = reduce("Max", starts, [-1])  # (..., n) int64
    end = op.Or(op.Greater(_shift(op.Cast(split, to=types.DOUBLE.onnx), 1), 0.0), idx == n - 1)  # a block ends at j
    big = op.And(end, op.GreaterOrEqual(op.Sub(idx, start), 2))
    hi = reduce("Max", op.Where(big, idx, -1), [-1])
    return _pick(start, hi), hi


def _shifts(d: Value, sub: Value, sup: Value, lo: Value, hi: Value, kdefl: Value) -> tuple[Value, Value, Value, Value]:
    """(rt1r, rt1i, rt2r, rt2i): lahqr's double shift for the window (lo, hi)."""
    h11, h21, h12, h22 = _pick(d, op.Sub(hi, 1)), _pick(sub, hi), _pick(sup, hi), _pick(d, hi)
    bottom = op.Equal(op.Mod(kdefl, np.array(2 * EXCEPTIONAL, np.int64)), 0)
    top = op.And(op.Not(bottom), op.Equal(op.Mod(kdefl, np.array(EXCEPTIONAL, np.int64)), 0))
    s_bottom = op.Add(op.Abs(h21), op.Abs(_pick(sub, op.Sub(hi, 1))))
    s_top = op.Add(op.Abs(_pick(sub, op.Add(lo, 1))), op.Abs(_pick(sub, op.Add(lo, 2))))
    e11 = op.Where(bottom, op.Add(op.Mul(s_bottom, 0.75), h22), op.Add(op.Mul(s_top, 0.75), _pick(d, lo)))
    s_exc = op.Where(bottom, s_bottom, s_top)
    exceptional = op.Or(bottom, top)
    h11 = op.Where(exceptional, e11, h11)
    h12 = op.Where(exceptional, op.Mul(s_exc, -0.4375), h12)
    h21 = op.Where(exceptional, s_exc, h21)
    h22 = op.Where(exceptional, e11, h22)
    s = op.Add(op.Add(op.Abs(h11), op.Abs(h12)), op.Add(op.Abs(h21), op.Abs(h22)))
    zero = op.Equal(s, 0.0)
    s1 = op.Where(zero, 1.0, s)
    h11, h12, h21, h22 = (op.Div(x, s1) for x in (h11, h12, h21, h22))
    trace = op.Mul(op.Add(h11, h22), 0.5)
    det = op.Sub(op.Mul(op.Sub(h11, trace), op.Sub(h22, trace)), op.Mul(h12, h21))
    rtdisc = op.Sqrt(op.Abs(det))
    complex_ = op.GreaterOrEqual(det, 0.0)
    r1, r2 = op.Add(trace, rtdisc), op.Sub(trace, rtdisc)
    closer = op.Where(op.LessOrEqual(op.Abs(op.Sub(r1, h22)), op.Abs(op.Sub(r2, h22))), r1, r2)
    rr = op.Mul(op.Where(complex_, trace, closer), s1)
    ri = op.Where(complex_, op.Mul(rtdisc, s1), 0.0)
    rr, ri = op.Where(zero, 0.0, rr), op.Where(zero, 0.0, ri)
    return rr, ri, rr, op.Neg(ri)


def _start(d: Value, sub: Value, sup: Value, lo: Value, hi: Value, shifts: tuple[Value, ...]) -> tuple[Value, Value, Value, Value]:
    """(m, v1, v2, v3): where the bulge starts (the largest m in [lo, hi - 2] below two small
    subdiagonal entries, else lo) and the first column of (H - s1)(H - s2) there, as lahqr."""
    n = d.static_dim(-1)
    idx = np.arange(n)
    rt1r, rt1i, rt2r, rt2i = (_at(x) for x in shifts)
    d1, sub1, sub2 = _shift(d, 1), _shift(sub, 1), _shift(sub, 2)
    s = op.Add(op.Add(op.Abs(op.Sub(d, rt2r)), op.Abs(rt2i)), op.Abs(sub1))
    s = op.Where(op.Equal(s, 0.0), 1.0, s)
    h21s = op.Div(sub1, s)
    v1 = op.Sub(op.Add(op.Mul(h21s, _shift(sup, 1)), op.Mul(op.Sub(d, rt1r), op.Div(op.Sub(d, rt2r), s))), op.Mul(rt1i, op.Div(rt2i, s)))
    v2 = op.Mul(h21s, op.Sub(op.Sub(op.Add(d, d1), rt1r), rt2r))
    v3 = op.Mul(h21s, sub2)
    s = op.Add(op.Add(op.Abs(v1), op.Abs(v2)), op.Abs(v3))
    s = op.Where(op.Equal(s, 0.0), 1.0, s)
    v1, v2, v3 = op.Div(v1, s), op.Div(v2, s), op.Div(v3, s)
    h00 = op.Mul(op.Abs(sub), op.Add(op.Abs(v2), op.Abs(v3)))
    h01 = op.Mul(op.Mul(op.Abs(v1), ULP), op.Add(op.Add(op.Abs(_shift(d, -1)), op.Abs(d)), op.Abs(d1)))
    inside = op.And(op.Greater(idx, _at(lo)), op.LessOrEqual(idx, _at(op.Sub(hi, 2))))
    ok = op.And(inside, op.LessOrEqual(h00, h01))
    m = op.Max(reduce("Max", op.Where(ok, idx, -1), [-1]), lo)
    return m, _pick(v1, m), _pick(v2, m), _pick(v3, m)


def _sweep(h: Value, z: Value, kdefl: Value, last_hi: Value) -> tuple[Value, Value, Value, Value]:
    """One double-shift QR iteration on each matrix's window (none for a matrix in Schur form)."""
    n = h.static_dim(-1)
    idx = np.arange(n)
    lo, hi = _window(h)
    kdefl = op.Where(op.Equal(hi, last_hi), op.Add(kdefl, np.array(1, np.int64)), np.array(1, np.int64))
    d, sub, sup = _band(h, 0), _band(h, -1), _shift(_band(h, 1), -1)
    shifts = _shifts(d, sub, sup, lo, hi, kdefl)
    m, s1, s2, s3 = _start(d, sub, sup, lo, hi, shifts)
    # per-matrix scalars as (..., 1), (..., 1, 1): no Unsqueeze in the unrolled steps
    m, hi1 = _at(m), _at(hi)
    s1, s2, s3 = _at(s1), _at(s2), _at(s3)
    for k in range(n - 1):
        act = op.And(op.LessOrEqual(m, k), op.Less(np.array(k, np.int64), hi1))  # (..., 1)
        first = op.Equal(m, k)
        x, y, zz = s1, s2, s3
        if k >= 1:
            c = op.Gather(h, k - 1, axis=-1)  # column k - 1 (..., n)
            x = op.Where(first, x, op.Gather(c, [k], axis=-1))
            y = op.Where(first, y, op.Gather(c, [k + 1], axis=-1))
            zz = op.Where(first, zz, op.Gather(c, [k + 2], axis=-1)) if k + 2 < n else zz
        if k + 2 < n:
            zz = op.Where(op.LessOrEqual(np.array(k + 2, np.int64), hi1), zz, 0.0)
        else:
            zz = op.Mul(zz, 0.0)
        xnorm = op.Sqrt(op.Add(op.Mul(y, y), op.Mul(zz, zz)))
        beta = op.Mul(op.Neg(_sign(x)), op.Sqrt(op.Add(op.Mul(x, x), op.Mul(xnorm, xnorm))))
        trivial = op.Or(op.Equal(xnorm, 0.0), op.Not(act))
        tau = op.Where(trivial, 0.0, op.Div(op.Sub(beta, x), beta))
        scale = op.Where(trivial, 0.0, op.Div(1.0, op.Where(trivial, 1.0, op.Sub(x, beta))))
        v = op.Mul(op.Concat(y, zz, axis=-1), scale)  # (..., 2)
        v = op.Where(idx == k, 1.0, op.MatMul(v, np.eye(2, n, k=k + 1)))  # (..., n)
        row, column, t = op.Unsqueeze(v, [-2]), op.Unsqueeze(v, [-1]), op.Unsqueeze(tau, [-1])
        h = op.Sub(h, op.Mul(op.Mul(column, t), op.MatMul(row, h)))  # (I - tau v vᵀ) h
        row_t = op.Mul(row, t)
        h = op.Sub(h, op.Mul(op.MatMul(h, column), row_t))  # h (I - tau v vᵀ)
        z = op.Sub(z, op.Mul(op.MatMul(z, column), row_t))
        if k >= 1:  # the bulge's column: beta (lahqr keeps (1 - tau) h[m, m-1] at m), then zeros
            keep_first = op.And(act, op.Not(first))  # (..., 1)
            rows = op.Or(op.And(act, (idx > k) & (idx <= k + 2)), op.And(keep_first, idx == k))  # (..., n)
            newcol = op.Where(idx == k, op.Where(op.Equal(xnorm, 0.0), x, beta), 0.0)  # (..., n)
            h = op.Where(op.And(op.Unsqueeze(rows, [-1]), idx[None, :] == k - 1), op.Unsqueeze(newcol, [-1]), h)
    return _deflate(h), z, kdefl, hi


def _schur(a: Value) -> tuple[Value, Value]:
    """(T, Z): the real Schur form (quasi upper triangular) and Schur vectors of a, A = Z T Zᵀ."""
    n = a.static_dim(-1)
    h, z = _hessenberg(a)
    h = _deflate(h)
    if n > 2:
        batch = op.Shape(a, end=-2)
        kdefl = op.ConstantOfShape(batch, value=np.zeros(1, np.int64))
        last_hi = op.ConstantOfShape(batch, value=np.full(1, -2, np.int64))

        def body(i: Value, carried: list[Value]) -> tuple[Value, list[Value]]:
            h, z, kdefl, last_hi = _sweep(*carried)
            _, hi = _window(h)
            mass = reduce("Sum", op.Abs(h), [-1, -2])
            finite = op.Not(op.Or(op.IsNaN(mass), op.IsInf(mass)))  # NaN or inf never converge
            return _any(op.And(op.GreaterOrEqual(hi, 0), finite)), [h, z, kdefl, last_hi]

        # the body runs at least once: an iteration leaves a matrix already in Schur form alone
        h, z, _, _ = loop(30 * max(10, n), [h, z, kdefl, last_hi], body)
    return op.Trilu(h, np.array(-1, np.int64), upper=1), z


# -- 3. standard 2x2 blocks ------------------------------------------------------------------------
def _lanv2(a: Value, b: Value, c: Value, d: Value) -> tuple[Value, ...]:
    """LAPACK's dlanv2 elementwise: (a, b, c, d, cs, sn) of the standardised block."""
    eps = ULP
    one = 1.0
    # case c == 0: nothing; case b == 0: swap; case a == d and sign(b) != sign(c): nothing
    c_zero = op.Equal(c, 0.0)
    b_zero = op.And(op.Not(c_zero), op.Equal(b, 0.0))
    std = op.And(op.And(op.Not(c_zero), op.Not(b_zero)), op.And(op.Equal(op.Sub(a, d), 0.0), op.Not(op.Equal(_sign(b), _sign(c)))))
    general = op.Not(op.Or(op.Or(c_zero, b_zero), std))
    temp = op.Sub(a, d)
    p = op.Mul(temp, 0.5)
    bcmax = op.Max(op.Abs(b), op.Abs(c))
    bcmis = op.Mul(op.Mul(op.Min(op.Abs(b), op.Abs(c)), _sign(b)), _sign(c))
    scale = op.Max(op.Abs(p), bcmax)
    scale1 = op.Where(op.Equal(scale, 0.0), one, scale)
    zz = op.Add(op.Mul(op.Div(p, scale1), p), op.Mul(op.Div(bcmax, scale1), bcmis))
    real = op.GreaterOrEqual(zz, 4.0 * eps)
    # real eigenvalues: z = p + sign(p) sqrt(scale) sqrt(z)
    zr = op.Add(p, op.Mul(_sign(p), op.Mul(op.Sqrt(scale), op.Sqrt(op.Abs(zz)))))
    zr1 = op.Where(op.Equal(zr, 0.0), one, zr)
    ra = op.Add(d, zr)
    rd = op.Sub(d, op.Mul(op.Div(bcmax, zr1), bcmis))
    tau = op.Sqrt(op.Add(op.Mul(c, c), op.Mul(zr, zr)))
    tau1 = op.Where(op.Equal(tau, 0.0), one, tau)
    rcs, rsn = op.Div(zr, tau1), op.Div(c, tau1)
    rb = op.Sub(b, c)
    # complex or nearly equal real eigenvalues: make the diagonal equal
    sigma = op.Add(b, c)
    tau = op.Sqrt(op.Add(op.Mul(sigma, sigma), op.Mul(temp, temp)))
    tau1 = op.Where(op.Equal(tau, 0.0), one, tau)
    ccs = op.Sqrt(op.Mul(op.Add(op.Div(op.Abs(sigma), tau1), one), 0.5))
    csn = op.Mul(op.Neg(op.Div(p, op.Mul(tau1, ccs))), _sign(sigma))
    aa = op.Add(op.Mul(a, ccs), op.Mul(b, csn))
    bb = op.Add(op.Mul(op.Neg(a), csn), op.Mul(b, ccs))
    cc = op.Add(op.Mul(c, ccs), op.Mul(d, csn))
    dd = op.Add(op.Mul(op.Neg(c), csn), op.Mul(d, ccs))
    ca = op.Add(op.Mul(aa, ccs), op.Mul(cc, csn))
    cb = op.Add(op.Mul(bb, ccs), op.Mul(dd, csn))
    cc2 = op.Add(op.Mul(op.Neg(aa), csn), op.Mul(cc, ccs))
    cd = op.Add(op.Mul(op.Neg(bb), csn), op.Mul(dd, ccs))
    ctemp = op.Mul(op.Add(ca, cd), 0.5)
    # then: c != 0 and b != 0 with sign(b) == sign(c): real after all, split
    c_nz, b_nz = op.Not(op.Equal(cc2, 0.0)), op.Not(op.Equal(cb, 0.0))
    split = op.And(op.And(c_nz, b_nz), op.Equal(_sign(cb), _sign(cc2)))
    sab, sac = op.Sqrt(op.Abs(cb)), op.Sqrt(op.Abs(cc2))
    sp = op.Mul(_sign(cc2), op.Mul(sab, sac))
    bc = op.Abs(op.Add(cb, cc2))
    stau = op.Div(one, op.Sqrt(op.Where(op.Equal(bc, 0.0), one, bc)))
    cs1, sn1 = op.Mul(sab, stau), op.Mul(sac, stau)
    scs = op.Sub(op.Mul(ccs, cs1), op.Mul(csn, sn1))
    ssn = op.Add(op.Mul(ccs, sn1), op.Mul(csn, cs1))
    # c != 0, b == 0: swap
    swap = op.And(c_nz, op.Not(b_nz))
    xa = op.Where(split, op.Add(ctemp, sp), ctemp)
    xd = op.Where(split, op.Sub(ctemp, sp), ctemp)
    xb = op.Where(split, op.Sub(cb, cc2), op.Where(swap, op.Neg(cc2), cb))
    xc = op.Where(op.Or(split, swap), 0.0, cc2)
    xcs = op.Where(split, scs, op.Where(swap, op.Neg(csn), ccs))
    xsn = op.Where(split, ssn, op.Where(swap, ccs, csn))
    # assemble the cases
    na = op.Where(general, op.Where(real, ra, xa), op.Where(b_zero, d, a))
    nd = op.Where(general, op.Where(real, rd, xd), op.Where(b_zero, a, d))
    nb = op.Where(general, op.Where(real, rb, xb), op.Where(b_zero, op.Neg(c), b))
    nc = op.Where(general, op.Where(real, 0.0, xc), op.Where(b_zero, 0.0, c))
    cs = op.Where(general, op.Where(real, rcs, xcs), op.Where(b_zero, np.array(0.0), np.array(1.0)))
    sn = op.Where(general, op.Where(real, rsn, xsn), op.Where(b_zero, np.array(1.0), np.array(0.0)))
    return na, nb, nc, nd, cs, sn


def _standardize(t: Value, z: Value) -> tuple[Value, Value, Value, Value]:
    """(T, Z, wi, pair): the 2x2 blocks in standard form, wi the imaginary parts of the
    eigenvalues, pair[i] true where a complex pair starts at i."""
    n = t.static_dim(-1)
    d, sub, sup = _band(t, 0), _band(t, -1), _band(t, 1)  # sup[i] = t[i, i + 1]
    sub_next = _shift(sub, 1)  # t[i + 1, i]
    start = op.And(op.Not(op.Equal(sub_next, 0.0)), op.Equal(sub, 0.0))  # a 2x2 block at (i, i + 1)
    a, b, c, dd, cs, sn = _lanv2(d, sup, sub_next, _shift(d, 1))
    one = op.Where(start, cs, 1.0)
    cs_full = op.Where(op.Greater(_shift(op.Cast(start, to=types.DOUBLE.onnx), -1), 0.0), _shift(cs, -1), one)
    sn_up = op.Where(start, sn, 0.0)  # g[i, i + 1] = -sn, g[i + 1, i] = sn
    g = op.Add(op.Add(_diag_matrix(cs_full), _diag_matrix(op.Neg(sn_up), 1)), _diag_matrix(_shift(sn_up, -1), -1))
    t = op.MatMul(op.MatMul(tr(g), t), g)
    z = op.MatMul(z, g)
    prev = op.Greater(_shift(op.Cast(start, to=types.DOUBLE.onnx), -1), 0.0)
    new_d = op.Where(start, a, op.Where(prev, _shift(dd, -1), _band(t, 0)))
    new_sup = op.Where(start, b, _band(t, 1))
    new_sub = op.Where(prev, _shift(c, -1), _band(t, -1))
    eye = np.eye(n, dtype=bool)
    t = op.Where(eye, _at(new_d), t)
    t = op.Where(np.eye(n, k=1, dtype=bool), _at(new_sup), t)
    t = op.Where(np.eye(n, k=-1, dtype=bool), _at(new_sub), t)
    pair = op.And(start, op.Not(op.Equal(c, 0.0)))
    wi = op.Mul(op.Sqrt(op.Abs(b)), op.Sqrt(op.Abs(c)))
    wi = op.Where(pair, wi, op.Where(op.Greater(_shift(op.Cast(pair, to=types.DOUBLE.onnx), -1), 0.0), op.Neg(_shift(wi, -1)), 0.0))
    return t, z, wi, pair


# -- 4. eigenvectors -------------------------------------------------------------------------------
def _cmm(ar: Value, ai: Value | None, br: Value, bi: Value | None) -> tuple[Value, Value]:
    """(A B) for complex A = ar + i ai, B = br + i bi (None: real)."""
    re = op.MatMul(ar, br)
    im = None
    if ai is not None and bi is not None:
        re = op.Sub(re, op.MatMul(ai, bi))
    if bi is not None:
        im = op.MatMul(ar, bi)
    if ai is not None:
        im = op.MatMul(ai, br) if im is None else op.Add(im, op.MatMul(ai, br))
    return re, im if im is not None else op.Mul(re, 0.0)


def _eigenvectors(t: Value, z: Value, wr: Value, wi: Value, pair: Value) -> tuple[Value, Value]:
    """(re, im) of the normalised eigenvectors (columns) as geev returns them."""
    n = t.static_dim(-1)
    idx = np.arange(n)
    b, c = _band(t, 1), _shift(_band(t, -1), 1)  # t[i, i + 1], t[i + 1, i]
    # U = P + iQ: per complex block [[p, iq], [iq, p]], (p, iq) ∝ trevc's x for a + i wi
    first = op.GreaterOrEqual(op.Abs(b), op.Abs(c))
    safe_b = op.Where(op.Equal(b, 0.0), 1.0, b)
    safe_c = op.Where(op.Equal(c, 0.0), 1.0, c)
    x1 = op.Where(first, 1.0, op.Neg(op.Div(wi, safe_c)))
    x2 = op.Where(first, op.Div(wi, safe_b), 1.0)
    r = op.Sqrt(op.Add(op.Mul(x1, x1), op.Mul(x2, x2)))
    p = op.Where(pair, op.Div(x1, r), 1.0)
    q = op.Where(pair, op.Div(x2, r), 0.0)
    second = op.Greater(_shift(op.Cast(pair, to=types.DOUBLE.onnx), -1), 0.0)
    p_full = op.Where(second, _shift(p, -1), p)
    pm = _diag_matrix(p_full)
    qm = op.Add(_diag_matrix(q, 1), _diag_matrix(_shift(q, -1), -1))
    # T_c = Uᴴ T U, upper triangular with the eigenvalues on its diagonal
    tp, tq = op.MatMul(t, pm), op.MatMul(t, qm)
    tcr = op.Add(op.MatMul(tr(pm), tp), op.MatMul(tr(qm), tq))
    tci = op.Sub(op.MatMul(tr(pm), tq), op.MatMul(tr(qm), tp))
    zr, zi = op.MatMul(z, pm), op.MatMul(z, qm)
    # back substitution for every eigenvector at once: X upper triangular, X[j, j] = 1
    smlnum = SAFMIN * (n / ULP)
    smin = op.Max(op.Mul(op.Add(op.Abs(wr), op.Abs(wi)), ULP), op.CastLike(smlnum, wr))  # (..., n)
    xr = op.Expand(np.eye(n), op.Shape(t))
    xi = op.Mul(xr, 0.0)
    for i in reversed(range(n - 1)):
        rr = op.Where(idx > i, op.Gather(tcr, [i], axis=-2), 0.0)  # (..., 1, n)
        ri = op.Where(idx > i, op.Gather(tci, [i], axis=-2), 0.0)
        nr, ni = _cmm(rr, ri, xr, xi)  # (..., 1, n)
        nr, ni = op.Neg(nr), op.Neg(ni)
        dr = op.Sub(op.Gather(wr, [i], axis=-1), wr)  # λ_i - λ_j, (..., n)
        di = op.Sub(op.Gather(wi, [i], axis=-1), wi)
        small = op.Less(op.Add(op.Abs(dr), op.Abs(di)), smin)
        dr, di = op.Unsqueeze(op.Where(small, smin, dr), [-2]), op.Unsqueeze(op.Where(small, 0.0, di), [-2])
        s = op.Add(op.Abs(dr), op.Abs(di))  # num / den scaled by s: smin² would underflow
        dr, di = op.Div(dr, s), op.Div(di, s)
        den = op.Mul(op.Add(op.Mul(dr, dr), op.Mul(di, di)), s)
        qr_ = op.Div(op.Add(op.Mul(nr, dr), op.Mul(ni, di)), den)
        qi_ = op.Div(op.Sub(op.Mul(ni, dr), op.Mul(nr, di)), den)
        row = (idx == i)[:, None] & (idx > i)[None, :]
        xr = op.Where(row, qr_, xr)
        xi = op.Where(row, qi_, xi)
        # keep the columns far from overflow (trevc rescales too; normalised below anyway)
        big = op.Add(op.Abs(qr_), op.Abs(qi_))
        rescale = op.Where(op.Greater(big, 1e100), op.Div(1.0, op.Where(op.Greater(big, 1e100), big, 1.0)), 1.0)
        xr, xi = op.Mul(xr, rescale), op.Mul(xi, rescale)
    vr, vi = _cmm(zr, zi, xr, xi)
    # geev's normalisation: norm 1, then (complex pairs) the largest component real
    norm = op.Sqrt(reduce("Sum", op.Add(op.Mul(vr, vr), op.Mul(vi, vi)), [-2], keepdims=1))
    norm = op.Where(op.Equal(norm, 0.0), 1.0, norm)
    vr, vi = op.Div(vr, norm), op.Div(vi, norm)
    mag = op.Add(op.Mul(vr, vr), op.Mul(vi, vi))
    k = op.ArgMax(mag, axis=-2, keepdims=1, select_last_index=0)  # (..., 1, n)
    fr, fi = op.GatherElements(vr, k, axis=-2), op.GatherElements(vi, k, axis=-2)
    fm = op.Sqrt(op.Add(op.Mul(fr, fr), op.Mul(fi, fi)))
    fm = op.Where(op.Equal(fm, 0.0), 1.0, fm)
    # the rotation of dlartg(f, g) (LAPACK before 3.10, as torch's build gives): the component
    # becomes |f + ig| when |f| <= |g|, else it keeps the sign of f
    sg = op.Where(op.LessOrEqual(op.Abs(fr), op.Abs(fi)), np.array(1.0), _sign(fr))
    cr, ci = op.Div(op.Mul(fr, sg), fm), op.Div(op.Neg(op.Mul(fi, sg)), fm)  # sg conj(f) / |f|
    rot = op.Unsqueeze(pair, [-2])
    cr, ci = op.Where(rot, cr, 1.0), op.Where(rot, ci, 0.0)
    vr, vi = op.Sub(op.Mul(vr, cr), op.Mul(vi, ci)), op.Add(op.Mul(vr, ci), op.Mul(vi, cr))
    vi = op.Where(op.And(rot, op.Equal(np.arange(n)[:, None], k)), 0.0, vi)
    vi = op.Where(op.Unsqueeze(op.Not(op.Or(pair, second)), [-2]), 0.0, vi)  # real eigenvalues
    # the second vector of a pair: the conjugate of the first
    sec = op.Unsqueeze(second, [-2])
    vr = op.Where(sec, op.Gather(vr, np.clip(idx - 1, 0, n - 1), axis=-1), vr)
    vi = op.Where(sec, op.Neg(op.Gather(vi, np.clip(idx - 1, 0, n - 1), axis=-1)), vi)
    return vr, vi


def _eig(A: Value, compute_v: bool) -> tuple[Value, Value | None]:
    """(eigenvalues, eigenvectors or None) as complex real views of A's dtype."""
    n = check_square("linalg.eig", A)
    a = op.Cast(A, to=types.DOUBLE.onnx)
    if n == 0:
        w = op.Unsqueeze(reduce("Sum", a, [-1]), [-1])  # (..., 0, 1)
        w = op.Concat(w, w, axis=-1)
        v = op.Concat(op.Unsqueeze(a, [-1]), op.Unsqueeze(a, [-1]), axis=-1)
        return op.CastLike(w, A).as_complex(), op.CastLike(v, A).as_complex()
    a, scale = _balance(a) if n > 1 else (a, None)
    t, z = _schur(a)
    t, z, wi, pair = _standardize(t, z)
    wr = _band(t, 0)
    w = op.Concat(op.Unsqueeze(wr, [-1]), op.Unsqueeze(wi, [-1]), axis=-1)
    w = op.CastLike(w, A).as_complex()
    if not compute_v:
        return w, None
    if scale is not None:  # eigenvectors of A = D B D⁻¹ from those of B (gebak)
        z = op.Mul(op.Unsqueeze(scale, [-1]), z)
    vr, vi = _eigenvectors(t, z, wr, wi, pair)
    v = op.Concat(op.Unsqueeze(vr, [-1]), op.Unsqueeze(vi, [-1]), axis=-1)
    return w, op.CastLike(v, A).as_complex()


@aten_op("aten::linalg_eig", not_unique="each eigenvector is defined up to a complex phase, and the eigenvalues' order is free")
def aten_linalg_eig(self: TFloat) -> tuple[TTensor, TTensor]:
    """linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)"""
    w, v = _eig(self, compute_v=True)
    return w, v  # type: ignore[return-value]


@aten_op("aten::linalg_eigvals", not_unique="the eigenvalues' order is free")
def aten_linalg_eigvals(self: TFloat) -> TTensor:
    """linalg_eigvals(Tensor self) -> Tensor"""
    return _eig(self, compute_v=False)[0]


@aten_op("aten::_linalg_eigvals", not_unique="the eigenvalues' order is free")
def aten__linalg_eigvals(self: TFloat) -> TTensor:
    """_linalg_eigvals(Tensor self) -> Tensor"""
    return _eig(self, compute_v=False)[0]
