"""Models with control flow and wrapped regions, exported and compared with torch in onnxruntime
on inputs that take every branch: torch.cond -> If, while_loop -> Loop, scan / map /
associative_scan -> Scan, torch.no_grad() and autocast regions inlined."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch._higher_order_ops.map import map as torch_map
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop

import torchlib
from torchlib.exporter.export import UnsupportedOpsError, _load_ops, check_supported

ATOL, RTOL = 1e-5, 1e-5


def assert_matches(result, *args):
    diffs = result.verify(*args)
    assert diffs, "the model has no outputs"
    for d in diffs:
        assert d.ok(ATOL, RTOL), d
    assert result.diagnostics == []


def only_output(outputs):
    """The one output of a model (ExportResult returns it alone, or in a one-element list)."""
    return outputs[0] if isinstance(outputs, (list, tuple)) else outputs


def op_types(graph) -> list[str]:
    """Node types of a graph and of its subgraphs, depth first."""
    types = []
    for node in graph.node:
        types.append(node.op_type)
        for attr in node.attribute:
            if attr.HasField("g"):
                types.extend(op_types(attr.g))
    return types


class DataDependentCond(nn.Module):
    """A data-dependent predicate; the branches close over a weight and the batch size."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-1, 1, 3))

    def forward(self, x):
        n = x.shape[0]

        def positive(x):
            return x * self.w + n, x.sum(0)

        def negative(x):
            return x.cos() - self.w, x.amax(0)

        return torch.cond(x.sum() > 0, positive, negative, (x,))


def test_cond_takes_both_branches_with_dynamic_batch():
    model = DataDependentCond()
    x = torch.randn(5, 3)
    result = torchlib.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("batch")},))
    graph = result.model_proto.graph
    assert [n.op_type for n in graph.node].count("If") == 1
    assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    for batch in (5, 2, 9):
        assert_matches(result, torch.rand(batch, 3) + 0.1)  # positive branch
        assert_matches(result, -torch.rand(batch, 3) - 0.1)  # negative branch


class NestedCond(nn.Module):
    def forward(self, x, y):
        def outer_true(x, y):
            return torch.cond(y.sum() > 0, lambda x, y: x + y, lambda x, y: x - y, (x, y))

        def outer_false(x, y):
            return x * 2

        return torch.cond(x.mean() > 0, outer_true, outer_false, (x, y))


@pytest.mark.slow  # each torch.export of a higher-order op takes about 2 s
def test_nested_cond_every_path():
    model = NestedCond()
    x, y = torch.ones(4), torch.ones(4)
    result = torchlib.export(model, (x, y))
    assert op_types(result.model_proto.graph).count("If") == 2
    for sx in (1, -1):
        for sy in (1, -1):
            assert_matches(result, sx * torch.rand(4) + sx * 0.1, sy * torch.rand(4) + sy * 0.1)


class Counter(nn.Module):
    """while_loop with a data-dependent trip count: doubles x until the counter reaches n."""

    def forward(self, x, n):
        def cond_fn(i, x):
            return i < n

        def body_fn(i, x):
            return i + 1, x * 2 + 1

        return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))


def test_while_loop_counter():
    model = Counter()
    x = torch.randn(2, 3)
    result = torchlib.export(model, (x, torch.tensor(3)))
    assert [n.op_type for n in result.model_proto.graph.node].count("Loop") == 1
    for n in (0, 1, 3, 7):  # zero iterations too
        assert_matches(result, torch.randn(2, 3), torch.tensor(n))


class LoopWithCond(nn.Module):
    """A cond nested in a while_loop body: odd and even iterations take different branches."""

    def forward(self, x):
        def cond_fn(i, x):
            return i < 5

        def body_fn(i, x):
            y = torch.cond(i % 2 == 0, lambda x: x + 1, lambda x: x * 2, (x,))
            return i + 1, y

        return while_loop(cond_fn, body_fn, (torch.zeros((), dtype=torch.int64), x))


def test_cond_nested_in_while_loop():
    model = LoopWithCond()
    x = torch.randn(3)
    result = torchlib.export(model, (x,))
    assert [n.op_type for n in result.model_proto.graph.node] == ["Loop"]
    assert "If" in op_types(result.model_proto.graph)
    assert_matches(result, x)


class CumulativeScan(nn.Module):
    """A decaying cumulative sum along dim 1, in reverse, closing over a weight vector."""

    def forward(self, x, decay):
        def step(carry, xi):
            new = carry * decay + xi
            return new, new.sum()

        return scan(step, torch.zeros_like(x[:, 0]), x, dim=1, reverse=True)


