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


def test_lstm_with_projections_is_refused_clearly():
    module = torch.nn.LSTM(5, 7, proj_size=3)
    params = [p.detach() for p in module._flat_weights]
    hx = [torch.zeros(1, 2, 3), torch.zeros(1, 2, 7)]
    with pytest.raises(ValueError, match="proj_size"):
        rnn.aten_lstm(torch.randn(4, 2, 5), hx, params, True, 1, 0.0, False, False, False)
