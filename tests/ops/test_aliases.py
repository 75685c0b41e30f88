"""Edges the OpInfo samples leave out, for the aliases and composites: extreme values, float64,
empty and size-1 dims, negative dims, non-contiguous inputs, dynamic shapes."""

import math

import pytest
import torch

from torchlib.ops import aliases as A
from torchlib.ops import shape_aliases as S
from torchlib.ops.linalg import composites as L
from torchlib.testing import check_function, run_dynamic

EXTREMES = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, math.inf, -math.inf, math.nan, 1e308, -1e-308], dtype=torch.float64)
INT64 = torch.tensor([0, 1, -1, 2**62, -(2**63), 2**63 - 1])


@pytest.mark.parametrize("fn, ref", [
    (A.aten_arccos, torch.arccos), (A.aten_arcsin, torch.arcsin), (A.aten_arctan, torch.arctan),
    (A.aten_arctanh, torch.arctanh),
    (A.aten_negative, torch.negative), (A.aten_fix, torch.fix), (A.aten_special_expit, torch.special.expit),
    (A.aten_special_expm1, torch.special.expm1), (A.aten_special_log1p, torch.special.log1p),
    (A.aten_special_erf, torch.special.erf), (A.aten_special_erfc, torch.special.erfc),
    (A.aten_special_gammaln, torch.special.gammaln), (A.aten_special_psi, torch.special.psi),
    (A.aten_special_sinc, torch.special.sinc), (A.aten_special_exp2, torch.special.exp2),
])  # fmt: skip
def test_unary_aliases_on_extremes_in_float64(fn, ref):
    check_function(fn, (EXTREMES,), expected=ref(EXTREMES))


@pytest.mark.parametrize("fn, ref", [(A.aten_arcsinh, torch.arcsinh), (A.aten_arccosh, torch.arccosh)])
def test_inverse_hyperbolic_aliases_in_float64(fn, ref):
    # below 1e154: asinh/acosh of larger values overflow in aten_asinh/aten_acosh themselves
    # (x*x), which the h/overflow branch fixes in elementwise.py
    x = EXTREMES[:8]
    check_function(fn, (x,), expected=ref(x))


@pytest.mark.parametrize("fn, ref", [(A.aten_negative, torch.negative), (A.aten_fix, torch.fix)])
def test_integer_aliases_keep_the_dtype_at_the_extremes(fn, ref):
    check_function(fn, (INT64,), expected=ref(INT64))


def test_comparison_aliases_on_int64_extremes_and_nan():
    a, b = INT64, INT64.flip(0)
    for fn, ref in ((A.aten_greater, torch.greater), (A.aten_greater_equal, torch.greater_equal), (A.aten_less, torch.less),
                    (A.aten_less_equal, torch.less_equal), (A.aten_not_equal, torch.not_equal)):  # fmt: skip
        check_function(fn, (a, b), expected=ref(a, b))
        check_function(fn, (EXTREMES, math.nan), expected=ref(EXTREMES, math.nan))


def test_divide_modes_and_subtract_scalar():
    x = torch.tensor([-7, 7, 0, -(2**62)])
    y = torch.tensor([2, -2, 3, 3])
    for mode in (None, "trunc", "floor"):
        check_function(A.aten_divide_mode, (x, y), {"rounding_mode": mode}, expected=torch.divide(x, y, rounding_mode=mode))
    check_function(A.aten_divide, (x, 2), expected=torch.divide(x, 2))
    check_function(A.aten_subtract_scalar, (x, 3, 2), expected=torch.subtract(x, 3, alpha=2))
    check_function(A.aten_multiply, (torch.tensor([True, False]), torch.tensor([True, True])),
                   expected=torch.multiply(torch.tensor([True, False]), torch.tensor([True, True])))


