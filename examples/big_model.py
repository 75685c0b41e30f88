"""A model bigger than memory: build it on the meta device (shapes only, no data), export it
with its weights taken from a safetensors checkpoint (mapped, never read whole), and save the
ONNX model with its weights streamed to external data, one tensor in memory at a time.

The checkpoint here is written by the script (random weights, tensor by tensor); with a real
model, point `weights=` at its `.safetensors` file(s) or folder. docs/big_models.md has the
7 B-parameter run (25 GiB of float32 weights saved at a peak RSS of 1.37 GiB).

    python examples/big_model.py                        # hidden 4096, 8 blocks: 1.0 GiB of weights
    python examples/big_model.py --hidden 8192 --blocks 40   # 20 GiB: more than many machines' memory
    python examples/big_model.py --quick                # hidden 64, 2 blocks (what the test suite runs)
"""

from __future__ import annotations

import argparse
import resource
from pathlib import Path

import numpy as np
import torch

import torchlib
from graph_builder.weight_sources import write_safetensors


class Block(torch.nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden)
        self.up = torch.nn.Linear(hidden, hidden)
        self.down = torch.nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


class Model(torch.nn.Module):
    def __init__(self, hidden: int, blocks: int) -> None:
        super().__init__()
        self.blocks = torch.nn.Sequential(*(Block(hidden) for _ in range(blocks)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def write_checkpoint(model: torch.nn.Module, path: Path) -> None:
    """A stand-in for a downloaded checkpoint: random float32 weights, written one tensor at a time."""
    specs = {name: (np.float32, tuple(t.shape)) for name, t in model.state_dict().items()}
    rng = np.random.default_rng(0)

    def arrays():
        for _, shape in specs.values():
            yield (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)).astype(np.float32)

    write_safetensors(path, specs, arrays())


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kilobytes on Linux


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="hidden 64, 2 blocks")
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("-o", "--output", type=Path, default=Path("big_model"), help="folder for checkpoint and model")
    args = parser.parse_args(argv)
    hidden, blocks = (64, 2) if args.quick else (args.hidden, args.blocks)
    args.output.mkdir(parents=True, exist_ok=True)
    checkpoint = args.output / "model.safetensors"

    with torch.device("meta"):  # no memory for the weights
        model = Model(hidden, blocks).eval()
    if not checkpoint.exists():
        write_checkpoint(model, checkpoint)
    print(f"checkpoint {checkpoint}: {checkpoint.stat().st_size / 2**30:.3f} GiB")

    x = torch.randn(2, hidden)
    result = torchlib.export(model, (x,), dynamic_shapes=({0: "batch"},), weights=str(checkpoint))
    onnx_path = args.output / "model.onnx"
    data_path = result.save(onnx_path, external_data=True)  # weights streamed from the checkpoint
    print(f"saved {onnx_path} and {data_path}; peak RSS {peak_rss_gib():.2f} GiB")

    if args.quick:  # verify runs torch on the checkpoint's tensors: cheap only for a small model
        for diff in result.verify(torch.randn(3, hidden)):
            print(f"{diff.name}: max abs {diff.max_abs:.2e}, ok={diff.ok()}")
            assert diff.ok(), diff


if __name__ == "__main__":
    main()
