"""The README is the front door: its Python snippets and every command it quotes must run.

Each snippet runs as a user would run it: in a fresh interpreter from an empty folder, with
nothing from this suite's conftest.py. The default run executes each quoted command in a quick
form (fewer repeats, one op for the conformance run, the same entry point and options); `-m slow`
runs each exactly as written.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()

# Options appended to a command in the default (quick) run: same code path, less work.
QUICK = {
    "python -m torchlib conformance": ["--ops", "abs", "--dtypes", "float32"],
    "python bench/bench_export.py": ["--repeat", "1", "--models", "mlp"],
    "python bench/bench_graph_builder.py": ["--nodes", "300", "--repeat", "50"],
    "python bench/bench_latency.py": ["--models", "cnn", "--runs", "10"],
    "python bench/bench_capture.py": ["--repeat", "1", "--models", "mlp"],
    "python bench/bench_export_time.py": ["--repeat", "1", "--models", "resnet"],
    "python bench/bench_attention_past.py": ["--runs", "3", "--past", "16"],
}
# Commands not run here: installing (CI does it first), the test suite itself, the
# compatibility runner (it builds a venv from the registry and runs the suite in it), the
# runner of torch's exporter tests (it needs a pytorch checkout, which this repo does not carry),
# the documentation build (the docs extra; CI runs it as a step of its own in .ci/run), and the
# importer's command, which reads a user's file (tests/importer/test_import_cli.py runs it).
NOT_RUN = ("pip install", "python -m pytest", "python tools/compat.py", "python tools/run_torch_exporter_tests.py",
           "python -m mkdocs", "python -m torchlib import ", "python -m torchlib genai ")


def _commands() -> list[str]:
    """Every `python ...` command in the README: lines of sh blocks and inline code spans."""
    found: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("python ") and part not in found:
                    found.append(part)
    for span in re.findall(r"`(python [^`]+)`", README):
        if span not in found and "MODULE:FACTORY" not in span and "..." not in span:
            found.append(span)
    return [c for c in found if not c.startswith(NOT_RUN)]


COMMANDS = _commands()


def _run(command: str, extra: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    argv[0] = sys.executable
    for i, a in enumerate(argv):
        if a.startswith(("bench/", "tools/")):
            argv[i] = str(ROOT / a)
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run(argv + extra, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3000)


def test_readme_quotes_commands():
    assert any("torchlib export" in c for c in COMMANDS)
    assert any("codegen coverage" in c for c in COMMANDS)


def test_readme_stays_a_front_door():
    """At most 200 lines, and the quick starts come before the tables: figures and their
    history belong in docs/ (docs/performance.md, docs/benchmarks.md), not here."""
    lines = README.splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move detail into docs/"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == ["## Set up", "## Quick start"], headings


PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_snippet_runs(index, tmp_path):
    """Every Python block runs as copied, alone, in a fresh interpreter (no conftest help)."""
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(PYTHON_BLOCKS[index])
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"README python block {index}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    if index == 0:
        assert (tmp_path / "model.onnx").exists()


def _quick(command: str) -> list[str]:
    for prefix, extra in QUICK.items():
        if command.startswith(prefix):
            return extra
    return []


def _quick_commands() -> list[str]:
    """One quick run per entry point and options: `bench_export.py` and `bench_export.py
    --repeat 3` are the same quick command."""
    seen: dict[str, str] = {}
    for c in COMMANDS:
        key = next((prefix for prefix in QUICK if c.startswith(prefix)), c)
        seen.setdefault(key, c)
    return list(seen.values())


# Quick runs of the benchmark scripts each export the reference too (onnxscript): 10-20 s apiece.
# They carry the `readme_bench` marker, out of the default run; CI runs them as a separate step
# (`python -m pytest -m readme_bench`).
def _marked(command: str) -> Any:
    if command.startswith("python bench/"):
        return pytest.param(command, marks=pytest.mark.readme_bench)
    return command


# The lint commands need the lint extra (`pip install -e .[lint]`), which CI installs; the
# compatibility venvs (tools/compat.py) test the package against other torch versions without it
LINT_TOOLS = {"python tools/typecheck.py": "mypy", "ruff": "ruff"}


def _skip_without_lint_tool(command: str) -> None:
    tool = next((t for prefix, t in LINT_TOOLS.items() if command.startswith(prefix)), None)
    if tool is not None and importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed here (the lint extra: pip install -e .[lint]; CI installs it)")


@pytest.mark.parametrize("command", [_marked(c) for c in _quick_commands()])
def test_command_runs(command, tmp_path):
    _skip_without_lint_tool(command)
    proc = _run(command, _quick(command), tmp_path)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_command_runs_as_written(command, tmp_path):
    proc = _run(command, [], tmp_path)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
