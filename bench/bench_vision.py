"""Vision models from torchvision and timm (random weights, dynamic batch where torch.export can
keep one: `dynamic_shapes`): node counts of
torchlib's graph (the default, the runtime's native ops, and `exact_nan=True`) against
torch.onnx.export(dynamo=True), onnxruntime latency (1 thread, the three sessions alternated run
by run, median of `--runs` runs: half with the sessions created in that order, half with fresh
ones created in the reverse order, bench_latency.latencies) and export times.

    OMP_NUM_THREADS=1 python bench/bench_vision.py [--models resnet18,...] [--image 64] [--runs 50]
        [--reference-cache DIR] [--distinct-norms]

`--reference-cache DIR` keeps the reference's models (and their export seconds) in DIR, keyed by
model and image size, so that a re-run measures latency without exporting the reference again;
the table then quotes the export seconds of the run that filled the cache.

`--distinct-norms` draws every BatchNorm's running statistics and affine parameters at random
before exporting: randomly initialised models have equal BatchNorm parameters (weight 1, bias 0,
mean 0, var 1) in different modules, which the reference merges into one node where two read the
same input; a trained model's are distinct.

Setup: `pip install --no-deps torchvision==0.28.* timm` (timm's pure dependencies
huggingface_hub, safetensors and pyyaml come with the stack). PyPI's torchvision 0.28 is a CUDA
build whose compiled ops do not load with the CPU torch wheel, and importing torchvision then
fails ("operator torchvision::nms does not exist"). This script therefore first defines
torchvision's operators with ports of its CPU kernels written in torch
(`torchlib.conformance.torchvision_reference.register()`, the conformance table's reference);
the classification models below call none of them.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import onnx
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_latency import latencies  # noqa: E402

import torchlib  # noqa: E402
from graph_builder.progress import progress, write  # noqa: E402
from torchlib.conformance import torchvision_reference  # noqa: E402


def _torchvision(name: str):
    def make():
        import torchvision  # after torchvision_reference.register()

        return getattr(torchvision.models, name)(weights=None)

    return make


def _timm(name: str):
    def make():
        import timm

        return timm.create_model(name, pretrained=False)

    return make


def _raft_small():
    """torchvision's raft_small on two frames stacked on the channel axis (the bench feeds one
    tensor), the last of 4 flow updates (12 by default: 4 keeps the bench's export time low)."""
    import torchvision

    class TwoFrames(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.raft = torchvision.models.optical_flow.raft_small(weights=None)

        def forward(self, frames):
            return self.raft(frames[:, :3], frames[:, 3:], num_flow_updates=4)[-1]

    return TwoFrames()


# (factory, image size it needs at least[, input channels]): one or two per family the issue names
MODELS = {
    "resnet18": (_torchvision("resnet18"), 32),
    "efficientnet_b0": (_torchvision("efficientnet_b0"), 32),
    "mobilenet_v3_small": (_torchvision("mobilenet_v3_small"), 32),
    "regnet_y_400mf": (_torchvision("regnet_y_400mf"), 32),
    "densenet121": (_torchvision("densenet121"), 32),
    "googlenet": (_torchvision("googlenet"), 32),
    "convnext_tiny": (_torchvision("convnext_tiny"), 32),
    "poolformer_s12": (_timm("poolformer_s12"), 32),
    "levit_128": (_timm("levit_128"), 224),
    "eca_nfnet_l0": (_timm("eca_nfnet_l0"), 32),
    "fastvit_t8": (_timm("fastvit_t8"), 64),
    "swin_t": (_torchvision("swin_t"), 224),
    "maxvit_t": (_torchvision("maxvit_t"), 224),
    "raft_small": (_raft_small, 128, 6),
}


# models whose batch torch.export cannot keep dynamic: every exporter gets them with a static batch
# (raft_small: the guard `(3 * batch - 1) // batch == 2`, which holds for every batch but which
# torch's solver specialises to the sample's; torch.export refuses Dim("batch") for it)
STATIC_BATCH = {"raft_small"}


def dynamic_shapes(name: str) -> tuple[dict[int, torch.export.Dim], ...] | None:
    """The dynamic shapes every exporter is given for model `name`: a dynamic batch, or none
    (STATIC_BATCH)."""
    return None if name in STATIC_BATCH else ({0: torch.export.Dim("batch", min=1, max=64)},)


def load(name: str, image: int, distinct_norms: bool = False) -> tuple[torch.nn.Module, tuple, Any]:
    """Model `name` (random weights, seed 0), its sample (batch 2, `image` pixels or the model's
    own minimum) and its dynamic shapes (`dynamic_shapes`)."""
    factory, least, *channels = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    if distinct_norms:
        _distinct_norms(model)
    size = max(image, least)
    return model, (torch.randn(2, channels[0] if channels else 3, size, size),), dynamic_shapes(name)


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _distinct_norms(model: torch.nn.Module) -> None:
    generator = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.affine and m.track_running_stats:
            with torch.no_grad():
                for t, low in ((m.running_mean, -0.5), (m.running_var, 0.5), (m.weight, 0.5), (m.bias, -0.5)):
                    t.copy_(torch.rand(t.shape, generator=generator) + low)


def bench(name: str, image: int, runs: int, cache: Path | None = None, distinct_norms: bool = False) -> dict:
    model, args, dyn = load(name, image, distinct_norms)
    size = args[0].shape[-1]
    row: dict = {"model": name, "image": size}
    with torch.no_grad():  # first, so that every export sees the same module state (timm's levit
        torch_out = model(*args)  # caches its attention biases as plain tensors on its first eval call)
    default, row["export s"] = _timed(lambda: torchlib.export(model, args, dynamic_shapes=dyn))
    exact, row["export s (exact)"] = _timed(lambda: torchlib.export(model, args, dynamic_shapes=dyn, exact_nan=True))
    key = f"{name}_{size}" + ("_distinct_norms" if distinct_norms else "")
    ref, row["reference export s"] = _cached_reference(model, args, dyn, cache, key)
    protos = [default.model_proto, exact.model_proto, ref]
    row["nodes"], row["nodes (exact)"], row["reference nodes"] = (len(p.graph.node) for p in protos)
    row["max abs diff"] = float((default(*args) - torch_out).abs().max())
    row["ms"], row["ms (exact)"], row["reference ms"] = latencies(protos, args, runs)
    return row


def _cached_reference(model, args, dyn, cache: Path | None, key: str):
    """The reference's model and its export seconds, from `cache` when it holds them."""
    model_file, seconds_file = (cache / f"{key}.onnx", cache / f"{key}.json") if cache is not None else (None, None)
    if seconds_file is not None and seconds_file.exists():  # written last: the model beside it is whole
        return onnx.load(str(model_file)), json.loads(seconds_file.read_text())["export s"]
    proto, seconds = _timed(lambda: _reference(model, args, dyn))
    if model_file is not None and seconds_file is not None:
        model_file.parent.mkdir(parents=True, exist_ok=True)
        partial = model_file.with_suffix(".onnx.partial")
        onnx.save(proto, str(partial))
        partial.replace(model_file)
        seconds_file.write_text(json.dumps({"export s": seconds}))
    return proto, seconds


def _reference(model, args, dyn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            return torch.onnx.export(model, args, dynamic_shapes=dyn, dynamo=True, verbose=False).model_proto


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--image", type=int, default=64, help="image size (at least the model's own minimum)")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--reference-cache", type=Path, default=None, help="keep the reference's models here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    parser.add_argument("--distinct-norms", action="store_true", help="random BatchNorm parameters (as trained ones differ)")
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    torchvision_reference.register()
    cols = ["nodes", "nodes (exact)", "reference nodes", "ms", "ms (exact)", "reference ms",
            "export s", "export s (exact)", "reference export s", "max abs diff"]
    print("| model | image | " + " | ".join(cols) + " | nodes / ref (default, exact) | ms / ref (default, exact) |")
    print("|" + "---|" * (len(cols) + 4))
    ratios: list[tuple[float, float]] = []
    for name in progress(ns.models.split(","), desc="models", unit="model", enabled=not ns.no_progress):
        try:
            r = bench(name, ns.image, ns.runs, ns.reference_cache, ns.distinct_norms)
        except Exception as e:  # one model's failure is a row, not the end of the table
            write(f"| {name} | failed: {type(e).__name__}: {str(e).splitlines()[0][:200]} |")
            continue
        ratios.append((r["ms"] / r["reference ms"], r["ms (exact)"] / r["reference ms"]))
        cells = [f"{r[c]:.3g}" if isinstance(r[c], float) else str(r[c]) for c in cols]
        write(f"| {name} | {r['image']} | " + " | ".join(cells)
              + f" | {r['nodes'] / r['reference nodes']:.2f}, {r['nodes (exact)'] / r['reference nodes']:.2f}"
              + f" | {ratios[-1][0]:.2f}, {ratios[-1][1]:.2f} |")
    if ratios:
        geo = [math.exp(statistics.fmean(math.log(r[i]) for r in ratios)) for i in (0, 1)]
        print(f"\ngeomean latency / reference: {geo[0]:.3f} (default), {geo[1]:.3f} (exact_nan=True)")


if __name__ == "__main__":
    main()
