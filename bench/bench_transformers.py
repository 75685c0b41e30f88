"""Every transformers architecture for six tasks, built tiny from its config class (random
weights, no download), exported with dynamic batch and sequence (or image size) by torchlib and by
the reference (torch.onnx.export(dynamo=True)), and checked in onnxruntime at the sample and at a
second input of other sizes: max |onnx - torch| <= 1e-4 + 1e-3 * max |torch| (issue 34, "Forward").

    nice -n 5 python bench/bench_transformers.py [--task causal_lm,...] [--only llama,bert]
        [--limit N] [--timeout 300] [--results results.jsonl] [--reference-cache DIR] [--no-reference]

Each model runs in its own subprocess with a timeout (a crash or a hang is that model's row, not
the end of the sweep). Rows are appended to `--results` (JSONL) as they finish; a re-run skips the
(task, model) pairs already there. `--reference-cache DIR` keeps the reference's row per model in
DIR, so that a re-run exports only ours. At the end the script prints the counts per task (ours,
reference), the failure classes (grouped by the error's first line, numbers and hex ids masked),
the lost dynamic dims, the models ours captured with draft_export, and the export times: wall
seconds and the process's CPU seconds (one thread; on a shared machine the wall time follows the
load). Both exporters first export a tiny module, untimed, so that neither pays torch.export's
start in its figure. The worker prints ours' row before the reference runs: a reference past the
timeout leaves ours' row, with the reference's "timeout" (cached).

Models are shrunk generically (tiny_config.py's `shrink_config`): every integer attribute whose
name says it is a layer count, a width, a head count, a vocabulary or an expert count is capped, in
the config and its sub-configs, the sizes the model relates are kept in agreement, and the config
class is built from them; the model class gets the sub-config of its own config class where the
architecture's config is composite (`model_config`). Weights
the init leaves constant (afmoe's zero router gates, which make every expert tie in top-k) get
random values (`vary_constant_weights`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tiny_config import as_causal_lm, model_config, shrink_config

TASKS = {
    "causal_lm": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "seq2seq_lm": "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "masked_lm": "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "image_classification": "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES",
    "speech_ctc": "MODEL_FOR_CTC_MAPPING_NAMES",
    "speech_seq2seq": "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
}

SEQ, BATCH = 8, 2  # the sample; the second input is (BATCH + 1, SEQ + 5)


def architectures(task: str) -> list[tuple[str, str]]:
    from transformers.models.auto import modeling_auto

    names = getattr(modeling_auto, TASKS[task])
    out = []
    for model_type, cls in names.items():
        out.append((model_type, cls[0] if isinstance(cls, (tuple, list)) else cls))
    return out


def build(task: str, model_type: str, class_name: str, equal_kv_heads: bool = False):
    import torch
    import transformers
    from transformers import AutoConfig

    model_class = getattr(transformers, class_name)
    config = model_config(model_class, shrink_config(AutoConfig.for_model(model_type), equal_kv_heads=equal_kv_heads))
    if task == "causal_lm":
        as_causal_lm(config)
    if task == "speech_ctc" and getattr(config, "vocab_size", 0) is None:  # wav2vec2-bert: the CTC head's size
        config.vocab_size = 256
    with contextlib.suppress(Exception):
        config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = model_class(config).eval()
    return model, config


def vary_constant_weights(model) -> list[str]:
    """Give random values (normal, std 0.02) to every weight of two or more dims that the model's
    init leaves constant, and return their names. afmoe zeroes its routers' gates: every expert
    then ties in top-k, whose order among ties torch leaves undefined (torch's CPU top-k and
    onnxruntime's pick different experts, both right). A constant weight also hides from the
    comparison whatever was computed before it."""
    import torch

    varied = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 and p.numel() > 1 and p.is_floating_point() and bool((p == p.flatten()[0]).all()):
                p.normal_(0.0, 0.02)
                varied.append(name)
    return varied


def _sizes_inputs(task: str, model, config, batch: int, seq: int) -> dict[str, Any]:
    """The model's inputs at (batch, seq); seq is the sequence, image side or frame count."""
    import torch

    g = torch.Generator().manual_seed(batch * 100 + seq)
    vocab = getattr(config, "vocab_size", None) or getattr(getattr(config, "text_config", None), "vocab_size", 256)
    ids = lambda b, s: torch.randint(3, max(vocab - 3, 4), (b, s), generator=g)  # noqa: E731
    if task in ("causal_lm", "masked_lm"):
        return {"input_ids": ids(batch, seq)}
    if task == "seq2seq_lm":
        return {"input_ids": ids(batch, seq), "decoder_input_ids": ids(batch, max(seq - 3, 2))}
    if task == "image_classification":
        channels = getattr(config, "num_channels", None) or getattr(getattr(config, "vision_config", None), "num_channels", 3)
        return {"pixel_values": torch.randn(batch, channels, seq, seq, generator=g)}
    main = getattr(model, "main_input_name", "input_values")
    if main == "input_values":
        sample = {main: torch.randn(batch, seq, generator=g)}
    elif task == "speech_ctc":  # log-mel features, (batch, frames, mel bins): parakeet, lasr, granite_speech
        mel = _config_attr(config, "num_mel_bins") or _config_attr(config, "feature_size") or 80
        sample = {main: torch.randn(batch, seq, mel, generator=g)}
    else:
        mel = getattr(config, "num_mel_bins", None) or getattr(config, "feature_size", None) or 80
        per_channel = getattr(config, "input_feat_per_channel", None)
        if per_channel is not None:  # speech_to_text: (batch, frames, features)
            sample = {main: torch.randn(batch, seq, per_channel * getattr(config, "input_channels", 1), generator=g)}
        else:  # whisper-like: (batch, mel bins, frames)
            sample = {main: torch.randn(batch, mel, seq, generator=g)}
    if task == "speech_seq2seq":
        sample["decoder_input_ids"] = ids(batch, 5 if seq > 5 else 3)
    return sample


def _config_attr(config: Any, name: str) -> Any:
    """config's attribute `name`, else the first sub-config's that has it (parakeet's encoder_config)."""
    from transformers import PretrainedConfig

    if getattr(config, name, None) is not None:
        return getattr(config, name)
    subs = (v for v in vars(config).values() if isinstance(v, PretrainedConfig))
    return next((getattr(v, name) for v in subs if getattr(v, name, None) is not None), None)


def _candidate_seqs(task: str, config) -> list[int]:
    if task == "image_classification":
        size = getattr(config, "image_size", None) or getattr(getattr(config, "vision_config", None), "image_size", None)
        base = [size] if isinstance(size, int) else []
        return base + [64, 32, 224]
    if task == "speech_ctc":
        return [1600, 4000, 16000] if _config_attr(config, "num_mel_bins") is None else [64, 128, 1600]
    if task == "speech_seq2seq":
        src = getattr(config, "max_source_positions", None)
        return ([2 * src] if isinstance(src, int) else []) + [64, 128, 3000]
    return [SEQ, 16, 32]


def _wrapper(model):
    import torch

    class Forward(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            out = self.inner(**dict(zip(self.names, args)))
            return out[0] if isinstance(out, (tuple, list)) else next(iter(out.values()))

    return Forward(model)


def _dynamic_shapes(sample: dict[str, Any], other: dict[str, Any]):
    """Dim.AUTO on every axis whose size differs between the sample and the second input."""
    from torch.export import Dim

    return tuple({a: Dim.AUTO for a, (n, m) in enumerate(zip(s.shape, other[k].shape)) if n != m} for k, s in sample.items())


def _input_dims(proto) -> list[list[str | int]]:
    return [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in proto.graph.input]


def _lost(dims: list[list[str | int]], dyn) -> list[str]:
    return [f"input {i} axis {a}" for i, spec in enumerate(dyn) if i < len(dims) for a in spec if isinstance(dims[i][a], int)]


def _run(proto, tensors) -> list:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    sess = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feeds = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), tensors)}
    return sess.run(None, feeds)


