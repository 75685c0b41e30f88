"""Loss functions: mse, l1, smooth l1, huber, nll (1-d and 2-d), binary cross entropy (with and
without logits), kl_div, soft margin, margin ranking, hinge embedding; the chunked
linear_cross_entropy kernels of torch.nn (`torch.ops.torch_nn.*`).

`reduction` is torch's enum: 0 none, 1 mean, 2 sum. Losses are defined for floating tensors;
float16 and bfloat16 inputs compute in float32 (torch accumulates their reductions in float32
too) and the result is cast back.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from graph_builder.types import BFLOAT16, FLOAT, FLOAT16, INT64, DType
from torchlib.ops._helpers import first_rows
from torchlib.ops._kernels import OPMATH, like, run_supported
from torchlib.ops.elementwise import log1p
from torchlib.promotion import DEFAULT, DEFAULT_FLOAT, elementwise
from torchlib.registry import aten_op

try:  # torch >= 2.13: the module defines the torch.ops.torch_nn custom ops
    import torch.nn.modules.linear_cross_entropy  # noqa: F401
    HAS_LINEAR_CROSS_ENTROPY = True
except ModuleNotFoundError:  # older torch has no such ops: their functions are not registered
    HAS_LINEAR_CROSS_ENTROPY = False

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _floating(name: str, *xs: Value) -> None:
    for x in xs:
        if not x.known_dtype.is_floating:
            raise TypeError(f"aten::{name} is defined for floating tensors only (torch raises too), got {x.dtype}")


def _reduce(x: Value, reduction: int) -> Value:
    """torch's loss reduction over every element: 0 none, 1 mean, 2 sum."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    if reduction == 0:
        return x
    if reduction == 1:  # sum / count: NaN for an empty input, as torch (ReduceMean gives 0)
        return op.Div(op.ReduceSum(x, keepdims=0), op.Cast(op.Size(x), to=x.known_dtype.onnx))
    return op.ReduceSum(x, keepdims=0)


def _loss(name: str, body: Callable[..., Value], reduction: int, *xs: Value) -> Value:
    """body(*xs) elementwise in float32/float64, reduced, and cast back to the inputs' dtype.
    For float16/bfloat16 the elementwise loss is rounded to that dtype before the float32
    reduction, as torch does (its pointwise kernels write half tensors, its sums accumulate in
    float32)."""
    _floating(name, *xs)
    dtype = xs[0].known_dtype

    def compute(*ys: Value) -> Value:
        loss = body(*ys)
        if dtype not in OPMATH:
            loss = op.Cast(op.Cast(loss, to=dtype.onnx), to=loss.known_dtype.onnx)
        return _reduce(loss, reduction)

    return run_supported(compute, OPMATH, *xs)


@aten_op("aten::mse_loss")
@elementwise("self", "target", kind=DEFAULT)
def aten_mse_loss(self: TFloat, target: TFloat, reduction: int = 1) -> TFloat:
    """mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor"""
    return _loss("mse_loss", lambda x, y: op.Mul(op.Sub(x, y), op.Sub(x, y)), reduction, self, target)


@aten_op("aten::l1_loss")
@elementwise("self", "target", kind=DEFAULT)
def aten_l1_loss(self: TFloat, target: TFloat, reduction: int = 1) -> TFloat:
    """l1_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor"""
    return _loss("l1_loss", lambda x, y: op.Abs(op.Sub(x, y)), reduction, self, target)


@aten_op("aten::smooth_l1_loss")
@elementwise("self", "target", kind=DEFAULT)
def aten_smooth_l1_loss(self: TFloat, target: TFloat, reduction: int = 1, beta: float = 1.0) -> TFloat:
    """smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor"""

    def body(x: Value, y: Value) -> Value:
        z = op.Abs(op.Sub(x, y))
        if beta == 0.0:
            return z
        return op.Where(op.Less(z, beta), op.Div(op.Mul(op.Mul(z, z), 0.5), beta), op.Sub(z, 0.5 * beta))

    return _loss("smooth_l1_loss", body, reduction, self, target)


@aten_op("aten::huber_loss")
@elementwise("self", "target", kind=DEFAULT)
def aten_huber_loss(self: TFloat, target: TFloat, reduction: int = 1, delta: float = 1.0) -> TFloat:
    """huber_loss(Tensor self, Tensor target, int reduction=Mean, float delta=1.0) -> Tensor"""

    def body(x: Value, y: Value) -> Value:
        z = op.Abs(op.Sub(x, y))
        return op.Where(op.Less(z, delta), op.Mul(op.Mul(z, z), 0.5), op.Mul(op.Sub(z, 0.5 * delta), delta))

    return _loss("huber_loss", body, reduction, self, target)


