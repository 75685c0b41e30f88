"""The decode step of every transformers causal LM that builds tiny from its config class (random
weights, no download), exported with its own prefill cache as input, and greedy decoding with
`torchlib.generation.greedy` against `model.generate` (issue 34, "Decode step").

    OMP_NUM_THREADS=1 nice -n 5 python bench/bench_decode_sweep.py [--only llama,mistral] [--limit N]
        [--timeout 300] [--results bench_decode_sweep.jsonl] [--tokens 12]
        [--reference-cache bench_decode_sweep_reference | --no-reference]

Per model, in its own subprocess (a crash or a hang is that model's row):

1. build it tiny: tiny_config.py's `shrink_config` and `model_config` (the forward sweep's
   sizes; a composite config's sub-config of the model's own config class), cache on, keeping
   layers up to the model's first attention layer where the shrunk ones hold none
   (transformers' `get_seq_length` needs one), and bench_transformers.py's
   `vary_constant_weights` (afmoe's zero router gates tie every expert in top-k, which torch and
   onnxruntime break differently); where the build or the prefill fails, again with as many
   key/value heads as heads where the model has so (multi-head latent attention has no grouped
   heads), as the forward sweep does;
2. prefill: `model(prompt, use_cache=True)` on a prompt of batch 2 and 5 tokens; the cache it
   returns (whatever class and layers transformers made) is the sample's cache;
3. export the step `model(input_ids, attention_mask, cache, use_cache=True)` with
   `dynamic_shapes` from `hf_cache.dynamic_shapes_of(cache)`: dynamic batch, past and sequence (3
   tokens); `attention_mask` (over past and new tokens) only where generate gives one at a decode
   step (its `prepare_inputs_for_generation`), and `position_ids` where generate gives them at a
   decode step (seen in a generate of two tokens): greedy then feeds generate's positions, which
   are not every model's own (RoBERTa-like models count theirs from `padding_idx + 1`). A cache with states besides keys and values
   (linear-attention or state-space layers' conv / recurrent states, MiniMax's linear_cache) is
   exported for one token: transformers' single-token path is the one that reads those states
   (its multi-token path starts them from zero, or loops over the tokens), so `greedy` feeds the
   prompt token by token; so is the step of a model whose own forward refuses more than one new
   token with a past (ProphetNet);
4. `greedy(result, prompt, tokens)` on a new prompt (batch 2, 7 tokens) against `model.generate`
   with plain greedy settings (a GenerationConfig of `max_new_tokens`, `do_sample=False`, the
   model's eos and pad ids: no forced, suppressed or penalised tokens): "exact" when every id is
   equal.

5. the reference: `torch.onnx.export(..., dynamo=True)` of the same step with the same
   dynamic_shapes, given the caches registered by torchlib (`hf_cache.registered()`, as
   bench_decode.py does: with transformers' own registration it fails at its step 2/3 already
   on Llama), its inputs and outputs renamed to ours by position, and the same greedy loop. Its
   row is cached in `--reference-cache` (one JSON per model): a re-run reads it and exports ours
   only; a model whose row has none runs the reference only.

Rows are appended to `--results` (JSONL) as they finish; a re-run skips the models already there
(the last row of a model counts). At the end the script prints, over the models that built and
returned a cache, both columns (exact models, new ids equal, failure classes: the error's first
line, numbers masked) and the cache classes and layer classes met.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
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


def _generate_gives(model: Any, prompt: Any) -> set[str]:
    """The keyword arguments `generate` gives the model at a decode step: those of its second
    forward call in a greedy generate of two tokens. Its `position_ids` (`cumsum(mask) - 1`)
    are not every model's own default: RoBERTa-like models count from `padding_idx + 1`."""
    import torch

    calls: list[set[str]] = []
    hook = model.register_forward_pre_hook(lambda m, a, k: calls.append({n for n, v in k.items() if v is not None}),
                                           with_kwargs=True)
    try:
        with torch.no_grad():
            model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=2, do_sample=False)
    finally:
        hook.remove()
    return calls[1] if len(calls) > 1 else set()


