import pytest
import torch

from graph_builder import BFLOAT16, FLOAT, GraphBuilder, op
from torchlib.ops import shape as S
from torchlib.ops.symbolic import aten_sym_size_int as sym_size
from torchlib.testing import check_function, run_dynamic, run_model

aten = torch.ops.aten
DTYPES = [torch.float32, torch.float16, torch.float64, torch.int32, torch.int64, torch.bool]


def make(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 5
    return x > 0 if dtype == torch.bool else x.to(dtype)


def run_bf16(fn, *args):
    """fn traced with its bfloat16 tensor arguments made inside the graph from float32 inputs
    (onnxruntime's Python API cannot feed bfloat16); the bfloat16 result as a torch tensor."""
    g = GraphBuilder()
    feeds = {}
    with g:
        inputs = []
        for a in args:
            if isinstance(a, torch.Tensor):
                assert a.dtype == torch.bfloat16
                v = g.input(f"x{len(feeds)}", FLOAT, list(a.shape))
                feeds[v.name] = a.float()
                a = op.Cast(v, to=BFLOAT16.onnx)
            inputs.append(a)
        out = fn(*inputs)
        assert out.dtype is BFLOAT16
        result = g.output(op.Cast(out, to=FLOAT.onnx))
    g.to_model()  # checked
    return g.run(feeds, [result])[0].to(torch.bfloat16)


# -- views ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, size", [((2, 3, 4), [6, -1]), ((2, 3, 4), [24]), ((1,), []), ((), [1, 1]),
                                         ((0, 3), [3, 0]), ((0, 3), [-1, 3])])
def test_view(dtype, shape, size):
    x = make(shape, dtype)
    check_function(S.aten_view, (x, size), expected=aten.view(x, size))
    check_function(S.aten_reshape, (x, size), expected=aten.reshape(x, size))


def test_view_dynamic_sizes():
    x = make((2, 3, 4))
    out = run_dynamic(lambda v: S.aten_view(v, [sym_size(v, 0), -1, sym_size(v, 2)]), x)
    torch.testing.assert_close(out, x)
    out = run_dynamic(lambda v: S.aten_view(v, [sym_size(v, 0), 12]), x)
    torch.testing.assert_close(out, x.view(2, 12))


