"""The edge-input fuzz pass (torchlib/conformance/fuzz.py; longer runs: bench/fuzz_ops.py)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from torchlib.conformance.engine import Harness
from torchlib.conformance.fuzz import (
    Finding,
    FuzzReport,
    fuzz,
    fuzz_cell,
    negative_dims,
    noncontiguous,
    run_input,
    scalars,
    transforms,
)
from torchlib.conformance.spec import Call


@pytest.fixture(scope="module")
def harness():
    return Harness()


def test_transforms_make_edge_inputs():
    c = Call((torch.ones(3, 4), torch.ones(3, 4)), {})
    made = {name: t(c) for name, t in transforms(torch.ops.aten.sum.dim_IntList)}
    assert made["empty"].args[0].shape == (0, 4) and made["empty"].args[1].shape == (0, 4)
    assert made["size1"].args[0].shape == (1, 4)
    assert made["nan_inf"].args[0].view(-1)[:3].tolist()[1:] == [float("inf"), float("-inf")]
    assert made["huge"].args[0].view(-1)[0] == torch.finfo(torch.float32).max
    assert made["int_extremes"] is None  # no integer tensor
    assert not noncontiguous(c).args[0].is_contiguous()
    dims = negative_dims(torch.ops.aten.sum.dim_IntList)(Call((torch.ones(2, 3), [0, 1], True), {}))
    assert dims.args[1] == [-2, -1]


def test_scalars_are_numbers_the_dtype_cannot_hold():
    x = torch.zeros(6, dtype=torch.bfloat16)
    made = scalars(torch.ops.aten.leaky_relu.default)(Call((x, 0.3), {}))
    slope = made.args[1]
    assert torch.tensor(slope, dtype=torch.bfloat16).item() != slope  # not a bfloat16 value
    assert abs(slope - 0.3) < 2e-3
    rounded = torch.tensor(slope, dtype=torch.bfloat16).item()
    assert made.args[0][:2].tolist() == [rounded, -rounded]  # the tensor sits on the rounded scalar
    assert x.abs().sum() == 0  # the caller's tensor is not written
    clamp = scalars(torch.ops.aten.clamp.default)(Call((torch.ones(3, dtype=torch.float16), None, 2), {}))
    assert clamp.args[1] is None and clamp.args[2] != 2 and abs(clamp.args[2] - 2) < 2e-3
    alpha = scalars(torch.ops.aten.add.Tensor)(Call((torch.ones(3), torch.ones(3)), {"alpha": 1}))
    assert torch.tensor(alpha.kwargs["alpha"], dtype=torch.float32).item() != alpha.kwargs["alpha"]
    doubles = (torch.ones(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
    assert scalars(torch.ops.aten.add.Tensor)(Call(doubles, {"alpha": 2})) is None  # float64 holds the scalar
    assert scalars(torch.ops.aten.sum.dim_IntList)(Call((x, [0]), {})) is None  # no Scalar argument


@pytest.mark.parametrize("op", [torch.ops.aten.sym_stride.int, torch.ops.aten.sym_storage_offset.default,
                                torch.ops.aten.sym_is_contiguous.default, torch.ops.aten.as_strided.default])
def test_ops_that_report_the_layout_get_no_noncontiguous_input(op):
    # a graph value is a dense tensor of its own: a hand-made view is outside these functions' contract
    assert dict(transforms(op))["noncontiguous"] is None
    assert dict(transforms(lambda x: x, [str(op._schema.name) + ".int"]))["noncontiguous"] is None  # an entry's lambda reference
    assert dict(transforms(torch.ops.aten.sum.dim_IntList))["noncontiguous"] is not None


def test_embedding_bag_weight_stays_dense_under_noncontiguous(harness):
    # torch's sum fast path (empty offset2bag) needs weight.stride(1) == 1; a graph's weight is dense
    w, i, o = torch.randn(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 2, 5])
    assert torch.ops.aten.embedding_bag.default(noncontiguous(Call((w,), {})).args[0], i, o)[1].shape == (8,)
    make = dict(transforms(torch.ops.aten.embedding_bag.padding_idx))["noncontiguous"]
    c = make(Call((w, i, o, False, 0, False, None, False, None), {}))
    assert c.args[0].is_contiguous() and not c.args[1].is_contiguous() and not c.args[2].is_contiguous()
    s = torch.rand(8)  # per_sample_weights.stride(0) == 1 is part of the fast path's condition too
    assert torch.ops.aten.embedding_bag.default(w, i, o, False, 0, False, noncontiguous(Call((s,), {})).args[0])[1].shape == (8,)
    assert make(Call((w, i, o, False, 0, False, s, False, None), {})).args[6].is_contiguous()
    assert run_input(harness, "aten_embedding_bag_padding_idx", "noncontiguous", c, torch.ops.aten.embedding_bag.padding_idx, torch.float32) == ("ok", "")


def test_layer_norm_backward_statistics_stay_dense_under_noncontiguous():
    # torch's kernel reads mean and rstd through their data pointer, ignoring strides
    c = Call((torch.randn(3, 6), torch.randn(3, 6), [6], torch.randn(3, 1), torch.randn(3, 1), torch.randn(6), torch.randn(6),
              [True, True, True]), {})  # fmt: skip
    made = dict(transforms(torch.ops.aten.native_layer_norm_backward.default))["noncontiguous"](c)
    assert [t.is_contiguous() for t in made.args if isinstance(t, torch.Tensor)] == [False, False, True, True, False, False]


def test_a_wrong_answer_is_a_mismatch_and_an_exception_an_error(harness):
    entry_key = "aten_neg"
    good = run_input(harness, entry_key, "original", Call((torch.tensor([1.0, float("nan")]),), {}), torch.neg, torch.float32)
    assert good == ("ok", "")
    wrong = run_input(harness, entry_key, "original", Call((torch.tensor([1.0]),), {}), torch.abs, torch.float32)
    assert wrong[0] == "mismatch"
    rejected = run_input(harness, entry_key, "original", Call((torch.tensor([1.0]),), {}), lambda x: torch.neg(x, 1), torch.float32)
    assert rejected[0] == "rejected"


def test_order_dependent_overflow_is_its_own_outcome_and_nothing_more(harness):
    big = torch.finfo(torch.float32).max
    a = torch.tensor([[big, big, -big]])
    b = torch.tensor([[1.0], [1.0], [1.0]])  # the exact result (max) is representable...

    def torch_inf(x, y):  # ...an order that adds big + big first overflows (inf in float32, max in float64)
        return (x[:, :1] * y[:1] + x[:, 1:2] * y[1:2]) + x[:, 2:] * y[2:]

    def ours_nan(x, y):
        return torch.full((1, 1), float("nan"))

    def check(fn, reference, *args):
        from torchlib.conformance import fuzz as F

        return F._overflow_excused(Call(args, {}), reference, fn(*args), reference(*args), None)

    # torch overflowed inside its algorithm: ours may be non-finite too, or the float64 result
    assert check(ours_nan, torch_inf, a, b)
    assert check(lambda x, y: torch.full((1, 1), big), torch_inf, a, b)
    assert not check(lambda x, y: torch.full((1, 1), 5.0), torch_inf, a, b)  # neither torch's nor the exact value
    # both overflow where the exact value is beyond float32: any non-finite value of ours
    c = torch.tensor([[big, big]])
    d = torch.tensor([[2.0], [2.0]])
    assert check(lambda x, y: torch.full((1, 1), float("nan")), torch.mm, c, d)
    assert not check(lambda x, y: torch.full((1, 1), 1.0), torch.mm, c, d)  # a finite answer is wrong
    # a representable result that torch gives is never excused (std of [1e38, -1e38, ...])
    e = torch.tensor([1e38, -1e38, 1e38, -1e38])
    assert not check(lambda x: torch.tensor(float("inf")), torch.std, e)
    # inputs holding inf: NaN propagation, never an overflow
    assert not check(lambda x: torch.tensor(float("nan")), torch.sum, torch.tensor([float("inf"), 1.0]))


def test_complex_results_are_judged_part_by_part(harness):
    """A complex64 result overflows in its real or imaginary part as a float32 result does
    (complex128 recomputation); a part whose exact value is representable must still match."""
    from torchlib.conformance import fuzz as F

    big = torch.finfo(torch.float32).max
    x = torch.tensor([big, big, 1.0])

    def reference(t):  # real part: big + big overflows (exact 6.8e38 is beyond float32); imaginary part: 1
        return torch.complex(t[:2].sum(), t[2:].sum()).reshape(1)

    def ours(imag):
        return lambda t: torch.complex(torch.tensor([float("nan")]), torch.tensor([imag]))

    assert F._overflow_excused(Call((x,), {}), reference, ours(1.0)(x), reference(x), None)
    assert not F._overflow_excused(Call((x,), {}), reference, ours(5.0)(x), reference(x), None)  # the finite part differs
    y = torch.tensor([big, -big, 1.0])  # exact real part 0: representable, never excused
    assert not F._overflow_excused(Call((y,), {}), reference, ours(1.0)(y), reference(y), None)


def test_overflow_and_symint_results_beyond_int64_in_run_input(harness):
    big = torch.finfo(torch.float32).max
    x, y = torch.tensor([[big, big]]), torch.tensor([[2.0], [2.0]])
    assert run_input(harness, "aten_mm", "huge", Call((x, y), {}), lambda a, b: torch.full((1, 1), float("nan")), torch.float32)[0] == "overflow"
    outcome, message = run_input(harness, "math_ceil", "huge", Call((torch.tensor(3.4e38),), {}), lambda t: int(t.item()), torch.float32)
    assert outcome == "rejected" and "int64" in message
    report = FuzzReport([Finding("f", "float32", "huge", "overflow")], 1, 1, 1.0)
    assert "1 edge inputs" in report.summary() and "1 overflow" in report.summary()


def test_elements_torch_leaves_uninitialized_are_not_compared(harness):
    from torchlib.ops.special.polynomials import aten_special_chebyshev_polynomial_u as ours

    x, n = torch.tensor([float("nan"), 0.3, float("nan")]), torch.tensor(3.0)
    garbage = lambda x, n: torch.tensor([1.9e28, float(ours(x, n)[1]), 0.0])  # noqa: E731  torch's uninitialized r
    outcome, message = run_input(harness, "aten_special_chebyshev_polynomial_u", "nan_inf", Call((x, n), {}), garbage, torch.float32)
    assert outcome == "rejected" and "uninitialized" in message
    wrong = lambda x, n: torch.tensor([1.9e28, 5.0, 0.0])  # noqa: E731  a defined element differs: still a mismatch
    assert run_input(harness, "aten_special_chebyshev_polynomial_u", "nan_inf", Call((x, n), {}), wrong, torch.float32)[0] == "mismatch"
    one = torch.tensor(1.0)  # degree 1 is defined (x + x): compared as usual
    assert run_input(harness, "aten_special_chebyshev_polynomial_u", "nan_inf", Call((x, one), {}), torch.special.chebyshev_polynomial_u, torch.float32)[0] == "ok"


def test_slices_torch_sorts_with_nan_are_not_compared(harness):
    nan = float("nan")
    x = torch.tensor([[nan, 1.0, nan, 1.0], [1.0, 2.0, 2.0, 3.0]])  # torch: NaN for the first row, ours 1
    outcome, message = run_input(harness, "aten_mode", "nan_inf", Call((x, 1), {}), torch.ops.aten.mode.default, torch.float32)
    assert outcome == "rejected" and "strict weak order" in message
    wrong = lambda x, d: (torch.tensor([nan, 3.0]), torch.tensor([0, 3]))  # noqa: E731  the row without NaN is compared
    assert run_input(harness, "aten_mode", "nan_inf", Call((x, 1), {}), wrong, torch.float32)[0] == "mismatch"
    y = torch.tensor([2.0, nan, 2.0])
    assert run_input(harness, "aten_unique_dim", "nan_inf", Call((y, 0), {}), torch.ops.aten.unique_dim.default, torch.float32)[0] == "rejected"


def test_add_relu_nan_sums_are_not_compared(harness):
    """torch's _add_relu gives NaN or 0 at a NaN sum by the element's position (vector block or
    scalar tail); those elements are not compared, every other one is."""
    nan, inf = float("nan"), float("inf")
    x, y = torch.tensor([nan, 1.0, inf, -inf]), torch.ones(4)
    torch_tail = lambda a, b, alpha=1: torch.tensor([0.0, 2.0, 3.4028234663852886e38, 0.0])  # noqa: E731
    outcome, message = run_input(harness, "aten__add_relu", "nan_inf", Call((x, y), {}), torch_tail, torch.float32)
    assert outcome == "rejected" and "scalar tail" in message
    wrong = lambda a, b, alpha=1: torch.tensor([0.0, 2.0, float("inf"), 0.0])  # noqa: E731  inf is clamped to max by torch
    assert run_input(harness, "aten__add_relu", "nan_inf", Call((x, y), {}), wrong, torch.float32)[0] == "mismatch"
    assert run_input(harness, "aten__add_relu", "original", Call((y, y), {}), torch.ops.aten._add_relu.Tensor, torch.float32)[0] == "ok"


def test_eig_of_a_nan_matrix_is_torch_undefined(harness):
    """MKL rejects a NaN matrix (info < 0) and torch returns its buffers: not compared. A matrix
    holding inf (torch's kernel runs: NaN eigenvalues) is compared as usual."""
    a = torch.eye(3, dtype=torch.float64)
    a[0, 1] = float("nan")
    garbage = lambda x: torch.tensor([0.15, 0.21, -0.77], dtype=torch.complex128)  # noqa: E731
    outcome, message = run_input(harness, "aten_linalg_eigvals", "nan_inf", Call((a,), {}), garbage, torch.float64)
    assert outcome == "rejected" and "geev" in message
    a[0, 1] = float("inf")
    assert run_input(harness, "aten_linalg_eigvals", "nan_inf", Call((a,), {}), garbage, torch.float64)[0] == "mismatch"


def test_elements_resize_grows_into_are_not_compared(harness):
    """torch's resize leaves the elements past the input's count uninitialised: not compared;
    the first numel(input) elements are (ours: the input's, then zeros)."""
    x = torch.tensor([[1.0, 2.0, 3.0]])
    garbage = lambda x, size: torch.tensor([[1.0, 2.0, 3.0], [6.9e-310, 1.9e28, float("nan")]])  # noqa: E731
    outcome, message = run_input(harness, "aten_resize", "size1", Call((x, [2, 3]), {}), garbage, torch.float32)
    assert outcome == "rejected" and "uninitialised" in message
    wrong = lambda x, size: torch.tensor([[1.0, 5.0, 3.0], [0.0, 0.0, 0.0]])  # noqa: E731  a kept element differs
    assert run_input(harness, "aten_resize", "size1", Call((x, [2, 3]), {}), wrong, torch.float32)[0] == "mismatch"
    template = torch.zeros(3, 2)
    garbage_as = lambda x, t: garbage(x, None).reshape(3, 2)  # noqa: E731
    assert run_input(harness, "aten_resize_as", "size1", Call((x, template), {}), garbage_as, torch.float32)[0] == "rejected"
    shrink = torch.arange(6.0).reshape(2, 3)  # a shrink keeps the first elements: all compared
    reference = lambda x, size: x.clone().resize_(size)  # noqa: E731
    assert run_input(harness, "aten_resize", "original", Call((shrink, [2, 2]), {}), reference, torch.float32)[0] == "ok"


def test_pow_elements_whose_value_depends_on_the_vector_lane_are_not_compared(harness):
    """float32 pow with an exponent float32 cannot hold: torch's vector loop takes it as float
    (2.0000000882 is 2), its scalar tail as double (NaN for a negative base). Those elements
    are not compared; the positive bases are."""
    x, e = torch.tensor([-1.0, 2.0, -3.0, 0.5]), 2.000000088214874
    tail = lambda x, e: torch.pow(x.double(), e).float()  # noqa: E731  what a short tensor gets
    outcome, message = run_input(harness, "aten_pow_tensor_scalar", "scalars", Call((x, e), {}), tail, torch.float32)
    assert outcome == "rejected" and "vector loop" in message
    wrong = lambda x, e: torch.tensor([float("nan"), 5.0, float("nan"), 0.25])  # noqa: E731  a positive base differs
    assert run_input(harness, "aten_pow_tensor_scalar", "scalars", Call((x, e), {}), wrong, torch.float32)[0] == "mismatch"
    assert run_input(harness, "aten_pow_tensor_scalar", "original", Call((x, 2.5), {}), torch.ops.aten.pow.Tensor_Scalar,
                     torch.float32)[0] == "ok"


def test_pinv_of_singular_values_below_rounding_noise_is_not_compared(harness):
    """A cutoff below the dtype's rounding noise keeps singular values LAPACK cannot resolve:
    their reciprocals (the result) are noise. The default cutoff is the noise floor: compared."""
    a = torch.tensor([[1e-15, -1e-15, 1e-15], [0.3, 2.0, -1.0], [1.5, 0.2, 0.7]])
    noise = lambda *args: torch.full((3, 3), 6.8e14)  # noqa: E731
    outcome, message = run_input(harness, "aten_linalg_pinv", "scalars", Call((a, 1e-15, False), {}), noise, torch.float32)
    assert outcome == "rejected" and "rounding noise" in message
    assert run_input(harness, "aten_linalg_pinv_atol_rtol_float", "original", Call((a,), {}), noise, torch.float32)[0] == "mismatch"
    well = torch.tensor([[2.0, 0.1, 0.0], [0.3, 2.0, -1.0], [1.5, 0.2, 0.7]])
    assert run_input(harness, "aten_linalg_pinv", "original", Call((well, 1e-15, False), {}), torch.ops.aten.linalg_pinv.default,
                     torch.float32)[0] == "ok"


def test_a_box_of_an_image_the_input_lacks_is_not_a_valid_input(harness):
    """torchvision's roi kernels read the image of each box's batch index unchecked."""
    from torchlib.conformance import torchvision_reference as reference

    x = torch.randn(1, 12, 10, 9)
    rois = torch.tensor([[1.0, 0.0, 0.0, 5.0, 5.0]])  # image 1 of a batch of 1
    garbage = lambda *a: (torch.full((1, 2, 3, 2), 7.0), torch.zeros(1, 2, 3, 2, dtype=torch.int32))  # noqa: E731
    outcome, message = run_input(harness, "torchvision_ps_roi_pool", "size1", Call((x, rois, 1.0, 3, 2), {}), garbage, torch.float32)
    assert outcome == "rejected" and "batch index" in message
    rois[0, 0] = 0
    assert run_input(harness, "torchvision_ps_roi_pool", "size1", Call((x, rois, 1.0, 3, 2), {}), reference.ps_roi_pool,
                     torch.float32)[0] == "ok"


def test_torch_less_accurate_is_the_tables_rule_and_the_float64_arbiter(harness):
    """An entry with a TorchLessAccurate rule for the dtype: a difference is "less_accurate_torch"
    only when ours is at least as close as torch's to torch's float64 result."""
    a = torch.tensor([[2.0, 1.0], [0.5, 3.0]])

    def noisy_float32(x):  # torch's float32 result off by 1e-3, its float64 one exact
        w = torch.linalg.eigvals(x)
        return w + 1e-3 if x.dtype == torch.float32 else w

    outcome, message = run_input(harness, "aten_linalg_eigvals", "huge", Call((a,), {}), noisy_float32, torch.float32)
    assert outcome == "less_accurate_torch" and "float64" in message

    def noisy_float64(x):  # torch's float64 result is off instead: ours is not closer to it
        w = torch.linalg.eigvals(x)
        return w + 1e-3 if x.dtype == torch.float64 else w + 1e-4

    assert run_input(harness, "aten_linalg_eigvals", "huge", Call((a,), {}), noisy_float64, torch.float32)[0] == "mismatch"
    # no rule for float64 on that entry: a difference stays a mismatch
    assert run_input(harness, "aten_linalg_eigvals", "huge", Call((a.double(),), {}), lambda x: torch.linalg.eigvals(x) + 1e-3, torch.float64)[0] == "mismatch"


def test_torchs_strided_kernel_can_vouch_for_our_values(harness):
    """torch's contiguous (vectorised) and strided (scalar) kernels may disagree (gelu(inf) with
    AVX512: NaN against inf); ours passes when it is torch's strided answer on every element."""
    x = torch.tensor([float("inf"), 1.0, -2.0])

    def two_paths(t):  # NaN at inf on the contiguous path only, as torch's AVX512 gelu
        out = torch.nn.functional.gelu(t)
        return torch.where(torch.isinf(t) & (t > 0), torch.nan, out) if t.is_contiguous() else out

    outcome, message = run_input(harness, "aten_gelu", "nan_inf", Call((x,), {}), two_paths, torch.float32)
    assert outcome == "ok" and "strided" in message
    always_nan = lambda t: torch.where(torch.isinf(t), torch.nan, torch.nn.functional.gelu(t))  # noqa: E731  one answer: ours differs
    assert run_input(harness, "aten_gelu", "nan_inf", Call((x,), {}), always_nan, torch.float32)[0] == "mismatch"


def test_pool_backward_with_a_grad_of_other_planes_is_not_a_valid_input(harness):
    """torch reads grad_output past its end when its batch/channels differ from self's: we
    raise there, and that is no error of ours; matching shapes are compared as usual."""
    grad, self = torch.randn(1, 3, 1, 2, 2), torch.randn(2, 3, 3, 4, 4)
    args = ([2, 2, 2], [], [0, 0, 0], False, True, None)
    outcome, message = run_input(harness, "aten_avg_pool3d_backward", "size1", Call((grad, self, *args), {}),
                                 torch.ops.aten.avg_pool3d_backward.default, torch.float32)  # fmt: skip
    assert outcome == "rejected" and "past its end" in message and "we raise" in message
    same = torch.randn(2, 3, 1, 2, 2)
    assert run_input(harness, "aten_avg_pool3d_backward", "original", Call((same, self, *args), {}),
                     torch.ops.aten.avg_pool3d_backward.default, torch.float32)[0] == "ok"  # fmt: skip


def test_float64_prod_is_checked_against_the_exact_product(harness):
    tiny, big = torch.finfo(torch.float64).tiny, torch.finfo(torch.float64).max
    x = torch.tensor([tiny, 3e-16, big, 1e10], dtype=torch.float64)  # tiny * 3e-16 is subnormal: digits lost
    torch_way = lambda x: torch.tensor(((tiny * 3e-16) * big) * 1e10, dtype=torch.float64)  # noqa: E731
    outcome, message = run_input(harness, "aten_prod", "huge", Call((x,), {}), torch_way, torch.float64)
    assert outcome == "overflow" and "exact product" in message
    from torchlib.conformance import fuzz as F

    exact = F._exact_product("aten_prod", Call((x,), {}), torch_way(x))
    assert exact.item() == 3e-16 * big * tiny * 1e10
    assert not F._closer(torch.tensor(1.0, dtype=torch.float64), exact, torch_way(x), None)  # ours not exact: no excuse

def test_eigh_is_compared_through_the_entrys_invariants(harness):
    x = torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    flipped = lambda a, uplo: (lambda w, v: (w, -v))(*torch.ops.aten.linalg_eigh(a, uplo))  # other signs: same invariants
    assert run_input(harness, "aten_linalg_eigh", "original", Call((x, "U"), {}), flipped, torch.float32) == ("ok", "")


def test_normwise_is_lapacks_error_bound_and_nothing_more(harness):
    x = torch.randn(5, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x.view(-1)[:5] = torch.tensor([1.7976931348623157e308, -1.7976931348623157e308, 2.2e-308, 5.9e307, -2.2e-308], dtype=torch.float64)
    eigvalsh = torch.ops.aten.linalg_eigvalsh
    noise = lambda a, uplo: eigvalsh(a, uplo) + torch.tensor([0.0, 1e290, -1e290, 0.0, 0.0], dtype=torch.float64)  # below 25·eps·max|A|
    assert run_input(harness, "aten_linalg_eigvalsh", "huge", Call((x, "U"), {}), noise, torch.float64)[0] == "normwise"
    wrong = lambda a, uplo: eigvalsh(a, uplo) * torch.tensor([1.0001, 1, 1, 1, 1], dtype=torch.float64)  # the largest finite one off
    assert run_input(harness, "aten_linalg_eigvalsh", "huge", Call((x, "U"), {}), wrong, torch.float64)[0] == "mismatch"
    y = torch.randn(5, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    y[0, 0] = float("nan")  # NaN given: never excused
    nan_noise = lambda a, uplo: torch.zeros(5, dtype=torch.float64)
    assert run_input(harness, "aten_linalg_eigvalsh", "nan_inf", Call((y, "U"), {}), nan_noise, torch.float64)[0] == "mismatch"
    assert run_input(harness, "aten_neg", "huge", Call((x,), {}), lambda a: -a + 1e290, torch.float64)[0] == "mismatch"  # not marked normwise


def test_normwise_judges_complex_fourier_outputs_part_by_part(harness):
    """stft is marked normwise: a part within n·eps·max|x| of torch's passes as "normwise", a
    part beyond it is a mismatch."""
    x = torch.randn(2, 40, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    x[0, :3] = torch.tensor([1e307, -1e307, 6e306], dtype=torch.float64)
    stft = torch.ops.aten.stft.default
    kwargs = dict(hop_length=3, return_complex=True)

    def noisy(t, n, **kw):  # 5e291 on one imaginary part: 40·eps·1e307 = 8.9e292 allows it
        out = torch.view_as_real(stft(t, n, **kw)).clone()
        out[0, 0, 1, 1] += 5e291  # frame 1 holds no huge sample: its bins are O(1)
        return torch.view_as_complex(out)

    assert run_input(harness, "aten_stft", "huge", Call((x, 12), kwargs), lambda t, n, **kw: stft(t, n, **kw), torch.float64)[0] == "ok"
    outcome = run_input(harness, "aten_stft", "huge", Call((x, 12), kwargs), noisy, torch.float64)[0]
    assert outcome == "normwise"

    def wrong(t, n, **kw):
        out = torch.view_as_real(stft(t, n, **kw)).clone()
        out[0, 0, 1, 1] += 1e300
        return torch.view_as_complex(out)

    assert run_input(harness, "aten_stft", "huge", Call((x, 12), kwargs), wrong, torch.float64)[0] == "mismatch"


def test_an_abort_is_counted_not_fatal(harness, monkeypatch):
    import os

    from torchlib.conformance import fuzz as fuzz_module

    calls = []

    def aborting(h, key, name, the_call, reference, dtype, tol=None, torch_done=None):
        calls.append(name)
        if name == "huge":
            os.abort()  # before torch has its result: torch's crash, an input it does not check
        torch_done()
        if name == "nan_inf":
            os.abort()  # after torch's result: ours
        return "ok", ""

    def ours(x):  # our function alone dies on the nan_inf input too: the crash is ours
        if bool(torch.isnan(x).any()):
            os.abort()
        return x.abs()

    monkeypatch.setattr(fuzz_module, "run_input", aborting)
    monkeypatch.setitem(harness.functions, "aten_abs", dataclasses.replace(harness.functions["aten_abs"], function=ours))
    findings = fuzz_cell(harness, "aten_abs", torch.float32, limit=1)
    outcomes = {f.transform: f.outcome for f in findings}
    assert outcomes["nan_inf"] == "crash" and outcomes["original"] == "ok"
    assert outcomes["huge"] == "rejected"  # the cell went on after the crash, and torch's crash is not ours
    assert "noncontiguous" in outcomes


def test_a_death_after_torch_returned_is_torchs_when_ours_alone_survives(harness, monkeypatch):
    """torch's max_pool backward with out-of-range indices corrupts the heap; the process dies
    later, inside our call. Our function alone, in a fresh process, returns: torch's crash."""
    import os

    from torchlib.conformance import fuzz as fuzz_module

    def dies_after_torch(h, key, name, the_call, reference, dtype, tol=None, torch_done=None):
        torch_done()
        if name == "nan_inf":
            os.abort()
        return "ok", ""

    monkeypatch.setattr(fuzz_module, "run_input", dies_after_torch)
    findings = fuzz_cell(harness, "aten_abs", torch.float32, limit=1)
    nan_inf = [f for f in findings if f.transform == "nan_inf"]
    assert nan_inf and nan_inf[0].outcome == "rejected" and "fresh process" in nan_inf[0].message


def test_report_counts():
    report = FuzzReport([Finding("f", "float32", "original", "ok"), Finding("f", "float32", "empty", "crash", "(x)", "SIGABRT")], 1, 1, 1.0)
    assert "1 functions x 2 edge inputs" in report.summary() and "1 crashes" in report.summary()
    assert report.lines() == ["crash    f float32 [empty] (x): SIGABRT"]


@pytest.mark.slow
def test_fuzz_every_function(harness):
    """Every function's first dtype on edge inputs: no crash of the process, no silent
    mismatch (`python bench/fuzz_ops.py` for every dtype and the list)."""
    first = {}
    for key, dtype in harness.jobs():
        first.setdefault(key, dtype)
    report = fuzz(harness, list(first.items()), limit=2)
    bad = report.lines(("crash", "timeout", "mismatch"))
    assert not bad, report.summary() + "\n" + "\n".join(bad)


def test_conjugated_complex_results_are_judged_not_raised(harness):
    """torch.fft.ifft returns a lazily conjugated tensor: the overflow rule views it as real after
    resolving the conjugation (an exception here killed the fuzz child: 'exit status 1')."""
    x = torch.full((2, 7), 3.0e38)
    x[0, 0] = -3.0e38
    outcome, _ = run_input(harness, "aten_fft_ifft", "huge", Call((x, None, -1, "ortho"), {}), torch.fft.ifft, torch.float32)
    assert outcome in ("ok", "overflow", "normwise", "less_accurate_torch", "mismatch")  # judged, whichever way