def _holds_keys(layer_type: str) -> bool:
    """Whether transformers' cache layer for a `layer_types` entry keeps keys and values (an
    attention layer; a type it does not map is a model's own attention layer)."""
    from transformers import cache_utils

    return issubclass(cache_utils.DYNAMIC_LAYER_TYPE_MAPPING.get(layer_type, cache_utils.DynamicLayer),
                      cache_utils.DynamicLayer)


def _keep_an_attention_layer(model_type: str, config: Any) -> int | None:
    """Where the shrunk config's layers (its decoder's `layer_types`, from which transformers
    builds the cache) hold no attention layer but the model's have one, keep layers up to its
    first: transformers' `get_seq_length` needs one, and the cache class is then the model's own.
    The layer counts become that many and the per-layer lists the model's first entries. Returns
    the new count, or None where nothing changed."""
    import transformers
    from tiny_config import rederive

    text = config.get_text_config(decoder=True)
    types = getattr(text, "layer_types", None)
    if not types or any(_holds_keys(t) for t in types):
        return None
    original = transformers.AutoConfig.for_model(model_type).get_text_config(decoder=True)
    full = list(getattr(original, "layer_types", None) or [])
    n = next((i + 1 for i, t in enumerate(full) if _holds_keys(t)), None)
    if n is None:
        return None  # the model has no attention layer
    changed = set()
    for name, value in list(vars(text).items()):
        if isinstance(value, int) and not isinstance(value, bool) and "layers" in name and value == len(types):
            setattr(text, name, n)
        elif isinstance(value, list) and len(value) == len(types) and len(getattr(original, name, [])) == len(full):
            setattr(text, name, list(getattr(original, name))[:n])
        else:
            continue
        changed.add(name)
    rederive(text, changed)  # what the config derives from its layers (Zamba2's hybrid_layer_ids)
    return n


def _prepare(model_type: str, class_name: str, row: dict) -> tuple[Any, dict, dict, Any]:
    """The tiny model, the step's inputs (with the model's own prefill cache) and dynamic_shapes,
    and the cache (None: the model returns none; `row` says so). Where the build or the prefill
    fails, built again with as many key/value heads as heads where the model had so, as
    bench_transformers.py does (DeepSeek's multi-head latent attention has no grouped heads);
    the first failure is the row's where that fails too."""
    try:
        return _prepare_with(model_type, class_name, row, equal_kv_heads=False)
    except Exception as e:
        if row.get("stage") not in ("build", "prefill"):
            raise
        first, stage = e, row["stage"]
    try:
        prepared = _prepare_with(model_type, class_name, row, equal_kv_heads=True)
    except Exception:  # noqa: BLE001  (the first failure is the model's)
        row["stage"] = stage
        raise first from None
    row["equal_kv_heads"] = True
    return prepared


def _prepare_with(model_type: str, class_name: str, row: dict, equal_kv_heads: bool) -> tuple[Any, dict, dict, Any]:
    import torch
    import transformers
    from bench_transformers import vary_constant_weights
    from tiny_config import as_causal_lm, model_config, shrink_config

    from torchlib.exporter.hf_cache import dynamic_shapes_of

    row["stage"] = "build"
    # bench_transformers.py's build, keeping an attention layer
    model_class = getattr(transformers, class_name)
    config = as_causal_lm(model_config(model_class, shrink_config(transformers.AutoConfig.for_model(model_type),
                                                                   equal_kv_heads=equal_kv_heads)))
    kept = _keep_an_attention_layer(model_type, config)
    if kept:
        row["layers_kept"] = kept
    with contextlib.suppress(Exception):
        config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = model_class(config).eval()
    varied = vary_constant_weights(model)  # afmoe's zero router gates: ties in top-k, broken either way
    if varied:
        row["varied_weights"] = varied
    for c in (config, getattr(config, "get_text_config", lambda: config)()):
        c.use_cache = True
    vocab = getattr(config.get_text_config(), "vocab_size", None) or 100
    torch.manual_seed(1)
    row["stage"] = "prefill"
    prompt = torch.randint(3, vocab - 3, PROMPT)
    with torch.no_grad():
        cache = _cache_of(model(prompt, use_cache=True))
    if cache is None:
        return model, {}, {}, None
    row["stage"] = "generate"
    gives = _generate_gives(model, prompt)
    row["cache"] = type(cache).__name__
    row["layers"] = sorted({type(layer).__name__ for layer in getattr(cache, "layers", [])})
    row["stage"] = "export"  # the cache's layout is ours: a cache we refuse is an export error
    cache_spec = dynamic_shapes_of(cache)
    # states besides keys and values (conv / recurrent states, MiniMax's linear_cache): a step of one token
    one_token = any(entry not in ("key", "value") for layer in cache_spec for entry in layer)
    if not one_token:  # a model whose own forward takes one new token only with a past (ProphetNet asserts it)
        inputs, _ = _step(model, cache, cache_spec, STEP, vocab, gives)
        try:
            with torch.no_grad():
                model(**{**inputs, **_fresh_cache(inputs)})
        except Exception:  # noqa: BLE001  (its reason is the model's: the step is then one token)
            one_token = True
    row["one_token"] = one_token
    inputs, dynamic = _step(model, cache, cache_spec, 1 if one_token else STEP, vocab, gives)
    return model, inputs, dynamic, cache


