"""The self-check on the sample: an export that does not reproduce the model on its own sample
input raises, naming the output; the check changes neither the model nor the sample."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

import torchlib
from graph_builder import op
from torchlib.exporter import self_check
from torchlib.exporter.self_check import SelfCheckError


class Detector(nn.Module):
    """SSD-like post-processing: a data-dependent early exit (torch.export refuses it, so
    draft_export captures the model) and a score filter whose kept count depends on the data."""

    def forward(self, scores, boxes):
        if scores.max() < 0.05:
            return boxes[:0], scores[:0]
        keep = scores > 0.5
        return boxes[keep], scores[keep]


def detections():
    scores = torch.linspace(0, 1, 40)
    return scores, torch.randn(40, 4)


def keep_nothing(self, indices):
    """A wrong aten::index.Tensor: keeps no row (the SSD export that returned 0 detections)."""
    return op.Slice(self, [0], [0], [0])


def test_draft_export_program_that_loses_detections_raises_naming_the_output():
    scores, boxes = detections()
    with pytest.warns(UserWarning, match="draft_export"):
        with pytest.raises(SelfCheckError) as info:
            torchlib.export(Detector(), (scores, boxes), functions={torch.ops.aten.index.Tensor: keep_nothing})
    message = str(info.value)
    assert "the ONNX model does not reproduce the model on the sample" in message
    assert "output [0]" in message and "has shape (0, 4) where torch gives (20, 4)" in message
    # draft_export's program reproduces the model (checked right after capture): the translation is blamed
    assert "its ONNX translation does not" in message and "compare_intermediates=True" in message
    assert "check=False" in message


def test_draft_export_is_checked_and_passes_when_right():
    scores, boxes = detections()
    with pytest.warns(UserWarning, match="draft_export"):
        result = torchlib.export(Detector(), (scores, boxes))
    assert result.capture_strategy == "draft_export"
    assert result.self_check.startswith("passed: the captured program and the ONNX model reproduce")


def test_check_false_skips_it():
    scores, boxes = detections()
    with pytest.warns(UserWarning, match="draft_export"):
        result = torchlib.export(Detector(), (scores, boxes), functions={torch.ops.aten.index.Tensor: keep_nothing}, check=False)
    assert result.self_check == "skipped (check=False)"


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 3)

    def forward(self, x):
        return {"logits": self.linear(x), "features": x * 2}


def test_captured_program_mismatch_names_the_path_and_the_tolerance():
    x = torch.randn(2, 4)
    torch.manual_seed(0)
    model, other = Head(), Head()
    ep = torch.export.export(other, (x,))
    sample = self_check.Sample(model, (x,), {}, ep)
    with pytest.raises(SelfCheckError) as info:
        sample.check_program(ep, "non-strict")
    message = str(info.value)
    assert "output ['logits'] differs by max abs" in message
    assert "(tolerance 0.0001 x scale" in message and "max rel" in message and "(tolerance 0.001)" in message
    sample.check_program(torch.export.export(model, (x,)), "non-strict")  # the right program passes


def test_big_model_is_not_checked_unless_asked(monkeypatch):
    x = torch.randn(2, 4)
    monkeypatch.setattr(self_check, "MAX_PARAMETERS", 10)
    result = torchlib.export(Head(), (x,))
    assert result.self_check.startswith("skipped: 0M parameter elements")
    result = torchlib.export(Head(), (x,), check=True)
    assert result.self_check.startswith("passed")


def test_work_estimate_counts_weight_multiply_adds():
    model = nn.Sequential(nn.Linear(64, 32), nn.Conv1d(8, 16, 3))
    ep = torch.export.export(nn.Linear(64, 32), (torch.randn(10, 64),))
    assert self_check.estimated_work(ep) == 10 * 64 * 32 + 10 * 32
    ep = torch.export.export(model[1], (torch.randn(2, 8, 12),))
    assert self_check.estimated_work(ep) == (16 * 8 * 3) * 2 * 10 + 2 * 16 * 10


class AttentionBias(nn.Module):
    """LeViT's attention biases: a [heads, n, n] table added to the scores, element by element."""

    def __init__(self, heads: int = 4, n: int = 196):
        super().__init__()
        self.register_buffer("bias", torch.randn(heads, n, n))

    def forward(self, scores):
        return scores + self.bias


