"""PT2E-quantized models exported end to end and compared with torch in onnxruntime.

torch 2.13 no longer ships `torch.ao.quantization.quantize_pt2e` (prepare_pt2e / convert_pt2e
moved to torchao, not a dependency here), so `quantize_pt2e` below does what that flow does
with a small quantizer of its own, on the same program representation: capture with
torch.export, observe min/max of the activations on calibration data, then rewrite the graph
the way convert_pt2e does: each conv/linear input goes through quantize_per_tensor ->
dequantize_per_tensor (static activation qparams), its weight becomes an int8 constant read
through dequantize_per_channel (symmetric, axis 0), and its output through another q/dq pair.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchlib
import torchlib.ops.quantized  # noqa: F401  (loads torch.ops.quantized_decomposed)

qd = torch.ops.quantized_decomposed
QUANTIZED_TARGETS = (torch.ops.aten.linear.default, torch.ops.aten.conv2d.default)


def _affine_qparams(low: float, high: float, qmin: int = -128, qmax: int = 127) -> tuple[float, int]:
    low, high = min(low, 0.0), max(high, 0.0)
    scale = max((high - low) / (qmax - qmin), 1e-8)
    return float(torch.tensor(scale, dtype=torch.float32)), int(qmin - round(low / scale))


def quantize_pt2e(model: nn.Module, example: tuple, calibration: list[tuple]) -> torch.fx.GraphModule:
    """capture -> observe -> convert, to the Q/DQ representation convert_pt2e produces."""
    gm = torch.export.export(model, example).module()
    targets = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in QUANTIZED_TARGETS]
    observed = {n for t in targets for n in (t.args[0], t)}
    ranges: dict[str, list[float]] = {}

    class Observer(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n).detach() if n in observed else super().run_node(n)
            if n in observed:
                low, high = ranges.setdefault(n.name, [float("inf"), -float("inf")])
                ranges[n.name] = [min(low, float(out.min())), max(high, float(out.max()))]
            return out

    for args in calibration:
        Observer(gm).run(*args)

    graph = gm.graph

    def qdq(node: torch.fx.Node) -> torch.fx.Node:
        scale, zp = _affine_qparams(*ranges[node.name])
        with graph.inserting_after(node):
            q = graph.call_function(qd.quantize_per_tensor.default, (node, scale, zp, -128, 127, torch.int8))
        with graph.inserting_after(q):
            dq = graph.call_function(qd.dequantize_per_tensor.default, (q, scale, zp, -128, 127, torch.int8))
        return dq

    weight_targets: set[str] = set()
    for i, node in enumerate(targets):
        users = list(node.users)
        out_dq = qdq(node)
        for user in users:
            user.replace_input_with(node, out_dq)
        x = node.args[0]
        node.replace_input_with(x, qdq(x) if x.op != "call_function" or x.target is not qd.dequantize_per_tensor.default else x)
        weight_node = node.args[1]
        weight_targets.add(weight_node.target)
        weight = gm.get_parameter(weight_node.target).detach()
        scales = (weight.abs().flatten(1).amax(1) / 127).clamp_min(1e-8)
        zps = torch.zeros_like(scales, dtype=torch.int64)
        w_int8 = qd.quantize_per_channel(weight, scales, zps, 0, -127, 127, torch.int8)
        for name, value in ((f"w{i}_int8", w_int8), (f"w{i}_scales", scales), (f"w{i}_zps", zps)):
            gm.register_buffer(name, value)
        with graph.inserting_before(node):
            attrs = [graph.get_attr(f"w{i}_{k}") for k in ("int8", "scales", "zps")]
            w_dq = graph.call_function(qd.dequantize_per_channel.default, (*attrs, 0, -127, 127, torch.int8))
        node.replace_input_with(weight_node, w_dq)
    graph.eliminate_dead_code()
    still_read = {n.target for n in graph.nodes if n.op == "get_attr"}
    for target in weight_targets:  # the float weights are gone, as convert_pt2e leaves them
        if target not in still_read:
            path, _, name = target.rpartition(".")
            delattr(gm.get_submodule(path), name)
    gm.recompile()
    return gm


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2)
        self.fc = nn.Linear(16 * 3 * 3, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.conv2(x))
        return self.fc(torch.flatten(x, 1))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 4)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def _check_quantized_export(model: nn.Module, shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    model = model.eval()
    calibration = [(torch.randn(shape),) for _ in range(4)]
    quantized = quantize_pt2e(model, calibration[0], calibration)
    x = torch.randn(shape)
    result = torchlib.export(quantized, (x,))
    nodes = [n.op_type for n in result.model_proto.graph.node]
    assert "QuantizeLinear" in nodes and "DequantizeLinear" in nodes
    assert "decompositions" not in result.timings  # no whole-program decomposition
    int8_weights = [t.name for t in result.model_proto.graph.initializer if t.data_type == 3 and len(t.dims) > 1]  # INT8 weights
    assert len(int8_weights) == sum(isinstance(m, (nn.Conv2d, nn.Linear)) for m in model.modules())
    expected = quantized(x)
    actual = result(x)
    actual = actual[0] if isinstance(actual, (list, tuple)) else actual  # one output
    # float conv/linear in onnxruntime and torch round differently in the last bit, which can move
    # an activation by one quantization step: allow a few output steps, no more
    output_scale = max(abs(float(expected.min())), abs(float(expected.max()))) / 127
    torch.testing.assert_close(actual, expected, rtol=0, atol=3 * output_scale)
    assert float((actual - expected).abs().le(1e-5).float().mean()) > 0.9  # most elements exact
    # and the quantized model stays as close to the float one as torch's quantized model is (its
    # quantization error depends on the installed torch's observers: 0.19 at one element in 2.10)
    error = float((expected - model(x)).abs().max())
    torch.testing.assert_close(actual, model(x), rtol=0.1, atol=max(0.1, error + 3 * output_scale))


def test_pt2e_quantized_mlp():
    _check_quantized_export(MLP(), (8, 16))


@pytest.mark.slow
def test_pt2e_quantized_cnn():
    _check_quantized_export(SmallCNN(), (2, 3, 16, 16))


class DynamicQuantLinear(nn.Module):
    """Dynamic activation quantization: qparams chosen at run time (the .tensor overloads)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        scale, zp = qd.choose_qparams.tensor(x, -128, 127, torch.finfo(torch.float32).eps, torch.int8)
        q = qd.quantize_per_tensor.tensor(x, scale, zp, -128, 127, torch.int8)
        return self.fc(qd.dequantize_per_tensor.tensor(q, scale, zp, -128, 127, torch.int8)), q


def test_dynamic_quantization_is_exact():
    torch.manual_seed(0)
    model = DynamicQuantLinear().eval()
    x = torch.randn(5, 8) * 3
    result = torchlib.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("batch")},))
    for batch in (5, 1, 12):
        x = torch.randn(batch, 8) * 3
        y, q = result(x)
        y_torch, q_torch = model(x)
        assert torch.equal(q, q_torch)  # the int8 tensor, exactly
        torch.testing.assert_close(y, y_torch)


class PerTokenQuant(nn.Module):
    def forward(self, x):
        scales, zps = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
        q = qd.quantize_per_token(x, scales, zps, -128, 127, torch.int8)
        return qd.dequantize_per_token(q, scales, zps, -128, 127, torch.int8, torch.float32), q


def test_per_token_quantization_is_exact():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 16)
    result = torchlib.export(PerTokenQuant(), (x,))
    y, q = result(x)
    y_torch, q_torch = PerTokenQuant()(x)
    assert torch.equal(q, q_torch) and torch.equal(y, y_torch)