def _step(model: Any, cache: Any, cache_spec: Any, step: int, vocab: int, gives: set[str]) -> tuple[dict, dict]:
    """The decode step's inputs (`step` new tokens after the cache) and their dynamic_shapes;
    `position_ids` where generate gives them at a decode step (`gives`), which greedy then feeds
    as generate makes them."""
    import torch

    parameters = set(__import__("inspect").signature(model.forward).parameters)
    cache_name = "cache" if "cache" in parameters else "past_key_values"
    past = PROMPT[1]  # the prefill's length (a state-space cache's get_seq_length has no attention layer to read)
    inputs: dict[str, Any] = {"input_ids": torch.randint(3, vocab - 3, (PROMPT[0], step))}
    dynamic: dict[str, Any] = {"input_ids": {0: "batch"} if step == 1 else {0: "batch", 1: "sequence"}}
    mask = torch.ones(PROMPT[0], past + step, dtype=torch.long)
    if "attention_mask" in parameters and _decode_takes_mask(model, inputs["input_ids"], cache, mask):
        inputs["attention_mask"], dynamic["attention_mask"] = mask, {0: "batch", 1: "total_sequence"}
    if "position_ids" in parameters and "position_ids" in gives:
        inputs["position_ids"] = torch.arange(past, past + step).expand(PROMPT[0], step)
        dynamic["position_ids"] = dynamic["input_ids"]
    inputs[cache_name], inputs["use_cache"] = cache, True
    dynamic[cache_name] = cache_spec
    return inputs, dynamic


def _expected(model: Any, tokens: int) -> tuple[Any, Any, Any, Any]:
    """A new prompt and generate's ids for it with plain greedy settings (and the eos / pad ids)."""
    import torch
    import transformers

    vocab = getattr(model.config.get_text_config(), "vocab_size", None) or 100
    torch.manual_seed(2)
    prompt = torch.randint(3, vocab - 3, NEW_PROMPT)
    eos, pad = model.generation_config.eos_token_id, model.generation_config.pad_token_id
    # the model's generation config replaced (one given to generate is merged with it): no forced
    # or suppressed tokens (BART's forced_eos_token_id), no penalties
    model.generation_config = transformers.GenerationConfig(max_new_tokens=tokens, do_sample=False, num_beams=1,
                                                            eos_token_id=eos, pad_token_id=pad)
    return prompt, model.generate(prompt, attention_mask=torch.ones_like(prompt)), eos, pad


def _compare(actual: Any, expected: Any, prompt: Any) -> dict:
    import torch

    new = expected.shape[1] - prompt.shape[1]
    same_shape = actual.shape == expected.shape
    equal = int((actual[:, -new:] == expected[:, -new:]).sum()) if same_shape else 0
    out = {"tokens_equal": equal, "tokens": expected.shape[0] * new}
    if same_shape and torch.equal(actual, expected):
        return {**out, "status": "exact"}
    return {**out, "status": "tokens differ", "reason": f"{equal}/{out['tokens']} new ids equal"}


