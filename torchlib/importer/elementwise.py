"""Elementwise arithmetic, math, comparison, logic, bitwise and casting ops."""

from __future__ import annotations

from typing import Any

import torch

from torchlib.importer._common import impl
from torchlib.importer.converter import ONNX_TO_TORCH, Ctx, OnnxImportError
from torchlib.importer.registry import onnx_op

WIDE_UNSIGNED = (torch.uint16, torch.uint32, torch.uint64)
COMPARISONS = (torch.eq, torch.lt, torch.gt, torch.le, torch.ge, torch.maximum, torch.minimum)


def on_wide_unsigned(op_type: str, *xs: torch.Tensor) -> torch.Tensor:
    """torch has few kernels for uint16/32/64: compute in int64 (the same bits modulo 2**64; for
    uint64 comparisons, the sign bit flipped keeps the order) and give back the input type."""
    target = DIRECT[op_type]
    dtype = xs[0].dtype
    if dtype not in WIDE_UNSIGNED:
        return target(*xs)
    if dtype == torch.uint64:
        wide = [x.view(torch.int64) for x in xs]
        if target in COMPARISONS:
            wide = [w ^ torch.iinfo(torch.int64).min for w in wide]
    else:
        wide = [x.to(torch.int64) for x in xs]
    out = target(*wide)
    if out.dtype == torch.bool:
        return out
    if dtype == torch.uint64 and target in COMPARISONS:
        out = out ^ torch.iinfo(torch.int64).min
    return out.view(torch.uint64) if dtype == torch.uint64 else out.to(dtype)


def _direct(op_type: str, target: Any, since: int = 1) -> None:
    def convert(ctx: Ctx, *inputs: Any) -> Any:
        if op_type in UNSIGNED_SAFE:
            types = ctx.builder.importer.types()
            name = ctx.node.input[0]
            elem = types[name].tensor_type.elem_type if name in types else None
            if elem is None or elem in (4, 12, 13):  # UINT16, UINT32, UINT64 (or unknown)
                return ctx.call(on_wide_unsigned, op_type, *inputs)
        return ctx.call(target, *inputs)

    convert.__qualname__ = f"convert_{op_type}"
    onnx_op("", op_type, since)(convert)


UNSIGNED_SAFE = {"Add", "Sub", "Mul", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "BitwiseAnd",
                 "BitwiseOr", "BitwiseXor", "BitwiseNot", "Neg", "Abs"}
DIRECT: dict[str, Any] = {
    "Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Neg": torch.neg, "Abs": torch.abs,
    "Exp": torch.exp, "Log": torch.log, "Sqrt": torch.sqrt, "Reciprocal": torch.reciprocal,
    "Floor": torch.floor, "Ceil": torch.ceil, "Round": torch.round, "Sign": torch.sign,
    "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan, "Asin": torch.asin, "Acos": torch.acos,
    "Atan": torch.atan, "Sinh": torch.sinh, "Cosh": torch.cosh, "Asinh": torch.asinh,
    "Acosh": torch.acosh, "Atanh": torch.atanh, "Erf": torch.erf, "IsNaN": torch.isnan,
    "Equal": torch.eq, "Less": torch.lt, "Greater": torch.gt, "LessOrEqual": torch.le,
    "GreaterOrEqual": torch.ge, "And": torch.logical_and, "Or": torch.logical_or,
    "Xor": torch.logical_xor, "Not": torch.logical_not, "BitwiseAnd": torch.bitwise_and,
    "BitwiseOr": torch.bitwise_or, "BitwiseXor": torch.bitwise_xor, "BitwiseNot": torch.bitwise_not,
    "Where": torch.where, "MatMul": torch.matmul, "Det": torch.linalg.det, "Max": torch.maximum,
    "Min": torch.minimum,
}  # fmt: skip
for _op, _target in DIRECT.items():
    if _op not in ("Max", "Min"):  # variadic: below
        _direct(_op, _target)


