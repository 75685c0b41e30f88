"""transformers' own operators (`torch.library.custom_op`), as torch.export records them.

transformers 5.x registers `transformers::grouped_mm_fallback` (integrations/moe.py, the
mixture-of-experts grouped matmul when `torch._grouped_mm` is not used: float32 weights on CPU)
and its backward `transformers::grouped_mm_fallback_backward`; integrations/msa_attention.py
registers `transformers_msa::sparse_atten` (a CUDA kernel's wrapper, not translated here).

grouped_mm_fallback(input (S, K), weight (G, K, N), offs (G,)) -> (S, N): rows
[offs[g-1], offs[g]) of the output are those rows of input times weight[g], the rest zeros, as
the op's loop does (offs non-decreasing, as transformers' router builds them). Written as the loop
unrolled over the G experts (G is a weight's static dim): each expert's rows by Range + Gather,
one MatMul each, a Concat, then the zero rows past offs[-1]; every row is computed once.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops._helpers import n_outputs
from torchlib.registry import aten_op


@aten_op("transformers::grouped_mm_fallback")
def transformers_grouped_mm_fallback(input: TFloat, weight: TFloat, offs: TInt) -> TFloat:
    """grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor"""
    groups = weight.shape[0] if weight.shape is not None else None
    if not isinstance(groups, int):
        raise ValueError("transformers::grouped_mm_fallback: the number of experts (weight.shape[0]) must be static; "
                         "it is a weight's dim in transformers' MoE layers: export with the experts' weights as "
                         "parameters, not inputs")  # fmt: skip
    zero = op.Constant(value=np.array(0, np.int64))
    one = op.Constant(value=np.array(1, np.int64))
    ends = op.Cast(offs, to=7)
    weights = n_outputs(op.Split(weight, axis=0, num_outputs=groups), groups) if groups > 1 else [weight]
    parts = []
    start = zero
    for g in range(groups):
        end = op.Gather(ends, op.Constant(value=np.array(g, np.int64)), axis=0)
        rows = op.Range(start, end, one)
        parts.append(op.MatMul(op.Gather(input, rows, axis=0), op.Squeeze(weights[g], [0])))
        start = end
    total = op.Gather(op.Shape(input), zero, axis=0)
    width = op.Shape(weight, start=2, end=3)
    tail_shape = op.Concat(op.Unsqueeze(op.Sub(total, start), [0]), width, axis=0)
    parts.append(op.Expand(op.CastLike(0, input), tail_shape))
    return op.Concat(*parts, axis=0)
