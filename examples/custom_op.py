"""A model that calls your own `torch.library` op: give the op an ONNX function written with the
`op` namespace, export, and check the result against torch.

    python examples/custom_op.py            # -> custom_op.onnx
    python examples/custom_op.py --quick    # the same (it is already small)
"""

from __future__ import annotations

import argparse

import torch

import torchlib
from graph_builder import op


@torch.library.custom_op("examples::scaled_tanh", mutates_args=())
def scaled_tanh(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.tanh(x) * scale


@scaled_tanh.register_fake
def _(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.empty_like(x)


def scaled_tanh_onnx(x, scale):
    """The op's ONNX function: its inputs are graph values (dtype and shape known), scale a float."""
    return op.Mul(op.Tanh(x), scale)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.examples.scaled_tanh(self.fc(x), 2.0) + 1


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="accepted for symmetry with the other examples")
    parser.add_argument("-o", "--output", default="custom_op.onnx")
    args = parser.parse_args(argv)

    x = torch.randn(3, 4)
    # functions= gives the op its function for this export; `@aten_op("examples::scaled_tanh")` from
    # torchlib.registry would register it for every export instead.
    result = torchlib.export(Model().eval(), (x,), functions={torch.ops.examples.scaled_tanh.default: scaled_tanh_onnx})
    print([node.op_type for node in result.model_proto.graph.node])
    result.save(args.output)
    for diff in result.verify(torch.randn(3, 4)):
        print(f"{diff.name}: max abs {diff.max_abs:.2e}, ok={diff.ok()}")
        assert diff.ok(), diff


if __name__ == "__main__":
    main()