def _ours(model: Any, inputs: dict, dynamic: dict, expected: tuple) -> dict:
    from torchlib import export, generation

    row: dict[str, Any] = {}
    stage = "export"
    try:
        start = time.perf_counter()
        result = export(model, (), {**inputs, **_fresh_cache(inputs)}, dynamic_shapes=dynamic)
        row["export_s"] = round(time.perf_counter() - start, 1)
        row["inputs"] = [v.name for v in result.graph.inputs]
        stage = "greedy"
        prompt, ids, eos, pad = expected
        return {**row, **_compare(generation.greedy(result, prompt, ids.shape[1] - prompt.shape[1], eos_token_id=eos,
                                                    pad_token_id=pad), ids, prompt)}
    except Exception as e:  # noqa: BLE001  (the failure is the row)
        return {**row, "status": f"{stage} error", "reason": f"{type(e).__name__}: {_first_line(e)}",
                "traceback": traceback.format_exc()[-1500:]}


def _fresh_cache(inputs: dict) -> dict:
    """The cache input deep-copied: an export may update the sample's cache while tracing."""
    import copy

    return {k: copy.deepcopy(v) for k, v in inputs.items() if k in ("cache", "past_key_values")}


def _reference(model: Any, inputs: dict, dynamic: dict, cache: Any, expected: tuple) -> dict:
    """torch.onnx.export(..., dynamo=True) of the same step with the same dynamic_shapes (and
    `None` for the inputs without dims), given the caches registered by torchlib as bench_decode.py
    does (with transformers' own registration it fails at its step 2/3 already on Llama,
    docs/language_models.md). Its ONNX inputs and outputs are renamed to ours by position (the
    cache's tensors come in the same order) and the same greedy loop runs it."""
    import inspect

    import onnxruntime as ort
    import torch
    import torch.utils._pytree as pytree

    from torchlib import generation
    from torchlib.exporter import hf_cache

    row: dict[str, Any] = {}
    stage = "export"
    try:
        parameters = inspect.signature(model.forward).parameters
        var_kw = next((p.name for p in parameters.values() if p.kind is p.VAR_KEYWORD), None)
        spec = {k: dynamic.get(k) for k in inputs if k in parameters}  # torch.export: **kwargs' under its name
        if var_kw is not None and any(k not in parameters for k in inputs):
            spec[var_kw] = {k: dynamic.get(k) for k in inputs if k not in parameters}
        with hf_cache.registered():
            entries = [f"{i}.{e}" for i, layer in enumerate(pytree.tree_flatten(cache)[1].children())
                       for e in layer.context]
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                program = torch.onnx.export(model, (), kwargs={**inputs, **_fresh_cache(inputs)}, dynamic_shapes=spec,
                                            dynamo=True, verbose=False)
        row["export_s"] = round(time.perf_counter() - start, 1)
        stage = "greedy"
        proto = program.model_proto
        plain = [k for k, v in inputs.items() if isinstance(v, torch.Tensor)]
        names = plain + [f"past_key_values.{e}" for e in entries]
        outputs = ["logits"] + [f"present.{e}" for e in entries]
        have_in, have_out = [i.name for i in proto.graph.input], [o.name for o in proto.graph.output]
        if len(have_in) != len(names) or len(have_out) < len(outputs) or have_in[: len(plain)] != plain:
            raise ValueError(f"the reference's ONNX model has inputs {have_in} and outputs {have_out}: expected "
                             f"{plain} then {len(entries)} cache inputs, and logits then {len(entries)} cache outputs")
        _rename(proto, dict(zip(have_in, names)) | dict(zip(have_out, outputs)))
        session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        prompt, ids, eos, pad = expected
        return {**row, **_compare(generation.greedy(session, prompt, ids.shape[1] - prompt.shape[1], eos_token_id=eos,
                                                    pad_token_id=pad), ids, prompt)}
    except Exception as e:  # noqa: BLE001  (the failure is the row)
        lines = [ln for ln in str(e).splitlines() if ln.strip()]
        summary = next((lines[i + 1] for i, ln in enumerate(lines[:-1]) if ln.startswith("## Exception summary")), None)
        reason = summary if summary is not None else f"{type(e).__name__}: {_first_line(e)}"
        return {**row, "status": f"{stage} error", "reason": re.sub(r"\x1b\[[0-9;]*m", "", reason)[:300]}


