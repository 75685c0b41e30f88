"""`python -m codegen coverage`: counts over functional overloads, per namespace, and the missing list."""

import json
import subprocess
import sys

import pytest

from codegen import coverage, native
from codegen.__main__ import main

OVERLOADS = native.parse_entries(
    [
        {"func": "relu(Tensor self) -> Tensor", "tags": ["core", "pointwise"]},
        {"func": "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "tags": "core"},
        {"func": "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", "tags": "core"},
        {"func": "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"},
        {"func": "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", "tags": "core"},
        {"func": "linalg_det(Tensor A) -> Tensor", "python_module": "linalg"},
        {"func": "elu(Tensor self, Scalar alpha=1) -> Tensor", "python_module": "nn"},
    ]
)


def test_counts_exclude_out_and_inplace_and_list_missing():
    report = coverage.coverage(OVERLOADS, ["aten::relu", "aten::add_.Tensor", "aten::linalg_det", "aten::sym_size.int", "_operator::add"])
    assert report["core"] == {"covered": 1, "total": 3, "percent": 33.3, "missing": ["aten::_softmax", "aten::add.Tensor"]}
    assert report["all"]["covered"] == 2 and report["all"]["total"] == 5
    assert report["all"]["missing"] == ["aten::_softmax", "aten::add.Tensor", "aten::elu"]
    assert report["python_modules"]["linalg"]["covered"] == 1
    assert report["python_modules"]["nn"] == {"covered": 0, "total": 1, "percent": 0.0, "missing": ["aten::elu"]}
    assert report["python_modules"]["torch"]["total"] == 3
    assert report["registered_namespaces"] == {
        "_operator": {"registered": 1},
        "aten": {"registered": 4, "functional": 2, "out_or_inplace": 1, "not_in_yaml": 1},
    }
    text = coverage.format_report(report)
    assert "  core ATen IR (tag core)          1 / 3      33.3%" in text
    assert "missing core overloads (2):\n  aten::_softmax\n  aten::add.Tensor" in text
    assert "(`--missing all` lists all 3 missing overloads)" in text
    assert "aten::elu" in coverage.format_report(report, "all")
    assert "missing" not in coverage.format_report(report, "none").split("registered names")[1]


def test_real_report_shape(capsys):
    assert main(["coverage", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["core"]["total"] > 150 and report["all"]["total"] > 1000
    assert set(report["python_modules"]) >= {"torch", "nn", "linalg", "fft", "special"}
    assert len(report["core"]["missing"]) == report["core"]["total"] - report["core"]["covered"]


# slow: the README test runs the same command in the default suite
@pytest.mark.slow
def test_command_prints_the_report():
    result = subprocess.run([sys.executable, "-m", "codegen", "coverage", "--missing", "none"], capture_output=True, text=True, check=True)
    assert result.stdout.startswith("ATen coverage, native_functions.yaml of torch ")
    assert "core ATen IR (tag core)" in result.stdout and "by namespace (python_module):" in result.stdout
