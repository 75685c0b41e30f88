"""onnx's bundled model files (onnx/backend/test/data/light: AlexNet, DenseNet-121, Inception v1
and v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; opsets 7-9, weights as
ConstantOfShape fills) through the importer, on the input onnx's backend runner gives them (a
ramp over [0, 1)): the output matches the file's stored expected output and onnxruntime."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from torchlib.importer import import_onnx

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx"))


def _ramp(vi: onnx.ValueInfoProto) -> np.ndarray:
    """onnx's backend runner's dummy input for a light model (generate_dummy_data, random=False)."""
    shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in vi.type.tensor_type.shape.dim)
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def run_light_model(name: str) -> dict[str, float]:
    """Imports and runs one light model; its max abs differences from the stored output and from
    onnxruntime, and the seconds each took."""
    path = LIGHT / f"light_{name}.onnx"
    model = onnx.load(str(path))
    initialized = {t.name for t in model.graph.initializer}
    feeds = {vi.name: _ramp(vi) for vi in model.graph.input if vi.name not in initialized}
    start = time.perf_counter()
    gm = import_onnx(path)
    with torch.no_grad():
        got = gm(*[torch.from_numpy(v) for v in feeds.values()])
    torch_s = time.perf_counter() - start
    start = time.perf_counter()
    (want,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    ort_s = time.perf_counter() - start
    stored = onnx.numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb")))
    assert tuple(got.shape) == want.shape == stored.shape
    return {"vs_stored": float(np.abs(got.numpy() - stored).max()), "vs_ort": float(np.abs(got.numpy() - want).max()),
            "scale": float(np.abs(stored).max()), "import_and_run_s": torch_s, "ort_s": ort_s}  # fmt: skip


def test_all_light_models_found():
    assert len(MODELS) == 9, MODELS


@pytest.mark.parametrize("name", MODELS)
def test_light_model(name):
    result = run_light_model(name)
    tol = 1e-4 * max(result["scale"], 1.0)
    assert result["vs_stored"] <= tol and result["vs_ort"] <= tol, result


if __name__ == "__main__":  # the table in docs/importer.md
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}, torch {torch.__version__}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print("| model | max abs err vs stored output | max abs err vs onnxruntime | max abs output |")
    print("|---|---|---|---|")
    for model_name in MODELS:
        r = run_light_model(model_name)
        print(f"| {model_name} | {r['vs_stored']:.1e} | {r['vs_ort']:.1e} | {r['scale']:.2g} |")
