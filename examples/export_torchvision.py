"""Export a torchvision model to ONNX with a dynamic batch, save it, and check it against torch.

    python examples/export_torchvision.py            # resnet18 at 224 px -> resnet18.onnx
    python examples/export_torchvision.py --quick    # 32 px (what the test suite runs)
"""

from __future__ import annotations

import argparse

import torch

import torchlib  # before torchvision: where its compiled ops do not load, torchlib stands in for them

# isort: split
import torchvision


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 32 px image instead of 224 px")
    parser.add_argument("-o", "--output", default="resnet18.onnx")
    args = parser.parse_args(argv)
    size = 32 if args.quick else 224

    model = torchvision.models.resnet18(weights=None).eval()  # random weights: nothing is downloaded
    image = torch.randn(1, 3, size, size)
    result = torchlib.export(model, (image,), dynamic_shapes=({0: "batch"},))
    print(result)
    result.save(args.output)

    batch = torch.randn(4, 3, size, size)  # another batch size than the sample's
    for diff in result.verify(batch):
        print(f"{diff.name}: max abs {diff.max_abs:.2e}, max rel {diff.max_rel:.2e}, ok={diff.ok()}")
        assert diff.ok(), diff
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
