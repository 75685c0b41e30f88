"""If, Loop and Scan: their bodies are GraphModules (imported recursively), called with their
own inputs followed by the outer-scope values they read.

If runs the taken branch in eager mode and becomes `torch.cond` under torch.export / compile
(where both branches must then give the same types and shapes). Loop and Scan run as Python
loops in eager mode. Under torch.export / compile, a Loop is `torch.while_loop` (its trip count
and condition stay run-time values; the carried values must keep their shapes), its scan outputs
preallocated for the trip count and cut to the iterations run; Scan is torch's scan operator.
Lengths stay dynamic: nothing is unrolled."""

from __future__ import annotations

from typing import Any

import torch

from torchlib.importer.converter import Ctx
from torchlib.importer.registry import onnx_op


def tracing() -> bool:
    return bool(torch.compiler.is_compiling() or torch.compiler.is_exporting())


def _unaliased(outputs: tuple[torch.Tensor, ...], inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """torch.cond's branches may not return their inputs (an Identity branch): copies of them."""
    return tuple(o.clone() if any(o is i for i in inputs) else o for o in outputs)


def run_if(cond: torch.Tensor, then_gm: torch.nn.Module, then_outer: tuple[torch.Tensor, ...],
           else_gm: torch.nn.Module, else_outer: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    if tracing():
        operands = tuple(then_outer) + tuple(else_outer)
        n = len(then_outer)
        return tuple(torch.cond(cond.reshape(()), lambda *a: _unaliased(then_gm(*a[:n]), a),
                                lambda *a: _unaliased(else_gm(*a[n:]), a), operands))
    return tuple(then_gm(*then_outer) if bool(cond.reshape(()).item()) else else_gm(*else_outer))


@onnx_op("", "If")
def if_(ctx: Ctx, cond: Any) -> Any:
    then_gm, then_outer = ctx.subgraph("then_branch")
    else_gm, else_outer = ctx.subgraph("else_branch")
    return ctx.call_multi(run_if, len(ctx.node.output), cond, then_gm, tuple(then_outer), else_gm, tuple(else_outer))


def _while_loop(trip: torch.Tensor | None, cond: torch.Tensor | None, body: torch.nn.Module,
                outer: tuple[torch.Tensor, ...], carried: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    """The Loop as torch.while_loop over (iteration, condition, *carried)."""
    limit = trip.reshape(()).to(torch.int64) if trip is not None else torch.tensor(torch.iinfo(torch.int64).max)
    start = (torch.zeros((), dtype=torch.int64), cond.reshape(()).to(torch.bool) if cond is not None
             else torch.ones((), dtype=torch.bool))  # fmt: skip

    def go_on(i: torch.Tensor, keep: torch.Tensor, *state: torch.Tensor) -> torch.Tensor:
        return keep & (i < limit)

    def step(i: torch.Tensor, keep: torch.Tensor, *state: torch.Tensor) -> tuple[torch.Tensor, ...]:
        out = body(i, keep, *state, *outer)
        return (i + 1, out[0].reshape(()).to(torch.bool).clone(), *[o.clone() for o in out[1:]])  # no aliasing

    return tuple(torch.while_loop(go_on, step, (*start, *carried))[2:])


def _while_loop_with_scans(trip: torch.Tensor | None, cond: torch.Tensor | None, body: torch.nn.Module,
                           outer: tuple[torch.Tensor, ...], carried: tuple[torch.Tensor, ...], count_scans: int,
                           where: str) -> tuple[torch.Tensor, ...]:
    """A Loop with scan outputs as torch.while_loop: each scan output is preallocated for the trip
    count (its element shape from one call of the body on the first iteration's inputs), written
    at each iteration, and cut to the iterations that ran (a run-time count)."""
    if trip is None:
        raise ValueError(f"{where}: a Loop with scan outputs and no trip count cannot be captured by torch.export "
                         "(its outputs' length has no bound); give the Loop a trip count, or run it in eager mode")
    limit = trip.reshape(()).to(torch.int64)
    first = body(torch.zeros((), dtype=torch.int64), torch.ones((), dtype=torch.bool), *carried, *outer)
    slots: Any = limit.item()  # a SymInt under torch.export
    torch._check(slots >= 0)
    buffers = tuple(torch.zeros((slots, *e.shape), dtype=e.dtype) for e in first[1 + len(carried):])
    start = (torch.zeros((), dtype=torch.int64), cond.reshape(()).to(torch.bool) if cond is not None
             else torch.ones((), dtype=torch.bool))  # fmt: skip

    def go_on(i: torch.Tensor, keep: torch.Tensor, *state: torch.Tensor) -> torch.Tensor:
        return keep & (i < limit)

    def step(i: torch.Tensor, keep: torch.Tensor, *state: torch.Tensor) -> tuple[torch.Tensor, ...]:
        values, scans = state[:len(carried)], state[len(carried):]
        out = body(i, keep, *values, *outer)
        written = [b.index_copy(0, i.reshape(1), o.unsqueeze(0)) for b, o in zip(scans, out[1 + len(carried):])]
        return (i + 1, out[0].reshape(()).to(torch.bool).clone(), *[o.clone() for o in out[1:1 + len(carried)]],
                *written)  # fmt: skip

    final = torch.while_loop(go_on, step, (*start, *carried, *buffers))
    ran = final[0].item()
    torch._check(ran >= 0)
    torch._check(ran <= slots)
    return tuple(final[2:2 + len(carried)]) + tuple(b[:ran] for b in final[2 + len(carried):])


def run_loop(trip: torch.Tensor | None, cond: torch.Tensor | None, body: torch.nn.Module, outer: tuple[torch.Tensor, ...],
             count_carried: int, count_scans: int, where: str, *carried: torch.Tensor) -> tuple[torch.Tensor, ...]:
    if tracing():
        if count_scans:
            return _while_loop_with_scans(trip, cond, body, outer, carried, count_scans, where)
        return _while_loop(trip, cond, body, outer, carried)
    state = list(carried)
    scans: list[list[torch.Tensor]] = []
    max_trip = int(trip.reshape(()).item()) if trip is not None else None
    keep_going = bool(cond.reshape(()).item()) if cond is not None else True
    i = 0
    while keep_going and (max_trip is None or i < max_trip):
        out = body(torch.tensor(i, dtype=torch.int64), torch.tensor(keep_going), *state, *outer)
        keep_going = bool(out[0].reshape(()).item())
        state = list(out[1:1 + count_carried])
        per_iter = out[1 + count_carried:]
        if not scans:
            scans = [[] for _ in per_iter]
        for acc, value in zip(scans, per_iter):
            acc.append(value)
        i += 1
    if i == 0 and count_scans:
        raise ValueError(f"{where}: the Loop ran zero times: its scan outputs' element shapes are unknown")
    return tuple(state) + tuple(torch.stack(acc) for acc in scans)


@onnx_op("", "Loop")
def loop(ctx: Ctx, trip: Any, cond: Any, *carried: Any) -> Any:
    body, outer = ctx.subgraph("body")
    count_scans = len(ctx.node.output) - len(carried)
    return ctx.call_multi(run_loop, len(ctx.node.output), trip, cond, body, tuple(outer), len(carried), count_scans,
                          ctx.where, *carried)


def _scan_traced(body: torch.nn.Module, outer: tuple[torch.Tensor, ...], state: list[torch.Tensor],
                 scan_in: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The scan as torch's scan operator (torch._higher_order_ops.scan): the length stays a
    run-time value. Returns (final states, scan outputs stacked on dim 0)."""
    from torch._higher_order_ops.scan import scan as torch_scan

    count_state = len(state)

    def combine(carry: tuple[torch.Tensor, ...], x: tuple[torch.Tensor, ...]) -> tuple[Any, Any]:
        result = body(*carry, *x, *outer)
        fresh = [r.clone() for r in result]  # no output may alias an input
        return tuple(fresh[:count_state]), tuple(fresh[count_state:])

    final, stacked = torch_scan(combine, tuple(state), tuple(scan_in))
    return list(final), list(stacked)


def run_scan(body: torch.nn.Module, outer: tuple[torch.Tensor, ...], count_scan_in: int, in_axes: tuple[int, ...],
             in_dirs: tuple[int, ...], out_axes: tuple[int, ...], out_dirs: tuple[int, ...],
             *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    count_state = len(inputs) - count_scan_in
    state = list(inputs[:count_state])
    scan_in = [x.movedim(a if a >= 0 else a + x.dim(), 0) for x, a in zip(inputs[count_state:], in_axes)]
    scan_in = [torch.flip(x, [0]) if d else x for x, d in zip(scan_in, in_dirs)]
    if tracing() and scan_in:
        state, stacked = _scan_traced(body, outer, state, scan_in)
    else:
        outs: list[list[torch.Tensor]] = []
        for t in range(scan_in[0].shape[0] if scan_in else 0):
            result = body(*state, *[x[t] for x in scan_in], *outer)
            state = list(result[:count_state])
            per_iter = result[count_state:]
            if not outs:
                outs = [[] for _ in per_iter]
            for acc, value in zip(outs, per_iter):
                acc.append(value)
        stacked = [torch.stack(acc) for acc in outs]
    result = []
    for k, y in enumerate(stacked):
        if k < len(out_dirs) and out_dirs[k]:
            y = torch.flip(y, [0])
        a = out_axes[k] if k < len(out_axes) else 0
        result.append(y.movedim(0, a if a >= 0 else a + y.dim()))
    return tuple(state) + tuple(result)


@onnx_op("", "Scan", since=9)
def scan(ctx: Ctx, *inputs: Any) -> Any:
    body, outer = ctx.subgraph("body")
    count_scan_in = ctx.attr("num_scan_inputs")
    count_scan_out = len(ctx.node.output) - (len(inputs) - count_scan_in)
    in_axes = tuple(ctx.attr("scan_input_axes", [0] * count_scan_in))
    in_dirs = tuple(ctx.attr("scan_input_directions", [0] * count_scan_in))
    out_axes = tuple(ctx.attr("scan_output_axes", [0] * count_scan_out))
    out_dirs = tuple(ctx.attr("scan_output_directions", [0] * count_scan_out))
    return ctx.call_multi(run_scan, len(ctx.node.output), body, tuple(outer), count_scan_in, in_axes, in_dirs,
                          out_axes, out_dirs, *inputs)


def run_scan_8(body: torch.nn.Module, outer: tuple[torch.Tensor, ...], count_scan_in: int, in_dirs: tuple[int, ...],
               *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Scan-8: states and scan inputs carry a batch dim first (the scan axis is 1); each batch row
    is scanned on its own and the results stacked."""
    rows = [run_scan(body, outer, count_scan_in, (0,) * count_scan_in, in_dirs, (), (), *[x[b] for x in inputs])
            for b in range(inputs[0].shape[0])]  # fmt: skip
    return tuple(torch.stack(parts) for parts in zip(*rows))


@onnx_op("", "Scan", since=8, until=9)
def scan_8(ctx: Ctx, sequence_lens: Any, *inputs: Any) -> Any:
    if sequence_lens is not None:
        raise ctx.error("sequence_lens (per-batch scan lengths) is not supported; only full-length scans")
    body, outer = ctx.subgraph("body")
    count_scan_in = ctx.attr("num_scan_inputs")
    in_dirs = tuple(ctx.attr("directions", [0] * count_scan_in))
    return ctx.call_multi(run_scan_8, len(ctx.node.output), body, tuple(outer), count_scan_in, in_dirs, *inputs)
