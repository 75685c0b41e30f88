"""Recurrent layers: aten::lstm/gru to ONNX LSTM/GRU, one ONNX node per layer; aten::rnn_tanh/relu
and LSTM projections as the cell equations.

torch orders the gates of its weights (i, f, g, o) for LSTM and (r, z, n) for GRU; ONNX wants
(i, o, f, c) and (z, r, h). GRU's `linear_before_reset=1` is torch's formula for the new gate.

The cell equations (MatMul of every step's input at once, then per step MatMul/Add/Sigmoid/Tanh)
are computed, unrolled over a static sequence length and as a `Scan` over a dynamic one, where
onnxruntime has no kernel or a slow one:
- float64 (onnxruntime's LSTM/GRU/RNN kernels are float32 only; float16 and bfloat16 run the
  float32 kernel);
- LSTM with proj_size > 0 (ONNX's LSTM has no output projection);
- RNN_TANH/RNN_RELU: onnxruntime's RNN kernel takes 1.2-3.1x the time of the cell equations
  (as a Scan or unrolled) on 2 layers from 64 units at batch 4 to 512 units at batch 8, while its
  LSTM and GRU kernels take 0.26-0.98x theirs (bench/bench_rnn_forms.py, docs/performance.md).

The kernels abort the process on an empty batch or sequence: a static empty batch gives the
empty result without them (torch refuses an empty sequence, and so do we), and a dynamic one is
padded to one row that is sliced off again.

NaN: the kernels clamp the activations' inputs with min/max, which turns a NaN finite; torch's
hidden state is NaN from a NaN input step (or NaN initial hidden state) on. With exact_nan a mask
per step, batch row and direction puts those NaN back: once for a stack of one-direction layers
(inside an If taken when the input holds a NaN), per layer for bidirectional ones
(`_nan_as_torch`). Not covered: NaN in the weights or only in the LSTM cell state c0, and NaN
that torch creates from inf. The cell equations keep NaN as torch does (onnxruntime's
standalone Sigmoid, Tanh and Relu return NaN for NaN).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graph_builder import GraphBuilder, current_exact_nan, op, types
from graph_builder.evaluator import current_evaluator
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from torchlib.ops._helpers import n_outputs, one_output
from torchlib.promotion import cast_to
from torchlib.registry import aten_op, capture_kernel

_GATE_ORDER = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN": (0,)}
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# dtypes onnxruntime's LSTM/GRU/RNN kernels take, and where the others compute
_KERNEL_DTYPES = (types.FLOAT,)
# ONNX ops whose onnxruntime kernel is slower than the cell equations (bench/bench_rnn_forms.py)
_CELL_EQUATIONS_FASTER = frozenset({"RNN"})
_VIA_FLOAT = (types.BFLOAT16, types.FLOAT16)


def _reorder(w: Value, onnx_op: str) -> Value:
    order = _GATE_ORDER[onnx_op]
    if len(order) == 1:
        return w
    chunks = n_outputs(op.Split(w, axis=0, num_outputs=len(order)), len(order))
    return op.Concat(*(chunks[i] for i in order), axis=0)


def _recurrent(
    onnx_op: str,
    input: Value,
    hx: Sequence[Value],
    params: Sequence[Value],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
    activation: str | None = None,
) -> tuple[Any, ...]:
    name = f"aten::{onnx_op.lower()}"
    directions = 2 if bidirectional else 1
    per_direction = len(params) // (num_layers * directions)
    plain = 4 if has_biases else 2
    projected = onnx_op == "LSTM" and per_direction == plain + 1  # w_hr last: proj_size > 0
    if per_direction != plain and not projected:
        raise ValueError(
            f"{name}: expected {plain} weights per layer and direction"
            f"{' (one more with proj_size > 0)' if onnx_op == 'LSTM' else ''}, got {per_direction}"
        )
    if train and dropout > 0 and num_layers > 1:
        raise ValueError(f"{name} in training mode with dropout={dropout} between layers is not exported; export in eval mode")
    if input.rank != 3:
        raise ValueError(f"{name}: expected a 3-D input (batched), got rank {input.rank}")
    hidden = params[1].static_dim(0) // _GATES[onnx_op]  # w_hh: [gates * hidden, hidden or proj_size]
    features = params[per_direction - 1].static_dim(0) if projected else hidden  # w_hr: [proj_size, hidden]
    x = op.Transpose(input, perm=[1, 0, 2]) if batch_first else input  # [seq, batch, features]
    seq, batch = x.known_shape[0], x.known_shape[1]
    if seq == 0:
        raise ValueError(f"{name}: expected sequence length to be larger than 0 (torch raises too)")
    dtype = input.known_dtype
    if batch == 0:  # the kernels abort on an empty batch: the result is empty anyway
        return _empty_result(onnx_op, x, hx, num_layers * directions, directions * features, batch_first)
    pad = not isinstance(batch, int) or not isinstance(seq, int)
    if pad:  # a dynamic batch or sequence may be empty: give the kernel at least one row and step
        x, hx, batch_size = _pad_batch_and_seq(x, hx)
    if dtype in _VIA_FLOAT:
        x, hx, params = cast_to(x, types.FLOAT), [cast_to(h, types.FLOAT) for h in hx], [cast_to(p, types.FLOAT) for p in params]
    # the cell equations where onnxruntime has no kernel (float64, projections) or a slow one (RNN)
    kernel = x.dtype in _KERNEL_DTYPES and not projected and onnx_op not in _CELL_EQUATIONS_FASTER
    nan_mask = kernel and current_exact_nan()  # the kernels drop NaN: _nan_as_torch puts it back
    # one direction: a layer's output is NaN in the rows and steps where its input is (all of its
    # features), so every layer has the first layer's NaN steps, plus its own and the earlier
    # layers' NaN rows of h0; those steps are masked once, in the last output (a layer's output
    # at a step depends on earlier steps only, which are right where not masked)
    taint = _nan_steps(x, 1) if nan_mask and directions == 1 else None
    first_input, first_states = x, []
    last_h, last_c = [], []
    for index in range(num_layers):
        start, end = index * directions, (index + 1) * directions
        h0 = op.Slice(hx[0], [start], [end], [0])
        c0 = op.Slice(hx[1], [start], [end], [0]) if onnx_op == "LSTM" else None
        first = start * per_direction
        layer_params = params[first:first + directions * per_direction]
        layer_input = x
        if kernel:
            x, h_n, c_n = _onnx_layer(onnx_op, x, h0, c0, layer_params, has_biases, directions, hidden, activation)
        else:
            x, h_n, c_n = _composed_layer(onnx_op, x, h0, c0, layer_params, has_biases, directions, activation)
        if taint is not None:
            taint = _with_nan_rows(taint, h0)
            first_states.append(h0)
            h_n, c_n = _nan_states(taint[1], h_n, c_n)
        elif nan_mask:
            x, h_n, c_n = _nan_as_torch(layer_input, h0, x, h_n, c_n, directions, hidden)
        last_h.append(h_n)
        last_c.append(c_n)
    if taint is not None:
        x = _stack_output_with_nan(first_input, first_states, x)
    outputs = [x, op.Concat(*last_h, axis=0) if num_layers > 1 else last_h[0]]
    if onnx_op == "LSTM":
        cells = [c for c in last_c if c is not None]  # an LSTM layer gives its c_n
        outputs.append(op.Concat(*cells, axis=0) if num_layers > 1 else cells[0])
    if pad:
        outputs = [op.Slice(outputs[0], [0, 0], op.Concat(*(op.Reshape(s, [1]) for s in batch_size), axis=0), [0, 1])] + \
            [op.Slice(h, [0], op.Reshape(batch_size[1], [1]), [1]) for h in outputs[1:]]
    outputs = [cast_to(o, dtype) for o in outputs]
    if batch_first:
        outputs[0] = op.Transpose(outputs[0], perm=[1, 0, 2])
    return tuple(outputs)


def _empty_result(onnx_op: str, x: Value, hx: Sequence[Value], layers: int, features: int, batch_first: bool) -> tuple[Any, ...]:
    """The outputs for a batch of 0: output [seq, 0, directions * hidden], states like h0."""
    seq = op.Shape(x, start=0, end=1)
    shape = op.Concat(seq, np.array([0, features], np.int64), axis=0)
    output = op.Expand(op.CastLike(np.zeros((), np.float32), x), shape) if x.dtype is not types.BFLOAT16 else \
        cast_to(op.Expand(np.zeros((), np.float32), shape), x.dtype)
    if batch_first:
        output = op.Transpose(output, perm=[1, 0, 2])
    states = [op.Identity(h) for h in hx[: 2 if onnx_op == "LSTM" else 1]]
    return (output, *states)


def _pad_batch_and_seq(x: Value, hx: Sequence[Value]) -> tuple[Value, list[Value], list[Value]]:
    """x padded with zeros to at least one step and one batch row (hx to one row); returns the
    padded tensors and the true [seq, batch] sizes (INT64 scalars) to slice the results back to."""
    sizes = [op.Squeeze(op.Shape(x, start=i, end=i + 1), [0]) for i in (0, 1)]
    missing = [op.Max(op.Sub(np.array(1, np.int64), s), np.array(0, np.int64)) for s in sizes]
    zero = np.array([0], np.int64)
    x_pads = op.Concat(zero, zero, zero, op.Reshape(missing[0], [1]), op.Reshape(missing[1], [1]), zero, axis=0)
    h_pads = op.Concat(zero, zero, zero, zero, op.Reshape(missing[1], [1]), zero, axis=0)
    return op.Pad(x, x_pads), [op.Pad(h, h_pads) for h in hx], sizes


def _onnx_layer(
    onnx_op: str, x: Value, h0: Value, c0: Value | None, params: Sequence[Value], has_biases: bool,
    directions: int, hidden: int, activation: str | None,
) -> tuple[Value, Value, Value | None]:
    """One layer (both directions) as one ONNX LSTM/GRU/RNN node."""
    per_direction = len(params) // directions
    attrs: dict[str, Any] = {"hidden_size": hidden, "direction": "bidirectional" if directions == 2 else "forward"}
    if onnx_op == "GRU":
        attrs["linear_before_reset"] = 1
    if activation is not None:
        attrs["activations"] = [activation] * directions
    ws, rs, bs = [], [], []
    for d in range(directions):
        w_ih, w_hh = params[d * per_direction], params[d * per_direction + 1]
        ws.append(op.Unsqueeze(_reorder(w_ih, onnx_op), [0]))
        rs.append(op.Unsqueeze(_reorder(w_hh, onnx_op), [0]))
        if has_biases:
            b_ih, b_hh = params[d * per_direction + 2], params[d * per_direction + 3]
            bs.append(op.Unsqueeze(op.Concat(_reorder(b_ih, onnx_op), _reorder(b_hh, onnx_op), axis=0), [0]))
    w = op.Concat(*ws, axis=0)
    r = op.Concat(*rs, axis=0)
    b = op.Concat(*bs, axis=0) if has_biases else None
    c_n = None
    if onnx_op == "LSTM":
        y, h_n, c_n = n_outputs(op.LSTM(x, w, r, b, None, h0, c0, _outputs=3, **attrs), 3)
    else:
        y, h_n = getattr(op, onnx_op)(x, w, r, b, None, h0, _outputs=2, **attrs)
    # y: [seq, directions, batch, hidden] -> [seq, batch, directions * hidden]; one direction's
    # size-1 axis goes without the copy a Transpose makes
    if directions == 1:
        return op.Squeeze(y, np.array([1], np.int64)), h_n, c_n
    y = op.Transpose(y, perm=[0, 2, 1, 3])
    y = op.Reshape(y, op.Concat(op.Shape(y, start=0, end=2), np.array([directions * hidden], np.int64), axis=0))
    return y, h_n, c_n


def _nan_steps(x: Value, directions: int) -> tuple[Value, Value]:
    """Where torch's hidden state is NaN because of a NaN in x [seq, batch, features]: per step,
    batch row and direction [seq, batch, directions] (forward from the first NaN step on,
    backward up to the last one), and per row [batch, 1] (the final state). NaN there, finite
    and >= 0 elsewhere: the sums of Sigmoid(x) over the features (Sigmoid makes inf finite) and their
    running sums over time. Few nodes, as onnxruntime runs each of these small ones in about a
    microsecond (their count is the cost; IsNaN, Cast and ReduceMax would be one more)."""
    step = op.ReduceSum(op.Sigmoid(x), [2], keepdims=1)  # [seq, batch, 1]
    zero = np.array(0, np.int64)
    seen = [op.CumSum(step, zero, reverse=d) for d in range(directions)]  # forward, then backward
    return (op.Concat(*seen, axis=2) if directions == 2 else seen[0]), op.ReduceSum(step, [0], keepdims=0)


def _with_nan_rows(taint: tuple[Value, Value], h0: Value) -> tuple[Value, Value]:
    """taint with the rows where the initial hidden state h0 [directions, batch, hidden] holds a
    NaN (a NaN at every step of that direction); nothing when h0 is known to hold none (torch's
    zeros)."""
    if h0.const_value is not None and not np.isnan(h0.const_value).any():
        return taint
    start = op.Transpose(op.ReduceSum(op.Sigmoid(h0), [2], keepdims=0), perm=[1, 0])  # [batch, directions]
    return op.Add(taint[0], start), op.Add(taint[1], start)


def _plus_nan(y: Value, taint: Value) -> Value:
    """y + (-0.0 * taint): y where taint (>= 0, broadcast) is finite, exactly (x + -0.0 is x,
    signed zeros included), NaN where it is NaN; cheaper in onnxruntime than IsNaN and Where."""
    return op.Add(y, op.Mul(taint, op.CastLike(np.array(-0.0, np.float32), taint)))


def _stack_output_with_nan(x: Value, h0s: list[Value], y: Value) -> Value:
    """The last output y of a stack of one-direction layers with torch's NaN steps (those of
    the first input x [seq, batch, features], and the NaN rows of each layer's h0), computed
    only when x or an h0 holds a NaN: `If(IsNaN(ReduceSum(x) + ...))`, a pass over x and one
    node in place of five small ones (the 2-layer LSTM benchmark: 1.01x the reference's
    latency against 1.04x). A sum is NaN wherever a NaN is (and at times from inf - inf,
    which only takes the exact branch)."""

    def masked() -> Value:
        taint = _nan_steps(x, 1)
        for h0 in h0s:
            taint = _with_nan_rows(taint, h0)
        return _plus_nan(y, taint[0])

    builder = current_evaluator()
    if not isinstance(builder, GraphBuilder):  # eager: the values are known
        return masked()
    sums = [op.ReduceSum(v, keepdims=0) for v in [x, *h0s] if v is x or v.const_value is None or np.isnan(v.const_value).any()]
    total = sums[0]
    for other in sums[1:]:
        total = op.Add(total, other)
    then_branch, else_branch = builder.subgraph("with_nan"), builder.subgraph("without_nan")
    with then_branch:
        then_branch.output(masked())
    with else_branch:
        else_branch.output(op.Identity(y))
    return one_output(op.If(op.IsNaN(total), then_branch=then_branch, else_branch=else_branch))


def _nan_states(whole: Value, h_n: Value, c_n: Value | None) -> tuple[Value, Value | None]:
    """The final states [directions, batch, hidden] NaN in the rows where whole [batch, 1 or
    directions] is."""
    final = op.Unsqueeze(op.IsNaN(op.Transpose(whole, perm=[1, 0])), [-1])
    nan = op.CastLike(np.nan, h_n)
    return op.Where(final, nan, h_n), (op.Where(final, nan, c_n) if c_n is not None else None)


def _nan_as_torch(
    x: Value, h0: Value, y: Value, h_n: Value, c_n: Value | None, directions: int, hidden: int
) -> tuple[Value, Value, Value | None]:  # fmt: skip
    """A NaN in a step's input, or in the initial hidden state, makes torch's hidden state NaN
    from that step on (it enters every unit through the weight products). onnxruntime's kernels
    clamp the activations' inputs with min/max, which drop NaN (Relu, Sigmoid, Tanh of the LSTM
    and GRU gates): the NaN turns into a finite value. Put torch's NaN back in one layer, per
    batch row and direction. y: [seq, batch, directions * hidden]; h_n, c_n: [directions, batch,
    hidden]."""
    seen, whole = _with_nan_rows(_nan_steps(x, directions), h0)
    if directions == 2:  # one mask per direction's half of the features
        halves = op.Reshape(y, np.array([0, 0, 2, hidden], np.int64))
        y = op.Reshape(_plus_nan(halves, op.Unsqueeze(seen, [-1])), np.array([0, 0, -1], np.int64))
    else:
        y = _plus_nan(y, seen)
    h_n, c_n = _nan_states(whole, h_n, c_n)
    return y, h_n, c_n


def _cell(
    onnx_op: str, w_hh_t: Value, b_hh: Value | None, activation: str | None, w_hr_t: Value | None = None
) -> Callable[..., tuple[Value, Value | None]]:
    """torch's cell equations: (x_t W_ih^T + b_ih, h, c) -> (h', c'); an LSTM's h' projected by
    W_hr^T when given (proj_size > 0)."""

    def step(xw: Value, h: Value, c: Value | None) -> tuple[Value, Value | None]:
        hw = op.MatMul(h, w_hh_t)
        if b_hh is not None:
            hw = op.Add(hw, b_hh)
        if onnx_op == "LSTM":
            assert c is not None  # an LSTM cell carries c
            i, f, g, o = n_outputs(op.Split(op.Add(xw, hw), axis=-1, num_outputs=4), 4)
            c_new = op.Add(op.Mul(op.Sigmoid(f), c), op.Mul(op.Sigmoid(i), op.Tanh(g)))
            h_new = op.Mul(op.Sigmoid(o), op.Tanh(c_new))
            return (op.MatMul(h_new, w_hr_t) if w_hr_t is not None else h_new), c_new
        if onnx_op == "GRU":
            x_r, x_z, x_n = n_outputs(op.Split(xw, axis=-1, num_outputs=3), 3)
            h_r, h_z, h_n = n_outputs(op.Split(hw, axis=-1, num_outputs=3), 3)
            r = op.Sigmoid(op.Add(x_r, h_r))
            z = op.Sigmoid(op.Add(x_z, h_z))
            n = op.Tanh(op.Add(x_n, op.Mul(r, h_n)))
            return op.Add(n, op.Mul(z, op.Sub(h, n))), None  # (1 - z) * n + z * h
        pre = op.Add(xw, hw)
        return (op.Tanh(pre) if activation == "Tanh" else op.Relu(pre)), None

    return step


def _composed_layer(
    onnx_op: str, x: Value, h0: Value, c0: Value | None, params: Sequence[Value], has_biases: bool,
    directions: int, activation: str | None,
) -> tuple[Value, Value, Value | None]:
    """One layer from the cell equations (the module's docstring says where); an LSTM's
    projection is a fifth or third weight per direction, w_hr, last."""
    per_direction = len(params) // directions
    projected = per_direction == (5 if has_biases else 3)
    ys, hs, cs = [], [], []
    for d in range(directions):
        w_ih, w_hh = params[d * per_direction], params[d * per_direction + 1]
        xw = op.MatMul(x, op.Transpose(w_ih, perm=[1, 0]))  # [seq, batch, gates * hidden], every step at once
        b_hh = None
        if has_biases:
            xw = op.Add(xw, params[d * per_direction + 2])
            b_hh = params[d * per_direction + 3]
        w_hr_t = op.Transpose(params[(d + 1) * per_direction - 1], perm=[1, 0]) if projected else None
        step = _cell(onnx_op, op.Transpose(w_hh, perm=[1, 0]), b_hh, activation, w_hr_t)
        h = op.Squeeze(op.Slice(h0, [d], [d + 1], [0]), [0])
        c = op.Squeeze(op.Slice(c0, [d], [d + 1], [0]), [0]) if c0 is not None else None
        y, h, c = _run_steps(step, xw, h, c, reverse=d == 1)
        ys.append(y)
        hs.append(op.Unsqueeze(h, [0]))
        if c is not None:
            cs.append(op.Unsqueeze(c, [0]))
    y = op.Concat(*ys, axis=-1) if directions == 2 else ys[0]
    h_n = op.Concat(*hs, axis=0) if directions == 2 else hs[0]
    c_n = (op.Concat(*cs, axis=0) if directions == 2 else cs[0]) if cs else None
    return y, h_n, c_n


def _run_steps(step: Callable[..., tuple[Value, Value | None]], xw: Value, h: Value, c: Value | None,
               reverse: bool) -> tuple[Value, Value, Value | None]:
    """Apply step over the sequence (dim 0 of xw): unrolled when its length is static, else a
    Scan. Returns (every h stacked [seq, batch, hidden], last h, last c)."""
    seq = xw.shape[0] if xw.shape is not None else None
    if isinstance(seq, int):
        outputs: list[Value] = [None] * seq  # type: ignore[list-item]
        for t in (reversed(range(seq)) if reverse else range(seq)):
            h, c = step(op.Gather(xw, np.array(t, np.int64), axis=0), h, c)
            outputs[t] = op.Unsqueeze(h, [0])
        return op.Concat(*outputs, axis=0), h, c
    builder = current_evaluator()
    body = builder.subgraph("rnn_step")  # type: ignore[attr-defined]
    h_in = body.input("h", h.dtype, list(h.shape or [None, None]))
    c_in = body.input("c", c.dtype, list(c.shape or [None, None])) if c is not None else None
    x_in = body.input("x_t", xw.dtype, list((xw.shape or [None, None, None])[1:]))
    with body:
        h_out, c_out = step(x_in, h_in, c_in)
        body.output(op.Identity(h_out))
        if c_out is not None:
            body.output(op.Identity(c_out))
        body.output(op.Identity(h_out))
    states = [h] if c is None else [h, c]
    results = op.Scan(*states, xw, body=body, num_scan_inputs=1,
                      scan_input_directions=[int(reverse)], scan_output_directions=[int(reverse)])
    if c is None:
        h_last, ys = n_outputs(results, 2)
        return ys, h_last, None
    h_last, c_last, ys = n_outputs(results, 3)
    return ys, h_last, c_last


@capture_kernel("aten::lstm.input", "aten::gru.input", "aten::rnn_tanh.input", "aten::rnn_relu.input")
def rnn_outputs(input: Any, hx: Any, params: Any, has_biases: bool, num_layers: int, dropout: float, train: bool,
                bidirectional: bool, batch_first: bool) -> Any:
    """The outputs of torch's RNN ops on torch.export's fake tensors, without running the cell.
    torch's decomposition loops over the sequence in Python (`unbind(0)`), which fixes the
    sequence length; the functions above take any length (ONNX LSTM/GRU/RNN), so capture uses this
    instead: output (seq, batch, directions * hidden), transposed as torch returns it for
    batch_first, and final states shaped like the initial ones."""
    states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
    if input.dim() != 3 or any(h.dim() != 3 for h in states):
        return NotImplemented  # unbatched: torch's own kernel
    steps = input.transpose(0, 1) if batch_first else input
    output = steps.new_empty((steps.shape[0], steps.shape[1], (2 if bidirectional else 1) * states[0].shape[2]))
    return (output.transpose(0, 1) if batch_first else output, *(h.new_empty(h.shape) for h in states))


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
    return _recurrent("LSTM", input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


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
    return _recurrent("GRU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


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
    return _recurrent("RNN", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first, "Tanh")


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
    return _recurrent("RNN", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first, "Relu")
