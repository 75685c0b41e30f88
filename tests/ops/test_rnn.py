import pytest
import torch

from torchlib.ops import rnn
from torchlib.testing import check_function

ATEN = {
    "LSTM": (torch.ops.aten.lstm.input, rnn.aten_lstm),
    "GRU": (torch.ops.aten.gru.input, rnn.aten_gru),
    "RNN_TANH": (torch.ops.aten.rnn_tanh.input, rnn.aten_rnn_tanh),
    "RNN_RELU": (torch.ops.aten.rnn_relu.input, rnn.aten_rnn_relu),
}


def make(mode, num_layers, bidirectional, batch_first, bias, dtype=torch.float32):
    torch.manual_seed(0)
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}.get(mode, torch.nn.RNN)
    extra = {"nonlinearity": mode[4:].lower()} if mode.startswith("RNN") else {}
    module = cls(5, 7, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias, **extra)
    module = module.to(dtype)
    directions = 2 if bidirectional else 1
    x = torch.randn((3, 4, 5) if batch_first else (4, 3, 5), dtype=dtype)
    h0 = torch.randn(num_layers * directions, 3, 7, dtype=dtype)
    hx = [h0, torch.randn_like(h0)] if mode == "LSTM" else h0
    params = [p.detach() for p in module._flat_weights]
    return x, hx, params


