"""Reductions (axes as attribute before their opset switch, as input after) and ArgMax/ArgMin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from torchlib.importer._common import ints, static_input
from torchlib.importer.converter import Ctx
from torchlib.importer.registry import onnx_op


def _l1(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    return torch.sum(torch.abs(x), dim=dims, keepdim=keep)


def _l2(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    return torch.sqrt(torch.sum(x * x, dim=dims, keepdim=keep))


def _log_sum(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    return torch.log(torch.sum(x, dim=dims, keepdim=keep))


def _log_sum_exp(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    if x.numel() == 0:
        return torch.log(torch.sum(torch.exp(x), dim=dims, keepdim=keep))
    return torch.logsumexp(x, dim=dims, keepdim=keep)


def _sum_square(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    return torch.sum(x * x, dim=dims, keepdim=keep)


def _prod(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, dim=d, keepdim=keep) if keep else torch.prod(x, dim=d)
    return x


def _extreme(fn: Callable[..., Any], empty: float) -> Callable[..., torch.Tensor]:
    def run(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
        if x.numel() == 0:
            shape = [1 if d in dims else s for d, s in enumerate(x.shape)] if keep else \
                [s for d, s in enumerate(x.shape) if d not in dims]
            if x.dtype == torch.bool:
                return torch.full(shape, empty > 0, dtype=x.dtype)
            fill = empty if x.is_floating_point() else (torch.iinfo(x.dtype).min if empty < 0 else torch.iinfo(x.dtype).max)
            return torch.full(shape, fill, dtype=x.dtype)
        if x.dtype == torch.bool:
            y = fn(x.to(torch.uint8), dim=dims, keepdim=keep)
            return y.to(torch.bool)
        return fn(x, dim=dims, keepdim=keep)

    return run


def _mean(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    if not x.is_floating_point():
        return (torch.sum(x, dim=dims, keepdim=keep) // max(1, _count(x, dims))).to(x.dtype)
    return torch.mean(x, dim=dims, keepdim=keep)


def _count(x: torch.Tensor, dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


def _sum(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
    return torch.sum(x, dim=dims, keepdim=keep).to(x.dtype)


REDUCTIONS: dict[str, tuple[Callable[..., torch.Tensor], int]] = {
    "ReduceSum": (_sum, 13), "ReduceMean": (_mean, 18), "ReduceMax": (_extreme(torch.amax, float("-inf")), 18),
    "ReduceMin": (_extreme(torch.amin, float("inf")), 18), "ReduceProd": (_prod, 18), "ReduceL1": (_l1, 18),
    "ReduceL2": (_l2, 18), "ReduceLogSum": (_log_sum, 18), "ReduceLogSumExp": (_log_sum_exp, 18),
    "ReduceSumSquare": (_sum_square, 18),
}  # fmt: skip


def reduce(x: torch.Tensor, axes: torch.Tensor | tuple[int, ...] | None, *, op: str, keepdims: int,
           noop_with_empty_axes: int) -> torch.Tensor:
    """ONNX reduce semantics: no (or empty) axes means every axis, unless noop_with_empty_axes."""
    dims = ints(axes) if axes is not None else []
    if not dims:
        if noop_with_empty_axes:
            return x.clone()
        dims = list(range(x.dim()))
    norm = tuple(sorted({d + x.dim() if d < 0 else d for d in dims}))
    if x.dim() == 0:
        return REDUCTIONS[op][0](x.reshape(1), (0,), False).reshape(())
    return REDUCTIONS[op][0](x, norm, bool(keepdims))


def _register(op: str, switch: int) -> None:
    def with_input(ctx: Ctx, x: Any, axes: Any = None) -> Any:
        return ctx.call(reduce, x, static_input(ctx, 1, axes), op=op, keepdims=ctx.attr("keepdims", 1),
                        noop_with_empty_axes=ctx.attr("noop_with_empty_axes", 0))

    def with_attr(ctx: Ctx, x: Any) -> Any:
        axes = ctx.attr("axes")
        return ctx.call(reduce, x, tuple(axes) if axes is not None else None, op=op,
                        keepdims=ctx.attr("keepdims", 1), noop_with_empty_axes=0)

    onnx_op("", op, since=switch)(with_input)
    onnx_op("", op, since=1, until=switch)(with_attr)


for _op, (_fn, _switch) in REDUCTIONS.items():
    _register(_op, _switch)


def arg_extreme(x: torch.Tensor, *, largest: bool, axis: int, keepdims: int, select_last_index: int) -> torch.Tensor:
    if select_last_index:
        flipped = torch.flip(x, [axis])
        idx = torch.argmax(flipped, dim=axis, keepdim=bool(keepdims)) if largest else \
            torch.argmin(flipped, dim=axis, keepdim=bool(keepdims))
        return x.shape[axis] - 1 - idx
    return torch.argmax(x, dim=axis, keepdim=bool(keepdims)) if largest else torch.argmin(x, dim=axis, keepdim=bool(keepdims))


def _arg(op: str, largest: bool) -> None:
    def convert(ctx: Ctx, x: Any) -> Any:
        return ctx.call(arg_extreme, x, largest=largest, axis=ctx.attr("axis", 0), keepdims=ctx.attr("keepdims", 1),
                        select_last_index=ctx.attr("select_last_index", 0))

    onnx_op("", op)(convert)


_arg("ArgMax", True)
_arg("ArgMin", False)
