"""onnxruntime-genai's greedy tokens from torchlib's folders against HF `generate`, per family.

    python bench/bench_genai_parity.py [--tokens 128] [--families llama,mistral,qwen2,gemma2,phi3,gpt2]

For each family: a tiny random-weight model (torchlib/genai/demo_folders.py: hidden 64, 2 layers,
4 heads over 2 KV heads, vocab 512, context 256; Mistral and Gemma 2 slide a window of 16, GPT-2
has std 0.2 weights) saved with `save_pretrained`, built by `torchlib.genai.build` with the
onnxruntime target (the default) and the standard one (`target="onnx"`), fp32. Both generate
`--tokens` greedy tokens after a 7-token prompt with the end token suppressed until then
(`min_new_tokens` in generate, `min_length` in onnxruntime-genai, each the same logit
processor), so every run is exactly `--tokens` long. Prints one JSON line per folder, then a
table: tokens equal to generate's, and the first position where they differ.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from torchlib.conformance import torchvision_reference

torchvision_reference.register()  # transformers imports torchvision, whose CUDA-built ops do not load here

PROMPT_LENGTH = 7


def genai_tokens(folder: Path, prompt: np.ndarray, new_tokens: int) -> list[int]:
    import onnxruntime_genai as og

    model = og.Model(str(folder))
    params = og.GeneratorParams(model)
    length = prompt.shape[1] + new_tokens
    params.set_search_options(do_sample=False, max_length=length, min_length=length)
    generator = og.Generator(model, params)
    generator.append_tokens(prompt)
    while not generator.is_done():
        generator.generate_next_token()
    return [int(t) for t in generator.get_sequence(0)]


def hf_tokens(folder: Path, prompt: np.ndarray, new_tokens: int) -> list[int]:
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    ids = torch.from_numpy(prompt)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                             min_new_tokens=new_tokens, do_sample=False)  # fmt: skip
    return out[0].tolist()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128, help="new tokens per generation (default 128)")
    parser.add_argument("--families", default="llama,mistral,qwen2,gemma2,phi3,gpt2")
    parser.add_argument("--dir", help="work folder (default: a temporary one)")
    ns = parser.parse_args()
    import torchlib.genai
    from torchlib.genai import demo_folders

    work = Path(ns.dir) if ns.dir else Path(tempfile.mkdtemp(prefix="bench_genai_parity_"))
    rows = []
    for family in ns.families.split(","):
        model = demo_folders.write(family, work / family)
        vocab = json.loads((model / "config.json").read_text())["vocab_size"]
        prompt = torch.randint(3, vocab, (1, PROMPT_LENGTH), generator=torch.Generator().manual_seed(1)).numpy()
        expected = hf_tokens(model, prompt, ns.tokens)
        for target in ("onnxruntime", "onnx"):
            out = work / f"{family}_{target}"
            built = torchlib.genai.build(model, out, target=target)
            tokens = genai_tokens(out, prompt, ns.tokens)
            new, want = tokens[PROMPT_LENGTH:], expected[PROMPT_LENGTH:]
            equal = sum(a == b for a, b in zip(new, want))
            first = next((i for i, (a, b) in enumerate(zip(new, want)) if a != b), None)
            row = {"family": family, "target": target, "nodes": built.nodes, "tokens": len(new),
                   "equal_to_generate": equal, "first_difference": first, "distinct_tokens": len(set(want))}  # fmt: skip
            print(json.dumps(row), flush=True)
            rows.append(row)
    print(f"\n{ns.tokens} greedy tokens after a {PROMPT_LENGTH}-token prompt, fp32\n")
    print("| family | target | nodes | tokens equal to generate | first difference | distinct tokens |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        first = "-" if r["first_difference"] is None else r["first_difference"]
        print(f"| {r['family']} | {r['target']} | {r['nodes']} | {r['equal_to_generate']}/{r['tokens']} | {first} | "
              f"{r['distinct_tokens']} |")
    return 0 if all(r["equal_to_generate"] == r["tokens"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
