"""Shape and layout ops: Constant, Shape, Reshape, Transpose, Squeeze/Unsqueeze, Concat, Split,
Slice, Pad, Expand, Tile, Range, ConstantOfShape, ..."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from torchlib.importer._common import axis as norm_axis
from torchlib.importer._common import impl, ints, static_input
from torchlib.importer.converter import Ctx, to_tensor, torch_dtype
from torchlib.importer.registry import onnx_op


@onnx_op("", "Constant")
def constant(ctx: Ctx) -> Any:
    name = next(iter(ctx.attrs), None)
    if name == "value":
        tensor = to_tensor(ctx.attr("value"), ctx.builder.importer.base_dir, ctx.where)
    elif name in ("value_float", "value_int"):
        tensor = torch.tensor(ctx.attr(name), dtype=torch.float32 if name == "value_float" else torch.int64)
    elif name in ("value_floats", "value_ints"):
        tensor = torch.tensor(list(ctx.attr(name)), dtype=torch.float32 if name == "value_floats" else torch.int64)
    else:
        raise ctx.error(f"a Constant with attribute {name!r} (strings, sparse tensors) has no torch tensor")
    node = ctx.builder.add_tensor(ctx.node.output[0] or ctx.node.name, tensor, trainable=False)
    ctx.created.append(node)
    if tensor.numel() <= 1024 and not tensor.is_floating_point():
        ctx.builder.consts[ctx.node.output[0]] = tensor.numpy()
    return node


@impl("Shape", start=0, end=None)
def shape(x: torch.Tensor, *, start: int, end: int | None) -> torch.Tensor:
    dims = list(x.shape)[start:end]
    return torch.tensor(dims, dtype=torch.int64)


@impl("Size")
def size(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor(x.numel(), dtype=torch.int64)


@impl("Reshape", since=5, static=(1,), allowzero=0)
def reshape(x: torch.Tensor, target: torch.Tensor, *, allowzero: int) -> torch.Tensor:
    dims = ints(target)
    if not allowzero:
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    return torch.reshape(x, dims)


@impl("Transpose", perm=None)
def transpose(x: torch.Tensor, *, perm: tuple[int, ...] | None) -> torch.Tensor:
    return x.permute(perm if perm is not None else tuple(reversed(range(x.dim()))))


def _squeeze(x: torch.Tensor, axes: list[int] | None) -> torch.Tensor:
    if axes is None:
        return torch.squeeze(x)
    return torch.squeeze(x, tuple(norm_axis(a, x.dim()) for a in axes)) if axes else x


@impl("Squeeze", since=13, static=(1,))
def squeeze(x: torch.Tensor, axes: torch.Tensor | tuple[int, ...] | None = None) -> torch.Tensor:
    return _squeeze(x, None if axes is None else ints(axes))


@impl("Squeeze", since=1, until=13, axes=None)
def squeeze_attr(x: torch.Tensor, *, axes: tuple[int, ...] | None) -> torch.Tensor:
    return _squeeze(x, None if axes is None else list(axes))


def _unsqueeze(x: torch.Tensor, axes: list[int]) -> torch.Tensor:
    rank = x.dim() + len(axes)
    for a in sorted(norm_axis(a, rank) for a in axes):
        x = torch.unsqueeze(x, a)
    return x


@impl("Unsqueeze", since=13, static=(1,))
def unsqueeze(x: torch.Tensor, axes: torch.Tensor | tuple[int, ...]) -> torch.Tensor:
    return _unsqueeze(x, ints(axes))


@impl("Unsqueeze", since=1, until=13, axes=())
def unsqueeze_attr(x: torch.Tensor, *, axes: tuple[int, ...]) -> torch.Tensor:
    return _unsqueeze(x, list(axes))


@impl("Flatten", axis=1)
def flatten(x: torch.Tensor, *, axis: int) -> torch.Tensor:
    axis = norm_axis(axis, x.dim())
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


@impl("Concat", axis=0)
def concat(*xs: torch.Tensor, axis: int) -> torch.Tensor:
    return torch.cat(xs, dim=axis)


def _split(x: torch.Tensor, sizes: list[int] | None, axis: int, count: int) -> tuple[torch.Tensor, ...]:
    if not sizes:
        length = x.shape[axis]
        chunk = -(-length // count)
        sizes = [torch.sym_min(chunk, length - i * chunk) for i in range(count)]
    return tuple(torch.split(x, sizes, dim=axis))


@onnx_op("", "Split", since=13)
def split(ctx: Ctx, x: Any, sizes: Any = None) -> Any:
    count = len(ctx.node.output)
    return ctx.call_multi(_split_input, count, x, static_input(ctx, 1, sizes), ctx.attr("axis", 0), count)


def _split_input(x: torch.Tensor, sizes: torch.Tensor | tuple[int, ...] | None, axis: int, count: int) -> tuple[torch.Tensor, ...]:
    return _split(x, ints(sizes) if sizes is not None else None, axis, count)


@onnx_op("", "Split", since=1, until=13)
def split_attr(ctx: Ctx, x: Any, sizes: Any = None) -> Any:
    count = len(ctx.node.output)
    if sizes is not None:
        return ctx.call_multi(_split_input, count, x, sizes, ctx.attr("axis", 0), count)
    return ctx.call_multi(_split, count, x, list(ctx.attr("split", [])) or None, ctx.attr("axis", 0), count)


@impl("Expand", since=8, static=(1,))
def expand(x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    out = torch.broadcast_shapes(tuple(x.shape), tuple(ints(target)))
    return x.expand(out).clone()


@impl("Tile", static=(1,))
def tile(x: torch.Tensor, repeats: torch.Tensor) -> torch.Tensor:
    return x.repeat(*ints(repeats)) if x.dim() else x.clone()


def _scalar(value: torch.Tensor | tuple[int, ...] | Any) -> Any:
    """Range's start / limit / delta: a tensor's value, or the int (SymInt under torch.export) of
    an integer constant or a shape value, so that a range over a dynamic dim stays symbolic."""
    if isinstance(value, torch.Tensor):
        return value.reshape(()).item()
    return value[0] if isinstance(value, (tuple, list)) else value


def range_(start: Any, limit: Any, delta: Any, dtype: torch.dtype) -> torch.Tensor:
    # torch.sym_max, not max, on what may be a SymInt: torch.export's non-strict mode replaces
    # builtins.max, and inside a torch.cond branch that replacement gave the minimum (torch 2.13)
    first, last, step = _scalar(start), _scalar(limit), _scalar(delta)
    if dtype.is_floating_point:
        count = torch.sym_max(math.ceil((last - first) / step), 0)
    else:  # integer ceil division (no float round trip, and traceable on SymInts)
        count = torch.sym_max(-(-(last - first) // step), 0)
    return (first + torch.arange(count, dtype=dtype) * step).to(dtype)


@onnx_op("", "Range")
def range_op(ctx: Ctx, start: Any, limit: Any, delta: Any) -> Any:
    """Integer constants and shape values come as ints (SymInts under torch.export); the output's
    element type is the inputs' (all three share it), read here from a constant or a typed input."""
    dtype = next((torch.from_numpy(c).dtype for c in map(ctx.const, range(3)) if c is not None), None)
    if dtype is None:
        kinds = ctx.builder.importer.types()
        known = [kinds[n].tensor_type.elem_type for n in ctx.node.input if n in kinds]
        dtype = torch_dtype(known[0], ctx.where) if known else torch.int64
    return ctx.call(range_, *(static_input(ctx, i, x) for i, x in enumerate((start, limit, delta))), dtype=dtype)