def _narrow_unsigned(fn: Any, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """uint16/uint32 through int64 (exact); torch has no kernel for them."""
    if a.dtype in (torch.uint16, torch.uint32):
        return fn(a.to(torch.int64), b.to(torch.int64)).to(a.dtype)
    return fn(a, b)


@impl("Div")
def div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """ONNX integer Div truncates toward zero (C++ style)."""
    if a.is_floating_point() or a.is_complex():
        return torch.div(a, b)
    return _narrow_unsigned(lambda x, y: torch.div(x, y, rounding_mode="trunc"), a, b)


@impl("Pow")
def pow_(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The result has the type of the base (b may be of another type)."""
    if not a.is_floating_point() and b.is_floating_point():
        return torch.pow(a.to(b.dtype), b).to(a.dtype)
    return torch.pow(a, b.to(a.dtype) if a.is_floating_point() else b).to(a.dtype)


@impl("Mod", fmod=0)
def mod(a: torch.Tensor, b: torch.Tensor, *, fmod: int) -> torch.Tensor:
    """fmod=1: the sign of the dividend (C fmod); fmod=0: the sign of the divisor (Python %)."""
    return _narrow_unsigned(torch.fmod if fmod else torch.remainder, a, b)


@impl("BitShift", direction="")
def bit_shift(a: torch.Tensor, b: torch.Tensor, *, direction: str) -> torch.Tensor:
    wide = a.dtype in (torch.uint16, torch.uint32, torch.uint64)
    x, s = (a.to(torch.int64), b.to(torch.int64)) if wide else (a, b)
    out = torch.bitwise_left_shift(x, s) if direction == "LEFT" else torch.bitwise_right_shift(x, s)
    if wide:
        bits = torch.iinfo(torch.int64).bits if a.dtype == torch.uint64 else 8 * a.element_size()
        out = out & ((1 << bits) - 1) if bits < 64 else out
    return out.to(a.dtype)


@impl("IsInf", detect_negative=1, detect_positive=1)
def is_inf(x: torch.Tensor, *, detect_negative: int, detect_positive: int) -> torch.Tensor:
    pos = torch.isposinf(x) if detect_positive else torch.zeros_like(x, dtype=torch.bool)
    neg = torch.isneginf(x) if detect_negative else torch.zeros_like(x, dtype=torch.bool)
    return pos | neg


def _variadic(op_type: str, fn: Any) -> None:
    @impl(op_type)
    def run(*xs: torch.Tensor) -> torch.Tensor:
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out if len(xs) > 1 else out.clone()

    run.__name__ = run.__qualname__ = op_type.lower()
    globals()[run.__name__] = run


_variadic("Max", lambda a, b: on_wide_unsigned("Max", a, b))
_variadic("Min", lambda a, b: on_wide_unsigned("Min", a, b))
_variadic("Sum", lambda a, b: on_wide_unsigned("Add", a, b))


@impl("Mean")
def mean(*xs: torch.Tensor) -> torch.Tensor:
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out / len(xs)


@impl("Clip", since=11)
def clip(x: torch.Tensor, lo: torch.Tensor | None = None, hi: torch.Tensor | None = None) -> torch.Tensor:
    if lo is not None:
        x = torch.maximum(x, lo.to(x.dtype))
    if hi is not None:
        x = torch.minimum(x, hi.to(x.dtype))
    return x


@impl("Clip", since=1, until=11, min=-3.4028234663852886e38, max=3.4028234663852886e38)
def clip_attr(x: torch.Tensor, *, min: float, max: float) -> torch.Tensor:
    return torch.clamp(x, min, max)


@onnx_op("", "Identity")
def identity(ctx: Ctx, x: Any) -> Any:
    return x


# float8 types: |x| from which round-to-nearest-even passes the largest finite value (the tie
# rounds to the even neighbour: 448 = 1.110b x 2^8 keeps 464, the others' maxima are odd)
_F8_OVERFLOW = {torch.float8_e4m3fn: (464.0, False), torch.float8_e4m3fnuz: (248.0, True),
                torch.float8_e5m2: (61440.0, True), torch.float8_e5m2fnuz: (61440.0, True)}  # fmt: skip


def _cast_float8(x: torch.Tensor, to: torch.dtype, saturate: int) -> torch.Tensor:
    """onnx's float8 Cast: saturating, values past the range (infinities too) become the largest
    finite value; otherwise they become inf (e5m2) or NaN (the types without inf)."""
    info = torch.finfo(to)
    if saturate:
        return torch.where(x.isnan(), x, x.clamp(info.min, info.max)).to(to)
    threshold, tie_overflows = _F8_OVERFLOW[to]
    size = x.abs().to(torch.float32)
    overflow = (size >= threshold) if tie_overflows else (size > threshold)
    special = torch.copysign(torch.full_like(x, float("inf")), x) if to == torch.float8_e5m2 \
        else torch.full_like(x, float("nan"))  # fmt: skip
    return torch.where(overflow, special, x.clamp(info.min, info.max)).to(to)


def _cast(x: torch.Tensor, to: torch.dtype, saturate: int = 1) -> torch.Tensor:
    if to in _F8_OVERFLOW and x.is_floating_point():
        return _cast_float8(x, to, saturate)
    if x.dtype == torch.bool or to == torch.bool:
        return x.to(to)
    if not to.is_floating_point and x.is_floating_point() and to.itemsize < 8:
        # float -> narrow int: like the reference (through int64 then wrap)
        return x.to(torch.int64).to(to)
    return x.to(to)


@onnx_op("", "Cast")
def cast(ctx: Ctx, x: Any) -> Any:
    to = ctx.attr("to")
    if to not in ONNX_TO_TORCH:
        raise ctx.error(f"casts to {onnx_type_name(to)}, which torch has no tensor type for")
    return ctx.call(_cast, x, ONNX_TO_TORCH[to], ctx.attr("saturate", 1))


def _cast_like(x: torch.Tensor, like: torch.Tensor, saturate: int = 1) -> torch.Tensor:
    return _cast(x, like.dtype, saturate)


@onnx_op("", "CastLike")
def cast_like(ctx: Ctx, x: Any, like: Any) -> Any:
    return ctx.call(_cast_like, x, like, ctx.attr("saturate", 1))


def onnx_type_name(t: int) -> str:
    try:
        return str(__import__("onnx").TensorProto.DataType.Name(t))
    except ValueError as e:
        raise OnnxImportError(f"unknown ONNX element type {t}") from e


@onnx_op("", "BitCast")
def bit_cast(ctx: Ctx, x: Any) -> Any:
    to = ctx.attr("to")
    if to not in ONNX_TO_TORCH:
        raise ctx.error(f"bit-casts to {onnx_type_name(to)}, which torch has no tensor type for")
    return ctx.call(_bit_cast, x, ONNX_TO_TORCH[to])


def _bit_cast(x: torch.Tensor, to: torch.dtype) -> torch.Tensor:
    if x.dtype == torch.bool or to == torch.bool:
        return x.view(torch.uint8).view(to) if x.dtype == torch.bool else (x.view(torch.uint8) != 0)
    if x.element_size() == to.itemsize:
        return x.view(to)
    return x.contiguous().view(to)


@impl("Dropout", multi=True, seed=0)
def dropout(x: torch.Tensor, ratio: torch.Tensor | None = None, training_mode: torch.Tensor | None = None, *,
            seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inference Dropout (training_mode absent or false, or ratio 0): the identity, mask all true."""
    if training_mode is not None and bool(training_mode.item()) and (ratio is None or float(ratio.item()) > 0):
        raise ValueError("Dropout in training mode is random: the importer does not reproduce it")
    return x.clone(), torch.ones_like(x, dtype=torch.bool)
