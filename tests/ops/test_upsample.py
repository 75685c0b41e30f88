import pytest
import torch

from graph_builder import GraphBuilder, op, types
from torchlib.ops import upsample as up
from torchlib.testing import check_function, run_model, run_traced, trace, with_nan_inf

TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-7, 1e-7), torch.float16: (1e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2), torch.uint8: (0, 0)}


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def check(fn, args, *, expected, dtype, atol=None):
    """check_function, and the traced graph declares the output's dtype and shape as torch's.
    bfloat16 is checked traced only, entering and leaving the graph as float32: onnxruntime's
    Python API can neither take nor return bfloat16 arrays."""
    rtol, default_atol = TOL[dtype]
    atol = default_atol if atol is None else atol
    if dtype == torch.bfloat16:
        def wrapped(x, *rest):
            y = fn(op.Cast(x, to=types.BFLOAT16.onnx), *rest)
            assert y.dtype is types.BFLOAT16
            return op.Cast(y, to=types.FLOAT.onnx)

        got = run_traced(wrapped, args[0].float(), *args[1:])
        torch.testing.assert_close(got, expected.float(), rtol=rtol, atol=atol)
        return
    check_function(fn, args, expected=expected, rtol=rtol, atol=atol)
    model, _, _ = trace(fn, args)
    (declared,) = model.graph.output
    assert types.from_onnx(declared.type.tensor_type.elem_type) == types.from_torch(expected.dtype)
    assert [d.dim_value for d in declared.type.tensor_type.shape.dim] == list(expected.shape)


def rand(shape, dtype):
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, dtype=dtype)
    return torch.randn(shape).to(dtype)


FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
# (input spatial, output size, scales): size-driven, scale-driven (integer and fractional),
# downsampling, and outputs of length 1
CASES_2D = [
    ([4, 5], [8, 10], None),
    ([4, 5], [3, 7], None),
    ([5, 4], [1, 1], None),
    ([4, 5], [8, 10], [2.0, 2.0]),
    ([5, 7], [7, 10], [1.5, 1.5]),
    ([10, 9], [7, 2], [0.7, 0.3]),
    ([6, 6], [1, 3], [0.25, 0.5]),
]


def spatial_cases(n):
    out = []
    for size, out_size, scales in CASES_2D:
        if n == 1:
            out.append(([size[0]], [out_size[0]], None if scales is None else [scales[0]]))
        elif n == 2:
            out.append((size, out_size, scales))
        else:
            out.append(([3, *size], [4, *out_size], None if scales is None else [4 / 3, *scales]))
    return out


def ids(cases):
    return [f"{s}->{o}@{sc}" for s, o, sc in cases]


def plain_and_vec(n, name, size, out_size, scales, align_corners=None):
    """(plain function, its args) and (vec function, its args) with torch's results."""
    ac = () if align_corners is None else (align_corners,)
    plain = getattr(up, f"aten_{name}")
    vec = getattr(up, f"aten_{name}_vec")
    torch_plain = getattr(torch.ops.aten, name).default
    torch_vec = getattr(torch.ops.aten, name).vec
    scale_args = tuple(scales) if scales is not None else ()
    plain_args = (out_size, *ac, *scale_args)
    vec_args = (None, *ac, scales) if scales is not None else (out_size, *ac, None)
    return (plain, plain_args, torch_plain), (vec, vec_args, torch_vec)


NEAREST = [("upsample_nearest1d", 1), ("upsample_nearest2d", 2), ("upsample_nearest3d", 3),
           ("_upsample_nearest_exact1d", 1), ("_upsample_nearest_exact2d", 2), ("_upsample_nearest_exact3d", 3)]  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS + [torch.uint8])
@pytest.mark.parametrize("name, n", NEAREST)
def test_upsample_nearest(dtype, name, n):
    for size, out_size, scales in spatial_cases(n):
        x = rand([2, 3, *size], dtype)
        for fn, args, ref in plain_and_vec(n, name, size, out_size, scales):
            check(fn, (x, *args), expected=ref(x, *args), dtype=dtype)


