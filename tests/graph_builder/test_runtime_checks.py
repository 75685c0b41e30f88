"""`graph_builder.require`: a condition the computation relies on, checked on every run.

Eagerly a false condition raises at once. Traced, the builder ties it into the next output; the
model then stops in onnxruntime at a node named `check: <message>`, with every graph optimization
on (onnxruntime merges chains of Reshape / Squeeze / Unsqueeze ending in a static shape, which
would take a check with them: these cases are here) and after torchlib's optimizer.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch

from graph_builder import FLOAT, GraphBuilder, OpError, op
from graph_builder.evaluator import CheckFailed, require, run_session
from graph_builder.optimizer import optimize


def _model(shape, producer: str, conditions: int = 1, optimized: bool = False):
    """y = 2x (then reshaped / flattened / squeezed), with `conditions` checks: sum(x) > k for
    k = 0, 10, 20..."""
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, shape)
    with g:
        total = op.ReduceSum(x, keepdims=0)
        for k in range(conditions):
            require(op.Greater(total, np.array(10.0 * k, np.float32)), f"sum(x) > {10 * k}")
        y = op.Mul(x, np.array(2, np.float32))
        if producer == "reshape":
            y = op.Reshape(y, np.array([-1], np.int64))
        elif producer == "unsqueeze":
            y = op.Unsqueeze(y, np.array([0], np.int64))
        elif producer == "flatten":
            y = op.Flatten(y, axis=1)
    g.output(y, "y")
    if optimized:
        optimize(g)
    return g.to_model()


def _session(model, level):
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


LEVELS = [ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL]


CASES = [(shape, producer) for shape in ([2, 3], ["a", 3], []) for producer in ("mul", "reshape", "unsqueeze", "flatten")
         if shape or producer != "flatten"]  # a scalar's Flatten is a 1 x 1 matrix, not the scalar case


@pytest.mark.parametrize("optimized", [False, True])
@pytest.mark.parametrize(("shape", "producer"), CASES)
def test_a_false_check_stops_onnxruntime(shape, producer, optimized):
    model = _model(shape, producer, optimized=optimized)
    sizes = [2 if isinstance(d, str) else d for d in shape]
    for level in LEVELS:
        session = _session(model, level)
        good = np.ones(sizes, np.float32)
        (y,) = run_session(session, {"x": good})
        np.testing.assert_array_equal(y.reshape(-1), (2 * good).reshape(-1))  # the check changes nothing
        with pytest.raises(CheckFailed, match=r"run-time check does not hold for these inputs: sum\(x\) > 0"):
            run_session(session, {"x": np.array(-good, np.float32)})


@pytest.mark.parametrize("shape", [[2, 3], []], ids=["static", "scalar"])
def test_several_checks_each_named(shape):
    """Each check is its own node, so the error names the one that failed (the first in order)."""
    model = _model(shape, "reshape" if shape else "mul", conditions=3)
    sizes = [2 if isinstance(d, str) else d for d in shape]
    for level in LEVELS:
        session = _session(model, level)
        run_session(session, {"x": np.full(sizes, 30.0, np.float32)})  # sum 180 or 30: all hold
        with pytest.raises(CheckFailed, match=r"sum\(x\) > 20"):
            run_session(session, {"x": np.full(sizes, 3.0 if shape else 15.0, np.float32)})  # sums 18, 15
        with pytest.raises(CheckFailed, match=r"sum\(x\) > 0"):
            run_session(session, {"x": np.full(sizes, -1.0, np.float32)})


@pytest.mark.parametrize("producer", ["mul", "reshape"])
def test_checks_on_an_empty_output(producer):
    """An output with no elements carries its checks too, and runs when they hold (a 0 in a
    Reshape's shape would copy the input's dim without allowzero: after a Flatten, 1)."""
    model = _model([0, "a"] if producer == "mul" else ["a", 0], producer, conditions=3)
    for level in LEVELS:
        session = _session(model, level)
        x = np.zeros((0, 5) if producer == "mul" else (5, 0), np.float32)
        with pytest.raises(CheckFailed, match=r"sum\(x\) > 0"):  # the sum of nothing is 0
            run_session(session, {"x": x})


def test_checks_that_hold_on_an_empty_output():
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, ["n", 4])
    with g:
        count = op.Squeeze(op.Shape(x, start=0, end=1), [0])
        require(op.GreaterOrEqual(count, np.array(0, np.int64)), "n >= 0")
        require(op.LessOrEqual(count, np.array(40, np.int64)), "n <= 40")
        y = op.Reshape(op.Mul(x, np.array(2, np.float32)), np.array([-1, 2], np.int64))
    g.output(y, "y")
    for level in LEVELS:
        session = _session(g.to_model(), level)
        assert run_session(session, {"x": np.zeros((0, 4), np.float32)})[0].shape == (0, 2)
        assert run_session(session, {"x": np.ones((3, 4), np.float32)})[0].shape == (6, 2)
        with pytest.raises(CheckFailed, match="n <= 40"):
            run_session(session, {"x": np.ones((41, 4), np.float32)})


def test_eager_require_raises_at_once():
    require(torch.tensor([True, True]), "holds")
    require(np.bool_(True), "holds")
    with pytest.raises(CheckFailed, match="not all true"):
        require(torch.tensor([True, False]), "not all true")
    with pytest.raises(CheckFailed, match="false"):
        require(False, "false")


def test_a_constant_condition_is_decided_while_tracing():
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, [2])
    with g:
        require(op.Greater(np.array(1.0, np.float32), np.array(0.0, np.float32)), "1 > 0")  # folded: nothing to check
        with pytest.raises(CheckFailed, match="0 > 1"):
            require(op.Greater(np.array(0.0, np.float32), np.array(1.0, np.float32)), "0 > 1")
        y = op.Neg(x)
    g.output(y, "y")
    assert [n.op_type for n in g.to_graph().nodes] == ["Neg"]


def test_a_check_with_no_output_after_it_is_an_error():
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, [2])
    g.output(x, "y")
    with g:
        require(op.Greater(op.ReduceSum(x, keepdims=0), np.array(0.0, np.float32)), "late")
    with pytest.raises(OpError, match="required after the last output"):
        g.to_graph()


def test_a_tensor_condition_must_hold_everywhere():
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, ["n"])
    with g:
        require(op.Greater(x, np.array(0.0, np.float32)), "x > 0 everywhere")
        y = op.Sqrt(x)
    g.output(y, "y")
    session = _session(g.to_model(), LEVELS[0])
    run_session(session, {"x": np.array([1.0, 4.0], np.float32)})
    run_session(session, {"x": np.zeros(0, np.float32)})  # all of nothing holds
    with pytest.raises(CheckFailed, match="x > 0 everywhere"):
        run_session(session, {"x": np.array([1.0, -4.0], np.float32)})


@pytest.mark.parametrize("consumer", ["add", "reshape", "static reshape"])
def test_a_check_tied_into_an_input_runs_before_what_reads_it(consumer):
    """`require(..., value=x)` checks x at once: every node reading the checked x runs after the
    check, so onnxruntime stops at the check, naming it, where a node reading x would fail on its
    own first (an Add against a static size, a Reshape into rows of 4). A Reshape to a static
    shape after it (which onnxruntime merges with a Reshape before it) keeps it too: there, an
    input breaking the check would run to a wrong answer without it."""
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, ["a", "n"])
    with g:
        n = op.Squeeze(op.Shape(x, start=1, end=2), [0])
        checked = require(op.Equal(op.Mod(n, np.array(4, np.int64)), np.array(0, np.int64)), "n % 4 == 0", x)
        assert checked is not x and checked.shape == x.shape and checked.dtype == x.dtype
        if consumer == "add":
            y = op.Add(checked, np.ones((1, 8), np.float32))  # broadcasts for n == 8 only
        elif consumer == "reshape":
            y = op.Reshape(checked, np.array([-1, 4], np.int64))
        else:
            y = op.Reshape(checked, np.array([2, 4], np.int64))  # 8 elements: [1, 8] and [4, 2] alike
    g.output(y, "y")
    assert not g._checks  # nothing left for the output
    for optimized in (False, True):
        if optimized:
            optimize(g)
        for level in LEVELS:
            session = _session(g.to_model(), level)
            good, bad = ((1, 8), (4, 2)) if consumer == "static reshape" else ((2, 8), (3, 6))
            (y,) = run_session(session, {"x": np.ones(good, np.float32)})
            assert y.shape == {"add": (2, 8), "reshape": (4, 4), "static reshape": (2, 4)}[consumer]
            with pytest.raises(CheckFailed, match=r"n % 4 == 0"):
                run_session(session, {"x": np.ones(bad, np.float32)})


def test_eager_require_with_a_value_returns_it():
    x = np.ones((2, 3), np.float32)
    assert require(True, "holds", x) is x
    with pytest.raises(CheckFailed, match="does not"):
        require(np.array([True, False]), "does not", x)
