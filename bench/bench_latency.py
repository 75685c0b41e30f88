"""onnxruntime latency and node count of the graphs torchlib emits, with and without its
optimizer, against torch.onnx.export(dynamo=True), plus what optimizing adds to export time.

    OMP_NUM_THREADS=1 python bench/bench_latency.py [--models resnet,vit,...] [--runs 100]

Latency: onnxruntime CPU, 1 intra-op thread, the same graph optimizations on both sides
(`--ort-level`, default all: onnxruntime's own fusions run on both graphs), median of `runs` runs
after 10 warm-up runs; the two exporters' sessions are timed run by run in alternation so that
machine noise hits both alike, half of the runs with fresh sessions created in the reverse order
(which session is made first moves one model's time by up to 7 %: bench_session_spread.py).
Export time: median of 3 exports each way, and the optimizer's own
seconds (`optimize()`'s report) as a share of the optimized export.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import onnxruntime as ort
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_export import MODELS as EXPORT_MODELS  # noqa: E402

import torchlib  # noqa: E402
from graph_builder.progress import progress, write  # noqa: E402

export_module = importlib.import_module("torchlib.exporter.export")  # the module, not the function of that name


class PatchEmbedViT(nn.Module):
    """A small ViT: patch embedding, pre-norm encoder blocks (GELU MLP), class token head."""

    def __init__(self, image: int = 32, patch: int = 4, dim: int = 128, depth: int = 4, heads: int = 4, classes: int = 10):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


def vit():
    torch.manual_seed(0)
    return PatchEmbedViT().eval(), (torch.randn(2, 3, 32, 32),)


class BertLike(nn.Module):
    """Token + position embeddings, post-norm encoder layers with GELU written as a formula."""

    def __init__(self, vocab: int = 1000, dim: int = 128, depth: int = 2, heads: int = 4):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(128, dim)
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.ModuleList(nn.MultiheadAttention(dim, heads, batch_first=True) for _ in range(depth))
        self.ln1 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(depth))
        self.up = nn.ModuleList(nn.Linear(dim, 4 * dim) for _ in range(depth))
        self.down = nn.ModuleList(nn.Linear(4 * dim, dim) for _ in range(depth))
        self.ln2 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(depth))

    def forward(self, ids, mask):
        x = self.norm(self.tok(ids) + self.pos(torch.arange(ids.shape[1])))
        for attn, ln1, up, down, ln2 in zip(self.attn, self.ln1, self.up, self.down, self.ln2):
            x = ln1(x + attn(x, x, x, key_padding_mask=mask, need_weights=False)[0])
            h = up(x)
            h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
            x = ln2(x + down(h))
        return x


def bert():
    torch.manual_seed(0)
    ids = torch.randint(0, 1000, (2, 32))
    mask = torch.zeros(2, 32, dtype=torch.bool)
    mask[1, 24:] = True
    return BertLike().eval(), (ids, mask)


def recurrent(cls, **kwargs):
    """bench_export's lstm with another torch.nn recurrent layer: 2 layers of 64, batch_first."""

    def make():
        torch.manual_seed(0)

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = cls(32, 64, num_layers=2, batch_first=True, **kwargs)

            def forward(self, x):
                return self.rnn(x)[0]

        return M().eval(), (torch.randn(4, 16, 32),)

    return make


def _demo_models() -> dict:
    try:
        from torchlib.exporter import demo_models
    except ImportError:
        return {}
    return {"resnet": demo_models.resnet, "llama": demo_models.rms_rope_decoder, "encoder_masked": demo_models.masked_encoder}


MODELS = {**_demo_models(), "vit": vit, "bert": bert, "gpt": EXPORT_MODELS["gpt"], "lstm": EXPORT_MODELS["lstm"],
          "gru": recurrent(nn.GRU), "rnn": recurrent(nn.RNN), "lstm_bidirectional": recurrent(nn.LSTM, bidirectional=True),
          "transformer": EXPORT_MODELS["transformer"], "cnn": EXPORT_MODELS["cnn"]}


def reference(model, args):
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.onnx.export(model, args, dynamo=True, verbose=False).model_proto


