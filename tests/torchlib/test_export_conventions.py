"""torch.onnx's calling conventions: dynamic_shapes with names, Dim.AUTO / Dim.DYNAMIC, nested
specs, dynamic_axes, input and output names, ExportedProgram input, capture strategies and
`torchlib.onnx_export`. Each model runs in onnxruntime and is compared with torch."""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from torch import nn
from torch.export import Dim

import torchlib
from torchlib.exporter import CaptureError, DynamicShapesError

ATOL, RTOL = 1e-4, 1e-3


def assert_matches(result, *args, **kwargs):
    for d in result.verify(*args, **kwargs):
        assert d.ok(ATOL, RTOL), d


def dims(value_info):
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, mask):
        return self.fc(x).softmax(-1) * mask[..., None]


def sample():
    torch.manual_seed(0)
    return Scale().eval(), torch.randn(2, 5, 8), torch.ones(2, 5)


def test_string_dim_names_become_onnx_dims():
    model, x, mask = sample()
    result = torchlib.export(model, (x, mask), dynamic_shapes={"x": {0: "batch", 1: "length"}, "mask": {0: "batch", 1: "length"}})
    graph = result.model_proto.graph
    assert dims(graph.input[0]) == ["batch", "length", 8]
    assert dims(graph.input[1]) == ["batch", "length"]
    assert dims(graph.output[0]) == ["batch", "length", 4]
    assert_matches(result, x, mask)
    assert_matches(result, torch.randn(3, 9, 8), torch.rand(3, 9))


@pytest.mark.parametrize("hint", [Dim.AUTO, Dim.DYNAMIC], ids=["AUTO", "DYNAMIC"])
def test_dim_hints_in_a_tuple_spec(hint):
    model, x, mask = sample()
    result = torchlib.export(model, (x, mask), dynamic_shapes=({0: hint, 1: hint}, {0: hint, 1: hint}))
    first = dims(result.model_proto.graph.input[0])
    assert isinstance(first[0], str) and isinstance(first[1], str) and first[2] == 8
    assert_matches(result, torch.randn(4, 3, 8), torch.rand(4, 3))


def test_nested_inputs_with_list_specs():
    class M(nn.Module):
        def forward(self, inputs):
            a, (b, c) = inputs["a"], inputs["pair"]
            return a.sum(-1) + b * c

    inputs = {"a": torch.randn(3, 4), "pair": [torch.randn(3), torch.randn(1)]}
    spec = {"inputs": {"a": ["n", None], "pair": [{0: "n"}, None]}}
    result = torchlib.export(M(), (inputs,), dynamic_shapes=spec)
    assert [dims(i) for i in result.model_proto.graph.input] == [["n", 4], ["n"], [1]]
    assert_matches(result, {"a": torch.randn(6, 4), "pair": [torch.randn(6), torch.randn(1)]})


def test_dynamic_dim_with_sample_size_one_stays_dynamic():
    model, _, _ = sample()
    x, mask = torch.randn(1, 5, 8), torch.ones(1, 5)
    result = torchlib.export(model, (x, mask), dynamic_shapes={"x": {0: "batch"}, "mask": {0: "batch"}})
    assert dims(result.model_proto.graph.input[0]) == ["batch", 5, 8]
    assert_matches(result, x, mask)
    assert_matches(result, torch.randn(6, 5, 8), torch.rand(6, 5))


def test_size_one_that_cannot_stay_dynamic_says_how_to_fix_the_sample():
    class M(nn.Module):
        def forward(self, x):
            if x.shape[0] == 1:  # the model itself specializes on the size
                return x + 1
            return x - 1

    with pytest.raises(CaptureError) as info:
        torchlib.export(M(), (torch.randn(1, 3),), dynamic_shapes={"x": {0: "batch"}})
    message = str(info.value)
    assert "dynamic_shapes['x'][0]" in message and "marked dynamic" in message and "size 2 or more" in message


def test_bad_spec_names_the_problem():
    model, x, mask = sample()
    with pytest.raises(DynamicShapesError, match="names axis 3"):
        torchlib.export(model, (x, mask), dynamic_shapes={"x": {3: "batch"}})
    with pytest.raises(DynamicShapesError, match="not parameters of forward"):
        torchlib.export(model, (x, mask), dynamic_shapes={"y": {0: "batch"}})
    with pytest.raises(DynamicShapesError, match=r"gives 3 specs, but forward takes 2 inputs \(\['x', 'mask'\]\)"):
        torchlib.export(model, (x, mask), dynamic_shapes=({0: "batch"}, {0: "batch"}, {0: "batch"}))


def test_exported_program_as_model():
    model, x, mask = sample()
    ep = torch.export.export(model, (x, mask), dynamic_shapes={"x": {0: Dim("batch")}, "mask": {0: Dim("batch")}})
    result = torchlib.export(ep)
    assert result.capture_strategy == "ExportedProgram"
    assert isinstance(dims(result.model_proto.graph.input[0])[0], str)
    assert_matches(result, torch.randn(3, 5, 8), torch.rand(3, 5))


