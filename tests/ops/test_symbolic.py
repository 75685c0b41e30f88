import math
import operator

import pytest
import torch

import torchlib
from graph_builder import INT64, GraphBuilder, op
from graph_builder.ir import Value
from torchlib.ops import symbolic as Y
from torchlib.registry import REGISTRY
from torchlib.testing import run_dynamic


def dyn(fn, *sizes):
    """fn(*SymInts) with each SymInt the (dynamic) length of a 1-D graph input, run in onnxruntime."""
    inputs = [torch.zeros(n) for n in sizes]
    return run_dynamic(lambda *xs: fn(*(Y.aten_sym_size_int(x, 0) for x in xs)), *inputs)


def test_sym_size():
    x = torch.zeros(2, 3, 4)
    assert Y.aten_sym_size_int(x, 1) == 3 and Y.aten_sym_size_int(x, -1) == 4
    assert Y.aten_sym_size(x) == [2, 3, 4]
    assert Y.aten_sym_numel(x) == 24
    out = run_dynamic(lambda v: Y.aten_sym_size_int(v, -2), x)
    assert out.dtype == torch.int64 and out.shape == () and int(out) == 3
    out = run_dynamic(lambda v: list(Y.aten_sym_size(v)), x)
    assert [int(o) for o in out] == [2, 3, 4]
    assert int(run_dynamic(Y.aten_sym_numel, x)) == 24
    assert int(run_dynamic(Y.aten_sym_numel, torch.zeros(3, 0))) == 0


def test_sym_size_is_static_when_the_dim_is():
    g = GraphBuilder()
    x = g.input("x", INT64, ["batch", 5])
    with g:
        assert Y.aten_sym_size_int(x, 1) == 5
        batch = Y.aten_sym_size_int(x, 0)
        assert isinstance(batch, Value) and batch.dtype is INT64 and batch.shape == ()
        assert Y.operator_mul(Y.operator_add(2, 3), 4) == 20  # Python ints stay Python ints


