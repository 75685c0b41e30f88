"""RNN, GRU and LSTM (onnx's equations, gate orders i-o-f-c for LSTM and z-r-h for GRU, every
direction, sequence_lens, initial states, peepholes, clip, linear_before_reset, layout) as a
Python loop over time steps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from torchlib.importer._common import impl

ACTIVATIONS: dict[str, Callable[[torch.Tensor, float | None, float | None], torch.Tensor]] = {
    "sigmoid": lambda x, a, b: torch.sigmoid(x),
    "tanh": lambda x, a, b: torch.tanh(x),
    "relu": lambda x, a, b: torch.relu(x),
    "leakyrelu": lambda x, a, b: torch.where(x >= 0, x, x * (0.01 if a is None else a)),
    "hardsigmoid": lambda x, a, b: torch.clamp(x * (0.2 if a is None else a) + (0.5 if b is None else b), 0, 1),
    "affine": lambda x, a, b: x * (1.0 if a is None else a) + (0.0 if b is None else b),
    "scaledtanh": lambda x, a, b: (1.0 if a is None else a) * torch.tanh(x * (1.0 if b is None else b)),
    "thresholdedrelu": lambda x, a, b: torch.where(x > (1.0 if a is None else a), x, torch.zeros_like(x)),
    "softsign": lambda x, a, b: x / (1 + torch.abs(x)),
    "softplus": lambda x, a, b: torch.nn.functional.softplus(x),
    "elu": lambda x, a, b: torch.where(x > 0, x, (1.0 if a is None else a) * torch.expm1(x)),
}


def _bind(fn: Callable[[torch.Tensor, float | None, float | None], torch.Tensor], a: float | None,
          b: float | None) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda x: fn(x, a, b)


def _acts(names: tuple[str, ...] | None, defaults: list[str], alphas: tuple[float, ...] | None,
          betas: tuple[float, ...] | None, directions: int) -> list[list[Callable[[torch.Tensor], torch.Tensor]]]:
    per = len(defaults)
    names_l = list(names) if names else defaults * directions
    if len(names_l) == per:
        names_l = names_l * directions
    out: list[list[Callable[[torch.Tensor], torch.Tensor]]] = []
    for d in range(directions):
        row: list[Callable[[torch.Tensor], torch.Tensor]] = []
        for k in range(per):
            i = d * per + k
            fn = ACTIVATIONS[names_l[i].lower()]
            a = alphas[i] if alphas and i < len(alphas) else None
            b = betas[i] if betas and i < len(betas) else None
            row.append(_bind(fn, a, b))
        out.append(row)
    return out


def _run(kind: str, x: torch.Tensor, w: torch.Tensor, r: torch.Tensor, b: torch.Tensor | None,
         seq_lens: torch.Tensor | None, h0: torch.Tensor | None, c0: torch.Tensor | None, p: torch.Tensor | None, *,
         activation_alpha: tuple[float, ...] | None, activation_beta: tuple[float, ...] | None,
         activations: tuple[str, ...] | None, clip: float | None, direction: str, hidden_size: int,
         layout: int, extra: int) -> tuple[torch.Tensor, ...]:
    if layout:
        x = x.transpose(0, 1)
        h0 = h0.transpose(0, 1) if h0 is not None else None
        c0 = c0.transpose(0, 1) if c0 is not None else None
    seq, batch = x.shape[0], x.shape[1]
    dirs = 2 if direction == "bidirectional" else 1
    hs = hidden_size
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    defaults = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[kind]
    acts = _acts(activations, defaults, activation_alpha, activation_beta, dirs)
    lens = seq_lens.to(torch.int64) if seq_lens is not None else torch.full((batch,), seq, dtype=torch.int64)
    ys, hs_out, cs_out = [], [], []
    for d in range(dirs):
        reverse = direction == "reverse" or d == 1
        wd, rd = w[d], r[d]
        bias = b[d] if b is not None else torch.zeros(2 * gates * hs, dtype=x.dtype)
        wb, rb = bias[: gates * hs], bias[gates * hs:]
        h = h0[d] if h0 is not None else torch.zeros(batch, hs, dtype=x.dtype)
        c = c0[d] if c0 is not None else torch.zeros(batch, hs, dtype=x.dtype)
        y = torch.zeros(seq, batch, hs, dtype=x.dtype)
        f, g, hact = (acts[d] + [acts[d][-1]] * 3)[:3]
        for step in range(seq):
            t = seq - 1 - step if reverse else step
            if reverse:
                # each batch entry runs backward over its own length
                t_idx = lens - 1 - step
                active = t_idx >= 0
                xt = x[t_idx.clamp(min=0), torch.arange(batch)]
            else:
                active = t < lens
                xt = x[t]
            xw = xt @ wd.T + wb
            if kind == "LSTM":
                z = xw + h @ rd.T + rb
                i_, o_, f_, c_ = z.split(hs, dim=-1)
                if p is not None:
                    pi, po, pf = p[d].split(hs)
                    i_ = i_ + pi * c
                    f_ = f_ + pf * c
                if clip is not None:
                    i_, f_, c_ = (v.clamp(-clip, clip) for v in (i_, f_, c_))
                i_g = f(i_)
                f_g = 1 - i_g if extra else f(f_)
                c_new = f_g * c + i_g * g(c_)
                if p is not None:
                    o_ = o_ + po * c_new
                if clip is not None:
                    o_ = o_.clamp(-clip, clip)
                h_new = f(o_) * hact(c_new)
                c = torch.where(active.unsqueeze(1), c_new, c)
            elif kind == "GRU":
                xz, xr, xh = xw.split(hs, dim=-1)
                rz, rr, rh = rd.split(hs)
                bz, br, bh = rb.split(hs)
                z_pre, r_pre = xz + h @ rz.T + bz, xr + h @ rr.T + br
                if clip is not None:
                    z_pre, r_pre = z_pre.clamp(-clip, clip), r_pre.clamp(-clip, clip)
                zt, rt = f(z_pre), f(r_pre)
                hh = xh + (rt * (h @ rh.T + bh) if extra else (rt * h) @ rh.T + bh)
                if clip is not None:
                    hh = hh.clamp(-clip, clip)
                h_new = (1 - zt) * g(hh) + zt * h
            else:
                z = xw + h @ rd.T + rb
                if clip is not None:
                    z = z.clamp(-clip, clip)
                h_new = f(z)
            h = torch.where(active.unsqueeze(1), h_new, h)
            out_t = torch.where(active.unsqueeze(1), h_new, torch.zeros_like(h_new))
            if reverse:
                y[t_idx.clamp(min=0), torch.arange(batch)] = torch.where(active.unsqueeze(1), out_t,
                                                                         y[t_idx.clamp(min=0), torch.arange(batch)])
            else:
                y[t] = out_t
        ys.append(y)
        hs_out.append(h)
        cs_out.append(c)
    y_all = torch.stack(ys, dim=1)
    h_all, c_all = torch.stack(hs_out), torch.stack(cs_out)
    if layout:
        y_all, h_all, c_all = y_all.permute(2, 0, 1, 3), h_all.transpose(0, 1), c_all.transpose(0, 1)
    return (y_all, h_all, c_all) if kind == "LSTM" else (y_all, h_all)


_COMMON: dict[str, Any] = dict(activation_alpha=None, activation_beta=None, activations=None, clip=None,
                               direction="forward", hidden_size=None, layout=0)


@impl("LSTM", since=7, multi=True, input_forget=0, **_COMMON)
def lstm(x: torch.Tensor, w: torch.Tensor, r: torch.Tensor, b: torch.Tensor | None = None,
         seq_lens: torch.Tensor | None = None, h0: torch.Tensor | None = None, c0: torch.Tensor | None = None,
         p: torch.Tensor | None = None, *, input_forget: int, **attrs: Any) -> tuple[torch.Tensor, ...]:
    attrs["hidden_size"] = attrs["hidden_size"] or r.shape[-1]
    return _run("LSTM", x, w, r, b, seq_lens, h0, c0, p, extra=input_forget, **attrs)


@impl("GRU", since=7, multi=True, linear_before_reset=0, **_COMMON)
def gru(x: torch.Tensor, w: torch.Tensor, r: torch.Tensor, b: torch.Tensor | None = None,
        seq_lens: torch.Tensor | None = None, h0: torch.Tensor | None = None, *, linear_before_reset: int,
        **attrs: Any) -> tuple[torch.Tensor, ...]:
    attrs["hidden_size"] = attrs["hidden_size"] or r.shape[-1]
    return _run("GRU", x, w, r, b, seq_lens, h0, None, None, extra=linear_before_reset, **attrs)


@impl("RNN", since=7, multi=True, **_COMMON)
def rnn(x: torch.Tensor, w: torch.Tensor, r: torch.Tensor, b: torch.Tensor | None = None,
        seq_lens: torch.Tensor | None = None, h0: torch.Tensor | None = None, **attrs: Any) -> tuple[torch.Tensor, ...]:
    attrs["hidden_size"] = attrs["hidden_size"] or r.shape[-1]
    return _run("RNN", x, w, r, b, seq_lens, h0, None, None, extra=0, **attrs)
