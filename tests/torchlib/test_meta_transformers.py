"""A transformers model built on the meta device, exported with `weights=` its save_pretrained
folder: its non-persistent buffers (rotary tables of each rope type, BERT's position ids) are
computed from the config as `from_pretrained` computes them (torchlib/exporter/hf_buffers.py).

Tiny configs with random weights (no download).
"""

from __future__ import annotations

import pytest
import torch

import torchlib
from torchlib.exporter.checkpoint import WeightsError
from torchlib.exporter.hf_buffers import non_persistent_buffers

transformers = pytest.importorskip("transformers")

COMMON = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _config(name: str):  # type: ignore[no-untyped-def]
    if name == "llama":
        return transformers.LlamaConfig(**COMMON), transformers.LlamaForCausalLM
    if name == "qwen2_yarn":
        rope = {"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0, "original_max_position_embeddings": 32}
        return transformers.Qwen2Config(**COMMON, max_position_embeddings=128, rope_parameters=rope), transformers.Qwen2ForCausalLM
    if name == "phi3_longrope":  # partial rotary; the short factors below the original length
        rope = {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": [1.0, 1.5], "long_factor": [2.0, 3.0]}
        return (transformers.Phi3Config(**COMMON, max_position_embeddings=64, original_max_position_embeddings=32,
                                        rope_parameters=rope, partial_rotary_factor=0.5), transformers.Phi3ForCausalLM)
    config = transformers.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                     intermediate_size=64)
    return config, transformers.BertModel


@pytest.mark.parametrize("name", ["llama", "qwen2_yarn", "phi3_longrope", "bert"])
def test_meta_model_gets_its_non_persistent_buffers_from_the_config(tmp_path, name):
    config, cls = _config(name)
    torch.manual_seed(0)
    cls(config).save_pretrained(tmp_path)
    loaded = cls.from_pretrained(tmp_path).eval()
    with torch.device("meta"):
        model = cls(loaded.config).eval()

    computed = {f"{path}.{attr}".lstrip("."): tensor for module, attr, tensor in non_persistent_buffers(model)
                for path, m in model.named_modules() if m is module}
    assert computed, "the model has non-persistent buffers"
    assert set(computed) == {name for name, _ in loaded.named_non_persistent_buffers()}
    for key, tensor in computed.items():  # exactly from_pretrained's
        assert torch.equal(tensor, loaded.get_buffer(key)), key

    ids = torch.randint(3, 128, (2, 9), generator=torch.Generator().manual_seed(1))
    inputs = {"input_ids": ids} if name == "bert" else {"input_ids": ids, "use_cache": False}
    result = torchlib.export(model, (), inputs, weights=tmp_path)
    assert all(t.is_meta for t in [*model.parameters(), *model.buffers()])  # the model keeps its own tensors
    with torch.no_grad():
        expected = loaded(**inputs)[0]
    torch.testing.assert_close(result(**inputs)[0], expected, atol=1e-5, rtol=1e-5)
    assert all(d.ok() for d in result.verify(**inputs))


def test_transformers_model_inside_a_wrapper(tmp_path):
    """The transformers model is a submodule of the exported one; the checkpoint is a state dict."""
    config, cls = _config("llama")
    torch.manual_seed(0)
    loaded = cls(config).eval()

    class Wrapper(torch.nn.Module):
        def __init__(self, lm):  # type: ignore[no-untyped-def]
            super().__init__()
            self.lm = lm

        def forward(self, ids):  # type: ignore[no-untyped-def]
            return self.lm(input_ids=ids, use_cache=False).logits

    with torch.device("meta"):
        model = Wrapper(cls(config)).eval()
    ids = torch.randint(3, 128, (1, 6), generator=torch.Generator().manual_seed(1))
    result = torchlib.export(model, (ids,), weights={f"lm.{k}": v.detach() for k, v in loaded.state_dict().items()})
    with torch.no_grad():
        torch.testing.assert_close(result(ids), loaded(ids).logits, atol=1e-5, rtol=1e-5)


def test_buffer_init_weights_does_not_compute_is_named(tmp_path):
    """A buffer the model's `_init_weights` leaves alone stays without data: refused, named."""

    class Offset(transformers.PreTrainedModel):
        config_class = transformers.PretrainedConfig

        def __init__(self, config):  # type: ignore[no-untyped-def]
            super().__init__(config)
            self.linear = torch.nn.Linear(4, 4)
            self.register_buffer("offset", torch.arange(4.0), persistent=False)
            self.post_init()

        def forward(self, x):  # type: ignore[no-untyped-def]
            return self.linear(x) + self.offset

    real = Offset(transformers.PretrainedConfig())
    with torch.device("meta"):
        model = Offset(transformers.PretrainedConfig())
    assert non_persistent_buffers(model) == []
    with pytest.raises(WeightsError, match=r"1 of the model's tensors have no data .*: offset\. Non-persistent buffers"):
        torchlib.export(model, (torch.ones(1, 4),), weights={k: v.detach() for k, v in real.state_dict().items()})