def test_work_estimate_counts_a_weight_read_element_by_element_once():
    """A weight that broadcasts to the output is read element by element: it adds the elements
    produced, not a multiply-add per weight element and row (LeViT-128's biases counted 11.8G
    each, 49.9G in all for a 0.8G-multiply-add model, whose check was skipped as too costly)."""
    ep = torch.export.export(AttentionBias(), (torch.randn(2, 4, 196, 196),))
    assert self_check.estimated_work(ep) == 2 * 4 * 196 * 196
    result = torchlib.export(AttentionBias(), (torch.randn(2, 4, 196, 196),))
    assert result.self_check.startswith("passed")


class StandardizedConv(nn.Conv1d):
    """NFNet's weight standardization: the weight is reshaped and normalized, then convolved."""

    def forward(self, x):
        w = self.weight.reshape(self.out_channels, -1)
        w = ((w - w.mean(1, keepdim=True)) / (w.std(1, keepdim=True) + 1e-5)).reshape_as(self.weight)
        return nn.functional.conv1d(x, w, self.bias)


def test_work_estimate_counts_a_weight_computed_from_weights_as_a_weight():
    """A node computed from weights alone is a weight: its elements are counted, and the
    convolution that reads it counts its multiply-adds (eca_nfnet_l0's reshapes of its weights
    counted 21.5G as products, for a 0.7G model)."""
    ep = torch.export.export(StandardizedConv(8, 16, 3), (torch.randn(2, 8, 12),))
    weight_nodes = [n for n in ep.graph.nodes if n.op == "call_function" and n.target is not torch.ops.aten.conv1d.default]
    weight_work = sum(n.meta["val"].numel() for n in weight_nodes)
    assert self_check.estimated_work(ep) == weight_work + (16 * 8 * 3) * 2 * 10 + 2 * 16 * 10


def test_random_programs_are_not_checked_but_dropout_at_zero_is():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.0)).train()
    result = torchlib.export(model, (torch.randn(3, 4),))
    assert result.self_check.startswith("passed")
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).train()
    x = torch.randn(3, 4)
    state = torch.random.get_rng_state()
    result = torchlib.export(model, (x,))
    assert torch.equal(state, torch.random.get_rng_state())  # the check leaves the user's random state
    assert result.self_check.startswith("skipped: the program draws random numbers (aten::dropout)")


def _training_warnings(model: nn.Module, x: torch.Tensor) -> tuple[list[str], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = torchlib.export(model, (x,))
    said = [str(w.message) for w in caught if "training mode" in str(w.message)]
    return said, [d for d in result.diagnostics if "training mode" in d]


def test_a_model_left_in_training_mode_warns_naming_its_modules():
    """The newcomer's mistake: a model constructed in code (or from a transformers config) is in
    training mode until `.eval()`; its export keeps random dropout and batch statistics."""
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.BatchNorm1d(8)).train()
    said, diagnostics = _training_warnings(model, torch.randn(3, 4))
    assert len(said) == 1 and diagnostics == said
    assert "module 1 (aten.dropout.default), module 2 (aten.batch_norm.default)" in said[0]
    assert "call model.eval() before exporting" in said[0]
    assert _training_warnings(model.eval(), torch.randn(3, 4)) == ([], [])
    # dropout at p=0 is the same in both modes, and a training flag no op reads changes nothing
    same = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.0), nn.ReLU()).train()
    assert _training_warnings(same, torch.randn(3, 4)) == ([], [])