def _check(proto, model, second: list, dims) -> tuple[bool, str, float]:
    """(right at every input, what was wrong, the worst error over the bound)."""
    import numpy as np
    import torch

    worst = 0.0
    for inputs in second:
        if any(isinstance(d, int) and d != t.shape[a] for spec, t in zip(dims, inputs) for a, d in enumerate(spec)):
            continue  # the model does not take these sizes (a lost dim: reported as such)
        with torch.no_grad():
            expected = model(*inputs)
        got = _run(proto, inputs)[-1]
        exp = expected.detach().numpy()
        if got.shape != exp.shape:
            return False, f"output shape {got.shape} != torch's {exp.shape} at inputs {[tuple(t.shape) for t in inputs]}", math.inf
        err = float(np.abs(got.astype(np.float64) - exp).max()) if exp.size else 0.0
        bound = 1e-4 + 1e-3 * float(np.abs(exp).max()) if exp.size else 1.0
        worst = max(worst, err / bound)
        if not err <= bound:
            return False, f"wrong: max |onnx - torch| {err:.3g} > {bound:.3g} at inputs {[tuple(t.shape) for t in inputs]}", worst
    return True, "", worst


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.redirect_stdout(io.StringIO()):
            return fn()


def _one_exporter(which: str, model, sample_t, dyn, checks) -> dict:
    import torch

    import torchlib

    row: dict[str, Any] = {}
    start, cpu = time.perf_counter(), time.process_time()
    try:
        if which == "ours":
            result = _quiet(lambda: torchlib.export(model, sample_t, dynamic_shapes={"args": dyn}, check=False))
            proto, row["strategy"] = result.model_proto, result.capture_strategy
        else:
            proto = _quiet(lambda: torch.onnx.export(model, sample_t, dynamic_shapes={"args": dyn}, dynamo=True, verbose=False).model_proto)
    except Exception as e:
        row.update(status="export failed", reason=f"{type(e).__name__}: {_first_line(e)}", export_s=time.perf_counter() - start,
                   export_cpu_s=time.process_time() - cpu)
        return row
    row["export_s"], row["export_cpu_s"] = time.perf_counter() - start, time.process_time() - cpu
    dims = _input_dims(proto)
    row["lost"] = _lost(dims, dyn)
    try:
        ok, why, worst = _check(proto, model, checks, dims)
    except Exception as e:
        row.update(status="run failed", reason=f"{type(e).__name__}: {_first_line(e)}")
        return row
    row["worst_over_bound"] = worst
    row.update(status="ok" if ok and not row["lost"] else ("wrong" if not ok else "lost dims"), reason=why or ", ".join(row["lost"]))
    return row


