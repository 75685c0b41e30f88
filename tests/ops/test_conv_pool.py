import pytest
import torch

from graph_builder import GraphBuilder, op, types
from torchlib.ops import conv_pool as cp
from torchlib.testing import check_function, run_model, run_traced, trace, with_nan_inf


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-7, 1e-7), torch.float16: (1e-2, 1e-2), torch.bfloat16: (5e-2, 5e-2)}


def check(fn, args, kwargs=None, *, expected, dtype=torch.float32):
    """check_function, and the traced graph declares the outputs' dtype and shape as torch's."""
    rtol, atol = TOL.get(dtype, (0, 0))
    if dtype == torch.bfloat16:
        return check_bfloat16(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    check_function(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    model, _, _ = trace(fn, args, kwargs)
    outputs = expected if isinstance(expected, tuple) else (expected,)
    for declared, want in zip(model.graph.output, outputs):
        tensor_type = declared.type.tensor_type
        assert types.from_onnx(tensor_type.elem_type) == types.from_torch(want.dtype)
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
        assert dims == list(want.shape), (dims, list(want.shape))


def check_bfloat16(fn, args, kwargs=None, *, expected, rtol, atol):
    """onnxruntime's Python API can neither take nor return bfloat16 arrays, so bfloat16 is
    checked traced only: bfloat16 tensors enter the graph as float32 and are cast to bfloat16
    inside it, and bfloat16 results are cast back to float32 after the function ran."""
    is_bf16 = [isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 for a in args]
    seen = []

    def wrapped(*a):
        a = [op.Cast(x, to=types.BFLOAT16.onnx) if b else x for x, b in zip(a, is_bf16)]
        result = fn(*a, **(kwargs or {}))
        outs = result if isinstance(result, tuple) else (result,)
        seen.extend(o.dtype for o in outs)
        outs = tuple(op.Cast(o, to=types.FLOAT.onnx) if o.dtype is types.BFLOAT16 else o for o in outs)
        return outs if isinstance(result, tuple) else outs[0]

    args32 = [a.float() if b else a for a, b in zip(args, is_bf16)]
    got = run_traced(wrapped, *args32)
    wants = expected if isinstance(expected, tuple) else (expected,)
    assert seen == [types.from_torch(w.dtype) for w in wants]
    wants = tuple(w.float() if w.dtype == torch.bfloat16 else w for w in wants)
    torch.testing.assert_close(got, wants if isinstance(expected, tuple) else wants[0], rtol=rtol, atol=atol)


def rand(*shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(*shape).to(dtype)
    return torch.randint(-5, 6, shape, dtype=dtype)


# -- convolution -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.int32])
@pytest.mark.parametrize(
    "n, stride, padding, dilation, groups, bias",
    [
        (1, [1], [0], [1], 1, True),
        (1, [2], [1], [2], 2, False),
        (2, [1, 1], [0, 0], [1, 1], 1, True),
        (2, [2, 1], [1, 2], [1, 2], 2, True),
        (3, [1, 2, 1], [1, 0, 1], [1, 1, 2], 1, False),
    ],
)
def test_convolution(dtype, n, stride, padding, dilation, groups, bias):
    if dtype == torch.int32 and max(dilation) > 1:
        pytest.skip("torch has no dilated int32 convolution")
    x = rand(2, 4, *[7] * n, dtype=dtype)
    w = rand(6, 4 // groups, *[3] * n, dtype=dtype)
    b = rand(6, dtype=dtype) if bias else None
    args = (x, w, b, stride, padding, dilation, False, [0] * n, groups)
    check(cp.aten_convolution, args, expected=torch.ops.aten.convolution(*args), dtype=dtype)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64])
@pytest.mark.parametrize(
    "n, stride, padding, output_padding, dilation, groups",
    [
        (1, [1], [0], [0], [1], 1),
        (1, [3], [1], [2], [1], 2),
        (2, [2, 2], [1, 0], [1, 0], [1, 1], 1),
        (2, [2, 1], [2, 1], [0, 0], [2, 1], 2),
        (3, [2, 1, 2], [0, 1, 1], [1, 0, 0], [1, 1, 1], 1),
        # output_padding at or past the stride (torch allows up to max(stride, dilation) - 1)
        (2, [3, 2], [1, 2], [2, 3], [4, 4], 2),
        (1, [1], [0], [2], [3], 1),
    ],
)
def test_convolution_transposed(dtype, n, stride, padding, output_padding, dilation, groups):
    x = rand(2, 4, *[5] * n, dtype=dtype)
    w = rand(4, 6 // groups, *[3] * n, dtype=dtype)
    b = rand(6, dtype=dtype)
    args = (x, w, b, stride, padding, dilation, True, output_padding, groups)
    check(cp.aten_convolution, args, expected=torch.ops.aten.convolution(*args), dtype=dtype)


def test_convolution_expands_single_values():
    x, w = rand(1, 2, 6, 6), rand(3, 2, 2, 2)
    args = (x, w, None, [2], [1], [1], False, [0], 1)
    check(cp.aten_convolution, args, expected=torch.ops.aten.convolution(*args))


def test__convolution():
    x, w, b = rand(1, 2, 6, 6), rand(3, 2, 3, 3), rand(3)
    args = (x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, False, False, True, True)
    check(cp.aten__convolution, args, expected=torch.ops.aten._convolution(*args))
    check(cp.aten__convolution_deprecated, args[:-1], expected=torch.ops.aten._convolution.deprecated(*args[:-1]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batched", [True, False])
def test_conv_nd(dtype, batched):
    lead = (2,) if batched else ()
    cases = [
        (cp.aten_conv1d, torch.ops.aten.conv1d, rand(*lead, 4, 9, dtype=dtype), rand(2, 2, 3, dtype=dtype), {"stride": [2], "groups": 2}),
        (cp.aten_conv2d, torch.ops.aten.conv2d, rand(*lead, 3, 6, 5, dtype=dtype), rand(4, 3, 2, 3, dtype=dtype), {"padding": [1, 0], "dilation": [2, 1]}),
        (cp.aten_conv3d, torch.ops.aten.conv3d, rand(*lead, 2, 4, 5, 4, dtype=dtype), rand(3, 2, 2, 2, 2, dtype=dtype), {}),
    ]
    for fn, ref, x, w, kwargs in cases:
        check(fn, (x, w), kwargs, expected=ref(x, w, **kwargs), dtype=dtype)
        b = rand(w.shape[0], dtype=dtype)
        check(fn, (x, w, b), kwargs, expected=ref(x, w, b, **kwargs), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv_padding_strings(dtype, padding):
    cases = [
        (cp.aten_conv1d_padding, torch.ops.aten.conv1d.padding, rand(2, 3, 12, dtype=dtype), rand(4, 3, 4, dtype=dtype), [3]),
        (cp.aten_conv2d_padding, torch.ops.aten.conv2d.padding, rand(1, 2, 6, 7, dtype=dtype), rand(4, 2, 3, 2, dtype=dtype), [1, 2]),
        (cp.aten_conv2d_padding, torch.ops.aten.conv2d.padding, rand(2, 6, 7, dtype=dtype), rand(4, 2, 2, 2, dtype=dtype), [1, 1]),
        (cp.aten_conv3d_padding, torch.ops.aten.conv3d.padding, rand(1, 2, 5, 4, 6, dtype=dtype), rand(2, 2, 2, 3, 2, dtype=dtype), [1, 1, 2]),
    ]
    for fn, ref, x, w, dilation in cases:
        b = rand(w.shape[0], dtype=dtype)
        check(fn, (x, w, b, [1] * len(dilation), padding, dilation), expected=ref(x, w, b, [1] * len(dilation), padding, dilation), dtype=dtype)


def test__convolution_mode():
    x, w, b = rand(2, 4, 7, 6), rand(6, 2, 3, 2), rand(6)
    for padding in ("same", "valid"):
        args = (x, w, b, [1, 1], padding, [2, 1], 2)
        check(cp.aten__convolution_mode, args, expected=torch.ops.aten._convolution_mode(*args))


def test_conv_padding_same_rejects_stride():
    with pytest.raises(ValueError, match="strided"):
        cp.aten_conv2d_padding(rand(1, 2, 6, 6), rand(2, 2, 3, 3), None, [2, 2], "same")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("batched", [True, False])
def test_conv_transpose_nd(dtype, batched):
    lead = (2,) if batched else ()
    cases = [
        (cp.aten_conv_transpose1d, torch.ops.aten.conv_transpose1d, rand(*lead, 4, 5, dtype=dtype), rand(4, 3, 3, dtype=dtype),
         {"stride": [2], "padding": [1], "output_padding": [1]}),
        (cp.aten_conv_transpose2d, torch.ops.aten.conv_transpose2d.input, rand(*lead, 4, 4, 3, dtype=dtype), rand(4, 1, 2, 3, dtype=dtype),
         {"stride": [2, 3], "groups": 2, "dilation": [1, 2]}),
        (cp.aten_conv_transpose3d, torch.ops.aten.conv_transpose3d.input, rand(*lead, 2, 3, 2, 3, dtype=dtype), rand(2, 2, 2, 2, 2, dtype=dtype),
         {"stride": [1, 2, 1], "padding": [1, 0, 0]}),
    ]  # fmt: skip
    for fn, ref, x, w, kwargs in cases:
        b = rand(w.shape[1] * kwargs.get("groups", 1), dtype=dtype)
        check(fn, (x, w, b), kwargs, expected=ref(x, w, b, **kwargs), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_empty_batch(dtype):
    x, w = rand(0, 2, 5, 5, dtype=dtype), rand(3, 2, 3, 3, dtype=dtype)
    check(cp.aten_conv2d, (x, w), expected=torch.ops.aten.conv2d(x, w), dtype=dtype)
    wt = rand(2, 3, 3, 3, dtype=dtype)
    check(cp.aten_conv_transpose2d, (x, wt, None, [2, 2]), expected=torch.ops.aten.conv_transpose2d(x, wt, None, [2, 2]), dtype=dtype)
    for fn, ref, args in [
        (cp.aten_adaptive_avg_pool2d, torch.ops.aten.adaptive_avg_pool2d, ([3, 2],)),
        (cp.aten_adaptive_max_pool2d, torch.ops.aten.adaptive_max_pool2d, ([3, 2],)),
        (cp.aten_max_pool2d_with_indices, torch.ops.aten.max_pool2d_with_indices, ([2, 2],)),
        (cp.aten_avg_pool2d, torch.ops.aten.avg_pool2d, ([2, 2], [1, 1], [1, 1], True, False, 3)),
    ]:
        check(fn, (x, *args), expected=ref(x, *args), dtype=dtype)


# -- max pooling -----------------------------------------------------------------------------------

POOL_CASES = [
    # n, kernel, stride, padding, dilation, ceil_mode, spatial
    (1, [3], [], [1], [1], False, [9]),
    (1, [2], [3], [0], [2], True, [8]),
    (2, [2, 2], [], [0, 0], [1, 1], False, [6, 6]),
    (2, [3, 2], [2, 1], [1, 1], [1, 2], True, [7, 6]),
    (2, [1, 1], [3, 3], [0, 0], [1, 1], True, [6, 5]),
    (3, [2, 2, 2], [1, 2, 2], [1, 0, 1], [1, 1, 1], True, [4, 5, 5]),
]
MAX_POOL = {1: (cp.aten_max_pool1d, cp.aten_max_pool1d_with_indices), 2: (cp.aten_max_pool2d, cp.aten_max_pool2d_with_indices),
            3: (cp.aten_max_pool3d, cp.aten_max_pool3d_with_indices)}  # fmt: skip
TORCH_MAX_POOL = {1: (torch.ops.aten.max_pool1d, torch.ops.aten.max_pool1d_with_indices), 2: (torch.ops.aten.max_pool2d, torch.ops.aten.max_pool2d_with_indices),
                  3: (torch.ops.aten.max_pool3d, torch.ops.aten.max_pool3d_with_indices)}  # fmt: skip


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n, kernel, stride, padding, dilation, ceil_mode, spatial", POOL_CASES)
def test_max_pool(dtype, n, kernel, stride, padding, dilation, ceil_mode, spatial):
    x = rand(2, 3, *spatial, dtype=dtype)
    args = (x, kernel, stride, padding, dilation, ceil_mode)
    plain, with_indices = MAX_POOL[n]
    torch_plain, torch_with_indices = TORCH_MAX_POOL[n]
    check(with_indices, args, expected=torch_with_indices(*args), dtype=dtype)
    if dtype in (torch.float32, torch.float64):
        check(plain, args, expected=torch_plain(*args), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.int8])
def test_max_pool_integers(dtype):
    x = torch.randperm(2 * 3 * 36).reshape(2, 3, 6, 6).to(dtype) if dtype != torch.int8 else rand(2, 3, 6, 6, dtype=dtype)
    if dtype == torch.int64:
        x = x * 1000003
    args = (x, [3, 3], [2, 2], [1, 1], [1, 1], True)
    check(cp.aten_max_pool2d, args, expected=torch.ops.aten.max_pool2d(*args), dtype=dtype)
    if dtype != torch.int8:  # random int8 values tie, and ties pick any of the equal elements
        check(cp.aten_max_pool2d_with_indices, args, expected=torch.ops.aten.max_pool2d_with_indices(*args), dtype=dtype)


def test_max_pool_unbatched():
    x = torch.randn(3, 6, 7)
    args = (x, [2, 2], [2, 1], [1, 0])
    check(cp.aten_max_pool2d_with_indices, args, expected=torch.ops.aten.max_pool2d_with_indices(*args))
    check(cp.aten_max_pool2d, args, expected=torch.ops.aten.max_pool2d(*args))
    x1 = torch.randn(3, 9)
    check(cp.aten_max_pool1d, (x1, [3]), expected=torch.ops.aten.max_pool1d(x1, [3]))


# -- average pooling -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64])
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("n, kernel, stride, padding, dilation, ceil_mode, spatial", POOL_CASES)
def test_avg_pool(dtype, count_include_pad, n, kernel, stride, padding, dilation, ceil_mode, spatial):
    if dtype in (torch.float16, torch.bfloat16) and n == 3:
        pytest.skip("torch has no float16/bfloat16 avg_pool3d on CPU")
    x = rand(2, 3, *spatial, dtype=dtype)
    args = (x, kernel, stride, padding, ceil_mode, count_include_pad)
    fn, ref = {1: (cp.aten_avg_pool1d, torch.ops.aten.avg_pool1d), 2: (cp.aten_avg_pool2d, torch.ops.aten.avg_pool2d),
               3: (cp.aten_avg_pool3d, torch.ops.aten.avg_pool3d)}[n]  # fmt: skip
    check(fn, args, expected=ref(*args), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bfloat16])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_avg_pool_divisor_override(dtype, ceil_mode):
    x = rand(2, 3, 7, 6, dtype=dtype)
    args = (x, [3, 2], [2, 2], [1, 1], ceil_mode, True, 5)
    check(cp.aten_avg_pool2d, args, expected=torch.ops.aten.avg_pool2d(*args), dtype=dtype)
    x3 = rand(1, 2, 4, 5, 3, dtype=dtype)
    if dtype != torch.bfloat16:
        args = (x3, [2, 2, 2], [], [0, 1, 1], ceil_mode, False, 3)
        check(cp.aten_avg_pool3d, args, expected=torch.ops.aten.avg_pool3d(*args), dtype=dtype)


def test_avg_pool_unbatched():
    x = torch.randn(3, 6, 7)
    args = (x, [3, 3], [2, 2], [1, 1], True, False)
    check(cp.aten_avg_pool2d, args, expected=torch.ops.aten.avg_pool2d(*args))
    check(cp.aten_avg_pool2d, args + (4,), expected=torch.ops.aten.avg_pool2d(*args, 4))


# -- adaptive pooling ------------------------------------------------------------------------------

ADAPTIVE_AVG = {1: (cp.aten_adaptive_avg_pool1d, torch.ops.aten.adaptive_avg_pool1d),
                2: (cp.aten_adaptive_avg_pool2d, torch.ops.aten.adaptive_avg_pool2d),
                3: (cp.aten_adaptive_avg_pool3d, torch.ops.aten.adaptive_avg_pool3d)}  # fmt: skip
ADAPTIVE_MAX = {1: (cp.aten_adaptive_max_pool1d, torch.ops.aten.adaptive_max_pool1d),
                2: (cp.aten_adaptive_max_pool2d, torch.ops.aten.adaptive_max_pool2d),
                3: (cp.aten_adaptive_max_pool3d, torch.ops.aten.adaptive_max_pool3d)}  # fmt: skip
ADAPTIVE_CASES = [
    (1, [9], [3]), (1, [7], [3]), (1, [5], [1]), (1, [4], [7]),
    (2, [6, 6], [1, 1]), (2, [6, 8], [3, 4]), (2, [7, 5], [3, 2]), (2, [5, 6], [5, 6]), (2, [3, 4], [5, 2]),
    (3, [4, 4, 4], [2, 2, 2]), (3, [5, 3, 4], [2, 3, 3]), (3, [3, 3, 3], [1, 1, 1]),
]  # fmt: skip
DTYPES_BATCHED = [(dtype, True) for dtype in FLOATS] + [(torch.float32, False)]


@pytest.mark.parametrize("dtype, batched", DTYPES_BATCHED)
@pytest.mark.parametrize("n, spatial, out", ADAPTIVE_CASES)
def test_adaptive_avg_pool(dtype, n, spatial, out, batched):
    x = rand(*((2,) if batched else ()), 3, *spatial, dtype=dtype)
    fn, ref = ADAPTIVE_AVG[n]
    check(fn, (x, out), expected=ref(x, out), dtype=dtype)


@pytest.mark.parametrize("n, fn, ref", [(2, cp.aten__adaptive_avg_pool2d, torch.ops.aten._adaptive_avg_pool2d),
                                        (3, cp.aten__adaptive_avg_pool3d, torch.ops.aten._adaptive_avg_pool3d)])  # fmt: skip
def test__adaptive_avg_pool(n, fn, ref):
    for out in ([2] * n, [1] * n, [3] * n):
        x = rand(2, 3, *[6] * (n - 1), 5)
        check(fn, (x, out), expected=ref(x, out))


@pytest.mark.parametrize("dtype, batched", DTYPES_BATCHED)
@pytest.mark.parametrize("n, spatial, out", ADAPTIVE_CASES)
def test_adaptive_max_pool(dtype, n, spatial, out, batched):
    shape = [2, 3, *spatial] if batched else [3, *spatial]
    # distinct values (exact in every dtype up to 256): with ties the index may name any maximum
    x = (torch.randperm(torch.Size(shape).numel()) % 256).reshape(shape).to(dtype)
    fn, ref = ADAPTIVE_MAX[n]
    check(fn, (x, out), expected=ref(x, out), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n, spatial, out", ADAPTIVE_CASES)
def test_adaptive_max_pool_nan_anywhere_in_a_window(dtype, n, spatial, out):
    # torch: NaN, at the window's last NaN in row-major order (onnxruntime's ReduceMax skips it)
    torch.manual_seed(n)
    x = torch.randn(2, 3, *spatial, dtype=dtype)
    x[torch.rand(x.shape) < 0.15] = float("nan")
    x[torch.rand(x.shape) < 0.05] = float("inf")
    fn, ref = ADAPTIVE_MAX[n]
    check_function(fn, (x, out), expected=ref(x, out))


def test_adaptive_pool_symbolic_size_keeps_its_dims():
    g = GraphBuilder()
    x = g.input("x", types.FLOAT, ["n", 3, "h", "w"])
    with g:
        y = cp.aten_adaptive_avg_pool2d(x, [1, 1])  # global average pooling works on any size
        assert y.shape[:2] == ("n", 3)
        y = cp.aten_adaptive_avg_pool2d(x, [2, 3])  # the windows computed in the graph
        assert y.shape[:2] == ("n", 3)


def run_dynamic(fn, x, dims, *args):
    """fn traced with x's dims named by `dims` (None: keep the size), run on x."""
    g = GraphBuilder()
    shape = [d if d is not None else size for d, size in zip(dims, x.shape)]
    v = g.input("x", types.from_torch(x.dtype), shape)
    args = [g.initializer(f"w{i}", a) if isinstance(a, torch.Tensor) else a for i, a in enumerate(args)]
    with g:
        result = fn(v, *args)
    outs = result if isinstance(result, tuple) else (result,)
    names = [g.output(o, f"y{i}").name for i, o in enumerate(outs)]
    model = g.to_model()
    got = run_model(model, {"x": x.numpy()}, tuple(names))
    return got if isinstance(result, tuple) else got[0]


@pytest.mark.parametrize("dims", [["n", None, None, None], ["n", "c", "h", "w"]])
def test_dynamic_shapes(dims):
    x = torch.randn(2, 3, 9, 8)
    w, b = torch.randn(4, 3, 3, 3), torch.randn(4)
    cases = [
        (cp.aten_conv2d, (w, b, [2, 1], [1, 0], [1, 2]), torch.ops.aten.conv2d),
        (cp.aten_max_pool2d_with_indices, ([3, 2], [2, 2], [1, 1], [1, 1], True), torch.ops.aten.max_pool2d_with_indices),
        (cp.aten_avg_pool2d, ([3, 2], [2, 1], [1, 1], False, False), torch.ops.aten.avg_pool2d),
        (cp.aten_adaptive_avg_pool2d, ([1, 1],), torch.ops.aten.adaptive_avg_pool2d),
        (cp.aten_adaptive_avg_pool2d, ([4, 3],), torch.ops.aten.adaptive_avg_pool2d),
        (cp.aten_adaptive_max_pool2d, ([4, 3],), torch.ops.aten.adaptive_max_pool2d),
    ]
    if dims[2] is None:
        cases += [
            (cp.aten_avg_pool2d, ([3, 2], [2, 1], [1, 1], True, False, 2), torch.ops.aten.avg_pool2d),
        ]
    for fn, args, ref in cases:
        torch.testing.assert_close(run_dynamic(fn, x, dims, *args), ref(x, *args))
    xd = x.double()
    for fn, args, ref in [
        (cp.aten_conv2d, (w.double(), b.double(), [2, 1], [1, 0], [1, 2]), torch.ops.aten.conv2d),
        (cp.aten_conv_transpose2d, (w.double().transpose(0, 1), None, [2, 1], [1, 0], [1, 0]), torch.ops.aten.conv_transpose2d.input),
        (cp.aten_avg_pool2d, ([3, 2], [2, 1], [1, 1], False, False), torch.ops.aten.avg_pool2d),
    ]:
        torch.testing.assert_close(run_dynamic(fn, xd, dims, *args), ref(xd, *args))


# -- NaN and inf propagate as in torch (issue 13) -----------------------------------------------


@pytest.mark.usefixtures("exact_nan_mode")
def test_max_pool_window_with_nan_is_nan_at_its_last_nan():
    x = torch.tensor([[[float("nan"), 1.0, float("nan"), 3.0, 5.0]]])
    args = (x, [3], [1], [0], [1], False)
    check(cp.aten_max_pool1d_with_indices, args, expected=torch.ops.aten.max_pool1d_with_indices(*args))
    check(cp.aten_max_pool1d, args, expected=torch.ops.aten.max_pool1d(*args))


@pytest.mark.usefixtures("exact_nan_mode")
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_max_pool_propagates_nan_and_inf(n, dtype):
    x = with_nan_inf(torch.randn(2, 3, *[7] * n, dtype=dtype))
    for dilation, ceil_mode in [(1, True), (2, False)]:
        args = (x, [3] * n, [2] * n, [1] * n, [dilation] * n, ceil_mode)
        check(getattr(cp, f"aten_max_pool{n}d"), args, expected=getattr(torch.ops.aten, f"max_pool{n}d")(*args), dtype=dtype)
        check(getattr(cp, f"aten_max_pool{n}d_with_indices"), args, dtype=dtype,
              expected=getattr(torch.ops.aten, f"max_pool{n}d_with_indices")(*args))  # fmt: skip


@pytest.mark.usefixtures("exact_nan_mode")
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool2d_float32_keeps_negative_zeros_infinities_and_nan_windows(ceil_mode):
    # float32 2-D max pooling multiplies MaxPool by 1-or-NaN per window (Conv of Relu, Sigmoid):
    # windows of -0.0 only, of -inf only, of +inf and -inf together, of huge values whose sum
    # overflows, and with NaN, some reaching into the padding. (No +0.0: onnxruntime's MaxPool
    # may keep either zero of a window holding both, torch the first.)
    big = torch.finfo(torch.float32).max
    row = [-0.0, -0.0, float("-inf"), float("-inf"), float("inf"), float("-inf"), big, big, float("nan"), -0.0, -0.0, -1.0, -2.0]
    x = torch.tensor([row, row[::-1], [-0.0] * 13, [float("nan")] * 13]).reshape(1, 1, 4, 13).repeat(2, 3, 1, 1)
    for kernel, stride, pad, dilation in [([2, 2], [2, 2], [0, 0], [1, 1]), ([3, 3], [2, 1], [1, 1], [1, 1]), ([2, 3], [1, 2], [1, 1], [1, 2])]:
        args = (x, kernel, stride, pad, dilation, ceil_mode)
        expected = torch.ops.aten.max_pool2d(*args)
        got = run_traced(cp.aten_max_pool2d, *args)
        torch.testing.assert_close(got, expected, equal_nan=True, rtol=0, atol=0)
        assert torch.equal(got.nan_to_num().signbit(), expected.nan_to_num().signbit())


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_adaptive_avg_pool_propagates_nan_and_inf_only_to_its_windows(n, dtype):
    x = with_nan_inf(torch.randn(2, 3, *[8] * n, dtype=dtype), 0.05)
    for out in ([5, 7, 4][:n], [3] * n, [9] * n):
        expected = getattr(torch.ops.aten, f"adaptive_avg_pool{n}d")(x, out)
        check(getattr(cp, f"aten_adaptive_avg_pool{n}d"), (x, out), expected=expected, dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [2, 3])
def test_adaptive_avg_pool_sums_rows_first_as_torch(dtype, n):
    """Issue 13, fuzz `huge`: torch adds each window in row-major order, so max and -max in one
    row cancel before the next row's small values come (summing columns first lost them)."""
    x = torch.randn((1, 8) + (8,) * n, dtype=dtype)
    info = torch.finfo(dtype)
    x.view(-1)[:5] = torch.tensor([info.max, -info.max, info.tiny, info.max / 3, -info.tiny], dtype=dtype)
    out = [5, 7, 4][:n]
    fn, ref = (cp.aten_adaptive_avg_pool2d, torch.ops.aten._adaptive_avg_pool2d) if n == 2 else (cp.aten_adaptive_avg_pool3d, torch.ops.aten._adaptive_avg_pool3d)
    check_function(fn, (x, out), expected=ref(x, out))
