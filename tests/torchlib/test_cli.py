"""The command line as a new user meets it: every mistake is one clear message and an exit code."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import onnx
import pytest

from torchlib.__main__ import main

MODELS = textwrap.dedent("""
    import torch

    class DataDependent(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x * 2
            return x - 1

    def make_datadep():
        return DataDependent(), (torch.randn(3),)

    class Broken(torch.nn.Module):
        def forward(self, x):
            return x.reshape(5, -1)

    def make_broken():
        return Broken(), (torch.randn(3),)

    def make_seq():
        return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()), (torch.randn(2, 4),)

    def make_lstm():
        return torch.nn.LSTM(4, 8, batch_first=True), (torch.randn(2, 5, 4),)

    def make_unsupported():
        class M(torch.nn.Module):
            def forward(self, x):
                return torch.ops.aten.hash_tensor(x)  # aten::hash_tensor: no function, no decomposition
        return M(), (torch.randn(3, 4),)

    def make_meta():
        with torch.device("meta"):
            model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU())
        return model, (torch.randn(2, 64),)

    def make_raises():
        raise ValueError("bad config")

    def make_raises_wrapped():  # as transformers wraps a failed lazy import of a model class
        try:
            raise RuntimeError("operator torchvision::nms does not exist")
        except RuntimeError as e:
            raise ModuleNotFoundError("Could not import module 'LlamaConfig'") from e

    def make_wrong():
        return 3
""")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "usermodels.py").write_text(MODELS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("usermodels", None)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["nosuch.module:make", "-o", "m.onnx"], "error: no module named 'nosuch.module'"),
        (["usermodels:nosuch", "-o", "m.onnx"], "error: module 'usermodels' has no 'nosuch'; it defines: Broken, DataDependent, make_broken"),
        (["usermodels", "-o", "m.onnx"], "error: expected MODULE:FACTORY"),
        (["missing.py:make", "-o", "m.onnx"], "error: no file 'missing.py'"),
        (["usermodels:make_raises", "-o", "m.onnx"], "error: usermodels:make_raises() raised ValueError: bad config"),
        (["usermodels:make_raises_wrapped", "-o", "m.onnx"], "raised ModuleNotFoundError: Could not import module "
         "'LlamaConfig'\n  caused by RuntimeError: operator torchvision::nms does not exist"),
        (["usermodels:make_wrong", "-o", "m.onnx"], "error: usermodels:make_wrong() must return (model, args)"),
        (["usermodels:make_seq", "-o", "m.onnx", "--dynamic", "x:0=batch"], "forward() has no input 'x'; its inputs are input"),
        (["usermodels:make_seq", "-o", "m.onnx", "--dynamic", "input:5=b"], "input 'input' has 2 dims, no axis 5"),
        (["usermodels:make_seq", "-o", "m.onnx", "--dynamic", "input"], "expected INPUT:AXIS=NAME"),
        (["usermodels:make_seq", "-o", "m.onnx", "--opset", "12"], "torchlib writes opsets 18 to 23"),
        (["usermodels:make_unsupported", "-o", "m.onnx"], "python -m codegen coverage --op aten::hash_tensor"),
        (["usermodels:make_broken", "-o", "m.onnx"], "torch.export could not capture the model (non-strict): "),
        (["usermodels:make_seq", "-o", "m.onnx", "--opset", "20", "--weight-quantization", "int4"], "needs --opset 21 or more"),
        (["usermodels:make_seq", "-o", "m.onnx", "--weight-quantization", "int4", "--block-size", "20"], "power of two"),
        (["usermodels:make_meta", "-o", "m.onnx"], "weights are on the meta device"),
        (["usermodels:make_meta", "-o", "m.onnx", "--weights", "nofile.safetensors"], "--weights nofile.safetensors: no such file or directory"),
    ],
)
def test_user_mistakes_are_one_message(workdir, capsys, argv, message):
    code, out, err = run(capsys, "export", *argv)
    assert code == 2, (out, err)
    assert message in err
    assert err.startswith("error: ")
    assert "Traceback" not in err and "Traceback" not in out
    assert not os.path.exists(workdir / "m.onnx")


def test_capture_failure_names_the_user_line(workdir, capsys):
    code, _, err = run(capsys, "export", "usermodels:make_broken", "-o", "m.onnx")
    assert code == 2
    assert f"at {workdir / 'usermodels.py'}:15 in forward: return x.reshape(5, -1)" in err
    assert "what to try:" in err and "then strict failed too" in err
    assert "Traceback" not in err


def test_data_dependent_branch_is_captured_by_draft_export_with_a_warning(workdir, capsys):
    """draft_export follows the sample's branch: the user is told, with the line and the advice."""
    code, out, err = run(capsys, "export", "usermodels:make_datadep", "-o", "m.onnx")
    assert code == 0
    assert err.startswith("warning: draft_export made the program follow the sample's path")
    assert f"at {workdir / 'usermodels.py'}:6 in forward: if x.sum() > 0:" in err
    assert "def forward" not in err  # torch's partial graphs go to --debug only