def _nll(name: str, self: Value, target: Value, weight: Value | None, reduction: int, ignore_index: Any) -> tuple[Value, Value]:
    """-weight[t] * self[n, t, ...] along the class dim (1, or 0 for unbatched input), ignored
    targets contributing 0 to the loss and to total_weight."""
    _floating(name, self)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    if weight is not None and weight.dtype is not self.dtype:
        raise TypeError(f"aten::{name}: weight must have the dtype of self ({self.dtype}), got {weight.dtype}")
    class_dim = 0 if self.rank == 1 else 1
    target = op.Cast(target, to=INT64.onnx) if target.dtype is not INT64 else target
    ignored = op.Equal(target, op.Cast(ignore_index, to=INT64.onnx) if isinstance(ignore_index, Value) else ignore_index)
    safe = op.Where(ignored, op.Constant(value_int=0), target)

    def body(x: Value, *w: Value) -> tuple[Value, Value]:
        picked = op.Squeeze(op.GatherElements(x, op.Unsqueeze(safe, [class_dim]), axis=class_dim), [class_dim])
        w_t = op.Gather(w[0], safe, axis=0) if w else op.Expand(like(1, x), op.Shape(safe))
        w_t = op.Where(ignored, like(0, x), w_t)
        loss = op.Neg(op.Mul(picked, w_t))
        total = op.ReduceSum(w_t, keepdims=0)
        if reduction == 0:  # torch leaves total_weight at 0 without a reduction, unless unbatched
            return loss, total if class_dim == 0 else like(0.0, x)
        summed = op.ReduceSum(loss, keepdims=0)
        return (op.Div(summed, total) if reduction == 1 else summed), total

    args = (self,) if weight is None else (self, weight)
    if self.dtype in OPMATH:
        return body(*args)
    wide = body(*(op.Cast(a, to=FLOAT.onnx) for a in args))
    return op.Cast(wide[0], to=self.known_dtype.onnx), op.Cast(wide[1], to=self.known_dtype.onnx)


@aten_op("aten::nll_loss_forward")
def aten_nll_loss_forward(self: TFloat, target: TInt, weight: TFloat | None, reduction: int, ignore_index: int) -> tuple[TFloat, TFloat]:
    """nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)"""
    return _nll("nll_loss_forward", self, target, weight, reduction, ignore_index)


@aten_op("aten::nll_loss2d_forward")
def aten_nll_loss2d_forward(self: TFloat, target: TInt, weight: TFloat | None, reduction: int, ignore_index: int) -> tuple[TFloat, TFloat]:
    """nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> (Tensor output, Tensor total_weight)"""
    if self.rank != 4:
        raise ValueError(f"aten::nll_loss2d_forward expects a 4-D input (N, C, H, W), got rank {self.rank}")
    return _nll("nll_loss2d_forward", self, target, weight, reduction, ignore_index)


@aten_op("aten::binary_cross_entropy")
def aten_binary_cross_entropy(self: TFloat, target: TFloat, weight: TFloat | None = None, reduction: int = 1) -> TFloat:
    """binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor"""

    def body(x: Value, t: Value, *w: Value) -> Value:
        log_x = op.Max(op.Log(x), like(-100.0, x))  # torch clamps the logs at -100
        log_1mx = op.Max(op.Log(op.Sub(like(1.0, x), x)), like(-100.0, x))
        loss = op.Neg(op.Add(op.Mul(t, log_x), op.Mul(op.Sub(like(1.0, t), t), log_1mx)))
        return op.Mul(loss, w[0]) if w else loss

    args = (self, target) if weight is None else (self, target, weight)
    return _loss("binary_cross_entropy", body, reduction, *args)


def _softplus_neg(x: Value) -> Value:
    """log(1 + exp(-x)), stable for every x: max(-x, 0) + log1p(exp(-|x|))."""
    return op.Add(op.Max(op.Neg(x), like(0.0, x)), log1p(op.Exp(op.Neg(op.Abs(x)))))


