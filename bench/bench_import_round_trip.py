"""Round trips on the demo models: torchlib.export -> import_onnx (compared with torch) ->
torchlib.export again (compared in onnxruntime), with the node counts of each ONNX model.

    nice -n 5 python bench/bench_import_round_trip.py
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import torchlib  # noqa: E402
from torchlib.exporter import demo_models  # noqa: E402
from torchlib.importer import import_onnx  # noqa: E402


def encoder() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2), (torch.randn(2, 5, 16),)


MODELS = {"CNN (demo resnet)": demo_models.resnet, "LSTM (demo)": demo_models.lstm_model,
          "TransformerEncoder": encoder, "GPT (demo rms_rope_decoder)": demo_models.rms_rope_decoder}


def main() -> int:
    print("| model | ONNX nodes (export) | FX nodes (import) | max err import vs torch | ONNX nodes (re-export) "
          "| max err re-export (ORT) vs torch | re-export capture |")
    print("|---|---|---|---|---|---|---|")
    for name, factory in MODELS.items():
        torch.manual_seed(0)
        model, args = factory()
        model.eval()
        proto = torchlib.export(model, args).model_proto
        with torch.no_grad():
            want = model(*args)
        want_l = list(want) if isinstance(want, tuple) else [want]
        try:
            gm = import_onnx(proto)
        except Exception as e:
            print(f"| {name} | {len(proto.graph.node)} | import fails: {str(e)[:90]} | | | | |")
            continue
        with torch.no_grad():
            got = gm(*args)
        got_l = list(got) if isinstance(got, tuple) else [got]
        err = max(float((a - b).abs().max()) for a, b in zip(got_l, want_l))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                again = torchlib.export(gm, args).model_proto
            except Exception as e:
                print(f"| {name} | {len(proto.graph.node)} | {sum(1 for n in gm.graph.nodes if n.op == 'call_function')} "
                      f"| {err:.1e} | re-export fails: {str(e).splitlines()[0][:80]} | | |")
                continue
        draft = any("draft_export" in str(w.message) for w in caught)
        session = ort.InferenceSession(again.SerializeToString())
        outs = session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})
        err2 = max(float(np.abs(o - w.numpy()).max()) for o, w in zip(outs, want_l))
        fx_nodes = sum(1 for n in gm.graph.nodes if n.op == "call_function")
        print(f"| {name} | {len(proto.graph.node)} | {fx_nodes} | {err:.1e} | {len(again.graph.node)} | {err2:.1e} | "
              f"{'draft_export (sample path only)' if draft else 'torch.export'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
