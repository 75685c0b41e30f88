"""What `torchlib.genai` reads from a Hugging Face model folder, and the model it builds from it.

A model folder (what `save_pretrained` writes, what the Hub holds) has `config.json`,
`generation_config.json` (optional), the weights as safetensors files (one, or shards) and the
tokenizer's files. The model is built from its config with its parameters on the meta device and
everything else real: non-persistent buffers (rotary tables, causal masks) are computed by the
model's own constructor, on the CPU, exactly as `from_pretrained` computes them; parameters get
their data from the checkpoint only while torch.export captures the model (`export(...,
weights=<the folder>)`, torchlib/exporter/checkpoint.py), so the weights are never all in memory.

transformers is imported only here, only when a folder is read.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

# the tokenizer's files onnxruntime-genai (onnxruntime-extensions) reads, and their companions,
# copied as they are when the model folder has them
TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "tokenizer.model",
    "vocab.json", "merges.txt", "chat_template.jinja", "chat_template.json",
)  # fmt: skip


class ModelFolderError(ValueError):
    """The model folder lacks what a build needs (names the folder and the missing file)."""


def read_json(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ModelFolderError(f"{path}: expected a JSON object, found a {type(data).__name__}")
    return data


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=4)
        f.write("\n")


def config_dict(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    if not path.is_file():
        raise ModelFolderError(f"{folder}: no config.json: give the folder `save_pretrained` wrote (config.json, "
                               f"*.safetensors, the tokenizer's files)")  # fmt: skip
    return read_json(path)


def generation_config(folder: Path | None) -> dict[str, Any]:
    """generation_config.json's fields, or {} without one."""
    path = folder / "generation_config.json" if folder is not None else None
    return read_json(path) if path is not None and path.is_file() else {}


def safetensors_files(folder: Path) -> list[Path]:
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        present = [p.name for p in folder.iterdir() if p.suffix in (".bin", ".pt", ".pth", ".gguf")]
        hint = (f" It has {', '.join(present)}: load it with transformers and `save_pretrained(folder)` to write "
                f"safetensors, or give the model as an nn.Module." if present else "")  # fmt: skip
        raise ModelFolderError(f"{folder}: no *.safetensors file: torchlib.genai streams the weights from "
                               f"safetensors checkpoints.{hint}")  # fmt: skip
    return files


def tokenizer_files(folder: Path | None) -> list[Path]:
    if folder is None:
        return []
    return [folder / name for name in TOKENIZER_FILES if (folder / name).is_file()]


def copy_tokenizer(folder: Path | None, out: Path) -> list[str]:
    """Copy the tokenizer's files from `folder` to `out`; returns their names."""
    copied = []
    for path in tokenizer_files(folder):
        if path.resolve() != (out / path.name).resolve():
            shutil.copyfile(path, out / path.name)
        copied.append(path.name)
    return copied


def _token_id(folder: Path | None, token: Any) -> int | None:
    """The id of a token given by its text (tokenizer_config.json's `eos_token`: a string or
    {"content": ...}), from tokenizer.json's added tokens or vocabulary."""
    if folder is None or not (folder / "tokenizer.json").is_file():
        return None
    text = token.get("content") if isinstance(token, Mapping) else token
    if not isinstance(text, str):
        return None
    tokenizer = read_json(folder / "tokenizer.json")
    for added in tokenizer.get("added_tokens") or []:
        if added.get("content") == text:
            return int(added["id"])
    vocab = (tokenizer.get("model") or {}).get("vocab")
    if isinstance(vocab, Mapping) and text in vocab:
        return int(vocab[text])
    return None


def tokenizer_eos(folder: Path | None) -> int | None:
    """The id of the tokenizer's own end token (a chat model ends its turns with it), or None."""
    if folder is None or not (folder / "tokenizer_config.json").is_file():
        return None
    return _token_id(folder, read_json(folder / "tokenizer_config.json").get("eos_token"))


@contextlib.contextmanager
def parameters_on_meta() -> Iterator[None]:
    """Inside the block, every parameter a module registers is moved to the meta device as it
    is registered; buffers stay where the constructor made them (on the CPU). A model built here
    has its non-persistent buffers (rotary tables, masks) computed by its own code, and no
    weight data. (A parameter is first made by its module as an uninitialized CPU tensor, whose
    pages are never touched, then replaced.)"""
    original = torch.nn.Module.register_parameter

    def register(module: torch.nn.Module, name: str, param: torch.nn.Parameter | None) -> None:
        original(module, name, param)
        if param is not None and not param.is_meta:
            module._parameters[name] = torch.nn.Parameter(param.to("meta"), requires_grad=param.requires_grad)

    setattr(torch.nn.Module, "register_parameter", register)  # noqa: B010 (a method of the class, for the block)
    try:
        yield
    finally:
        setattr(torch.nn.Module, "register_parameter", original)  # noqa: B010


def meta_model(folder: Path) -> torch.nn.Module:
    """The folder's causal LM, built from its config: parameters on the meta device, buffers
    computed on the CPU, in float32 (the dtype onnxruntime's CPU kernels have)."""
    config_dict(folder)  # a clear error before transformers' own
    import transformers

    config = transformers.AutoConfig.from_pretrained(folder)
    with parameters_on_meta():
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    return model.eval()


def checkpoint_weights(folder: Path, model: torch.nn.Module) -> tuple[dict[str, Any], list[str]]:
    """The folder's safetensors tensors by name (mapped, nothing read), and notes. A tensor in
    another floating dtype than the model's parameter (a bfloat16 or float16 checkpoint for a
    float32 graph) is converted when it is read, into memory: such a build needs the float32
    weights' size in memory (said in the notes)."""
    from graph_builder.weight_sources import open_safetensors

    arrays: dict[str, Any] = open_safetensors(safetensors_files(folder))
    float32 = {name for name, t in [*model.named_parameters(), *model.named_buffers()] if t.dtype is torch.float32}
    converted = 0
    for name, array in list(arrays.items()):
        if name in float32 and array.dtype != np.float32 and array.dtype.kind in "fV":  # V: ml_dtypes' bfloat16
            arrays[name] = array.astype(np.float32)
            converted += array.size * 4
    notes = []
    if converted:
        notes.append(f"the checkpoint's weights are not float32: {converted / 2**30:.2f} GiB of them were converted "
                     f"to float32 in memory (a float32 checkpoint is streamed from its file instead)")  # fmt: skip
    return arrays, notes
