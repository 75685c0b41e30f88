"""A view taken before an in-place write to its tensor and read after it reads the written values
(torch's views alias their base). The exporter takes each such view again from the written
tensor, through the view ops that made it, as functionalization does: no whole-program
decomposition, and torch's answer bit for bit at two sizes. Views made by ops that return a view
only when they need not copy (reshape, flatten, to) still fall back to the whole-program
decomposition, and are right."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.export import Dim

import torchlib
from torchlib.exporter.mutation import Aliases, written_nodes


class BriefCase(nn.Module):
    """A select of a tensor, read after the whole tensor is copied over."""

    def forward(self, x, y):
        x = x.clone()
        v = x[:, 0]
        x.copy_(y)
        return v + 1


class WrittenInput(nn.Module):
    """The written tensor is the user's input: its new value is also an output."""

    def forward(self, x, y):
        row = x[1]
        x.add_(y)
        return row * 2


class ViewsOfViews(nn.Module):
    """select, slice, view, transpose, unsqueeze, permute and expand, chained; views read between
    writes and after them; a write into one view while others are read."""

    def forward(self, x, y):
        z = x.clone()
        t = z.transpose(0, 1)
        u = t[1:].unsqueeze(0)
        w = z.view(-1)
        p = z.unsqueeze(-1).permute(2, 1, 0)
        e = z[0].expand(2, -1)
        z[:, 1].copy_(y[:, 0])
        first = u * 3 + w[:4].unsqueeze(0).unsqueeze(0)[..., :1]
        z.mul_(2)
        return first, u * 3, w + 1, t, p - 1, e * 1


class WriteIntoAViewWhoseBaseViewIsRead(nn.Module):
    """qwen3_5's interleaved rotary frequencies: `t = f[0]; t[..., 1::3] = f[1, ..., 1::3]`, then
    `t` (the view the write went through) is read."""

    def forward(self, x):
        f = x * 1.0
        t = f[0]
        t[..., 1::3] = f[1, ..., 1::3]
        t[..., 2::3] = f[2, ..., 2::3]
        return torch.cat([t, t], dim=-1)


class ReadThroughWrittenAlias(nn.Module):
    """A view written in place (`b = a.mul_(2)` names the view `a`), then its base written: `b`
    reads both writes; a view of `b` taken after the second write too."""

    def forward(self, x):
        z = x.clone()
        a = z[:, 1:]
        b = a.mul_(2)
        z.add_(1)
        return b + 0, b[0] * 1


class ListViews(nn.Module):
    """Elements of split and unbind (lists of views) read after their tensor is written."""

    def forward(self, x):
        z = x.clone()
        parts = z.split(2, dim=1)
        cols = z.unbind(1)
        z.mul_(3)
        return parts[0] + parts[1], cols[0] - cols[-1]


class ViewTakenAgainAfterAnotherWrite(nn.Module):
    """A view read after two writes, one into another view of its tensor; a view of it taken
    after the writes; diagonal and unfold views."""

    def forward(self, x):
        z = x.clone()
        v = z[:, 1:]
        d = z[:, :3].diagonal()
        f = z[0].unfold(0, 2, 1)
        z[0].fill_(5.0)
        z.sub_(x)
        return v[0] + 0, d * 1, f + 0


def _inputs(model, rows, cols, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=g)
    if model in (BriefCase, WrittenInput, ViewsOfViews):
        return x, torch.randn(rows, cols, generator=g)
    return (x,)


_CASES = [
    (BriefCase, (3, 4), (6, 4), {0: "rows"}),
    (WrittenInput, (3, 4), (6, 7), {0: "rows", 1: "cols"}),
    (ViewsOfViews, (3, 5), (6, 9), {0: "rows", 1: "cols"}),
    (WriteIntoAViewWhoseBaseViewIsRead, (3, 7), (4, 13), {0: "rows", 1: "cols"}),
    (ReadThroughWrittenAlias, (3, 4), (5, 7), {0: "rows", 1: "cols"}),
    (ListViews, (3, 4), (5, 4), {0: "rows"}),
    (ViewTakenAgainAfterAnotherWrite, (3, 4), (5, 7), {0: "rows", 1: "cols"}),
]