def test_clip_with_nan_and_one_bound():
    # no -inf with a missing bound: onnxruntime's Clip clamps it to the finite range in
    # aten_clamp itself, which the h/nanprop branch fixes in activations.py
    x = EXTREMES[EXTREMES != -math.inf]
    check_function(A.aten_clip, (x, None, 0.25), expected=torch.clip(x, None, 0.25))
    check_function(A.aten_clip, (EXTREMES, -1.0, 0.25), expected=torch.clip(EXTREMES, -1.0, 0.25))
    low = torch.zeros(10, dtype=torch.float64)
    check_function(A.aten_clip_tensor, (EXTREMES, low), expected=torch.clip(EXTREMES, low))


def test_special_round_softmax_and_xlogy():
    x = torch.tensor([2.5, -2.5, 0.125, 1234.5678], dtype=torch.float64)
    check_function(A.aten_special_round, (x,), expected=torch.special.round(x))
    check_function(A.aten_special_round, (x,), {"decimals": -2}, expected=torch.special.round(x, decimals=-2))
    big = torch.tensor([[1e300, -1e300, 0.0]], dtype=torch.float64)
    check_function(A.aten_special_softmax, (big, -1), expected=torch.special.softmax(big, -1))
    check_function(A.aten_special_log_softmax, (torch.arange(4), 0), {"dtype": torch.float64},
                   expected=torch.special.log_softmax(torch.arange(4), 0, dtype=torch.float64))
    check_function(A.aten_special_xlogy, (torch.tensor([0.0, 0.0, 2.0]), torch.tensor([0.0, math.nan, 0.0])),
                   expected=torch.special.xlogy(torch.tensor([0.0, 0.0, 2.0]), torch.tensor([0.0, math.nan, 0.0])))
    check_function(A.aten_special_logsumexp, (big, [-1]), expected=torch.special.logsumexp(big, [-1]))


# -- shapes ----------------------------------------------------------------------------------------

X = torch.arange(2 * 3 * 4).reshape(2, 3, 4)


@pytest.mark.parametrize("indices", [[1, 2], [3, 1], [-1], [0, 9], [-9, 2], [], [2, 2, 2]])
def test_tensor_split_indices_clamp_and_reverse_like_torch(indices):
    check_function(S.aten_tensor_split_indices, (X, indices, -1), expected=list(torch.tensor_split(X, indices, -1)))


@pytest.mark.parametrize("sections", [1, 3, 5])
def test_tensor_split_sections_more_than_the_size_gives_empty_pieces(sections):
    check_function(S.aten_tensor_split_sections, (X, sections, 1), expected=list(torch.tensor_split(X, sections, 1)))
    indices = torch.tensor(sections)  # eagerly the tensor is known, as in an exported graph's constant
    for got, want in zip(S.aten_tensor_split_tensor(X, indices, 1), torch.tensor_split(X, indices, 1), strict=True):
        torch.testing.assert_close(got, want)


def test_named_splits_refuse_what_torch_refuses():
    with pytest.raises(ValueError, match="do not divide"):
        S.aten_hsplit(X, 2)
    with pytest.raises(ValueError, match="at least 3"):
        S.aten_dsplit(torch.ones(2, 2), 2)
    check_function(S.aten_hsplit, (torch.arange(6), 3), expected=list(torch.hsplit(torch.arange(6), 3)))
    check_function(S.aten_dsplit_array, (X, [1, 3]), expected=list(torch.dsplit(X, [1, 3])))


def test_stacks_of_scalars_vectors_and_empty_tensors():
    parts = [torch.tensor(1.0), torch.zeros(0), torch.ones(1)]
    check_function(S.aten_hstack, (parts,), expected=torch.hstack(parts))
    columns = [torch.tensor(1.0), torch.ones(1), torch.zeros(1, 0)]
    check_function(S.aten_column_stack, (columns,), expected=torch.column_stack(columns))
    mats = [torch.ones(2, 3, dtype=torch.bool), torch.zeros(1, 3, dtype=torch.bool)]
    check_function(S.aten_vstack, (mats,), expected=torch.vstack(mats))
    check_function(S.aten_row_stack, (mats,), expected=torch.row_stack(mats))
    check_function(S.aten_dstack, ([torch.arange(3), torch.arange(3)],), expected=torch.dstack([torch.arange(3), torch.arange(3)]))


