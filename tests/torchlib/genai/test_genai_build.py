"""torchlib.genai writes a folder onnxruntime-genai runs, giving HF generate's greedy tokens.

Tiny random-weight models saved with `save_pretrained` and a tokenizer trained by the
`tokenizers` package (torchlib/genai/demo_folders.py): no download. Llama, a custom decoder
module, and one model of each family the issue names (Mistral's sliding window, Qwen2, Gemma 2's
soft caps, Phi-3's packed projections, GPT-2, which onnxruntime-genai's builder does not take).
"""

from __future__ import annotations

import json

import pytest
import torch

from torchlib.genai import demo_folders

og = pytest.importorskip("onnxruntime_genai")
transformers = pytest.importorskip("transformers")
genai = pytest.importorskip("torchlib.genai")

NEW_TOKENS = 48


def _prompt(vocab: int, length: int = 7, seed: int = 1) -> torch.Tensor:
    return torch.randint(3, vocab, (1, length), generator=torch.Generator().manual_seed(seed))


def genai_greedy(folder, prompt: torch.Tensor, new_tokens: int) -> list[int]:
    model = og.Model(str(folder))
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=prompt.shape[1] + new_tokens)
    generator = og.Generator(model, params)
    generator.append_tokens(prompt.numpy())
    while not generator.is_done():
        generator.generate_next_token()
    return [int(t) for t in generator.get_sequence(0)]


def without_eos(ids: list[int], eos: int = 2) -> list[int]:
    """onnxruntime-genai's sequence stops before the eos token that ends it; generate's ends with it."""
    return ids[:-1] if ids and ids[-1] == eos else ids


def hf_greedy(model: torch.nn.Module, prompt: torch.Tensor, new_tokens: int) -> list[int]:
    with torch.no_grad():
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens, do_sample=False)
    return without_eos(out[0].tolist())


@pytest.fixture(scope="module")
def llama_folder(tmp_path_factory):
    return demo_folders.write("llama", tmp_path_factory.mktemp("llama"))


def _check_family(folder, out, **options):
    built = genai.build(folder, out, **options)
    reference = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    prompt = _prompt(reference.config.vocab_size)
    expected = hf_greedy(reference, prompt, NEW_TOKENS)
    assert genai_greedy(out, prompt, NEW_TOKENS) == expected
    assert len(set(expected[7:])) > 2  # random weights, yet not one token repeated
    return built


def test_llama_folder_gives_generate_tokens(llama_folder, tmp_path):
    built = _check_family(llama_folder, tmp_path / "out")
    assert built.files == ["genai_config.json", "model.onnx", "model.onnx.data", "tokenizer.json", "tokenizer_config.json"]
    config = json.loads((tmp_path / "out" / "genai_config.json").read_text())
    decoder = config["model"]["decoder"]
    assert (decoder["num_hidden_layers"], decoder["num_attention_heads"], decoder["num_key_value_heads"],
            decoder["head_size"], decoder["hidden_size"]) == (2, 4, 2, 16, 64)  # fmt: skip
    assert decoder["inputs"] == {"input_ids": "input_ids", "attention_mask": "attention_mask",
                                 "past_key_names": "past_key_values.%d.key",
                                 "past_value_names": "past_key_values.%d.value"}  # fmt: skip
    assert (config["model"]["eos_token_id"], config["model"]["bos_token_id"], config["model"]["pad_token_id"]) == (2, 1, 0)
    assert config["model"]["context_length"] == config["search"]["max_length"] == 256
    # the onnxruntime target: GroupQueryAttention reads and writes the cache in one buffer
    assert config["search"]["past_present_share_buffer"] is True
    ops = {n.op_type for n in built.result.graph.nodes}
    assert {"GroupQueryAttention", "SkipSimplifiedLayerNormalization"} <= ops and "Attention" not in ops
    assert any(note.startswith("target check passed") for note in built.diagnostics)
    # the initializers are the checkpoint's tensors under their own names, streamed to external data
    import onnx

    proto = onnx.load(tmp_path / "out" / "model.onnx", load_external_data=False)
    assert "model.embed_tokens.weight" in {t.name for t in proto.graph.initializer}
    assert [i.name for i in proto.graph.input][2:6] == ["past_key_values.0.key", "past_key_values.0.value",
                                                        "past_key_values.1.key", "past_key_values.1.value"]


def test_standard_target_gives_generate_tokens(llama_folder, tmp_path):
    """target="onnx": standard ONNX only (no contrib op), position_ids taken, the cache returned
    grown (no shared buffer)."""
    built = _check_family(llama_folder, tmp_path / "out", target="onnx")
    config = json.loads((tmp_path / "out" / "genai_config.json").read_text())
    assert config["model"]["decoder"]["inputs"]["position_ids"] == "position_ids"
    assert config["search"]["past_present_share_buffer"] is False
    assert all(n.domain in ("", "ai.onnx") for n in built.result.graph.nodes)


def test_tokenizer_runs_from_the_folder(llama_folder, tmp_path):
    genai.build(llama_folder, tmp_path / "out")
    tokenizer = og.Tokenizer(og.Model(str(tmp_path / "out")))
    reference = transformers.AutoTokenizer.from_pretrained(llama_folder)
    text = "the quick brown fox"
    assert list(tokenizer.encode(text)) == reference(text)["input_ids"]
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_generation_config_sets_search_defaults(llama_folder, tmp_path):
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(llama_folder, folder)
    generation = json.loads((folder / "generation_config.json").read_text())
    generation.update(do_sample=True, temperature=0.7, top_p=0.9, eos_token_id=[2, 5])
    (folder / "generation_config.json").write_text(json.dumps(generation))
    genai.build(folder, tmp_path / "out")
    config = json.loads((tmp_path / "out" / "genai_config.json").read_text())
    assert (config["search"]["do_sample"], config["search"]["temperature"], config["search"]["top_p"]) == (True, 0.7, 0.9)
    assert config["search"]["top_k"] == 50  # generate's default where the file is silent
    assert config["model"]["eos_token_id"] == [2, 5]


