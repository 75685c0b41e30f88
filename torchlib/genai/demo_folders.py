"""Model folders with random weights, as `save_pretrained` writes them, for tests and benches (no
download): a transformers causal LM of a given family and size, and a byte-level BPE tokenizer
trained by the `tokenizers` package on a few sentences.

    folder = demo_folders.write("llama", "/tmp/tiny_llama")            # tiny: hidden 32, 2 layers
    folder = demo_folders.write("llama", "/tmp/llama512", **demo_folders.BENCH_LLAMA)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

FAMILIES = ("llama", "mistral", "qwen2", "gemma2", "phi3", "gpt2")
TINY: dict[str, Any] = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)  # fmt: skip
# the Llama of bench/bench_decode.py and bench/bench_genai.py
BENCH_LLAMA: dict[str, Any] = dict(vocab_size=32000, hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                                   num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=2048)  # fmt: skip
SPECIAL = {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}
_TEXT = ["the quick brown fox jumps over the lazy dog", "hello world, this is a tiny tokenizer for tests",
         "onnxruntime runs the graph; torchlib writes it"]  # fmt: skip


def config(family: str, **sizes: Any) -> Any:
    """A transformers config of `family` with the given sizes (TINY's by default) and the
    special token ids 1 (bos), 2 (eos), 0 (pad)."""
    import transformers

    fields = {**TINY, **sizes, **SPECIAL}
    if family == "gpt2":
        return transformers.GPT2Config(vocab_size=fields["vocab_size"], n_embd=fields["hidden_size"],
                                       n_layer=fields["num_hidden_layers"], n_head=fields["num_attention_heads"],
                                       n_positions=fields["max_position_embeddings"], initializer_range=0.2,
                                       bos_token_id=1, eos_token_id=2, pad_token_id=0)  # fmt: skip (std 0.2: at 0.02 a tiny GPT-2 repeats one token)
    if family == "mistral":  # a window shorter than the tests' prompt and new tokens
        fields.setdefault("sliding_window", 16)
    if family == "gemma2":  # every other layer slides; logits and attention soft-capped
        fields.setdefault("sliding_window", 16)
        fields.setdefault("head_dim", fields["hidden_size"] // fields["num_attention_heads"])
    names = {"llama": "LlamaConfig", "mistral": "MistralConfig", "qwen2": "Qwen2Config", "gemma2": "Gemma2Config",
             "phi3": "Phi3Config"}  # fmt: skip
    if family not in names:
        raise ValueError(f"family {family!r}: one of {', '.join(FAMILIES)}")
    return getattr(transformers, names[family])(**fields)


def model(family: str, seed: int = 0, **sizes: Any) -> Any:
    import transformers

    torch.manual_seed(seed)
    return transformers.AutoModelForCausalLM.from_config(config(family, **sizes)).eval()


def tokenizer(vocab_size: int = 512) -> Any:
    """A byte-level BPE tokenizer (transformers' fast tokenizer over `tokenizers`), <pad> <s> </s>
    as ids 0, 1, 2, trained on a few sentences (its vocabulary may be smaller than vocab_size)."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE(unk_token=None))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)  # fmt: skip
    bpe.train_from_iterator(_TEXT * 10, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", pad_token="<pad>")


def write(family: str, folder: str | os.PathLike[str], seed: int = 0, **sizes: Any) -> Path:
    """Save a random-weight model of `family` and a tokenizer into `folder` (safetensors)."""
    path = Path(folder)
    m = model(family, seed, **sizes)
    m.save_pretrained(path)
    tokenizer(m.config.vocab_size).save_pretrained(path)
    return path