@pytest.mark.slow  # each torch.export of a higher-order op takes about 2 s
def test_scan_cumulative_with_closure_and_dynamic_length():
    model = CumulativeScan()
    x, decay = torch.randn(2, 6), torch.tensor([0.5, 0.9])
    result = torchlib.export(model, (x, decay), dynamic_shapes=({1: torch.export.Dim("steps")}, None))
    assert "Scan" in [n.op_type for n in result.model_proto.graph.node]
    for steps in (6, 1, 11):
        assert_matches(result, torch.randn(2, steps), decay)


def test_scan_is_a_cumsum():
    class Cumsum(nn.Module):
        def forward(self, x):
            return scan(lambda c, xi: (c + xi, c + xi), torch.zeros_like(x[0]), x)[1]

    x = torch.randn(7, 3)
    result = torchlib.export(Cumsum(), (x,))
    torch.testing.assert_close(only_output(result(x)), torch.cumsum(x, 0))


class BatchMap(nn.Module):
    """map over the batch, with an extra argument: each row through a small function."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, bias):
        return torch_map(lambda row, b: torch.tanh(self.lin(row)) + b, x, bias)


@pytest.mark.slow  # each torch.export of a higher-order op takes about 2 s
def test_map_over_a_dynamic_batch():
    torch.manual_seed(0)
    model = BatchMap().eval()
    x, bias = torch.randn(3, 4), torch.randn(4)
    result = torchlib.export(model, (x, bias), dynamic_shapes=({0: torch.export.Dim("batch")}, None))
    assert "Scan" in [n.op_type for n in result.model_proto.graph.node]
    for batch in (3, 1, 8):
        assert_matches(result, torch.randn(batch, 4), bias)


def test_associative_scan():
    class RunningMax(nn.Module):
        def forward(self, x, scale):
            xs = [torch.movedim(x, 1, 0)]
            (out,) = torch.ops.higher_order.associative_scan(lambda a, b, s: torch.maximum(a, b * s), xs, (scale,))
            return out

    model = RunningMax()
    x, scale = torch.randn(2, 6), torch.ones(2)
    result = torchlib.export(model, (x, scale))
    assert_matches(result, x, scale)
    torch.testing.assert_close(only_output(result(x, scale)), torch.cummax(x, 1).values.movedim(1, 0))


class NoGradRegion(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        with torch.no_grad():
            z = torch.relu(y) * 2
        return z + y


def test_no_grad_region_is_inlined_without_decomposition():
    model = NoGradRegion()
    x = torch.randn(3, 4)
    ep = torch.export.export(model, (x,))
    assert any("wrap_with_set_grad_enabled" in str(n.target) for n in ep.graph.nodes)
    result = torchlib.export(model, (x,))
    assert "decompositions" not in result.timings  # translated in the loop, not re-decomposed
    assert "If" not in op_types(result.model_proto.graph)
    assert_matches(result, x)


class AutocastRegion(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.lin(x)  # bfloat16 under autocast
            z = torch.softmax(y, -1)  # bfloat16 too: torch recorded it so
        return y.float(), z.float(), y.float() + x  # onnxruntime's Python API cannot return bfloat16


def test_autocast_region_computes_in_the_autocast_dtype():
    torch.manual_seed(0)
    model = AutocastRegion()
    x = torch.randn(2, 8)
    ep = torch.export.export(model, (x,))
    assert any("wrap_with_autocast" in str(n.target) for n in ep.graph.nodes)
    result = torchlib.export(model, (x,))
    expected = model(x)
    actual = result(x)
    assert [a.dtype for a in actual] == [e.dtype for e in expected]
    for a, e in zip(actual, expected):
        # the same bfloat16 matmul: at most one bfloat16 rounding step apart
        torch.testing.assert_close(a, e, rtol=1e-2, atol=1e-2)
    assert result.diagnostics == []  # each op's result dtype came out as torch's, no cast inserted
    casts = [n for n in result.model_proto.graph.node if n.op_type == "Cast"]
    assert any(a.i == 16 for n in casts for a in n.attribute if a.name == "to")  # inputs cast to bfloat16


@torch.library.custom_op("cftest::no_function", mutates_args=())
def _no_function(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@_no_function.register_fake
def _(x):
    return torch.empty_like(x)


def test_unsupported_op_inside_a_body_is_named():
    class Body(nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: torch.ops.cftest.no_function(x), lambda x: x.clone(), (x,))

    ep = torch.export.export(Body(), (torch.rand(3) + 1,))
    with pytest.raises(UnsupportedOpsError, match="cftest::no_function"):
        check_supported(ep, _load_ops())
