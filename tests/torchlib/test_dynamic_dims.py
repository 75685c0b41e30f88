"""Dims marked dynamic stay dynamic where torch allows it, and a warning names each one that
does not, with the reason; capture's fallback chain does not retry what cannot succeed."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn
from torch.export import Dim

import torchlib
from graph_builder.evaluator import CheckFailed
from torchlib.exporter import ExportError


def all_ok(result, *args):
    diffs = result.verify(*args)
    return bool(diffs) and all(d.ok() for d in diffs)


def input_dims(result, i=0):
    return list(result.graph.inputs[i].shape)


@pytest.mark.parametrize("cls", [nn.GRU, nn.LSTM, nn.RNN])
def test_rnn_keeps_batch_and_sequence_dynamic(cls):
    model = cls(4, 6, num_layers=2, bidirectional=True, batch_first=True).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no dim became static, no draft_export
        result = torchlib.export(model, (torch.randn(3, 5, 4),), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    assert result.capture_strategy == "non-strict"
    assert input_dims(result) == ["batch", "seq", 4]
    assert all_ok(result, torch.randn(2, 9, 4)) and all_ok(result, torch.randn(5, 2, 4))


def test_sequence_first_lstm_with_initial_state():
    model = nn.LSTM(4, 6).eval()
    x, h0, c0 = torch.randn(5, 2, 4), torch.randn(1, 2, 6), torch.randn(1, 2, 6)
    batch = Dim("batch")
    result = torchlib.export(model, (x, (h0, c0)), dynamic_shapes=({0: "seq", 1: batch}, ({1: batch}, {1: batch})))
    assert result.capture_strategy == "non-strict" and input_dims(result) == ["seq", "batch", 4]
    assert all_ok(result, torch.randn(7, 3, 4), (torch.randn(1, 3, 6), torch.randn(1, 3, 6)))


class FixesOneDim(nn.Module):
    """torch specialises dim 1 (the reshape needs 20 elements per row) and keeps dim 0."""

    def forward(self, x):
        return x.reshape(x.shape[0], 5, 4).sum(1)


@pytest.mark.parametrize("spec", [{0: Dim("batch"), 1: Dim("seq")}, {0: "batch", 1: "seq"}])
def test_one_dim_of_two_specialised_is_named_and_the_other_stays_dynamic(spec):
    with pytest.warns(UserWarning, match=r"dynamic_shapes\[0\]\[1\] \('seq'\) is marked dynamic, but the exported model fixes it to 20"):
        result = torchlib.export(FixesOneDim(), (torch.randn(3, 20),), dynamic_shapes=(spec,))
    assert result.capture_strategy == "non-strict"  # torch's fix applied, not draft_export
    assert input_dims(result) == ["batch", 20]
    assert any("is marked dynamic, but the exported model fixes it to 20" in d for d in result.diagnostics)
    assert all_ok(result, torch.randn(6, 20))


class NeedsThree(nn.Module):
    def forward(self, x):
        if x.shape[1] > 2:
            return x[:, 2] * 2
        return x[:, 0]


def test_range_fix_is_applied_and_capture_stays_non_strict():
    result = torchlib.export(NeedsThree(), (torch.randn(3, 6),), dynamic_shapes=({0: Dim("batch"), 1: Dim("seq")},))
    assert result.capture_strategy == "non-strict"
    assert "dynamic_shapes refined: torch.export's suggested fixes seq = Dim('seq', min=3)" in result.diagnostics
    assert input_dims(result) == ["batch", "seq"]
    assert all_ok(result, torch.randn(2, 9))


class SliceWriteReadBack(nn.Module):
    """An in-place write into a slice whose view, made by reshape (a view only when it need not
    copy), is read afterwards: the whole program is decomposed, and the batch stays dynamic."""

    def forward(self, x):
        y = x.clone()
        row = y.reshape(-1, 2)[:, 0]
        y[:, 0].mul_(2)
        y[:, 2:] = 0
        return row, y


def test_in_place_slice_write_keeps_the_dynamic_batch():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = torchlib.export(SliceWriteReadBack(), (torch.randn(3, 4),), dynamic_shapes=({0: Dim("batch")},))
    assert any(d.startswith("the whole program was decomposed") for d in result.diagnostics)
    assert input_dims(result) == ["batch", 4]
    assert all_ok(result, torch.randn(6, 4))


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


def test_data_dependent_failure_goes_to_draft_export_without_trying_strict():
    with pytest.warns(UserWarning, match="draft_export"):
        result = torchlib.export(DataDependent(), (torch.ones(3),))
    assert result.capture_strategy == "draft_export"
    note = next(d for d in result.diagnostics if d.startswith("captured with draft_export after"))
    assert "non-strict failed" in note and "strict failed" not in note.replace("non-strict failed", "")


class IntInput(nn.Module):
    def forward(self, x, n: int):
        return x * n + torch.sym_float(n), torch.sym_sum([n, x.shape[0], 3]), torch.sym_float(n) / 2


def test_python_int_marked_dynamic_is_an_int64_input():
    model, x = IntInput(), torch.randn(3)
    result = torchlib.export(model, (x, 4), dynamic_shapes=({0: Dim("batch")}, Dim.DYNAMIC))
    assert result.self_check.startswith("passed")
    graph = result.model_proto.graph
    assert [(i.name, i.type.tensor_type.elem_type, len(i.type.tensor_type.shape.dim)) for i in graph.input][1] == ("n", 7, 0)
    assert graph.output[2].type.tensor_type.elem_type == 1  # a SymFloat output is float32, as torch.onnx gives it
    x = torch.randn(5)
    got, expected = result(x, 7), model(x, 7)
    torch.testing.assert_close(got[0], expected[0])
    assert got[1] == expected[1] == 15 and got[2] == expected[2] == 3.5
    assert all_ok(result, torch.randn(2), 9)


class StridedChunks(nn.Module):
    """as_strided with sizes from a dynamic batch (Longformer's overlapping chunks)."""

    def forward(self, x):
        b = x.shape[0]
        y = x.reshape(b * 2, 8, 4).contiguous()
        return y.as_strided((b * 2, 3, 4, 4), (32, 8, 4, 1)) * 2, y.as_strided((b, 2), (64, 3), 5)


def test_as_strided_with_dynamic_sizes_keeps_the_batch():
    result = torchlib.export(StridedChunks(), (torch.randn(3, 16, 4),), dynamic_shapes=({0: Dim("batch")},))
    assert input_dims(result) == ["batch", 16, 4]
    for batch in (1, 5):
        assert all_ok(result, torch.randn(batch, 16, 4))


class StridedOfViews(nn.Module):
    """as_strided reads the storage: of a transposed input (Longformer's chunking after a
    transpose), and of a contiguous slice that starts past the storage's start."""

    def forward(self, x):
        t = x.transpose(0, 1)  # [16, b, 4], strides (4, 64, 1)
        tail = x[1:]  # contiguous, storage offset 64
        return t.as_strided((2, 3, 4), (8, 4, 1)) + 1, t.as_strided((3,), (5,), 2), tail.as_strided((2, 4), (4, 1)), \
            tail.as_strided((2, 4), (4, 1), 70)


def test_as_strided_reads_the_storage_of_a_view():
    model, x = StridedOfViews(), torch.randn(3, 16, 4)
    assert all_ok(torchlib.export(model, (x,)), x)


class StridedOfTransposedBatch(nn.Module):
    def forward(self, x):
        b = x.shape[0]
        t = x.transpose(1, 2)  # [b, 4, 16], strides (64, 1, 4)
        return t.as_strided((b, 3, 8), (64, 8, 1)) * 2


def test_as_strided_of_a_transposed_view_with_a_dynamic_batch():
    result = torchlib.export(StridedOfTransposedBatch(), (torch.randn(3, 16, 4),), dynamic_shapes=({0: Dim("batch")},))
    assert input_dims(result) == ["batch", 16, 4]
    for batch in (1, 3, 6):
        assert all_ok(result, torch.randn(batch, 16, 4))


class StridedOfStridedSlice(nn.Module):
    def forward(self, x):
        return x[:, ::2].as_strided((2, 2), (1, 2))


def test_as_strided_of_a_non_dense_view_says_what_to_do():
    with pytest.raises(ExportError, match=r"does not cover its memory densely.*call \.contiguous\(\)"):
        torchlib.export(StridedOfStridedSlice(), (torch.randn(4, 6),))



class RangeOfSeq(nn.Module):
    """A Python list as long as the sequence (funnel's relative positions do this): torch.export
    fixes the sequence to the sample's, with a guard at this line."""

    def forward(self, x):
        positions = list(range(x.shape[1]))
        return x + torch.tensor(positions)


def test_specialised_dim_names_the_line_that_fixed_it():
    with pytest.warns(UserWarning, match=r"fixes it to 8: torch.export specialised it"):
        result = torchlib.export(RangeOfSeq(), (torch.randn(2, 8),), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO},))
    line = RangeOfSeq.forward.__code__.co_firstlineno + 1
    message = next(d for d in result.diagnostics if "fixes it to 8" in d)
    assert f"(torch.export's guard: L['x'].size()[1] == 8 at {__file__}:{line} in forward)" in message
    assert input_dims(result)[1] == 8 and all_ok(result, torch.randn(3, 8))


