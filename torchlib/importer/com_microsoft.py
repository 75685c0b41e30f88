"""onnxruntime's com.microsoft ops that LLM exports hold (onnxruntime-genai's builder, optimum):
the fused layer norms, the GELU forms, FusedMatMul and MatMulNBits. Attention and rotary
embedding are in com_microsoft_attention.py. Each is checked against onnxruntime's own kernel
(tests/importer/test_com_microsoft.py).

SimplifiedLayerNormalization is registered by onnxruntime in the ai.onnx domain (and the builder
writes it there); it is registered here under both domains.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from torchlib.importer._common import impl
from torchlib.importer.converter import Ctx
from torchlib.importer.registry import onnx_op

MS = "com.microsoft"


def _rms(x: torch.Tensor, gamma: torch.Tensor, epsilon: float, dims: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    work = x.to(torch.float32)
    inv = torch.rsqrt((work * work).mean(dim=dims, keepdim=True) + epsilon)
    return (work * inv).to(x.dtype) * gamma, inv


def _skip_sum(x: torch.Tensor, skip: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    total = x + skip
    return total + bias if bias is not None else total


def _simplified_layer_norm(x: torch.Tensor, scale: torch.Tensor, *, axis: int, epsilon: float,
                           stash_type: int) -> tuple[torch.Tensor, torch.Tensor]:
    dims = tuple(range(axis + x.dim() if axis < 0 else axis, x.dim()))
    return _rms(x, scale, epsilon, dims)


for _domain in ("", MS):
    impl("SimplifiedLayerNormalization", domain=_domain, multi=True, axis=-1, epsilon=1e-5,
         stash_type=1)(_simplified_layer_norm)


def skip_simplified_layer_norm(x: torch.Tensor, skip: torch.Tensor, gamma: torch.Tensor, bias: torch.Tensor | None,
                               epsilon: float) -> tuple[torch.Tensor, ...]:
    """Outputs: (y, inv_std_var, input_skip_bias_sum) for the node's (output, mean: refused at
    import, inv_std_var, input_skip_bias_sum)."""
    total = _skip_sum(x, skip, bias)
    y, inv = _rms(total, gamma, epsilon, (-1,))
    return y, inv, total


@onnx_op(MS, "SkipSimplifiedLayerNormalization")
def convert_skip_simplified_layer_norm(ctx: Ctx, x: Any, skip: Any, gamma: Any, bias: Any = None) -> Any:
    outputs = list(ctx.node.output) + [""] * (4 - len(ctx.node.output))
    if outputs[1]:
        raise ctx.error("reads output 1 (mean), which this op does not define (onnxruntime leaves it unset)")
    y, inv, total = ctx.call_multi(skip_simplified_layer_norm, 3, x, skip, gamma, bias, ctx.attr("epsilon", 1e-12))
    return y, None, inv, total


@impl("SkipLayerNormalization", domain=MS, multi=True, epsilon=1e-12)
def skip_layer_norm(x: torch.Tensor, skip: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor | None = None,
                    bias: torch.Tensor | None = None, *, epsilon: float) -> tuple[torch.Tensor, ...]:
    """Outputs: (y, mean, inv_std_var, input_skip_bias_sum)."""
    total = _skip_sum(x, skip, bias)
    work = total.to(torch.float32)
    mean = work.mean(dim=-1, keepdim=True)
    inv = torch.rsqrt(((work - mean) ** 2).mean(dim=-1, keepdim=True) + epsilon)
    y = ((work - mean) * inv).to(x.dtype) * gamma
    if beta is not None:
        y = y + beta
    return y, mean, inv, total


@impl("FastGelu", domain=MS)
def fast_gelu(x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """GELU's tanh approximation of x (+ bias)."""
    if bias is not None:
        x = x + bias
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))