def _warm_up(reference: bool) -> None:
    """Export a two-layer module with each exporter first, untimed: the first export in a process
    pays torch.export's own start (its imports and caches), which the exporter timed first would
    otherwise pay alone (gte, one process: ours 9.1 s, ours again 4.8 s)."""
    import torch
    from torch.export import Dim

    tiny = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval()
    x = (torch.randn(2, 4),)
    with torch.no_grad():
        _one_exporter("ours", tiny, x, ({0: Dim.AUTO},), [list(x)])
        if reference:
            _one_exporter("reference", tiny, x, ({0: Dim.AUTO},), [list(x)])


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else "")[:300]


def run_model(task: str, model_type: str, class_name: str, reference: bool, cache: Path | None,
              ours_done: Callable[[dict], None] | None = None) -> dict:
    """The model's row; `ours_done` gets it once ours is measured, before the reference runs."""
    import torch

    row: dict[str, Any] = {"task": task, "model": model_type, "class": class_name}
    sample = None
    for equal_kv_heads in (False, True):  # the second only where torch fails on the first's every input
        try:
            model, config = _quiet(lambda: build(task, model_type, class_name, equal_kv_heads))
        except Exception as e:
            row.update(status="not built", reason=f"{type(e).__name__}: {_first_line(e)}")
            return row
        kv, heads = _head_counts(config)
        if equal_kv_heads:
            if kv != heads:
                break  # the config had grouped heads: nothing else to try
            row["equal_kv_heads"] = True
        row["varied_weights"] = vary_constant_weights(model)
        wrapped = _wrapper(model).eval()
        for seq in _candidate_seqs(task, config):
            s = _sizes_inputs(task, model, config, BATCH, seq)
            try:
                with torch.no_grad():
                    wrapped.names = list(s)
                    _quiet(lambda: wrapped(*s.values()))
                sample, row["seq"] = s, seq
                break
            except Exception as e:
                row["reason"] = f"{type(e).__name__}: {_first_line(e)}"
        if sample is not None or not (isinstance(kv, int) and isinstance(heads, int) and kv < heads):
            break
    if sample is None:
        row["status"] = "torch failed"
        return row
    row.pop("reason", None)
    wrapped.names = list(sample)
    sample_t = tuple(sample.values())
    seq = row["seq"]
    second_seq = seq + 5 if task in ("causal_lm", "masked_lm", "seq2seq_lm") else (seq + 16 if task == "image_classification" else seq + seq // 4)
    other = _sizes_inputs(task, model, config, BATCH + 1, second_seq)
    try:  # a model that takes one sequence length (or image size) only: the second input varies the batch
        with torch.no_grad():
            _quiet(lambda: wrapped(*other.values()))
    except Exception:
        other = _sizes_inputs(task, model, config, BATCH + 1, seq)
        row["fixed_seq"] = True
    dyn = _dynamic_shapes(sample, other)
    checks = [list(sample_t), list(other.values())]
    key = cache / f"{task}__{model_type}.json" if reference and cache is not None else None
    _warm_up(reference and (key is None or not key.exists()))
    with torch.no_grad():
        row["ours"] = _one_exporter("ours", wrapped, sample_t, dyn, checks)
    row["status"] = row["ours"]["status"]
    if ours_done is not None:
        ours_done(row)
    if reference:
        if key is not None and key.exists():
            row["reference"] = json.loads(key.read_text())
        else:
            with torch.no_grad():
                row["reference"] = _one_exporter("reference", wrapped, sample_t, dyn, checks)
            if key is not None:
                key.parent.mkdir(parents=True, exist_ok=True)
                key.write_text(json.dumps(row["reference"]))
    return row


def _head_counts(config: Any) -> tuple[Any, Any]:
    """(key/value heads, heads) of the config, None where it has none or only per layer
    (dots3_note's config refuses to give a global value for a per-layer attribute)."""
    counts = []
    for name in ("num_key_value_heads", "num_attention_heads"):
        try:
            counts.append(getattr(config, name, None))
        except Exception:  # noqa: BLE001  (transformers' AmbiguousGlobalPerLayerAttributeError: per layer only)
            counts.append(None)
    return counts[0], counts[1]


def _torchvision_ops() -> None:
    """transformers imports torchvision where it is installed; PyPI's CUDA torchvision does not load its
    compiled ops with the CPU torch wheel, so define them first (as bench_vision.py does)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from torchlib.conformance import torchvision_reference

    torchvision_reference.register()


def _worker(argv: list[str]) -> None:
    task, model_type, class_name, reference, cache = argv
    import torch

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    _torchvision_ops()
    try:
        row = run_model(task, model_type, class_name, reference == "1", Path(cache) if cache else None,
                        lambda r: print("@@OURS " + json.dumps(r), flush=True))
    except Exception as e:
        row = {"task": task, "model": model_type, "class": class_name, "status": "bench error",
               "reason": f"{type(e).__name__}: {_first_line(e)}", "traceback": traceback.format_exc()[-2000:]}
    print("@@ROW " + json.dumps(row), flush=True)


def _mask(text: str) -> str:
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"\d+", "N", text)
    return text[:160]


def sweep(tasks: list[str], only: set[str] | None, limit: int | None, timeout: int, results: Path,
          reference: bool, cache: Path | None) -> list[dict]:
    done: dict[tuple[str, str], dict] = {}
    if results.exists():
        for line in results.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done[(r["task"], r["model"])] = r
    rows = []
    for task in tasks:
        archs = [a for a in architectures(task) if only is None or a[0] in only]
        for model_type, class_name in archs[:limit]:
            if (task, model_type) in done:
                rows.append(done[(task, model_type)])
                continue
            start = time.perf_counter()
            cmd = [sys.executable, __file__, "--worker", task, model_type, class_name, "1" if reference else "0",
                   str(cache) if cache else ""]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
                line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@ROW ")), None)
                if line is None:
                    tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
                    row = {"task": task, "model": model_type, "class": class_name, "status": "crashed",
                           "reason": f"exit {proc.returncode}: {tail[:300]}"}
                else:
                    row = json.loads(line[len("@@ROW "):])
            except subprocess.TimeoutExpired as e:  # ours measured before the reference ran over: ours' row stands
                out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                ours_line = next((ln for ln in reversed(out.splitlines()) if ln.startswith("@@OURS ")), None)
                if ours_line is None:
                    row = {"task": task, "model": model_type, "class": class_name, "status": "timeout", "reason": f"over {timeout} s"}
                else:
                    row = json.loads(ours_line[len("@@OURS "):])
                    row["reference"] = {"status": "timeout", "reason": f"over {timeout} s with ours"}
                    if cache is not None:
                        cache.mkdir(parents=True, exist_ok=True)
                        (cache / f"{task}__{model_type}.json").write_text(json.dumps(row["reference"]))
            row["wall_s"] = time.perf_counter() - start
            with results.open("a") as f:
                f.write(json.dumps(row) + "\n")
            rows.append(row)
            ours, ref = row.get("ours", {}), row.get("reference", {})
            print(f"{task:22} {model_type:28} ours: {ours.get('status', row['status']):12} ref: {ref.get('status', '-'):12}"
                  f" {ours.get('export_s', 0):6.1f}s/{ref.get('export_s', 0):6.1f}s  {ours.get('reason', row.get('reason', ''))[:100]}",
                  flush=True)
    return rows


def report(rows: list[dict]) -> None:
    print("\n| task | built | ours right at both sizes | reference right at both sizes (of those it ran on) |\n|---|---|---|---|")

    def counts(rs: list[dict]) -> tuple[int, int, int]:
        ran = [r for r in rs if "reference" in r]
        return (sum(r["ours"]["status"] == "ok" for r in rs), sum(r["reference"].get("status") == "ok" for r in ran), len(ran))

    for task in TASKS:
        rs = [r for r in rows if r["task"] == task]
        if not rs:
            continue
        built = [r for r in rs if "ours" in r]
        ours, ref, ran = counts(built)
        print(f"| {task} | {len(built)} / {len(rs)} | {ours} | {ref} / {ran} |")
    built = [r for r in rows if "ours" in r]
    ours, ref, ran = counts(built)
    if built:
        print(f"| all | {len(built)} / {len(rows)} | {ours} ({100 * ours / len(built):.1f} %) | {ref} / {ran} ({100 * ref / max(ran, 1):.1f} %) |")
        ours_ran = sum(r["ours"]["status"] == "ok" for r in built if "reference" in r)
        print(f"\nover the {ran} built models the reference ran on: ours right on {ours_ran}, the reference on {ref}")
    for who in ("ours", "reference"):
        classes: dict[str, list[str]] = {}
        for r in built:
            res = r.get(who)
            if res and res["status"] != "ok":
                classes.setdefault(f"{res['status']}: {_mask(res.get('reason', ''))}", []).append(r["model"])
        print(f"\nfailure classes, {who}:")
        for key, models in sorted(classes.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(models):3}  {key}\n       {', '.join(models)}")
    not_built: dict[str, list[str]] = {}
    for r in rows:
        if "ours" not in r:
            not_built.setdefault(f"{r['status']}: {_mask(r.get('reason', ''))}", []).append(r["model"])
    print("\nnot built (or torch fails on every candidate input):")
    for key, models in sorted(not_built.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(models):3}  {key}\n       {', '.join(models)}")
    drafted = [r["model"] for r in built if r["ours"].get("strategy") == "draft_export"]
    print("\ncaptured by draft_export (its data-dependent branches follow the sample's path; other inputs may be wrong):"
          f" {', '.join(drafted) or 'none'}")
    lost = [(r["model"], r["ours"].get("lost"), r.get("reference", {}).get("lost")) for r in built if r["ours"].get("lost")]
    print("\nlost dynamic dims, ours (reference's in brackets):")
    for m, o, rf in lost:
        print(f"  {m}: {o} [{rf}]")
    both = [(r["ours"]["export_s"], r["reference"]["export_s"]) for r in built
            if "export_s" in r["ours"] and "export_s" in r.get("reference", {}) and r["ours"]["status"] == "ok"]
    if both:
        ours_s = [o for o, _ in both]
        print(f"\nexport seconds (models both export): ours median {statistics.median(ours_s):.2f} s, max {max(ours_s):.1f} s;"
              f" reference median {statistics.median([r for _, r in both]):.2f} s;"
              f" median ratio ours / reference {statistics.median([o / r for o, r in both]):.3f}")
        slow = [r["model"] for r in built if r["ours"].get("export_s", 0) > 60]
        print(f"over 60 s (ours): {slow or 'none'}")
    # CPU seconds (the process's, one thread): what the export costs, whatever else the machine runs
    both_cpu = [(r["ours"]["export_cpu_s"], r["reference"]["export_cpu_s"]) for r in built
                if "export_cpu_s" in r["ours"] and "export_cpu_s" in r.get("reference", {}) and r["ours"]["status"] == "ok"]
    if both_cpu:
        print(f"export CPU seconds ({len(both_cpu)} models both export, both measured): ours median"
              f" {statistics.median([o for o, _ in both_cpu]):.2f} s, reference median {statistics.median([r for _, r in both_cpu]):.2f} s;"
              f" median ratio ours / reference {statistics.median([o / r for o, r in both_cpu]):.3f}")
        slow_cpu = [r["model"] for r in built if r["ours"].get("export_cpu_s", 0) > 60]
        print(f"over 60 CPU s (ours): {slow_cpu or 'none'}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default=",".join(TASKS), help="comma-separated: " + ", ".join(TASKS))
    parser.add_argument("--only", default=None, help="comma-separated model types (config model_type)")
    parser.add_argument("--limit", type=int, default=None, help="the first N architectures of each task")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per model (its subprocess is killed after)")
    parser.add_argument("--results", type=Path, default=Path("bench_transformers.jsonl"), help="JSONL rows; re-runs resume")
    parser.add_argument("--reference-cache", type=Path, default=None, help="keep the reference's rows here")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--report-only", action="store_true", help="print the tables of --results and stop")
    ns = parser.parse_args()
    tasks = ns.task.split(",")
    only = set(ns.only.split(",")) if ns.only else None
    if ns.report_only:
        rows = [json.loads(ln) for ln in ns.results.read_text().splitlines() if ln.strip()]
        rows = list({(r["task"], r["model"]): r for r in rows}.values())  # a model's last row (a re-run) wins
        rows = [r for r in rows if r["task"] in tasks and (only is None or r["model"] in only)]
    else:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        rows = sweep(tasks, only, ns.limit, ns.timeout, ns.results, not ns.no_reference, ns.reference_cache)
    report(rows)


if __name__ == "__main__":
    main()
