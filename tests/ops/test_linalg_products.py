"""torchlib/ops/linalg/products.py against torch, eagerly and traced (bfloat16: traced only, see
torchlib.testing.check_traced_bfloat16), with static and dynamic shapes."""

from __future__ import annotations

from typing import Any

import onnx
import pytest
import torch

from torchlib.ops.linalg import products as L
from torchlib.testing import check_function, check_traced_bfloat16, run_dynamic, trace

A = torch.ops.aten
BF16 = torch.bfloat16
# every dtype torch's CPU matrix products accept (bool raises)
DTYPES = [torch.float32, torch.float16, BF16, torch.float64, torch.int32, torch.int64, torch.int8,
          torch.uint8, torch.int16]  # fmt: skip
TOL = {torch.float16: (2e-3, 2e-3), BF16: (1.6e-2, 2e-2)}


def make(shape: tuple[int, ...], dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2).to(dtype)
    return torch.randint(0 if dtype == torch.uint8 else -3, 4, shape, generator=g).to(dtype)


def check(fn: Any, aten: Any, *args: Any, expected: Any = None, **kwargs: Any) -> None:
    """fn(*args, **kwargs) equals aten(*args, **kwargs) (or `expected`), dtype and shape included,
    eagerly and traced; when torch raises, fn must raise too."""
    try:
        expected = aten(*args, **kwargs) if expected is None else expected
    except RuntimeError:
        with pytest.raises((TypeError, ValueError)):
            fn(*args, **kwargs)
        return
    rtol, atol = TOL.get(expected.dtype, (None, None))
    if any(isinstance(a, torch.Tensor) and a.dtype == BF16 for a in args):
        check_traced_bfloat16(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    else:
        check_function(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_products(dtype):
    a, b = make((3, 4), dtype, 1), make((4, 5), dtype, 2)
    check(L.aten_mm, A.mm.default, a, b)
    check(L.aten_bmm, A.bmm.default, make((2, 3, 4), dtype, 3), make((2, 4, 5), dtype, 4))
    check(L.aten_mv, A.mv.default, a, make((4,), dtype, 5))
    check(L.aten_dot, A.dot.default, make((4,), dtype, 6), make((4,), dtype, 7))
    check(L.aten_matmul, A.matmul.default, make((2, 3, 4), dtype, 8), b)


def test_integer_products_wrap_like_torch():
    a = torch.full((2, 8), 100, dtype=torch.int8)
    check(L.aten_mm, A.mm.default, a, a.T.contiguous())
    check(L.aten_dot, A.dot.default, torch.full((5,), 200, dtype=torch.uint8), torch.full((5,), 3, dtype=torch.uint8))


@pytest.mark.parametrize("shapes", [
    ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)), ((0, 4), (4, 2)), ((3, 0), (0, 2)),
], ids=str)  # fmt: skip
def test_matmul_shapes(shapes):
    a, b = make(shapes[0], seed=1), make(shapes[1], seed=2)
    check(L.aten_matmul, A.matmul.default, a, b)


def test_matmul_errors():
    check(L.aten_mm, A.mm.default, make((2, 3), torch.bool), make((3, 2), torch.bool))
    check(L.aten_mm, A.mm.default, make((2, 3), torch.int32), make((3, 2), torch.float32))
    with pytest.raises(ValueError):
        L.aten_mm(make((2, 3, 4)), make((4, 2)))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("beta, alpha", [(1, 1), (0.5, 2), (0, 1)], ids=str)