def _rename(proto: Any, renames: dict[str, str]) -> None:
    """Rename values of an ONNX graph (its inputs, outputs and every use, subgraphs included)."""
    def walk(graph: Any) -> None:
        for v in [*graph.input, *graph.output, *graph.value_info]:
            v.name = renames.get(v.name, v.name)
        for node in graph.node:
            node.input[:] = [renames.get(n, n) for n in node.input]
            node.output[:] = [renames.get(n, n) for n in node.output]
            for attribute in node.attribute:
                for g in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                    walk(g)

    walk(proto.graph)


def run_model(model_type: str, class_name: str, tokens: int, reference: Path | None, ours: bool = True) -> dict:
    """One model's row: ours (unless not `ours`: the reference's only), and the reference's (in
    `reference`, a JSON file: cached, read when it is there; None: not run)."""
    row: dict[str, Any] = {"model": model_type, "class": class_name}
    try:
        model, inputs, dynamic, cache = _prepare(model_type, class_name, row)
        if cache is None:
            return {**row, "status": "no cache", "reason": "forward(use_cache=True) returns no cache"}
        row["stage"] = "generate"
        expected = _expected(model, tokens)
    except Exception as e:  # noqa: BLE001  (the failure is the row)
        return {**row, "status": f"{row.pop('stage')} error", "reason": f"{type(e).__name__}: {_first_line(e)}",
                "traceback": traceback.format_exc()[-1500:]}
    row.pop("stage")
    if ours:
        row.update(_ours(model, inputs, dynamic, expected))
    if reference is not None:
        if reference.exists():
            row["reference"] = json.loads(reference.read_text())
        else:
            row["reference"] = _reference(model, inputs, dynamic, cache, expected)
            reference.parent.mkdir(parents=True, exist_ok=True)
            reference.write_text(json.dumps(row["reference"]))
    return row


def _worker(argv: list[str]) -> None:
    model_type, class_name, tokens, *rest = argv  # rest: the reference's JSON file ("-": none), "reference-only"
    import torch

    from torchlib.conformance import torchvision_reference

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    torchvision_reference.register()  # transformers imports torchvision, whose CUDA-built ops do not load here
    reference = Path(rest[0]) if rest and rest[0] != "-" else None
    print("@@ROW " + json.dumps(run_model(model_type, class_name, int(tokens), reference, ours=rest[1:] != ["reference-only"])), flush=True)


def _mask(text: str) -> str:
    return re.sub(r"\d+", "N", re.sub(r"0x[0-9a-f]+", "0x…", text))[:160]