@pytest.mark.parametrize("mode", list(ATEN))
@pytest.mark.parametrize("num_layers, bidirectional, batch_first, bias", [
    (1, False, False, True), (2, True, True, True), (2, False, True, False), (1, True, False, False),
])
def test_recurrent_matches_torch(mode, num_layers, bidirectional, batch_first, bias):
    aten, fn = ATEN[mode]
    x, hx, params = make(mode, num_layers, bidirectional, batch_first, bias)
    args = (x, hx, params, bias, num_layers, 0.0, False, bidirectional, batch_first)
    expected = aten(*args)
    check_function(fn, args, expected=tuple(expected), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("num_layers, bidirectional, batch_first, bias", [(1, False, False, True), (2, True, True, False)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_lstm_with_projections_matches_torch(num_layers, bidirectional, batch_first, bias, dtype):
    # ONNX's LSTM has no projection (w_hr): the cell equations, unrolled or a Scan
    torch.manual_seed(0)
    module = torch.nn.LSTM(5, 7, num_layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional, proj_size=3)
    params = [p.detach().to(dtype) for p in module._flat_weights]
    states = num_layers * (2 if bidirectional else 1)
    hx = [torch.randn(states, 2, 3, dtype=dtype), torch.randn(states, 2, 7, dtype=dtype)]
    x = torch.randn((2, 4, 5) if batch_first else (4, 2, 5), dtype=dtype)
    args = (x, hx, params, bias, num_layers, 0.0, False, bidirectional, batch_first)
    expected = tuple(torch.ops.aten.lstm.input(*args))
    tol = {"atol": 1e-5, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 1e-12, "rtol": 1e-10}
    check_function(rnn.aten_lstm, args, expected=expected, **tol)
    for got, want in zip(_run_dynamic_input(rnn.aten_lstm, *args), expected):  # a Scan over the sequence
        torch.testing.assert_close(got, want, **tol)


def test_lstm_with_projections_keeps_nan_as_torch():
    # the composed cell's Sigmoid/Tanh/MatMul carry NaN as torch's kernel does, in both modes
    torch.manual_seed(0)
    module = torch.nn.LSTM(3, 4, 2, proj_size=2)
    params = [p.detach() for p in module._flat_weights]
    x = torch.randn(5, 3, 3)
    x[1, 0, 0] = float("nan")
    hx = [torch.randn(2, 3, 2), torch.randn(2, 3, 4)]
    hx[0][1, 2, 0] = float("nan")
    args = (x, hx, params, True, 2, 0.0, False, False, False)
    check_function(rnn.aten_lstm, args, expected=tuple(torch.ops.aten.lstm.input(*args)), atol=1e-5, rtol=1e-4)


def test_recurrent_with_a_wrong_weight_count_is_refused_clearly():
    module = torch.nn.GRU(5, 7)
    params = [p.detach() for p in module._flat_weights][:3]
    with pytest.raises(ValueError, match="expected 4 weights per layer and direction, got 3"):
        rnn.aten_gru(torch.randn(4, 2, 5), torch.zeros(1, 2, 7), params, True, 1, 0.0, False, False, False)


# -- regression (issue 13): dtypes without a kernel, empty batches, training dropout -------------
def _run_dynamic_input(fn, x, *rest):
    """fn(x, *rest) traced with x's dims symbolic (every other tensor a static graph input)."""
    from graph_builder import GraphBuilder, types
    from graph_builder.opset import as_array
    from torchlib.testing import run_model

    g = GraphBuilder()
    feeds = {}

    def graph_input(t, dynamic):
        if isinstance(t, torch.Tensor):
            name = f"input_{len(feeds)}"
            feeds[name] = as_array(t)
            return g.input(name, types.from_torch(t.dtype), [f"{name}_d{i}" for i in range(t.dim())] if dynamic else list(t.shape))
        if isinstance(t, (list, tuple)):
            return type(t)(graph_input(u, dynamic) for u in t)
        return t

    args = [graph_input(x, True)] + [graph_input(a, False) for a in rest]
    with g:
        result = fn(*args)
    names = [g.output(r, f"output_{i}").name for i, r in enumerate(result)]
    return run_model(g.to_model(), feeds, names)


@pytest.mark.parametrize("mode", list(ATEN))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_recurrent_without_onnxruntime_kernel(mode, dtype):
    # onnxruntime's LSTM/GRU/RNN have no double kernel: float64 composes the cell equations
    aten, fn = ATEN[mode]
    x, hx, params = make(mode, 2, True, True, True, dtype=dtype)
    args = (x, hx, params, True, 2, 0.0, False, True, True)
    if dtype == torch.float64:
        expected, tol = tuple(aten(*args)), {"atol": 1e-12, "rtol": 1e-10}
        check_function(fn, args, expected=expected, **tol)
        for got, want in zip(_run_dynamic_input(fn, *args), expected):  # a Scan over the sequence
            torch.testing.assert_close(got, want, **tol)
    else:  # torch computes the half dtypes in float32 on CPU too; compare with that, rounded
        wide = (x.float(), [h.float() for h in hx] if mode == "LSTM" else hx.float(), [p.float() for p in params])
        expected = tuple(e.to(dtype) for e in aten(*wide, *args[3:]))
        for got, want in zip(fn(*args), expected):
            torch.testing.assert_close(got, want, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("mode", list(ATEN))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_recurrent_empty_batch_does_not_abort(mode, dtype):
    # onnxruntime's kernels abort the process (SIGABRT) on a batch of 0
    aten, fn = ATEN[mode]
    x, hx, params = make(mode, 2, True, False, True, dtype=dtype)
    hx0 = [h[:, :0] for h in hx] if mode == "LSTM" else hx[:, :0]
    args = (x[:, :0], hx0, params, True, 2, 0.0, False, True, False)
    expected = tuple(aten(*args))
    check_function(fn, args, expected=expected)
    for got, want in zip(_run_dynamic_input(fn, *args), expected):
        torch.testing.assert_close(got, want)
    # a dynamic sequence that turns out empty (torch raises) must not abort either
    _run_dynamic_input(fn, x[:0], hx, *args[2:])
    with pytest.raises(ValueError, match="sequence length"):
        fn(x[:0], hx, *args[2:])


@pytest.mark.parametrize("mode", list(ATEN))
def test_recurrent_training_dropout_is_refused(mode):
    aten, fn = ATEN[mode]
    x, hx, params = make(mode, 2, False, False, True)
    with pytest.raises(ValueError, match="training"):
        fn(x, hx, params, True, 2, 0.5, True, False, False)


# -- NaN as torch propagates it (issue 13) ------------------------------------------------------


@pytest.mark.usefixtures("exact_nan_mode")
@pytest.mark.parametrize("name, gates", [("rnn_relu", 1), ("rnn_tanh", 1), ("gru", 3), ("lstm", 4)])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_nan_input_makes_the_hidden_state_nan_from_its_step_on(name, gates, bidirectional):
    # onnxruntime's kernels clamp the activations' inputs with min/max, which turns NaN finite
    torch.manual_seed(0)
    nan = float("nan")
    d = 2 if bidirectional else 1
    x = torch.randn(5, 3, 3)
    x[1, 0, 0] = x[3, 2, 1] = nan
    x[0, 1, 1] = float("inf")
    h = torch.randn(2 * d, 3, 4)
    h[0, 1, 2] = nan
    w = []
    for layer in range(2):
        for _ in range(d):
            w += [torch.randn(gates * 4, 3 if layer == 0 else 4 * d), torch.randn(gates * 4, 4), torch.randn(gates * 4), torch.randn(gates * 4)]
    hx = [h, torch.randn(2 * d, 3, 4)] if name == "lstm" else h
    args = (x, hx, w, True, 2, 0.0, False, bidirectional, False)
    expected = getattr(torch.ops.aten, name).input(*args)
    check_function(getattr(rnn, f"aten_{name}"), args, expected=expected, atol=1e-4, rtol=1e-4)
    h[-1, 2, 0] = nan  # the last layer's own NaN row: its output NaN from the first step, not the fourth
    expected = getattr(torch.ops.aten, name).input(*args)
    check_function(getattr(rnn, f"aten_{name}"), args, expected=expected, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_an_exported_stack_with_torchs_zero_state_masks_nan_steps_once(mode):
    # without hx torch starts from zeros, known when the graph is built: no initial-state mask,
    # and the one-direction stack's NaN steps are masked once, in the last layer's output, in an
    # If taken only when the input holds a NaN
    import torchlib

    torch.manual_seed(0)
    model = getattr(torch.nn, mode)(3, 4, num_layers=3, batch_first=True).eval()
    x = torch.randn(3, 5, 3)
    x[0, 1, 0] = x[2, 4, 2] = float("nan")
    x[1, 2, 1] = float("inf")
    result = torchlib.export(model, (x,), exact_nan=True)
    (branch,) = [n for n in result.model_proto.graph.node if n.op_type == "If"]
    then_ops = [n.op_type for a in branch.attribute if a.name == "then_branch" for n in a.g.node]
    assert then_ops.count("CumSum") == 1
    for inputs in (x, x.nan_to_num(nan=0.5)):  # the If's two branches
        got, expected = result(inputs), model(inputs)
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e, equal_nan=True, atol=1e-5, rtol=1e-5)
