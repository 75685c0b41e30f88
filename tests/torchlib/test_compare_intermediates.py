"""verify(..., compare_intermediates=True): the first FX node whose ONNX value differs from torch."""

import inspect
import runpy
import sys

import pytest
import torch
import torch.nn.functional as F

import torchlib
from graph_builder import op
from torchlib.exporter.intermediates import OPTIMIZED, VerifyReport


def broken_gelu(x, approximate: str = "none"):
    """gelu(Tensor self, *, str approximate='none') -> Tensor"""
    return op.Relu(x)  # deliberately wrong: gelu is not relu for negative inputs


class Block(torch.nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.conv = torch.nn.Conv1d(width, width, 3, padding=1)
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 2 * width)
        self.down = torch.nn.Linear(2 * width, width)

    def forward(self, x):  # x: [batch, seq, width]
        h = torch.relu(self.conv(x.transpose(1, 2)).transpose(1, 2)) + x
        h = self.norm(h)
        h = F.gelu(self.up(h))  # GELU_LINE: the line compare_intermediates must name
        return torch.tanh(self.down(h)) * 0.5 + h.mean(-1, keepdim=True)


class Net(torch.nn.Module):
    def __init__(self, width: int = 8, depth: int = 4):
        super().__init__()
        self.embed = torch.nn.Linear(4, width)
        self.blocks = torch.nn.ModuleList(Block(width) for _ in range(depth))
        self.head = torch.nn.Linear(width, 2)

    def forward(self, x):
        h = torch.relu(self.embed(x))
        for block in self.blocks:
            h = block(h)
        return self.head(h).softmax(-1)


GELU_LINE = next(i for i, line in enumerate(inspect.getsource(sys.modules[__name__]).splitlines(), 1)
                 if "# GELU_LINE" in line and "F.gelu" in line)


@pytest.fixture(scope="module")
def sample():
    torch.manual_seed(0)
    return Net().eval(), torch.randn(2, 5, 4)


@pytest.fixture(scope="module")
def broken(sample):
    model, x = sample
    # check=False: export's self-check on the sample would raise on the wrong function first
    return torchlib.export(model, (x,), functions={torch.ops.aten.gelu.default: broken_gelu}, check=False)


def test_the_model_has_about_50_nodes(sample, broken):
    assert 40 <= len(broken.fx_to_onnx) <= 80, len(broken.fx_to_onnx)


def test_fx_nodes_map_to_onnx_value_names(broken):
    names = {v.name for node in broken.graph.nodes for v in node.outputs}
    assert broken.fx_to_onnx["gelu"] and set(broken.fx_to_onnx["gelu"]) <= names
    assert all(isinstance(n, str) for ns in broken.fx_to_onnx.values() for n in ns)


def test_names_the_broken_function_its_module_and_source_line(sample, broken, tmp_path):
    model, x = sample
    assert not all(d.ok() for d in broken.verify(x))  # the plain call: a list of OutputDiff, as before
    report = broken.verify(x, compare_intermediates=True, repro_dir=tmp_path)
    assert isinstance(report, VerifyReport)
    first = report.first_divergence
    assert first is not None
    assert first.fx_node == "gelu" and first.aten_op == "aten.gelu.default"
    assert first.module == "blocks.0"
    assert f"test_compare_intermediates.py:{GELU_LINE} in forward" in first.source
    assert first.inputs == ["linear_1: float32[2, 5, 16]"]
    assert not first.diff.ok() and first.diff.max_abs > 1e-2
    assert "aten.gelu.default" in str(report) and f":{GELU_LINE}" in str(first)
    # every node before the gelu agrees
    fx_order = list(broken.fx_to_onnx)
    assert all(report.compared[n].ok() for n in fx_order[:fx_order.index("gelu")] if n in report.compared)

    # the repro fails alone with the broken function, and passes with torchlib's own
    assert report.repro == str(tmp_path / "repro.py")
    main = runpy.run_path(report.repro)["main"]
    with pytest.raises(AssertionError, match="aten.gelu.default differs"):
        main(functions={torch.ops.aten.gelu.default: broken_gelu})
    main()  # torchlib's own gelu agrees with torch on the recorded inputs


def test_an_unbroken_model_reports_no_divergence(sample):
    model, x = sample
    result = torchlib.export(model, (x,))
    report = result.verify(x, compare_intermediates=True)
    assert report.first_divergence is None
    assert all(d.ok() for d in report.outputs)
    assert len(report.compared) + len(report.not_compared) == len(result.fx_to_onnx)
    assert "no node differs" in str(report)


class ConvBatchNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 4, 1)
        self.bn = torch.nn.BatchNorm1d(4)
        with torch.no_grad():  # statistics far from the identity: the folded Conv computes another value
            self.bn.running_mean.uniform_(-2, 2)
            self.bn.running_var.uniform_(0.5, 2)
            self.bn.weight.uniform_(-2, 2)

    def forward(self, x):
        return self.bn(self.conv(x)).relu().reshape(4, 5) * 2  # (a second Reshape would be merged into this one)


def test_values_the_optimizer_removed_or_rewrote_are_not_compared_not_errors():
    torch.manual_seed(0)
    x = torch.randn(1, 4, 5)
    result = torchlib.export(ConvBatchNorm().eval(), (x,))
    assert [n.op_type for n in result.graph.nodes].count("BatchNormalization") == 0  # folded into the Conv
    report = result.verify(x, compare_intermediates=True)
    assert report.first_divergence is None, report.first_divergence
    # the Conv's value is now conv + batch norm: not the FX conv1d's value any more
    assert result.fx_to_onnx["conv1d"] == [] and result.fx_to_onnx["batch_norm"] == []
    assert report.not_compared["conv1d"] == OPTIMIZED and report.not_compared["batch_norm"] == OPTIMIZED
    assert "reshape" in report.compared and "mul" in report.compared  # their nodes and inputs are as translated


def test_repro_dir_needs_compare_intermediates(sample, broken):
    with pytest.raises(TypeError, match="compare_intermediates=True"):
        broken.verify(sample[1], repro_dir="somewhere")