@aten_op("aten::binary_cross_entropy_with_logits")
def aten_binary_cross_entropy_with_logits(
    self: TFloat, target: TFloat, weight: TFloat | None = None, pos_weight: TFloat | None = None, reduction: int = 1,
) -> TFloat:  # fmt: skip
    """binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=Mean) -> Tensor"""
    optional = [v for v in (weight, pos_weight) if v is not None]

    def body(x: Value, t: Value, *rest: Value) -> Value:
        w = rest[0] if weight is not None else None
        pw = rest[-1] if pos_weight is not None else None
        one = like(1.0, x)
        softplus = _softplus_neg(x)
        if pw is not None:
            softplus = op.Mul(softplus, op.Add(one, op.Mul(op.Sub(pw, one), t)))
        loss = op.Add(op.Mul(op.Sub(one, t), x), softplus)
        return op.Mul(loss, w) if w is not None else loss

    return _loss("binary_cross_entropy_with_logits", body, reduction, self, target, *optional)


@aten_op("aten::kl_div")
@elementwise("self", "target", kind=DEFAULT)
def aten_kl_div(self: TFloat, target: TFloat, reduction: int = 1, *, log_target: bool = False) -> TFloat:
    """kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) -> Tensor"""

    def body(x: Value, t: Value) -> Value:
        if log_target:
            return op.Mul(op.Exp(t), op.Sub(t, x))
        zero = like(0.0, t)
        xlogy = op.Where(op.Equal(t, zero), zero, op.Mul(t, op.Log(t)))  # torch's xlogy: 0 where t == 0
        return op.Sub(xlogy, op.Mul(t, x))

    return _loss("kl_div", body, reduction, self, target)


@aten_op("aten::soft_margin_loss")
@elementwise("self", "target", kind=DEFAULT)
def aten_soft_margin_loss(self: TFloat, target: TFloat, reduction: int = 1) -> TFloat:
    """soft_margin_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor"""
    return _loss("soft_margin_loss", lambda x, t: log1p(op.Exp(op.Neg(op.Mul(t, x)))), reduction, self, target)


@aten_op("aten::margin_ranking_loss")
@elementwise("input1", "input2", "target", kind=DEFAULT)
def aten_margin_ranking_loss(input1: TFloat, input2: TFloat, target: TFloat, margin: float = 0.0, reduction: int = 1) -> TFloat:
    """margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, int reduction=Mean) -> Tensor"""

    def body(a: Value, b: Value, t: Value) -> Value:
        return op.Max(op.Add(op.Neg(op.Mul(t, op.Sub(a, b))), like(margin, a)), like(0.0, a))

    if not input1.known_dtype.is_floating:  # the float margin makes torch's result the default float dtype
        input1, input2, target = (op.Cast(v, to=DEFAULT_FLOAT.onnx) for v in (input1, input2, target))
    return _loss("margin_ranking_loss", body, reduction, input1, input2, target)


@aten_op("aten::hinge_embedding_loss")
@elementwise("self", "target", kind=DEFAULT)
def aten_hinge_embedding_loss(self: TFloat, target: TFloat, margin: float = 1.0, reduction: int = 1) -> TFloat:
    """hinge_embedding_loss(Tensor self, Tensor target, float margin=1.0, int reduction=Mean) -> Tensor"""
    _floating("hinge_embedding_loss", self)  # (torch truncates the margin for integer inputs)
    rounded = float(np.asarray(margin, dtype=self.known_dtype.numpy))  # torch casts the scalar to self's dtype

    def body(x: Value, t: Value) -> Value:
        zero = like(0.0, x)
        margin_part = op.Where(op.Equal(t, like(1.0, t)), zero, op.Max(op.Sub(like(rounded, x), x), zero))
        self_part = op.Where(op.Equal(t, like(-1.0, t)), zero, x)
        return op.Add(margin_part, self_part)

    return _loss("hinge_embedding_loss", body, reduction, self, target)


