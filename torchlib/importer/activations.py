"""Activations and softmax-like ops."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from torchlib.importer._common import impl


@impl("Relu")
def relu(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x)


@impl("Sigmoid")
def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x)


@impl("Tanh")
def tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x)


@impl("LeakyRelu", alpha=0.01)
def leaky_relu(x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    return torch.where(x >= 0, x, x * alpha)


@impl("Elu", alpha=1.0)
def elu(x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    return torch.where(x > 0, x, alpha * torch.expm1(x))


@impl("Celu", alpha=1.0)
def celu(x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    return torch.clamp(x, min=0) + torch.clamp(alpha * torch.expm1(x / alpha), max=0)


@impl("Selu", alpha=1.67326319217681884765625, gamma=1.05070102214813232421875)
def selu(x: torch.Tensor, *, alpha: float, gamma: float) -> torch.Tensor:
    return gamma * torch.where(x > 0, x, alpha * torch.expm1(x))


@impl("ThresholdedRelu", alpha=1.0)
def thresholded_relu(x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    return torch.where(x > alpha, x, torch.zeros_like(x))


@impl("HardSigmoid", alpha=0.2, beta=0.5)
def hard_sigmoid(x: torch.Tensor, *, alpha: float, beta: float) -> torch.Tensor:
    return torch.clamp(alpha * x + beta, 0, 1)


@impl("HardSwish")
def hard_swish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.clamp(x / 6 + 0.5, 0, 1)


@impl("Softplus")
def softplus(x: torch.Tensor) -> torch.Tensor:
    return torch.log1p(torch.exp(-torch.abs(x))) + torch.clamp(x, min=0)


@impl("Softsign")
def softsign(x: torch.Tensor) -> torch.Tensor:
    return x / (1 + torch.abs(x))


@impl("Mish")
def mish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.tanh(F.softplus(x))


@impl("Swish", alpha=1.0)
def swish(x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    return x * torch.sigmoid(alpha * x)


@impl("Gelu", approximate="none")
def gelu(x: torch.Tensor, *, approximate: str) -> torch.Tensor:
    return F.gelu(x, approximate=approximate)


@impl("PRelu")
def prelu(x: torch.Tensor, slope: torch.Tensor) -> torch.Tensor:
    return torch.where(x < 0, x * slope, x)


@impl("Shrink", bias=0.0, lambd=0.5)
def shrink(x: torch.Tensor, *, bias: float, lambd: float) -> torch.Tensor:
    return torch.where(x < -lambd, x + bias, torch.where(x > lambd, x - bias, torch.zeros_like(x))).to(x.dtype)


def _coerced(x: torch.Tensor, axis: int, fn: object) -> torch.Tensor:
    """Opset < 13 softmax family: the input seen as 2-D [prod(shape[:axis]), prod(shape[axis:])]."""
    axis = axis + x.dim() if axis < 0 else axis
    rows = math.prod(x.shape[:axis])
    flat = x.reshape(rows, -1)
    return fn(flat).reshape(x.shape)  # type: ignore[operator]


def _hardmax_last(x: torch.Tensor) -> torch.Tensor:
    return F.one_hot(torch.argmax(x, dim=-1), x.shape[-1]).to(x.dtype)


@impl("Softmax", since=13, axis=-1)
def softmax(x: torch.Tensor, *, axis: int) -> torch.Tensor:
    return torch.softmax(x, dim=axis)


@impl("Softmax", since=1, until=13, axis=1)
def softmax_2d(x: torch.Tensor, *, axis: int) -> torch.Tensor:
    return _coerced(x, axis, lambda t: torch.softmax(t, dim=1))


@impl("LogSoftmax", since=13, axis=-1)
def log_softmax(x: torch.Tensor, *, axis: int) -> torch.Tensor:
    return torch.log_softmax(x, dim=axis)


@impl("LogSoftmax", since=1, until=13, axis=1)
def log_softmax_2d(x: torch.Tensor, *, axis: int) -> torch.Tensor:
    return _coerced(x, axis, lambda t: torch.log_softmax(t, dim=1))


@impl("Hardmax", since=13, axis=-1)
def hardmax(x: torch.Tensor, *, axis: int) -> torch.Tensor:
    return _hardmax_last(x.movedim(axis, -1)).movedim(-1, axis)


@impl("Hardmax", since=1, until=13, axis=1)
def hardmax_2d(x: torch.Tensor, *, axis: int) -> torch.Tensor:
    return _coerced(x, axis, _hardmax_last)
