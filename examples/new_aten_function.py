"""Write a new ATen function (`aten::renorm`, which torchlib has no function for yet), check it
on torch's OpInfo samples eagerly and traced, then export a model that calls it.

In the library, the function goes in `torchlib/ops/<family>.py` with `@aten_op("aten::renorm")`
and an entry in `tests/opinfo/table/<family>.py`; `python -m torchlib conformance --ops
aten_renorm` then runs it on every sample (CONTRIBUTING.md). Here it stays in this file.

    python examples/new_aten_function.py            # float32 and float64 samples
    python examples/new_aten_function.py --quick    # float32 only (what the test suite runs)
"""

from __future__ import annotations

import argparse
import math

import torch
from torch.testing._internal.common_methods_invocations import op_db

import torchlib
from graph_builder import op
from torchlib.testing import check_function


def aten_renorm(self, p: float, dim: int, maxnorm: float):
    """renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor"""
    # Each slice along `dim` whose p-norm exceeds maxnorm is scaled down to it (torch's kernel:
    # factor maxnorm / (norm + 1e-7) where norm > maxnorm, else 1).
    rank = len(self.shape)
    others = [d for d in range(rank) if d != dim % rank]
    magnitude = op.Abs(self)
    if p == math.inf:
        norm = op.ReduceMax(magnitude, others, keepdims=1)
    elif p == 1:
        norm = op.ReduceSum(magnitude, others, keepdims=1)
    else:
        norm = op.Pow(op.ReduceSum(op.Pow(magnitude, p), others, keepdims=1), 1.0 / p)
    factor = op.Where(op.Greater(norm, maxnorm), op.Div(maxnorm, op.Add(norm, 1e-7)), 1.0)
    return op.Mul(self, factor)


def check_on_opinfo(dtypes: list[torch.dtype]) -> int:
    """Every OpInfo sample of `renorm`, eagerly (each ONNX op in onnxruntime) and traced (one graph)."""
    info = next(o for o in op_db if o.name == "renorm")
    count = 0
    for dtype in dtypes:
        for sample in info.sample_inputs("cpu", dtype):
            expected = torch.renorm(sample.input, *sample.args, **sample.kwargs)
            check_function(aten_renorm, (sample.input, *sample.args), sample.kwargs, expected=expected)
            count += 1
    return count


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.renorm(x, p=2, dim=0, maxnorm=1.0) * 3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="float32 samples only")
    args = parser.parse_args(argv)
    dtypes = [torch.float32] if args.quick else [torch.float32, torch.float64]
    print(f"aten_renorm: {check_on_opinfo(dtypes)} OpInfo samples pass, eager and traced")

    x = torch.randn(4, 5)
    result = torchlib.export(Model().eval(), (x,), functions={torch.ops.aten.renorm.default: aten_renorm})
    print([node.op_type for node in result.model_proto.graph.node])
    for diff in result.verify(torch.randn(4, 5)):
        print(f"{diff.name}: max abs {diff.max_abs:.2e}, ok={diff.ok()}")
        assert diff.ok(), diff


if __name__ == "__main__":
    main()
