"""verify(compare_intermediates=True): a deliberately broken function is named, with its source
line in this file, and its one-node repro fails alone (docs/debugging.md)."""

from __future__ import annotations

import runpy

import torch

import torchlib
from graph_builder import op


def wrong_gelu(self, *, approximate="none"):  # broken on purpose: relu is not gelu below zero
    return op.Relu(self)


class Block(torch.nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1)
        self.norm = torch.nn.GroupNorm(2, c)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))) + x


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(*[Block(4) for _ in range(5)])
        self.fc1 = torch.nn.Linear(64, 32)
        self.ln = torch.nn.LayerNorm(32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        y = self.blocks(x).flatten(1)
        y = self.ln(self.fc1(y))
        y = torch.nn.functional.gelu(y)  # THE GELU LINE
        return torch.tanh(self.fc2(y)).softmax(-1)


def _export(functions=None):
    torch.manual_seed(0)
    model = Model().eval()
    x = torch.randn(2, 4, 4, 4)
    return torchlib.export(model, (x,), functions=functions, check=False), x


def test_no_breakage_reports_no_node():
    result, x = _export()
    report = result.verify(x, compare_intermediates=True)
    assert report.ok and report.mismatch is None, str(report)
    assert report.compared >= 25
    assert "all within tolerance" in str(report)
    assert set(result.fx_to_onnx) <= {n.name for n in result.exported_program.graph.nodes}


def test_broken_function_is_named_with_its_source_line(tmp_path):
    broken = {torch.ops.aten.gelu.default: wrong_gelu}
    result, x = _export(broken)
    assert len(list(result.exported_program.graph.nodes)) >= 50
    assert not all(d.ok() for d in result.verify(x))  # the outputs differ: which node?
    report = result.verify(x, compare_intermediates=True, repro_dir=tmp_path)
    m = report.mismatch
    assert m is not None, str(report)
    assert m.aten_op == "aten.gelu.default"
    assert "test_compare_intermediates.py" in m.source and "THE GELU LINE" in m.source
    assert m.inputs == ["float32[2, 32]"] and m.diff.max_abs > 0.01
    assert result.fx_to_onnx[m.node] == m.onnx_value
    assert "aten.gelu.default" in str(report) and "THE GELU LINE" in str(report)
    # the repro fails alone with the broken function, and passes with the library's
    repro = runpy.run_path(report.repro)
    assert repro["main"](functions=broken) == 1
    assert repro["main"]() == 0
