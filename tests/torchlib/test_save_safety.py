"""save() is atomic: a write that fails part way (a full disk) leaves the model that was at the
path, and its .data file, as they were; a new save never leaves a stale .data file beside it."""

from __future__ import annotations

import errno
import os

import numpy as np
import onnxruntime as ort
import pytest
import torch

from graph_builder import ir, weights
from torchlib.exporter import export

X = torch.randn(2, 64)


def _model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))


@pytest.fixture(scope="module")
def old_and_new():
    """Two exports of the same architecture with other weights: the file on disk, and its replacement."""
    return [export(_model(seed), (X,)) for seed in (0, 1)]


def _run_file(path) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: X.numpy()})[0]


def _expected(result) -> np.ndarray:
    return result.model(X).detach().numpy()


def _disk_full_after(monkeypatch, what: str, calls: int) -> None:
    """The `calls`-th write of `what` ("model": the model's bytes, "data": a weight) raises ENOSPC,
    after the earlier ones went to the file."""
    count = [0]

    def full() -> None:
        count[0] += 1
        if count[0] >= calls:
            raise OSError(errno.ENOSPC, "No space left on device")

    if what == "model":
        original = ir.Graph.model_parts

        def model_parts(self, *args, **kwargs):
            for part in original(self, *args, **kwargs):
                full()
                yield part

        monkeypatch.setattr(ir.Graph, "model_parts", model_parts)
    else:
        original_release = weights.release

        def release(array):  # called after each weight is written
            full()
            return original_release(array)

        monkeypatch.setattr(weights, "release", release)


@pytest.mark.parametrize("old_external", [False, True])
@pytest.mark.parametrize("new_external, fails_in", [(False, "model"), (True, "model"), (True, "data")])
def test_a_failed_save_leaves_the_old_model_loadable_and_no_temporary_file(
        tmp_path, monkeypatch, old_and_new, old_external, new_external, fails_in):
    old, new = old_and_new
    path = tmp_path / "model.onnx"
    old.save(path, external_data=old_external)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert ("model.onnx.data" in before) == old_external
    _disk_full_after(monkeypatch, fails_in, calls=2)
    with pytest.raises(OSError, match="No space left"):
        new.save(path, external_data=new_external)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # same files, same bytes
    np.testing.assert_allclose(_run_file(path), _expected(old), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("old_external, new_external", [(True, False), (False, True), (True, True), (False, False)])
def test_save_over_a_model_leaves_only_the_new_files(tmp_path, old_and_new, old_external, new_external):
    old, new = old_and_new
    path = tmp_path / "model.onnx"
    old.save(path, external_data=old_external)
    data = new.save(path, external_data=new_external)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == (["model.onnx", "model.onnx.data"] if new_external else ["model.onnx"])
    assert data == (str(path) + ".data" if new_external else None)
    np.testing.assert_allclose(_run_file(path), _expected(new), rtol=1e-5, atol=1e-6)


def test_an_inline_save_keeps_a_data_file_the_old_model_did_not_reference(tmp_path, old_and_new):
    old, new = old_and_new
    path = tmp_path / "model.onnx"
    old.save(path, external_data=False)
    (tmp_path / "model.onnx.data").write_bytes(b"the user's own file")
    new.save(path, external_data=False)
    assert (tmp_path / "model.onnx.data").read_bytes() == b"the user's own file"


def test_save_creates_missing_folders_and_gives_ordinary_permissions(tmp_path, old_and_new):
    path = tmp_path / "a" / "b" / "model.onnx"
    old_and_new[0].save(path, external_data=True)
    np.testing.assert_allclose(_run_file(path), _expected(old_and_new[0]), rtol=1e-5, atol=1e-6)
    umask = os.umask(0)
    os.umask(umask)
    for name in ("model.onnx", "model.onnx.data"):
        assert os.stat(path.parent / name).st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0o600