LINEAR = [("upsample_linear1d", 1), ("upsample_bilinear2d", 2), ("upsample_trilinear3d", 3), ("upsample_bicubic2d", 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("name, n", LINEAR)
def test_upsample_linear_and_cubic(dtype, align_corners, name, n):
    for size, out_size, scales in spatial_cases(n):
        x = rand([2, 3, *size], dtype)
        for fn, args, ref in plain_and_vec(n, name, size, out_size, scales, align_corners):
            check(fn, (x, *args), expected=ref(x, *args), dtype=dtype)


@pytest.mark.parametrize("align_corners", [False, True])
def test_upsample_bilinear_uint8_within_one(align_corners):
    # torch's uint8 kernel works in fixed point; computing in float32 and rounding is within 1
    x = rand([1, 3, 5, 6], torch.uint8)
    for args in [([10, 12], align_corners, None), ([3, 4], align_corners, None), (None, align_corners, [1.5, 1.5])]:
        check(up.aten_upsample_bilinear2d_vec, (x, *args), expected=torch.ops.aten.upsample_bilinear2d.vec(x, *args), dtype=torch.uint8, atol=1)


@pytest.mark.xfail(strict=True, reason="torch's uint8 bicubic truncates and renormalizes the filter at the borders; Resize (like torch's float path) repeats the edge pixel")
def test_upsample_bicubic_uint8_borders():
    x = rand([1, 3, 5, 6], torch.uint8)
    args = ([10, 12], False, None)
    check(up.aten_upsample_bicubic2d_vec, (x, *args), expected=torch.ops.aten.upsample_bicubic2d.vec(x, *args), dtype=torch.uint8, atol=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])  # torch has no float16/bfloat16 antialiasing
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("name", ["_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"])
def test_upsample_antialias(dtype, align_corners, name):
    for size, out_size, scales in CASES_2D + [([10, 20], [17, 18], [1.7, 0.9])]:
        x = rand([2, 3, *size], dtype)
        for fn, args, ref in plain_and_vec(2, name, size, out_size, scales, align_corners):
            check(fn, (x, *args), expected=ref(x, *args), dtype=dtype)


def test_upsample_antialias_uint8_within_one():
    x = rand([1, 3, 10, 12], torch.uint8)
    args = ([4, 5], False, None)
    check(up.aten__upsample_bilinear2d_aa_vec, (x, *args), expected=torch.ops.aten._upsample_bilinear2d_aa.vec(x, *args), dtype=torch.uint8, atol=1)


def test_upsample_antialias_dynamic_sizes_use_resize():
    x = torch.randn(2, 3, 10, 12)
    for args in [(None, False, [0.5, 0.4]), ([4, 5], False, None)]:
        ref = torch.ops.aten._upsample_bilinear2d_aa.vec(x, *args)
        torch.testing.assert_close(run_dynamic(up.aten__upsample_bilinear2d_aa_vec, x, ["n", "c", "h", "w"], *args), ref)
    with pytest.raises(ValueError, match="align_corners"):
        run_dynamic(up.aten__upsample_bilinear2d_aa_vec, x, ["n", "c", "h", "w"], [4, 5], True, None)


def test_upsample_inconsistent_size_and_scale_is_rejected():
    with pytest.raises(ValueError, match="does not follow"):
        up.aten_upsample_nearest2d(torch.randn(1, 1, 4, 4), [5, 8], 2.0, 2.0)


def run_dynamic(fn, x, dims, *args):
    g = GraphBuilder()
    v = g.input("x", types.from_torch(x.dtype), [d if d is not None else s for d, s in zip(dims, x.shape)])
    with g:
        y = fn(v, *args)
    name = g.output(y, "y").name
    return run_model(g.to_model(), {"x": x.numpy()}, name)


@pytest.mark.parametrize("dims", [["n", "c", None, None], ["n", "c", "h", "w"]])
def test_upsample_dynamic_shapes(dims):
    x = torch.randn(2, 3, 5, 6)
    cases = [
        (up.aten_upsample_nearest2d_vec, (None, [2.0, 3.0])),
        (up.aten_upsample_nearest2d_vec, ([7, 9], None)),
        (up.aten__upsample_nearest_exact2d_vec, (None, [1.5, 0.5])),
        (up.aten_upsample_bilinear2d_vec, (None, False, [2.0, 2.0])),
        (up.aten_upsample_bilinear2d_vec, ([3, 9], True, None)),
        (up.aten_upsample_bicubic2d_vec, (None, False, [1.5, 1.5])),
    ]
    for fn, args in cases:
        ref = getattr(torch.ops.aten, fn.__name__[len("aten_"):-len("_vec")]).vec(x, *args)
        torch.testing.assert_close(run_dynamic(fn, x, dims, *args), ref)


# -- NaN and inf as torch's kernels give them (issue 13) ----------------------------------------


def test_linear_same_length_reads_a_zero_weighted_tap_as_torch_does():
    # torch's "scale 1" linear reads x[i] twice, weights 1 and 0: inf gives inf*1 + inf*0 = NaN
    x = torch.tensor([[[1.0, float("inf"), 3.0, 4.0]]], dtype=torch.float64)
    check(up.aten_upsample_linear1d, (x, [4], False), expected=torch.ops.aten.upsample_linear1d(x, [4], False), dtype=torch.float64)


@pytest.mark.parametrize(("name", "n", "dtype"), [
    ("upsample_linear1d", 1, torch.float64), ("upsample_bilinear2d", 2, torch.float64),
    ("upsample_trilinear3d", 3, torch.float64), ("upsample_bicubic2d", 2, torch.float64),
    ("_upsample_bilinear2d_aa", 2, torch.float64), ("_upsample_bicubic2d_aa", 2, torch.float64),
    ("_upsample_bilinear2d_aa", 2, torch.float32), ("_upsample_bicubic2d_aa", 2, torch.float32),
])  # fmt: skip
def test_exact_interpolation_propagates_nan_and_inf_as_torch(name, n, dtype):
    fn = getattr(up, f"aten_{name}")
    for size, length in [(4, 3), (4, 5), (4, 4), (10, 3)]:
        for align_corners in (False, True):
            x = with_nan_inf(torch.randn(2, 3, *[size] * n, dtype=dtype))
            out = [length, size, length][:n] if n > 1 else [length]
            check(fn, (x, out, align_corners), expected=getattr(torch.ops.aten, name)(x, out, align_corners), dtype=dtype)


def test_antialiased_float32_sums_its_taps_in_float64():
    """Issue 13, fuzz `huge`: bicubic's negative lobes cancel; the float32 result is torch's
    float64 result rounded once (torch's own float32 kernel is 1e-6 relative off here)."""
    info = torch.finfo(torch.float32)
    x = torch.randn(1, 2, 8, 6)
    x.view(-1)[:5] = torch.tensor([info.max, -info.max, info.tiny, info.max / 3, -info.tiny])
    x = x / 4  # no overflow: every output element is representable
    exact = torch.ops.aten._upsample_bicubic2d_aa(x.double(), [5, 9], True, None, None)
    got = torch.as_tensor(up.aten__upsample_bicubic2d_aa(x, [5, 9], True, None, None))
    torch.testing.assert_close(got, exact.float(), rtol=1.2e-7, atol=1e-30)
