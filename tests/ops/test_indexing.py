import pytest
import torch

from graph_builder import BFLOAT16, FLOAT, GraphBuilder, op, types
from torchlib.ops import indexing as I
from torchlib.ops.symbolic import aten_sym_size_int as sym_size
from torchlib.ops.symbolic import sub as sym_sub
from torchlib.testing import check_function, run_dynamic

aten = torch.ops.aten
DTYPES = [torch.float32, torch.float16, torch.float64, torch.int32, torch.int64, torch.bool]
INT64_MAX = 9223372036854775807


def make(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 5
    return x > 0 if dtype == torch.bool else x.to(dtype)


def run_bf16(fn, *args):
    """fn traced with its bfloat16 tensor arguments made inside the graph from float32 inputs
    (onnxruntime's Python API cannot feed bfloat16); the bfloat16 result as a torch tensor."""
    g = GraphBuilder()
    feeds = {}

    def to_input(a):
        if isinstance(a, list):
            return [to_input(t) for t in a]
        if not isinstance(a, torch.Tensor):
            return a
        bf16 = a.dtype == torch.bfloat16
        v = g.input(f"x{len(feeds)}", FLOAT if bf16 else types.from_torch(a.dtype), list(a.shape))
        feeds[v.name] = a.float() if bf16 else a
        return op.Cast(v, to=BFLOAT16.onnx) if bf16 else v

    with g:
        out = fn(*(to_input(a) for a in args))
        assert out.dtype is BFLOAT16
        result = g.output(op.Cast(out, to=FLOAT.onnx))
    g.to_model()  # checked
    return g.run(feeds, [result])[0].to(torch.bfloat16)


# -- slice and select ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "dim, start, end, step",
    [(0, None, None, 1), (1, 1, None, 1), (1, -3, -1, 1), (0, 0, INT64_MAX, 2), (-1, 2, 100, 3),
     (1, 3, 1, 1), (0, -100, 2, 1), (1, 0, 4, 1)],
)
def test_slice(dtype, dim, start, end, step):
    x = make((3, 4, 5), dtype)
    check_function(I.aten_slice, (x, dim, start, end, step), expected=aten.slice.Tensor(x, dim, start, end, step))