def test_addmm_baddbmm_addmv(dtype, beta, alpha):
    if not dtype.is_floating_point:
        beta, alpha = int(beta * 2), int(alpha * 2)  # torch: integer tensors take integer scalars
    kw = {"beta": beta, "alpha": alpha}
    mat1, mat2 = make((3, 4), dtype, 1), make((4, 5), dtype, 2)
    for bias in [make((5,), dtype, 3), make((3, 5), dtype, 3), make((3, 1), dtype, 3), make((), dtype, 3)]:
        check(L.aten_addmm, A.addmm.default, bias, mat1, mat2, **kw)
    check(L.aten_baddbmm, A.baddbmm.default, make((2, 3, 5), dtype, 4), make((2, 3, 4), dtype, 5), make((2, 4, 5), dtype, 6), **kw)
    check(L.aten_baddbmm, A.baddbmm.default, make((5,), dtype, 4), make((2, 3, 4), dtype, 5), make((2, 4, 5), dtype, 6), **kw)
    check(L.aten_addmv, A.addmv.default, make((3,), dtype, 7), mat1, make((4,), dtype, 8), **kw)


def test_beta_zero_ignores_nan():
    nan = torch.full((3, 5), float("nan"))
    mat1, mat2 = make((3, 4), seed=1), make((4, 5), seed=2)
    check(L.aten_addmm, A.addmm.default, nan, mat1, mat2, beta=0)
    check(L.aten_addmm, A.addmm.default, nan.half(), mat1.half(), mat2.half(), beta=0, alpha=0.5)
    check(L.aten_addmv, A.addmv.default, nan[:, 0], mat1, mat2[:, 0], beta=0)


def test_out_dtype_overloads():
    """torch's CPU build has no kernels for the out_dtype overloads (CUDA only): compare with
    the product of the inputs converted to out_dtype."""
    a, b = make((3, 4), torch.float16, 1), make((4, 5), torch.float16, 2)
    f = torch.float32
    check(L.aten_mm_dtype, None, a, b, f, expected=a.float() @ b.float())
    a3, b3 = make((2, 3, 4), torch.float16, 3), make((2, 4, 5), torch.float16, 4)
    check(L.aten_bmm_dtype, None, a3, b3, f, expected=a3.float() @ b3.float())
    c = make((5,), torch.float32, 5)
    check(L.aten_addmm_dtype, None, c, a, b, f, beta=0.5, alpha=2, expected=0.5 * c + 2 * (a.float() @ b.float()))
    c3 = make((2, 3, 5), torch.float16, 6)
    check(L.aten_baddbmm_dtype, None, c3, a3, b3, f, expected=c3.float() + a3.float() @ b3.float())
    abf = a.to(BF16), b.to(BF16)
    check_traced_bfloat16(L.aten_mm_dtype, (*abf, f), expected=abf[0].float() @ abf[1].float())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_linear(dtype):
    weight, bias = make((6, 5), dtype, 1), make((6,), dtype, 2)
    for x in [make((3, 5), dtype, 3), make((2, 3, 5), dtype, 3), make((5,), dtype, 3)]:
        check(L.aten_linear, A.linear.default, x, weight, bias)
        check(L.aten_linear, A.linear.default, x, weight)
    check(L.aten_linear, A.linear.default, make((3, 5), dtype, 4), make((5,), dtype, 5))  # 1-D weight
    check(L.aten_linear, A.linear.default, make((5,), dtype, 4), make((5,), dtype, 5), make((), dtype, 6))


def _op_types(fn: Any, *args: Any) -> list[str]:
    model, _, _ = trace(fn, args)
    return [n.op_type for n in model.graph.node]


def test_linear_uses_gemm_for_2d():
    x, w, b = make((3, 5)), make((6, 5)), make((6,))
    assert _op_types(L.aten_linear, x, w, b) == ["Gemm"]
    assert _op_types(L.aten_addmm, b, x, w.T.contiguous()) == ["Gemm"]
    assert "MatMul" in _op_types(L.aten_linear, make((2, 3, 5)), w, b)
    onnx.checker.check_model(trace(L.aten_linear, (x, w, b))[0], full_check=True)


@pytest.mark.parametrize("dtype", DTYPES + [torch.bool], ids=str)
def test_t_and_outer(dtype):
    check(L.aten_t, A.t.default, make((3, 4), dtype))
    check(L.aten_t, A.t.default, make((3,), dtype))
    check(L.aten_t, A.t.default, make((), dtype))
    check(L.aten_outer, A.outer.default, make((3,), dtype, 1), make((4,), dtype, 2))


