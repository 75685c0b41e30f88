"""onnxruntime-genai's builder output through the importer: a tiny random-weight Llama saved with
save_pretrained (its tokenizer built with `tokenizers`, nothing downloaded), written by
`python -m onnxruntime_genai.models.builder` for the CPU in fp32 and int4, imported, and run on
the same inputs as an onnxruntime session: a 5-token prompt for a batch of 2, then two decode
steps from onnxruntime's KV caches. The fp32 import is also captured by torch.export with dynamic
dims and checked the same way. Logits and every present cache must match.

Tolerance: fp32 at rtol=atol=1e-4. int4 with accuracy_level=1 (the product in float32, which is
what the importer computes) at 1e-4 too; the builder's CPU default, accuracy_level=4, quantizes
the activations to int8 inside onnxruntime's kernel, so it is compared at a tolerance sized to
that rounding: 1e-2 (the largest logit difference seen was 3.6e-3, logits up to 0.5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from torchlib.importer import import_onnx
from torchlib.importer.cli import example_inputs

pytest.importorskip("onnxruntime_genai")
pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[2]
_SAVE = textwrap.dedent("""
    import sys, torch
    from torchlib.conformance import torchvision_reference
    torchvision_reference.register()  # transformers imports torchvision (see conftest.py)
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    out = sys.argv[1]
    words = ["<unk>", "<s>", "</s>"] + [f"w{i}" for i in range(61)]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                            eos_token="</s>").save_pretrained(out)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                      max_position_embeddings=128, bos_token_id=1, eos_token_id=2)
    LlamaForCausalLM(cfg).save_pretrained(out)
""")
_BUILD = textwrap.dedent("""
    import json, runpy, sys
    from torchlib.conformance import torchvision_reference
    torchvision_reference.register()
    for args in json.loads(sys.argv[1]):  # one builder run per variant, one process for all
        sys.argv = ["builder", *args]
        runpy.run_module("onnxruntime_genai.models.builder", run_name="__main__")
""")


def _python(code: str, *args: str, cwd: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{args}: {proc.stderr[-3000:]}"


VARIANTS = {"fp32": ("fp32", []), "int4": ("int4", ["accuracy_level=1"]), "int4_level4": ("int4", [])}
TOLERANCE = {"fp32": 1e-4, "int4": 1e-4, "int4_level4": 1e-2}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding one builder output per variant (folder / name / model.onnx)."""
    folder = tmp_path_factory.mktemp("genai")
    _python(_SAVE, str(folder / "hf"), cwd=folder)
    runs = []
    for name, (precision, extra) in VARIANTS.items():
        args = ["-i", str(folder / "hf"), "-o", str(folder / name), "-p", precision, "-e", "cpu",
                "-c", str(folder / "cache")]
        runs.append(args + (["--extra_options", *extra] if extra else []))
    _python(_BUILD, json.dumps(runs), cwd=folder)
    return folder


def _inputs(model: onnx.ModelProto, ids: np.ndarray, mask: np.ndarray,
            past: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    feeds = {"input_ids": ids, "attention_mask": mask}
    for vi in model.graph.input:
        if vi.name.startswith("past_key_values"):
            feeds[vi.name] = past.get(vi.name, np.zeros((ids.shape[0], 2, 0, 16), np.float32))
    return feeds


def _check_steps(path: Path, run: Callable[..., tuple[torch.Tensor, ...]], tol: float) -> None:
    """A 5-token prompt for a batch of 2, then two decode steps on the caches onnxruntime gave:
    `run` (called with the graph's inputs in order) must match onnxruntime at each step."""
    model = onnx.load(str(path), load_external_data=False)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [vi.name for vi in model.graph.input]
    outputs = [o.name for o in model.graph.output]
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 64, size=(2, 5)).astype(np.int64)
    mask = np.ones((2, 5), np.int64)
    past: dict[str, np.ndarray] = {}
    for step in ("prompt", "decode 1", "decode 2"):
        feeds = _inputs(model, ids, mask, past)
        want = session.run(None, feeds)
        with torch.no_grad():
            got = run(*[torch.from_numpy(feeds[n]) for n in names])
        for out, g, w in zip(outputs, got, want):
            torch.testing.assert_close(g, torch.from_numpy(w), rtol=tol, atol=tol, msg=lambda m, o=out: f"{step} {o}: {m}")
        past = {"past_key_values" + n[len("present"):]: w for n, w in zip(outputs, want) if n.startswith("present")}
        ids = np.argmax(want[0][:, -1:], axis=-1).astype(np.int64)
        mask = np.ones((2, mask.shape[1] + 1), np.int64)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_genai_builder_llama(built, name):
    path = built / name / "model.onnx"
    model = onnx.load(str(path), load_external_data=False)
    ops = {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    assert "GroupQueryAttention" in ops and "SkipSimplifiedLayerNormalization" in ops
    assert ("MatMulNBits" in ops) == name.startswith("int4")
    _check_steps(path, import_onnx(path), TOLERANCE[name])


def test_genai_builder_llama_exports_with_dynamic_dims(built):
    """torch.export of the imported fp32 model with batch, sequence and past lengths dynamic
    (kv_cache_dim, the head size, fixed): one program serves the prompt and the decode steps."""
    path = built / "fp32" / "model.onnx"
    args, dynamic = example_inputs(onnx.load(str(path), load_external_data=False), 2, {"kv_cache_dim": 16})
    program = torch.export.export(import_onnx(path), args, dynamic_shapes=tuple(dynamic))
    _check_steps(path, program.module(), TOLERANCE["fp32"])
