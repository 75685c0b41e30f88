"""Calling an exported model with inputs of another dtype than the sample's: exact integer
widenings are cast as torch eager accepts them (int32 token ids into an int64 graph); anything
else is an error naming the input and both dtypes, never onnxruntime's raw message. Sizes the
export fixed are checked the same way; numpy arrays are taken as tensors."""

from __future__ import annotations

import pytest
import torch

import torchlib


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 4)

    def forward(self, input_ids):
        return self.embedding(input_ids).sum(-1)


@pytest.fixture(scope="module")
def embed():
    torch.manual_seed(0)
    model = Embed().eval()
    return model, torchlib.export(model, (torch.randint(0, 50, (2, 5)),), dynamic_shapes=({0: "batch", 1: "seq"},))


def test_int32_token_ids_into_an_int64_graph(embed):
    model, result = embed
    ids = torch.randint(0, 50, (3, 7), dtype=torch.int32)
    torch.testing.assert_close(result(ids), model(ids))  # torch eager takes int32 ids too
    assert all(d.ok() for d in result.verify(ids))
    torch.testing.assert_close(result(ids.to(torch.int16)), model(ids))


@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8, torch.bool])
def test_other_dtypes_are_refused_naming_the_input(embed, dtype):
    _, result = embed
    # uint8 and bool index tensors are masks in torch: no cast would give torch's answer
    with pytest.raises(TypeError, match=rf"input 'input_ids' of the exported model takes torch.int64, got {dtype}"):
        result(torch.zeros(2, 5, dtype=dtype))


def test_float64_into_a_float32_graph_is_refused():
    class Scale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 2)

        def forward(self, x):
            return self.linear(x)

    model = Scale()
    result = torchlib.export(model, (torch.randn(2, 3),))
    x = torch.randn(2, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError):
        model(x)  # torch refuses it too: a cast would hide a dtype the model does not take
    with pytest.raises(TypeError, match=r"takes torch.float32, got torch.float64. Pass it as torch.float32"):
        result(x)


def test_another_size_where_the_export_fixed_it_is_refused_naming_the_dims():
    """The newcomer's export without dynamic_shapes, run at another batch size: the error names
    the input, the dims and the way out, where onnxruntime's says "Got invalid dimensions"."""
    model = torch.nn.Linear(4, 2).eval()
    result = torchlib.export(model, (torch.randn(3, 4),))
    with pytest.raises(ValueError, match=r"input 'input' .* has shape \[3, 4\], got \[5, 4\]: dim 0 is 5, not 3\. .*"
                                         r"mark the dims dynamic with export\(\.\.\., dynamic_shapes=\.\.\.\)"):
        result(torch.randn(5, 4))
    with pytest.raises(ValueError, match=r"has 2 dims \[3, 4\], got 1 \[4\]"):
        result.verify(torch.randn(4))
    # dynamic dims take any size; the sizes the export kept are still checked
    dynamic = torchlib.export(model, (torch.randn(3, 4),), dynamic_shapes=({0: "batch"},))
    assert dynamic(torch.randn(5, 4)).shape == (5, 2)
    with pytest.raises(ValueError, match=r"dim 1 is 6, not 4"):
        dynamic(torch.randn(5, 6))


def test_numpy_arrays_are_taken_as_tensors():
    model = torch.nn.Linear(4, 2).eval()
    result = torchlib.export(model, (torch.randn(3, 4),))
    x = torch.randn(3, 4)
    torch.testing.assert_close(result(x.numpy()), result(x), rtol=0, atol=0)
