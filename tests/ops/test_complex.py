"""Complex arithmetic and shape ops on the real view, eager and traced, against torch: edge
values (zeros, signed zeros, inf, NaN, huge and tiny magnitudes), complex128 precision, mixed
real/complex operands, and the guard against real functions given complex tensors."""

from __future__ import annotations

import math

import pytest
import torch

from graph_builder import GraphBuilder, types
from graph_builder.ir import COMPLEX_KEY
from torchlib.ops import complex as C
from torchlib.ops import complex_shape as S
from torchlib.ops import elementwise, reductions
from torchlib.testing import check_function, run_dynamic, trace

EDGE = torch.tensor([0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), 1 + 0j, -1 + 0j, 1j, -1j, 3 - 4j, -2.5 + 1e-3j,
                     complex(1e30, 1e30), complex(-1e30, 2.0), complex(1e-30, -1e-30), complex(math.inf, 1.0), complex(1.0, math.inf),
                     complex(-math.inf, 0.0), complex(math.nan, 1.0), complex(1.0, math.nan)], dtype=torch.complex64)
FINITE = EDGE[:13]


@pytest.mark.parametrize("fn, ref", [(C.aten_abs_complex, torch.abs), (C.aten_angle_complex, torch.angle), (C.aten_sgn_complex, torch.sgn),
                                     (C.aten_neg_complex, torch.neg), (C.aten_conj_physical, torch.conj_physical)],
                         ids=["abs", "angle", "sgn", "neg", "conj"])
def test_unary_edge_values(fn, ref):
    check_function(fn, (EDGE,), expected=ref(EDGE))


@pytest.mark.parametrize("fn, ref", [(C.aten_sqrt_complex, torch.sqrt), (C.aten_log_complex, torch.log), (C.aten_exp_complex, torch.exp),
                                     (C.aten_reciprocal_complex, torch.reciprocal), (C.aten_rsqrt_complex, torch.rsqrt)],
                         ids=["sqrt", "log", "exp", "reciprocal", "rsqrt"])
def test_unary_finite_edge_values(fn, ref):
    x = FINITE if fn is not C.aten_exp_complex else FINITE[:10]  # exp(1e30) overflows both ways
    expected = ref(x)
    check_function(fn, (x,), expected=expected, rtol=2e-6, atol=1e-6)


def _near_limits(dtype):
    """Parts near the largest float and among the subnormals, where |z| overflows or loses digits."""
    info = torch.finfo(torch.float32 if dtype == torch.complex64 else torch.float64)
    parts = [info.max * 0.88, -info.max * 0.88, info.max, info.tiny / 3, info.tiny * 1e-5, 1.0, -2.5, 0.0]
    return torch.tensor([complex(a, b) for a in parts for b in parts if (a, b) != (0.0, 0.0)], dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
@pytest.mark.parametrize("fn, ref", [(C.aten_sqrt_complex, torch.sqrt), (C.aten_log_complex, torch.log),
                                     (C.aten_rsqrt_complex, torch.rsqrt), (C.aten_reciprocal_complex, torch.reciprocal),
                                     (lambda z: C.aten_pow_complex(z, 0.5), lambda z: torch.pow(z, 0.5)),
                                     (C.aten_angle_complex, torch.angle)],
                         ids=["sqrt", "log", "rsqrt", "reciprocal", "pow-half", "angle"])
def test_unary_near_the_float_limits(fn, ref, dtype):
    # scaled as std::sqrt / std::log do; reciprocal as torch's c10::complex division (Smith's)
    z = _near_limits(dtype)
    expected = ref(z)
    # log|z| near 1 + tiny: torch (glibc's log1p path) 5e-91 where log(hypot) gives 0
    check_function(fn, (z,), expected=expected, rtol=2e-6 if dtype == torch.complex64 else 1e-13, atol=1e-30)


def test_division_without_overflow():
    a = torch.tensor([1 + 1j, 1e30 + 1e30j, 3 - 4j, 1e-30 + 0j], dtype=torch.complex64)
    b = torch.tensor([1e30 + 1e30j, 1e30 - 1e30j, 0.5 + 0.25j, 1e-30 + 1e-30j], dtype=torch.complex64)
    check_function(C.aten_div_complex, (a, b), expected=a / b)


def test_complex128_stays_double():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(50, dtype=torch.complex128, generator=g) * 100
    for fn, ref in [(C.aten_angle_complex, torch.angle), (C.aten_log_complex, torch.log), (C.aten_sqrt_complex, torch.sqrt)]:
        check_function(fn, (z,), expected=ref(z), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, 0.5, 2.5, 1 + 1j])
def test_pow_scalar_exponents(exponent):
    z = torch.tensor([0j, 1 + 1j, -2 + 0.5j, 3 - 4j, 1e-3j], dtype=torch.complex64)
    if isinstance(exponent, complex) or exponent in (-1, -2, 2.5):
        z = z[1:]  # 0 ** negative or complex: inf / NaN patterns differ by library
    check_function(C.aten_pow_complex, (z, exponent), expected=torch.pow(z, exponent), rtol=2e-6, atol=1e-6)


