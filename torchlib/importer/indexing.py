"""Gather/scatter, TopK, NonZero, OneHot, CumSum, Compress, MatMul-like (Gemm, Einsum), Unique."""

from __future__ import annotations

import math

import torch

from torchlib.importer._common import axis as norm_axis
from torchlib.importer._common import impl, ints


def _wrap(indices: torch.Tensor, size: int) -> torch.Tensor:
    """ONNX indices may be negative (counted from the end)."""
    indices = indices.to(torch.int64)
    return torch.where(indices < 0, indices + size, indices)


@impl("Gather", axis=0)
def gather(x: torch.Tensor, indices: torch.Tensor, *, axis: int) -> torch.Tensor:
    axis = norm_axis(axis, x.dim())
    idx = _wrap(indices, x.shape[axis])
    out = torch.index_select(x, axis, idx.reshape(-1))
    return out.reshape(tuple(x.shape[:axis]) + tuple(idx.shape) + tuple(x.shape[axis + 1:]))


@impl("GatherElements", axis=0)
def gather_elements(x: torch.Tensor, indices: torch.Tensor, *, axis: int) -> torch.Tensor:
    axis = norm_axis(axis, x.dim())
    return torch.gather(x, axis, _wrap(indices, x.shape[axis]))


@impl("GatherND", batch_dims=0)
def gather_nd(x: torch.Tensor, indices: torch.Tensor, *, batch_dims: int) -> torch.Tensor:
    """One advanced-indexing gather over all batches (batch index, then the k index columns);
    empty batches and empty index lists included."""
    b = batch_dims
    k = indices.shape[-1]
    batch_shape = tuple(x.shape[:b])
    count, rows = math.prod(batch_shape), math.prod(indices.shape[b:-1])
    idx = indices.to(torch.int64).reshape(count, rows, k)
    dims = torch.tensor(x.shape[b:b + k], dtype=torch.int64)
    idx = torch.where(idx < 0, idx + dims, idx)
    batch = torch.arange(count, dtype=torch.int64)[:, None].expand(count, rows)
    out = x.reshape((count,) + tuple(x.shape[b:]))[(batch, *idx.unbind(-1))]
    return out.reshape(batch_shape + tuple(indices.shape[b:-1]) + tuple(x.shape[b + k:]))


def _reduced(reduction: str) -> str:
    return {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}[reduction]


@impl("ScatterElements", axis=0, reduction="none")
def scatter_elements(x: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, *, axis: int,
                     reduction: str) -> torch.Tensor:
    axis = norm_axis(axis, x.dim())
    idx = _wrap(indices, x.shape[axis])
    if reduction == "none":
        return torch.scatter(x, axis, idx, updates)
    return torch.scatter_reduce(x, axis, idx, updates, _reduced(reduction), include_self=True)


@impl("Scatter", until=11, axis=0)
def scatter(x: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, *, axis: int) -> torch.Tensor:
    axis = norm_axis(axis, x.dim())
    return torch.scatter(x, axis, _wrap(indices, x.shape[axis]), updates)


@impl("ScatterND", reduction="none")
def scatter_nd(x: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor, *, reduction: str) -> torch.Tensor:
    k = indices.shape[-1]
    out = x.clone()
    idx = indices.to(torch.int64).reshape(-1, k)
    dims = torch.tensor(x.shape[:k], dtype=torch.int64)
    idx = torch.where(idx < 0, idx + dims, idx)
    upd = updates.reshape((idx.shape[0],) + tuple(x.shape[k:]))
    key = tuple(idx[:, j] for j in range(k))
    if reduction == "none":
        out[key] = upd
    elif reduction == "add":
        out.index_put_(key, upd, accumulate=True)
    else:
        for i in range(idx.shape[0]):
            where = tuple(int(v) for v in idx[i])
            cur = out[where]
            out[where] = {"mul": torch.mul, "max": torch.maximum, "min": torch.minimum}[reduction](cur, upd[i])
    return out


@impl("OneHot", axis=-1)
def one_hot(indices: torch.Tensor, depth: torch.Tensor, values: torch.Tensor, *, axis: int) -> torch.Tensor:
    d = int(depth.reshape(-1)[0].item())
    idx = indices.to(torch.int64) if not indices.is_floating_point() else indices.to(torch.int64)
    idx = torch.where(idx < 0, idx + d, idx)
    valid = (idx >= 0) & (idx < d)
    hot = torch.nn.functional.one_hot(torch.where(valid, idx, torch.zeros_like(idx)), d) * valid.unsqueeze(-1)
    out = torch.where(hot.bool(), values[1], values[0])
    rank = out.dim()
    return out.movedim(-1, norm_axis(axis, rank))


@impl("NonZero")
def non_zero(x: torch.Tensor) -> torch.Tensor:
    return torch.nonzero(x).T.contiguous() if x.dim() else torch.nonzero(x.reshape(1)).T[:0].contiguous()


