"""torchlib/ops/losses.py against torch, eagerly and traced (bfloat16 traced only)."""

from __future__ import annotations

import pytest
import torch
from test_elementwise import FLOAT_DTYPES, check, make

from torchlib.ops import losses as L

A = torch.ops.aten
REDUCTIONS = [0, 1, 2]
# float16 / bfloat16 sums of 24 terms: torch accumulates in float32 but rounds differently
TOL = {torch.float16: {"rtol": 4e-3, "atol": 4e-3}, torch.bfloat16: {"rtol": 3e-2, "atol": 3e-2}}


def _tol(dtype):
    return TOL.get(dtype, {})


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"])
def test_pointwise_losses(name, reduction, dtype):
    x, y = make((4, 6), dtype, -3, 3, seed=1), make((4, 6), dtype, -3, 3, seed=2)
    if name == "soft_margin_loss":
        y = torch.sign(y) + (y == 0).to(dtype)
    check(getattr(L, f"aten_{name}"), getattr(A, name).default, x, y, reduction, **_tol(dtype))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_broadcast_and_empty(name):
    x, y = make((3, 1, 5), torch.float32, seed=1), make((4, 1), torch.float32, seed=2)
    for reduction in REDUCTIONS:
        check(getattr(L, f"aten_{name}"), getattr(A, name).default, x, y, reduction)
    e = make((0, 3), torch.float32)
    check(getattr(L, f"aten_{name}"), getattr(A, name).default, e, e, 0)
    check(getattr(L, f"aten_{name}"), getattr(A, name).default, e, e, 2)


@pytest.mark.parametrize("beta", [0.0, 0.5, 2.0])
def test_smooth_l1_huber_params(beta):
    x, y = make((5, 5), torch.float64, -3, 3, seed=1), make((5, 5), torch.float64, -3, 3, seed=2)
    check(L.aten_smooth_l1_loss, A.smooth_l1_loss.default, x, y, 1, beta)
    if beta > 0:
        check(L.aten_huber_loss, A.huber_loss.default, x, y, 2, beta)