def test_non_contiguous_transposes_and_flips():
    x = torch.arange(24.0).reshape(4, 6)[:, ::2].t()  # non-contiguous (3, 4)
    check_function(S.aten_mT, (x,), expected=x.mT)
    check_function(S.aten_numpy_T, (X,), expected=X.permute(2, 1, 0))
    check_function(S.aten_fliplr, (x,), expected=torch.fliplr(x))
    check_function(S.aten_flipud, (x,), expected=torch.flipud(x))
    check_function(S.aten_ravel, (x,), expected=torch.ravel(x))
    with pytest.raises(ValueError, match="at least 2"):
        S.aten_mT(torch.ones(3))
    with pytest.raises(ValueError, match="matrices only"):
        S.aten_matrix_H(torch.ones(2, 2, 2))


def test_broadcast_tensors_with_dynamic_shapes():
    a, b = torch.ones(3, 1), torch.arange(4).reshape(1, 4)
    got = run_dynamic(S.aten_broadcast_tensors, [a, b])
    for g, e in zip(got, torch.broadcast_tensors(a, b)):
        torch.testing.assert_close(g, e)
    check_function(S.aten_broadcast_tensors, ([torch.ones(0, 1), torch.ones(1, 5)],), expected=list(torch.broadcast_tensors(torch.ones(0, 1), torch.ones(1, 5))))


def test_atleast_nd_of_each_rank():
    for t in (torch.tensor(2), torch.arange(3), torch.ones(2, 3), torch.ones(1, 2, 3)):
        check_function(S.aten_atleast_1d, (t,), expected=torch.atleast_1d(t))
        check_function(S.aten_atleast_2d, (t,), expected=torch.atleast_2d(t))
        check_function(S.aten_atleast_3d, (t,), expected=torch.atleast_3d(t))


# -- linear algebra --------------------------------------------------------------------------------


def test_logdet_of_negative_zero_and_positive_determinants():
    a = torch.tensor([[[0.0, 1.0], [1.0, 0.0]], [[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 3.0]]], dtype=torch.float64)
    check_function(L.aten_logdet, (a,), expected=torch.logdet(a))
    check_function(L.aten_slogdet, (a,), expected=tuple(torch.slogdet(a)))
    check_function(L.aten_det, (a,), expected=torch.det(a))


@pytest.mark.parametrize("n", [-2, -1, 0, 1, 2, 7])
def test_matrix_power_every_sign_of_n_in_float64_and_int64(n):
    torch.manual_seed(0)
    a = torch.randn(2, 3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)
    check_function(L.aten_matrix_power, (a, n), expected=torch.matrix_power(a, n))
    if n >= 0:
        i = torch.randint(-3, 4, (3, 3))
        check_function(L.aten_linalg_matrix_power, (i, n), expected=torch.linalg.matrix_power(i, n))


def test_svd_without_uv_gives_zero_matrices_as_torch():
    a = torch.randn(2, 4, 3, dtype=torch.float64)
    u, s, v = L.aten_svd(a, True, False)
    tu, ts, tv = torch.svd(a, compute_uv=False)
    assert u.shape == tu.shape and v.shape == tv.shape and not u.any() and not v.any()
    torch.testing.assert_close(s, ts)


def test_tensordot_with_broadcast_contraction_empty_and_no_contraction():
    a, b = torch.randn(1, 3, 2), torch.randn(2, 4, 5)
    c = torch.randn(2, 3, 5)  # a's size-1 dim 0 contracts with c's size-3 dim 1: torch broadcasts it
    check_function(L.aten_tensordot, (a, c, [0, 2], [1, 0]), expected=torch.tensordot(a, c, ([0, 2], [1, 0])), atol=1e-5, rtol=1e-5)
    check_function(L.aten_tensordot, (a, b, [2], [0]), expected=torch.tensordot(a, b, ([2], [0])), atol=1e-5, rtol=1e-5)
    check_function(L.aten_tensordot, (a, b, [], []), expected=torch.tensordot(a, b, ([], [])))
    z = torch.zeros(0, 3)
    check_function(L.aten_tensordot, (z, torch.ones(3, 2), [-1], [0]), expected=torch.tensordot(z, torch.ones(3, 2), ([-1], [0])))
    check_function(L.aten_inner, (torch.tensor(2.0), torch.ones(2, 2)), expected=torch.inner(torch.tensor(2.0), torch.ones(2, 2)))


