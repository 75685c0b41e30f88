"""Progress bars (graph_builder/progress.py): drawn on a terminal only, never under pytest, off by
a flag; and the long operations that use them (saving weights, the conformance run, the export
command) report on a terminal and stay silent otherwise."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from graph_builder import FLOAT, GraphBuilder, op
from graph_builder.progress import progress, shown, write


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def at_a_shell(monkeypatch) -> FakeTerminal:
    """From here on stderr is a terminal and no test is running, as for a person at a shell
    (called in the test's body: pytest sets sys.stderr and PYTEST_CURRENT_TEST for each phase)."""
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    return terminal


def test_never_under_pytest():
    assert not shown(True, FakeTerminal())  # pytest sets PYTEST_CURRENT_TEST while a test runs


def test_silent_when_not_a_terminal(monkeypatch):
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    stream = io.StringIO()
    assert list(progress(range(5), desc="work", file=stream)) == [0, 1, 2, 3, 4]
    assert stream.getvalue() == ""


def test_reports_on_a_terminal_and_the_flag_silences_it(monkeypatch):
    terminal = at_a_shell(monkeypatch)
    assert list(progress(range(5), desc="work", unit="model")) == [0, 1, 2, 3, 4]
    assert "work:" in terminal.getvalue() and "/5 " in terminal.getvalue()  # drawn at the start, then every 0.1 s
    terminal.seek(0)
    terminal.truncate()
    with progress(total=3, desc="manual", enabled=False) as bar:
        bar.update(3)
    assert list(progress(range(5), desc="work", enabled=False)) == [0, 1, 2, 3, 4]
    assert terminal.getvalue() == ""


def test_write_prints_above_the_bar(monkeypatch, capsys):
    terminal = at_a_shell(monkeypatch)
    with progress(total=2, desc="rows") as bar:
        write("| a | 1 |")
        bar.update(2)
    assert capsys.readouterr().out == "| a | 1 |\n"
    assert "rows:" in terminal.getvalue()


def _model_with_weights() -> GraphBuilder:
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 256])
    with g:
        y = op.MatMul(x, g.initializer("w", np.ones((256, 256), np.float32)))
    g.output(y, "y")
    return g


def test_saving_external_data_reports_the_bytes(monkeypatch, tmp_path):
    terminal = at_a_shell(monkeypatch)
    b = _model_with_weights()
    b.save(str(tmp_path / "m.onnx"), external_data=True, progress=False)
    assert terminal.getvalue() == ""
    b.save(str(tmp_path / "m.onnx"), external_data=True)
    assert "writing m.onnx.data" in terminal.getvalue()


def test_export_command_reports_the_weights_unless_asked_not_to(tmp_path, monkeypatch):
    terminal = at_a_shell(monkeypatch)
    from torchlib.__main__ import main

    monkeypatch.chdir(tmp_path)
    command = ["export", "torchlib.exporter.demo:small_cnn", "-o", "cnn.onnx", "--external-data"]
    assert main([*command, "--no-progress"]) == 0
    assert "writing" not in terminal.getvalue()
    assert main(command) == 0
    assert "writing cnn.onnx.data" in terminal.getvalue()


@pytest.mark.parametrize("flag, reported", [([], True), (["--no-progress"], False)])
def test_conformance_reports_its_cells(monkeypatch, flag, reported):
    terminal = at_a_shell(monkeypatch)
    from torchlib.conformance.cli import main

    # --ort-logs: stderr stays this process's sys.stderr (else it is a copy of file descriptor 2)
    assert main(["--ops", "neg", "--dtypes", "float32", "--max-samples", "1", "-j", "1", "-q", "--ort-logs", *flag]) == 0
    assert ("conformance" in terminal.getvalue()) == reported


@pytest.mark.parametrize("show, reported", [(True, True), (False, False)])
def test_compat_runner_follows_pytests_percentage(monkeypatch, show, reported):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("compat_tool", Path(__file__).parents[2] / "tools" / "compat.py")
    assert spec is not None and spec.loader is not None
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    terminal = at_a_shell(monkeypatch)
    fake_pytest = "print('....  [ 50%]'); print('....  [100%]'); print('8 passed in 0.1s')"
    proc = compat._run_tests([sys.executable, "-c", fake_pytest], show)
    assert proc.returncode == 0 and compat._counts(proc.stdout) == {"passed": 8}
    assert ("tests:" in terminal.getvalue()) == reported