class _Attention(nn.Module):
    def __init__(self, dropout_p: float):
        super().__init__()
        self.dropout_p = dropout_p

    def forward(self, q):
        return nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=self.dropout_p)


@pytest.mark.parametrize("model", [_Attention(0.0), nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).eval(),
                                   nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.0)).train()],
                         ids=["sdpa_p0", "dropout_eval", "dropout_p0_train"])
def test_ops_whose_arguments_rule_out_randomness_are_checked_without_a_second_run(model, monkeypatch):
    """sdpa, dropout and their kin are tagged as seeded; train=False or p=0 makes them
    deterministic, which the check reads from the arguments: no second eager run, and no
    `ep.module()` (which costs more than the rest of the check for a small model)."""
    calls = []
    monkeypatch.setattr(self_check.Sample, "_program_is_seeded", lambda *a: calls.append(a) or True)
    x = torch.randn(2, 3, 5, 4)
    result = torchlib.export(model, (x,))
    assert result.self_check.startswith("passed")
    assert calls == []


def test_attention_with_dropout_is_random():
    result = torchlib.export(_Attention(0.5), (torch.randn(2, 3, 5, 4),))
    assert result.self_check.startswith("skipped: the program draws random numbers (aten::scaled_dot_product_attention")


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        x.mul_(2)
        return x + self.calls


def test_check_leaves_the_model_and_the_sample_unchanged():
    model, x = Counter(), torch.ones(3)
    result = torchlib.export(model, (x,))
    assert result.self_check.startswith("passed")
    assert model.calls.item() == 0 and torch.equal(x, torch.ones(3))


def test_wrong_translation_after_non_strict_capture_is_blamed_on_the_onnx_model():
    model, x = nn.Sequential(nn.Linear(4, 4), nn.ReLU()), torch.randn(3, 4)
    with pytest.raises(SelfCheckError) as info:
        torchlib.export(model, (x,), functions={torch.ops.aten.relu.default: lambda self: op.Neg(self)})
    message = str(info.value)
    assert message.startswith("the ONNX model does not reproduce the model on the sample input")
    assert "its ONNX translation does not" in message and "functions=" in message


class _Eigh(nn.Module):
    def forward(self, a):
        return torch.linalg.eigh(a).eigenvectors


def _flip_sign_eigh(a, UPLO="L"):
    """The library's linalg_eigh with every eigenvector's sign flipped: as right as torch's."""
    from torchlib.ops.linalg.composites import aten_linalg_eigh

    w, v = aten_linalg_eigh(a, UPLO)
    return w, op.Neg(v)


def test_an_output_defined_up_to_sign_is_inconclusive_with_a_warning_not_an_error():
    a = torch.randn(4, 4)
    a = a + a.T
    with pytest.warns(UserWarning, match=r"inconclusive.*aten::linalg_eigh \(each eigenvector is defined up to its sign"):
        result = torchlib.export(_Eigh(), (a,), functions={torch.ops.aten.linalg_eigh.default: _flip_sign_eigh})
    assert result.self_check.startswith("inconclusive: the output")
    assert any("inconclusive" in d for d in result.diagnostics)


class _EighPlusWrong(nn.Module):
    def forward(self, a, b):
        return torch.linalg.eigh(a).eigenvectors, b.sigmoid()


def test_a_wrong_output_beside_a_not_unique_one_still_raises():
    a = torch.randn(4, 4)
    a = a + a.T

    def wrong_sigmoid(x):
        return op.Neg(op.Sigmoid(x))

    with pytest.raises(SelfCheckError, match=r"output \[1\]"):
        torchlib.export(_EighPlusWrong(), (a, torch.randn(3)), functions={
            torch.ops.aten.linalg_eigh.default: _flip_sign_eigh, torch.ops.aten.sigmoid.default: wrong_sigmoid})