def test_int_inputs_raise():
    x = make((3,), torch.int64)
    with pytest.raises(TypeError):
        L.aten_mse_loss(x, x)
    with pytest.raises(ValueError, match="reduction"):
        L.aten_mse_loss(x.float(), x.float(), 3)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_forward(dtype, reduction, weighted):
    x = make((5, 4), dtype, -3, 0)
    target = torch.tensor([0, 3, -100, 2, 1])
    weight = make((4,), dtype, 0.1, 2, seed=3) if weighted else None
    check(L.aten_nll_loss_forward, A.nll_loss_forward.default, x, target, weight, reduction, -100, **_tol(dtype))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_forward_unbatched_and_ignored(reduction):
    x = make((4,), torch.float32, -3, 0)
    check(L.aten_nll_loss_forward, A.nll_loss_forward.default, x, torch.tensor(2), make((4,), torch.float32, 0.1, 2), reduction, -100)
    check(L.aten_nll_loss_forward, A.nll_loss_forward.default, x, torch.tensor(2), None, reduction, 2)  # all ignored
    x2 = make((3, 4), torch.float32, -3, 0)
    check(L.aten_nll_loss_forward, A.nll_loss_forward.default, x2, torch.tensor([1, 1, 1]), None, reduction, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss2d_forward(dtype, reduction):
    x = make((2, 3, 4, 5), dtype, -3, 0)
    target = make((2, 4, 5), torch.int64, 0, 2, seed=4)
    target[0, 0, 0] = 7
    weight = make((3,), dtype, 0.1, 2, seed=3)
    check(L.aten_nll_loss2d_forward, A.nll_loss2d_forward.default, x, target, weight, reduction, 7, **_tol(dtype))
    check(L.aten_nll_loss2d_forward, A.nll_loss2d_forward.default, x, target, None, reduction, 7, **_tol(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(dtype, reduction):
    x = make((4, 5), dtype, 0.01, 0.99)
    x[0, 0], x[0, 1] = 0.0, 1.0  # logs clamped at -100
    t = make((4, 5), dtype, 0, 1, seed=1)
    w = make((5,), dtype, 0.1, 2, seed=2)
    check(L.aten_binary_cross_entropy, A.binary_cross_entropy.default, x, t, None, reduction, **_tol(dtype))
    check(L.aten_binary_cross_entropy, A.binary_cross_entropy.default, x, t, w, reduction, **_tol(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(dtype, reduction):
    x = make((4, 5), dtype, -30, 30)
    t = make((4, 5), dtype, 0, 1, seed=1)
    w = make((5,), dtype, 0.1, 2, seed=2)
    check(L.aten_binary_cross_entropy_with_logits, A.binary_cross_entropy_with_logits.default, x, t, None, None, reduction, **_tol(dtype))
    check(L.aten_binary_cross_entropy_with_logits, A.binary_cross_entropy_with_logits.default, x, t, w, w, reduction, **_tol(dtype))
    check(L.aten_binary_cross_entropy_with_logits, A.binary_cross_entropy_with_logits.default, x, t, None, w, reduction, **_tol(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dtype, reduction, log_target):
    x = make((3, 5), dtype, -4, 0)
    t = make((3, 5), dtype, -3, 0, seed=1) if log_target else make((3, 5), dtype, 0, 1, seed=1)
    if not log_target:
        t[0, 0] = 0.0  # xlogy(0, 0) = 0
    check(L.aten_kl_div, A.kl_div.default, x, t, reduction, log_target=log_target, **_tol(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_and_hinge(dtype, reduction):
    a, b = make((4, 5), dtype, -2, 2, seed=1), make((4, 5), dtype, -2, 2, seed=2)
    t = torch.where(make((4, 5), torch.bool, seed=3), 1.0, -1.0).to(dtype)
    check(L.aten_margin_ranking_loss, A.margin_ranking_loss.default, a, b, t, 0.3, reduction, **_tol(dtype))
    check(L.aten_hinge_embedding_loss, A.hinge_embedding_loss.default, a, t, 0.7, reduction, **_tol(dtype))
    check(L.aten_margin_ranking_loss, A.margin_ranking_loss.default, a, b[:1], t, 0.0, reduction, **_tol(dtype))


# -- linear_cross_entropy's chunked kernels (torch.ops.torch_nn.*) -------------------------------
LCE = torch.ops.torch_nn
needs_lce = pytest.mark.skipif(not L.HAS_LINEAR_CROSS_ENTROPY, reason="torch < 2.13 has no torch.ops.torch_nn linear_cross_entropy ops")
LCE_DTYPES = [torch.float32, torch.float64, torch.bfloat16]


def _lce_args(dtype, bias, weighted, ignore_index, n=7, f=5, c=6):
    x = make((n, f), dtype, -2, 2, seed=1)
    lw = make((c, f), dtype, -1, 1, seed=2)
    target = make((n,), torch.int64, 0, c - 1, seed=3)
    target[2] = ignore_index
    lb = make((c,), dtype, -1, 1, seed=4) if bias else None
    w = make((c,), dtype, 0.1, 2, seed=5) if weighted else None
    acc = torch.float32 if dtype == torch.bfloat16 else dtype
    return x, lw, target, lb, w, acc


@pytest.mark.parametrize("dtype", LCE_DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 3])
@needs_lce
def test_linear_cross_entropy_batch_chunked(dtype, reduction, bias, weighted, ignore_index):
    x, lw, target, lb, w, acc = _lce_args(dtype, bias, weighted, ignore_index)
    for grads in [(True, True, bias), (False, False, False), (True, False, False)]:
        args = (x, lw, target, lb, w, reduction, ignore_index, 0.0, 3, "balanced", acc, False, *grads)
        check(L.torch_nn__linear_cross_entropy_batch_chunked, LCE._linear_cross_entropy_batch_chunked.default, *args, **_tol(dtype))


@pytest.mark.parametrize("dtype", LCE_DTYPES, ids=str)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 3])
@needs_lce
def test_linear_cross_entropy_batch_chunked_no_reduction(dtype, bias, weighted, ignore_index):
    x, lw, target, lb, w, acc = _lce_args(dtype, bias, weighted, ignore_index)
    args = (x, lw, target, lb, w, ignore_index, 2, "balanced", acc)
    check(L.torch_nn__linear_cross_entropy_batch_chunked_no_reduction, LCE._linear_cross_entropy_batch_chunked_no_reduction.default, *args, **_tol(dtype))


@needs_lce
def test_linear_cross_entropy_batch_chunked_all_ignored_and_refused():
    x, lw, target, lb, w, acc = _lce_args(torch.float32, True, True, -100)
    ignored = torch.full_like(target, 4)  # mean over no weight: NaN loss and gradients, as torch
    check(L.torch_nn__linear_cross_entropy_batch_chunked, LCE._linear_cross_entropy_batch_chunked.default,
          x, lw, ignored, lb, w, "mean", 4, 0.0, 2, "precise", acc, True, True, True, True)
    for reduction in ["mean", "sum"]:  # an empty batch: NaN mean, 0 sum, empty and zero gradients
        check(L.torch_nn__linear_cross_entropy_batch_chunked, LCE._linear_cross_entropy_batch_chunked.default,
              x[:0], lw, target[:0], lb, w, reduction, -100, 0.0, 2, "balanced", acc, True, True, True, True)
    with pytest.raises(ValueError, match="label smoothing"):  # torch raises NotImplementedError; ours is an argument error the exporter reports with the op and source line
        L.torch_nn__linear_cross_entropy_batch_chunked(x, lw, target, lb, w, "mean", -100, 0.1, 2, "balanced", acc, True, True, True, True)
    with pytest.raises(NotImplementedError):
        LCE._linear_cross_entropy_batch_chunked(x, lw, target, lb, w, "mean", -100, 0.1, 2, "balanced", acc, True, True, True, True)
    check(L.torch_nn__linear_cross_entropy_batch_chunked, LCE._linear_cross_entropy_batch_chunked.default,  # float64 acc for float32: both raise
          x, lw, target, lb, w, "mean", -100, 0.0, 2, "balanced", torch.float64, True, True, True, True)


@pytest.mark.parametrize("dtype", LCE_DTYPES, ids=str)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("rows", [0, 1, 3])
@needs_lce
def test_linear_cross_entropy_batch_chunked_longer_target(dtype, weighted, rows):
    """The fuzz pass's [empty] / [size1] repros: torch does not check that target has the
    input's N rows. Its chunk loop reads target's first N rows only; the "mean" denominator is
    the weight of every target row (ignored ones 0); no input rows give a NaN mean; too few
    target rows raise (narrow), in torch and here."""
    x, lw, target, lb, w, acc = _lce_args(dtype, True, weighted, 3)  # 7 rows, row 2 ignored
    for reduction in ["mean", "sum"]:
        args = (x[:rows], lw, target, lb, w, reduction, 3, 0.0, 2, "balanced", acc, False, True, True, True)
        check(L.torch_nn__linear_cross_entropy_batch_chunked, LCE._linear_cross_entropy_batch_chunked.default, *args, **_tol(dtype))
    check(L.torch_nn__linear_cross_entropy_batch_chunked_no_reduction, LCE._linear_cross_entropy_batch_chunked_no_reduction.default,
          x[:rows], lw, target, lb, w, 3, 2, "balanced", acc, **_tol(dtype))
    check(L.torch_nn__linear_cross_entropy_batch_chunked, LCE._linear_cross_entropy_batch_chunked.default,  # too few: both raise
          x, lw, target[:rows], lb, w, "mean", 3, 0.0, 2, "balanced", acc, False, True, True, True)
    with pytest.raises(ValueError, match=f"target has {rows} rows for an input of 7 rows"):
        L.torch_nn__linear_cross_entropy_batch_chunked_no_reduction(x, lw, target[:rows], lb, w, 3, 2, "balanced", acc)


@needs_lce
def test_linear_cross_entropy_batch_chunked_longer_target_dynamic():
    """The same with dynamic sizes: target sliced to the input's rows at run time, NaN mean for none."""
    from torchlib.testing import run_dynamic

    x, lw, target, _, w, acc = _lce_args(torch.float64, False, True, 3)
    args = (None, w, "mean", 3, 0.0, 2, "balanced", acc, False, True, True, False)
    for rows in [0, 3]:
        ours = run_dynamic(lambda a, b, t: L.torch_nn__linear_cross_entropy_batch_chunked(a, b, t, *args), x[:rows], lw, target)
        torch.testing.assert_close(tuple(ours), tuple(LCE._linear_cross_entropy_batch_chunked(x[:rows], lw, target, *args)), equal_nan=True)
