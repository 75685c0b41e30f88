"""`python -m codegen coverage`: counts over functional overloads, per namespace, and the missing list."""

import json
import subprocess
import sys

import pytest

from codegen import coverage, decomposed, native
from codegen.__main__ import main
from codegen.decomposed import COMPOSITE, DECOMPOSITION, Route

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


# -- missing overloads that export through a torch decomposition (codegen/decomposed.py) ---------------------


def test_report_separates_the_missing_that_need_a_function_from_the_decomposed():
    routes = {"aten::elu": Route(DECOMPOSITION, nodes=5, verified=True, sample="OpInfo nn.functional.elu float32 sample 0"),
              "aten::_softmax": Route(COMPOSITE)}
    report = coverage.coverage(OVERLOADS, ["aten::relu", "aten::linalg_det"], routes)
    assert report["decomposed"]["aten::elu"] == {"how": DECOMPOSITION, "nodes": 5, "verified": True,
                                                 "sample": "OpInfo nn.functional.elu float32 sample 0", "error": ""}
    text = coverage.format_report(report, "all")
    assert "missing overloads (3): 1 need a function, 2 export through a torch decomposition" in text
    assert "missing overloads that need a function (1):\n  aten::add.Tensor\n" in text
    assert ("  aten::elu       exports through torch's decomposition: 5 ONNX nodes "
            "(OpInfo nn.functional.elu float32 sample 0, matches torch)") in text
    assert "  aten::_softmax  exports through its CompositeImplicitAutograd kernel\n" in text + "\n"
    # a decomposition whose export fails (found by --nodes) leaves the overload in need of a function
    routes["aten::elu"] = Route(DECOMPOSITION, sample="OpInfo elu float32 sample 0", error="UnsupportedOpsError: x")
    text = coverage.format_report(coverage.coverage(OVERLOADS, ["aten::relu", "aten::linalg_det"], routes), "all")
    assert "missing overloads (3): 2 need a function, 1 export through a torch decomposition" in text
    assert ("  aten::elu  has torch's decomposition, but exporting it fails (OpInfo elu float32 sample 0): "
            "UnsupportedOpsError: x") in text


@pytest.fixture(scope="module")
def exporter_table():
    import torchlib
    from torchlib.exporter.export import decomposition_table

    return decomposition_table(torchlib.get_registry())


def test_routes_of_a_few_real_overloads(exporter_table):
    found = decomposed.routes(["aten::take", "aten::_aminmax", "aten::cartesian_prod", "aten::no_such_op"],
                              exporter_table)
    assert found["aten::take"].how == DECOMPOSITION  # in torch.export.default_decompositions()
    assert found["aten::cartesian_prod"].how == COMPOSITE  # torch.export decomposes it before the exporter
    assert "aten::_aminmax" not in found and "aten::no_such_op" not in found


def test_measure_exports_the_overload_alone_on_an_opinfo_sample(exporter_table):
    take = decomposed.measure("aten::take", decomposed.routes(["aten::take"], exporter_table)["aten::take"])
    assert take.nodes is not None and 1 <= take.nodes <= 10 and take.verified is True
    assert take.sample.startswith("OpInfo take float32 sample")
    assert str(take).startswith(f"exports through torch's decomposition: {take.nodes} ONNX nodes (OpInfo take")
    no_opinfo = decomposed.measure("aten::_cast_Byte", Route(DECOMPOSITION))
    assert no_opinfo.nodes is None and no_opinfo.sample == "no OpInfo to count with"


def test_op_says_whether_a_missing_overload_exports_today():
    overloads = native.parse_entries([{"func": "take(Tensor self, Tensor index) -> Tensor"},
                                      {"func": "_aminmax(Tensor self) -> (Tensor, Tensor)"}])
    routes = {"aten::take": Route(DECOMPOSITION, nodes=2, verified=True, sample="OpInfo take float32 sample 0")}
    text = coverage.describe_op("take", overloads, {}, routes)
    assert "today it exports through torch's decomposition: 2 ONNX nodes" in text
    text = coverage.describe_op("_aminmax", overloads, {}, routes)
    assert "torch has no decomposition for it: it does not export today" in text