@impl("BiasGelu", domain=MS)
def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The exact (erf) GELU of x + bias."""
    return torch.nn.functional.gelu(x + bias)


@impl("QuickGelu", domain=MS, alpha=1.702)
def quick_gelu(x: torch.Tensor, *, alpha: float) -> torch.Tensor:
    return x * torch.sigmoid(alpha * x)


def _batch_transposed(t: torch.Tensor, trans_batch: int, trans: int) -> torch.Tensor:
    """FusedMatMul's operand: with transBatch, dim 0 moves just before the matrix's last dim
    ([d0, b1.., m, k] -> [b1.., m, d0... ]: dims (1..r-2, 0, r-1)); with trans, the last two swap."""
    r = t.dim()
    if trans_batch and r > 2:
        t = t.permute(list(range(1, r - 1)) + [0, r - 1])
    return t.transpose(-1, -2) if trans else t


@impl("FusedMatMul", domain=MS, alpha=1.0, transA=0, transB=0, transBatchA=0, transBatchB=0)
def fused_matmul(a: torch.Tensor, b: torch.Tensor, *, alpha: float, transA: int, transB: int, transBatchA: int,
                 transBatchB: int) -> torch.Tensor:
    if a.dim() == 1:
        transA = 0
    if b.dim() == 1:
        transB = 0
    y = torch.matmul(_batch_transposed(a, transBatchA, transA), _batch_transposed(b, transBatchB, transB))
    return y * alpha if alpha != 1.0 else y


def unpack_bits(packed: torch.Tensor, bits: int) -> torch.Tensor:
    """uint8 bytes -> their `bits`-wide fields, lowest bits first (last dim grows 8/bits times)."""
    shifts = torch.arange(0, 8, bits, dtype=torch.uint8, device=packed.device)
    fields = (packed.unsqueeze(-1) >> shifts) & ((1 << bits) - 1)
    return fields.reshape(*packed.shape[:-1], packed.shape[-1] * (8 // bits))


def dequantize_nbits(b: torch.Tensor, scales: torch.Tensor, zero_points: torch.Tensor | None, n: int, k: int,
                     bits: int, block_size: int) -> torch.Tensor:
    """MatMulNBits' weight as an [N, K] matrix of the scales' dtype. b: [N, blocks, blob] uint8;
    scales: N * blocks; zero_points: packed uint8 (N rows of ceil(blocks * bits / 8) bytes) or
    of the scales' dtype (N * blocks); absent: 2^(bits - 1)."""
    blocks = (k + block_size - 1) // block_size
    q = unpack_bits(b.reshape(n, blocks, -1), bits).reshape(n, blocks, block_size).to(torch.float32)
    s = scales.reshape(n, blocks, 1).to(torch.float32)
    if zero_points is None:
        zp = torch.full((), float(1 << (bits - 1)))
    elif zero_points.dtype == torch.uint8:
        zp = unpack_bits(zero_points.reshape(n, -1), bits)[:, :blocks].reshape(n, blocks, 1).to(torch.float32)
    else:
        zp = zero_points.reshape(n, blocks, 1).to(torch.float32)
    w = ((q - zp) * s).reshape(n, blocks * block_size)[:, :k]
    return w.to(scales.dtype)


def matmul_nbits(a: torch.Tensor, b: torch.Tensor, scales: torch.Tensor, zero_points: torch.Tensor | None,
                 bias: torch.Tensor | None, n: int, k: int, bits: int, block_size: int) -> torch.Tensor:
    """a @ W^T (+ bias), W dequantized, the product in float32 (onnxruntime's accuracy_level 0
    and 1; level 4 quantizes `a` to int8 on the CPU and differs from this by that rounding)."""
    w = dequantize_nbits(b, scales, zero_points, n, k, bits, block_size)
    y = torch.matmul(a.to(torch.float32), w.to(torch.float32).t())
    if bias is not None:
        y = y + bias.to(torch.float32)
    return y.to(a.dtype)


@onnx_op(MS, "MatMulNBits")
def convert_matmul_nbits(ctx: Ctx, a: Any, b: Any, scales: Any, zero_points: Any = None, g_idx: Any = None,
                         bias: Any = None, *rest: Any) -> Any:
    bits, block_size = ctx.attr("bits", 4), ctx.attr("block_size", 0)
    if g_idx is not None:
        raise ctx.error("g_idx (act-order quantization) is not supported; re-quantize without act-order")
    if rest:
        raise ctx.error(f"has {len(ctx.node.input)} inputs; inputs past bias (6th) are not supported")
    if bits not in (2, 4, 8) or block_size < 16 or block_size & (block_size - 1):
        raise ctx.error(f"bits={bits}, block_size={block_size}: supported are bits 2, 4, 8 and a power-of-two "
                        "block_size >= 16")
    return ctx.call(matmul_nbits, a, b, scales, zero_points, bias, ctx.attr("N"), ctx.attr("K"), bits, block_size)
