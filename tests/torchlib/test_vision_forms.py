"""The lean vision forms (HardSwish, Flatten, GroupNorm's formula) and the two settings of
`export(..., exact_nan=...)` (False, the default: the runtime's native ops; True: torch's NaN and
overflow edges): node counts asserted on the exported graph, values against torch, NaN in both
modes, each documented difference at its boundary."""

from __future__ import annotations

import collections
import types

import pytest
import torch
from torch import nn

import graph_builder
import torchlib
from torchlib.conformance.engine import NAN_MAY_DIFFER, PASSED, XFAIL, Harness, run_sample

BATCH = ({0: torch.export.Dim("batch")},)


def ops(result) -> collections.Counter:
    return collections.Counter(n.op_type for n in result.model_proto.graph.node)


def close(result, model, x) -> None:
    with torch.no_grad():
        torch.testing.assert_close(result(x), model(x), rtol=1e-4, atol=1e-4, equal_nan=True)


def test_group_norm_keeps_its_formula_and_matches_torch():
    """Not ONNX GroupNormalization: onnxruntime has no kernel for it and expands it into about 29
    nodes in float64, 1.25-1.31x slower than the formula on poolformer_s12 (bench/bench_vision.py)."""
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(1, 8), nn.GroupNorm(4, 8, affine=False)).eval()
    x = torch.randn(2, 3, 10, 10)
    result = torchlib.export(model, (x,), dynamic_shapes=BATCH)
    assert "GroupNormalization" not in ops(result)
    close(result, model, torch.randn(0, 3, 10, 10))
    close(result, model, torch.randn(5, 3, 10, 10))
    close(result, model, torch.randn(3, 3, 10, 10) * 10 + 1000)


def test_pooled_flatten_is_single_nodes():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Hardswish(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Hardsigmoid()).eval()
    x = torch.randn(2, 3, 9, 9)
    result = torchlib.export(model, (x,), dynamic_shapes=BATCH)
    counts = ops(result)
    assert counts["GlobalAveragePool"] == 1 and counts["Flatten"] == 1 and counts["HardSigmoid"] == 1
    assert "Reshape" not in counts and "Concat" not in counts
    x = torch.randn(4, 3, 9, 9)
    x[0, 0, 0, 0] = float("nan")
    close(result, model, x)


def test_default_is_the_runtimes_native_op():
    """The default export is the deployable graph: the native MaxPool, metadata says so."""
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.MaxPool2d(2)).eval()
    x = torch.randn(2, 3, 8, 8)
    result = torchlib.export(model, (x,))
    assert ops(result) == {"Conv": 1, "MaxPool": 1}
    assert {p.key: p.value for p in result.model_proto.metadata_props}["torchlib.exact_nan"] == "False"


def test_exact_nan_false_max_pool():
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.MaxPool2d(2)).eval()
    x = torch.randn(2, 3, 8, 8)
    exact = torchlib.export(model, (x,), dynamic_shapes=BATCH, exact_nan=True)
    loose = torchlib.export(model, (x,), dynamic_shapes=BATCH)
    assert ops(loose) == {"Conv": 1, "MaxPool": 1}
    assert sum(ops(exact).values()) > 2
    meta = {p.key: p.value for p in loose.model_proto.metadata_props}
    assert meta["torchlib.exact_nan"] == "False"
    assert {p.key: p.value for p in exact.model_proto.metadata_props}["torchlib.exact_nan"] == "True"
    close(loose, model, torch.randn(3, 3, 8, 8))  # no NaN: the same answer
    pool = nn.MaxPool2d(2)
    x = torch.randn(1, 1, 4, 4)
    x[0, 0, 0, 0] = float("nan")
    exact, loose = (torchlib.export(pool, (x,), exact_nan=e) for e in (True, False))
    assert torch.isnan(exact(x)[0, 0, 0, 0]) and torch.isnan(pool(x)[0, 0, 0, 0])
    assert not torch.isnan(loose(x)[0, 0, 0, 0])  # onnxruntime's MaxPool skips the NaN
    torch.testing.assert_close(loose(x)[..., 1:], pool(x)[..., 1:])