def test_multi_dot_with_vectors_at_both_ends():
    v, m, w = torch.randn(3, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    check_function(L.aten_linalg_multi_dot, ([v, m, w],), expected=torch.linalg.multi_dot([v, m, w]))
    check_function(L.aten_linalg_multi_dot, ([m, w],), expected=torch.linalg.multi_dot([m, w]))
    check_function(L.aten_chain_matmul, ([m],), expected=torch.chain_matmul(m))


def test_multi_dot_multiplies_in_torchs_order_and_rounds_float16_after_each_product():
    """torch picks the cheapest parenthesization (for 5 matrices (2,4)(4,3)(3,5)(5,3)(3,2) not
    left to right) and rounds each float16 mm once from float32: equal to torch bit for bit."""
    g = torch.Generator().manual_seed(0)
    shapes = [(2, 4), (4, 3), (3, 5), (5, 3), (3, 2)]
    ms = [(torch.randn(*s, generator=g) * 8).half() for s in shapes]
    check_function(L.aten_linalg_multi_dot, (ms,), expected=torch.linalg.multi_dot(ms), rtol=0, atol=0)
    check_function(L.aten_chain_matmul, (ms,), expected=torch.linalg.multi_dot(ms), rtol=0, atol=0)
    three = [(torch.randn(*s, generator=g) * 8).half() for s in [(2, 3), (3, 4), (4, 5)]]
    check_function(L.aten_linalg_multi_dot, (three,), expected=torch.linalg.multi_dot(three), rtol=0, atol=0)


def test_vecdot_rounds_float16_products_like_torch():
    g = torch.Generator().manual_seed(0)
    x, y = (torch.randn(5, 7, generator=g) * 8).half(), (torch.randn(5, 7, generator=g) * 8).half()
    check_function(L.aten_linalg_vecdot, (x, y), expected=torch.linalg.vecdot(x, y), rtol=0, atol=0)


# -- windows, frequencies, and the rest ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_windows_against_torch_and_float64(dtype):
    """float64 within the default tolerance of torch's. float16/bfloat16: the float32 window
    rounded once, so within half an ulp (of 1: window values are in [0, 1]) plus float32's own
    error of torch's float64 window, and never further from it than torch's half window (which
    rounds every step) by more than float32's own error (blackman(2) is 3e-8, not 0)."""
    from torchlib.ops import windows as W

    cases = [(W.aten_hann_window_periodic, torch.hann_window, ()),
             (W.aten_hamming_window_periodic_alpha_beta, torch.hamming_window, (0.6, 0.3)),
             (W.aten_blackman_window_periodic, torch.blackman_window, ()),
             (W.aten_bartlett_window_periodic, torch.bartlett_window, ())]
    for ours, theirs, extra in cases:
        for n in (0, 1, 2, 7, 64):
            for periodic in (True, False):
                exact = theirs(n, periodic, *extra, dtype=torch.float64)
                if dtype == torch.float64:
                    check_function(ours, (n, periodic, *extra), {"dtype": dtype}, expected=exact)
                    continue
                got = ours(n, periodic, *extra, dtype=dtype)
                assert got.dtype == dtype and got.shape == exact.shape
                error = (got.double() - exact).abs().max().item() if n else 0.0
                torchs = (theirs(n, periodic, *extra, dtype=dtype).double() - exact).abs().max().item() if n else 0.0
                assert error <= torch.finfo(dtype).eps / 2 + 1e-6, (ours.__name__, n, periodic, error)
                assert error <= torchs + torch.finfo(torch.float32).eps, (ours.__name__, n, periodic, error, torchs)


def test_windows_refuse_integer_dtypes_and_negative_lengths():
    from torchlib.ops import windows as W

    with pytest.raises(TypeError, match="floating point"):
        W.aten_hann_window(4, dtype=torch.int64)
    with pytest.raises(ValueError, match="non-negative"):
        W.aten_bartlett_window(-1)


def test_fftfreq_of_odd_even_and_empty_lengths():
    from torchlib.ops import windows as W

    for n in (0, 1, 6, 7):
        check_function(W.aten_fft_fftfreq, (n, 0.1), {"dtype": torch.float64}, expected=torch.fft.fftfreq(n, 0.1, dtype=torch.float64))
        if n:
            check_function(W.aten_fft_rfftfreq, (n,), expected=torch.fft.rfftfreq(n))


def test_sum_to_size_promotes_integers_only_when_it_sums():
    z = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4)
    for size in ([3, 1], [2, 3, 4], [], [1, 1, 1]):
        check_function(S.aten_sum_to_size, (z, size), expected=z.sum_to_size(size))
    b = torch.tensor(True)
    check_function(S.aten_sum_to_size, (b, []), expected=b.sum_to_size([]))


