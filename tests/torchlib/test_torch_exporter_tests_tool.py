"""tools/run_torch_exporter_tests.py routes torch.onnx.export(dynamo=True) to torchlib and hands
torch's tests an ONNXProgram over torchlib's graph."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

TOOL = Path(__file__).resolve().parents[2] / "tools" / "run_torch_exporter_tests.py"


@pytest.fixture(scope="module")
def tool():
    pytest.importorskip("onnx_ir")
    spec = importlib.util.spec_from_file_location("run_torch_exporter_tests", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TwoOutputs(torch.nn.Module):
    def forward(self, x):
        return {"doubled": x * 2, "shifted": x + 1}


def test_routed_export_gives_an_onnx_program_of_torchlibs_graph(tool):
    export = tool.routed_export(tool.installed_keywords(torch.onnx.export))
    x = torch.randn(2, 3)
    program = export(TwoOutputs(), (x,), dynamo=True, fallback=False, verbose=False)  # fallback: torch 2.13 has none
    assert isinstance(program, torch.onnx.ONNXProgram)
    assert [v.name for v in program.model.graph.outputs] == ["doubled", "shifted"]  # torchlib's names
    assert program._capture_strategy == "TorchExportNonStrictStrategy"
    torch.testing.assert_close(program(x)[0], x * 2)


def test_outcomes_of_a_junit_report(tool, tmp_path):
    report = tmp_path / "r.xml"
    report.write_text('<testsuites><testsuite><testcase classname="m.C" name="test_a"/>'
                      '<testcase classname="m.C" name="test_b"><failure message="boom&#10;more"/></testcase>'
                      '<testcase classname="m.C" name="test_c"><skipped message="no gpu"/></testcase>'
                      '</testsuite></testsuites>')
    assert tool.outcomes(report) == {"m.C::test_a": ("passed", ""), "m.C::test_b": ("failed", "boom"),
                                     "m.C::test_c": ("skipped", "no gpu")}