def test_exact_nan_false_lstm():
    lstm = nn.LSTM(4, 5, num_layers=2)
    x = torch.randn(6, 2, 4)
    exact, loose = (torchlib.export(lstm, (x,), exact_nan=e) for e in (True, False))
    assert len(loose.model_proto.graph.node) < len(exact.model_proto.graph.node)
    with torch.no_grad():
        torch.testing.assert_close(loose(x)[0], lstm(x)[0], rtol=1e-4, atol=1e-5)
        x[2, 0, 1] = float("nan")
        assert torch.isnan(exact(x)[0]).sum() == torch.isnan(lstm(x)[0]).sum() > 0
        assert not torch.isnan(loose(x)[0]).any()


def test_exact_nan_false_hardswish_is_onnx_hardswish():
    """One HardSwish (onnxruntime fuses it into the Conv before it) where the exact form is
    torch's x * clip(x + 3, 0, 6) / 6. The documented difference: x > max/6 overflows to inf in
    torch and in the exact form, HardSwish gives x."""
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.Hardswish()).eval()
    x = torch.randn(2, 3, 9, 9)
    exact, loose = (torchlib.export(model, (x,), dynamic_shapes=BATCH, exact_nan=e) for e in (True, False))
    assert ops(loose) == {"Conv": 1, "HardSwish": 1}
    assert ops(exact) == {"Conv": 1, "Add": 1, "Clip": 1, "Mul": 1, "Div": 1}
    close(loose, model, torch.randn(5, 3, 9, 9) * 4)
    big = torch.tensor([1e38, -1e38, 3.0, -3.0, 0.5, float("nan")])
    exact, loose = (torchlib.export(nn.Hardswish(), (big,), exact_nan=e) for e in (True, False))
    torch.testing.assert_close(exact(big), nn.functional.hardswish(big), equal_nan=True)
    assert torch.isinf(nn.functional.hardswish(big)[0]) and loose(big)[0] == 1e38
    torch.testing.assert_close(loose(big)[1:], nn.functional.hardswish(big)[1:], equal_nan=True)
    half = torch.randn(4, 8).half()
    loose = torchlib.export(nn.Hardswish(), (half,), exact_nan=False)
    torch.testing.assert_close(loose(half), nn.functional.hardswish(half))  # computed in float32


def test_exact_nan_false_group_and_instance_norm_are_instance_normalization():
    """onnxruntime's InstanceNormalization (the reference's form) where the exact forms compute
    float64 group statistics and torch's batch-norm form. The documented difference: values near
    finfo.max (|x| about 1e38) give NaN where torch gives the bias."""
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(1, 8), nn.InstanceNorm2d(8), nn.GroupNorm(4, 8, affine=False),
                          nn.InstanceNorm2d(8, affine=True)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p))
    x = torch.randn(2, 3, 10, 10)
    exact, loose = (torchlib.export(model, (x,), dynamic_shapes=BATCH, exact_nan=e) for e in (True, False))
    assert ops(loose) == {"Conv": 1, "InstanceNormalization": 4, "Reshape": 4, "Mul": 1, "Add": 1}
    assert "InstanceNormalization" not in ops(exact)
    offset = torch.randn(3, 3, 10, 10) * 10 + 1000  # float32 rounding of the conv's large outputs: 5e-5 in torch too
    for result in (exact, loose):
        close(result, model, torch.randn(5, 3, 10, 10))
        with torch.no_grad():
            torch.testing.assert_close(result(offset), model(offset), rtol=1e-4, atol=5e-4)
    norm = nn.GroupNorm(2, 4).eval()
    loose = torchlib.export(norm, (torch.randn(2, 4, 3, 3),), dynamic_shapes=BATCH, exact_nan=False)
    close(loose, norm, torch.randn(0, 4, 3, 3))  # an empty batch (torch's instance norm refuses one)
    exact, loose = (torchlib.export(norm, (torch.randn(1, 4, 3, 3),), exact_nan=e) for e in (True, False))
    scaled = torch.rand(1, 4, 3, 3) * 2 - 1
    with torch.no_grad():
        # |x| 1e19-1e37: torch's float32 variance overflows, rstd 0, the output is the bias, as
        # onnxruntime's; the exact form's float64 statistics normalize (torch less accurate)
        close(loose, norm, scaled * 1e30)
        torch.testing.assert_close(exact(scaled * 1e30), nn.functional.group_norm((scaled * 1e30).double(), 2).float())
        # |x| near finfo.max: onnxruntime's float32 sums overflow, NaN where torch gives the bias
        # (a group of 1e38 and two -1e38: onnxruntime's sum is inf)
        full = torch.full((1, 4, 3, 3), 1e38)
        full[0, :, 0, 0] = -1e38
        assert (norm(full) == 0).all() and torch.isnan(loose(full)).all()


