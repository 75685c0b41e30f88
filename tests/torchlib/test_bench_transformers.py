"""The machinery of bench/bench_transformers.py (issue 34's forward sweep) on a few architectures:
config shrinking, the inputs at two sizes, our export checked at both, the JSONL rows and the resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_transformers as bench  # noqa: E402
from tiny_config import as_causal_lm  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _torchvision_ops():
    bench._torchvision_ops()


def test_shrink_config_caps_sizes_and_per_layer_lists():
    from transformers import AutoConfig

    config = bench.shrink_config(AutoConfig.for_model("qwen2"))
    assert config.num_hidden_layers == 2
    assert config.hidden_size == 64 and config.intermediate_size == 128 and config.vocab_size == 256
    assert len(config.layer_types) == 2
    assert config.use_cache is False


def test_shrink_config_keeps_related_sizes_in_agreement():
    """Sizes a model relates stay related: what the config class derives follows the caps
    (DeepSeek's qk_head_dim), top-k within the experts, a partial rotary dim within the head dim,
    Mamba-2's heads times head dim equal to expand times hidden, a head dim left None filled."""
    from transformers import AutoConfig

    deepseek = bench.shrink_config(AutoConfig.for_model("deepseek_v3"))
    assert deepseek.qk_head_dim == deepseek.qk_nope_head_dim + deepseek.qk_rope_head_dim == 32
    assert deepseek.n_routed_experts % deepseek.n_group == 0 and deepseek.n_routed_experts // deepseek.n_group >= 2
    assert deepseek.topk_group <= deepseek.n_group
    assert bench.shrink_config(AutoConfig.for_model("deepseek_v2")).num_experts_per_tok == 2  # None by default
    longcat = bench.shrink_config(AutoConfig.for_model("longcat_flash"))  # qk_head_dim: a field there
    assert longcat.qk_head_dim == longcat.qk_nope_head_dim + longcat.qk_rope_head_dim
    kimi = bench.shrink_config(AutoConfig.for_model("kimi_linear"))
    assert kimi.num_experts_per_token <= kimi.num_experts
    ernie = bench.shrink_config(AutoConfig.for_model("ernie4_5_moe"))
    assert ernie.moe_k <= ernie.moe_num_experts
    gptj = bench.shrink_config(AutoConfig.for_model("gptj"))
    assert gptj.rotary_dim == 4 == (gptj.n_embd // gptj.n_head) // 4  # 64 of 256 before
    mamba2 = bench.shrink_config(AutoConfig.for_model("mamba2"))
    assert mamba2.num_heads * mamba2.head_dim == mamba2.expand * mamba2.hidden_size
    assert mamba2.num_heads % mamba2.n_groups == 0
    zamba2 = bench.shrink_config(AutoConfig.for_model("zamba2"))
    assert zamba2.mamba_headdim * zamba2.n_mamba_heads == zamba2.mamba_expand * zamba2.hidden_size
    ministral = bench.shrink_config(AutoConfig.for_model("ministral"))
    assert ministral.head_dim == ministral.hidden_size // ministral.num_attention_heads


def test_shrink_config_derives_again_what_the_class_fills_and_keeps_layer_sums():
    """A field that defaults to None and that the class fills from the default sizes is filled
    again from the capped ones (RWKV's attention width, xLSTM's embedding width, HRM's layers per
    stack and the layer count it rewrites from it); a layer count that is the sum of the other
    layer counts stays their sum (Dory); every vocabulary is capped (inkling2's unpadded one)."""
    from transformers import AutoConfig

    rwkv = bench.shrink_config(AutoConfig.for_model("rwkv"))
    assert rwkv.attention_hidden_size == rwkv.hidden_size == 64  # 4096 before
    xlstm = bench.shrink_config(AutoConfig.for_model("xlstm"))
    assert xlstm.embedding_dim == xlstm.hidden_size == 64
    hrm = bench.shrink_config(AutoConfig.for_model("hrm_text"))
    assert hrm.num_hidden_layers == hrm.num_layers_per_stack * hrm.H_cycles * (hrm.L_cycles + 1)
    dory = bench.shrink_config(AutoConfig.for_model("dory"))
    assert dory.num_hidden_layers == dory.n_input_layers + dory.n_recurrent_layers + dory.n_output_layers
    assert len(dory.layer_types) == dory.num_hidden_layers
    inkling = bench.shrink_config(AutoConfig.for_model("inkling2_text"))
    assert inkling.unpadded_vocab_size <= inkling.vocab_size == 256


def test_a_causal_lm_config_is_a_decoder():
    """BERT-like LM heads attend both ways and return no cache unless the config says decoder."""
    import torch
    import transformers
    from transformers import AutoConfig

    config = as_causal_lm(bench.shrink_config(AutoConfig.for_model("bert")))
    assert config.is_decoder
    config.use_cache = True
    out = transformers.BertLMHeadModel(config).eval()(torch.randint(3, 250, (1, 4)), use_cache=True)
    assert out.past_key_values is not None
    llama = as_causal_lm(bench.shrink_config(AutoConfig.for_model("llama")))
    assert "is_decoder" not in vars(llama)  # a config without the flag is left as it is


def test_model_config_is_the_sub_config_of_the_model_class():
    """A composite config's causal LM takes its text config, as AutoModelForCausalLM gives it."""
    import transformers
    from transformers import AutoConfig

    config = bench.shrink_config(AutoConfig.for_model("qwen3_5"))
    text = bench.model_config(transformers.Qwen3_5ForCausalLM, config)
    assert text is config.text_config and text.vocab_size == 256
    llama = bench.shrink_config(AutoConfig.for_model("llama"))
    assert bench.model_config(transformers.LlamaForCausalLM, llama) is llama


def test_constant_weights_get_random_values():
    """afmoe zeroes its router gates (every expert ties in top-k): such weights are varied, norms
    (1-D) and weights that already vary are kept."""
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3), torch.nn.Linear(3, 2, bias=False))
    torch.nn.init.zeros_(model[2].weight)
    kept = {k: v.clone() for k, v in model.state_dict().items()}
    assert bench.vary_constant_weights(model) == ["2.weight"]
    assert model[2].weight.std() > 0
    assert all(torch.equal(kept[k], v) for k, v in model.state_dict().items() if k != "2.weight")