def test_slice_dynamic():
    x = make((3, 6))
    out = run_dynamic(lambda v: I.aten_slice(v, 1, 1, sym_sub(sym_size(v, 1), 1)), x)
    torch.testing.assert_close(out, x[:, 1:-1])
    torch.testing.assert_close(run_dynamic(I.aten_slice, x, 0, 0, INT64_MAX, 2), x[::2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim, index", [(0, 1), (1, -1), (-1, 0)])
def test_select(dtype, dim, index):
    x = make((3, 4, 5), dtype)
    check_function(I.aten_select, (x, dim, index), expected=x.select(dim, index))


def test_select_dynamic_index():
    x = make((3, 4))
    out = run_dynamic(lambda v: I.aten_select(v, 1, sym_sub(sym_size(v, 1), 1)), x)
    torch.testing.assert_close(out, x[:, -1])


# -- advanced indexing -----------------------------------------------------------------------------

IDX = torch.tensor([2, 0, -1])
IDX2 = torch.tensor([[1], [0]])


@pytest.mark.parametrize(
    "indices",
    [
        [IDX],
        [None, IDX],
        [None, None, IDX.to(torch.int32)],
        [IDX, torch.tensor([1, 1, 0])],
        [IDX2, IDX],  # broadcast to (2, 3)
        [None, IDX2, IDX],  # adjacent, not first: stays in place
        [IDX2, None, IDX],  # not adjacent: broadcast dims go first
        [torch.tensor(1), None, IDX],
        [make((3, 4)) > 0],
        [None, make((4, 5)) > 0],
        [make((3,)) > 0, None, IDX],
        [torch.tensor([], dtype=torch.int64)],
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_index(indices, dtype):
    x = make((3, 4, 5), dtype)
    check_function(I.aten_index, (x, indices), expected=aten.index.Tensor(x, indices))


def test_index_dynamic():
    x = make((3, 4, 5))
    indices = [IDX2, None, IDX]
    torch.testing.assert_close(run_dynamic(I.aten_index, x, indices), aten.index.Tensor(x, indices))
    indices = [None, make((4, 5)) > 0]
    torch.testing.assert_close(run_dynamic(I.aten_index, x, indices), aten.index.Tensor(x, indices))


@pytest.mark.parametrize(
    "indices, values",
    [
        ([IDX], make((5,))),
        ([None, torch.tensor([3, 1])], make((3, 2, 5))),
        ([IDX, torch.tensor([1, 1, 0])], make((3, 5))),
        ([None, IDX2, torch.tensor([0, 4, 1])], make((3, 2, 3))),
        ([IDX2, None, torch.tensor([0, 4, 1])], make((2, 3, 4))),
        ([IDX2, None, torch.tensor([0, 4, 1])], make((4,))),
        ([make((3, 4)) > 0], torch.tensor(7.0)),
        ([None, make((4, 5)) > 0], make((1,))),
        ([make((3, 4, 5)) > 0], torch.arange(int((make((3, 4, 5)) > 0).sum())).float()),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool])
def test_index_put(indices, values, dtype):
    x = make((3, 4, 5), dtype, seed=1)
    values = values.to(dtype)
    check_function(I.aten_index_put, (x, indices, values), expected=aten.index_put(x, indices, values))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_index_put_accumulate(dtype):
    x = make((3, 4), dtype)
    indices = [torch.tensor([0, 2, 0, 0])]
    values = make((4, 4), dtype, seed=2)
    tol = {"rtol": 1e-2, "atol": 1e-2} if dtype == torch.float16 else {}  # onnxruntime sums float16 in float
    check_function(I.aten_index_put, (x, indices, values, True), expected=aten.index_put(x, indices, values, True),
                   **tol)
    mask = [make((3, 4), seed=3) > 0]
    check_function(I.aten_index_put, (x, mask, values[0, 0], True), expected=aten.index_put(x, mask, values[0, 0], True))


def test_index_put_dynamic_and_bf16():
    x = make((3, 4, 5))
    indices, values = [IDX2, None, torch.tensor([0, 4, 1])], make((4,))
    torch.testing.assert_close(run_dynamic(I.aten_index_put, x, indices, values), aten.index_put(x, indices, values))
    xb, vb = x.to(torch.bfloat16), values.to(torch.bfloat16)
    torch.testing.assert_close(run_bf16(I.aten_index_put, xb, indices, vb, True), aten.index_put(xb, indices, vb, True))
    mask = [make((3, 4)) > 0]
    torch.testing.assert_close(run_bf16(I.aten_index_put, xb, mask, vb[0]), aten.index_put(xb, mask, vb[0]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_and_embedding(dtype):
    x = make((4, 3), dtype)
    index = torch.tensor([2, 0, 3, 0])
    check_function(I.aten_index_select, (x, 0, index), expected=torch.index_select(x, 0, index))
    check_function(I.aten_index_select, (x, -1, torch.tensor(1)), expected=torch.index_select(x, -1, torch.tensor(1)))
    check_function(I.aten_index_select, (make((), dtype), 0, torch.tensor([0])),
                   expected=torch.index_select(make((), dtype), 0, torch.tensor([0])))
    check_function(I.aten_embedding, (x, IDX2), expected=aten.embedding(x, IDX2))
    check_function(I.aten_embedding, (x, IDX2.to(torch.int32), 0), expected=aten.embedding(x, IDX2.to(torch.int32), 0))


# -- gather / scatter ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim, index", [(0, torch.tensor([[0, 2], [1, 0]])), (1, torch.tensor([[2, 0, 1]])),
                                        (-1, torch.zeros(3, 0, dtype=torch.int64))])
def test_gather(dtype, dim, index):
    x = make((3, 4), dtype)
    check_function(I.aten_gather, (x, dim, index), expected=torch.gather(x, dim, index))


@pytest.mark.parametrize("index", [torch.tensor(0), torch.tensor([0])])
def test_gather_scalar(index):
    check_function(I.aten_gather, (make(()), 0, index), expected=torch.gather(make(()), 0, index))


@pytest.mark.parametrize("index", [torch.zeros(0, dtype=torch.uint8), torch.zeros(2, 0, dtype=torch.int64)])
def test_gather_empty_index(index):
    x = make((5,))
    check_function(I.aten_gather, (x, 0, index), expected=torch.gather(x, 0, index))


def test_take_along_dim():
    x = make((3, 4))
    idx = torch.tensor([[0, 3], [1, 1], [2, 0]])
    check_function(I.aten_take_along_dim, (x, idx, 1), expected=torch.take_along_dim(x, idx, 1))
    check_function(I.aten_take_along_dim, (x, idx), expected=torch.take_along_dim(x, idx))
    idx = torch.tensor([[1, 0, 2, 2]])  # broadcast over dim 0? no: dim 0 is the gathered one
    check_function(I.aten_take_along_dim, (x, idx, 0), expected=torch.take_along_dim(x, idx, 0))
    idx = torch.tensor([[2], [0]])[None]  # (1, 2, 1) against (3, 1, 4): broadcast both ways
    y = make((3, 1, 4))
    check_function(I.aten_take_along_dim, (y, idx, 2), expected=torch.take_along_dim(y, idx, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_take_along_dim_wraps_indices_modulo_the_dim(dtype):
    # torch: gather(self, dim, remainder(indices, size)): int64 extremes and a size-1 dim included
    x = torch.arange(25, dtype=dtype).reshape(5, 5)
    idx = torch.tensor([[2**63 - 1, -(2**63), -1, 0, 2**63 - 2]] * 5)
    check_function(I.aten_take_along_dim, (x, idx, 0), expected=torch.take_along_dim(x, idx, 0))
    wide = torch.tensor([[7], [-7], [5], [-1], [0]])
    check_function(I.aten_take_along_dim, (x, wide, 1), expected=torch.take_along_dim(x, wide, 1))
    row = x[:1].clone()
    idx = torch.tensor([[0, 3, 1, 4, 2]])  # the fuzz pass's size-1 input: every index is 0 modulo 1
    check_function(I.aten_take_along_dim, (row, idx, 0), expected=torch.take_along_dim(row, idx, 0))


SCATTER_INDEX = torch.tensor([[0, 1, 2], [2, 0, 1]])  # no duplicates along dim 0 per column


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter(dtype):
    x = make((3, 4), dtype)
    src = make((2, 5), dtype, seed=1)
    check_function(I.aten_scatter_src, (x, 0, SCATTER_INDEX, src), expected=torch.scatter(x, 0, SCATTER_INDEX, src))
    value = True if dtype == torch.bool else 2
    check_function(I.aten_scatter_value, (x, 1, SCATTER_INDEX, value),
                   expected=torch.scatter(x, 1, SCATTER_INDEX, value))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64])
def test_scatter_add_and_reduce(dtype):
    x = make((3, 4), dtype)
    src = make((2, 5), dtype, seed=1)
    index = torch.tensor([[0, 1, 0], [0, 0, 1]])  # duplicates: they accumulate
    check_function(I.aten_scatter_add, (x, 0, index, src), expected=torch.scatter_add(x, 0, index, src))
    for reduce in ["add", "multiply"]:
        check_function(I.aten_scatter_reduce_src, (x, 0, index, src), {"reduce": reduce},
                       expected=aten.scatter.reduce(x, 0, index, src, reduce=reduce))
        check_function(I.aten_scatter_reduce_value, (x, 1, index, 3), {"reduce": reduce},
                       expected=aten.scatter.value_reduce(x, 1, index, 3, reduce=reduce))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int32, torch.int64])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(dtype, reduce, include_self):
    x = make((3, 4), dtype)
    src = make((3, 4), dtype, seed=1)
    index = torch.tensor([[0, 1, 0, 0], [0, 0, 1, 2], [1, 0, 1, 0]])
    expected = torch.scatter_reduce(x, 0, index, src, reduce, include_self=include_self)
    tol = {"rtol": 1e-2, "atol": 1e-2} if dtype == torch.float16 else {}
    check_function(I.aten_scatter_reduce, (x, 0, index, src, reduce), {"include_self": include_self},
                   expected=expected, **tol)


def test_scatter_bool_amax_and_bf16():
    x = make((3, 4), torch.bool)
    index = torch.tensor([[0, 1, 0, 0]])
    src = make((1, 4), torch.bool, seed=4)
    check_function(I.aten_scatter_reduce, (x, 0, index, src, "amax"),
                   expected=torch.scatter_reduce(x, 0, index, src, "amax"))
    xb, sb = make((3, 4)).to(torch.bfloat16), make((1, 4)).to(torch.bfloat16)
    torch.testing.assert_close(run_bf16(I.aten_scatter_add, xb, 0, index, sb), torch.scatter_add(xb, 0, index, sb))
    torch.testing.assert_close(run_bf16(I.aten_scatter_value, xb, 0, index, 1.5), torch.scatter(xb, 0, index, 1.5))


def test_scatter_scalar():
    x, i, s = make(()), torch.tensor(0), make((), seed=1)
    check_function(I.aten_scatter_src, (x, 0, i, s), expected=torch.scatter(x, 0, i, s))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
@pytest.mark.parametrize("dim, alpha", [(0, 1), (1, 2), (-1, 1)])
def test_index_add(dtype, dim, alpha):
    x = make((3, 4), dtype)
    index = torch.tensor([0, 2, 0])
    source = make((3, 4), dtype, seed=1).narrow(dim, 0, 3) if dim == 0 else make((3, 3), dtype, seed=1)
    check_function(I.aten_index_add, (x, dim, index, source), {"alpha": alpha},
                   expected=torch.index_add(x, dim, index, source, alpha=alpha))


def test_index_add_bool():
    x, source = make((3, 4), torch.bool), make((2, 4), torch.bool, seed=1)
    index = torch.tensor([2, 0])
    for alpha in [True, False]:
        check_function(I.aten_index_add, (x, 0, index, source), {"alpha": alpha},
                       expected=torch.index_add(x, 0, index, source, alpha=alpha))


def test_index_add_scalar():
    x, index, source = make(()), torch.tensor([0]), make((), seed=1)
    check_function(I.aten_index_add, (x, 0, index, source), {"alpha": 2},
                   expected=torch.index_add(x, 0, index, source, alpha=2))


# -- slice_scatter / select_scatter ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim, start, end, step", [(0, None, None, 1), (1, 1, 4, 2), (1, -2, None, 1),
                                                   (0, 1, INT64_MAX, 1), (1, 3, 1, 1)])
