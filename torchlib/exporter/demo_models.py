"""Models written the way people write them, with in-place ops: the capture benchmark
(`bench/bench_capture.py`) and the exporter's tests use them.

- `resnet`: torchvision-style basic blocks with `out += identity` and `ReLU(inplace=True)`.
- `masked_encoder`: a transformer encoder whose attention masks padding with `masked_fill_`.
- `rms_rope_decoder`: a decoder with hand-written RMSNorm and rotary embeddings.
- `lstm_model`: a two-layer LSTM and a linear head.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.down is not None:
            identity = self.down(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.layers = nn.Sequential(BasicBlock(16, 16), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2))
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return ResNet().eval(), (torch.randn(2, 3, 32, 32),)


class MaskedAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)

    def forward(self, x, pad):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, -1)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
        s.masked_fill_(pad[:, None, None, :], float("-inf"))
        a = s.softmax(-1)
        return self.o((a @ v).transpose(1, 2).reshape(b, t, d))


class EncLayer(nn.Module):
    def __init__(self, d=64, h=4):
        super().__init__()
        self.attn = MaskedAttention(d, h)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, pad):
        x = self.ln1(x + self.attn(x, pad))
        return self.ln2(x + self.ff(x))


class MaskedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([EncLayer() for _ in range(2)])

    def forward(self, x, lengths):
        pad = torch.arange(x.shape[1])[None, :] >= lengths[:, None]
        for l in self.layers:
            x = l(x, pad)
        return x.masked_fill(pad[..., None], 0.0)


def masked_encoder() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return MaskedEncoder().eval(), (torch.randn(3, 16, 64), torch.tensor([16, 9, 4]))


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope(x, cos, sin):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return x * cos + torch.cat((-x2, x1), -1) * sin


class DecLayer(nn.Module):
    def __init__(self, d=64, h=4):
        super().__init__()
        self.h = h
        self.n1 = RMSNorm(d)
        self.n2 = RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, 2 * d, bias=False)
        self.up = nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        y = self.n1(x)
        q, k, v = (p(y).view(b, t, self.h, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        y = self.n2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Decoder(nn.Module):
    def __init__(self, vocab=256, d=64, h=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([DecLayer(d, h) for _ in range(2)])
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, d // h, 2).float() / (d // h)))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, ids):
        t = ids.shape[1]
        freqs = torch.outer(torch.arange(t, dtype=torch.float32), self.inv_freq)
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos().to(dtype=torch.float32), emb.sin()
        x = self.emb(ids)
        for l in self.layers:
            x = l(x, cos, sin)
        return self.head(self.norm(x))


def rms_rope_decoder() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return Decoder().eval(), (torch.randint(0, 256, (2, 12)),)


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(32, 64, num_layers=2, batch_first=True)
        self.fc = nn.Linear(64, 8)

    def forward(self, x):
        return self.fc(self.rnn(x)[0])


def lstm_model() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    return LSTMModel().eval(), (torch.randn(4, 16, 32),)
