"""The decode step of every transformers causal LM that builds tiny from its config class (random
weights, no download), exported with its own prefill cache as input, and greedy decoding with
`torchlib.generation.greedy` against `model.generate` (issue 34, "Decode step").

    nice -n 5 python bench/bench_decode_sweep.py [--only llama,mistral] [--limit N] [--timeout 300]
        [--results bench_decode_sweep.jsonl] [--tokens 12]

Per model, in its own subprocess (a crash or a hang is that model's row):

1. build it tiny: bench_transformers.py's `shrink_config` (the forward sweep's sizes), cache on;
2. prefill: `model(prompt, use_cache=True)` on a prompt of batch 2 and 5 tokens; the cache it
   returns (whatever class and layers transformers made) is the sample's cache;
3. export the step `model(input_ids, attention_mask, cache, use_cache=True)` with
   `dynamic_shapes` from `hf_cache.dynamic_shapes_of(cache)`: dynamic batch, past and sequence (3
   tokens); `attention_mask` (over past and new tokens) only where generate gives one at a decode
   step (its `prepare_inputs_for_generation`). A cache with linear-attention or state-space layers (conv / recurrent states) is
   exported for one token: transformers' single-token path is the one that reads those states
   (its multi-token path starts them from zero), so `greedy` feeds the prompt token by token;
4. `greedy(result, prompt, tokens)` on a new prompt (batch 2, 7 tokens) against `model.generate`
   with plain greedy settings (a GenerationConfig of `max_new_tokens`, `do_sample=False`, the
   model's eos and pad ids: no forced, suppressed or penalised tokens): "exact" when every id is
   equal.

Rows are appended to `--results` (JSONL) as they finish; a re-run skips the models already there.
At the end the script prints the counts by status, the failure classes (the error's first line,
numbers masked) and the cache classes and layer classes met.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

PROMPT, STEP, NEW_PROMPT = (2, 5), 3, (2, 7)


def _first_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return (lines[0] if lines else "")[:300]


def _cache_of(output: Any) -> Any:
    for name in ("cache", "past_key_values"):
        value = getattr(output, name, None)
        if value is not None:
            return value
    return None


def _decode_takes_mask(model: Any, ids: Any, cache: Any, mask: Any) -> bool:
    """Whether generate gives the model an attention mask at a decode step (Mamba's
    `prepare_inputs_for_generation` drops it: its mask covers the new tokens, not the past)."""
    try:
        prepared = model.prepare_inputs_for_generation(ids, cache=cache, attention_mask=mask, use_cache=True,
                                                       is_first_iteration=False)
    except Exception:  # noqa: BLE001  (a model whose preparation needs more: give the mask, as generate starts with it)
        return True
    return prepared.get("attention_mask") is not None


def run_model(model_type: str, class_name: str, tokens: int) -> dict:
    import torch
    import transformers
    from bench_transformers import build

    from torchlib import export, generation
    from torchlib.exporter.hf_cache import dynamic_shapes_of

    row: dict[str, Any] = {"model": model_type, "class": class_name}
    stage = "build"
    try:
        model, config = build("causal_lm", model_type, class_name)
        for c in (config, getattr(config, "get_text_config", lambda: config)()):
            c.use_cache = True
        vocab = getattr(config.get_text_config(), "vocab_size", None) or 100
        torch.manual_seed(1)
        stage = "prefill"
        with torch.no_grad():
            cache = _cache_of(model(torch.randint(3, vocab - 3, PROMPT), use_cache=True))
        if cache is None:
            return {**row, "status": "no cache", "reason": "forward(use_cache=True) returns no cache"}
        row["cache"] = type(cache).__name__
        row["layers"] = sorted({type(layer).__name__ for layer in getattr(cache, "layers", [])})
        one_token = any(hasattr(layer, "conv_states") for layer in getattr(cache, "layers", []))
        step = 1 if one_token else STEP
        parameters = set(__import__("inspect").signature(model.forward).parameters)
        cache_name = "cache" if "cache" in parameters else "past_key_values"
        past = cache.get_seq_length() if not one_token else PROMPT[1]
        inputs: dict[str, Any] = {"input_ids": torch.randint(3, vocab - 3, (PROMPT[0], step))}
        dynamic: dict[str, Any] = {"input_ids": {0: "batch"} if one_token else {0: "batch", 1: "sequence"}}
        mask = torch.ones(PROMPT[0], past + step, dtype=torch.long)
        if "attention_mask" in parameters and _decode_takes_mask(model, inputs["input_ids"], cache, mask):
            inputs["attention_mask"], dynamic["attention_mask"] = mask, {0: "batch", 1: "total_sequence"}
        inputs[cache_name], inputs["use_cache"] = cache, True
        dynamic[cache_name] = dynamic_shapes_of(cache)
        stage = "export"
        start = time.perf_counter()
        result = export(model, (), inputs, dynamic_shapes=dynamic)
        row["export_s"] = round(time.perf_counter() - start, 1)
        row["one_token"] = one_token
        row["inputs"] = [v.name for v in result.graph.inputs]
        stage = "greedy"
        prompt = torch.randint(3, vocab - 3, NEW_PROMPT)
        eos, pad = model.generation_config.eos_token_id, model.generation_config.pad_token_id
        # the model's generation config replaced (one given to generate is merged with it): no forced
        # or suppressed tokens (BART's forced_eos_token_id), no penalties
        model.generation_config = transformers.GenerationConfig(max_new_tokens=tokens, do_sample=False, num_beams=1,
                                                                eos_token_id=eos, pad_token_id=pad)
        expected = model.generate(prompt, attention_mask=torch.ones_like(prompt))
        actual = generation.greedy(result, prompt, tokens, eos_token_id=eos, pad_token_id=pad)
        new = expected.shape[1] - prompt.shape[1]
        equal = actual.shape == expected.shape and torch.equal(actual, expected)
        row["tokens_equal"] = int((actual[:, -new:] == expected[:, -new:]).sum()) if actual.shape == expected.shape else 0
        row["tokens"] = expected.shape[0] * new
        if equal:
            return {**row, "status": "exact"}
        return {**row, "status": "tokens differ", "reason": f"{row['tokens_equal']}/{row['tokens']} new ids equal"}
    except Exception as e:  # noqa: BLE001  (the failure is the row)
        return {**row, "status": f"{stage} error", "reason": f"{type(e).__name__}: {_first_line(e)}",
                "traceback": traceback.format_exc()[-1500:]}


def _worker(argv: list[str]) -> None:
    model_type, class_name, tokens = argv
    import torch

    from torchlib.conformance import torchvision_reference

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    torchvision_reference.register()  # transformers imports torchvision, whose CUDA-built ops do not load here
    print("@@ROW " + json.dumps(run_model(model_type, class_name, int(tokens))), flush=True)


def _mask(text: str) -> str:
    return re.sub(r"\d+", "N", re.sub(r"0x[0-9a-f]+", "0x…", text))[:160]


def sweep(only: set[str] | None, limit: int | None, timeout: int, results: Path, tokens: int) -> list[dict]:
    from bench_transformers import architectures

    rows = [json.loads(ln) for ln in results.read_text().splitlines() if ln.strip()] if results.exists() else []
    done = {r["model"] for r in rows}
    todo = [(m, c) for m, c in architectures("causal_lm") if (only is None or m in only) and m not in done]
    for model_type, class_name in todo[:limit]:
        cmd = [sys.executable, __file__, "--worker", model_type, class_name, str(tokens)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            found = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@ROW ")]
            row = json.loads(found[-1][len("@@ROW "):]) if found else {
                "model": model_type, "class": class_name, "status": "crash",
                "reason": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
        except subprocess.TimeoutExpired:
            row = {"model": model_type, "class": class_name, "status": "timeout", "reason": f"over {timeout} s"}
        row["wall_s"] = round(time.perf_counter() - start, 1)
        print(f"{model_type:28s} {row['status']:14s} {row.get('reason', '')[:110]}", flush=True)
        rows.append(row)
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
    return rows


def report(rows: list[dict]) -> None:
    by_status = collections.Counter(r["status"] for r in rows)
    cached = [r for r in rows if r["status"] not in ("no cache", "build error", "prefill error")]
    exact = sum(r["status"] == "exact" for r in cached)
    print(f"\n{len(rows)} causal LMs; {len(cached)} built and returned a cache; exact: {exact}/{len(cached)}")
    print("by status: " + ", ".join(f"{s} {n}" for s, n in by_status.most_common()))
    tokens = sum(r.get("tokens", 0) for r in cached)
    if tokens:
        print(f"new token ids equal to generate's, where greedy ran: {sum(r.get('tokens_equal', 0) for r in cached)}/{tokens}")
    classes = collections.Counter((r["status"], _mask(r.get("reason", ""))) for r in rows if r["status"] != "exact")
    print("\nfailure classes (status, first line):")
    for (status, reason), n in classes.most_common():
        models = [r["model"] for r in rows if r["status"] == status and _mask(r.get("reason", "")) == reason]
        print(f"  {n:3d}  {status}: {reason}  [{', '.join(models[:8])}{', ...' if len(models) > 8 else ''}]")
    layers = collections.Counter(layer for r in cached for layer in r.get("layers", []))
    exact_layers = collections.Counter(layer for r in cached if r["status"] == "exact" for layer in r.get("layers", []))
    print("\ncache layer classes (exact / models holding them): "
          + ", ".join(f"{k} {exact_layers[k]}/{n}" for k, n in layers.most_common()))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated model types")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per model (its subprocess is killed after)")
    parser.add_argument("--results", type=Path, default=Path("bench_decode_sweep.jsonl"), help="JSONL rows; re-runs resume")
    parser.add_argument("--tokens", type=int, default=12, help="new tokens per greedy run")
    ns = parser.parse_args()
    only = set(ns.only.split(",")) if ns.only else None
    rows = sweep(only, ns.limit, ns.timeout, ns.results, ns.tokens)
    report([r for r in rows if only is None or r["model"] in only])


if __name__ == "__main__":
    main()