def test_slice_scatter(dtype, dim, start, end, step):
    x = make((3, 5), dtype)
    src = aten.slice.Tensor(make((3, 5), dtype, seed=1), dim, start, end, step)
    check_function(I.aten_slice_scatter, (x, src, dim, start, end, step),
                   expected=torch.slice_scatter(x, src, dim, start, end, step))


def test_slice_scatter_dynamic():
    x = make((3, 5))
    src = make((3, 2), seed=1)
    out = run_dynamic(lambda a, b: I.aten_slice_scatter(a, b, 1, sym_sub(sym_size(a, 1), 2)), x, src)
    torch.testing.assert_close(out, torch.slice_scatter(x, src, 1, 3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim, index", [(0, 1), (1, -1), (-1, 2)])
def test_select_scatter(dtype, dim, index):
    x = make((3, 4), dtype)
    src = make((3, 4), dtype, seed=1).select(dim, 0)
    check_function(I.aten_select_scatter, (x, src, dim, index), expected=torch.select_scatter(x, src, dim, index))
    torch.testing.assert_close(run_dynamic(I.aten_select_scatter, x, src, dim, index),
                               torch.select_scatter(x, src, dim, index))


# -- regression (issue 13): NaN in scatter_reduce amax/amin, float64 scalar values --------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64], ids=str)
@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_extrema_propagate_nan(dtype, reduce, include_self):
    nan = float("nan")
    self = torch.tensor([1.0, nan, 3.0, 4.0], dtype=dtype)
    src = torch.tensor([5.0, nan, 0.0, 2.0, 1.0, 7.0], dtype=dtype)
    index = torch.tensor([0, 0, 2, 2, 1, 1])
    expected = torch.ops.aten.scatter_reduce.two(self, 0, index, src, reduce, include_self=include_self)
    check_function(I.aten_scatter_reduce, (self, 0, index, src, reduce), {"include_self": include_self}, expected=expected)


def test_scatter_value_float64_keeps_full_precision():
    # op.CastLike(<python float>, x) made a float32 constant: 0.1 became 0.10000000149011612
    x, index = torch.zeros(3, dtype=torch.float64), torch.tensor([0, 2])
    expected = torch.ops.aten.scatter.value(x, 0, index, 0.1)
    check_function(I.aten_scatter_value, (x, 0, index, 0.1), expected=expected, rtol=0, atol=0)