class EvenPatchCount(nn.Module):
    """A path for an even patch count only (focalnet pads otherwise): torch.export's program
    guards it, and the ONNX model checks the guard."""

    def forward(self, x):
        if (x.shape[1] // 4) % 2 == 0:
            return x * 2
        return x + 1


def test_size_condition_is_named_and_checked_by_the_onnx_model(tmp_path):
    with pytest.warns(UserWarning, match=r"holds only for inputs whose sizes meet: \(\(L\['x'\]\.size\(\)\[1\] // 4\) % 2\) == 0"):
        result = torchlib.export(EvenPatchCount(), (torch.randn(2, 8),), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO},))
    assert any("the ONNX model checks each such condition" in d for d in result.diagnostics)
    assert all(isinstance(d, str) for d in input_dims(result))  # both dims stay dynamic
    assert all_ok(result, torch.randn(3, 16))  # the path exported: 16 // 4 is even
    assert all_ok(result, torch.randn(1, 0))
    for width in (12, 4, 13):  # the other path: the model pads, which the program does not; never a wrong answer
        with pytest.raises(CheckFailed, match=r"run-time check does not hold for these inputs: \(\(L\['x'\]\.size\(\)\[1\] // 4\) % 2\) == 0"):
            result(torch.randn(3, width))
    result.save(tmp_path / "m.onnx")  # a plain onnxruntime session, every graph optimization on, stops too
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    assert session.run(None, {name: np.ones((3, 16), np.float32)})[0].shape == (3, 16)
    with pytest.raises(Exception, match="check: "):
        session.run(None, {name: np.ones((3, 12), np.float32)})