def test_input_and_output_names():
    model, x, mask = sample()
    result = torchlib.export(model, (x, mask), input_names=["features", "valid"], output_names=["probs"])
    graph = result.model_proto.graph
    assert [i.name for i in graph.input] == ["features", "valid"] and [o.name for o in graph.output] == ["probs"]
    assert_matches(result, x, mask)
    with pytest.raises(ValueError, match="3 names for 2 tensor inputs"):
        torchlib.export(model, (x, mask), input_names=["a", "b", "c"])


class NumpyInForward(nn.Module):
    """Non-strict capture cannot run numpy on fake tensors; strict (TorchDynamo) traces it."""

    def forward(self, x):
        return torch.from_numpy(np.sin(x.numpy())) + 1


def test_strict_capture_when_non_strict_fails():
    x = torch.randn(3, 4)
    result = torchlib.export(NumpyInForward(), (x,))
    assert result.capture_strategy == "strict"
    assert result.diagnostics[0].startswith("captured with strict after: non-strict failed")
    assert_matches(result, x)


class DataDependentBranch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


def test_draft_export_when_strict_and_non_strict_fail():
    x = torch.ones(3)
    result = torchlib.export(DataDependentBranch(), (x,))
    assert result.capture_strategy == "draft_export"
    assert any("non-strict failed" in d for d in result.diagnostics)
    assert_matches(result, x)


def test_forward_raising_its_own_error_is_not_retried():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("the model's own error")

    with pytest.raises(CaptureError) as info:
        torchlib.export(Broken(), (torch.randn(2),))
    message = str(info.value)
    assert message.index("could not capture the model (non-strict)") < message.index("the model's own error")
    assert "strict and draft_export were not tried: forward itself raised this error" in message
    assert "then strict failed" not in message


def test_onnx_export_ports_torch_onnx_code(tmp_path):
    model, x, mask = sample()
    path = tmp_path / "model.onnx"
    # the same call as torch.onnx.export(model, (x, mask), path, ..., dynamo=True)
    result = torchlib.onnx_export(
        model, (x, mask), path, input_names=["x", "mask"], output_names=["y"],
        dynamic_axes={"x": {0: "batch", 1: "seq"}, "mask": [0, 1], "y": {0: "batch"}}, opset_version=18,
    )  # fmt: skip
    loaded = onnx.load(str(path))
    assert [o.version for o in loaded.opset_import if o.domain == ""] == [18]
    assert dims(loaded.graph.input[0]) == ["batch", "seq", 8]
    assert dims(loaded.graph.input[1]) == ["batch", "seq"] or dims(loaded.graph.input[1]) == ["mask_dim_0", "mask_dim_1"]
    assert [o.name for o in loaded.graph.output] == ["y"]
    assert_matches(result, torch.randn(3, 7, 8), torch.rand(3, 7))


def test_onnx_export_with_dynamic_shapes_kwargs_and_verify():
    model, x, mask = sample()
    result = torchlib.onnx_export(model, (x,), kwargs={"mask": mask}, dynamic_shapes={"x": {0: "b"}, "mask": {0: "b"}}, verify=True)
    assert dims(result.model_proto.graph.input[0])[0] == "b"
    with pytest.raises(ValueError, match="not both"):
        torchlib.onnx_export(model, (x, mask), dynamic_axes={"x": [0]}, dynamic_shapes={"x": {0: "b"}})


def test_export_signature_is_real_and_import_stays_lazy():
    parameters = list(inspect.signature(torchlib.export).parameters)
    assert parameters[:4] == ["model", "args", "kwargs", "dynamic_shapes"]
    assert {"opset", "input_names", "output_names", "functions"} <= set(parameters)
    assert "dynamic_axes" in inspect.signature(torchlib.onnx_export).parameters
    code = "import sys, torchlib; assert 'torch' not in sys.modules, 'import torchlib imported torch'"
    subprocess.run([sys.executable, "-c", code], check=True)


class StaticSizeArithmetic(nn.Module):
    """torch.export writes `aten.div.Tensor_mode(64, 4)`: Python numbers in both Tensor slots
    (Longformer's chunk counts). torch computes them as wrapped numbers: int64, or the default
    float32 with a float among them."""

    def forward(self, x):
        chunks = torch.div(x.shape[1], 4, rounding_mode="trunc")
        scale = torch.div(x.shape[1], 2.5, rounding_mode="floor")
        return x * chunks, chunks, scale


def test_numbers_in_every_tensor_slot_are_computed_as_torch_does():
    model, x = StaticSizeArithmetic(), torch.randn(2, 64)
    ep = torch.export.export(model, (x,))
    calls = [n.args for n in ep.graph.nodes if n.target is torch.ops.aten.div.Tensor_mode]
    assert calls == [(64, 4), (64, 2.5)]  # the case this test is about
    result = torchlib.export(ep)
    got, expected = result(x), model(x)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        torch.testing.assert_close(g, e)
