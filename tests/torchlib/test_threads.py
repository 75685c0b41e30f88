"""Exports from several threads at once: each one works, and the user's module keeps its weights
(torch.export swaps parameters for fake tensors while it traces; two captures of one module at
once used to leave every parameter a FakeTensor)."""

from __future__ import annotations

import threading

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensor

from torchlib.exporter import capture as capture_module
from torchlib.exporter import export


def _model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5)).eval()


def _state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v for k, v in model.state_dict(keep_vars=True).items()}


def _assert_untouched(model: torch.nn.Module, before: dict[str, torch.Tensor], copies: dict[str, torch.Tensor]) -> None:
    after = _state(model)
    assert after.keys() == before.keys()
    for name, tensor in after.items():
        assert tensor is before[name], name  # the very objects the user had
        assert not isinstance(tensor, FakeTensor), name
        assert torch.equal(tensor.detach(), copies[name]), name


def test_threads_exporting_the_same_and_other_modules():
    shared = _model(0)
    others = [_model(seed) for seed in (1, 2)]
    models = [shared] * 4 + others
    before = {id(m): _state(m) for m in models}
    copies = {id(m): {k: v.detach().clone() for k, v in _state(m).items()} for m in models}
    x = torch.randn(2, 3, 8, 8)
    results: list = [None] * len(models)
    errors: list[BaseException] = []
    start = threading.Barrier(len(models))

    def work(i: int) -> None:
        try:
            start.wait()
            results[i] = export(models[i], (x,))
        except BaseException as e:  # noqa: BLE001  (reported by the assertion below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(models))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for model in models:
        _assert_untouched(model, before[id(model)], copies[id(model)])
    for result in results:
        assert all(d.ok() for d in result.verify(x))


def test_a_failing_capture_puts_the_module_state_back(monkeypatch):
    """Whatever torch.export leaves behind when it fails, the user's module comes back as it was."""
    model = _model(0)
    before = _state(model)
    copies = {k: v.detach().clone() for k, v in before.items()}

    def swap_and_fail(module, *args, **kwargs):
        for m in module.modules():
            for name in list(m._parameters):
                m._parameters[name] = torch.nn.Parameter(torch.zeros_like(m._parameters[name]))
            for name in list(m._buffers):
                m._buffers[name] = torch.ones_like(m._buffers[name])
        raise RuntimeError("torch.export failed half way")

    monkeypatch.setattr(torch.export, "export", swap_and_fail)
    monkeypatch.setattr(torch.export, "draft_export", swap_and_fail)
    with pytest.raises(capture_module.CaptureError):
        export(model, (torch.randn(1, 3, 8, 8),))
    _assert_untouched(model, before, copies)