def test_uninitialized_memory_is_not_compared():
    class Empty(nn.Module):  # torch.empty's values are whatever the memory held (torch's test_empty)
        def forward(self, x):
            return torch.empty(x.size(), dtype=torch.int64)

    result = torchlib.export(Empty(), (torch.randn(1, 2),))
    assert result.self_check.startswith("skipped: every output depends on memory torch leaves undefined")
    assert "aten::empty" in result.self_check
    assert result(torch.randn(1, 2)).shape == (1, 2)


class _InversePermutation(nn.Module):
    """transformers' MoE experts (grouped_mm_experts_forward): the inverse of a permutation written
    into empty_like, every slot once; and an output that keeps an unwritten slot. (The permutation
    is 2i mod n, n odd, not a sort's: a sort's ties would excuse the outputs after it.)"""

    def forward(self, x):
        perm = torch.arange(x.size(0)) * 2 % x.size(0)
        values = x[perm]
        inverse = torch.empty_like(perm)
        inverse[perm] = torch.arange(perm.size(0))
        partial = torch.empty(x.size(0) + 1)
        partial.index_copy_(0, perm, values)  # the last slot is never written
        return values[inverse] * 2, partial


def _wrong_index_put(self, indices, values, accumulate=False):
    from torchlib.ops.indexing import aten_index_put

    last = op.CastLike(op.Sub(op.Size(self), 1), self)  # n - 1 - the right answer: in bounds, wrong
    return op.Sub(last, aten_index_put(self, indices, values, accumulate))


def test_memory_filled_before_it_is_read_is_checked():
    """An allocation every slot of which is written before it is read does not stop the check:
    the outputs that do not depend on undefined memory are compared, at two sizes."""
    for n in (5, 9):
        result = torchlib.export(_InversePermutation(), (torch.randn(n),), dynamic_shapes=({0: "n"},))
        assert result.self_check.startswith(("passed", "inconclusive")), result.self_check
        if result.self_check.startswith("inconclusive"):  # only the output with the unwritten slot may differ
            assert "output [1]" in result.self_check and "output [0]" not in result.self_check
        x = torch.randn(n + 4)
        torch.testing.assert_close(result(x)[0], _InversePermutation()(x)[0])
    with pytest.raises(SelfCheckError, match=r"output \[0\]"):  # a wrong translation of the written slots is caught
        torchlib.export(_InversePermutation(), (torch.randn(5),),
                        functions={torch.ops.aten.index_put.default: _wrong_index_put})


class _EighValues(nn.Module):
    def forward(self, a):
        return torch.linalg.eigh(a).eigenvalues * 2


def _wrong_eigenvalues_eigh(a, UPLO="L"):
    """linalg_eigh whose eigenvalues are wrong: they are unique, so nothing excuses them."""
    from torchlib.ops.linalg.composites import aten_linalg_eigh

    w, v = aten_linalg_eigh(a, UPLO)
    return op.Neg(w), v


def test_a_unique_output_of_an_op_with_free_outputs_is_still_checked():
    """eigh's eigenvectors are free (free_outputs=(1,)), its sorted eigenvalues are not."""
    a = torch.randn(4, 4)
    a = a + a.T
    with pytest.raises(SelfCheckError, match="does not reproduce the model"):
        torchlib.export(_EighValues(), (a,), functions={torch.ops.aten.linalg_eigh.default: _wrong_eigenvalues_eigh})
    assert torchlib.export(_EighValues(), (a,)).self_check.startswith("passed")


class _SeedsItself(nn.Module):
    """Seeds torch's generator inside forward (OpInfo's random ops do): the same answer under
    any outer seed, but the captured program does not keep the manual_seed call."""

    def forward(self, x):
        torch.manual_seed(42)
        return x + torch.randn_like(x)


def test_a_model_that_seeds_itself_is_random_for_the_program():
    result = torchlib.export(_SeedsItself(), (torch.zeros(3, 4),))
    assert result.self_check.startswith("skipped: the program draws random numbers (aten::randn_like")


