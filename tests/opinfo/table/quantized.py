"""Expectations for torchlib/ops/quantized.py: no OpInfo exercises the quantized_decomposed ops,
so each entry has samples of its own, checked exactly (integer outputs, and float outputs made
with torch's own arithmetic) against torch.ops.quantized_decomposed.*."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

import torchlib.ops.quantized  # noqa: F401  (loads torch.ops.quantized_decomposed)
from torchlib.conformance.spec import Entry, sample_input

EXACT = {torch.float32: (0.0, 0.0), torch.float16: (0.0, 0.0), torch.bfloat16: (0.0, 0.0), torch.float64: (0.0, 0.0)}
# (dtype, quant_min, quant_max, zero_point): the full ranges, and narrower ones that clamp
RANGES = [(torch.int8, -128, 127, 3), (torch.int8, -127, 127, 0), (torch.uint8, 0, 255, 128), (torch.uint8, 10, 200, 100)]


def _floats(dtype: torch.dtype, shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 4
    if x.numel() >= 4:  # saturating values
        x.view(-1)[:4] = torch.tensor([float("inf"), -float("inf"), 1e30, -1e30])
    return x.to(dtype)


def quantize_per_tensor(dtype: torch.dtype) -> Iterator[Any]:
    for qdtype, lo, hi, zp in RANGES:
        yield sample_input(_floats(dtype, (3, 5, 4)), 0.0123, zp, lo, hi, qdtype)
    yield sample_input(_floats(dtype, (0, 3)), 0.5, 0, -128, 127, torch.int8)
    yield sample_input(_floats(dtype, ()), 0.25, 1, 0, 255, torch.uint8)


def quantize_per_tensor_tensor(dtype: torch.dtype) -> Iterator[Any]:
    for qdtype, lo, hi, zp in RANGES:
        scale = torch.tensor(0.0123, dtype=torch.float64)
        yield sample_input(_floats(dtype, (3, 5, 4)), scale, torch.tensor(zp), lo, hi, qdtype)
    yield sample_input(_floats(dtype, (2, 3)), torch.tensor([0.05]), torch.tensor([-3]), -128, 127, torch.int8)


def _quantized(qdtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    info = torch.iinfo(qdtype)
    return torch.randint(info.min, info.max + 1, shape, generator=torch.Generator().manual_seed(1), dtype=qdtype)


def dequantize_per_tensor(dtype: torch.dtype) -> Iterator[Any]:
    for qdtype, lo, hi, zp in RANGES:
        yield sample_input(_quantized(qdtype, (3, 5, 4)), 0.0123, zp, lo, hi, qdtype, out_dtype=dtype)
    yield sample_input(_quantized(torch.int8, (0, 2)), 0.5, 0, -128, 127, torch.int8, out_dtype=dtype)


def dequantize_per_tensor_tensor(dtype: torch.dtype) -> Iterator[Any]:
    for qdtype, lo, hi, zp in RANGES:
        scale = torch.tensor(0.0123, dtype=torch.float64)
        yield sample_input(_quantized(qdtype, (3, 5, 4)), scale, torch.tensor(zp), lo, hi, qdtype, out_dtype=dtype)


def _channel_params(n: int, lo: int, hi: int, scale_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(n)
    return (torch.rand(n, generator=g) * 0.05 + 0.001).to(scale_dtype), torch.randint(lo, hi + 1, (n,), generator=g)


def quantize_per_channel(dtype: torch.dtype) -> Iterator[Any]:
    x = _floats(dtype, (3, 5, 4))
    for qdtype, lo, hi, _ in RANGES:
        for axis, scale_dtype in [(0, torch.float32), (1, torch.float64), (2, torch.float32)]:
            scales, zps = _channel_params(x.shape[axis], lo, hi, scale_dtype)
            yield sample_input(x, scales, zps, axis, lo, hi, qdtype)


def dequantize_per_channel(dtype: torch.dtype) -> Iterator[Any]:
    for qdtype, lo, hi, _ in RANGES:
        q = _quantized(qdtype, (3, 5, 4))
        for axis, scale_dtype in [(0, torch.float32), (1, torch.float64), (2, torch.float32)]:
            scales, zps = _channel_params(q.shape[axis], lo, hi, scale_dtype)
            yield sample_input(q, scales, zps, axis, lo, hi, qdtype, out_dtype=dtype)
            yield sample_input(q, scales, None, axis, lo, hi, qdtype, out_dtype=dtype)


def choose_qparams(dtype: torch.dtype) -> Iterator[Any]:
    for qdtype, lo, hi, _ in RANGES[::2]:
        yield sample_input(_floats(dtype, (4, 16), seed=2)[1:], lo, hi, 1e-6, qdtype)  # finite values
        yield sample_input(torch.rand(3, 4).to(dtype) + 1, lo, hi, 1e-6, qdtype)  # all positive
        yield sample_input(torch.zeros(5, dtype=dtype), lo, hi, torch.finfo(torch.float32).eps, qdtype)  # eps


def per_token_params(dtype: torch.dtype) -> Iterator[Any]:
    yield sample_input(torch.randn(4, 16, generator=torch.Generator().manual_seed(3)).to(dtype) * 3, torch.int8)
    yield sample_input(torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(4)).to(dtype), torch.int8)
    yield sample_input(torch.zeros(2, 4, dtype=dtype), torch.int8)


def quantize_per_token(dtype: torch.dtype) -> Iterator[Any]:
    qd = torch.ops.quantized_decomposed
    for sample in per_token_params(dtype):
        x = sample.input
        for choose in (qd.choose_qparams_per_token_asymmetric, qd.choose_qparams_per_token):
            scales, zps = choose(x, torch.int8)
            yield sample_input(x, scales, zps, -128, 127, torch.int8)
        scales, zps = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
        yield sample_input(x, scales, zps, -100, 100, torch.int8)  # clamped


def dequantize_per_token(dtype: torch.dtype) -> Iterator[Any]:
    qd = torch.ops.quantized_decomposed
    for sample in per_token_params(dtype):
        x = sample.input
        scales, zps = qd.choose_qparams_per_token_asymmetric(x, torch.int8)
        q = qd.quantize_per_token(x, scales, zps, -128, 127, torch.int8)
        yield sample_input(q, scales, zps, -128, 127, torch.int8, dtype)


def _groups(dtype: torch.dtype) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]]:
    g = torch.Generator().manual_seed(5)
    w = torch.randn(4, 16, generator=g).to(dtype)
    for group_size in (4, 8):
        n = w.numel() // group_size
        yield w, torch.rand(n, generator=g) * 0.05 + 0.01, torch.randint(-5, 5, (n,), generator=g, dtype=torch.int32), group_size


def quantize_per_channel_group(dtype: torch.dtype) -> Iterator[Any]:
    for w, scales, zps, group_size in _groups(dtype):
        yield sample_input(w, scales, zps, -128, 127, torch.int8, group_size)
        yield sample_input(w, scales, zps, -8, 7, torch.int8, group_size)  # 4-bit range


def dequantize_per_channel_group(dtype: torch.dtype) -> Iterator[Any]:
    qd = torch.ops.quantized_decomposed
    for w, scales, zps, group_size in _groups(torch.float32):
        q = qd.quantize_per_channel_group(w, scales, zps, -128, 127, torch.int8, group_size)
        yield sample_input(q, scales, zps, -128, 127, torch.int8, group_size, dtype)
        yield sample_input(q, scales, None, -128, 127, torch.int8, group_size, dtype)


FLOAT = [torch.float32]
OUT_FLOATS = [torch.float32, torch.float16, torch.bfloat16]
INPUT_FLOATS = [torch.float32, torch.float16, torch.bfloat16]

ENTRIES = [
    Entry('quantized_decomposed_choose_qparams_per_token', samples=per_token_params, dtypes=INPUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_choose_qparams_per_token_asymmetric', samples=per_token_params, dtypes=INPUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_choose_qparams_symmetric_tensor', samples=choose_qparams, dtypes=INPUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_choose_qparams_tensor', samples=choose_qparams, dtypes=INPUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_dequantize_per_channel', samples=dequantize_per_channel, dtypes=OUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_dequantize_per_channel_group', samples=dequantize_per_channel_group, dtypes=OUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_dequantize_per_tensor', samples=dequantize_per_tensor, dtypes=OUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_dequantize_per_tensor_tensor', samples=dequantize_per_tensor_tensor, dtypes=OUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_dequantize_per_token', samples=dequantize_per_token, dtypes=INPUT_FLOATS, tol=EXACT),
    Entry('quantized_decomposed_quantize_per_channel', samples=quantize_per_channel, dtypes=INPUT_FLOATS),
    Entry('quantized_decomposed_quantize_per_channel_group', samples=quantize_per_channel_group, dtypes=FLOAT),
    Entry('quantized_decomposed_quantize_per_tensor', samples=quantize_per_tensor, dtypes=INPUT_FLOATS),
    Entry('quantized_decomposed_quantize_per_tensor_tensor', samples=quantize_per_tensor_tensor, dtypes=INPUT_FLOATS),
    Entry('quantized_decomposed_quantize_per_token', samples=quantize_per_token, dtypes=INPUT_FLOATS),
]