# -- linear_cross_entropy (the chunked custom ops of torch.nn.functional.linear_cross_entropy) ----
def _torch_nn_op(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """aten_op(name) where the installed torch has torch.nn's linear_cross_entropy ops (2.13 on);
    before that the function stays unregistered: no graph can contain its op."""
    return aten_op(name) if HAS_LINEAR_CROSS_ENTROPY else (lambda fn: fn)


_LCE_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _lce_check(name: str, input: Value, linear_weight: Value, target: Value, label_smoothing: float, acc_dtype: DType) -> None:
    """The arguments torch's chunked kernel accepts (torch/nn/modules/linear_cross_entropy.py)."""
    where = f"torch_nn::{name}"
    if input.rank != 2 or linear_weight.rank != 2:
        raise ValueError(f"{where} expects a 2-D input (N, F) and linear_weight (C, F), got ranks {input.rank} and {linear_weight.rank}")
    if target.dtype is not INT64:
        raise TypeError(f"{where}: target dtype must be int64 (torch raises too), got {target.dtype}")
    if label_smoothing != 0.0:
        raise ValueError(f"{where}: torch's chunked kernel does not support label smoothing (it raises NotImplementedError), got {label_smoothing}; use label_smoothing=0 or the unchunked cross_entropy")
    dtype = input.dtype
    if dtype is not acc_dtype and not (dtype in (FLOAT16, BFLOAT16) and acc_dtype is FLOAT):
        raise ValueError(f"{where}: acc_dtype {acc_dtype} is not float32 with a float16/bfloat16 input nor the input's dtype {dtype} (torch raises too)")


def _lce_rows(name: str, input: Value, target: Value) -> Value:
    """target's first N rows for the input's N: torch's chunk loop reads target.narrow(0, start,
    size) over the input's rows only, so extra target rows are not read (they still count in
    the "mean" denominator) and too few make narrow raise (as here, or in onnxruntime when the
    sizes are dynamic)."""
    if target.rank != 1:
        raise ValueError(f"torch_nn::{name} expects a 1-D target, got rank {target.rank}")
    return first_rows(target, input, f"torch_nn::{name}: target has {{have}} rows for an input of {{need}} rows; torch raises "
                                     "too (its chunk loop narrows target to the input's rows)")


def _lce_row_weights(target: Value, cw: Value | None, ignore_index: Any, like_value: Value) -> tuple[Value, Value]:
    """(target with ignored rows set to class 0, each row's class weight: weight[target[n]], 1
    without weights, 0 for an ignored row)."""
    ignored = op.Equal(target, op.Cast(ignore_index, to=INT64.onnx) if isinstance(ignore_index, Value) else ignore_index)
    safe = op.Where(ignored, op.Constant(value_int=0), target)
    w_t = op.Gather(cw, safe, axis=0) if cw is not None else op.Expand(like(1, like_value), op.Shape(safe))
    return safe, op.Where(ignored, like(0, like_value), w_t)


def _lce_logits(input: Value, linear_weight: Value, linear_bias: Value | None, acc_dtype: DType) -> tuple[Value, Value, Value]:
    """input and linear_weight in the accumulation dtype, and the logits input @ linear_weight.T (+ bias)."""
    x = op.Cast(input, to=acc_dtype.onnx)
    w = op.Cast(linear_weight, to=acc_dtype.onnx)
    logits = op.MatMul(x, op.Transpose(w, perm=[1, 0]))
    if linear_bias is not None:
        logits = op.Add(logits, op.Cast(linear_bias, to=acc_dtype.onnx))
    return x, w, logits


def _lce_empties(input: Value) -> list[Value]:
    """The rank-matching empty tensors torch returns for the gradients it was not asked for:
    (0, 0), (0, 0) and (0,) in the input's dtype. Sliced from the input rather than constants,
    which the builder would fold into one value (and one graph output) when they are equal."""
    empty = op.Slice(input, [0, 0], [0, 0])
    return [empty, op.Identity(empty), op.Reshape(empty, [0], allowzero=1)]


@_torch_nn_op("torch_nn::_linear_cross_entropy_batch_chunked")
def torch_nn__linear_cross_entropy_batch_chunked(
    input: TFloat,
    linear_weight: TFloat,
    target: TInt,
    linear_bias: TFloat | None,
    weight: TFloat | None,
    reduction: str,
    ignore_index: int,
    label_smoothing: float,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: DType,
    allow_retain_graph: bool,
    compute_input_grad: bool,
    compute_linear_weight_grad: bool,
    compute_linear_bias_grad: bool,
) -> tuple[TFloat, TFloat, TFloat, TFloat]:
    """_linear_cross_entropy_batch_chunked(Tensor input, Tensor linear_weight, Tensor target, Tensor? linear_bias, Tensor? weight, str reduction, SymInt ignore_index, float label_smoothing, SymInt batch_chunk_size, str acc_policy, ScalarType acc_dtype, bool allow_retain_graph, bool compute_input_grad, bool compute_linear_weight_grad, bool compute_linear_bias_grad) -> (Tensor, Tensor, Tensor, Tensor)

    The scalar (mean or sum) cross entropy of the logits input @ linear_weight.T + linear_bias,
    and the gradients of that loss that torch computes in the same pass: with G the (N, C)
    gradient of the loss with respect to the logits, c[n] = weight[target[n]] (0 for an ignored
    row) divided by the total weight for "mean", G = c * (softmax(logits) - onehot(target)),
    grad_input = G @ linear_weight, grad_linear_weight = G.T @ input, grad_linear_bias = G summed
    over the batch. A gradient not asked for is the empty tensor torch returns ((0, 0), (0, 0),
    (0,)). Everything is computed in acc_dtype (torch's accumulation dtype; the chunking only
    bounds torch's memory) and returned in the input's dtype. A mean over no weight is NaN, the
    loss and the gradients, as in torch. As torch, target may have more rows than the input's
    N: only its first N are read, but the "mean" divides by the weight of every target row, and
    a mean over no input rows is NaN."""
    _lce_check("_linear_cross_entropy_batch_chunked", input, linear_weight, target, label_smoothing, acc_dtype)
    if reduction not in ("mean", "sum"):
        raise ValueError(f"torch_nn::_linear_cross_entropy_batch_chunked: reduction must be 'mean' or 'sum' (torch raises too), got {reduction!r}")
    dtype = input.known_dtype
    x, w, logits = _lce_logits(input, linear_weight, linear_bias, acc_dtype)
    cw = op.Cast(weight, to=acc_dtype.onnx) if weight is not None else None
    rows = _lce_rows("_linear_cross_entropy_batch_chunked", input, target)
    loss, _ = _nll("_linear_cross_entropy_batch_chunked", op.LogSoftmax(logits, axis=1), rows, cw, _LCE_REDUCTIONS["sum"], ignore_index)
    if reduction == "mean":  # over every target row's weight, as torch's neg_weight_target
        total = op.ReduceSum(_lce_row_weights(target, cw, ignore_index, logits)[1], keepdims=0)
        loss = op.Div(loss, total)
        if not (isinstance(input.known_shape[0], int) and input.known_shape[0] > 0):
            no_rows = op.Equal(op.Shape(input, start=0, end=1), np.array([0], np.int64))
            loss = op.Where(op.Squeeze(no_rows, [0]), like(math.nan, loss), loss)  # torch: NaN for no input rows
    grads = _lce_empties(input)
    if compute_input_grad or compute_linear_weight_grad or compute_linear_bias_grad:
        safe, c = _lce_row_weights(rows, cw, ignore_index, logits)
        if reduction == "mean":
            c = op.Div(c, total)
        classes = op.Range(op.Constant(value_int=0), op.Gather(op.Shape(logits), op.Constant(value_int=1), axis=0), op.Constant(value_int=1))
        onehot = op.Cast(op.Equal(op.Unsqueeze(safe, [1]), classes), to=acc_dtype.onnx)
        g = op.Mul(op.Sub(op.Softmax(logits, axis=1), onehot), op.Unsqueeze(c, [1]))
        if compute_input_grad:
            grads[0] = op.Cast(op.MatMul(g, w), to=dtype.onnx)
        if compute_linear_weight_grad:
            grads[1] = op.Cast(op.MatMul(op.Transpose(g, perm=[1, 0]), x), to=dtype.onnx)
        if compute_linear_bias_grad:
            grads[2] = op.Cast(op.ReduceSum(g, [0], keepdims=0), to=dtype.onnx)
    return op.Cast(loss, to=dtype.onnx), grads[0], grads[1], grads[2]


@_torch_nn_op("torch_nn::_linear_cross_entropy_batch_chunked_no_reduction")
def torch_nn__linear_cross_entropy_batch_chunked_no_reduction(
    input: TFloat,
    linear_weight: TFloat,
    target: TInt,
    linear_bias: TFloat | None,
    weight: TFloat | None,
    ignore_index: int,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: DType,
) -> TFloat:
    """_linear_cross_entropy_batch_chunked_no_reduction(Tensor input, Tensor linear_weight, Tensor target, Tensor? linear_bias, Tensor? weight, SymInt ignore_index, SymInt batch_chunk_size, str acc_policy, ScalarType acc_dtype) -> Tensor

    The per-sample (N,) cross entropy -weight[target[n]] * log_softmax(logits)[n, target[n]] of
    the logits input @ linear_weight.T + linear_bias (0 for an ignored row), computed in acc_dtype
    and returned in the input's dtype. Target rows past the input's N are not read (as torch)."""
    _lce_check("_linear_cross_entropy_batch_chunked_no_reduction", input, linear_weight, target, 0.0, acc_dtype)
    _, _, logits = _lce_logits(input, linear_weight, linear_bias, acc_dtype)
    cw = op.Cast(weight, to=acc_dtype.onnx) if weight is not None else None
    rows = _lce_rows("_linear_cross_entropy_batch_chunked_no_reduction", input, target)
    loss, _ = _nll("_linear_cross_entropy_batch_chunked_no_reduction", op.LogSoftmax(logits, axis=1), rows, cw, 0, ignore_index)
    return op.Cast(loss, to=input.known_dtype.onnx)