def test_view_as_and_alias():
    x, y = make((2, 6)), make((3, 4))
    check_function(S.aten_view_as, (x, y), expected=x.view_as(y))
    torch.testing.assert_close(run_dynamic(S.aten_view_as, x, y), x.view_as(y))
    check_function(S.aten_alias, (x,), expected=x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_permute_transpose(dtype):
    x = make((2, 3, 4), dtype)
    check_function(S.aten_permute, (x, [2, 0, 1]), expected=x.permute(2, 0, 1))
    check_function(S.aten_permute, (x, [-1, -3, 1]), expected=x.permute(-1, -3, 1))
    check_function(S.aten_transpose, (x, 0, -1), expected=x.transpose(0, -1))
    check_function(S.aten_permute, (make(()), []), expected=make(()))
    check_function(S.aten_transpose, (make(()), 0, -1), expected=make(()).transpose(0, -1))


def test_movedim():
    x = make((2, 3, 4, 5))
    check_function(S.aten_movedim, (x, 0, -1), expected=torch.movedim(x, 0, -1))
    check_function(S.aten_movedim_intlist, (x, [0, 3], [2, 0]), expected=torch.movedim(x, [0, 3], [2, 0]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_expand(dtype):
    x = make((3, 1), dtype)
    check_function(S.aten_expand, (x, [2, -1, 4]), expected=x.expand(2, -1, 4))
    check_function(S.aten_expand, (x, [3, 0]), expected=x.expand(3, 0))
    check_function(S.aten_expand_as, (x, make((5, 3, 2))), expected=x.expand_as(make((5, 3, 2))))


def test_expand_dynamic_and_bf16():
    x, y = make((3, 1)), make((2, 3, 4))
    out = run_dynamic(lambda a, b: S.aten_expand(a, [sym_size(b, 0), -1, sym_size(b, 2)]), x, y)
    torch.testing.assert_close(out, x.expand(2, 3, 4))
    xb = x.to(torch.bfloat16)
    torch.testing.assert_close(run_bf16(lambda v: S.aten_expand(v, [2, 3, 4]), xb), xb.expand(2, 3, 4))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_unsqueeze(dim):
    x = make((2, 3), torch.int64)
    check_function(S.aten_unsqueeze, (x, dim), expected=x.unsqueeze(dim))


def test_unsqueeze_scalar():
    check_function(S.aten_unsqueeze, (make(()), -1), expected=make(()).unsqueeze(-1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bool])
def test_squeeze(dtype):
    x = make((1, 3, 1, 2), dtype)
    check_function(S.aten_squeeze, (x,), expected=x.squeeze())
    check_function(S.aten_squeeze_dim, (x, 2), expected=x.squeeze(2))
    check_function(S.aten_squeeze_dim, (x, 1), expected=x.squeeze(1))  # not 1: unchanged
    check_function(S.aten_squeeze_dims, (x, [0, -2, 1]), expected=aten.squeeze.dims(x, [0, -2, 1]))
    check_function(S.aten_squeeze_dim, (make(()), 0), expected=make(()).squeeze(0))


@pytest.mark.parametrize("shape, start, end", [((2, 3, 4), 0, -1), ((2, 3, 4), 1, 2), ((2, 3, 4), 1, 1),
                                               ((2, 0, 4), 0, 1), ((), 0, -1), ((5,), 0, 0)])
def test_flatten(shape, start, end):
    x = make(shape)
    check_function(S.aten_flatten, (x, start, end), expected=x.flatten(start, end))


def test_flatten_unflatten_dynamic():
    x = make((2, 3, 4, 5))
    torch.testing.assert_close(run_dynamic(S.aten_flatten, x, 1, 2), x.flatten(1, 2))
    torch.testing.assert_close(run_dynamic(S.aten_unflatten, x, 2, [2, -1]), x.unflatten(2, [2, -1]))


@pytest.mark.parametrize("dim, sizes", [(1, [3, 1]), (-1, [2, -1]), (0, [1, 2])])
def test_unflatten(dim, sizes):
    x = make((2, 3, 4))
    check_function(S.aten_unflatten, (x, dim, sizes), expected=x.unflatten(dim, sizes))


# -- joining and splitting -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "tensors, dim",
    [
        ([make((2, 3)), make((4, 3))], 0),
        ([make((2, 3), torch.int32), make((2, 1), torch.float16)], -1),
        ([make((2, 3), torch.int64), make((0,), torch.float64), make((1, 3), torch.int64)], 0),
        ([make((2, 3), torch.bool), make((2, 3), torch.bool)], 1),
        ([make((2, 3), torch.bool), make((2, 3), torch.int32)], 1),
        ([make((0,)), make((0,), torch.int32)], 0),
        ([make((3,), torch.int32)], 0),
        ([make((2, 0)), make((2, 2))], 1),
    ],
)
def test_cat(tensors, dim):
    check_function(S.aten_cat, (tensors, dim), expected=torch.cat(tensors, dim))


def test_cat_dynamic():
    a, b = make((2, 3)), make((2, 5))
    torch.testing.assert_close(run_dynamic(S.aten_cat, [a, b], 1), torch.cat([a, b], 1))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stack(dim):
    tensors = [make((2, 3), torch.int64), make((2, 3), torch.float32, seed=1)]
    check_function(S.aten_stack, (tensors, dim), expected=torch.stack(tensors, dim))
    check_function(S.aten_stack, ([tensors[0]], dim), expected=torch.stack([tensors[0]], dim))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
@pytest.mark.parametrize("size, dim", [(2, 0), (3, 1), (4, -1), (10, 1)])
def test_split(dtype, size, dim):
    x = make((5, 7), dtype)
    check_function(S.aten_split, (x, size, dim), expected=torch.split(x, size, dim))


def test_split_sizes():
    x = make((5, 7))
    check_function(S.aten_split_with_sizes, (x, [2, 0, 5], 1), expected=torch.split(x, [2, 0, 5], 1))
    check_function(S.aten_split_sizes, (x, [1, 4], 0), expected=aten.split.sizes(x, [1, 4], 0))
    check_function(S.aten_split, (make((0, 2)), 2), expected=torch.split(make((0, 2)), 2))
    out = run_dynamic(lambda v: S.aten_split_with_sizes(v, [2, S.sym.sub(sym_size(v, 1), 2)], 1), x)
    torch.testing.assert_close(out, list(torch.split(x, [2, 5], 1)))


def test_split_dynamic_dim_is_an_error():
    with pytest.raises(ValueError, match="dynamic dimension"):
        run_dynamic(S.aten_split, make((4, 2)), 2)


@pytest.mark.parametrize("n, chunks", [(6, 3), (5, 3), (5, 4), (2, 5), (0, 3)])
def test_chunk(n, chunks):
    x = make((n, 2))
    check_function(S.aten_chunk, (x, chunks), expected=torch.chunk(x, chunks))


@pytest.mark.parametrize("rows", [6, 0])
def test_chunk_of_a_dynamic_multiple(rows):
    """A dynamic size that is a multiple of the chunk count (2*batch into 2) always gives that
    many equal chunks; a size that may not be one is still refused."""
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["2*batch", 3])
    with g:
        parts = S.aten_chunk(x, 2)
    other = GraphBuilder()
    with other, pytest.raises(ValueError, match="dynamic dimension"):
        S.aten_chunk(other.input("y", FLOAT, ["batch", 3]), 2)
    names = [g.output(p, f"y{i}").name for i, p in enumerate(parts)]
    data = make((rows, 3))
    got = run_model(g.to_model(), {"x": data.numpy()}, tuple(names))
    assert [tuple(t.shape) for t in got] == [tuple(t.shape) for t in torch.chunk(data, 2)]
    for a, b in zip(got, torch.chunk(data, 2)):
        torch.testing.assert_close(torch.as_tensor(a), b)


@pytest.mark.parametrize("shape, dim", [((3, 2), 0), ((3, 2), -1), ((1, 4), 0)])
def test_unbind(shape, dim):
    x = make(shape, torch.int32)
    check_function(S.aten_unbind, (x, dim), expected=list(torch.unbind(x, dim)))


def test_unbind_empty():
    assert S.aten_unbind(make((0, 2)), 0) == [] == list(torch.unbind(make((0, 2)), 0))


# -- repeating and reordering ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_tile(dtype):
    x = make((2, 3), dtype)
    check_function(S.aten_repeat, (x, [2, 1, 3]), expected=x.repeat(2, 1, 3))
    check_function(S.aten_repeat, (x, [1, 0]), expected=x.repeat(1, 0))
    check_function(S.aten_tile, (x, [2]), expected=x.tile(2))
    check_function(S.aten_tile, (x, [2, 1, 1]), expected=x.tile((2, 1, 1)))
    check_function(S.aten_repeat, (make((), dtype), []), expected=make((), dtype).repeat([]))


def test_repeat_dynamic_and_bf16():
    x = make((2, 3))
    torch.testing.assert_close(run_dynamic(lambda v: S.aten_repeat(v, [sym_size(v, 0), 1]), x), x.repeat(2, 1))
    xb = x.to(torch.bfloat16)
    torch.testing.assert_close(run_bf16(S.aten_repeat, xb, [2, 2]), xb.repeat(2, 2))


@pytest.mark.parametrize("dims", [[0], [-1], [0, 1, 2], []])
def test_flip(dims):
    x = make((2, 3, 4), torch.int32)
    check_function(S.aten_flip, (x, dims), expected=torch.flip(x, dims))


@pytest.mark.parametrize("shifts, dims", [([1], [0]), ([-2], [1]), ([7, 1], [1, 0]), ([5], ()), ([0], [1])])
def test_roll(shifts, dims):
    x = make((3, 4), torch.int64)
    check_function(S.aten_roll, (x, shifts, dims), expected=torch.roll(x, shifts, dims))
    torch.testing.assert_close(run_dynamic(S.aten_roll, x, shifts, dims), torch.roll(x, shifts, dims))


@pytest.mark.parametrize("dim, start, length", [(0, 1, 2), (1, -3, 2), (-1, 0, 4), (1, 2, 0)])
def test_narrow(dim, start, length):
    x = make((3, 4))
    check_function(S.aten_narrow, (x, dim, start, length), expected=x.narrow(dim, start, length))
    s = torch.tensor(start)
    check_function(S.aten_narrow_tensor, (x, dim, s, length), expected=aten.narrow.Tensor(x, dim, s, length))
    torch.testing.assert_close(run_dynamic(S.aten_narrow, x, dim, start, length), x.narrow(dim, start, length))


# -- padding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES + [torch.int16, torch.int8, torch.uint8])
@pytest.mark.parametrize("pad", [[1, 2], [1, -1, 0, 2], [-1, 0, 2, 1, 1, 1], []])
def test_constant_pad_nd(dtype, pad):
    x = make((2, 3, 4), dtype)
    value = 1 if dtype == torch.bool else 3
    check_function(S.aten_constant_pad_nd, (x, pad, value), expected=aten.constant_pad_nd(x, pad, value))


def test_constant_pad_dynamic_and_bf16():
    x = make((2, 3))
    out = run_dynamic(lambda v: S.aten_constant_pad_nd(v, [sym_size(v, 0), 1], -1.5), x)
    torch.testing.assert_close(out, aten.constant_pad_nd(x, [2, 1], -1.5))
    xb = x.to(torch.bfloat16)
    torch.testing.assert_close(run_bf16(S.aten_constant_pad_nd, xb, [1, 1, 1, 1], 2.0),
                               aten.constant_pad_nd(xb, [1, 1, 1, 1], 2.0))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pad_modes(mode, dtype):
    x = make((1, 2, 4, 5), dtype)
    pad = [1, 2, 2, 1]
    value = 0.5 if mode == "constant" else None
    check_function(S.aten_pad, (x, pad, mode, value), expected=aten.pad(x, pad, mode, value))


@pytest.mark.parametrize("pad", [[-4, 5, 0, 0], [-2, 1, 2, -3], [0, 0, -1, -1]])
def test_pad_replicate_negative(pad):
    x = make((2, 3, 4, 4))
    check_function(S.aten_pad, (x, pad, "replicate"), expected=aten.pad(x, pad, "replicate"))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_empty(mode):
    x = make((0, 3, 3))
    check_function(S.aten_pad, (x, [1, 1], mode), expected=aten.pad(x, [1, 1], mode))


def test_pad_unknown_mode():
    with pytest.raises(ValueError, match="pad mode"):
        S.aten_pad(make((2, 2)), [1, 1], "symmetric")


# -- triangles, diagonals, windows ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES + [torch.int8, torch.int16, torch.uint8])
@pytest.mark.parametrize("diagonal", [0, 1, -2, 5])
def test_tril_triu(dtype, diagonal):
    x = make((2, 3, 4), dtype)
    check_function(S.aten_tril, (x, diagonal), expected=torch.tril(x, diagonal))
    check_function(S.aten_triu, (x, diagonal), expected=torch.triu(x, diagonal))


def test_tril_bf16():
    x = make((3, 3)).to(torch.bfloat16)
    torch.testing.assert_close(run_bf16(S.aten_tril, x, -1), torch.tril(x, -1))


@pytest.mark.parametrize("shape, offset, dim1, dim2",
                         [((3, 4), 0, 0, 1), ((3, 4), 1, 0, 1), ((3, 4), -2, 0, 1), ((3, 4), 5, 0, 1),
                          ((2, 3, 4), 0, 2, 0), ((2, 3, 4), -1, -1, 1), ((2, 0, 3), 0, 1, 2)])
def test_diagonal(shape, offset, dim1, dim2):
    x = make(shape, torch.int64)
    check_function(S.aten_diagonal, (x, offset, dim1, dim2), expected=torch.diagonal(x, offset, dim1, dim2))


@pytest.mark.parametrize("offset", [0, 2, -1])
def test_diagonal_dynamic(offset):
    x = make((2, 3, 4))
    torch.testing.assert_close(run_dynamic(S.aten_diagonal, x, offset, 1, 2), torch.diagonal(x, offset, 1, 2))


@pytest.mark.parametrize("shape, dim, size, step", [((7,), 0, 2, 1), ((2, 7), 1, 3, 2), ((5, 2), 0, 5, 1),
                                                    ((4, 3, 2), -2, 2, 1), ((), 0, 1, 1)])
def test_unfold(shape, dim, size, step):
    x = make(shape)
    check_function(S.aten_unfold, (x, dim, size, step), expected=x.unfold(dim, size, step))
    if shape:
        torch.testing.assert_close(run_dynamic(S.aten_unfold, x, dim, size, step), x.unfold(dim, size, step))


@pytest.mark.parametrize("batch", [3, 0])
def test_views_with_one_dynamic_size_have_constant_shapes(batch):
    """levit's `bn(x.flatten(0, 1)).reshape_as(x)` with a dynamic batch: -1 stands for the batch
    (also for an empty one), no Shape / Concat arithmetic."""
    from torchlib.ops.shape_aliases import aten_reshape_as

    g = GraphBuilder()
    v = g.input("x", FLOAT, ["n", 4, 5])
    with g:
        flat = S.aten_flatten(v, 0, 1)
        merged = S.aten_view(v, [op.Mul(sym_size(v, 0), 4), 5])
        back = aten_reshape_as(op.Neg(flat), v)
    names = [g.output(y, f"y{i}").name for i, y in enumerate((flat, merged, back))]
    model = g.to_model()
    assert sorted({n.op_type for n in model.graph.node}) == ["Neg", "Reshape"]
    x = make((batch, 4, 5))
    got = run_model(model, {"x": x.numpy()}, tuple(names))
    for a, b in zip(got, (x.flatten(0, 1), x.reshape(-1, 5), -x)):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("batch", [3, 1])
def test_view_of_the_dynamic_batch_and_a_minus_one_has_a_constant_shape(batch):
    """levit's `x.view(B, N, heads, -1)` with B the input's dynamic batch: the -1 is the input's
    static element count over the static sizes (6 * 8 / (6 * 4) = 2), no Shape / Concat."""
    g = GraphBuilder()
    v = g.input("x", FLOAT, ["n", 6, 8])
    with g:
        split = S.aten_view(v, [sym_size(v, 0), 6, 4, -1])
        merged = S.aten_reshape(op.Neg(split), [sym_size(v, 0), -1, 8])
        other = S.aten_view(v, [op.Mul(sym_size(v, 0), 2), -1, 8])  # not the batch: read at run time
    names = [g.output(y, f"y{i}").name for i, y in enumerate((split, merged, other))]
    model = g.to_model()
    shapes = {init.name for init in model.graph.initializer}
    assert [n.input[1] in shapes for n in model.graph.node if n.op_type == "Reshape" and n.input[0] != "mul"] == [True, True, False]
    assert sum(n.op_type == "Concat" for n in model.graph.node) == 1  # the third view's only
    x = make((batch, 6, 8))
    got = run_model(model, {"x": x.numpy()}, tuple(names))
    for a, b in zip(got, (x.view(batch, 6, 4, -1), -x, x.view(batch * 2, -1, 8))):
        torch.testing.assert_close(a, b)
