"""In-place ops, written inputs and per-node decomposition: exported without re-decomposing the
whole program, run in onnxruntime, compared with torch."""

from __future__ import annotations

import copy
import importlib

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import torchlib
from torchlib.exporter import demo_models

ATOL, RTOL = 1e-4, 1e-3


def exported(model, *args, **kwargs):
    """Export, check that nothing forced a whole-program decomposition, and compare with torch
    (on copies: the model may write into its inputs)."""
    result = torchlib.export(model, args, kwargs)
    assert "decompositions" not in result.timings, result.diagnostics
    training = model.training and isinstance(model, nn.Module)
    assert [d for d in result.diagnostics if not (training and d.startswith("the model is in training mode"))] == []
    for d in result.verify(*copy.deepcopy(args), **copy.deepcopy(kwargs)):
        assert d.ok(ATOL, RTOL), d
    return result


def op_types(result):
    return {n.op_type for n in result.model_proto.graph.node}


def test_resnet_with_inplace_add_and_relu():
    model, args = demo_models.resnet()
    result = exported(model, *args)
    ops = {str(n.target) for n in result.exported_program.graph.nodes}
    assert {"aten.add_.Tensor", "aten.relu_.default"} <= ops  # what the test is about
    assert {"Conv", "Add", "Relu"} <= op_types(result)


def test_encoder_with_masked_fill_():
    model, (x, lengths) = demo_models.masked_encoder()
    result = exported(model, x, lengths)
    other = torch.tensor([2, 16, 1])
    for d in result.verify(x, other):
        assert d.ok(ATOL, RTOL), d


def test_decoder_with_rmsnorm_and_rope():
    model, args = demo_models.rms_rope_decoder()
    exported(model, *args)


@pytest.mark.slow
def test_lstm():
    model, args = demo_models.lstm_model()
    exported(model, *args)


class WritesBufferAndInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(3))

    def forward(self, x, y):
        self.count.add_(1)
        y.mul_(2)
        y += x  # a second write of the same input
        return x * self.count, y


def test_written_buffer_and_input_become_outputs():
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    result = exported(WritesBufferAndInput(), x, y)
    assert result.written_inputs == ["count", "y"]
    count, new_y, _, out_y = result.run(x, y)  # the written values first, then forward's outputs
    torch.testing.assert_close(count, torch.ones(3))
    torch.testing.assert_close(new_y, y * 2 + x)
    torch.testing.assert_close(out_y, y * 2 + x)
    assert [o.name for o in result.model_proto.graph.output][:2] == ["count_updated", "y_updated"]


def test_inplace_on_an_alias_updates_every_name():
    class M(nn.Module):
        def forward(self, x):
            y = x.clone()
            z = y.add_(1)  # z and y name the same tensor
            y.mul_(3)
            return z, y, y.sum()

    exported(M(), torch.randn(2, 5))


def test_copy_and_index_put_and_fill():
    class M(nn.Module):
        def forward(self, x, idx, v):
            y = torch.empty_like(x)
            y.copy_(x.to(torch.float64))  # copy_ casts
            y.index_put_((idx,), v, accumulate=True)
            z = torch.zeros(3, dtype=torch.int64)
            z.fill_(7)
            return y, z

    exported(M(), torch.randn(5, 3), torch.tensor([0, 2, 2]), torch.randn(3, 3))


def test_bitwise_dunders_and_inplace_dunders():
    class M(nn.Module):
        def forward(self, a, b):
            c = a.clone()
            c &= b
            c |= 12
            c ^= a
            c <<= 1
            c >>= b % 3
            return a & b, a | 5, a ^ b, a << 2, a >> (b % 4), c, (a > 0) & (b > 0)

    a = torch.tensor([[0, 1, -7, 100], [2**40, -1, 3, 5]])
    b = torch.tensor([[3, 1, 2, 7], [2, 0, 1, 9]])
    exported(M(), a, b)


def test_to_overloads():
    class M(nn.Module):
        def forward(self, x, other):
            return (x.to(dtype=torch.float64), x.to("cpu", torch.int32), x.to(other),
                    x.to(torch.float16, copy=True),
                    torch.ops.aten.to.dtype_layout(x, dtype=torch.int8, layout=torch.strided, device="cpu"))

    x = torch.tensor([[1.5, -2.7, 0.0], [100.0, -0.5, 3.9]])
    result = exported(M(), x[:, :2], torch.ones(1, dtype=torch.bool))
    assert [o.type.tensor_type.elem_type for o in result.model_proto.graph.output] == [11, 6, 9, 10, 3]


