"""Normalizations: BatchNormalization (inference), Instance, Layer, Group, RMS, Lp, LRN."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torchlib.importer._common import axis as norm_axis
from torchlib.importer._common import impl
from torchlib.importer.converter import ONNX_TO_TORCH


def _channel(t: torch.Tensor, rank: int) -> torch.Tensor:
    return t.reshape((1, -1) + (1,) * (rank - 2))


@impl("BatchNormalization", multi=True, since=9, epsilon=1e-5, momentum=0.9, training_mode=0)
def batch_norm(x: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor, mean: torch.Tensor, var: torch.Tensor, *,
               epsilon: float, momentum: float, training_mode: int) -> tuple[torch.Tensor, ...]:
    r = x.dim()
    if training_mode:
        dims = tuple(d for d in range(r) if d != 1)
        batch_mean = x.mean(dim=dims)
        batch_var = x.var(dim=dims, unbiased=False)
        y = (x - _channel(batch_mean, r)) / torch.sqrt(_channel(batch_var, r) + epsilon) * _channel(scale, r) \
            + _channel(bias, r)
        return y, mean * momentum + batch_mean * (1 - momentum), var * momentum + batch_var * (1 - momentum)
    return ((x - _channel(mean, r)) / torch.sqrt(_channel(var, r) + epsilon) * _channel(scale, r) + _channel(bias, r),)


@impl("InstanceNormalization", epsilon=1e-5)
def instance_norm(x: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor, *, epsilon: float) -> torch.Tensor:
    return F.instance_norm(x, weight=scale, bias=bias, eps=epsilon)


@impl("LayerNormalization", multi=True, axis=-1, epsilon=1e-5, stash_type=1)
def layer_norm(x: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor | None = None, *, axis: int, epsilon: float,
               stash_type: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    a = norm_axis(axis, x.dim())
    dims = tuple(range(a, x.dim()))
    work = x.to(ONNX_TO_TORCH.get(stash_type, torch.float32))
    mean = work.mean(dim=dims, keepdim=True)
    inv = torch.rsqrt(((work - mean) ** 2).mean(dim=dims, keepdim=True) + epsilon)
    y = ((work - mean) * inv).to(x.dtype) * scale
    if bias is not None:
        y = y + bias
    return y, mean, inv


@impl("RMSNormalization", axis=-1, epsilon=1e-5, stash_type=1)
def rms_norm(x: torch.Tensor, scale: torch.Tensor, *, axis: int, epsilon: float, stash_type: int) -> torch.Tensor:
    a = norm_axis(axis, x.dim())
    dims = tuple(range(a, x.dim()))
    work = x.to(ONNX_TO_TORCH.get(stash_type, torch.float32))
    y = work * torch.rsqrt((work * work).mean(dim=dims, keepdim=True) + epsilon)
    return y.to(x.dtype) * scale


@impl("GroupNormalization", since=21, epsilon=1e-5, num_groups=1, stash_type=1)
def group_norm(x: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor, *, epsilon: float, num_groups: int,
               stash_type: int) -> torch.Tensor:
    work = x.to(ONNX_TO_TORCH.get(stash_type, torch.float32))
    return F.group_norm(work, num_groups, eps=epsilon).to(x.dtype) * _channel(scale, x.dim()) + _channel(bias, x.dim())


@impl("GroupNormalization", since=18, until=21, epsilon=1e-5, num_groups=1)
def group_norm_18(x: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor, *, epsilon: float,
                  num_groups: int) -> torch.Tensor:
    """Opset 18: scale and bias are per group."""
    per = x.shape[1] // num_groups
    return F.group_norm(x, num_groups, eps=epsilon) * _channel(scale.repeat_interleave(per), x.dim()) \
        + _channel(bias.repeat_interleave(per), x.dim())


@impl("LpNormalization", axis=-1, p=2)
def lp_norm(x: torch.Tensor, *, axis: int, p: int) -> torch.Tensor:
    norm = torch.sum(torch.abs(x) ** p, dim=axis, keepdim=True) ** (1.0 / p) if p != 1 else \
        torch.sum(torch.abs(x), dim=axis, keepdim=True)
    return torch.where(norm == 0, torch.zeros_like(x), x / norm)


@impl("LRN", alpha=0.0001, beta=0.75, bias=1.0, size=1)
def lrn(x: torch.Tensor, *, alpha: float, beta: float, bias: float, size: int) -> torch.Tensor:
    sq = (x * x).unsqueeze(1)
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    padded = F.pad(sq, (0, 0) * (x.dim() - 2) + (lo, hi))
    window = padded.narrow(2, 0, x.shape[1])
    for i in range(1, size):
        window = window + padded.narrow(2, i, x.shape[1])
    return x / (bias + alpha / size * window.squeeze(1)) ** beta


@impl("NegativeLogLikelihoodLoss", reduction="mean", ignore_index=None)
def nll_loss(x: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None = None, *, reduction: str,
             ignore_index: int | None) -> torch.Tensor:
    t = target.to(torch.int64)
    valid = t != ignore_index if ignore_index is not None else torch.ones_like(t, dtype=torch.bool)
    safe = torch.where(valid, t, torch.zeros_like(t))
    loss = -torch.gather(x, 1, safe.unsqueeze(1)).squeeze(1)
    w = weight[safe] if weight is not None else torch.ones_like(loss)
    w = torch.where(valid, w, torch.zeros_like(w))
    loss = loss * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()