def test_exact_nan_context():
    assert not graph_builder.current_exact_nan()  # eager calls follow export's default
    with graph_builder.exact_nan(True):
        assert graph_builder.current_exact_nan()
        with graph_builder.GraphBuilder(exact_nan=False):
            assert not graph_builder.current_exact_nan()  # a builder's own setting wins
    assert not graph_builder.current_exact_nan()


# the functions that read the setting (graph_builder.current_exact_nan): the default suite's
# OpInfo tests run the default column; these run in the exact column too
READ_THE_SETTING = ["aten_max_pool1d", "aten_max_pool2d", "aten_max_pool3d", "aten_max_pool1d_with_indices",
                    "aten_max_pool2d_with_indices", "aten_max_pool3d_with_indices", "aten_lstm", "aten_gru",
                    "aten_rnn_tanh", "aten_rnn_relu", "aten_hardswish", "aten_group_norm", "aten_native_group_norm",
                    "aten_instance_norm", "torchvision_deform_conv2d"]


@pytest.fixture(scope="module")
def harness():
    return Harness()


@pytest.fixture(scope="module")
def exact_harness():
    return Harness(exact_nan=True)


@pytest.mark.parametrize("key", READ_THE_SETTING)
def test_conformance_exact_column(exact_harness, key):
    """The exact_nan=True column on the functions it changes: first samples all as expected."""
    result = exact_harness.run(key, torch.float32, max_samples=2)
    assert result.ok, result.problems()
    assert result.samples


def test_the_functions_that_read_the_setting_are_listed():
    """Every function of READ_THE_SETTING reads it on its first float32 sample, and the list
    names every function of the ops modules that call current_exact_nan (by source)."""
    import inspect

    import torchlib.ops

    callers = set()
    for module in {inspect.getmodule(f.function) for f in Harness().functions.values()}:
        if module is not None and module.__name__.startswith("torchlib.ops") and "current_exact_nan()" in inspect.getsource(module):
            callers.add(module.__name__)
    assert callers == {"torchlib.ops.conv_pool", "torchlib.ops.rnn", "torchlib.ops.activations",
                       "torchlib.ops.normalization", "torchlib.ops.torchvision", "torchlib.ops.nn_extra"}, (
        "a new module reads current_exact_nan(): add its functions to READ_THE_SETTING", torchlib.ops)


@pytest.mark.parametrize("exact_nan", [True, False])
@pytest.mark.parametrize("with_nan", [True, False])
def test_conformance_nan_inputs_may_differ_only_without_exact_nan(harness, exact_nan, with_nan):
    x = torch.randn(1, 2, 4, 4)
    if with_nan:
        x[0, 1, 2, 2] = float("nan")
    sample = types.SimpleNamespace(input=x, args=([2, 2],), kwargs={})
    entry = harness.entries["aten_max_pool2d"]
    fn = harness.functions["aten_max_pool2d"].function
    outcome = run_sample(fn, entry, torch.float32, 0, sample, torch.ops.aten.max_pool2d.default, exact_nan=exact_nan)
    if with_nan and not exact_nan:
        assert (outcome.outcome, outcome.message) == (XFAIL, NAN_MAY_DIFFER)
    else:
        assert outcome.outcome == PASSED, outcome.message


def test_attention_head_split_of_a_dynamic_batch_has_constant_shapes():
    """levit / timm attention: `x.view(B, N, heads, -1)` and `reshape(B, -1, C)` with B the
    dynamic batch read off x.shape: constant Reshape shapes, no Shape / Concat."""

    class Heads(nn.Module):
        def forward(self, x):
            B, N, C = x.shape
            q = x.view(B, N, 4, -1).transpose(1, 2)
            return (q.softmax(-1) * 2).transpose(1, 2).reshape(B, -1, C)

    model = Heads()
    result = torchlib.export(model, (torch.randn(3, 6, 8),), dynamic_shapes=BATCH)
    counts = ops(result)
    assert "Concat" not in counts and "Shape" not in counts and counts["Reshape"] == 2
    close(result, model, torch.randn(1, 6, 8))
    close(result, model, torch.randn(7, 6, 8))