def test_op_without_function_is_decomposed_on_its_node():
    class M(nn.Module):
        def forward(self, x, v):
            eye = torch.eye(x.shape[1])  # no tensor input: traced under the program's fake mode
            h = F.tanhshrink(x)
            y = torch.copysign(h, v) + eye
            y.renorm_(2, 0, 1.5)  # in-place op whose functional form has no function
            return y, torch.isin(x, v)

    registry = torchlib.get_registry()
    for name in ("aten::tanhshrink", "aten::copysign", "aten::eye", "aten::isin", "aten::renorm"):
        assert name not in registry.names(), f"{name} has a function now: pick another op for this test"
    x = torch.randn(4, 4)
    x[0, 0] = 0.0
    exported(M(), x, torch.randn(4))


def test_decomposition_keeps_dynamic_dims():
    class M(nn.Module):
        def forward(self, x):
            return F.tanhshrink(x) @ torch.eye(x.shape[1])  # eye takes a symbolic size

    x = torch.randn(3, 4)
    result = torchlib.export(M(), (x,), dynamic_shapes={"x": {0: "batch", 1: "n"}})
    assert result.diagnostics == []
    for d in result.verify(torch.randn(7, 5)):
        assert d.ok(ATOL, RTOL), d


def test_writes_into_views_update_the_whole_tensor():
    class M(nn.Module):
        def forward(self, x, v):
            y = x.clone()
            y[:, 0] = 5.0  # fill_ on a select
            y[1:, 2:].mul_(v)  # mul_ on a slice of a slice
            y.view(-1)[:2].add_(1).relu_()  # a chain of writes on a view of a view
            x[x > 0.5] = 0.0  # index_put_ on a user input
            x[:, 1:3] += 1  # a write into a slice of a user input
            return y, x.sum()

    x, v = torch.rand(3, 4), torch.randn(2, 2)
    result = exported(M(), x, v)
    assert result.written_inputs == ["x"]
    updated = result.run(x, v)[0]  # the written input comes first
    expected = x.clone()
    expected[expected > 0.5] = 0.0
    expected[:, 1:3] += 1
    torch.testing.assert_close(updated, expected)


def test_writes_into_slices_keep_dynamic_dims():
    """A write into a slice or a select of a tensor with dynamic dims (bart's shift_tokens_right,
    ghostnet's `out[:, :c] = ...`) is traced on its own: no whole-program decomposition, so
    the dims stay dynamic; right at two sizes."""

    class M(nn.Module):
        def forward(self, x):
            y = torch.zeros_like(x)
            y[:, 1:] = x[:, :-1]  # copy_ into a slice
            y[:, 0] = 7.0  # fill_ into a select
            y[0, 2:-1] += x[0, 1:-2]  # add_ into a slice of a select
            return y * 2

    result = torchlib.export(M(), (torch.randn(2, 8),), dynamic_shapes=({0: "batch", 1: "seq"},))
    assert "decompositions" not in result.timings, result.diagnostics
    assert result.diagnostics == []
    assert [[d.dim_param for d in i.type.tensor_type.shape.dim] for i in result.model_proto.graph.input] == [["batch", "seq"]]
    for shape in [(2, 8), (3, 13)]:
        x = torch.randn(shape)
        torch.testing.assert_close(result(x), M()(x), atol=ATOL, rtol=RTOL)


@pytest.mark.slow  # a second whole-program decomposition
def test_stale_view_read_after_write_falls_back_and_says_why():
    class M(nn.Module):
        def forward(self, x):
            y = x.clone()
            row = y.reshape(2, -1)[0]  # a view read after y is written: it must see the write
            y.mul_(2)
            return row + 1

    x = torch.randn(3, 4)
    result = torchlib.export(M(), (x,))
    assert "decompositions" in result.timings
    assert "view 'select' is read afterwards, and aten.reshape.default" in result.diagnostics[0]
    for d in result.verify(x):
        assert d.ok(ATOL, RTOL), d


@pytest.mark.parametrize("model, x", [
    (lambda: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)), (8, 3)),
    (lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, momentum=0.3), nn.ReLU()), (2, 3, 8, 8)),
    (lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.InstanceNorm2d(4, track_running_stats=True)), (2, 3, 8, 8)),
], ids=["batch_norm_1d", "batch_norm_2d", "instance_norm"])
def test_norm_running_stats_in_train_mode(model, x):
    """torch.export's training IR keeps aten::batch_norm / instance_norm, whose schemas do not
    mark running_mean/var as written; in train mode the exporter still writes them back (as
    outputs named after the buffers), exactly as torch updates them, without re-decomposing the
    whole program."""
    torch.manual_seed(0)
    model, x = model().train(), torch.randn(*x)
    expected, before = copy.deepcopy(model), copy.deepcopy(model.state_dict())
    expected(x)
    with pytest.warns(UserWarning, match="the model is in training mode: the exported graph runs module 1"):
        result = exported(model, x)
    for name, value in model.state_dict().items():  # verify put the buffers back
        assert torch.equal(value, before[name]), name
    state = expected.state_dict()
    changed = [n for n in state if not torch.equal(state[n], before[n])]
    assert sorted(result.written_inputs) == sorted(changed) and changed
    for name, value in zip(result.written_inputs, result.run(x)):
        torch.testing.assert_close(value, state[name], atol=1e-6, rtol=1e-5)


