"""target="onnxruntime": rewrites into onnxruntime's contrib operators (com.microsoft), which its
CPU kernels run faster than the standard graph of a decoder.

    rewrite(builder, OnnxRuntime(accuracy_level=4))   # after optimize() and weight quantization

Passes, in order (each counted under its name, as the optimizer's rules are):

1. **MatMulNBits** (`DequantizeLinear(q, scale[, zero_point], axis=0, block_size) -> MatMul`, the
   standard form weight_quantization writes): onnxruntime's 4- and 8-bit kernel with an explicit
   `accuracy_level` (onnxruntime fuses the standard form itself, at its session default level
   4). Exact at levels 0 and 1 (float32 activations: the same dequantized weights); levels 2-4
   round the activations (float16, bfloat16, int8 per block): a choice the user makes.
2. **Packed projections**: MatMuls of one input by constant float weights of the same reduction
   size become one MatMul over the weights side by side and a Split: Q, K and V; a gated MLP's
   gate and up. Exact: each output column is the same dot product. (Quantized weights are
   packed by weight quantization itself, for both targets: pass 1 then makes one MatMulNBits.)
3. **SkipSimplifiedLayerNormalization / SkipLayerNormalization**: a residual `Add(a, b)` read by
   an RMSNormalization / a LayerNormalization: the norm of the sum and the sum itself (its fourth
   output) in one node.
4. **GroupQueryAttention** over the decode step's `Attention(q, k, v, mask, past_key,
   past_value)` on [batch, sequence, heads * size] projections (the optimizer's grouped-heads,
   past and heads-inside rewrites made it): the same q, k, v and output layout, the mask as an
   additive bias, the rotary embedding inside the kernel where it is the kernel's. Its
   preconditions are in `gqa_exact`.

Each pass fires only where it is exact under its stated preconditions (docs/genai.md lists them,
tests/graph_builder/optimizer/test_onnxruntime_target.py has the near misses, and
torchlib/conformance/optimizer_fuzz.py's `onnxruntime` family checks them against the standard
graph in onnxruntime).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from graph_builder import types
from graph_builder.ir import Node, Value
from graph_builder.optimizer import cleanup
from graph_builder.optimizer.attention import Heads, heads_of_3d
from graph_builder.optimizer.contrib import DOMAIN, call
from graph_builder.optimizer.editing import Uses, build_before, ints, scalar

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder

ACCURACY_LEVELS = (0, 1, 2, 3, 4)


@dataclasses.dataclass(frozen=True)
class OnnxRuntime:
    """The onnxruntime target. accuracy_level: MatMulNBits' activation type (0 unset, which is
    float32 on the CPU; 1 float32; 2 float16; 3 bfloat16; 4 int8, onnxruntime's and
    onnxruntime-genai's default for the CPU). max_sequence_length: the longest past + new
    tokens the model will run (a language model's context length): GroupQueryAttention's rotary
    tables are then constants of that many rows (it refuses a longer sequence, with an error);
    None: the tables are computed in the graph at each run, for the sequence's length.
    past_length_from: see `past_length_from_inputs` (what lets onnxruntime-genai share one
    buffer between the past and the present)."""

    accuracy_level: int = 4
    max_sequence_length: int | None = None
    # (input whose dim 1 is past + new, input whose dim 1 is new): a decode step's contract
    # (onnxruntime-genai's `attention_mask` and `input_ids`); see `past_length_from_inputs`
    past_length_from: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if self.accuracy_level not in ACCURACY_LEVELS:
            raise ValueError(f"accuracy_level {self.accuracy_level!r}: one of {ACCURACY_LEVELS} (0 unset, 1 float32, "
                             f"2 float16, 3 bfloat16, 4 int8)")  # fmt: skip

    @classmethod
    def of(cls, target: str | OnnxRuntime | None) -> OnnxRuntime | None:
        """None for the standard target ("onnx" or None), else the onnxruntime target."""
        if target is None or target == "onnx":
            return None
        if target == "onnxruntime":
            return cls()
        if isinstance(target, cls):
            return target
        raise ValueError(f"target {target!r}: 'onnx' (standard ONNX, the default), 'onnxruntime' or "
                         f"OnnxRuntime(accuracy_level=...)")  # fmt: skip


NAMES = {
    "nbits": "MatMulNBits (DequantizeLinear -> MatMul)",
    "packed": "packed projections (MatMuls of one input, weights side by side)",
    "skip": "SkipSimplifiedLayerNormalization / SkipLayerNormalization (residual Add + the norm)",
    "gqa": "GroupQueryAttention (decode-step Attention with the past)",
    "past": "past length from the inputs (past and present may share one buffer)",
}


def rewrite(builder: GraphBuilder, target: OnnxRuntime) -> dict[str, int]:
    """Run the passes over builder.graph in place; returns the count per pass."""
    uses = Uses(builder.graph)
    counts: dict[str, int] = {}

    def run(key: str, count: int) -> None:
        uses.commit()
        if count:
            counts[NAMES[key]] = counts.get(NAMES[key], 0) + count

    run("nbits", matmul_nbits(builder, uses, target.accuracy_level))
    run("packed", packed_projections(builder, uses))
    run("skip", skip_norms(builder, uses))
    run("gqa", group_query_attention(builder, uses, target.max_sequence_length, target.past_length_from))
    if target.past_length_from is not None:
        run("past", past_length_from_inputs(builder, uses, *target.past_length_from))
    cleanup.common_subexpressions(uses)
    uses.commit()
    cleanup.dead_code(uses)
    uses.commit()
    for name, v in list(builder.graph.initializers.items()):
        if uses.count(v) == 0:
            del builder.graph.initializers[name]
    if any(n.domain == DOMAIN for n in builder.graph.nodes):  # made under a rewrite's sub-builder
        builder.graph.opset_imports.setdefault(DOMAIN, 1)
    return counts


# -- helpers ---------------------------------------------------------------------------------------


def _std(node: Node | None, op_type: str) -> bool:
    return node is not None and node.op_type == op_type and node.domain in ("", "ai.onnx")


def _replace_outputs(uses: Uses, pairs: list[tuple[Value, Value]]) -> None:
    for old, new in pairs:
        if old.shape is not None and new.dtype is old.dtype:
            new.set_type(old.dtype, old.shape)  # torch's symbolic dim names
        uses.replace(old, new)


def _remove_if_unread(uses: Uses, nodes: list[Node]) -> None:
    for node in nodes:
        if uses.alive(node) and all(uses.count(o) == 0 for o in node.outputs):
            uses.remove(node)


def _known(shape: tuple | None) -> bool:
    return shape is not None and all(d is not None for d in shape)


# -- 1. MatMulNBits ----------------------------------------------------------------------------------

_NBITS = {types.INT4: (4, 8), types.UINT4: (4, 0), types.INT8: (8, 128), types.UINT8: (8, 0)}  # bits, shift to unsigned


def _pack(u: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned values [..., n] (n even for 4 bits) packed along the last axis: two 4-bit values
    to a byte, the first in the low half (MatMulNBits' layout), or one byte each."""
    u = u.astype(np.uint8)
    if bits == 8:
        return u
    return (u[..., 0::2] & 0xF) | (u[..., 1::2] << 4)


def nbits_weights(q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, block_size: int, bits: int,
                  shift: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """MatMulNBits' B [N, blocks, block_size * bits / 8], scales [N * blocks] and packed zero
    points from DequantizeLinear's q [K, N], scale [blocks, N], zero_point [blocks, N] (blocks
    along K). Signed values are shifted to unsigned by `shift` (MatMulNBits' default zero point,
    2^(bits-1), when there is none); the last block's padding is the zero point (value 0)."""
    k, n = q.shape
    blocks = scale.shape[0]
    padded = np.empty((n, blocks * block_size), np.int32)
    padded[:, :k] = q.astype(np.int32).T + shift  # [N, K], unsigned
    padded[:, k:] = shift if zero is None else zero.astype(np.int32).T[:, -1:] + shift  # value 0
    b = _pack(padded.reshape(n, blocks, block_size), bits)
    scales = np.ascontiguousarray(scale.T).reshape(-1)
    zeros = None
    if zero is not None:
        z = zero.astype(np.int32).T + shift  # [N, blocks]
        if bits == 4 and blocks % 2:
            z = np.concatenate([z, np.zeros((n, 1), np.int32)], axis=1)
        zeros = _pack(z, bits).reshape(-1)
    return np.ascontiguousarray(b), scales, zeros


def _dequantize_parts(w: Value) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int] | None:
    """(q, scale, zero point or None, block_size) when `w` is DequantizeLinear of constants with
    blocks along axis 0 of a 2-D [K, N] q of 4 or 8 bits, a float32 scale of [ceil(K / block),
    N], a zero point of q's type and the scale's shape (or none), and a float32 result."""
    node = w.producer
    if not _std(node, "DequantizeLinear") or len(node.inputs) < 2:  # type: ignore[union-attr]
        return None
    q, scale = node.inputs[0], node.inputs[1]  # type: ignore[union-attr]
    zero = node.inputs[2] if len(node.inputs) > 2 else None  # type: ignore[union-attr]
    block = int(node.attributes.get("block_size", 0))  # type: ignore[union-attr]
    if int(node.attributes.get("axis", 1)) not in (0, -2) or block < 16 or block & (block - 1):  # type: ignore[union-attr]
        return None
    if node.attributes.get("output_dtype", 0) not in (0, types.FLOAT.onnx):  # type: ignore[union-attr]
        return None
    if q is None or scale is None or q.const_value is None or scale.const_value is None or q.dtype not in _NBITS:
        return None
    qa, sa = q.const_value, scale.const_value
    if qa.ndim != 2 or scale.dtype is not types.FLOAT or sa.shape != (-(-qa.shape[0] // block), qa.shape[1]):
        return None
    za = None
    if zero is not None:
        if zero.const_value is None or zero.dtype is not q.dtype or zero.const_value.shape != sa.shape:
            return None
        za = zero.const_value
    return qa, sa, za, block


def matmul_nbits(builder: GraphBuilder, uses: Uses, accuracy_level: int) -> int:
    """MatMul(A, DequantizeLinear(...)) -> MatMulNBits (see _dequantize_parts): A float32 with
    its last dim K (or unknown); the DequantizeLinear stays for any other reader."""
    done = 0
    packed: dict[int, tuple[Value, Value, Value | None]] = {}
    for node in list(uses.graph.nodes):
        if not uses.alive(node) or not _std(node, "MatMul") or len(node.inputs) != 2:
            continue
        a, w = node.inputs
        parts = _dequantize_parts(w) if w is not None else None
        if parts is None or a is None or a.dtype is not types.FLOAT or a.rank is None or a.rank < 2:
            continue
        q, scale, zero, block = parts
        k, n = q.shape
        if isinstance(a.shape[-1], int) and a.shape[-1] != k:  # type: ignore[index]
            continue
        dq = w.producer  # type: ignore[union-attr]
        bits, shift = _NBITS[dq.inputs[0].dtype]  # type: ignore[union-attr,index]
        key = id(dq)
        out = node.outputs[0]

        def build(op: Any, key: int = key) -> Value:
            if key not in packed:
                b, s, z = nbits_weights(q, scale, zero, block, bits, shift)
                base = dq.inputs[0].name.removesuffix("_quantized")  # type: ignore[union-attr]
                packed[key] = (builder.initializer(f"{base}_nbits", b), builder.initializer(f"{base}_nbits_scale", s),
                               None if z is None else builder.initializer(f"{base}_nbits_zero_point", z))  # fmt: skip
            b_v, s_v, z_v = packed[key]
            (y,) = call("MatMulNBits", [a, b_v, s_v, z_v], [(types.FLOAT, out.shape)], K=k, N=n, bits=bits,
                        block_size=block, accuracy_level=accuracy_level)  # fmt: skip
            return y

        y = build_before(builder, uses, node, build)
        _replace_outputs(uses, [(out, y)])
        uses.remove(node)
        _remove_if_unread(uses, [dq])  # type: ignore[list-item]
        done += 1
    return done


# -- 2. packed projections ---------------------------------------------------------------------------


def _float_weight(node: Node) -> np.ndarray | None:
    """The constant 2-D float32 B of a MatMul."""
    if not _std(node, "MatMul") or len(node.inputs) != 2 or node.inputs[1] is None:
        return None
    b = node.inputs[1].const_value
    return b if b is not None and b.ndim == 2 and b.dtype == np.float32 else None


PACK_BUDGET = 256 << 20  # bytes of float weights copied side by side at most (as the folding budget)


def _packed_float(builder: GraphBuilder, a: Value, nodes: list[Node], op: Any) -> list[Value]:
    weights = [n.inputs[1].const_value for n in nodes]  # type: ignore[union-attr]
    sizes = [w.shape[1] for w in weights]  # type: ignore[union-attr]
    name = nodes[0].inputs[1].name.removesuffix("_folded") + "_packed"  # type: ignore[union-attr]
    packed = builder.initializer(name, np.concatenate(weights, axis=1))  # type: ignore[arg-type]
    return list(op.Split(op.MatMul(a, packed), np.array(sizes, np.int64), axis=-1, _outputs=len(sizes)))


def packed_projections(builder: GraphBuilder, uses: Uses, budget: int = PACK_BUDGET) -> int:
    """Readers of one float32 input by MatMul with a constant 2-D float32 weight of the same K
    -> one MatMul and a Split. The input's rank must be known (MatMul reads B as [K, N] for any
    rank of A). The packed weights are new arrays, only within `budget` bytes in all (past it,
    the MatMuls stay apart: a model larger than memory keeps its weights streamed from the
    checkpoint). Quantized weights were packed before, by weight quantization
    (`quantization.packed_projections`): their MatMulNBits is one node already."""
    done = 0
    groups: dict[tuple, list[Node]] = {}
    for node in uses.graph.nodes:
        if not uses.alive(node) or not node.inputs or node.inputs[0] is None:
            continue
        a = node.inputs[0]
        if a.dtype is not types.FLOAT or a.rank is None or a.rank < 2:
            continue
        w = _float_weight(node)
        if w is not None:
            groups.setdefault((id(a), w.shape[0]), []).append(node)
    for nodes in groups.values():
        if len(nodes) < 2:
            continue
        size = sum(n.inputs[1].const_value.nbytes for n in nodes)  # type: ignore[union-attr,misc]
        if size > budget:
            continue
        budget -= size
        first = min(nodes, key=uses.graph.nodes.index)
        a = first.inputs[0]
        if a is None:
            continue
        pack = functools.partial(_packed_float, builder, a, nodes)
        outputs = build_before(builder, uses, first, pack)
        _replace_outputs(uses, [(n.outputs[0], o) for n, o in zip(nodes, outputs)])
        for n in nodes:
            uses.remove(n)
        done += 1
    return done


# -- 3. SkipSimplifiedLayerNormalization ------------------------------------------------------------


def skip_norm_exact(a: Value, b: Value, w: Value, axis: int, stash_type: int, beta: Value | None = None) -> bool:
    """float32 a, b and w (and beta); a and b of the same known shape (no broadcast), rank 2 or 3
    (the kernel's [tokens, hidden] or [batch, sequence, hidden]) with a static last dim; w (and
    beta) 1-D of that size; the norm over the last axis only, computed in float32 (stash_type 1)."""
    if any(v.dtype is not types.FLOAT for v in (a, b, w)) or a.shape is None or b.shape is None:
        return False
    if a.rank not in (2, 3) or tuple(a.shape) != tuple(b.shape) or not _known(a.shape):
        return False
    last = a.shape[-1]
    if beta is not None and (beta.dtype is not types.FLOAT or beta.shape != (last,)):
        return False
    return isinstance(last, int) and w.shape == (last,) and axis in (-1, a.rank - 1) and stash_type == 1  # type: ignore[operator]


def _skip_call(op_type: str, inputs: list[Value], outs: list[tuple[Any, Any]], eps: float, op: Any) -> list[Value]:
    return call(op_type, inputs, outs, epsilon=eps)


def skip_norms(builder: GraphBuilder, uses: Uses) -> int:
    """RMSNormalization(Add(a, b), w) -> SkipSimplifiedLayerNormalization(a, b, w), and
    LayerNormalization(Add(a, b), w, beta) -> SkipLayerNormalization(a, b, w, beta), the sum
    from their fourth output where something else reads it (`skip_norm_exact`; a
    LayerNormalization whose mean or inverse standard deviation is read stays)."""
    done = 0
    for node in list(uses.graph.nodes):
        if not uses.alive(node) or node.domain not in ("", "ai.onnx"):
            continue
        if node.op_type == "RMSNormalization" and len(node.inputs) == 2:
            fused, beta = "SkipSimplifiedLayerNormalization", None
        elif node.op_type == "LayerNormalization" and len(node.inputs) in (2, 3):
            fused, beta = "SkipLayerNormalization", node.inputs[2] if len(node.inputs) == 3 else None
            if any(uses.count(o) for o in node.outputs[1:]):
                continue
        else:
            continue
        x, w = node.inputs[:2]
        add = x.producer if x is not None else None
        if add is None or not _std(add, "Add") or len(add.inputs) != 2 or w is None or x is None:
            continue
        a, b = add.inputs
        axis, eps = int(node.attributes.get("axis", -1)), float(node.attributes.get("epsilon", 1e-5))
        if a is None or b is None or not skip_norm_exact(a, b, w, axis, int(node.attributes.get("stash_type", 1)), beta):
            continue
        y = node.outputs[0]
        sum_read = uses.count(x) > 1
        shape = tuple(a.shape)  # type: ignore[arg-type]
        outs = [(types.FLOAT, y.shape)] + ([(types.FLOAT, None), (types.FLOAT, None), (types.FLOAT, shape)] if sum_read else [])
        inputs = [a, b, w] + ([beta] if beta is not None else [])
        results = build_before(builder, uses, node, functools.partial(_skip_call, fused, inputs, outs, eps))
        for unread in results[1:3]:  # the mean and inverse standard deviation: named, the kernel would write them
            unread.name = ""
        uses.remove(node)
        _replace_outputs(uses, [(y, results[0])] + ([(x, results[3])] if sum_read else []))
        _remove_if_unread(uses, [add])
        done += 1
    return done


# -- 4. GroupQueryAttention --------------------------------------------------------------------------


def _same(a: object, b: object) -> bool:
    return a is not None and a == b


# the index a value holds along one axis: value[..., i (at `axis`, from the end), ...] = i + offset
@dataclasses.dataclass(frozen=True)
class _Index:
    axis: int  # negative: from the last axis
    constant: int
    terms: tuple[Value, ...]  # scalar values added


def _scalar_value(v: Value) -> Value:
    """v without Squeeze / Unsqueeze / Reshape / Cast to an integer type around a one-element value."""
    while v.producer is not None and v.producer.op_type in ("Squeeze", "Unsqueeze", "Reshape", "Cast") and \
            v.producer.domain in ("", "ai.onnx") and v.producer.inputs[0] is not None:
        inner = v.producer.inputs[0]
        if inner.shape is None or any(d != 1 for d in inner.shape) or inner.dtype not in (types.INT64, types.INT32):
            break
        v = inner
    return v


def _one_element(v: Value) -> bool:
    return v.shape is not None and all(d == 1 for d in v.shape) and v.dtype in (types.INT64, types.INT32)


def _index(v: Value, depth: int = 0) -> _Index | None:
    node = v.producer
    if node is None or depth > 12 or node.domain not in ("", "ai.onnx"):
        return None
    if node.op_type == "Range":
        start, delta = node.inputs[0], node.inputs[2]
        if scalar(start) is None or scalar(delta) != 1 or v.rank != 1 or v.dtype not in (types.INT64, types.INT32):
            return None
        return _Index(-1, int(scalar(start)), ())  # type: ignore[arg-type]
    if node.op_type == "Add":
        for x, c in (node.inputs, node.inputs[::-1]):
            if x is None or c is None or not _one_element(c) or v.rank != x.rank:
                continue
            found = _index(x, depth + 1)
            if found is None:
                continue
            number = scalar(c)
            if number is not None:
                return dataclasses.replace(found, constant=found.constant + int(number))
            return dataclasses.replace(found, terms=(*found.terms, _scalar_value(c)))
        return None
    if node.op_type in ("Expand", "Cast") and node.inputs[0] is not None:
        if node.op_type == "Cast" and v.dtype not in (types.INT64, types.INT32):
            return None
        return _index(node.inputs[0], depth + 1)  # both keep axes counted from the end
    if node.op_type == "Unsqueeze" and node.inputs[0] is not None:
        found = _index(node.inputs[0], depth + 1)
        axes, rank = ints(node.inputs[1] if len(node.inputs) > 1 else None), node.inputs[0].rank
        if found is None or axes is None or rank is None:
            return None
        out_rank = rank + len(axes)
        added = {a % out_rank for a in axes}
        kept = [i for i in range(out_rank) if i not in added]
        return dataclasses.replace(found, axis=kept[rank + found.axis] - out_rank)
    return None


def _is_length_of(term: Value, past: Value) -> bool:
    """Whether `term` is the length of `past` along axis 2 (Shape(x)[2] of a value x whose dim 2
    is past's, the same size or symbolic name)."""
    node = term.producer
    if _std(node, "Shape") and node.inputs[0] is not None:  # type: ignore[union-attr]
        start, end = node.attributes.get("start", 0), node.attributes.get("end")  # type: ignore[union-attr]
        x = node.inputs[0]  # type: ignore[union-attr]
        if x.rank != 4 or start not in (2, -2) or end not in (3, -1) or x.shape is None or past.shape is None:
            return False
        return _same(x.shape[2], past.shape[2])
    if _std(node, "Gather") and node.inputs[0] is not None and node.inputs[0].producer is not None:  # type: ignore[union-attr]
        shape = node.inputs[0].producer  # type: ignore[union-attr]
        x = shape.inputs[0]
        if not _std(shape, "Shape") or shape.attributes or x is None or x.rank != 4 or scalar(node.inputs[1]) != 2:  # type: ignore[union-attr]
            return False
        return past.shape is not None and x.shape is not None and _same(x.shape[2], past.shape[2])
    return False


def causal_within(mask: Value, past: Value, queries: object, keys: object) -> bool:
    """Whether the boolean `mask` (broadcast as [..., queries, keys]) keeps no key after its
    query's own position: a constant that holds it (static sizes), or one of its conjuncts (through And, Expand and Unsqueezes of leading
    axes) is `key <= query` (LessOrEqual(k, q) or GreaterOrEqual(q, k)), k being the key index
    (0, 1, ... along the last axis, `keys` of them) and q the query's position (past length + 0,
    1, ... along the axis before, `queries` of them)."""
    if mask.dtype is not types.BOOL:
        return False
    if mask.const_value is not None:  # a constant mask of static sizes, past length static too
        c, past_len = mask.const_value, past.shape[2] if past.shape is not None else None
        if c.ndim < 2 or not isinstance(queries, int) or not isinstance(keys, int) or not isinstance(past_len, int):
            return False
        if c.shape[-2:] != (queries, keys) or keys != past_len + queries:
            return False
        allowed = np.arange(keys)[None, :] <= np.arange(queries)[:, None] + past_len
        return bool(np.all(~c | allowed))
    node = mask.producer
    if node is None or node.domain not in ("", "ai.onnx"):
        return False
    if node.op_type == "And":
        return any(x is not None and causal_within(x, past, queries, keys) for x in node.inputs)
    if node.op_type == "Expand" and node.inputs[0] is not None:
        return causal_within(node.inputs[0], past, queries, keys)
    if node.op_type == "Unsqueeze" and node.inputs[0] is not None:
        axes, rank = ints(node.inputs[1] if len(node.inputs) > 1 else None), node.inputs[0].rank
        if axes is None or rank is None:
            return False
        out_rank = rank + len(axes)
        return all(a % out_rank < out_rank - 2 for a in axes) and causal_within(node.inputs[0], past, queries, keys)
    if node.op_type not in ("LessOrEqual", "GreaterOrEqual") or None in node.inputs:
        return False
    k, q = node.inputs if node.op_type == "LessOrEqual" else node.inputs[::-1]
    ki, qi = _index(k), _index(q)  # type: ignore[arg-type]
    if ki is None or qi is None or k.shape is None or q.shape is None or k.rank < 1 or q.rank < 2:  # type: ignore[union-attr,operator]
        return False
    if (ki.axis, ki.constant, ki.terms) != (-1, 0, ()) or (qi.axis, qi.constant) != (-2, 0) or len(qi.terms) != 1:
        return False
    return _same(k.shape[-1], keys) and _same(q.shape[-2], queries) and _is_length_of(qi.terms[0], past)  # type: ignore[index,union-attr]


_ATTENTION_DEFAULTS = {"is_causal": 0, "qk_matmul_output_mode": 0, "softmax_precision": None}


def gqa_exact(node: Node, uses: Uses) -> tuple[Heads, Heads, Heads, bool] | None:
    """(q, k, v, causal) when GroupQueryAttention computes what `node` does:

    - `node` is Attention(q, k, v, mask, past_key, past_value) with its three outputs (the
      output, present_key, present_value), none of is_causal / qk output modes / softmax
      precision set (scale and softcap carry over);
    - q, k and v are float32 projections [batch, seq, heads * size] with q_num_heads and
      kv_num_heads (the standard optimizer's `attention.heads_inside` writes that form where
      a model splits the heads by Reshape + Transpose and merges them back), q and k maybe
      rotated by a 3-D RotaryEmbedding of those head counts (`heads_of_3d`); the same seq, k
      and v with the same heads and size, q's heads a multiple of theirs; past_key /
      past_value 4-D [batch, kv heads, past, size]; the output [batch, seq, heads * size] is
      GroupQueryAttention's own layout;
    - no mask (then causal=0: every key, as Attention without a mask); or a boolean mask of
      rank 4 [batch or 1, 1, seq, past + seq] proven to keep no key after its query
      (`causal_within`), given as an additive bias (0 / -inf) with causal=1: the kernel's
      causal limit then removes nothing the mask keeps, and a row the mask empties gives zeros
      as Attention's does (a bias without the causal limit would give NaN there, measured);
      or a float32 mask of that rank and layout whose values are finite (`finite_mask`:
      transformers' eager masks, 0 / finfo.min), added as it is with causal=0: every row,
      one the mask empties included, is the same softmax over every key as Attention's.
    Returns the mask kind in `causal`: True for the boolean mask (causal=1), False otherwise.
    """
    if len(node.outputs) != 3 or len(node.inputs) != 6 or node.inputs[4] is None or node.inputs[5] is None:
        return None
    for key, default in _ATTENTION_DEFAULTS.items():
        if node.attributes.get(key, default) != default:
            return None
    q_heads, kv_heads = node.attributes.get("q_num_heads"), node.attributes.get("kv_num_heads")
    q3, k3, v3, mask, pk, pv = node.inputs
    if q_heads is None or kv_heads is None or q3 is None or k3 is None or v3 is None:
        return None
    q, k, v = heads_of_3d(q3, q_heads, True), heads_of_3d(k3, kv_heads, True), heads_of_3d(v3, kv_heads, False)
    if q is None or k is None or v is None or (k.heads, k.size) != (v.heads, v.size) or q.size != k.size:
        return None
    if q.heads % k.heads or not all(_same(x.x3.shape[1], q.x3.shape[1]) for x in (k, v)):  # type: ignore[index]
        return None
    if pk.rank != 4 or pv.rank != 4 or pk.dtype is not types.FLOAT or pv.dtype is not types.FLOAT:  # type: ignore[union-attr]
        return None
    if mask is None:
        return q, k, v, False
    present = node.outputs[1]
    if mask.rank != 4 or mask.shape is None or present.shape is None or mask.shape[1] != 1:
        return None
    if not (_same(mask.shape[2], q.x3.shape[1]) and _same(mask.shape[3], present.shape[2])):  # type: ignore[index]
        return None
    if mask.dtype is types.FLOAT:
        return (q, k, v, False) if finite_mask(mask) else None
    if mask.dtype is not types.BOOL or not causal_within(mask, pk, q.x3.shape[1], present.shape[2]):  # type: ignore[index,arg-type]
        return None
    return q, k, v, True


def _raised_lowest(node: Node) -> Value | None:
    """x when node is attention.torch_lowest_mask's Where(Equal(x, lowest), next float up, x)."""
    test, raised, x = node.inputs
    if test is None or x is None or not _std(test.producer, "Equal") or test.producer.inputs[0] is not x:  # type: ignore[union-attr]
        return None
    lowest, up = scalar(test.producer.inputs[1]), scalar(raised)  # type: ignore[union-attr,arg-type]
    return x if up is not None and lowest == np.finfo(np.float32).min and np.isfinite(up) else None


def finite_mask(mask: Value) -> bool:
    """Whether a float mask holds only finite values: a constant that does, or (through Expand,
    Unsqueeze, Reshape: the same values) Where(c, a, b) of finite one-element constants a, b."""
    if mask.const_value is not None:
        return bool(np.isfinite(mask.const_value).all())
    node = mask.producer
    while node is not None and node.op_type in ("Expand", "Unsqueeze", "Reshape") and _std(node, node.op_type) \
            and node.inputs[0] is not None:
        node = node.inputs[0].producer
    if not _std(node, "Where") or len(node.inputs) != 3:  # type: ignore[union-attr]
        return False
    raised = _raised_lowest(node)  # type: ignore[arg-type]
    if raised is not None:
        return finite_mask(raised)
    numbers = [scalar(v) for v in node.inputs[1:]]  # type: ignore[union-attr]
    return all(n is not None and np.isfinite(n) for n in numbers)


@dataclasses.dataclass
class _FusedRotary:
    """Rotary tables GroupQueryAttention computes itself: row p = cos / sin(p * inv_freq) * scale."""

    inv_freq: np.ndarray  # [size / 2] float32
    scale: float | None
    interleaved: int


def _table_of(cache: Value, function: str) -> tuple[Value, float | None] | None:
    """(f, scale) when `cache` = [Expand of] [Mul(·, one-element float32 scale) of]
    `function`(f) (what the per-batch rotary rule writes)."""
    node = cache.producer
    if _std(node, "Expand"):
        cache = node.inputs[0]  # type: ignore[union-attr,assignment]
        node = cache.producer
    scale = None
    if _std(node, "Mul"):
        numbers = [v for v in node.inputs if v is not None and scalar(v) is not None]  # type: ignore[union-attr]
        others = [v for v in node.inputs if v is not None and scalar(v) is None]  # type: ignore[union-attr]
        if len(numbers) != 1 or len(others) != 1 or numbers[0].dtype is not types.FLOAT:
            return None
        scale, node = scalar(numbers[0]), others[0].producer
    if not _std(node, function) or node.inputs[0] is None:  # type: ignore[union-attr]
        return None
    return node.inputs[0], scale  # type: ignore[union-attr]


def fused_rotary(q: Heads, k: Heads, past: Value) -> _FusedRotary | None:
    """The rotation GroupQueryAttention applies itself (do_rotary) when it is q's and k's: both
    rotated by one RotaryEmbedding each, of the same tables and attributes, no position_ids,
    the whole head (rotary_embedding_dim 0 or the size), a head size that is a multiple of 16
    (the kernel's requirement); cos / sin = Cos / Sin(f) (times the same scale, or not) with
    f = Cast(positions) * inv_freq, inv_freq a float32 constant [size / 2], positions = past
    length + 0, 1, ... along the sequence axis (`_index`): GroupQueryAttention numbers each new
    token from the past's length the same way (seqlens_k)."""
    if q.rotary is None or k.rotary is None or q.size % 16:
        return None
    # the same rotation: the same attributes but num_heads (each its own input's, 3-D)
    qa, ka = ({key: v for key, v in x.rotary.attributes.items() if key != "num_heads"} for x in (q, k))  # type: ignore[union-attr]
    if qa != ka or int(qa.get("rotary_embedding_dim", 0)) not in (0, q.size) or len(q.rotary.inputs) != 3:
        return None
    if len(k.rotary.inputs) != 3:
        return None
    tables = [_table_of(x.rotary.inputs[i], fn) for x in (q, k) for i, fn in ((1, "Cos"), (2, "Sin"))]  # type: ignore[union-attr,arg-type]
    if any(t is None for t in tables) or any(t[0] is not tables[0][0] or t[1] != tables[0][1] for t in tables):  # type: ignore[index]
        return None
    cos = tables[0]
    f = cos[0]  # type: ignore[index]
    mul = f.producer
    if not _std(mul, "Mul") or f.rank != 3 or f.dtype is not types.FLOAT:
        return None
    constants = [v for v in mul.inputs if v is not None and v.const_value is not None]  # type: ignore[union-attr]
    others = [v for v in mul.inputs if v is not None and v.const_value is None]  # type: ignore[union-attr]
    inv = constants[0].const_value if len(constants) == 1 else None
    if inv is None or len(others) != 1 or inv.shape != (q.size // 2,):
        return None
    cast = others[0].producer
    if inv.dtype != np.float32 or not _std(cast, "Cast") or cast.inputs[0] is None:  # type: ignore[union-attr]
        return None
    positions = cast.inputs[0]  # type: ignore[union-attr]
    if positions.dtype not in (types.INT64, types.INT32) or positions.rank != 3:
        return None
    index = _index(positions)
    if index is None or (index.axis, index.constant, len(index.terms)) != (-2, 0, 1):
        return None
    if not _is_length_of(index.terms[0], past):
        return None
    return _FusedRotary(inv, cos[1], int(qa.get("interleaved", 0)))  # type: ignore[index]


def _rotary_tables(op: Any, rotary: _FusedRotary, rows: int | None, total: Value) -> tuple[Any, Any]:
    """cos and sin tables [rows, size / 2] for positions 0 .. rows - 1: constants (computed in
    float64, rounded once), or computed in the graph for the `total` positions of this run."""
    if rows is not None:
        # the angle as the graph computes it (a float32 product), its cos / sin rounded once
        angles = (np.arange(rows, dtype=np.float32)[:, None] * rotary.inv_freq[None, :]).astype(np.float64)
        tables = [np.cos(angles), np.sin(angles)]
        if rotary.scale is not None:
            tables = [t * rotary.scale for t in tables]
        return tuple(t.astype(np.float32) for t in tables)  # type: ignore[return-value]
    positions = op.Cast(op.Range(np.array(0, np.int64), op.Squeeze(total, np.array([0], np.int64)),
                                 np.array(1, np.int64)), to=types.FLOAT.onnx)  # fmt: skip
    angles = op.Mul(op.Unsqueeze(positions, np.array([1], np.int64)), rotary.inv_freq)
    cos, sin = op.Cos(angles), op.Sin(angles)
    if rotary.scale is not None:
        cos, sin = op.Mul(cos, np.float32(rotary.scale)), op.Mul(sin, np.float32(rotary.scale))
    return cos, sin


def _slice_range(x: Value) -> tuple[Value, int, int] | None:
    """(source, start, stop) when x = Slice(source, [start], [stop], [last axis]) with step 1,
    of a 3-D source with a static last dim (stop clamped to it)."""
    node = x.producer
    if not _std(node, "Slice") or node is None or len(node.inputs) < 4:
        return None
    source = node.inputs[0]
    if source is None or source.rank != 3 or source.shape is None or not isinstance(source.shape[2], int):
        return None
    starts, ends, axes = (ints(v) for v in node.inputs[1:4])
    steps = ints(node.inputs[4]) if len(node.inputs) > 4 and node.inputs[4] is not None else [1]
    if starts is None or ends is None or axes not in ([-1], [2]) or steps != [1] or len(starts) != 1 or len(ends) != 1:
        return None
    size = source.shape[2]
    start, stop = starts[0], min(ends[0], size)
    return (source, start, stop) if 0 <= start < stop else None


def _packed_source(q: Value, k: Value, v: Value) -> Value | None:
    """The [batch, seq, (q + k + v) sizes] value when q, k and v are, in that order, the three
    outputs of one Split of it on the last axis, or three Slices of it on the last axis that
    cover it end to end (a model's own packed projection, Phi-3's qkv_proj)."""
    ranges = [_slice_range(x) for x in (q, k, v)]
    if all(r is not None for r in ranges):
        sources = {id(r[0]) for r in ranges}  # type: ignore[index]
        bounds = [(r[1], r[2]) for r in ranges]  # type: ignore[index]
        source = ranges[0][0]  # type: ignore[index]
        total = source.shape[2]  # type: ignore[index]
        if len(sources) == 1 and bounds[0][0] == 0 and bounds[0][1] == bounds[1][0] and bounds[1][1] == bounds[2][0] \
                and bounds[2][1] == total:
            return source
        return None
    node = q.producer
    if not _std(node, "Split") or node is not k.producer or node is not v.producer or len(node.outputs) != 3:  # type: ignore[union-attr]
        return None
    if [q.index, k.index, v.index] != [0, 1, 2] or node.attributes.get("axis", 0) not in (-1, 2):  # type: ignore[union-attr]
        return None
    source = node.inputs[0]  # type: ignore[union-attr]
    return source if source is not None and source.rank == 3 else None


def _conjuncts(mask: Value) -> list[Value]:
    """The boolean values whose And is `mask` (nested Ands flattened)."""
    node = mask.producer
    if _std(node, "And") and len(node.inputs) == 2 and None not in node.inputs:  # type: ignore[union-attr]
        return [c for x in node.inputs for c in _conjuncts(x)]  # type: ignore[union-attr,arg-type]
    return [mask]


def _is_causal_limit(c: Value, past: Value, queries: object, keys: object) -> bool:
    """Whether c is exactly `key <= past + query` (`causal_within`'s LessOrEqual / GreaterOrEqual
    form, through Expand and Unsqueezes of leading axes, which repeat it along other axes):
    the limit GroupQueryAttention's causal=1 applies itself."""
    node = c.producer
    while (_std(node, "Expand") or _std(node, "Unsqueeze")) and node.inputs[0] is not None:  # type: ignore[union-attr]
        node = node.inputs[0].producer  # type: ignore[union-attr]
    if not (_std(node, "LessOrEqual") or _std(node, "GreaterOrEqual")):
        return False
    return causal_within(c, past, queries, keys)


def _holds_position(v: Value, axis: int, depth: int = 0) -> bool:
    """Whether v holds each element's own position (0, 1, 2, ...) along `axis` (counted from
    the end) and nothing else: an integer constant that does, or Range(0, n, 1) moved there by
    Unsqueezes and repeated by Expands that keep that axis' length (a broadcast along it would
    repeat position 0)."""
    node = v.producer
    if depth > 12 or v.rank is None or v.shape is None or not -v.rank <= axis < 0 or v.dtype not in (types.INT64, types.INT32):
        return False
    if v.const_value is not None:
        c = v.const_value
        positions = np.arange(c.shape[axis]).reshape([-1] + [1] * (-axis - 1))
        return c.ndim == v.rank and bool(np.array_equal(c, np.broadcast_to(positions, c.shape)))
    if _std(node, "Range"):
        return axis == -1 and scalar(node.inputs[0]) == 0 and scalar(node.inputs[2]) == 1  # type: ignore[union-attr]
    x = node.inputs[0] if node is not None and node.inputs else None
    if x is None or x.shape is None or x.rank is None:
        return False
    if _std(node, "Expand"):
        return -axis <= x.rank and _same(x.shape[axis], v.shape[axis]) and _holds_position(x, axis, depth + 1)
    if _std(node, "Unsqueeze"):
        axes = ints(node.inputs[1] if len(node.inputs) > 1 else None)  # type: ignore[union-attr]
        if axes is None:
            return False
        added = {a % v.rank for a in axes}
        if (axis % v.rank) in added:
            return False
        kept = [i for i in range(v.rank) if i not in added]
        return _holds_position(x, kept.index(axis % v.rank) - x.rank, depth + 1)
    return False


def key_padding(x: Value) -> Value | None:
    """d when x [B, ..., T] = GatherND(d, indices) holds d[b, k] at every [b, ..., k]: d a 2-D
    boolean [B, T]; indices [B, ..., T, 2] the Concat on the last axis of two [B, ..., T, 1]
    values, the first holding each element's position along the first axis and the second along
    the axis before the last (`_holds_position`); x's first dim d's. transformers' padding mask,
    attention_mask[batch, key], is this. x's last dim must be d's (every index in range, every
    key of d read): the caller proves it (`_same_keys`)."""
    node = x.producer
    if not _std(node, "GatherND") or len(node.inputs) != 2 or int(node.attributes.get("batch_dims", 0)) != 0:  # type: ignore[union-attr]
        return None
    d, indices = node.inputs  # type: ignore[union-attr]
    rank = x.rank
    if d is None or indices is None or d.rank != 2 or d.dtype is not types.BOOL or rank is None or rank < 2:
        return None
    if x.shape is None or d.shape is None or not _same(x.shape[0], d.shape[0]):
        return None
    concat = indices.producer
    if concat is None or not _std(concat, "Concat") or len(concat.inputs) != 2 or concat.attributes.get("axis") not in (-1, rank):
        return None
    parts = list(concat.inputs)  # [..., 1] each: the row's index, then the key's
    if any(u is None or u.rank != rank + 1 or u.shape is None or u.shape[-1] != 1 for u in parts):
        return None
    if not (_holds_position(parts[0], -rank - 1) and _holds_position(parts[1], -2)):  # type: ignore[arg-type]
        return None
    return d


def _same_keys(d: Value, keys: object, query: Value, past: Value, contract: tuple[Value, Value] | None) -> bool:
    """Whether the 2-D mask d [batch, length] has `keys` (past + new) as its length: the same dim,
    or, under the decode step's contract (`past_length_from_inputs`: attention_mask's length is
    the past inputs' plus input_ids'), d is the attention_mask (or its Cast), the past a graph
    input and the query's length input_ids'."""
    if d.shape is not None and _same(d.shape[1], keys):
        return True
    if contract is None or past.producer is not None or past.const_value is not None:
        return False
    if query.shape is None or not _same(query.shape[1], contract[1].shape[1]):  # type: ignore[index]
        return False
    source = d.producer.inputs[0] if _std(d.producer, "Cast") else d  # type: ignore[union-attr]
    return source is contract[0]


def _float_bias(op: Any, mask: Value, query: Value, past: Value,
                contract: tuple[Value, Value] | None) -> tuple[Value, Value | None, Value | None]:
    """(bias, past + new as int64 [1], batch as int64 [1]) for a float mask [., 1, new, past +
    new] that is Where(c, a, b) of a boolean c with transformers' padding conjunct
    (`key_padding`, of the mask's length: `_same_keys`), maybe under torch_lowest_mask's
    raising of b = lowest (`_raised_lowest`; a is then a one-element constant other than
    lowest): the same values as Where(c', a, b'), c' the conjuncts with the padding read from
    the 2-D mask itself, unsqueezed (and expanded to [., 1, new, past + new] unless another
    conjunct has the rows and one the batch), b' the raised value where b was raised. The
    index subgraph of the padding (GatherND and the Range, Expand, Concat it reads) goes, and
    the raising with it. Else (mask, None, None): the mask as it is."""
    node = mask.producer
    raised = None
    if _std(node, "Where") and len(node.inputs) == 3 and _raised_lowest(node) is not None:  # type: ignore[union-attr,arg-type]
        raised, node = node.inputs[1], node.inputs[2].producer  # type: ignore[union-attr]
    if not _std(node, "Where") or len(node.inputs) != 3 or None in node.inputs:  # type: ignore[union-attr]
        return mask, None, None
    c, a, b = node.inputs  # type: ignore[union-attr]
    if c.dtype is not types.BOOL or c.rank != 4 or any(x.rank is None or x.rank > 4 for x in (a, b)):  # type: ignore[union-attr]
        return mask, None, None
    if raised is not None:
        lowest = float(np.finfo(np.float32).min)
        if scalar(a) is None or scalar(a) == lowest or scalar(b) != lowest:
            return mask, None, None
        b = raised
    queries, keys = mask.shape[2], mask.shape[3]  # type: ignore[index]
    parts = _conjuncts(c)  # type: ignore[arg-type]
    paddings = [key_padding(x) for x in parts]
    paddings = [d if d is not None and _same_keys(d, keys, query, past, contract) else None for d in paddings]
    found = [d for d in paddings if d is not None]
    if not found or any(x.rank is None or x.rank > 4 for x in parts):
        return mask, None, None
    kept = None
    for x, d in zip(parts, paddings):
        if d is not None:
            x = op.Unsqueeze(d, np.arange(1, x.rank - 1, dtype=np.int64))  # type: ignore[operator]
        kept = x if kept is None else op.And(kept, x)
    total = op.Shape(found[0], start=-1)
    # the shape the kernel reads: the rows from another conjunct, the batch from any, the keys from the padding
    others = [x for x, d in zip(parts, paddings) if d is None and x.shape is not None]
    full = any(_same(x.shape[2], queries) for x in others) and any(  # type: ignore[index]
        _same(v.shape[0], mask.shape[0]) for v in [*others, *found] if v.shape is not None)  # type: ignore[index]
    if not full:
        kept = op.Expand(kept, op.Concat(np.array([1, 1], np.int64), op.Shape(query, start=1, end=2), total, axis=0))
    batch = op.Shape(found[0], start=0, end=1) if _same(found[0].shape[0], query.shape[0]) else None  # type: ignore[index]
    return op.Where(kept, a, b), total, batch


def _lengths_and_bias(op: Any, mask: Value | None, causal: bool, query: Value, past: Value,
                      contract: tuple[Value, Value] | None) -> tuple[Value, Value, Value | None, Value]:
    """GroupQueryAttention's seqlens_k (past + new - 1 for every row), total_sequence_length
    (past + new, int32 [1]) and attention bias for `gqa_exact`'s mask, and past + new as int64 [1]:

    - a float mask: as it is;
    - a boolean mask (causal=1): a conjunct that is exactly `key <= past + query`
      (`_is_causal_limit`) is left out, the kernel's causal limit being the same; transformers'
      padding conjunct attention_mask[batch, key] (`key_padding`) is read from the 2-D mask
      itself, unsqueezed; what remains is expanded to [., 1, new, past + new] (the shape the
      kernel reads) and made 0 / -inf; nothing remaining: no bias.

    past + new is the mask's last dim, read from the 2-D padding mask where it has that dim (the
    4-D mask is then not computed at all), else from the mask kept, else the past's and the
    query's lengths added."""
    bias: Value | None = mask  # a float mask as it is, or `_float_bias`'s
    total = batch = None
    if mask is not None and mask.dtype is types.FLOAT:
        bias, total, batch = _float_bias(op, mask, query, past, contract)
    if mask is not None and mask.dtype is types.BOOL:
        queries, keys = mask.shape[2], mask.shape[3]  # type: ignore[index]
        parts = _conjuncts(mask)
        rest = [c for c in parts if not _is_causal_limit(c, past, queries, keys)] if causal else parts
        # each conjunct kept, with its 2-D padding mask where it is one of the mask's length
        paddings = [key_padding(c) for c in rest]
        paddings = [d if d is not None and _same_keys(d, keys, query, past, contract) else None for d in paddings]
        lengths = [d if d is not None else c for c, d in zip(rest, paddings)
                   if d is not None or (c.shape is not None and _same(c.shape[-1], keys))]  # fmt: skip
        if len(rest) < len(parts) and all(c.rank is not None and c.rank <= 4 for c in rest) and (lengths or not rest):
            mask = None
            for c, d in zip(rest, paddings):
                if d is not None:
                    c = op.Unsqueeze(d, np.arange(1, c.rank - 1, dtype=np.int64))  # type: ignore[operator]
                    if _same(d.shape[0], query.shape[0]):  # type: ignore[index]
                        batch = op.Shape(d, start=0, end=1)
                mask = c if mask is None else op.And(mask, c)
            if mask is not None:
                total = op.Shape(lengths[0], start=-1)
                new = op.Shape(query, start=1, end=2)
                mask = op.Expand(mask, op.Concat(np.array([1, 1], np.int64), new, total, axis=0))
        bias = None if mask is None else op.Where(mask, np.array(0.0, np.float32), np.array(-np.inf, np.float32))
    if total is None:
        total = op.Shape(bias, start=3, end=4) if bias is not None else op.Add(
            op.Shape(past, start=2, end=3), op.Shape(query, start=1, end=2))  # fmt: skip
    if batch is None:
        batch = op.Shape(query, start=0, end=1)
    total32 = op.Cast(total, to=types.INT32.onnx)  # one Cast for both (a length is below 2^31)
    seqlens = op.Expand(op.Sub(total32, np.array([1], np.int32)), batch)
    # total_sequence_length as the one-element [1] it is: the kernel reads a scalar or a
    # one-element vector alike (`IsScalarOr1ElementVector`), so no Squeeze
    return seqlens, total32, bias, total


def group_query_attention(builder: GraphBuilder, uses: Uses, max_sequence_length: int | None = None,
                          lengths_from: tuple[str, str] | None = None) -> int:
    """Attention over a past -> GroupQueryAttention (gqa_exact), rotating q and k itself where
    `fused_rotary` proves it the same rotation (tables of max_sequence_length rows, or computed
    in the graph), and reading Q, K and V packed where they are one Split's outputs and nothing
    rotates them outside."""
    done = 0
    # (mask, query batch and length, past length) -> (seqlens_k, total_sequence_length, bias),
    # made before the first GroupQueryAttention that reads them, read by every later one alike
    shared: dict[tuple, tuple[Value, Value, Value | None, Value]] = {}
    inputs = {v.name: v for v in uses.graph.inputs}
    contract = None  # (attention_mask, input_ids) under the decode step's contract (`_same_keys`)
    if lengths_from is not None and all(n in inputs and inputs[n].rank == 2 for n in lengths_from):
        contract = (inputs[lengths_from[0]], inputs[lengths_from[1]])
    for node in list(uses.graph.nodes):
        if not uses.alive(node) or not _std(node, "Attention"):
            continue
        found = gqa_exact(node, uses)
        if found is None:
            continue
        q, k, v, causal = found
        _, _, _, mask, pk, pv = node.inputs
        rotary = fused_rotary(q, k, pk)  # type: ignore[arg-type]
        packed = _packed_source(q.x3, k.x3, v.x3) if rotary is not None or (q.rotary is None and k.rotary is None) else None
        attrs: dict[str, Any] = {"num_heads": q.heads, "kv_num_heads": k.heads, "causal": int(causal)}
        if rotary is not None:
            attrs.update(do_rotary=1, rotary_interleaved=rotary.interleaved)
        for key in ("scale", "softcap"):
            if node.attributes.get(key) is not None:
                attrs[key] = float(node.attributes[key])
        present_k, present_v = node.outputs[1], node.outputs[2]

        def build(op: Any) -> list[Value]:
            query = packed if packed is not None else q.x3
            same = (id(mask), q.x3.shape[0], q.x3.shape[1], pk.shape[2] if pk.shape is not None else None)  # type: ignore[index,union-attr]
            if None in same[1:] or same not in shared:  # the first layer's, for every layer alike
                shared[same] = _lengths_and_bias(op, mask, causal, query, pk, contract)  # type: ignore[arg-type]
            seqlens, total32, bias, total = shared[same]
            cos = sin = None
            if rotary is not None and max_sequence_length is not None:  # constants, one pair for every layer
                cos, sin = (builder.constant(t) for t in _rotary_tables(op, rotary, max_sequence_length, total))
            elif rotary is not None:
                cos, sin = _rotary_tables(op, rotary, None, total)
            # packed; or the projections the kernel rotates; or the Attention's own q, k, v (rotated outside)
            qkv = [packed, None, None] if packed is not None else [q.x3, k.x3, v.x3] if rotary is not None else node.inputs[:3]
            heads_out = (q.x3.shape[0], q.x3.shape[1], q.heads * q.size)  # type: ignore[index]
            y, pk_out, pv_out = call("GroupQueryAttention", [*qkv, pk, pv, seqlens, total32, cos, sin, None, bias],
                                     [(types.FLOAT, heads_out), (types.FLOAT, present_k.shape),
                                      (types.FLOAT, present_v.shape)], **attrs)  # fmt: skip
            return [y, pk_out, pv_out]

        results = build_before(builder, uses, node, build)
        _replace_outputs(uses, [(node.outputs[0], results[0]), (present_k, results[1]), (present_v, results[2])])
        uses.remove(node)
        old = [x.rotary for x in (q, k, v) if x.rotary is not None]
        if packed is not None:  # the Split, or the Slices
            old += [x.x3.producer for x in (q, k, v) if x.x3.producer is not None]
        _remove_if_unread(uses, old)
        done += 1
    return done


# -- 5. the past's length from the inputs ----------------------------------------------------------


def _reads_past_length(node: Node) -> bool | None:
    """For a reader of a past tensor [batch, heads, past, size]: True when it reads the past's
    length (Shape over axis 2), False when it reads only other dims (Shape of axis 0, 1 or 3),
    None for any other reader."""
    if not _std(node, "Shape"):
        return None
    rank = 4
    start = int(node.attributes.get("start", 0)) % rank
    end = node.attributes.get("end")
    stop = rank if end is None else int(end) % rank if int(end) < 0 else min(int(end), rank)
    return start <= 2 < stop


def past_readers_share(graph: Any, past: Value) -> bool:
    """Whether a past tensor may be a buffer longer than the past (its past in the first rows):
    it is read only as GroupQueryAttention's past_key / past_value, or by Shapes of its other
    dims."""
    for node in graph.nodes:
        for i, v in enumerate(node.inputs):
            if v is not past:
                continue
            if node.op_type == "GroupQueryAttention" and node.domain == DOMAIN and i in (3, 4):
                continue
            if _reads_past_length(node) is not False:
                return False
    return True


def past_length_from_inputs(builder: GraphBuilder, uses: Uses, total: str, new: str) -> int:
    """Under the decode step's contract that input `total`'s dim 1 is the past's length plus
    input `new`'s dim 1 (attention_mask and input_ids: onnxruntime-genai, optimum and
    `generate` feed them so), every `Shape(past, start=2, end=3)` of a past tensor read by
    GroupQueryAttention becomes `Shape(total)[1] - Shape(new)[1]`. Then, where nothing else reads
    a past tensor's length (`past_readers_share`), the runtime may give a buffer longer than the
    past (the past in its first rows, onnxruntime-genai's past_present_share_buffer):
    GroupQueryAttention reads the past's length from seqlens_k, which comes from the mask.
    Returns how many Shapes were replaced."""
    inputs = {v.name: v for v in uses.graph.inputs}
    if total not in inputs or new not in inputs or inputs[total].rank != 2 or inputs[new].rank != 2:
        return 0
    pasts: dict[int, Value] = {}
    for n in uses.graph.nodes:
        if uses.alive(n) and n.op_type == "GroupQueryAttention" and n.domain == DOMAIN:
            for v in n.inputs[3:5]:
                if isinstance(v, Value) and v.producer is None and v.rank == 4 and inputs.get(v.name) is v:
                    pasts[id(v)] = v
    replaced = 0
    for past in pasts.values():
        for reader in list(uses.of(past)):
            if _reads_past_length(reader) and (reader.attributes.get("start"), reader.attributes.get("end")) in ((2, 3), (-2, -1)):
                length = build_before(builder, uses, reader, lambda op: op.Sub(
                    op.Shape(inputs[total], start=1, end=2), op.Shape(inputs[new], start=1, end=2)))  # fmt: skip
                _replace_outputs(uses, [(reader.outputs[0], length)])
                uses.remove(reader)
                replaced += 1
    return replaced


__all__ = ["ACCURACY_LEVELS", "NAMES", "OnnxRuntime", "past_readers_share", "causal_within", "past_length_from_inputs", "gqa_exact", "key_padding", "matmul_nbits", "nbits_weights",
           "packed_projections", "rewrite", "skip_norm_exact", "skip_norms"]
