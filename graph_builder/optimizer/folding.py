"""Passes that compute at export time what does not depend on the inputs: every node whose
inputs are all constants or weights becomes a new initializer (within a memory budget), and an
inference BatchNormalization after Conv / ConvTranspose / Gemm is folded into their weights."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

import numpy as np
from onnx import defs

from graph_builder import types
from graph_builder.builder import FOLD_LIMIT
from graph_builder.evaluator import EAGER
from graph_builder.ir import Node, Value
from graph_builder.optimizer import regions
from graph_builder.optimizer.editing import Uses, subgraphs
from graph_builder.schema import OpSignature
from graph_builder.weight_sources import is_mapped, release

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder

_NEVER_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
               "Bernoulli", "Dropout", "Constant"}


def set_payload(value: Value, array: np.ndarray) -> None:
    """Give a weight new contents (a new array: the model's own tensors are never written)."""
    value.const_value = array
    value._tensor_proto = None
    value.set_type(types.from_numpy(array.dtype), array.shape)


_SIGNATURES: dict[tuple[str, int], OpSignature | None] = {}


def _signature(builder: GraphBuilder, node: Node) -> OpSignature | None:
    if node.domain not in ("", "ai.onnx"):
        return None
    key = (node.op_type, builder.opset)
    if key not in _SIGNATURES:
        try:
            _SIGNATURES[key] = OpSignature(defs.get_schema(node.op_type, builder.opset, ""), builder.opset)
        except defs.SchemaError:
            _SIGNATURES[key] = None
    return _SIGNATURES[key]


class Growth:
    """How many bytes the weights may still grow by when folding makes a result larger than the
    weights it reads, beyond the SMALL_GROWTH_BYTES any one node may: 2 % of the graph's weights
    when made (swin_t's relative-position biases gathered per head: 1.15 MB on 113 MB, maxvit_t's
    1.4 MB on 124 MB, which the reference exporter stores too). One allowance serves every
    folding pass of an optimization."""

    def __init__(self, builder: GraphBuilder):
        weights = [v.const_value for v in builder.graph.initializers.values() if v.is_parameter]
        self.left = sum(a.nbytes for a in weights if a is not None) // 50

    def fits(self, made: int) -> bool:
        """Whether `take(made)` would allow it (without using the allowance up)."""
        return made <= SMALL_GROWTH_BYTES or made <= self.left

    def take(self, made: int) -> bool:
        """Whether a result of `made` bytes may fold (then it uses up the allowance it needs)."""
        if made <= SMALL_GROWTH_BYTES:
            return True
        if made > self.left:
            return False
        self.left -= made
        return True


def constants(builder: GraphBuilder, uses: Uses, budget_bytes: int = 256 << 20, growth: Growth | None = None) -> int:
    """Replace each node whose inputs are all known (constants, weights, static shapes) by its
    results. A node that reads weights is folded only when its results are no larger than those
    weights (a reordering, a transpose, a scaling: not a Cast to a wider type) or small, in the
    weights' dtype (at most 64 KB a node, a class token expanded over the batch, or within the
    `growth` allowance: 2 % of the model's weights in all), and results count
    against `budget_bytes`; the weights they came from are dropped when nothing else reads them.
    A node that would widen its weights folds with everything after it that is computed from
    weights alone (`_fold_cone`) when what leaves that cone is no larger than its weights: a
    weight standardised in float64 and cast back (timm's StdConv2d) becomes one weight.
    A node is first tried with everything after it computed from constants alone, evaluated in
    one onnxruntime run (`_fold_region`); where that region may not fold as a whole, its nodes
    are taken one by one as above.
    A node that reads no weight (a generator: ConstantOfShape, Range, Trilu of a constant...) is
    folded only when each result has at most FOLD_LIMIT elements (the builder's own trace-time
    folding limit) or the results are no larger than its inputs: a 4096 x 4096 causal mask stays
    the few nodes that make it instead of 64 MB in the file."""
    folded = 0
    growth = Growth(builder) if growth is None else growth
    order = {id(node): i for i, node in enumerate(uses.graph.nodes)}
    alone: set[int] = set()  # nodes of regions that did not fold as a whole
    for node in list(uses.graph.nodes):
        if not uses.alive(node) or not _foldable(node):
            continue
        results = _static_result(node) or _view_result(node)
        if results is None:
            if not all(v is None or v.const_value is not None for v in node.inputs):
                continue
            # every input is None or a constant (checked just above)
            new_bytes = sum(cast(np.ndarray, v.const_value).nbytes for v in node.inputs if v is not None)
            if new_bytes > budget_bytes:
                continue
            if id(node) not in alone:
                region = _fold_region(builder, uses, node, order, budget_bytes, growth, alone)
                if region is not None:
                    budget_bytes -= region[1]
                    folded += region[0]
                    continue
            results = _evaluate(builder, node, [None if v is None else v.const_value for v in node.inputs])
            if results is None:
                continue
            made = sum(r.nbytes for r in results)
            weights = sum(cast(np.ndarray, v.const_value).nbytes for v in node.inputs if v is not None and v.is_parameter)
            if weights and made > weights and not _small_broadcast(node, results, made, growth):
                cone = _fold_cone(builder, uses, node, results, order, budget_bytes, growth)
                if cone is not None:  # e.g. a Cast of bfloat16 weights to float32 stays: the model would grow
                    budget_bytes -= cone[1]
                    folded += cone[0]
                continue
            if not weights and made > new_bytes and any(r.size > FOLD_LIMIT for r in results):
                continue  # a generator (full, triu, arange of a static size) stays a generator
            budget_bytes -= made
        for old, array in zip(node.outputs, results):
            if id(old) in uses.outputs:
                break
        else:
            for old, array in zip(node.outputs, results):
                uses.replace(old, _constant(builder, node, old, np.asarray(array)))
            uses.remove(node)
            folded += 1
    return folded


def _foldable(node: Node) -> bool:
    return node.op_type not in _NEVER_FOLD and not any(True for _ in subgraphs(node))


def _evaluate(builder: GraphBuilder, node: Node, arrays: list) -> list[np.ndarray] | None:
    """The node's results computed by onnxruntime; None for a node it cannot run alone."""
    sig = _signature(builder, node)
    if sig is None:
        return None
    try:
        return EAGER.run_arrays(sig, arrays, node.attributes, len(node.outputs))
    except Exception:  # a node onnxruntime cannot run alone stays a node
        return None
    finally:
        for array in arrays:  # weights mapped from a checkpoint leave memory again
            if array is not None:
                release(array)


def _fold_region(
    builder: GraphBuilder, uses: Uses, first: Node, order: dict[int, int], budget_bytes: int, growth: Growth,
    alone: set[int],
) -> tuple[int, int] | None:
    """Fold `first` (whose inputs are constants) with every node after it computed from
    constants and their own results (`regions.grow`), the values that leave them computed in one
    onnxruntime run (`regions.evaluate`: the bits node-by-node folding gives), when those values
    may replace the region: none is a graph output, and they are no larger than the weights the
    region reads or small in their dtype (`_fold_cone`'s rule), or, where it reads no weight, no
    larger than the constants it reads or at most FOLD_LIMIT elements each (a generator's rule).
    Returns (nodes folded, bytes made), or None with the graph unchanged and the region's nodes
    added to `alone` (folded one by one from then on)."""
    region = regions.grow(uses, first, order, _in_regions, budget_bytes)
    if len(region) < 2:
        return None
    out = regions.leaving(uses, region)
    kept = regions.static_bytes(out)
    read = {id(v): cast(np.ndarray, v.const_value) for node in region for v in node.inputs if v is not None and v.const_value is not None}
    weights = [v for node in region for v in node.inputs if v is not None and v.is_parameter]
    weight_bytes = sum({id(v): cast(np.ndarray, v.const_value).nbytes for v in weights}.values())
    if not out or kept is None or any(id(v) in uses.outputs for v in out):
        fits = False
    elif weights:
        dtypes = {cast(np.ndarray, v.const_value).dtype for node in region for v in _data_weights(node)}
        small = len(dtypes) == 1 and all(v.dtype is not None and np.dtype(v.dtype.numpy) in dtypes for v in out)
        fits = kept <= weight_bytes or (small and growth.fits(kept))
    else:  # static shapes: regions.static_bytes gave their bytes
        fits = kept <= sum(a.nbytes for a in read.values()) or all(math.prod(cast("tuple[int, ...]", v.shape)) <= FOLD_LIMIT
                                                                   for v in out)
    if not fits or kept is None:
        alone.update(id(n) for n in region)
        return None
    arrays = regions.evaluate(region, out, builder.opset)
    if arrays is None:
        alone.update(id(n) for n in region)
        return None
    if weights and kept > weight_bytes:
        growth.take(kept)
    largest = max(weights, key=lambda v: cast(np.ndarray, v.const_value).nbytes, default=None)
    for v, array in zip(out, arrays):
        uses.replace(v, _folded(builder, largest, array))
    for node in region:
        uses.remove(node)
    return len(region), kept


def _in_regions(node: Node) -> bool:
    """What folding evaluates in onnxruntime: a foldable ONNX op, not CastLike (numpy casts it,
    `_static_result`)."""
    return node.domain in ("", "ai.onnx") and node.op_type != "CastLike" and _foldable(node)


def _fold_cone(
    builder: GraphBuilder, uses: Uses, root: Node, results: list[np.ndarray], order: dict[int, int], budget_bytes: int,
    growth: Growth,
) -> tuple[int, int] | None:
    """Fold `root` (whose `results` are larger than the weights it reads) with every node after
    it computed from constants and the cone's own results, when the values that leave the cone
    (read by other nodes) are no larger than the weights the cone reads, or small in their
    dtype (`growth`). Returns (nodes folded, bytes made), or None and the graph unchanged."""
    known: dict[int, np.ndarray] = {id(v): r for v, r in zip(root.outputs, results)}
    cone, tried = [root], {id(root)}
    made = [sum(r.nbytes for r in results)]

    def compute(node: Node) -> bool:
        """Evaluate `node` into `known`, first the producers of its inputs that are computed from
        weights alone (a Cast of another weight made after the root)."""
        if id(node) in tried:
            return all(id(v) in known for v in node.outputs)
        tried.add(id(node))
        if not uses.alive(node) or not _foldable(node) or id(node) not in order:
            return False
        for v in node.inputs:
            if v is None or v.const_value is not None or id(v) in known:
                continue
            if v.producer is None or not compute(v.producer):
                return False
        arrays = [None if v is None else known.get(id(v), v.const_value) for v in node.inputs]
        out = _view(node, arrays) or _evaluate(builder, node, arrays)
        if out is None:
            return False
        made[0] += sum(r.nbytes for r in out)
        cone.append(node)
        known.update((id(v), r) for v, r in zip(node.outputs, out))
        return True

    queue = [n for v in root.outputs for n in uses.of(v)]
    while queue and made[0] <= budget_bytes:
        node = queue.pop(0)
        if id(node) not in tried and compute(node):
            queue.extend(n for v in node.outputs for n in uses.of(v))
    if made[0] > budget_bytes:
        return None
    members = {id(n) for n in cone}
    leaving = [(node, v) for node in cone for v in node.outputs
               if id(v) in uses.outputs or any(id(n) not in members for n in uses.of(v))]
    if any(id(v) in uses.outputs for _, v in leaving):
        return None
    # a parameter is an initializer: it has a const_value
    weights = {id(v): cast(np.ndarray, v.const_value) for node in cone for v in node.inputs if v is not None and v.is_parameter}
    kept = sum(known[id(v)].nbytes for _, v in leaving)
    dtypes = {cast(np.ndarray, v.const_value).dtype for node in cone for v in _data_weights(node)}
    same_dtype = len(dtypes) == 1 and all(known[id(v)].dtype in dtypes for _, v in leaving)
    if kept > sum(a.nbytes for a in weights.values()) and not (same_dtype and growth.take(kept)):
        return None
    for node, v in leaving:
        uses.replace(v, _constant(builder, root, v, np.asarray(known[id(v)])))
    for node in cone:
        uses.remove(node)
    return len(cone), kept


SMALL_GROWTH_BYTES = 1 << 16


_INDEX_INPUTS = {"Gather": 1, "GatherElements": 1, "GatherND": 1}


def _data_weights(node: Node) -> list[Value]:
    """The weights whose values a node's results are made of: not a Gather's index table (an
    int64 buffer of positions does not make a float result a widened weight)."""
    index = _INDEX_INPUTS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
    return [v for i, v in enumerate(node.inputs) if v is not None and v.is_parameter and i != index]


def _small_broadcast(node: Node, results: list[np.ndarray], made: int, growth: Growth) -> bool:
    """A small result in the weights' own dtypes (a class token expanded over the batch): worth
    a node at run time, and it widens no weight."""
    dtypes = {cast(np.ndarray, v.const_value).dtype for v in _data_weights(node)}  # parameters: constants
    # one weight dtype only: DequantizeLinear(int8 weight, float scale) widens the weight
    return len(dtypes) == 1 and all(r.dtype in dtypes for r in results) and growth.take(made)


def _static_result(node: Node) -> list[np.ndarray] | None:
    """Nodes known from types alone: Shape / Size of a static shape, CastLike of a constant."""
    x = node.inputs[0] if node.inputs else None
    if x is None:
        return None
    if node.op_type in ("Shape", "Size") and x.shape is not None and all(type(d) is int for d in x.shape):
        if node.op_type == "Size":
            return [np.array(int(np.prod(cast("tuple[int, ...]", x.shape))), dtype=np.int64)]  # all ints: checked
        start = node.attributes.get("start", 0)
        end = node.attributes.get("end", None)
        return [np.array(x.shape[slice(start, end)], dtype=np.int64)]
    # CastLike's second input is required
    if node.op_type == "CastLike" and x.const_value is not None and (like := cast(Value, node.inputs[1])).dtype is not None:
        return [x.const_value.astype(like.dtype.numpy)]
    return None


def _view_result(node: Node) -> list[np.ndarray] | None:
    """`_view` of a node whose inputs are constants or weights."""
    return _view(node, [None if v is None else v.const_value for v in node.inputs])


def _view(node: Node, arrays: list) -> list[np.ndarray] | None:
    """A Transpose, Reshape, Squeeze, Unsqueeze or Flatten of a known array as a numpy view of
    it (the same values in a new layout: exact): no bytes are copied (they are laid out when the
    model is written, tensor by tensor), so folding every Linear's weight transpose never holds a
    second copy of the weights, and NFNet's weight reshapes cost nothing (onnxruntime copies).
    None for any other node, an input that is not known, or arguments the op rejects (then
    onnxruntime runs it and says so)."""
    if node.op_type not in _VIEWS or not arrays or not all(isinstance(a, np.ndarray) for a in arrays if a is not None):
        return None
    array = arrays[0]
    if array is None:
        return None
    second = arrays[1] if len(arrays) > 1 else None
    if second is not None and (second.dtype != np.int64 or second.ndim != 1):
        return None
    try:
        return [_VIEWS[node.op_type](array, None if second is None else [int(i) for i in second], node.attributes)]
    except (ValueError, IndexError, np.exceptions.AxisError):  # what onnxruntime rejects too
        return None


def _transpose(array: np.ndarray, _: list[int] | None, attributes: dict) -> np.ndarray:
    perm = attributes.get("perm")
    return np.transpose(array, None if perm is None else list(perm))


def _reshape(array: np.ndarray, shape: list[int] | None, attributes: dict) -> np.ndarray:
    """ONNX Reshape: a 0 keeps the input's size at that position (unless allowzero), one -1 is
    inferred."""
    if shape is None or shape.count(-1) > 1 or any(d < -1 for d in shape):
        raise ValueError("not a reshape")
    if not attributes.get("allowzero", 0):
        if any(d == 0 and i >= array.ndim for i, d in enumerate(shape)):
            raise ValueError("no input size to keep")
        shape = [array.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    elif 0 in shape and -1 in shape:
        raise ValueError("allowzero with both 0 and -1")
    return array.reshape(shape)


def _squeeze(array: np.ndarray, axes: list[int] | None, _: dict) -> np.ndarray:
    if axes is None:
        return array.squeeze()
    if any(not -array.ndim <= a < array.ndim for a in axes) or len({a % array.ndim for a in axes}) != len(axes):
        raise ValueError("bad axes")
    return array.squeeze(tuple(axes))


def _unsqueeze(array: np.ndarray, axes: list[int] | None, _: dict) -> np.ndarray:
    rank = array.ndim + len(axes or [])
    if axes is None or any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise ValueError("bad axes")
    return np.expand_dims(array, tuple(axes))


def _flatten(array: np.ndarray, _: list[int] | None, attributes: dict) -> np.ndarray:
    axis = attributes.get("axis", 1)
    if not -array.ndim <= axis <= array.ndim:
        raise ValueError("bad axis")
    axis += array.ndim if axis < 0 else 0
    return array.reshape(int(np.prod(array.shape[:axis], dtype=np.int64)), int(np.prod(array.shape[axis:], dtype=np.int64)))


_VIEWS = {"Transpose": _transpose, "Reshape": _reshape, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Flatten": _flatten}


def _constant(builder: GraphBuilder, node: Node, old: Value, array: np.ndarray) -> Value:
    """A folded result: a weight named after the weight it came from, else a shared constant."""
    return _folded(builder, next((v for v in node.inputs if v is not None and v.is_parameter), None), array)


def _folded(builder: GraphBuilder, weight: Value | None, array: np.ndarray) -> Value:
    """A folded result: a weight named after `weight`, or without one a shared constant."""
    if weight is None:
        return builder.constant(array)
    return builder.initializer(_fresh(builder, weight.name + "_folded"), array)


def _fresh(builder: GraphBuilder, base: str) -> str:
    """A name no value of the graph has yet (left for builder.initializer to take)."""
    taken = builder._root.names
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


_CHANNEL_AXIS = {"Conv": 0, "ConvTranspose": 1, "Gemm": None}


BATCH_NORMS_LEFT = "batch norms not folded (weights mapped from a checkpoint, over the fold budget)"


def batch_norms(builder: GraphBuilder, uses: Uses, mapped_budget_bytes: int = 256 << 20) -> dict[str, int]:
    """Conv / ConvTranspose / Gemm followed by an inference BatchNormalization become one node
    with scaled weights: W' = W * s and b' = (b - mean) * s + beta, s = gamma / sqrt(var + eps),
    computed in float64 and stored in the weight's dtype. A weight mapped from a checkpoint
    (`weight_sources.is_mapped`) has its scaled copy made in memory only within
    `mapped_budget_bytes` (all of them together); past it, the BatchNormalization stays (counted
    under BATCH_NORMS_LEFT), so that an export from a checkpoint stays near one tensor in memory."""
    folded = left = 0
    for bn in list(uses.graph.nodes):
        if not uses.alive(bn) or bn.op_type != "BatchNormalization" or bn.attributes.get("training_mode", 0) or len(bn.outputs) != 1:
            continue
        y, gamma, beta, mean, var = bn.inputs[:5]
        producer = y.producer if y is not None else None
        if producer is None or producer.op_type not in _CHANNEL_AXIS or not _read_only_by(uses, cast(Value, y), bn):
            continue
        if any(v is None or v.const_value is None for v in (gamma, beta, mean, var)):
            continue
        w = producer.inputs[1]
        bias = producer.inputs[2] if len(producer.inputs) > 2 else None
        if w is None or w.const_value is None or uses.count(w) != 1 or (bias is not None and (bias.const_value is None or uses.count(bias) != 1)):
            continue
        if is_mapped(w.const_value):
            if w.const_value.nbytes > mapped_budget_bytes:
                left += 1
                continue
            mapped_budget_bytes -= w.const_value.nbytes
        eps = float(bn.attributes.get("epsilon", 1e-5))
        # gamma, beta, mean and var are constants: checked by the any() above
        s = gamma.const_value.astype(np.float64) / np.sqrt(var.const_value.astype(np.float64) + eps)  # type: ignore[union-attr]
        shift = beta.const_value.astype(np.float64) - mean.const_value.astype(np.float64) * s  # type: ignore[union-attr]
        original = w.const_value
        new_w = _scaled_weight(producer, original, s)
        if new_w is None:
            continue
        b = np.zeros_like(s) if bias is None else cast(np.ndarray, bias.const_value).astype(np.float64)  # checked above
        if b.shape != s.shape:
            continue
        new_b = (b * s + shift).astype(w.const_value.dtype)
        set_payload(w, new_w)  # in the weight's dtype
        if bias is None:
            base = w.name.rsplit(".", 1)[0] + ".bias" if w.name.endswith(".weight") else w.name + "_bias"
            bias = builder.initializer(_fresh(builder, base), new_b)
            while len(producer.inputs) < 3:
                producer.inputs.append(None)
            uses.set_input(producer, 2, bias)
        else:
            set_payload(bias, new_b)
        uses.replace(bn.outputs[0], cast(Value, y))  # y has a producer: not None
        uses.remove(bn)
        folded += 1
        release(original)
    return {k: n for k, n in (("batch norms folded", folded), (BATCH_NORMS_LEFT, left)) if n}


def _read_only_by(uses: Uses, y: Value, bn: Node) -> bool:
    """`y` feeds `bn` and otherwise only Shape / Size (a dynamic dim read off the convolution's
    output: folding changes its values, never its shape), and is no graph output."""
    if id(y) in uses.outputs:
        return False
    readers = uses.of(y)
    return readers.count(bn) == 1 and all(
        r is bn or (r.op_type in ("Shape", "Size") and r.domain in ("", "ai.onnx")) for r in readers)


def _scaled_weight(node: Node, w: np.ndarray, s: np.ndarray) -> np.ndarray | None:
    """W scaled by s along the node's output channels, in W's dtype (see `_times`)."""
    if node.op_type == "Conv":
        if w.shape[0] != s.shape[0]:
            return None
        return _times(w, s.reshape((-1,) + (1,) * (w.ndim - 1)))
    if node.op_type == "ConvTranspose":
        group = int(node.attributes.get("group", 1))
        c_in, c_out_g = w.shape[0], w.shape[1]
        if c_out_g * group != s.shape[0] or c_in % group:
            return None
        grouped = w.reshape((group, c_in // group, c_out_g) + w.shape[2:])
        return _times(grouped, s.reshape((group, 1, c_out_g) + (1,) * (w.ndim - 2))).reshape(w.shape)
    # Gemm: Y = alpha * A' B' + beta * C, channels are the columns of B'
    if node.attributes.get("beta", 1.0) != 1.0 or w.ndim != 2:
        return None
    if node.attributes.get("transB", 0):
        return _times(w, s[:, None]) if w.shape[0] == s.shape[0] else None
    return _times(w, s[None, :]) if w.shape[1] == s.shape[0] else None


def _times(w: np.ndarray, s: np.ndarray) -> np.ndarray:
    """w * s computed in float64 and rounded once to w's dtype. For numpy's own float types the
    ufunc converts w chunk by chunk into its float64 loop and rounds into the result: the same
    bits as `(w.astype(float64) * s).astype(w.dtype)` without two float64 copies of the weight
    (resnet18: 0.2 s of its export); other types (bfloat16) take that path."""
    if w.dtype.kind == "f":
        out = np.empty(np.broadcast_shapes(w.shape, s.shape), w.dtype)
        return np.multiply(w, s, out=out, dtype=np.float64, casting="same_kind")
    return (w.astype(np.float64) * s).astype(w.dtype)
