"""Round trips: torchlib.export -> import_onnx (compared with torch) -> torchlib.export again
(compared in onnxruntime), with the node counts of each ONNX model. The demo models at one size;
a transformers Llama decode step with its KV cache (dynamic batch, sequence and past: compared at
two sizes, the re-export with the same dynamic dims); a torchvision detector (random weights,
calibrated; compared at two images as sets of detections).

    OMP_NUM_THREADS=1 nice -n 5 python bench/bench_import_round_trip.py [--no-detection]
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import torchlib  # noqa: E402
from torchlib.conformance import round_trip_models as rt  # noqa: E402
from torchlib.exporter import demo_models  # noqa: E402
from torchlib.importer import import_onnx  # noqa: E402


def encoder() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2), (torch.randn(2, 5, 16),)


MODELS = {"CNN (demo resnet)": demo_models.resnet, "LSTM (demo)": demo_models.lstm_model,
          "TransformerEncoder": encoder, "GPT (demo rms_rope_decoder)": demo_models.rms_rope_decoder}


def _fx_nodes(gm: torch.fx.GraphModule) -> int:
    return sum(1 for n in gm.graph.nodes if n.op == "call_function")


def _ort(proto: Any, args: list[torch.Tensor]) -> list[np.ndarray]:
    session = ort.InferenceSession(proto.SerializeToString())
    return session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})


def demo_row(name: str, factory: Any) -> str:
    torch.manual_seed(0)
    model, args = factory()
    model.eval()
    proto = torchlib.export(model, args).model_proto
    with torch.no_grad():
        want = model(*args)
    want_l = list(want) if isinstance(want, tuple) else [want]
    gm = import_onnx(proto)
    with torch.no_grad():
        got = gm(*args)
    got_l = list(got) if isinstance(got, tuple) else [got]
    err = max(float((a - b).abs().max()) for a, b in zip(got_l, want_l))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = torchlib.export(gm, args).model_proto
    draft = any("draft_export" in str(w.message) for w in caught)
    err2 = max(float(np.abs(o - w.numpy()).max()) for o, w in zip(_ort(again, list(args)), want_l))
    return (f"| {name} | {len(proto.graph.node)} | {_fx_nodes(gm)} | {err:.1e} | {len(again.graph.node)} | {err2:.1e} | "
            f"{'draft_export (sample path only)' if draft else 'torch.export'} |")


def llama_row() -> str:
    """The decode step at (batch 2, sequence 3, past 5) and (3, 1, 9): a prompt on a past, a decode step."""
    model = rt.llama()
    proto = rt.export_decode_step(model).model_proto
    gm = import_onnx(proto)
    sizes = [rt.decode_inputs(2, 3, 5, 1), rt.decode_inputs(3, 1, 9, 2)]
    err = err2 = 0.0
    again = torchlib.export(gm, tuple(sizes[0]), dynamic_shapes=rt.decode_dynamic_shapes()).model_proto
    for flat in sizes:
        want = rt.decode_reference(model, flat)
        with torch.no_grad():
            got = gm(*flat)
        err = max(err, *(float((a - b).abs().max()) for a, b in zip(got, want)))
        err2 = max(err2, *(float(np.abs(o - w.numpy()).max()) for o, w in zip(_ort(again, flat), want)))
    return (f"| transformers LlamaForCausalLM decode step, KV cache (2 sizes) | {len(proto.graph.node)} | "
            f"{_fx_nodes(gm)} | {err:.1e} | {len(again.graph.node)} | {err2:.1e} | torch.export, dynamic dims |")


def detection_row(name: str) -> str:
    """As sets of detections (match(): labels, scores and boxes within 1e-3) at two images."""
    from torchlib.conformance.detection_models import MODELS as DETECTORS
    from torchlib.conformance.detection_models import build, image, match

    model = build(name)
    size = DETECTORS[name][0]
    proto = torchlib.export(model, ([image(size, 0)],), check=False).model_proto
    gm = import_onnx(proto)
    keys = [o.name.split(".")[-1] for o in proto.graph.output]
    problems, counts = [], []
    for seed in (0, 1):
        img = image(size, seed)
        with torch.no_grad():
            want = model([img])[0]
            got = gm(img)
        counts.append(int(want["scores"].numel()))
        problems.append(match(want, dict(zip(keys, got))))
    verdict = "same detections" if not any(problems) else str(next(p for p in problems if p))[:60]
    head = f"| {name} ({'/'.join(map(str, counts))} detections) | {len(proto.graph.node)} | {_fx_nodes(gm)} | {verdict} |"
    try:
        again = torchlib.export(gm, (image(size, 0),), check=False).model_proto
        problems2 = [match(model([image(size, s)])[0], {k: torch.from_numpy(v) for k, v in
                                                        zip(keys, _ort(again, [image(size, s)]))}) for s in (0, 1)]
    except Exception as e:
        return f"{head} re-export fails: {type(e).__name__}: {str(e).splitlines()[0][:90]} | | |"
    verdict2 = "same detections" if not any(problems2) else str(next(p for p in problems2 if p))[:60]
    return f"{head} {len(again.graph.node)} | {verdict2} | torch.export |"


def main() -> int:
    print("| model | ONNX nodes (export) | FX nodes (import) | max err import vs torch | ONNX nodes (re-export) "
          "| max err re-export (ORT) vs torch | re-export capture |")
    print("|---|---|---|---|---|---|---|")
    rows: list[Any] = [lambda n=n, f=f: demo_row(n, f) for n, f in MODELS.items()] + [llama_row]
    if "--no-detection" not in sys.argv:
        rows.append(lambda: detection_row("fasterrcnn_mobilenet_v3_large_320_fpn"))
    for row in rows:
        try:
            print(row(), flush=True)
        except Exception as e:  # a row that fails says so; the others still run
            print(f"| {getattr(row, '__name__', row)} | fails: {type(e).__name__}: {str(e).splitlines()[0][:100]} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
