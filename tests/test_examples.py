"""Every script in examples/ runs, in its quick form (`--quick`), as a user would run it: in a
fresh interpreter from an empty folder, with nothing from this suite's conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def run_script(path: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The script in a fresh interpreter; the checkout on PYTHONPATH, one thread as in CI."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, str(path), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def check_ran(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, f"{what} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"


def test_every_use_has_an_example():
    names = {p.stem for p in EXAMPLES}
    assert names >= {"export_torchvision", "chat_model", "custom_op", "new_aten_function", "big_model",
                     "conformance_report"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path: Path, tmp_path: Path):
    proc = run_script(path, ["--quick"], tmp_path)
    check_ran(proc, f"python examples/{path.name} --quick")
    assert proc.stdout.strip(), f"{path.name} printed nothing"
