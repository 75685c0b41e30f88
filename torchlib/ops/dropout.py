"""Dropout: the identity at inference (train=False), ONNX Dropout in training mode."""

from __future__ import annotations

from graph_builder import op
from graph_builder.type_constraints import TFloat
from graph_builder.types import BFLOAT16, BOOL, FLOAT
from torchlib.ops._helpers import n_outputs
from torchlib.ops._kernels import NUMERIC, full_of, run_supported
from torchlib.registry import aten_op


def training_dropout(input: TFloat, p: float) -> tuple[TFloat, TFloat]:
    """Dropout in training mode, as torch computes it: `input * mask * (1 / (1 - p))`, the mask
    (kept with probability 1 - p) from ONNX Dropout in training mode. The product is written
    out rather than taken from Dropout's own output: onnxruntime's graph optimizations remove a
    Dropout whose mask nothing reads, unless its output is a graph output (a dropout inside the
    model, attention weights, would silently vanish), and torch's product gives NaN for a
    dropped inf. p == 1 drops everything: torch returns input * 0 and an all-False mask, where
    onnxruntime refuses the ratio. bfloat16 draws its mask in float32 (onnxruntime has no
    bfloat16 Dropout kernel). onnxruntime's mask always keeps element 0 (torchlib/ops/random.py)."""
    if not input.known_dtype.is_floating:
        raise TypeError(f"dropout in training mode needs a floating-point input, got {input.dtype}")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 1:
        return run_supported(op.Mul, NUMERIC, input, 0), full_of(op.Shape(input), False, BOOL)
    x = op.Cast(input, to=FLOAT.onnx) if input.dtype is BFLOAT16 else input
    _, mask = n_outputs(op.Dropout(x, p, True, _outputs=2), 2)
    output = op.Mul(op.Mul(x, op.CastLike(mask, x)), op.CastLike(1 / (1 - p), x))
    return (op.Cast(output, to=BFLOAT16.onnx) if input.dtype is BFLOAT16 else output), mask


@aten_op("aten::dropout")
def aten_dropout(input: TFloat, p: float, train: bool) -> TFloat:
    """dropout(Tensor input, float p, bool train) -> Tensor"""
    if not train or p == 0:
        return input
    return training_dropout(input, p)[0]


@aten_op("aten::native_dropout")
def aten_native_dropout(input: TFloat, p: float, train: bool | None) -> tuple[TFloat, TFloat]:
    """native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)

    torch returns an input of no elements with a mask of the input's dtype (not bool)."""
    if input.is_static and 0 in input.shape:  # type: ignore[operator]
        return op.Identity(input), op.Identity(input)
    if train is False or p == 0:
        return input, op.Expand(True, op.Shape(input))
    return training_dropout(input, p)


@aten_op("aten::feature_dropout")
def aten_feature_dropout(input: TFloat, p: float, train: bool) -> TFloat:
    """feature_dropout(Tensor input, float p, bool train) -> Tensor"""
    if not train or p == 0:
        return input
    raise ValueError("aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode")


@aten_op("aten::alpha_dropout")
def aten_alpha_dropout(input: TFloat, p: float, train: bool) -> TFloat:
    """alpha_dropout(Tensor input, float p, bool train) -> Tensor"""
    if not train or p == 0:
        return input
    raise ValueError("aten::alpha_dropout in training mode is not exported; export in eval mode")


@aten_op("aten::feature_alpha_dropout")
def aten_feature_alpha_dropout(input: TFloat, p: float, train: bool) -> TFloat:
    """feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor"""
    if not train or p == 0:
        return input
    raise ValueError("aten::feature_alpha_dropout in training mode is not exported; export in eval mode")