@impl("TopK", multi=True, since=10, static=(1,), axis=-1, largest=1, sorted=1)
def top_k(x: torch.Tensor, k: torch.Tensor, *, axis: int, largest: int, sorted: int) -> tuple[torch.Tensor, torch.Tensor]:
    n = ints(k)[0]
    axis = norm_axis(axis, x.dim())
    # ONNX: among equal values the lower index comes first
    order = torch.argsort(x, dim=axis, descending=bool(largest), stable=True)
    idx = order.narrow(axis, 0, n)
    return torch.gather(x, axis, idx), idx


@impl("CumSum", static=(1,), exclusive=0, reverse=0)
def cum_sum(x: torch.Tensor, axis_t: torch.Tensor, *, exclusive: int, reverse: int) -> torch.Tensor:
    a = norm_axis(ints(axis_t)[0], x.dim())
    y = torch.flip(x, [a]) if reverse else x
    out = torch.cumsum(y, dim=a).to(x.dtype)
    if exclusive:
        out = out - y
    return torch.flip(out, [a]) if reverse else out


@impl("CumProd", static=(1,), exclusive=0, reverse=0)
def cum_prod(x: torch.Tensor, axis_t: torch.Tensor, *, exclusive: int, reverse: int) -> torch.Tensor:
    a = norm_axis(ints(axis_t)[0], x.dim())
    y = torch.flip(x, [a]) if reverse else x
    if exclusive:
        ones = torch.ones_like(y.narrow(a, 0, 1))
        y = torch.cat([ones, y.narrow(a, 0, y.shape[a] - 1)], dim=a)
    out = torch.cumprod(y, dim=a).to(x.dtype)
    return torch.flip(out, [a]) if reverse else out


@impl("Compress", axis=None)
def compress(x: torch.Tensor, condition: torch.Tensor, *, axis: int | None) -> torch.Tensor:
    if axis is None:
        flat = x.reshape(-1)
        return flat[: condition.shape[0]][condition.bool()[: flat.shape[0]]]
    a = norm_axis(axis, x.dim())
    cond = condition.bool()[: x.shape[a]]
    return torch.index_select(x.narrow(a, 0, cond.shape[0]), a, torch.nonzero(cond).reshape(-1))


@impl("Gemm", alpha=1.0, beta=1.0, transA=0, transB=0)
def gemm(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor | None = None, *, alpha: float, beta: float,
         transA: int, transB: int) -> torch.Tensor:
    y = torch.matmul(a.T if transA else a, b.T if transB else b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        y = y + (c * beta if beta != 1.0 else c)
    return y


@impl("Einsum", equation="")
def einsum(*xs: torch.Tensor, equation: str) -> torch.Tensor:
    return torch.einsum(equation, *xs)


@impl("Unique", multi=True, axis=None, sorted=1)
def unique(x: torch.Tensor, *, axis: int | None, sorted: int) -> tuple[torch.Tensor, ...]:
    if axis is None:
        flat = x.reshape(-1)
        values, inverse, counts = torch.unique(flat, sorted=True, return_inverse=True, return_counts=True)
        first = torch.full((values.shape[0],), flat.shape[0], dtype=torch.int64)
        first = first.scatter_reduce(0, inverse, torch.arange(flat.shape[0]), "amin")
    else:
        a = norm_axis(axis, x.dim())
        values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True, dim=a)
        first = torch.full((values.shape[a],), x.shape[a], dtype=torch.int64)
        first = first.scatter_reduce(0, inverse, torch.arange(x.shape[a]), "amin")
    if not sorted:
        order = torch.argsort(first)
        remap = torch.argsort(order)
        values = torch.index_select(values, 0 if axis is None else norm_axis(axis, x.dim()), order)
        first, counts, inverse = first[order], counts[order], remap[inverse]
    return values, first, inverse, counts


@impl("ReverseSequence", batch_axis=1, time_axis=0)
def reverse_sequence(x: torch.Tensor, lengths: torch.Tensor, *, batch_axis: int, time_axis: int) -> torch.Tensor:
    out = x.clone()
    for b, n in enumerate(ints(lengths)):
        src = x.select(batch_axis, b)
        t = time_axis if time_axis < batch_axis else time_axis - 1
        dst = out.select(batch_axis, b)
        dst.narrow(t, 0, n).copy_(torch.flip(src.narrow(t, 0, n), [t]))
    return out


@impl("TensorScatter", since=24, axis=-2, mode="linear")
def tensor_scatter(cache: torch.Tensor, update: torch.Tensor, write_indices: torch.Tensor | None = None, *,
                   axis: int, mode: str) -> torch.Tensor:
    """The cache with update written along `axis` from write_indices[b] on, for each batch row b
    (dim 0); "circular" wraps around the axis' length, "linear" must fit."""
    if mode not in ("linear", "circular"):
        raise ValueError(f"TensorScatter mode {mode!r}: expected 'linear' or 'circular'")
    a = axis % cache.dim()
    batch, length = cache.shape[0], update.shape[a]
    start = write_indices.to(torch.int64) if write_indices is not None else torch.zeros(batch, dtype=torch.int64)
    view = [1] * cache.dim()
    view[0], view[a] = batch, length
    index = (start.reshape(batch, 1) + torch.arange(length)).reshape(view)
    if mode == "circular":
        index = index % cache.shape[a]
    return cache.scatter(a, index.expand(update.shape), update)
