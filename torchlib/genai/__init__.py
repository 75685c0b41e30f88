"""onnxruntime-genai's model folder, written by torchlib's exporter.

    python -m torchlib genai HF_MODEL_DIR -o OUT_DIR [--precision fp32|int4] [--block-size 32]
                                                     [--accuracy-level 0|1|2|3|4]

    import torchlib.genai
    torchlib.genai.build("path/to/hf_model", "out")              # a folder save_pretrained wrote
    torchlib.genai.build(model, "out", config=model.config)      # or an nn.Module and its config

The folder holds what `onnxruntime_genai.Model(OUT_DIR)` reads: `model.onnx` (and its external
data, `model.onnx.data`), `genai_config.json` (genai_config.py) and the tokenizer's files, copied
from the model folder. It is the folder onnxruntime-genai's own model builder writes, from the
same arguments (`-p fp32|int4`, `block_size`, `accuracy_level`), so a user switches by changing
one command; the graph is torchlib's export of the model's own code (any architecture
transformers runs, or any decoder module), checked against torch by the exporter.

The checkpoint is read as the meta-device export reads it (docs/big_models.md): the model is
built with its parameters on the meta device, torch.export captures it over the safetensors
files mapped into memory, and `save` writes each weight from the file, one at a time.

This room sits at the exporter's edge: it uses `torchlib.export` like any user, imports
transformers only to read a model folder, and never imports onnxruntime_genai.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from torchlib.genai import model_folder
from torchlib.genai.genai_config import genai_config
from torchlib.genai.step import (
    DecoderSpec,
    DecodeStep,
    grouped_like,
    is_transformers_model,
    present_names,
    sample_inputs,
)

__all__ = ["ACCURACY_LEVELS", "DEFAULT_ACCURACY_LEVEL", "GenaiBuild", "PRECISIONS", "build"]

PRECISIONS = ("fp32", "int4")
# MatMulNBits' accuracy_level: the type its activations are computed in. 0: unset (float32 on
# the CPU), 1: float32, 2: float16, 3: bfloat16, 4: int8 (the activations are quantized per block).
ACCURACY_LEVELS = (0, 1, 2, 3, 4)
# onnxruntime-genai's builder's default for the CPU (and onnxruntime's own when it fuses
# DequantizeLinear -> MatMul): 4, the fastest and least accurate (docs/genai.md: its drift)
DEFAULT_ACCURACY_LEVEL = 4


@dataclasses.dataclass
class GenaiBuild:
    """What `build` wrote: the folder, its files, the graph's node count, the session options
    written into genai_config.json, and the exporter's diagnostics."""

    output_dir: Path
    files: list[str]
    nodes: int
    session_options: dict[str, str]
    diagnostics: list[str]
    result: Any  # the ExportResult (its graph's weights are views of the checkpoint)


def _module_config(model: torch.nn.Module, config: Any) -> Mapping[str, Any]:
    if config is None:
        config = vars(model).get("config")  # a transformers model's config (a plain attribute)
        if config is None:
            raise ValueError("build(nn.Module, ...) needs the model's config: give config=model.config, or a dict "
                             "with num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, hidden_size, "
                             "vocab_size, max_position_embeddings and eos_token_id")  # fmt: skip
    if isinstance(config, Mapping):
        return dict(config)
    to_dict = getattr(config, "to_dict", None)
    fields = dict(to_dict()) if callable(to_dict) else dict(vars(config))
    for key in ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                "vocab_size", "max_position_embeddings"):  # transformers' attribute_map aliases (GPT-2's n_layer, ...)
        value = getattr(config, key, None)
        if value is not None:
            fields[key] = value
    return fields


def _generation(model: torch.nn.Module | None, folder: Path | None) -> dict[str, Any]:
    found = model_folder.generation_config(folder)
    generation: Any = vars(model).get("generation_config") if model is not None else None  # a transformers model's
    if not found and generation is not None:
        found = generation.to_dict()
    return found


