"""Weight-only quantization in standard ONNX: the float weights of MatMul / Gemm become
`DequantizeLinear(w_q, scale, zero_point, axis, block_size) -> MatMul` (opset 21's blocked
quantization, with the standard INT4 / UINT4 / INT8 / UINT8 types).

    quantize_weights(builder, WeightQuantization("int4", block_size=32, symmetric=True))

Blocks run along the reduction axis K of the weight ([K, N] for MatMul's B, as a Linear's
transposed weight is; [N, K] for Gemm's B with transB): each run of `block_size` elements of K,
for one output column, has its own scale (and zero point).

- symmetric: signed type, no zero point: `scale = max|w| / qmax`, `q = clip(round(w / scale))`,
  qmax = 7 (int4) or 127 (int8);
- asymmetric: unsigned type and a zero point: with `lo = min(w, 0)`, `hi = max(w, 0)`,
  `scale = (hi - lo) / qmax`, `zero_point = clip(round(-lo / scale))`,
  `q = clip(round(w / scale) + zero_point)`, qmax = 15 (uint4) or 255 (uint8).

The scale has the weight's dtype (DequantizeLinear gives that dtype back), rounding is half to
even, a block of zeros gets scale 1. Only a weight that every reader reads as MatMul's or Gemm's
B (on the same axis) is quantized: its float copy is gone from the model. Graph inputs, outputs
and every other name are unchanged; the weight `w` becomes `w_quantized`, `w_scale` and
`w_zero_point`.

Then the quantized weights of MatMuls that read one input (Q, K and V; a gated MLP's gate and up)
go side by side: one `DequantizeLinear` over the quantized weights, scales (and zero points)
concatenated along N, one MatMul and a Split (`packed_projections`). Exact: blocks run along K,
so each output column is the same dot product of the same dequantized column. onnxruntime fuses
each `DequantizeLinear -> MatMul` into one MatMulNBits, which quantizes its input once per node
at accuracy level 4: two nodes instead of five per layer (measured in docs/genai.md). Float
weights are not packed here (that would copy them; the onnxruntime target does it within a
budget), the quantized ones are new arrays already.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any, cast

import ml_dtypes
import numpy as np

from graph_builder.ir import Node, Value
from graph_builder.optimizer.editing import Uses, build_before
from graph_builder.weight_sources import release

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder

MIN_OPSET = 21  # DequantizeLinear's block_size, INT4 / UINT4
_TYPES = {  # (dtype, symmetric) -> (numpy type, lowest, highest)
    ("int4", True): (ml_dtypes.int4, -8, 7), ("int4", False): (ml_dtypes.uint4, 0, 15),
    ("int8", True): (np.int8, -128, 127), ("int8", False): (np.uint8, 0, 255),
}  # fmt: skip
_FLOATS = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


@dataclasses.dataclass(frozen=True)
class WeightQuantization:
    """How to quantize: dtype "int4" or "int8", block_size (a power of two, 16 or more: 32, 64
    and 128 are the usual ones), symmetric (signed, no zero point) or not (unsigned with a zero
    point)."""

    dtype: str = "int4"
    block_size: int = 32
    symmetric: bool = True

    def __post_init__(self) -> None:
        if self.dtype not in ("int4", "int8"):
            raise ValueError(f"weight_quantization dtype {self.dtype!r}: use 'int4' or 'int8'")
        if self.block_size < 16 or self.block_size & (self.block_size - 1):
            raise ValueError(f"weight_quantization block_size {self.block_size}: use a power of two, 16 or more (32, 64, 128)")

    @classmethod
    def of(cls, spec: str | WeightQuantization) -> WeightQuantization:
        """A WeightQuantization from itself or a dtype name ("int4" / "int8", the defaults else)."""
        if isinstance(spec, cls):
            return spec
        if isinstance(spec, str):
            return cls(spec)
        raise TypeError(f"weight_quantization must be 'int4', 'int8' or a WeightQuantization, not {spec!r}")


def check_opset(opset: int) -> None:
    if opset < MIN_OPSET:
        raise ValueError(f"weight_quantization needs opset {MIN_OPSET} or later (DequantizeLinear's block_size and the "
                         f"INT4 / UINT4 types are opset 21's); this export is opset {opset}: export with opset=21 or "
                         f"more (23 is the default)")  # fmt: skip


def quantize(w: np.ndarray, config: WeightQuantization, axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(q, scale, zero_point or None) of a 2-D float weight, blocks of config.block_size along
    `axis`; scale and zero_point have w's shape with ceil(w.shape[axis] / block_size) on `axis`."""
    if axis == 1:
        q, scale, zero = quantize(w.T, config, 0)
        return q.T, scale.T, None if zero is None else zero.T
    qtype, low, high = _TYPES[(config.dtype, config.symmetric)]
    k, n = w.shape
    b = config.block_size
    blocks = -(-k // b)
    w32 = np.zeros((blocks * b, n), np.float32)
    w32[:k] = w
    grouped = w32.reshape(blocks, b, n)
    if config.symmetric:
        scale = np.abs(grouped).max(axis=1) / np.float32(high)
    else:
        lo = np.minimum(grouped.min(axis=1), 0)
        scale = (np.maximum(grouped.max(axis=1), 0) - lo) / np.float32(high - low)
    scale[scale == 0] = 1
    scale = scale.astype(w.dtype)  # stored in the weight's dtype: the formula below uses these very scales
    full = np.repeat(scale.astype(np.float32), b, axis=0)[:k]
    if config.symmetric:
        q = np.clip(np.round(w.astype(np.float32) / full), low, high)
        return q.astype(qtype), scale, None
    zero = np.clip(np.round(-lo / scale.astype(np.float32)), low, high)
    q = np.clip(np.round(w.astype(np.float32) / full) + np.repeat(zero, b, axis=0)[:k], low, high)
    return q.astype(qtype), scale, zero.astype(qtype)


def dequantize(q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, axis: int, block_size: int) -> np.ndarray:
    """DequantizeLinear's formula, (q - zero_point) * scale with blocks along `axis`, in float32."""
    k = q.shape[axis]
    full = np.repeat(scale.astype(np.float32), block_size, axis=axis).take(range(k), axis=axis)
    shifted = q.astype(np.float32)
    if zero is not None:
        shifted = shifted - np.repeat(zero.astype(np.float32), block_size, axis=axis).take(range(k), axis=axis)
    return shifted * full


def _axis(w: Value, readers: list[Node]) -> int | None:
    """The reduction axis of w when every reader reads it as MatMul's or Gemm's B, else None."""
    axes = set()
    for node in readers:
        if node.op_type not in ("MatMul", "Gemm") or len(node.inputs) < 2 or node.inputs[1] is not w or node.inputs[0] is w:
            return None
        axes.add(1 if node.op_type == "Gemm" and node.attributes.get("transB", 0) else 0)
    return axes.pop() if len(axes) == 1 else None


def _dequantize_node(inputs: list[Value], axis: int, block_size: int, op: Any) -> Value:
    return op.DequantizeLinear(*inputs, axis=axis, block_size=block_size)


def quantize_weights(builder: GraphBuilder, config: WeightQuantization) -> int:
    """Quantize every 2-D float weight read only as MatMul's / Gemm's B; returns how many."""
    check_opset(builder.opset)
    graph = builder.graph
    uses = Uses(graph)
    done = 0
    for name, w in list(graph.initializers.items()):
        array = w.const_value
        if array is None or array.ndim != 2 or array.dtype not in _FLOATS or id(w) in uses.outputs:
            continue
        readers = list(uses.of(w))
        axis = _axis(w, readers) if readers else None
        if axis is None:
            continue
        q, scale, zero = quantize(array, config, axis)
        release(array)
        del graph.initializers[name]
        builder._root.names.discard(name)
        inputs = [builder.initializer(f"{name}_quantized", q), builder.initializer(f"{name}_scale", scale)]
        if zero is not None:
            inputs.append(builder.initializer(f"{name}_zero_point", zero))
        first = min(readers, key=graph.nodes.index)
        value = build_before(builder, uses, first, functools.partial(_dequantize_node, inputs, axis, config.block_size))
        value.set_type(w.dtype, w.shape)
        uses.replace(w, value)
        done += 1
    uses.commit()
    return done


def _dequantized_b(node: Node, uses: Uses) -> Node | None:
    """The DequantizeLinear when node is MatMul(a, DequantizeLinear(q, scale[, zero_point],
    axis=0)) of 2-D constants, read by that MatMul only, a of rank 2 or more."""
    if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx") or len(node.inputs) != 2:
        return None
    a, w = node.inputs
    if a is None or w is None or a.rank is None or a.rank < 2 or w.dtype is not a.dtype:
        return None
    dq = w.producer
    if dq is None or dq.op_type != "DequantizeLinear" or dq.domain not in ("", "ai.onnx") or uses.count(w) != 1:
        return None
    if int(dq.attributes.get("axis", 1)) != 0 or len(dq.inputs) not in (2, 3) or "output_dtype" in dq.attributes or any(
            v is None or v.const_value is None or v.const_value.ndim != 2 for v in dq.inputs):  # fmt: skip
        return None
    return dq


def _constants(dq: Node) -> list[np.ndarray]:
    """A DequantizeLinear's quantized weights, scales (and zero points): known arrays (`_dequantized_b`)."""
    return [cast(np.ndarray, cast(Value, v).const_value) for v in dq.inputs]


def _packed(inputs: list[Value], block_size: int, a: Value, sizes: list[int], op: Any) -> list[Value]:
    w = op.DequantizeLinear(*inputs, axis=0, block_size=block_size)
    return list(op.Split(op.MatMul(a, w), np.array(sizes, np.int64), axis=-1, _outputs=len(sizes)))


def packed_projections(builder: GraphBuilder) -> int:
    """MatMuls of one input by DequantizeLinear of constant weights (`_quantized_b`: the same K,
    type, block size and zero points) -> one DequantizeLinear of the weights side by side along
    N, one MatMul and a Split; returns how many groups."""
    graph = builder.graph
    uses = Uses(graph)
    groups: dict[tuple[Any, ...], list[tuple[Node, Node]]] = {}
    for node in graph.nodes:
        dq = _dequantized_b(node, uses)
        if dq is not None:
            q, scale = _constants(dq)[:2]  # packed together: the same K, types, block size and zero points or none
            key = (id(node.inputs[0]), q.shape[0], q.dtype, scale.dtype, int(dq.attributes.get("block_size", 0)), len(dq.inputs))
            groups.setdefault(key, []).append((node, dq))
    done = 0
    for key, members in groups.items():
        if len(members) < 2:
            continue
        dqs = [dq for _, dq in members]
        base = cast(Value, dqs[0].inputs[0]).name.removesuffix("_quantized")
        suffixes = ("_quantized", "_scale", "_zero_point")[:len(dqs[0].inputs)]
        inputs = [builder.initializer(f"{base}_packed{suffix}", np.concatenate([_constants(d)[i] for d in dqs], axis=1))
                  for i, suffix in enumerate(suffixes)]  # fmt: skip
        sizes = [int(_constants(d)[0].shape[1]) for d in dqs]
        head = min((n for n, _ in members), key=graph.nodes.index)
        a = cast(Value, head.inputs[0])
        parts = build_before(builder, uses, head, functools.partial(_packed, inputs, key[4], a, sizes))
        for (n, dq), part in zip(members, parts):
            part.set_type(n.outputs[0].dtype, n.outputs[0].shape)
            uses.replace(n.outputs[0], part)
            uses.remove(n)
            uses.remove(dq)
        done += 1
    uses.commit()
    for name in [name for name, v in graph.initializers.items() if uses.count(v) == 0 and id(v) not in uses.outputs]:
        del graph.initializers[name]
    return done