def test_outer_promotes():
    check(L.aten_outer, A.outer.default, make((3,), torch.int32), make((4,), torch.float32))
    check(L.aten_outer, A.outer.default, make((3,), torch.bool), make((4,), torch.int64))


def test_dynamic_shapes():
    x, w, b = make((2, 3, 5), seed=1), make((6, 5), seed=2), make((6,), seed=3)
    torch.testing.assert_close(run_dynamic(L.aten_linear, x[0], w, b), A.linear.default(x[0], w, b))
    torch.testing.assert_close(run_dynamic(L.aten_linear, x, w, b), A.linear.default(x, w, b))
    y = make((2, 5, 4), seed=4)
    torch.testing.assert_close(run_dynamic(L.aten_matmul, x, y), A.matmul.default(x, y))
    c = make((4,), seed=5)
    torch.testing.assert_close(run_dynamic(lambda *a: L.aten_baddbmm(*a, beta=0.5), c, x, y), A.baddbmm.default(c, x, y, beta=0.5))


# -- regression (issue 13): empty inner / outer dimensions -------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, BF16, torch.float64], ids=str)
def test_addmm_empty_inner_dim_scales_self(dtype):
    # onnxruntime's Gemm returns C, not beta * C, when K == 0
    x = make((5, 10), dtype, 1)
    check(L.aten_addmm, A.addmm.default, x, make((5, 0), dtype, 2), make((0, 10), dtype, 3), beta=0.2, alpha=0.6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int64], ids=str)
def test_mv_empty_dims(dtype):
    # onnxruntime's matrix-vector MatMul returns stale memory for K == 0 and fails for M == 0
    L.aten_mv(make((4, 3), dtype, 1), make((3,), dtype, 2))  # leaves non-zero memory behind
    check(L.aten_mv, A.mv.default, make((4, 0), dtype, 3), make((0,), dtype, 4))
    check(L.aten_mv, A.mv.default, make((0, 3), dtype, 5), make((3,), dtype, 6))
    check(L.aten_matmul, A.matmul.default, make((2, 4, 0), dtype, 7), make((0,), dtype, 8))
    check(L.aten_addmv, A.addmv.default, make((4,), dtype, 9), make((4, 0), dtype, 3), make((0,), dtype, 4), beta=2)
    check(L.aten_addmv, A.addmv.default, make((0,), dtype, 9), make((0, 3), dtype, 5), make((3,), dtype, 6), beta=2)


def test_float64_alpha_survives_onnxruntime_fusion():
    # onnxruntime's MatMulScaleFusion folds a scalar Mul after MatMul into a float32 alpha
    from torchlib.testing import run_traced

    a, b, c = make((4, 6, 6), torch.float64, 1), make((4, 6, 5), torch.float64, 2), make((4, 5, 6), torch.float64, 3)
    expected = torch.baddbmm(a, b, c, beta=0.3, alpha=0.7)
    got = run_traced(lambda *t: L.aten_baddbmm(*t, beta=0.3, alpha=0.7), a, b, c)
    torch.testing.assert_close(got, expected, rtol=1e-13, atol=1e-13)


def test_float16_baddbmm_rounds_once():
    # the float16 product was rounded before beta * self was added: 0.034 off a float64 reference, torch 0.029
    a, b, c = make((2, 4, 5), torch.float16, 4) * 40, make((2, 4, 6), torch.float16, 5) * 4, make((2, 6, 5), torch.float16, 6) * 4
    reference = torch.baddbmm(a.double(), b.double(), c.double(), beta=0.5, alpha=1.5)
    ours = (L.aten_baddbmm(a, b, c, beta=0.5, alpha=1.5).double() - reference).abs().max()
    theirs = (torch.baddbmm(a, b, c, beta=0.5, alpha=1.5).double() - reference).abs().max()
    assert ours <= theirs