ORT_LEVELS = {"all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
              "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, "none": ort.GraphOptimizationLevel.ORT_DISABLE_ALL}
ORT_LEVEL = ORT_LEVELS["all"]


def session(proto):
    options = ort.SessionOptions()
    options.graph_optimization_level = ORT_LEVEL
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def latencies(protos: list, args, runs: int) -> list[float]:
    """Median ms per model, timed run by run in alternation: half of the runs with the sessions
    created in the given order, half with fresh sessions created in the reverse order, the
    median over both halves (bench_session_spread.py measures one model's sessions differing by
    up to 7 %, the later-created ones faster on some models: this cancels the order in which
    the sessions were made)."""
    first = _timed_runs(protos, args, (runs + 1) // 2)
    second = _timed_runs(protos[::-1], args, runs // 2)[::-1]
    return [statistics.median(a + b) * 1e3 for a, b in zip(first, second)]


def _timed_runs(protos: list, args, runs: int) -> list[list[float]]:
    """Seconds of each run per model, one session per model, alternated run by run."""
    sessions = [session(p) for p in protos]
    feeds = [{i.name: a.numpy() for i, a in zip(s.get_inputs(), args)} for s in sessions]
    for s, f in zip(sessions, feeds):
        for _ in range(10):
            s.run(None, f)
    samples: list[list[float]] = [[] for _ in sessions]
    for _ in range(runs):
        for s, f, out in zip(sessions, feeds, samples):
            start = time.perf_counter()
            s.run(None, f)
            out.append(time.perf_counter() - start)
    return samples


_OPTIMIZER_SECONDS: list[float] = []


def _timed_optimize(builder, *args, **kwargs):  # type: ignore[no-untyped-def]
    report = _optimize(builder, *args, **kwargs)
    _OPTIMIZER_SECONDS.append(float(report["seconds"]))
    return report


_optimize = export_module.optimize_graph
export_module.optimize_graph = _timed_optimize  # records what optimize() reports it took


def export_seconds(model, args, optimize: bool) -> tuple[float, float]:
    """Median export seconds and the median seconds the optimizer took within them."""
    times = []
    _OPTIMIZER_SECONDS.clear()
    for _ in range(3):
        start = time.perf_counter()
        torchlib.export(model, args, optimize=optimize)
        times.append(time.perf_counter() - start)
    return statistics.median(times), statistics.median(_OPTIMIZER_SECONDS) if _OPTIMIZER_SECONDS else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--ort-level", choices=list(ORT_LEVELS), default="all",
                        help="onnxruntime graph optimization level, the same for both graphs")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    ns = parser.parse_args()
    global ORT_LEVEL
    ORT_LEVEL = ORT_LEVELS[ns.ort_level]
    warnings.simplefilter("ignore")
    torchlib.export(*EXPORT_MODELS["mlp"]())  # import costs are not charged to the first model
    print("| model | nodes (ours) | nodes (ours, unoptimized) | nodes (reference) | ORT ms (ours) | ORT ms (reference) "
          "| ours / reference | export s (optimized / not) | optimizer s (share of export) |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for name in progress(ns.models.split(","), desc="models", unit="model", enabled=not ns.no_progress):
        model, args = MODELS[name]()
        ours = torchlib.export(model, args).model_proto
        plain = torchlib.export(model, args, optimize=False).model_proto
        ref = reference(model, args)
        t_ours, t_ref = latencies([ours, ref], args, ns.runs)
        ratios.append(t_ours / t_ref)
        (t_opt, t_optimizer), (t_plain, _) = export_seconds(model, args, True), export_seconds(model, args, False)
        write(f"| {name} | {len(ours.graph.node)} | {len(plain.graph.node)} | {len(ref.graph.node)} | {t_ours:.3f} | "
              f"{t_ref:.3f} | {t_ours / t_ref:.2f} | {t_opt:.3f} / {t_plain:.3f} | {t_optimizer:.3f} ({t_optimizer / t_opt:.0%}) |")
    print(f"\ngeometric mean of ours / reference: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")


if __name__ == "__main__":
    main()
