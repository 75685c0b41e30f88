"""Programs torch.export captures that the front end used to crash on, or answer wrongly:
each is exported with dynamic dims and compared with torch at several shapes."""

from __future__ import annotations

import sys
import textwrap

import pytest
import torch
from torch._higher_order_ops.while_loop import while_loop

from torchlib.__main__ import main
from torchlib.exporter import export

SIZES = (2, 3, 7)


class WriteRowOfInput(torch.nn.Module):
    def forward(self, x, y):
        x[0] = y[0]
        return x


class InPlaceViewThenWrite(torch.nn.Module):
    def forward(self, y):
        a = y.unsqueeze(0)
        a.squeeze_(0)
        a.add_(1)
        return a


class TransposeInPlaceThenWrite(torch.nn.Module):
    def forward(self, y):
        a = y.clone()
        a.t_()
        a.mul_(2)
        return a + 1, y


class IntCarryLoop(torch.nn.Module):
    def forward(self, x):
        i, y = while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x + i), (0, x))
        return y + i


class Difference(torch.nn.Module):
    def forward(self, a, b, scale=None):
        return a - b if scale is None else (a - b) * scale


class Classifier(torch.nn.Module):
    """DistilBERT's calling convention: forward(input_ids, attention_mask), called with keywords."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, input_ids, attention_mask):
        h = self.embed(input_ids) * attention_mask.unsqueeze(-1)
        return self.head(h.sum(1) / attention_mask.sum(1, keepdim=True))


def _inputs(model: torch.nn.Module, n: int) -> tuple:
    torch.manual_seed(n)
    if isinstance(model, WriteRowOfInput):
        return torch.randn(n, 4), torch.randn(n, 4)
    return (torch.randn(n, 4) if not isinstance(model, IntCarryLoop) else torch.randn(n),)


@pytest.mark.parametrize("model", [WriteRowOfInput(), InPlaceViewThenWrite(), TransposeInPlaceThenWrite(), IntCarryLoop()],
                         ids=lambda m: type(m).__name__)
def test_in_place_and_loop_programs_match_torch_at_several_shapes(model):
    sample = _inputs(model, 5)
    dynamic = tuple({0: "n"} for _ in sample)
    result = export(model, tuple(x.clone() for x in sample), dynamic_shapes=dynamic)
    for n in SIZES:
        inputs = _inputs(model, n)
        expected = model(*(x.clone() for x in inputs))
        torch.testing.assert_close(result(*(x.clone() for x in inputs)), expected)
        assert all(d.ok() for d in result.verify(*(x.clone() for x in inputs)))


def test_keywords_bind_by_name_not_by_order():
    a, b = torch.randn(3), torch.randn(3)
    for export_args, export_kwargs in [((a, b), {}), ((), {"b": b, "a": a}), ((a,), {"b": b})]:
        result = export(Difference(), export_args, export_kwargs)
        for call_args, call_kwargs in [((a, b), {}), ((), {"b": b, "a": a}), ((a,), {"b": b}), ((), {"a": a, "b": b})]:
            torch.testing.assert_close(result(*call_args, **call_kwargs), a - b)
    with pytest.raises(TypeError, match=r"forward\(a, b, scale=None\): missing a required argument: 'b'"):
        result(a=a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        result(a=a, b=b, c=a)
    with pytest.raises(TypeError, match=r"gives tensors it was not exported with: \['scale'\]"):
        result(a, b, scale=a)


def test_keyword_inputs_of_a_classifier_at_several_shapes():
    model = Classifier().eval()
    ids, mask = torch.randint(0, 10, (2, 5)), torch.ones(2, 5)
    dynamic = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    result = export(model, (), {"input_ids": ids, "attention_mask": mask}, dynamic_shapes=dynamic)
    for batch, seq in ((1, 3), (3, 7), (4, 2)):
        ids = torch.randint(0, 10, (batch, seq))
        mask = (torch.rand(batch, seq) > 0.3).float()
        mask[:, 0] = 1
        expected = model(input_ids=ids, attention_mask=mask)
        torch.testing.assert_close(result(attention_mask=mask, input_ids=ids), expected, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(result(ids, mask), expected, rtol=1e-4, atol=1e-5)


def test_cli_imports_a_file_named_like_a_standard_module_without_shadowing_it(tmp_path, monkeypatch, capsys):
    (tmp_path / "copy.py").write_text(textwrap.dedent("""
        import torch

        def make():
            return torch.nn.Sequential(torch.nn.Linear(4, 2)), (torch.randn(3, 4),)
    """))
    monkeypatch.chdir(tmp_path)
    standard_copy = sys.modules.get("copy")
    code = main(["export", str(tmp_path / "copy.py") + ":make", "-o", str(tmp_path / "out" / "m.onnx")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "out" / "m.onnx").exists()
    assert sys.modules.get("copy") is standard_copy and hasattr(sys.modules["copy"], "deepcopy")