@pytest.mark.parametrize(("task", "model_type", "class_name"), [
    ("causal_lm", "llama", "LlamaForCausalLM"),
    ("masked_lm", "bert", "BertForMaskedLM"),
])
def test_ours_right_at_two_sizes(task, model_type, class_name):
    row = bench.run_model(task, model_type, class_name, reference=False, cache=None)
    assert row["ours"]["status"] == "ok", row
    assert row["ours"]["lost"] == []
    assert row["ours"]["worst_over_bound"] <= 1.0
    assert 0 < row["ours"]["export_cpu_s"] <= row["ours"]["export_s"] * 1.5  # one thread
    assert row["ours"]["strategy"] == "non-strict"


def test_report_cpu_seconds_where_both_measured(capsys):
    def row(model, ours, ref):
        return {"task": "masked_lm", "model": model, "ours": {"status": "ok", "export_s": 2 * ours, **({"export_cpu_s": ours} if ours else {})},
                "reference": {"status": "ok", "export_s": 2 * ref, **({"export_cpu_s": ref} if ref else {})}}

    rows = [row("a", 1.0, 4.0), row("b", 3.0, 6.0), row("c", 0, 5.0)]  # c: ours' CPU seconds unknown
    rows[1]["ours"]["strategy"] = "draft_export"
    bench.report(rows)
    out = capsys.readouterr().out
    assert "captured by draft_export (its data-dependent branches follow the sample's path; other inputs may be wrong): b" in out
    assert "export CPU seconds (2 models both export, both measured): ours median 2.00 s, reference median 5.00 s;" in out
    assert "median ratio ours / reference 0.375" in out


def test_report_counts_the_reference_over_the_rows_it_ran_on(capsys):
    """A sweep run with --no-reference leaves rows without the reference: they are not its failures."""
    rows = [{"task": "causal_lm", "model": m, "ours": {"status": "ok"}} for m in ("a", "b", "c")]
    rows[0]["reference"] = {"status": "ok"}
    rows[1]["reference"] = {"status": "export failed", "reason": "x"}
    bench.report(rows)
    out = capsys.readouterr().out
    assert "| all | 3 / 3 | 3 (100.0 %) | 1 / 2 (50.0 %) |" in out
    assert "over the 2 built models the reference ran on: ours right on 2, the reference on 1" in out


@pytest.mark.slow
def test_sweep_subprocesses_rows_and_resume(tmp_path, capsys):
    results = tmp_path / "rows.jsonl"
    only = {"gpt2", "wav2vec2", "vit"}
    rows = bench.sweep(["causal_lm", "speech_ctc", "image_classification"], only, None, 300, results, True, tmp_path / "ref")
    assert {r["model"] for r in rows} == only
    assert all(r["ours"]["status"] == "ok" for r in rows), rows
    assert len(results.read_text().splitlines()) == 3 and len(list((tmp_path / "ref").iterdir())) == 3
    again = bench.sweep(["causal_lm", "speech_ctc", "image_classification"], only, None, 300, results, True, None)
    assert [json.dumps(r) for r in again] == [json.dumps(r) for r in rows]  # resumed, not re-run
    bench.report(rows)
    assert "| all | 3 / 3 | 3 (100.0 %)" in capsys.readouterr().out


def test_reference_over_the_timeout_keeps_ours(tmp_path, monkeypatch, capsys):
    """The worker prints ours' row before the reference runs; when the reference then runs past
    the timeout, the row keeps ours and the reference's timeout is cached."""
    ours = {"task": "masked_lm", "model": "bert", "class": "BertForMaskedLM", "status": "ok",
            "ours": {"status": "ok", "export_s": 1.0, "lost": []}}

    def run(cmd, **kwargs):
        raise subprocess.TimeoutExpired(cmd, kwargs["timeout"], output="noise\n@@OURS " + json.dumps(ours) + "\n")

    monkeypatch.setattr(bench.subprocess, "run", run)
    rows = bench.sweep(["masked_lm"], {"bert"}, None, 7, tmp_path / "rows.jsonl", True, tmp_path / "ref")
    assert rows[0]["ours"] == ours["ours"] and rows[0]["status"] == "ok"
    assert rows[0]["reference"] == {"status": "timeout", "reason": "over 7 s with ours"}
    assert json.loads((tmp_path / "ref" / "masked_lm__bert.json").read_text()) == rows[0]["reference"]
