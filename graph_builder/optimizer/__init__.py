"""The export-time optimizer: ONNX-to-ONNX passes over a graph being built.

    report = optimize(builder)      # before builder.to_model()

Passes, in order: fold what depends only on constants and weights (within a memory budget;
generators stay generators above FOLD_LIMIT elements), drop identities and Transpose pairs, fold
inference BatchNormalization into the Conv / Gemm before it, fuse formulas into newer operators
(RMSNormalization, Gelu, RotaryEmbedding, Gemm: each rule from its operators' opset on, and only
where its preconditions are proven), write a mid-sized `Attention` as MatMul / Softmax (faster
in onnxruntime there), let `Attention` read grouped KV heads, its past, and the 3-D projections
whose heads a model splits and merges around it, merge common subexpressions, remove dead nodes, unused optional outputs
and unused weights, and give Conv its kernel_shape. It knows ONNX, never ATen; new nodes keep
the metadata (ATen op, module, source line) of what they replace. `record()` counts what each
pass and rule did (the optimizer fuzzer's hits).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from graph_builder.optimizer import attention, cleanup, folding, fusions, onnxruntime, pattern
from graph_builder.optimizer.editing import Uses
from graph_builder.optimizer.pattern import Rule, Var

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder
    from graph_builder.ir import Node

__all__ = ["Rule", "Var", "optimize", "optimize_for_onnxruntime", "record"]

_RECORDERS: list[Counter[str]] = []
_NOT_COUNTS = ("nodes before", "nodes after", "seconds")


@contextlib.contextmanager
def record() -> Iterator[Counter[str]]:
    """Count what every `optimize` call inside the block does, per pass and per rule (the
    optimizer fuzzer proves with it that it exercises each rewrite):

        with record() as hits:
            torchlib.export(model, args)
        hits["RotaryEmbedding (rotate-half)"]
    """
    hits: Counter[str] = Counter()
    _RECORDERS.append(hits)
    try:
        yield hits
    finally:
        _RECORDERS.remove(hits)


def optimize(builder: GraphBuilder, rules: list[Rule] | None = None, fold_budget_bytes: int = 256 << 20,
             merged: Callable[[Node, Node], None] | None = None) -> dict[str, int | float]:
    """Optimize `builder.graph` in place; returns what each pass did (counts) and the seconds taken.
    `merged(kept, dropped)` is told of each node merged into another by the common-subexpression
    pass (the outlining of module calls puts the kept node where both were made)."""
    start = time.perf_counter()
    graph = builder.graph
    uses = Uses(graph)
    report: dict[str, int | float] = {"nodes before": len(graph.nodes)}

    def run(name: str, count: int | dict[str, int]) -> None:
        uses.commit()
        if isinstance(count, dict):
            for k, v in count.items():
                report[k] = report.get(k, 0) + v
        elif count:
            report[name] = report.get(name, 0) + count

    growth = folding.Growth(builder)  # one allowance for both folding passes
    run("constants folded", folding.constants(builder, uses, fold_budget_bytes, growth))
    run("identities removed", cleanup.identities(uses))
    run("reshapes merged", cleanup.reshape_chains(builder, uses))
    run("identities removed", cleanup.identities(uses))  # a merged Reshape to its input's own shape
    run("batch norms folded", folding.batch_norms(builder, uses, fold_budget_bytes))
    if rules is None:  # before the grouped-heads rule, which reads the Attention it makes
        run("fused", pattern.rewrite(builder, uses, attention.SOFTCAP))
    chosen = [*fusions.RULES, *attention.UNFUSE, *attention.GQA] if rules is None else rules
    run("fused", pattern.rewrite(builder, uses, chosen))  # each rule from its operators' opset on
    if rules is None:  # on the Attention nodes the GQA rule made, once what read the repeats is gone
        run("dead nodes removed", cleanup.dead_code(uses))  # (and what read a packed projection)
        run("fused", pattern.rewrite(builder, uses, [*attention.PAST, *attention.BATCH_FIRST]))
        run("dead nodes removed", cleanup.dead_code(uses))  # the sequence-first attention it replaced
        run("fused", pattern.rewrite(builder, uses, attention.UNFUSE_LEFT))  # what BATCH_FIRST did not take
        run(attention.HEADS_INSIDE, attention.heads_inside(builder, uses))  # on the Attentions with their past
    run("identities removed", cleanup.identities(uses))  # e.g. the key's Transpose pair after unfusing
    run("constants folded", folding.constants(builder, uses, fold_budget_bytes, growth))
    run("common subexpressions merged", cleanup.common_subexpressions(uses, merged))
    run("dead nodes removed", cleanup.dead_code(uses))
    run("unused outputs dropped", cleanup.unused_outputs(uses, builder.opset))
    run("unused weights removed", _unused_initializers(uses))
    run("kernel_shape added", cleanup.kernel_shapes(uses))
    report["nodes after"] = len(graph.nodes)
    report["seconds"] = round(time.perf_counter() - start, 4)
    for hits in _RECORDERS:
        hits.update({k: int(v) for k, v in report.items() if k not in _NOT_COUNTS})
    return report


def _unused_initializers(uses: Uses) -> int:
    graph = uses.graph
    unused = [name for name, v in graph.initializers.items() if uses.count(v) == 0]
    for name in unused:
        del graph.initializers[name]
    return len(unused)


def optimize_for_onnxruntime(builder: GraphBuilder, target: onnxruntime.OnnxRuntime) -> dict[str, int]:
    """target="onnxruntime": the contrib-op rewrites (onnxruntime.py), after `optimize` and
    weight quantization; returns (and `record()` counts) what each did."""
    counts = onnxruntime.rewrite(builder, target)
    for hits in _RECORDERS:
        hits.update(counts)
    return counts