def test_mixed_real_and_complex_operands():
    g = torch.Generator().manual_seed(0)
    z, x = torch.randn(3, 4, dtype=torch.complex64, generator=g), torch.randn(4, generator=g)
    check_function(C.aten_mul_complex, (z, x), expected=z * x)
    check_function(C.aten_add_complex, (x, z), {"alpha": 2}, expected=torch.add(x, z, alpha=2))
    check_function(C.aten_div_complex, (x, z), expected=x / z)
    check_function(C.aten_sub_scalar_complex, (z, 1 - 2j, 0.5), expected=torch.ops.aten.sub.Scalar(z, 1 - 2j, 0.5))
    check_function(C.aten__to_copy_complex, (x,), {"dtype": torch.complex128}, expected=x.to(torch.complex128))
    check_function(C.aten__to_copy_complex, (z,), {"dtype": torch.float32}, expected=z.real.contiguous())


def test_views_and_construction():
    g = torch.Generator().manual_seed(0)
    re, im = torch.randn(2, 3, generator=g), torch.randn(3, generator=g)
    check_function(C.aten_complex, (re, im), expected=torch.complex(re, im))
    check_function(C.aten_polar, (re.abs(), re), expected=torch.polar(re.abs(), re))
    z = torch.complex(re, re.flip(0))
    check_function(C.aten_view_as_real, (z,), expected=torch.view_as_real(z))
    check_function(C.aten_view_as_complex, (torch.view_as_real(z),), expected=z)
    check_function(C.aten_real, (z,), expected=z.real.contiguous())
    check_function(C.aten_imag, (z,), expected=z.imag.contiguous())
    scalar = torch.tensor(1 - 2j)
    check_function(C.aten_view_as_real, (scalar,), expected=torch.view_as_real(scalar))


def test_axes_count_on_the_logical_shape():
    z = torch.randn(2, 3, 4, dtype=torch.complex64, generator=torch.Generator().manual_seed(0))
    check_function(S.aten_transpose_complex, (z, -1, -3), expected=z.transpose(-1, -3))
    check_function(S.aten_select_complex, (z, -1, -1), expected=z[..., -1])
    check_function(S.aten_slice_complex, (z, -2, -2, None, 1), expected=z[:, -2:])
    check_function(S.aten_stack_complex, ([z, z], -1), expected=torch.stack([z, z], -1))
    check_function(S.aten_sum_dim_IntList_complex, (z, [-1, 0], True), expected=z.sum([-1, 0], keepdim=True))
    check_function(S.aten_flatten_complex, (z, -2, -1), expected=z.flatten(-2, -1))
    check_function(S.aten_unsqueeze_complex, (z, -1), expected=z.unsqueeze(-1))
    check_function(S.aten_roll_complex, (z, [5], []), expected=z.roll(5))
    check_function(S.aten_cat_complex, ([z, z.real], -1), expected=torch.cat([z, z.real.to(torch.complex64)], -1))
    check_function(S.aten_index_complex, (z, [None, torch.tensor([2, 0])]), expected=z[:, [2, 0]])


def test_dynamic_shapes():
    z = torch.randn(3, 5, dtype=torch.complex64, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(run_dynamic(lambda a: S.aten_reshape_complex(C.aten_mul_complex(a, a), [-1]), z), (z * z).reshape(-1))


def test_real_function_refuses_complex_tensors():
    z = torch.ones(3, dtype=torch.complex64)
    with pytest.raises(TypeError, match="aten::cumsum has no complex variant"):
        reductions.aten_cumsum(z, 0)
    with pytest.raises(TypeError, match="no complex variant"):
        elementwise.aten_abs(z)


def test_graph_edges_carry_the_complex_view():
    z = torch.randn(2, 3, dtype=torch.complex128)
    model, feeds, _ = trace(C.aten_mul_complex, (z, z))
    graph = model.graph
    assert [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim] == [2, 3, 2]
    assert graph.input[0].type.tensor_type.elem_type == types.DOUBLE.onnx
    assert {p.key: p.value for p in graph.output[0].metadata_props} == {COMPLEX_KEY: "complex128"}
    assert feeds["input_0"].shape == (2, 3, 2)


def test_builder_input_of_a_complex_dtype():
    g = GraphBuilder()
    v = g.input("z", types.COMPLEX64, ["n", 4])
    assert v.dtype is types.FLOAT and v.shape == ("n", 4, 2)
    assert v.is_complex and v.logical_shape == ("n", 4) and v.logical_rank == 2 and v.logical_dtype is types.COMPLEX64


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_fft_shifts_of_complex_tensors(dtype):
    z = torch.randn(3, 4, 5, dtype=dtype, generator=torch.Generator().manual_seed(0))
    for dim in (None, [0], [-1, 1]):
        check_function(S.aten_fft_fftshift_complex, (z, dim), expected=torch.fft.fftshift(z, dim))
        check_function(S.aten_fft_ifftshift_complex, (z, dim), expected=torch.fft.ifftshift(z, dim))
    with pytest.raises(ValueError, match="no dims"):
        S.aten_fft_fftshift_complex(z, [])