class ManyParities(nn.Module):
    def forward(self, x):
        for k in range(2, 40):
            x = x + k if x.shape[1] % k == 0 else x - k
        return x


def test_many_size_conditions_are_listed_in_part_and_all_checked():
    """A chunked model's program can hold hundreds of conditions (qwen3_5: a 128,000-character
    diagnostic): the warning shows 8, the diagnostics 32, and the ONNX model checks every one."""
    with pytest.warns(UserWarning, match=r"\(L\['x'\]\.size\(\)\[1\] % 9\) != 0 \(at [^)]*\); and 30 more \(result\.diagnostics lists the first 32\)\. The model's code"):
        result = torchlib.export(ManyParities(), (torch.randn(2, 8),), dynamic_shapes=({1: Dim.AUTO},))
    (listed,) = [d for d in result.diagnostics if "holds only for inputs" in d]
    assert listed.count("L['x'].size()[1] %") == 32 and re.search(r"% 33\) != 0 \(at [^)]*\); and 6 more\. The model's", listed)
    assert all_ok(result, torch.randn(2, 8 * 41))  # 2, 4 and 8 divide it, no other k below 40
    with pytest.raises(CheckFailed, match=r"% 37\) != 0"):  # a condition not listed is checked too
        result(torch.randn(2, 8 * 37))