def _constant_of_shape(target: torch.Tensor | tuple[int, ...], fill: float | int | bool, dtype: torch.dtype) -> torch.Tensor:
    return torch.full(ints(target), fill, dtype=dtype)


@onnx_op("", "ConstantOfShape")
def constant_of_shape(ctx: Ctx, target: Any) -> Any:
    value = ctx.attr("value")
    if value is None:
        return ctx.call(_constant_of_shape, static_input(ctx, 0, target), 0.0, torch.float32)
    fill = to_tensor(value, None, ctx.where).reshape(())
    return ctx.call(_constant_of_shape, static_input(ctx, 0, target), fill.item(), fill.dtype)


def _slice(x: torch.Tensor, starts: list[int], ends: list[int], axes: list[int] | None,
           steps: list[int] | None) -> torch.Tensor:
    axes = [norm_axis(a, x.dim()) for a in axes] if axes else list(range(len(starts)))
    steps = steps or [1] * len(starts)
    flips = []
    index: list[slice] = [slice(None)] * x.dim()
    for a, s, e, st in zip(axes, starts, ends, steps):
        n = x.shape[a]
        if st > 0:  # torch's slicing clamps to the length itself: no comparison with a dynamic n
            s = torch.sym_max(s + n, 0) if s < 0 else s
            e = torch.sym_max(e + n, 0) if e < 0 else e
            index[a] = slice(s, e, st)
        else:
            s = s + n if s < 0 else s
            e = e + n if e < 0 else e
            s, e = torch.sym_min(torch.sym_max(s, -1), n - 1), torch.sym_min(torch.sym_max(e, -1), n - 1)
            # walk backward: flip the axis and slice forward
            count = torch.sym_max(0, -(-(s - e) // -st))
            lo = n - 1 - s
            index[a] = slice(lo, lo + (count - 1) * -st + 1 if count else lo, -st)
            flips.append(a)
    if flips:
        x = torch.flip(x, flips)
    return x[tuple(index)].clone()


@impl("Slice", since=10, static=(1, 2, 3, 4))
def slice_(x: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, axes: torch.Tensor | None = None,
           steps: torch.Tensor | None = None) -> torch.Tensor:
    return _slice(x, ints(starts), ints(ends), ints(axes) if axes is not None else None,
                  ints(steps) if steps is not None else None)


@impl("Slice", since=1, until=10, starts=(), ends=(), axes=None)
def slice_attr(x: torch.Tensor, *, starts: tuple[int, ...], ends: tuple[int, ...],
               axes: tuple[int, ...] | None) -> torch.Tensor:
    return _slice(x, list(starts), list(ends), list(axes) if axes else None, None)


def _pad(x: torch.Tensor, pads: list[int], mode: str, value: Any, axes: list[int] | None) -> torch.Tensor:
    rank = x.dim()
    axes = [norm_axis(a, rank) for a in axes] if axes else list(range(rank))
    n = len(axes)
    begin, end = dict(zip(axes, pads[:n])), dict(zip(axes, pads[n:]))
    # negative pads crop first
    index = [slice(max(-begin.get(a, 0), 0), x.shape[a] - max(-end.get(a, 0), 0)) for a in range(rank)]
    x = x[tuple(index)]
    flat: list[int] = []
    for a in reversed(range(rank)):
        flat += [max(begin.get(a, 0), 0), max(end.get(a, 0), 0)]
    if mode == "constant":
        fill = value.item() if isinstance(value, torch.Tensor) else (value or 0)
        if x.dtype == torch.bool or not x.is_floating_point():
            return F.pad(x.to(torch.float64) if x.dtype != torch.int64 else x, flat, value=fill).to(x.dtype)
        return F.pad(x, flat, value=fill)
    if mode == "wrap":
        for a in range(rank):
            b, e = max(begin.get(a, 0), 0), max(end.get(a, 0), 0)
            if b or e:
                n_a = x.shape[a]
                idx = torch.arange(-b, n_a + e) % n_a
                x = torch.index_select(x, a, idx)
        return x
    # reflect / edge: index arithmetic on each axis (works for any rank and dtype)
    for a in range(rank):
        b, e = max(begin.get(a, 0), 0), max(end.get(a, 0), 0)
        if b or e:
            n_a = x.shape[a]
            idx = torch.arange(-b, n_a + e)
            if mode == "edge":
                idx = idx.clamp(0, n_a - 1)
            else:
                period = 2 * (n_a - 1) if n_a > 1 else 1
                idx = idx.abs() % period
                idx = torch.where(idx >= n_a, period - idx, idx)
            x = torch.index_select(x, a, idx)
    return x


@impl("Pad", since=11, static=(1, 3), mode="constant")
def pad(x: torch.Tensor, pads: torch.Tensor, value: torch.Tensor | None = None, axes: torch.Tensor | None = None,
        *, mode: str) -> torch.Tensor:
    return _pad(x, ints(pads), mode, value, ints(axes) if axes is not None else None)


@impl("Pad", since=1, until=11, mode="constant", pads=(), value=0.0)
def pad_attr(x: torch.Tensor, *, mode: str, pads: tuple[int, ...], value: float) -> torch.Tensor:
    return _pad(x, list(pads), mode, value, None)


@impl("DepthToSpace", blocksize=1, mode="DCR")
def depth_to_space(x: torch.Tensor, *, blocksize: int, mode: str) -> torch.Tensor:
    b, c, h, w = x.shape
    k = blocksize
    if mode == "DCR":
        y = x.reshape(b, k, k, c // (k * k), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(b, c // (k * k), k, k, h, w).permute(0, 1, 4, 2, 5, 3)
    return y.reshape(b, c // (k * k), h * k, w * k)


@impl("SpaceToDepth", blocksize=1, mode="DCR")
def space_to_depth(x: torch.Tensor, *, blocksize: int, mode: str) -> torch.Tensor:
    b, c, h, w = x.shape
    k = blocksize
    order = (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4)
    y = x.reshape(b, c, h // k, k, w // k, k).permute(order)
    return y.reshape(b, c * k * k, h // k, w // k)


@impl("Trilu", upper=1)
def trilu(x: torch.Tensor, k: torch.Tensor | None = None, *, upper: int) -> torch.Tensor:
    diag = int(k.item()) if k is not None else 0
    return torch.triu(x, diag) if upper else torch.tril(x, diag)


@onnx_op("", "EyeLike")
def eye_like(ctx: Ctx, x: Any) -> Any:
    from torchlib.importer.converter import ONNX_TO_TORCH

    dtype = ONNX_TO_TORCH.get(ctx.attr("dtype", -1))
    return ctx.call(_eye_like, x, ctx.attr("k", 0), dtype)


def _eye_like(x: torch.Tensor, k: int, dtype: torch.dtype | None) -> torch.Tensor:
    rows, cols = x.shape
    i = torch.arange(rows).unsqueeze(1)
    j = torch.arange(cols).unsqueeze(0)
    return (j - i == k).to(dtype or x.dtype)


@impl("CenterCropPad", axes=None)
def center_crop_pad(x: torch.Tensor, target: torch.Tensor, *, axes: tuple[int, ...] | None) -> torch.Tensor:
    dims = ints(target)
    axes_l = [norm_axis(a, x.dim()) for a in axes] if axes else list(range(x.dim()))
    for a, d in zip(axes_l, dims):
        n = x.shape[a]
        if d < n:
            start = (n - d) // 2
            x = x.narrow(a, start, d)
        elif d > n:
            before = (d - n) // 2
            shape = list(x.shape)
            shape[a] = d
            out = torch.zeros(shape, dtype=x.dtype)
            out.narrow(a, before, n).copy_(x)
            x = out
    return x
