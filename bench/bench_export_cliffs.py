"""Export time of the models where export time once had cliffs (issue 23: wav2vec2, an
nn.Transformer encoder-decoder, Longformer), against torch.onnx.export(dynamo=True).

    OMP_NUM_THREADS=1 python bench/bench_export_cliffs.py [--models wav2vec2,...] [--repeat 1]

Models are built from small configs with random weights, every batch and sequence dim dynamic.
Prints, per model, the export wall and CPU seconds of both sides (the median over --repeat
exports, each side alternated), the capture strategy torchlib used, the node counts, and the
largest difference from torch at the sample and at a second size (batch and length changed).
The targets: no model over 3x the reference's export time and none over 60 s. transformers
imports torchvision, whose PyPI wheel's compiled ops do not load with the CPU torch: the script
first defines them with torch ports (as bench_vision.py does).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
from torch.export import Dim

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torchlib  # noqa: E402
from torchlib.conformance import torchvision_reference  # noqa: E402


def _wav2vec2():
    from transformers import Wav2Vec2Config, Wav2Vec2Model

    config = Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                            conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = Wav2Vec2Model(config)

        def forward(self, audio):
            return self.model(audio).last_hidden_state

    return Wrapped(), (torch.randn(2, 4000),), ({0: Dim("batch", max=64), 1: Dim("samples", min=400, max=64000)},), \
        (torch.randn(3, 6400),)


def _transformer():
    model = torch.nn.Transformer(d_model=64, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                 dim_feedforward=128, dropout=0.0, batch_first=True)
    batch, src, tgt = Dim("batch", max=64), Dim("src", max=512), Dim("tgt", max=512)
    return model, (torch.randn(2, 10, 64), torch.randn(2, 7, 64)), \
        ({0: batch, 1: src}, {0: batch, 1: tgt}), (torch.randn(3, 13, 64), torch.randn(3, 5, 64))


def _longformer():
    from transformers import LongformerConfig, LongformerModel

    config = LongformerConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                              attention_window=[16, 16], max_position_embeddings=1026, vocab_size=1000)

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = LongformerModel(config)

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.randint(0, 1000, (2, 64))
    other = torch.randint(0, 1000, (3, 96))
    batch = Dim("batch", max=64)
    return Wrapped(), (ids, torch.ones_like(ids)), ({0: batch}, {0: batch}), (other, torch.ones_like(other))


MODELS = {"wav2vec2": _wav2vec2, "transformer": _transformer, "longformer": _longformer}


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def _reference(model, args, dyn):
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return torch.onnx.export(model, args, dynamic_shapes=dyn, dynamo=True, verbose=False).model_proto


def _max_diff(result, model, args) -> float:
    with torch.no_grad():
        expected = model(*args)
    return float((result(*args) - expected).abs().max())


def _second_size(result, model, args) -> float | str:
    try:
        return _max_diff(result, model, args)
    except Exception as e:  # a dim the export made static: the bench says so
        return f"fails ({type(e).__name__}); static dims: {result.diagnostics and [d.split(':')[0] for d in result.diagnostics if 'fixes it' in d]}"


def bench(name: str, repeat: int) -> dict:
    torch.manual_seed(0)
    model, args, dyn, second = MODELS[name]()
    model.eval()
    ours: list[tuple[float, float]] = []
    ref: list[tuple[float, float]] = []
    result = proto = None
    failure = ""
    for _ in range(repeat):
        result, wall, cpu = _timed(lambda: torchlib.export(model, args, dynamic_shapes=dyn))
        ours.append((wall, cpu))
        try:
            proto, wall, cpu = _timed(lambda: _reference(model, args, dyn))
            ref.append((wall, cpu))
        except Exception as e:  # the reference's own failure is a result of the bench
            failure = f"fails: {type(e).__name__}"
    assert result is not None
    row = {"model": name, "capture": result.capture_strategy,
           "export s": statistics.median(w for w, _ in ours), "export CPU s": statistics.median(c for _, c in ours),
           "reference s": statistics.median(w for w, _ in ref) if ref else failure,
           "reference CPU s": statistics.median(c for _, c in ref) if ref else failure,
           "nodes": len(result.model_proto.graph.node), "reference nodes": len(proto.graph.node) if proto else failure,
           "max abs diff (sample)": _max_diff(result, model, args),
           "max abs diff (second size)": _second_size(result, model, second)}
    row["ratio"] = row["export s"] / row["reference s"] if ref else "-"
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeat", type=int, default=1)
    ns = parser.parse_args()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    torchvision_reference.register()  # transformers imports torchvision, whose CUDA wheel lacks CPU ops
    cols = ["capture", "export s", "export CPU s", "reference s", "reference CPU s", "ratio", "nodes",
            "reference nodes", "max abs diff (sample)", "max abs diff (second size)"]
    print("| model | " + " | ".join(cols) + " |")
    print("|" + "---|" * (len(cols) + 1))
    for name in ns.models.split(","):
        row = bench(name, ns.repeat)
        cells = [f"{row[c]:.3g}" if isinstance(row[c], float) else str(row[c]) for c in cols]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
