"""Graph outputs are named after forward's output structure (dict keys, ModelOutput, namedtuple
and dataclass fields, tuple positions), not after internal FX nodes; names the user gives win."""

from __future__ import annotations

import collections
import dataclasses

import pytest
import torch

import torchlib
from torchlib.exporter.names import leaf_names

Pair = collections.namedtuple("Pair", ["mean", "spread"])


class Nested(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        return {"a": self.linear(x), "b": (x.relu(), {"c": x.sigmoid()})}


def output_names(result):
    return [v.name for v in result.graph.outputs]


def test_dict_keys_and_positions_name_the_outputs():
    x = torch.randn(2, 3)
    result = torchlib.export(Nested(), (x,))
    assert output_names(result) == ["a", "b_0", "b_1.c"]
    got = result(x)
    assert set(got) == {"a", "b"}
    torch.testing.assert_close(got["b"][1]["c"], x.sigmoid())


def test_tuple_positions_single_tensor_and_namedtuple():
    class Tuple(torch.nn.Module):
        def forward(self, x):
            return x * 2, (x + 1, x - 1)

    class Single(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.linear(x, torch.ones(3, 3))

    class Named(torch.nn.Module):
        def forward(self, x):
            return Pair(x.mean(0), x.std(0))

    x = torch.randn(4, 3)
    assert output_names(torchlib.export(Tuple(), (x,))) == ["output_0", "output_1_0", "output_1_1"]
    assert output_names(torchlib.export(Single(), (x,))) == ["output"]
    named = torchlib.export(Named(), (x,))
    assert output_names(named) == ["mean", "spread"]
    assert isinstance(named(x), Pair)


def test_user_output_names_win_and_none_outputs_do_not_shift_them():
    class WithNone(torch.nn.Module):
        def forward(self, x):
            return x + 1, None, x * 3

    x = torch.randn(2)
    assert output_names(torchlib.export(WithNone(), (x,))) == ["output_0", "output_2"]
    assert output_names(torchlib.export(WithNone(), (x,), output_names=["first"])) == ["first", "output_2"]
    assert output_names(torchlib.export(Nested(), (torch.randn(2, 3),), output_names=["y"])) == ["y", "b_0", "b_1.c"]


def test_an_output_that_is_an_input_gets_a_free_name():
    class Echo(torch.nn.Module):
        def forward(self, x, y):
            return {"x": x, "z": y * 2}

    x = torch.randn(2)
    result = torchlib.export(Echo(), (x, x))
    assert output_names(result) == ["x_1", "z"]
    torch.testing.assert_close(result(x, x)["x"], x)


def test_model_output_fields():
    transformers = pytest.importorskip("transformers")
    from transformers.modeling_outputs import BaseModelOutputWithPooling

    class Encoder(torch.nn.Module):
        def forward(self, x):
            return BaseModelOutputWithPooling(last_hidden_state=x * 2, pooler_output=x.mean(1))

    x = torch.randn(2, 3)
    assert transformers is not None
    assert output_names(torchlib.export(Encoder(), (x,))) == ["last_hidden_state", "pooler_output"]


def test_leaf_names_convention():
    spec = torch.utils._pytree.tree_structure({"logits": 1, "past": ((2, 3), (4, 5))})
    assert leaf_names(spec, "present") == ["logits", "past_0_0", "past_0_1", "past_1_0", "past_1_1"]
    assert leaf_names(torch.utils._pytree.tree_structure([1, 2]), "present", root="input") == ["input_0", "input_1"]
@dataclasses.dataclass
class Prediction:
    scores: torch.Tensor
    boxes: torch.Tensor
    extra: torch.Tensor | None = None


def test_plain_dataclass_output_is_flattened_by_its_fields():
    class Detector(torch.nn.Module):
        def forward(self, x):
            return Prediction(scores=x.softmax(-1), boxes=x * 2)

    x = torch.randn(2, 3)
    result = torchlib.export(Detector(), (x,))
    assert output_names(result) == ["scores", "boxes"]
    got = result(x)
    assert isinstance(got, Prediction) and got.extra is None
    torch.testing.assert_close(got.boxes, x * 2)
    assert all(d.ok() for d in result.verify(x))
    assert Prediction not in torch.utils._pytree.SUPPORTED_NODES  # registered during capture only


@dataclasses.dataclass
class Batch:
    image: torch.Tensor
    mask: torch.Tensor


def test_plain_dataclass_input():
    class Masked(torch.nn.Module):
        def forward(self, batch):
            return batch.image * batch.mask

    batch = Batch(torch.randn(2, 3), torch.ones(2, 3))
    result = torchlib.export(Masked(), (batch,))
    assert [v.name for v in result.graph.inputs] == ["batch_image", "batch_mask"]
    other = Batch(torch.randn(2, 3), torch.zeros(2, 3))
    torch.testing.assert_close(result(other), other.image * other.mask)
    assert Batch not in torch.utils._pytree.SUPPORTED_NODES
