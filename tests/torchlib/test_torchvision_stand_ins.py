"""`import torchlib` makes torchvision importable where its compiled ops do not load
(torchlib/torchvision_stand_ins.py), as a user meets it: each case in a fresh interpreter, with
nothing from this suite's conftest.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None, reason="torchvision is not installed")


def python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)


def test_torchvision_and_its_ops_work_after_import_torchlib(tmp_path):
    proc = python(
        "import sys, torchlib\n"
        "assert 'torch' not in sys.modules  # nothing happens before torchvision is imported\n"
        "import torch, torchvision\n"
        "boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60.]])\n"
        "print(torchvision.ops.nms(boxes, torch.tensor([0.9, 0.8, 0.7]), 0.5).tolist())\n"
        "from torchvision.models.detection import _utils  # a submodule, found as usual\n"
        "print(type(torchvision.__spec__.loader).__name__, type(torchvision.__loader__).__name__)\n"
        "from torchlib.torchvision_stand_ins import Finder\n"
        "print(any(isinstance(f, Finder) for f in sys.meta_path))\n",
        tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the torch port of nms answers; torchvision's own loader is back; the finder has stepped aside
    assert proc.stdout.split("\n")[:3] == ["[0, 2]", "SourceFileLoader SourceFileLoader", "False"]


def test_transformers_model_class_after_import_torchlib(tmp_path):
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    proc = python("import torchlib, transformers\nprint(transformers.LlamaForCausalLM.__name__)\n", tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "LlamaForCausalLM"


def test_a_find_spec_alone_defines_nothing(tmp_path):
    """transformers asks importlib.util.find_spec("torchvision") to know whether it is there: an
    answer, not an import, so torch is not loaded and the stand-ins wait for the import."""
    proc = python(
        "import importlib.util, sys, torchlib\n"
        "assert importlib.util.find_spec('torchvision') is not None\n"
        "print('torch' in sys.modules)\n"
        "import torchvision\n"
        "print(torchvision.ops.nms.__name__)\n",
        tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["False", "nms"]


def test_real_compiled_ops_are_never_replaced(tmp_path):
    """Where torchvision's own library loads (a build for this torch), the stand-ins are not
    defined: here `_own_ops_load` is made to answer so, and torchvision's import then meets
    no torchvision::nms of ours."""
    proc = python(
        "import torchlib\n"
        "from torchlib.conformance import torchvision_reference as reference\n"
        "reference._own_ops_load = lambda folders=None: True\n"
        "assert reference.define() is False and reference._LIBRARY is None\n"
        "import torch\n"
        "print(hasattr(torch.ops.torchvision, 'nms'))\n",
        tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "False"
