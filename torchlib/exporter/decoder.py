"""A Llama-style decoder-only transformer built from a config, with random weights: RMSNorm,
rotary embeddings (rotate-half), causal scaled-dot-product attention, a SiLU-gated MLP.

The model of the big-model benchmark (`bench/bench_big.py`, about 1 B parameters at the default
config) and of the float16 / bfloat16 export tests (a few thousand parameters).
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass
class DecoderConfig:
    vocab: int = 32000
    hidden: int = 2048
    layers: int = 16
    heads: int = 16
    intermediate: int = 5632
    max_seq: int = 2048
    rope_theta: float = 10000.0

    @property
    def parameters(self) -> int:
        per_layer = 4 * self.hidden * self.hidden + 3 * self.hidden * self.intermediate + 2 * self.hidden
        return self.layers * per_layer + 2 * self.vocab * self.hidden + self.hidden


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def _rotary_tables(c: DecoderConfig) -> tuple[torch.Tensor, torch.Tensor]:
    head_dim = c.hidden // c.heads
    inv_freq = 1.0 / (c.rope_theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(c.max_seq, dtype=torch.float32), inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


class _Block(nn.Module):
    def __init__(self, c: DecoderConfig):
        super().__init__()
        self.heads = c.heads
        self.attn_norm = nn.RMSNorm(c.hidden, eps=1e-6)
        self.q = nn.Linear(c.hidden, c.hidden, bias=False)
        self.k = nn.Linear(c.hidden, c.hidden, bias=False)
        self.v = nn.Linear(c.hidden, c.hidden, bias=False)
        self.o = nn.Linear(c.hidden, c.hidden, bias=False)
        self.mlp_norm = nn.RMSNorm(c.hidden, eps=1e-6)
        self.gate = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.up = nn.Linear(c.hidden, c.intermediate, bias=False)
        self.down = nn.Linear(c.intermediate, c.hidden, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        y = self.attn_norm(x)
        q, k, v = (p(y).view(b, s, self.heads, h // self.heads).transpose(1, 2) for p in (self.q, self.k, self.v))
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, h))
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Decoder(nn.Module):
    cos: torch.Tensor  # buffers: the rotary tables
    sin: torch.Tensor

    def __init__(self, c: DecoderConfig):
        super().__init__()
        self.embed = nn.Embedding(c.vocab, c.hidden)
        self.blocks = nn.ModuleList([_Block(c) for _ in range(c.layers)])
        self.norm = nn.RMSNorm(c.hidden, eps=1e-6)
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False)
        cos, sin = _rotary_tables(c)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        s = idx.shape[1]
        x = self.embed(idx)
        cos, sin = self.cos[:s].to(x.dtype), self.sin[:s].to(x.dtype)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.lm_head(self.norm(x))


def decoder(config: DecoderConfig, seed: int = 0, init: bool = True) -> Decoder:
    """The decoder in eval mode with random weights (normal, std 0.02, as GPT-style models are
    initialized). init=False leaves the weights uninitialized memory: quick to make, for
    measuring export time only."""
    if not init:
        with torch.device("meta"):
            model = Decoder(config)
        model = model.to_empty(device="cpu")
        model.cos, model.sin = _rotary_tables(config)  # computed, not learned: made for real
        return model.eval()
    torch.manual_seed(seed)
    model = Decoder(config)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.02)
    return model.eval()