class RowsOfFour(nn.Module):
    """A path for widths that are a multiple of 4 (the model pads otherwise): the other path's
    inputs would fail at the reshape into rows of 4 anyway, and the ONNX model's check comes
    first, naming the condition (mobilevit's failed at a Reshape inside)."""

    def forward(self, x):
        if x.shape[1] % 4 == 0:
            return x.reshape(x.shape[0], -1, 4).sum(-1)
        return torch.nn.functional.pad(x, (0, 4 - x.shape[1] % 4)).reshape(x.shape[0], -1, 4).sum(-1)


def test_size_condition_is_checked_before_the_nodes_that_read_the_input(tmp_path):
    with pytest.warns(UserWarning, match="holds only for inputs whose sizes meet"):
        result = torchlib.export(RowsOfFour(), (torch.randn(2, 8),), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO},))
    assert all_ok(result, torch.randn(3, 12))
    result.save(tmp_path / "m.onnx")
    for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        session = ort.InferenceSession(str(tmp_path / "m.onnx"), options, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        assert session.run(None, {name: np.ones((3, 12), np.float32)})[0].shape == (3, 3)
        with pytest.raises(Exception, match=r"check: \(\(L\['x'\]\.size\(\)\[1\]\) % 4\) == 0|check: .*% 4"):
            session.run(None, {name: np.ones((3, 6), np.float32)})  # the Reshape into rows of 4 would fail too


class FixedPatchGrid(nn.Module):
    """mobilevit's `unfolding`: `int(math.ceil(height / patch) * patch)` of a feature map's height
    (here a strided slice's, a strided convolution's in mobilevit) makes the patched height a
    constant (the int() of a symbolic size), and the reshape into patches uses it, while the
    input's height stays dynamic: the program holds for heights that round to the sample's only."""

    def forward(self, x):
        features = x[:, :, ::4]
        new_height = int(math.ceil(features.shape[2] / 2) * 2)
        return features.reshape(x.shape[0], new_height // 2, 2).sum(2)


def test_a_size_the_model_fixes_names_the_models_line():
    line = FixedPatchGrid.forward.__code__.co_firstlineno + 2
    with pytest.warns(UserWarning, match="holds only for inputs whose sizes meet") as record:
        result = torchlib.export(FixedPatchGrid(), (torch.randn(2, 1, 32),), dynamic_shapes=({0: Dim.AUTO, 2: Dim.AUTO},))
    message = next(str(w.message) for w in record if "holds only" in str(w.message))
    # the guard the model's line added comes first, with the line
    assert message.startswith("torch.export's program holds only for inputs whose sizes meet: ")
    first = message.split(": ", 1)[1].split("; ")[0]
    assert f"(at {__file__}:{line} in forward)" in first and "== 8" in first, message
    assert isinstance(input_dims(result)[2], str)  # the height stays dynamic: nothing else says so
    assert all_ok(result, torch.randn(3, 1, 32))  # another batch at the sample's height: right
    # torch's program holds only where its guards do: `ep.module()` refuses 29 ("Guard failed: x.size()[2] ==
    # 4 * ((3 + x.size()[2]) // 4)"), and the ONNX model checks the same condition, math.ceil included
    with pytest.raises(CheckFailed, match=r"L\['x'\]\.size\(\)\[2\] == \(4\*\(\(3 \+ L\['x'\]\.size\(\)\[2\]\) // 4\)\)"):
        result(torch.randn(3, 1, 29))


class SquarePatchGrid(nn.Module):
    """dinov2's `interpolate_pos_encoding` returns early when the patch count, (h // 14)**2 for
    a square image, is the position embeddings': sympy writes the condition as a power."""

    def forward(self, x):
        if (x.shape[1] // 4) * (x.shape[1] // 4) == 16:
            return x * 2
        return x + 1


def test_a_condition_with_a_power_is_checked():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = torchlib.export(SquarePatchGrid(), (torch.randn(2, 16),), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO},))
    assert not any("cannot check" in d for d in result.diagnostics), result.diagnostics
    assert all_ok(result, torch.randn(3, 19))  # 19 // 4 = 4: the sample's path
    with pytest.raises(CheckFailed, match=r"does not hold for these inputs: \(L\['x'\]\.size\(\)\[1\] // 4\)\*\(L\['x'\]\.size\(\)\[1\] // 4\) == 16"):
        result(torch.randn(3, 20))


class PatchBias(nn.Module):
    """timm's efficientformer: a learned bias over the patches of a fixed grid (49 at 224 px) is
    added to the tokens of the image's grid, whose count is a product of two sizes."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return nn.functional.avg_pool2d(x.unsqueeze(1), 2).flatten(1) + self.bias


def test_an_equality_of_several_sizes_is_checked():
    """torch.export keeps height and width dynamic and holds for `(h // 2) * (w // 2) == 4`; the
    ONNX model checks it (before, it was listed only, and onnxruntime stopped at the Add with an
    unnamed "4 by 6" broadcast error)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = torchlib.export(PatchBias(), (torch.randn(2, 4, 4),), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO},))
    assert all_ok(result, torch.randn(3, 5, 4))  # 5 // 2 = 2: four patches
    with pytest.raises(CheckFailed, match=r"does not hold for these inputs: \(\(L\['x'\]\.size\(\)\[1\] // 2\)\*\(L\['x'\]\.size\(\)\[2\] // 2\)\) == 4"):
        result(torch.randn(3, 6, 4))