def test_int4_writes_the_accuracy_level(llama_folder, tmp_path):
    built = genai.build(llama_folder, tmp_path / "out", precision="int4", accuracy_level=0)
    config = json.loads((tmp_path / "out" / "genai_config.json").read_text())
    assert config["model"]["decoder"]["session_options"]["session.qdq_matmulnbits_accuracy_level"] == "0"
    assert built.session_options == {"session.qdq_matmulnbits_accuracy_level": "0"}
    prompt = _prompt(512)
    assert len(genai_greedy(tmp_path / "out", prompt, 8)) == 15


def test_cli(llama_folder, tmp_path, capsys):
    from torchlib.__main__ import main

    assert main(["genai", str(llama_folder), "-o", str(tmp_path / "out"), "--precision", "fp32", "--no-progress"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert (tmp_path / "out" / "genai_config.json").is_file()
    assert main(["genai", str(tmp_path / "missing"), "-o", str(tmp_path / "x")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["genai", str(tmp_path), "-o", str(tmp_path / "x")]) == 2  # a folder without config.json
    assert "no config.json" in capsys.readouterr().err


class CustomDecoder(torch.nn.Module):
    """A decoder written by hand (no transformers): learned positions, 2 layers of multi-query
    attention over a cache given as plain tensors, forward(input_ids, attention_mask, *past) ->
    (logits, *present) per layer (key, value)."""

    def __init__(self, vocab: int = 96, hidden: int = 32, heads: int = 4, layers: int = 2, context: int = 128):
        super().__init__()
        self.heads, self.size, self.layers = heads, hidden // heads, layers
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.positions = torch.nn.Embedding(context, hidden)
        self.q = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden) for _ in range(layers))
        self.kv = torch.nn.ModuleList(torch.nn.Linear(hidden, 2 * self.size) for _ in range(layers))
        self.o = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(hidden)
        self.head = torch.nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, attention_mask, *past):
        b, s = input_ids.shape
        start = past[0].shape[2]
        x = self.embed(input_ids) + self.positions(torch.arange(start, start + s))
        keep = attention_mask.bool()[:, None, None, :] & torch.ones(s, start + s, dtype=torch.bool).tril(start)
        present = []
        for i in range(self.layers):
            q = self.q[i](x).view(b, s, self.heads, self.size).transpose(1, 2)
            k, v = self.kv[i](x).view(b, s, 1, 2 * self.size).transpose(1, 2).chunk(2, dim=-1)
            k, v = torch.cat([past[2 * i], k], 2), torch.cat([past[2 * i + 1], v], 2)
            present += [k, v]
            a = torch.nn.functional.scaled_dot_product_attention(q, k.expand(b, self.heads, -1, -1),
                                                                 v.expand(b, self.heads, -1, -1), attn_mask=keep)  # fmt: skip
            x = x + self.o[i](a.transpose(1, 2).reshape(b, s, -1))
        return (self.head(self.norm(x)), *present)


CUSTOM_CONFIG = {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 8,
                 "hidden_size": 32, "vocab_size": 96, "max_position_embeddings": 128, "eos_token_id": 2}  # fmt: skip


def test_custom_decoder_module(llama_folder, tmp_path):
    """A decoder the builder cannot read (it knows 17 transformers families by their module
    names): exported from its own code, run by onnxruntime-genai, greedy tokens equal to the
    module's own greedy loop."""
    torch.manual_seed(0)
    model = CustomDecoder().eval()
    built = genai.build(model, tmp_path / "out", config=CUSTOM_CONFIG, tokenizer=llama_folder)
    assert "tokenizer.json" in built.files
    prompt = _prompt(95)
    ids = prompt.clone()
    past = [torch.zeros(1, 1, 0, 8) for _ in range(4)]
    with torch.no_grad():
        step_ids = ids
        for _ in range(NEW_TOKENS):
            logits, *past = model(step_ids, torch.ones(1, ids.shape[1], dtype=torch.long), *past)
            step_ids = logits[:, -1:].argmax(-1)
            ids = torch.cat([ids, step_ids], 1)
            if int(step_ids) == 2:  # the eos id (the tokenizer's too)
                break
    assert genai_greedy(tmp_path / "out", prompt, NEW_TOKENS) == without_eos(ids[0].tolist())


def test_module_without_config_is_refused(tmp_path):
    with pytest.raises(ValueError, match="needs the model's config"):
        genai.build(CustomDecoder(), tmp_path / "out")


@pytest.mark.parametrize("family", ["mistral", "qwen2", "gemma2", "phi3", "gpt2"])
def test_family_gives_generate_tokens(family, tmp_path):
    folder = demo_folders.write(family, tmp_path / family)
    _check_family(folder, tmp_path / "out")


def test_bfloat16_checkpoint_is_converted(tmp_path):
    model = demo_folders.model("llama").to(torch.bfloat16)
    model.save_pretrained(tmp_path / "model")
    demo_folders.tokenizer().save_pretrained(tmp_path / "model")
    built = genai.build(tmp_path / "model", tmp_path / "out")
    assert any("converted to float32 in memory" in n for n in built.diagnostics)
    reference = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "model", dtype=torch.float32).eval()
    prompt = _prompt(512)
    assert genai_greedy(tmp_path / "out", prompt, 16) == hf_greedy(reference, prompt, 16)