@pytest.mark.parametrize("model, sample, other, dims", _CASES, ids=[c[0].__name__ for c in _CASES])
def test_views_read_after_a_write_are_taken_again(model, sample, other, dims):
    args = _inputs(model, *sample, seed=0)
    dynamic = tuple({axis: Dim(name, min=3 if name == "rows" else 4) for axis, name in dims.items()} for _ in args)
    result = torchlib.export(model(), copy.deepcopy(args), dynamic_shapes=dynamic)
    assert "decompositions" not in result.timings, result.diagnostics
    assert not any("whole program" in d for d in result.diagnostics), result.diagnostics
    assert result.self_check.startswith("passed"), result.self_check
    for seed, shape in enumerate([sample, other]):
        args = _inputs(model, *shape, seed=seed)
        expected = model()(*copy.deepcopy(args))
        expected = list(expected) if isinstance(expected, tuple) else [expected]
        got = result.run(*copy.deepcopy(args))
        if model is WrittenInput:  # the written input comes first
            torch.testing.assert_close(torch.as_tensor(got.pop(0)), args[0] + args[1], rtol=0, atol=0)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert torch.equal(torch.as_tensor(g), e), (shape, g, e)


class ViewsThatMayBeCopies(nn.Module):
    """reshape returns a view of a contiguous tensor (it reads the write) and a copy of a
    transposed one (it does not); `to` to the same dtype returns its argument. The exporter
    cannot take them again from the written tensor: the whole program is decomposed."""

    def forward(self, x):
        z = x.clone()
        flat = z.reshape(-1)
        copied = z.t().reshape(-1)
        same = z.to(torch.float32)[0]
        z.mul_(2)
        return flat + 1, copied + 1, same + 1


def test_views_that_may_be_copies_fall_back_and_are_right():
    x = torch.randn(3, 4)
    result = torchlib.export(ViewsThatMayBeCopies(), (x,), dynamic_shapes=({0: Dim("rows")},))
    assert "decompositions" in result.timings
    assert "returns a view only when it need not copy" in result.diagnostics[0], result.diagnostics
    for rows in (3, 6):
        x = torch.randn(rows, 4)
        for g, e in zip(result(x), ViewsThatMayBeCopies()(x), strict=True):
            assert torch.equal(torch.as_tensor(g), e)


def _problems(model, *args):
    graph = torch.export.export(model, args).graph
    aliases = Aliases(graph)
    return [aliases.problem(n, w) for n in graph.nodes for w in written_nodes(n) if aliases.problem(n, w)]


@pytest.mark.parametrize("view, reason", [
    (lambda z: z.reshape(-1), "aten.reshape.default"),
    (lambda z: z.flatten(), "aten.flatten.using_ints"),
    (lambda z: z.t().reshape(-1), "aten.reshape.default"),
    (lambda z: z.to(torch.float32).view(-1), "aten.to.dtype"),
])
def test_which_views_fall_back(view, reason):
    """The views the exporter does not take again name the op that made them."""

    class M(nn.Module):
        def forward(self, x):
            z = x.clone()
            v = view(z)
            z.mul_(2)
            return v + 1

    problems = _problems(M(), torch.randn(3, 4))
    assert len(problems) == 1 and f"and {reason}" in problems[0], problems


def test_views_that_are_taken_again_raise_no_problem():
    assert _problems(ViewsOfViews(), torch.randn(3, 5), torch.randn(3, 5)) == []
    assert _problems(ListViews(), torch.randn(3, 4)) == []


class WritesIntoListViews(nn.Module):
    def forward(self, x):
        z = x.clone()
        a, b = z.split(2, dim=1)
        a.mul_(2)
        first, rest = z.split([1, 3], dim=1)
        rest[1:].add_(1)
        return z * 1, b + 0


def test_writes_into_split_elements_update_their_tensor():
    """The elements of split are views (`Tensor(a -> *) self -> Tensor(a)[]`): a write into one
    writes its tensor (it was lost before: the tensor kept its old values)."""
    dims = ({0: Dim("rows", min=3)},)
    result = torchlib.export(WritesIntoListViews(), (torch.randn(3, 4),), dynamic_shapes=dims)
    assert "decompositions" not in result.timings and result.self_check.startswith("passed"), result.diagnostics
    for rows in (3, 6):
        x = torch.randn(rows, 4)
        for g, e in zip(result(x), WritesIntoListViews()(x), strict=True):
            assert torch.equal(torch.as_tensor(g), e)


def test_write_into_an_unbind_element_of_a_dynamic_tensor_falls_back():
    """Functionalizing unbind on its own replaces the dynamic sizes by the sample's in the
    program's ShapeEnv: such a write is not traced per node. The whole-program decomposition
    then fixes the rows, and says so; the answer is right."""

    class M(nn.Module):
        def forward(self, x):
            z = x.clone()
            z.unbind(1)[2].add_(1)
            return z * 1

    x = torch.randn(3, 4)
    with pytest.warns(UserWarning, match="marked dynamic"):
        result = torchlib.export(M(), (x,), dynamic_shapes=({0: Dim("rows", min=3)},))
    assert "functionalizing aten.unbind.int on its own fixes them" in " ".join(result.diagnostics)
    assert torch.equal(torch.as_tensor(result(x)), M()(x))