def _check_target(result: Any, spec: DecoderSpec, position_ids: bool, quantized: bool) -> str:
    """The onnxruntime-target model against torch on a decode step (batch 2, one token after 5)
    and a prompt after a past (batch 1, 4 tokens after 3), as export's self-check does (and
    skipped when that one would be: quantized weights, or a model too large for a cheap run)."""
    from torchlib.exporter import self_check

    if quantized:
        return "target check skipped: weight quantization changes the numbers by design"
    parameters = sum(t.numel() for t in result.exported_program.state_dict.values())
    if parameters > self_check.MAX_PARAMETERS:
        return (f"target check skipped: {parameters / 1e6:.0f}M parameters (result.verify(...) on a decode step "
                f"checks it)")  # fmt: skip
    failed = []
    for batch, new, past in ((2, 1, 5), (1, 4, 3)):
        _, args, _ = sample_inputs(spec, position_ids, batch=batch, new=new, past=past)
        failed += [f"{d} (batch {batch}, {new} new after {past})" for d in result.verify(*args) if not d.ok()]
    if failed:
        raise ValueError("the onnxruntime-target model differs from torch: " + "; ".join(map(str, failed)))
    return "target check passed: the model reproduces torch on a decode step and on a prompt after a past"


def build(
    model: str | os.PathLike[str] | torch.nn.Module,
    output_dir: str | os.PathLike[str],
    *,
    config: Any = None,
    precision: str = "fp32",
    block_size: int = 32,
    accuracy_level: int = DEFAULT_ACCURACY_LEVEL,
    tokenizer: str | os.PathLike[str] | None = None,
    position_ids: bool | None = None,
    opset: int = 23,
    target: str = "onnxruntime",
    progress: bool = True,
) -> GenaiBuild:
    """Write onnxruntime-genai's folder for a causal language model.

    model: a Hugging Face model folder (config.json, *.safetensors, the tokenizer's files), or
        an nn.Module: a transformers causal LM (its config is `model.config`), or any decoder
        whose forward is `forward(input_ids, attention_mask, *past) -> (logits, *present)`, past
        and present ordered per layer (key, value), each [batch, kv heads, length, head size]
        (then `config` gives its shapes: num_hidden_layers, num_attention_heads,
        num_key_value_heads, head_dim, hidden_size, vocab_size, max_position_embeddings,
        eos_token_id).
    output_dir: the folder to write (made if needed; files of the same names are replaced).
    precision: "fp32", or "int4": the MatMul weights quantized to 4 bits in blocks of
        `block_size` along the reduction axis (symmetric, round to nearest even: `DequantizeLinear
        -> MatMul`, which onnxruntime runs as its MatMulNBits kernel).
    accuracy_level: for int4, the type MatMulNBits computes its activations in: 0 (unset:
        float32), 1 float32, 2 float16, 3 bfloat16, 4 int8. Default 4, onnxruntime-genai's
        builder's choice for the CPU (and onnxruntime's default): fastest, and the activations
        are rounded to 8 bits (docs/genai.md gives each level's drift). Written into
        genai_config.json's session options (`session.qdq_matmulnbits_accuracy_level`).
    tokenizer: the folder to copy the tokenizer's files from (default: the model folder).
    position_ids: whether the graph takes position_ids (onnxruntime-genai then feeds them,
        computed from the attention mask as `generate` computes them); False: the model numbers
        the new tokens from the past's length. Default: False for target "onnxruntime" (as the
        builder's graph: GroupQueryAttention can then rotate q and k itself, proven the same
        rotation), True for "onnx".
    opset: the ONNX opset (21 and up for int4).
    target: "onnxruntime" (default): the export's onnxruntime target, contrib operators where
        onnxruntime's kernels are faster (docs/genai.md); "onnx": standard ONNX only.
    progress: a bar counts the weights' bytes as they are written, on a terminal only
        (`graph_builder.progress`); False: none.
    """
    import torchlib

    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    if accuracy_level not in ACCURACY_LEVELS:
        raise ValueError(f"accuracy_level {accuracy_level!r}: use one of {ACCURACY_LEVELS} (0 unset, 1 float32, "
                         f"2 float16, 3 bfloat16, 4 int8)")  # fmt: skip
    out = Path(output_dir)
    notes: list[str] = []
    folder: Path | None
    weights: Any = None
    if isinstance(model, torch.nn.Module):
        folder = None
        module, fields = model, _module_config(model, config)
    else:
        folder = Path(model)
        if not folder.is_dir():
            raise model_folder.ModelFolderError(f"{folder}: not a folder: give the folder save_pretrained wrote")
        module = model_folder.meta_model(folder)
        fields = {**_module_config(module, None), **(dict(config) if isinstance(config, Mapping) else {})}
        weights, weight_notes = model_folder.checkpoint_weights(folder, module)
        notes += weight_notes
    spec = DecoderSpec.of(fields)
    if target not in ("onnx", "onnxruntime"):
        raise ValueError(f"target {target!r}: 'onnxruntime' (the default) or 'onnx'")
    transformers_model = is_transformers_model(module)
    with_positions = (target == "onnx" if position_ids is None else position_ids) and transformers_model
    step = DecodeStep(module, spec.layers, with_positions) if transformers_model else module
    names, args, shapes = sample_inputs(spec, with_positions)
    outputs = ["logits", *present_names(spec.layers)]
    quantization = None
    if precision == "int4":
        from graph_builder.optimizer.quantization import WeightQuantization

        quantization = WeightQuantization("int4", block_size=block_size, symmetric=True)
    from graph_builder.optimizer.onnxruntime import OnnxRuntime, past_readers_share

    runtime = None
    if target == "onnxruntime":
        runtime = OnnxRuntime(accuracy_level, max_sequence_length=spec.context_length,
                              past_length_from=("attention_mask", "input_ids"))  # fmt: skip
    # the onnxruntime target's GroupQueryAttention refuses the sample's shape (batch 2, 3 new
    # tokens after 5: onnxruntime's kernel takes several new tokens after a past only for batch
    # 1), so that export is checked here on the shapes the runtime feeds
    result = torchlib.export(step.eval(), args, dynamic_shapes=grouped_like(step.forward, shapes), input_names=names,
                             output_names=outputs, weights=weights, weight_quantization=quantization, opset=opset,
                             target=runtime or "onnx", check=False if runtime is not None else None)  # fmt: skip
    if runtime is not None:
        notes.append(_check_target(result, spec, with_positions, quantization is not None))
    out.mkdir(parents=True, exist_ok=True)
    filename = "model.onnx"
    result.save(out / filename, external_data=True, progress=progress)
    session_options = {"session.qdq_matmulnbits_accuracy_level": str(accuracy_level)} if precision == "int4" else {}
    generation = _generation(module, folder)
    token_folder = Path(tokenizer) if tokenizer is not None else folder
    # one buffer for the past and the present (onnxruntime-genai writes the new keys and values
    # in place) when every past tensor is read only by GroupQueryAttention
    pasts = [v for v in result.graph.inputs if v.name.startswith("past_key_values.")]
    share = runtime is not None and all(past_readers_share(result.graph, v) for v in pasts)
    document = genai_config(spec, filename=filename, inputs=[v.name for v in result.graph.inputs],
                            outputs=[v.name for v in result.graph.outputs], config=fields, generation=generation,
                            tokenizer_eos=model_folder.tokenizer_eos(token_folder), share_buffer=share,
                            session_options=session_options)  # fmt: skip
    model_folder.write_json(out / "genai_config.json", document)
    copied = model_folder.copy_tokenizer(token_folder, out)
    if not copied:
        notes.append("no tokenizer files were copied (give tokenizer=<the model folder>): onnxruntime_genai.Model "
                     "runs the folder, onnxruntime_genai.Tokenizer needs them")  # fmt: skip
    files = sorted(p.name for p in out.iterdir() if p.name in {filename, filename + ".data", "genai_config.json", *copied})
    return GenaiBuild(out, files, result.node_count, session_options, notes + list(result.diagnostics), result)