class LongerOrShorter(nn.Module):
    """Sizes compared, no remainder: a condition that is most often the inputs' contract (a
    decode step's mask as long as the past and the new tokens)."""

    def forward(self, x, y):
        if x.shape[1] <= y.shape[1]:
            return x.sum(1) + y.sum(1)
        return x.sum(1) - y.sum(1)


def test_an_inequality_between_sizes_is_a_diagnostic_not_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = torchlib.export(LongerOrShorter(), (torch.randn(2, 3), torch.randn(2, 5)),
                                 dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO}, {0: Dim.AUTO, 1: Dim.AUTO}))
    assert any("holds only for inputs whose sizes meet" in d and "<=" in d and "does not check" in d for d in result.diagnostics)


class VmapMask(nn.Module):
    """A mask built with torch.vmap (transformers' masking_utils does so for a model's or/and mask
    functions: t5gemma2). The per-node trace fails inside vmap's nesting; its layer must not stay
    on functorch's stack, or the whole-program decomposition that follows fails."""

    def forward(self, x):
        q = torch.arange(x.shape[1])
        causal = torch.vmap(torch.vmap(lambda i, j: i >= j, in_dims=(None, 0)), in_dims=(0, None))
        return x.masked_fill(~causal(q, q), 0.0)


def test_vmap_in_forward_exports_with_its_dims():
    x = torch.randn(2, 5, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = torchlib.export(VmapMask(), (x,), dynamic_shapes=({0: Dim.AUTO, 1: Dim.AUTO, 2: Dim.AUTO},))
    assert any("the whole program was decomposed" in d and "_vmap_increment_nesting" in d for d in result.diagnostics)
    assert all(isinstance(d, str) for d in input_dims(result))
    y = torch.randn(3, 7, 7)
    assert torch.equal(result(y), VmapMask()(y))