class _SortTies(nn.Module):
    def forward(self, x):
        values, indices = torch.sort(x, descending=True)
        return values, indices


def test_sort_indices_of_ties_are_inconclusive_and_the_values_checked():
    x = torch.tensor([3, 1, 3, 2, 3, 1, 3, 3, 0, 3, 3, 3, 1, 3, 3, 2, 3, 3] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = torchlib.export(_SortTies(), (x,))
    assert result.self_check.startswith(("passed", "inconclusive: output [1]"))
    torch.testing.assert_close(result(x)[0], torch.sort(x, descending=True).values)


def test_the_check_runs_the_graph_as_written_and_the_result_builds_its_session_when_called(monkeypatch):
    """The check runs the ONNX model in a session of its own, with onnxruntime's graph
    optimizations off and one thread (a fraction of the optimized session's cost to build);
    `result(...)` builds the optimized session on its first call, once."""
    import onnxruntime as ort

    made = []

    class Counted(ort.InferenceSession):
        def __init__(self, model, options, *args, **kwargs):
            made.append((options.graph_optimization_level, options.intra_op_num_threads))
            super().__init__(model, options, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", Counted)
    model, x = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).eval(), torch.randn(2, 4)
    result = torchlib.export(model, (x,))
    assert result.self_check.startswith("passed")
    assert made == [(ort.GraphOptimizationLevel.ORT_DISABLE_ALL, 1)]
    torch.testing.assert_close(result(x), model(x))
    torch.testing.assert_close(result(torch.ones(2, 4)), model(torch.ones(2, 4)))
    assert made[1:] == [(ort.GraphOptimizationLevel.ORT_ENABLE_ALL, 0)]  # built on the first call, once
    assert torchlib.export(model, (x,), check=False)(x) is not None and len(made) == 3  # unchecked: no check session


def _off_by_a_hundredth_relu(self):
    return op.Add(op.Relu(self), op.CastLike(0.01, self))


def test_native_forms_differ_only_where_torch_gives_nan_or_infinity():
    """The default (exact_nan=False) max pool ignores a NaN torch propagates: on a sample with a
    NaN the check names that difference (inconclusive, with what to do), and exact_nan=True
    passes; a difference at an element where torch's value is finite still raises."""
    model = nn.Sequential(nn.MaxPool2d(2), nn.ReLU())
    x = torch.randn(1, 1, 4, 4)
    x[0, 0, 0, 0] = float("nan")
    with pytest.warns(UserWarning, match="exact_nan=True"):
        loose = torchlib.export(model, (x,))
    assert loose.self_check.startswith("inconclusive") and "NaN or infinity" in loose.self_check
    assert torchlib.export(model, (x,), exact_nan=True).self_check.startswith("passed")
    with pytest.raises(SelfCheckError, match="does not reproduce"):
        torchlib.export(model, (x,), functions={torch.ops.aten.relu.default: _off_by_a_hundredth_relu})
    clean = torch.randn(1, 1, 4, 4)  # no NaN: nothing to excuse
    assert torchlib.export(model, (clean,)).self_check.startswith("passed")


def test_timings_say_where_the_default_export_went():
    """`result.timings`: capture, translation and the check, whose parts (torch eager, building
    the check session, running it) are within it; with check=False there are no parts."""
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    result = torchlib.export(model, (torch.randn(3, 4),))
    t = result.timings
    parts = [t["self_check.eager"], t["self_check.session"], t["self_check.onnxruntime"]]
    assert all(p > 0 for p in parts) and sum(parts) <= t["self_check"]
    assert t["torch.export"] + t["translate"] + t["self_check"] <= t["total"]
    unchecked = torchlib.export(model, (torch.randn(3, 4),), check=False).timings
    assert unchecked["self_check"] < t["self_check"] and "self_check.eager" not in unchecked