def test_addr_ignores_nan_in_self_when_beta_is_zero_and_ors_bools():
    s = torch.tensor([[math.nan, 1.0], [2.0, math.inf]], dtype=torch.float64)
    v, w = torch.tensor([1.0, -2.0], dtype=torch.float64), torch.tensor([3.0, 4.0], dtype=torch.float64)
    check_function(L.aten_addr, (s, v, w), {"beta": 0, "alpha": 2}, expected=torch.addr(s, v, w, beta=0, alpha=2))
    check_function(L.aten_addr, (s, v, w), {"beta": 3}, expected=torch.addr(s, v, w, beta=3))
    t, f = torch.tensor([True, False]), torch.tensor([[False, False], [True, False]])
    check_function(L.aten_addr, (f, t, t), {"beta": False}, expected=torch.addr(f, t, t, beta=False))
    check_function(L.aten_addr, (f, t, t), expected=torch.addr(f, t, t))


def test_isposinf_isneginf_on_integers_and_half():
    for x in (INT64, torch.tensor([math.inf, -math.inf, math.nan, 1.0], dtype=torch.float16), torch.tensor([True])):
        check_function(A.aten_isposinf, (x,), expected=torch.isposinf(x))
        check_function(A.aten_isneginf, (x,), expected=torch.isneginf(x))
    check_function(A.aten_isreal, (torch.zeros(0, 3),), expected=torch.isreal(torch.zeros(0, 3)))


def test_add_relu_on_int64_extremes():
    x = torch.tensor([2**62, -(2**62), -1, 0])
    check_function(A.aten__add_relu, (x, x), expected=torch.ops.aten._add_relu(x, x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_add_relu_clamps_inf_to_max(dtype):
    """Issue 13, fuzz `nan_inf`: torch's add_clamp kernel clamps to [0, finfo.max], so inf gives
    finfo.max and -inf 0. (NaN: its vector lanes keep it, its scalar tail gives 0, so torch's
    answer depends on the element's position; ours keeps NaN, see tests/ops/test_edge_dtypes.py.)"""
    a = torch.tensor([math.inf, -math.inf, 2.0], dtype=dtype)
    b = torch.tensor([1.0, 2.0, -3.0], dtype=dtype)
    assert torch.ops.aten._add_relu(a, b).tolist() == [torch.finfo(dtype).max, 0.0, 0.0]
    check_function(A.aten__add_relu, (a, b), {"alpha": 2}, expected=torch.ops.aten._add_relu(a, b, alpha=2))
    check_function(A.aten__add_relu_scalar, (a, 0.5), expected=torch.ops.aten._add_relu(a, 0.5))
