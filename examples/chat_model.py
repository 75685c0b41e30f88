"""A chat model to onnxruntime: export a transformers Llama decoder with its KV cache, then
generate greedily with the ONNX model and check the tokens against `model.generate`.

The model is a tiny LlamaConfig with random weights (nothing is downloaded); for a real one,
build it with `transformers.AutoModelForCausalLM.from_pretrained(...)` and keep the rest.

    python examples/chat_model.py            # 32 new tokens -> chat_model.onnx
    python examples/chat_model.py --quick    # 8 new tokens (what the test suite runs)
"""

from __future__ import annotations

import argparse

import torch
import transformers

import torchlib
import torchlib.generation


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="generate 8 tokens instead of 32")
    parser.add_argument("-o", "--output", default="chat_model.onnx")
    args = parser.parse_args(argv)
    new_tokens = 8 if args.quick else 32

    torch.manual_seed(0)
    layers, heads, kv_heads, head_dim = 2, 4, 2, 8
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=heads * head_dim, intermediate_size=64,
                                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                                      eos_token_id=127)
    model = transformers.LlamaForCausalLM(config).eval()

    # The decode step: new tokens, the attention mask over past + new, and the cache of the past
    # (batch, kv heads, past length, head dim). One ONNX model runs the prompt (a past of length 0)
    # and every next token.
    cache = transformers.DynamicCache([(torch.randn(2, kv_heads, 5, head_dim), torch.randn(2, kv_heads, 5, head_dim))
                                       for _ in range(layers)])
    past = {0: "batch", 2: "past_sequence"}
    inputs = {"input_ids": torch.randint(0, 128, (2, 3)), "attention_mask": torch.ones(2, 8, dtype=torch.long),
              "cache": cache, "use_cache": True}
    result = torchlib.export(
        model, (), inputs,
        dynamic_shapes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
                        "cache": [[past] * layers, [past] * layers]})  # transformers' layout: keys, then values
    result.save(args.output)
    print(f"saved {args.output}: inputs {[i.name for i in result.model_proto.graph.input]}")

    prompt = torch.randint(0, 128, (1, 7))
    tokens = torchlib.generation.greedy(args.output, prompt, max_new_tokens=new_tokens, eos_token_id=127)
    expected = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens,
                              do_sample=False)
    print("onnxruntime:", tokens.tolist())
    print("torch:      ", expected.tolist())
    assert torch.equal(tokens, expected), "the ONNX model's greedy tokens differ from transformers' generate"


if __name__ == "__main__":
    main()