def sweep(only: set[str] | None, limit: int | None, timeout: int, results: Path, tokens: int,
          reference: Path | None) -> list[dict]:
    """Run the models not in `results` yet, and those there without the reference's row where
    `reference` (a folder of one JSON per model) has none either; append their rows."""
    from bench_transformers import architectures

    rows = [json.loads(ln) for ln in results.read_text().splitlines() if ln.strip()] if results.exists() else []
    rows = list({r["model"]: r for r in rows}.values())  # the last row of each model (a re-run appends one)
    done = {r["model"] for r in rows}
    todo = [(m, c, None) for m, c in architectures("causal_lm") if (only is None or m in only) and m not in done]
    if reference is not None:  # the reference's cached rows; rows without one: the reference's run only
        for r in rows:
            cached = reference / f"{r['model']}.json"
            if "reference" not in r and cached.exists():
                r["reference"] = json.loads(cached.read_text())
        todo += [(r["model"], r["class"], r) for r in rows if (only is None or r["model"] in only)
                 and "reference" not in r and r["status"] not in _NOT_BUILT]
    for model_type, class_name, before in todo[:limit]:
        cmd = [sys.executable, __file__, "--worker", model_type, class_name, str(tokens),
               "-" if reference is None else str(reference / f"{model_type}.json"), "reference-only" if before else "all"]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            found = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@ROW ")]
            row = json.loads(found[-1][len("@@ROW "):]) if found else {
                "model": model_type, "class": class_name, "status": "crash",
                "reason": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
        except subprocess.TimeoutExpired:
            row = {"model": model_type, "class": class_name, "status": "timeout", "reason": f"over {timeout} s"}
        if before is not None:  # ours as it was; the reference's as it came (a crash or timeout is its row)
            row = {**before, "reference": row.get("reference") or {k: row[k] for k in ("status", "reason") if k in row}}
        else:
            row["wall_s"] = round(time.perf_counter() - start, 1)
        ref = row.get("reference", {})
        print(f"{model_type:28s} {row['status']:14s} {row.get('reason', '')[:80]:80s} | ref {ref.get('status', '-')}",
              flush=True)
        rows = [r for r in rows if r["model"] != model_type] + [row]
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
    return rows


_NOT_BUILT = ("no cache", "build error", "prefill error", "generate error")


def _column(rows: list[dict], name: str) -> None:
    """One exporter's counts and failure classes over the rows that built and returned a cache."""
    print(f"\n== {name}: exact {sum(r['status'] == 'exact' for r in rows)}/{len(rows)}; new token ids equal to "
          f"generate's {sum(r.get('tokens_equal', 0) for r in rows)}/{sum(r.get('tokens', 0) for r in rows)} "
          f"(where greedy ran: {sum('tokens' in r for r in rows)} models)")
    classes = collections.Counter((r["status"], _mask(r.get("reason", ""))) for r in rows if r["status"] != "exact")
    for (status, reason), n in classes.most_common():
        models = [r["model"] for r in rows if r["status"] == status and _mask(r.get("reason", "")) == reason]
        print(f"  {n:3d}  {status}: {reason}  [{', '.join(models[:8])}{', ...' if len(models) > 8 else ''}]")


def report(rows: list[dict]) -> None:
    built = [r for r in rows if r["status"] not in _NOT_BUILT]
    print(f"\n{len(rows)} causal LMs; {len(built)} built and returned a cache")
    print("not built / no cache: " + ", ".join(f"{s} {n}" for s, n in collections.Counter(
        r["status"] for r in rows if r["status"] in _NOT_BUILT).most_common()))
    for r in rows:
        if r["status"] in _NOT_BUILT:
            print(f"  {r['model']}: {r['status']}: {r.get('reason', '')[:140]}")
    _column(built, "ours")
    referenced = [r["reference"] | {"model": r["model"]} for r in built if "reference" in r]
    if referenced:
        _column(referenced, f"reference (torch.onnx.export dynamo=True; {len(referenced)} of {len(built)} run)")
    caches = collections.Counter(r.get("cache") for r in built)
    exact_caches = collections.Counter(r.get("cache") for r in built if r["status"] == "exact")
    print("\ncache classes (exact / models returning one): " + ", ".join(f"{k} {exact_caches[k]}/{n}" for k, n in caches.most_common()))
    layers = collections.Counter(layer for r in built for layer in r.get("layers", []))
    exact_layers = collections.Counter(layer for r in built if r["status"] == "exact" for layer in r.get("layers", []))
    print("cache layer classes (exact / models holding them): "
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
    parser.add_argument("--reference-cache", type=Path, default=Path("bench_decode_sweep_reference"),
                        help="the reference's row per model (a JSON file each), run once and read after")
    parser.add_argument("--no-reference", action="store_true", help="ours only")
    ns = parser.parse_args()
    only = set(ns.only.split(",")) if ns.only else None
    rows = sweep(only, ns.limit, ns.timeout, ns.results, ns.tokens, None if ns.no_reference else ns.reference_cache)
    report([r for r in rows if only is None or r["model"] in only])


if __name__ == "__main__":
    main()