def test_debug_shows_the_traceback(workdir, capsys):
    from torchlib.exporter import CaptureError

    with pytest.raises(CaptureError):
        main(["export", "usermodels:make_broken", "-o", "m.onnx", "--debug"])


def test_output_path_is_checked_before_export(workdir, capsys):
    (workdir / "afile").write_text("")
    code, _, err = run(capsys, "export", "usermodels:make_seq", "-o", "afile/sub/m.onnx")
    assert code == 2 and "cannot create the output directory" in err
    code, _, err = run(capsys, "export", "usermodels:make_seq", "-o", str(workdir))
    assert code == 2 and "is a directory" in err


def test_export_with_dynamic_dims_output_names_and_new_directory(workdir, capsys):
    code, out, err = run(capsys, "export", "usermodels:make_seq", "-o", "out/dir/m.onnx", "--dynamic", "input:0=batch",
                         "--output-names", "logits", "--verify")
    assert code == 0, err
    assert "wrote out/dir/m.onnx" in out and "logits: max abs" in out and ": ok" in out
    assert "allowed" in out and "atol" in out  # which tolerance made it ok
    model = onnx.load(workdir / "out/dir/m.onnx")
    assert [o.name for o in model.graph.output] == ["logits"]
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_file_path_factory(workdir, capsys):
    code, out, err = run(capsys, "export", str(workdir / "usermodels.py") + ":make_seq", "-o", "m.onnx")
    assert code == 0, err
    assert os.path.exists(workdir / "m.onnx")


def test_rnn_export_prints_no_torch_chatter(workdir, capsys):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, err = run(capsys, "export", "usermodels:make_lstm", "-o", "m.onnx")
    assert code == 0
    assert err == ""
    assert not [w for w in caught if "were assigned during export" in str(w.message)]


def test_demo_says_what_it_wrote(tmp_path, capsys):
    code, out, err = run(capsys, "demo", "--output-dir", str(tmp_path / "demo"))
    assert code == 0, err
    from torchlib.exporter.demo import DEMOS

    for name in DEMOS:
        assert f"-> {tmp_path / 'demo' / name}.onnx" in out
        assert (tmp_path / "demo" / f"{name}.onnx").exists()


def test_unknown_command_and_help():
    assert main(["nosuch"]) == 2
    assert main(["--help"]) == 0


def test_no_traceback_in_a_real_process(workdir):
    """The same as a user sees it: a separate interpreter, the real exit code."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), *sys.path]))
    proc = subprocess.run([sys.executable, "-m", "torchlib", "export", "nosuch:make", "-o", "m.onnx"],
                          capture_output=True, text=True, env=env, cwd=workdir, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no module named 'nosuch'")
    assert "Traceback" not in proc.stderr


# slow: starts a worker per core; the README test's quick conformance run writes a report by default
@pytest.mark.slow
def test_conformance_with_a_report_file_prints_the_summary_and_uses_every_core(tmp_path, capsys):
    from torchlib.conformance.cli import _cores, _parser

    assert _parser().parse_args([]).jobs == _cores() >= 1
    html = tmp_path / "conformance.html"
    code = main(["conformance", "--ops", "abs", "--dtypes", "float32", "--max-samples", "1", "--no-progress",
                 "-j", "1", "--html", str(html)])
    out = capsys.readouterr().out
    assert code == 0 and html.exists()
    assert "|" not in out, "the matrix goes to the file; the terminal gets the summary"
    assert "passed" in out


def test_meta_model_with_weights_file_and_quantization(workdir, capsys):
    import numpy as np

    from graph_builder.weight_sources import write_safetensors

    rng = np.random.default_rng(0)
    arrays = {"0.weight": rng.standard_normal((32, 64)).astype(np.float32), "0.bias": np.zeros(32, np.float32)}
    write_safetensors(workdir / "w.safetensors", {k: (a.dtype, a.shape) for k, a in arrays.items()}, arrays.values())
    code, out, err = run(capsys, "export", "usermodels:make_meta", "-o", "m.onnx", "--weights", "w.safetensors",
                         "--weight-quantization", "int8", "--opset", "21")
    assert code == 0, err
    assert "note: weight_quantization: 1 MatMul/Gemm weight(s) quantized to int8" in out
    model = onnx.load(workdir / "m.onnx")
    assert {i.name for i in model.graph.initializer} == {"0.weight_quantized", "0.weight_scale", "0.bias"}  # Gemm(transB=1) reads the weight as stored
