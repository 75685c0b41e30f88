"""torchvision's detection models (random weights, calibrated BatchNorm, low score thresholds:
torchlib/conformance/detection_models.py): torchlib.export against torch.onnx.export(dynamo=True),
export time, node count, whether the exported model matches torch at the sample image and at a
second image (detections compared as sets, within 1e-3).

    OMP_NUM_THREADS=1 python bench/bench_detection.py [--models fasterrcnn_mobilenet_v3_large_320_fpn,...] [--no-reference]

Setup: `pip install --no-deps torchvision==0.28.*`; torchvision's operators are defined with the
torch ports of its CPU kernels (`torchvision_reference.register()`), see bench/bench_vision.py.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torchlib  # noqa: E402
from graph_builder.progress import progress, write  # noqa: E402
from torchlib.conformance import torchvision_reference  # noqa: E402
from torchlib.conformance.detection_models import MODELS, NEAR_TIE_SWAPS, build, image, match  # noqa: E402
from torchlib.exporter import torchvision_capture  # noqa: E402


def _ours(model, sample):
    result = torchlib.export(model, (sample,), check=False)
    return result, len(result.model_proto.graph.node), lambda images: result(images)[0], result.capture_strategy


def _reference(model, sample):
    import onnxruntime as ort

    program = torch.onnx.export(model, (sample,), dynamo=True, verbose=False)
    proto = program.model_proto
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]

    def run(images):
        outs = session.run(None, dict(zip(names, [t.numpy() for t in images])))
        return dict(zip(("boxes", "labels", "scores", "masks"), (torch.from_numpy(o) for o in outs)))

    return program, len(proto.graph.node), run, "torch.onnx"


def _reference_with_stand_ins(model, sample):
    """torch.onnx.export with torchlib's capture stand-ins for torchvision's Python (torchvision_capture.py)."""
    with torchvision_capture.patched():
        return _reference(model, sample)


def bench(name: str, exporter) -> str:
    model = build(name)
    size = MODELS[name][0]
    sample, other = [image(size, 0)], [image(size, 1)]
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, nodes, run, how = exporter(model, sample)
    except Exception as e:  # noqa: BLE001  (a failure is a row of the table)
        cause = e
        while cause.__cause__ is not None:  # torch.onnx wraps torch.export's error
            cause = cause.__cause__
        return f"| {name} | {exporter.__name__[1:]} | failed: {type(cause).__name__}: {str(cause).splitlines()[0][:150]} | | | |"
    seconds = time.perf_counter() - start
    cells = []
    for images in (sample, other):
        with torch.no_grad():
            expected = model(images)[0]
        swaps = 0
        try:
            got = run(images)
            if "masks" in expected and "masks" not in got:
                expected = {k: v for k, v in expected.items() if k != "masks"}
            problem = match(expected, got)
            if problem is not None:  # the fewest near-tie swaps allowed for this model that match
                swaps = next((s for s in range(1, NEAR_TIE_SWAPS.get(name, 0) + 1)
                              if match(expected, got, swaps=s) is None), 0)
                problem = None if swaps else problem
        except Exception as e:  # noqa: BLE001
            problem = f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"
        swapped = f", {swaps} swapped at near ties (match's `swaps`)" if swaps else ""
        cells.append(f"ok ({expected['scores'].numel()} detections{swapped})" if problem is None else problem)
    return f"| {name} | {exporter.__name__[1:]} ({how}) | {seconds:.1f} s | {nodes} | {cells[0]} | {cells[1]} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    args = parser.parse_args()
    torchvision_reference.register()
    print("| model | exporter | export time | nodes | sample image | second image |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in progress(args.models.split(","), desc="models", unit="model", enabled=not args.no_progress):
        for exporter in (_ours,) if args.no_reference else (_ours, _reference, _reference_with_stand_ins):
            write(bench(name, exporter))


if __name__ == "__main__":
    main()
