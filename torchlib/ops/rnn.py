"""Recurrent layers: aten::lstm/gru/rnn_tanh/rnn_relu to ONNX LSTM/GRU/RNN, one ONNX node per layer.

torch orders the gates of its weights (i, f, g, o) for LSTM and (r, z, n) for GRU; ONNX wants
(i, o, f, c) and (z, r, h). GRU's `linear_before_reset=1` is torch's formula for the new gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import TFloat
from torchlib.registry import aten_op

_GATE_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN": (0,)}


def _reorder(w: Value, onnx_op: str) -> Value:
    order = _GATE_ORDER[onnx_op]
    if len(order) == 1:
        return w
    chunks = op.Split(w, axis=0, num_outputs=len(order))
    return op.Concat(*(chunks[i] for i in order), axis=0)


def _recurrent(
    onnx_op: str,
    input: Value,
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    bidirectional: bool,
    batch_first: bool,
    activation: str | None = None,
) -> tuple[Any, ...]:
    directions = 2 if bidirectional else 1
    per_direction = len(params) // (num_layers * directions)
    if per_direction != (4 if has_biases else 2):
        raise ValueError(
            f"aten::{onnx_op.lower()} with projections (proj_size > 0) has no ONNX counterpart: "
            f"expected {4 if has_biases else 2} weights per layer and direction, got {per_direction}"
        )
    hidden = params[1].shape[1]  # w_hh: [gates * hidden, hidden]
    x = op.Transpose(input, perm=[1, 0, 2]) if batch_first else input  # [seq, batch, features]
    attrs: dict[str, Any] = {"hidden_size": hidden, "direction": "bidirectional" if bidirectional else "forward"}
    if onnx_op == "GRU":
        attrs["linear_before_reset"] = 1
    if activation is not None:
        attrs["activations"] = [activation] * directions
    last_h, last_c = [], []
    for layer in range(num_layers):
        ws, rs, bs = [], [], []
        for d in range(directions):
            first = (layer * directions + d) * per_direction
            w_ih, w_hh = params[first], params[first + 1]
            ws.append(op.Unsqueeze(_reorder(w_ih, onnx_op), [0]))
            rs.append(op.Unsqueeze(_reorder(w_hh, onnx_op), [0]))
            if has_biases:
                b_ih, b_hh = params[first + 2], params[first + 3]
                bs.append(op.Unsqueeze(op.Concat(_reorder(b_ih, onnx_op), _reorder(b_hh, onnx_op), axis=0), [0]))
        w = op.Concat(*ws, axis=0)
        r = op.Concat(*rs, axis=0)
        b = op.Concat(*bs, axis=0) if has_biases else None
        start, end = layer * directions, (layer + 1) * directions
        h0 = op.Slice(hx[0], [start], [end], [0])
        if onnx_op == "LSTM":
            c0 = op.Slice(hx[1], [start], [end], [0])
            y, h_n, c_n = op.LSTM(x, w, r, b, None, h0, c0, _outputs=3, **attrs)
            last_c.append(c_n)
        else:
            y, h_n = getattr(op, onnx_op)(x, w, r, b, None, h0, _outputs=2, **attrs)
        last_h.append(h_n)
        # y: [seq, directions, batch, hidden] -> [seq, batch, directions * hidden]
        x = op.Reshape(op.Transpose(y, perm=[0, 2, 1, 3]), [0, 0, -1])
    output = op.Transpose(x, perm=[1, 0, 2]) if batch_first else x
    h_n = op.Concat(*last_h, axis=0) if num_layers > 1 else last_h[0]
    if onnx_op == "LSTM":
        c_n = op.Concat(*last_c, axis=0) if num_layers > 1 else last_c[0]
        return output, h_n, c_n
    return output, h_n


@aten_op("aten::lstm.input")
def aten_lstm(
    input: TFloat,
    hx: Sequence[TFloat],
    params: Sequence[TFloat],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[TFloat, TFloat, TFloat]:
    """lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)"""
    return _recurrent("LSTM", input, hx, params, has_biases, num_layers, bidirectional, batch_first)  # type: ignore[return-value]


@aten_op("aten::gru.input")
def aten_gru(
    input: TFloat,
    hx: TFloat,
    params: Sequence[TFloat],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[TFloat, TFloat]:
    """gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"""
    return _recurrent("GRU", input, [hx], params, has_biases, num_layers, bidirectional, batch_first)  # type: ignore[return-value]


@aten_op("aten::rnn_tanh.input")
def aten_rnn_tanh(
    input: TFloat,
    hx: TFloat,
    params: Sequence[TFloat],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[TFloat, TFloat]:
    """rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"""
    return _recurrent("RNN", input, [hx], params, has_biases, num_layers, bidirectional, batch_first, "Tanh")  # type: ignore[return-value]


@aten_op("aten::rnn_relu.input")
def aten_rnn_relu(
    input: TFloat,
    hx: TFloat,
    params: Sequence[TFloat],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[TFloat, TFloat]:
    """rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)"""
    return _recurrent("RNN", input, [hx], params, has_biases, num_layers, bidirectional, batch_first, "Relu")  # type: ignore[return-value]