def test_norm_in_eval_mode_writes_nothing():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.InstanceNorm2d(4, track_running_stats=True)).eval()
    result = exported(model, torch.randn(2, 3, 8, 8))
    assert result.written_inputs == []


def _traced_view_writes(monkeypatch) -> list[str]:
    """Records each write into a view that is traced with make_fx (not replayed directly)."""
    export_module = importlib.import_module("torchlib.exporter.export")
    traced: list[str] = []
    original = export_module.decompose_view_write

    def recording(node, *args, **kwargs):
        traced.append(str(node.target))
        return original(node, *args, **kwargs)

    monkeypatch.setattr(export_module, "decompose_view_write", recording)
    return traced


def test_writes_into_slices_and_selects_are_replayed_without_tracing(monkeypatch):
    """swin's shifted-window mask (`mask[h0:h1, w0:w1] = count`), copies into a select of a
    slice, an add_ into a slice of a dynamic size and a write through a written alias are built
    as functionalization writes them (views, the functional op, slice_scatter/select_scatter
    back up), without make_fx; the answers are torch's, bit for bit, at two sizes."""
    traced = _traced_view_writes(monkeypatch)

    class M(nn.Module):
        def forward(self, x):
            mask = x.new_zeros((x.shape[1], 6))
            count = 0
            for h in ((0, -3), (-3, -1), (-1, None)):
                for w in ((0, -3), (-3, -1), (-1, None)):
                    mask[h[0]:h[1], w[0]:w[1]] = count
                    count += 1
            mask[:, 1] = x[0, :, 0]  # copy_ into a select of a slice
            mask[1, 2:4].copy_(x[1, :2, 1])  # into a slice of a select
            mask[2:, 3:] += x[0, 2:, 3:]  # add_ whose bounds depend on a dynamic size
            mask[0, :3].mul_(2).add_(-1.5)  # a write into what a write returned
            return mask * 2

    dims = ({1: torch.export.Dim("n", min=5)},)
    result = torchlib.export(M(), (torch.randn(2, 5, 6),), dynamic_shapes=dims)
    assert result.self_check.startswith("passed"), result.self_check
    assert "decompositions" not in result.timings and result.diagnostics == []
    assert traced == []
    for shape in [(2, 5, 6), (2, 9, 6)]:
        x = torch.randn(shape)
        assert torch.equal(result(x), M()(x))


def test_write_rounding_into_its_view_is_traced(monkeypatch):
    """An in-place op whose functional variant promotes (a float16 view multiplied by a float32
    tensor, rounded back into float16 by mul_) is not replayed: it is traced, and right."""
    traced = _traced_view_writes(monkeypatch)

    class M(nn.Module):
        def forward(self, x, v):
            y = x.clone()
            y[1:].mul_(v)
            return y

    x, v = torch.randn(3, 4).half(), torch.randn(2, 4)
    result = torchlib.export(M(), (x, v))
    assert result.self_check.startswith("passed"), result.self_check
    assert traced == ["aten.mul_.Tensor"]
    assert torch.equal(result(x, v), M()(x, v))


def test_writes_at_symbolic_bounds_are_replayed(monkeypatch):
    """Slice bounds and a select index computed from dynamic sizes are inputs of the replayed
    graph (not constants): right at other sizes, bit for bit, nothing traced."""
    traced = _traced_view_writes(monkeypatch)

    class M(nn.Module):
        def forward(self, x, y):
            z = torch.zeros(x.shape[0] + y.shape[0], x.shape[1])
            z[: x.shape[0]] = x
            z[x.shape[0] :, 1] = y[:, 0]
            z[x.shape[0] - 1].add_(y.sum(0))
            return z

    dims = ({0: torch.export.Dim("a", min=2)}, {0: torch.export.Dim("b", min=2)})
    result = torchlib.export(M(), (torch.randn(3, 4), torch.randn(5, 4)), dynamic_shapes=dims)
    assert result.self_check.startswith("passed") and result.diagnostics == [] and traced == []
    for a, b in [(3, 5), (7, 2)]:
        x, y = torch.randn(a, 4), torch.randn(b, 4)
        assert torch.equal(result(x, y), M()(x, y))