BINARY = [
    ("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("floordiv", operator.floordiv),
    ("mod", operator.mod), ("truediv", operator.truediv), ("pow", operator.pow), ("eq", operator.eq),
    ("ne", operator.ne), ("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
    ("and_", operator.and_), ("or_", operator.or_),  # SymInts: bitwise
]  # fmt: skip


@pytest.mark.parametrize("name, py", BINARY)
@pytest.mark.parametrize("a, b", [(7, 3), (7, -3), (6, 3), (2, 5)])
def test_binary_operators(name, py, a, b):
    fn = REGISTRY.lookup(py).function
    assert fn is getattr(Y, f"operator_{name}")
    expected = py(a, b)
    assert fn(a, b) == expected and type(fn(a, b)) is type(expected)
    if b < 0:  # a negative size cannot be a graph input's length: -(n), or b as a Python int
        out = dyn(lambda x: fn(x, b), a)
        if name != "pow":  # a symbolic exponent is taken as non-negative
            assert float(dyn(lambda x, y: fn(x, Y.operator_neg(y)), a, -b)) == pytest.approx(float(expected))
    else:
        out = dyn(fn, a, b)
        assert float(dyn(lambda x: fn(x, b), a)) == pytest.approx(float(expected))  # one side a Python int
        assert float(dyn(lambda y: fn(a, y), b)) == pytest.approx(float(expected))
    assert out.shape == () and float(out) == pytest.approx(float(expected))
    kind = bool if isinstance(expected, bool) else float if isinstance(expected, float) else int
    assert out.dtype == {bool: torch.bool, float: torch.float64, int: torch.int64}[kind]


def test_float_operators():
    # s / 2 * 1.5, floor-divided and taken modulo in float, as Python does
    fn = lambda s: Y.operator_mod(Y.operator_floordiv(Y.operator_mul(Y.operator_truediv(s, 2), 1.5), -0.7), 0.75)
    expected = fn(7)
    assert isinstance(expected, float)
    assert float(dyn(fn, 7)) == pytest.approx(expected)


@pytest.mark.parametrize("n", [7, 8, 1])
def test_math_and_torch_sym_functions(n):
    cases = [
        lambda s: Y.math_ceil(Y.operator_truediv(s, 3)),
        lambda s: Y.math_floor(Y.operator_truediv(s, 3)),
        lambda s: Y.math_trunc(Y.operator_truediv(Y.operator_neg(s), 3)),
        lambda s: Y.math_sqrt(s),
        lambda s: Y.torch_sym_sqrt(s),
        lambda s: Y.torch_sym_max(s, 5),
        lambda s: Y.torch_sym_min(s, 5),
        lambda s: Y.torch_sym_float(s),
        lambda s: Y.torch_sym_int(Y.operator_truediv(Y.operator_neg(s), 2)),
        lambda s: Y.torch_sym_not(Y.operator_gt(s, 5)),
        lambda s: Y.torch_sym_ite(Y.operator_gt(s, 5), s, 10),
        lambda s: Y.math_ceil(s),
    ]
    for fn in cases:
        expected = fn(n)
        out = dyn(fn, n)
        assert out.shape == () and float(out) == pytest.approx(float(expected))
        assert out.is_floating_point() == isinstance(expected, float)


def test_names_match_fx_targets():
    for target in [operator.add, operator.getitem, operator.neg, math.ceil, math.floor, math.sqrt, torch.sym_max,
                   torch.sym_min, torch.sym_float, torch.sym_int, torch.sym_not, torch.sym_ite, torch.sym_sqrt,
                   torch.ops.aten.sym_size.int, torch.ops.aten.sym_numel.default,
                   torch.ops.aten._assert_scalar.default, torch.ops.aten.sym_constrain_range_for_size.default,
                   torch.ops.aten.sym_constrain_range.default, torch.ops.aten._assert_async.msg,
                   torch.ops.aten._assert_tensor_metadata.default]:
        assert target in REGISTRY, target


def test_getitem():
    g = GraphBuilder()
    x = g.input("x", INT64, [4])
    with g:
        parts = op.Split(x, [1, 3], _outputs=2)
        assert Y.operator_getitem(list(parts), 1) is parts[1]
        assert Y.operator_getitem(parts, -1) is parts[1]
        with pytest.raises(TypeError, match="getitem on the tensor"):
            Y.operator_getitem(x, 0)


def test_assertions_produce_nothing():
    assert Y.aten_assert_scalar(True, "u0 >= 0") is None
    assert Y.aten_sym_constrain_range(3, min=0, max=10) is None
    assert Y.aten_sym_constrain_range_for_size(3, min=2) is None
    assert Y.aten_assert_async(torch.tensor(True)) is None
    assert Y.aten_assert_async_msg(torch.tensor(True), "msg") is None
    assert Y.aten_assert_tensor_metadata(torch.zeros(2), None, None, torch.float32) is None


class Dynamic(torch.nn.Module):
    def forward(self, x, y):
        b, s, h = x.shape
        heads = x.view(b, s, 2, h // 2).transpose(1, 2)  # view with sym_size, transpose
        joined = torch.cat([x, y], dim=1)  # cat along a dynamic dim
        half = x[:, : s // 2 + 1]  # slice end from floordiv/add
        last = x[:, -1]
        first, rest = x.split([1, h - 1], dim=2)
        return heads, joined, half, last, rest.flatten(1), first.squeeze(-1)


def test_export_with_dynamic_shapes():
    from torch.export import Dim

    x, y = torch.randn(2, 6, 4), torch.randn(2, 3, 4)
    result = torchlib.export(Dynamic(), (x, y), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO}, {0: Dim.AUTO, 1: Dim.AUTO}))
    for args in [(x, y), (torch.randn(3, 9, 4), torch.randn(3, 2, 4))]:
        expected = Dynamic()(*args)
        actual = result(*args)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e)


class _EitherEnd(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0]
        return x * torch.sym_ite((n > 3) | (n < 2), 2, 3) + torch.sym_ite((n > 2) & (n < 6), 1, 0)


def test_logical_operators_on_symbolic_bools():
    """torch.export keeps `|` and `&` of two SymBools as _operator.or_ / and_ (a detection model's
    import has them): each is the logical op, right on either side of each bound."""
    result = torchlib.export(_EitherEnd(), (torch.randn(5, 2),), dynamic_shapes=({0: "n"},))
    assert {"Or", "And"} <= {n.op_type for n in result.graph.nodes}
    for n in (1, 2, 3, 4, 5, 6, 7):
        x = torch.randn(n, 2)
        torch.testing.assert_close(result(x), _EitherEnd()(x))
