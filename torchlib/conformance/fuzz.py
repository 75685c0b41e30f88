"""Edge-input fuzzing: every registered function, eagerly, on OpInfo samples transformed into
the inputs torch accepts and tests rarely give (empty and size-1 dims, NaN/inf, huge values,
integer extremes, non-contiguous views, negative dims; float64 is a dtype of its own).

    python bench/fuzz_ops.py --budget 1800            # every function, report on stdout
    python bench/fuzz_ops.py --ops add,softmax --dtypes float32,int64

For each (function, dtype) cell the first few samples that reach the function (the harness's
routing) give ATen calls; each call is transformed, torch computes the expected output on
the transformed call (torch.ops.aten.<overload>, or the entry's reference), and the function
runs eagerly (each ONNX op in onnxruntime). A cell runs in a forked child process that
reports each outcome as it goes, so an abort inside onnxruntime costs one input, counted as a
crash, and the cell resumes after it in a new child.

Outcomes per input: "ok" (same as torch), "overflow" (both overflow, differently: see below),
"mismatch" (torch gives a value, we give another: a silent wrong answer), "error" (we raise
where torch works), "crash" (the process died), "timeout", "rejected" (torch raises, or its
result cannot be represented: not a valid input, not counted), "known" (the untransformed call
already fails: the table's expected failures, not counted again).

Overflow. With entries near finfo.max, products and sums overflow to +-inf, and whether a sum
of them gives inf or NaN (inf + -inf) depends on the summation order of each library (BLAS
blocking, vectorised lanes, pairwise sums): no implementation matches torch bit for bit
there. An element is *overflowed* when the exact result is not representable in the dtype:
 - float16/bfloat16/float32: torch is run again on the inputs upcast to float64; the element
   is overflowed when that float64 value is non-finite or beyond finfo(dtype).max;
 - float64 has no wider dtype in torch: the element is overflowed when torch's own float64
   result is non-finite although every input is finite (torch overflowed itself, so it cannot
   tell the exact value; rerunning in another order is not possible for an arbitrary op).
On an overflowed element where torch's value is non-finite, any non-finite value of ours is
accepted (inf, -inf or NaN). Where torch's value is non-finite but the float64 result is
representable (torch overflowed inside its own algorithm: the running mean of its Welford
statistics, prod's order of products), ours must be non-finite too or match that float64
result. For float64 such elements are not checked at all (ours may be the exact finite product
torch missed, and no wider torch result can tell): this is the fuzz pass's one blind spot, on
float64 cells with huge inputs only; the float32 cell of the same function is checked against
its float64 recomputation. A complex result is judged part by part: its real and imaginary
parts are real results of their own (complex64 is recomputed in complex128), so a part whose
exact value is representable must match. The input then counts as "overflow", never as "ok", and `--all`
lists it. Nothing else is relaxed: inputs holding inf/NaN are never excused (NaN propagation is checked strictly); a
finite value on either side must match; a result that is representable (the std of
[1e38, -1e38, ...] in float32) must match.

SymInt results. math.ceil/floor/trunc and sym_int of 3.4e38 give a Python int that int64
cannot hold; in a graph the result is an int64 value, so no implementation can give it. Such
an input counts as "rejected" (the result is outside what the op's output can represent).
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import signal
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from torchlib.conformance.engine import (
    OWN_SAMPLES,
    SEED,
    Harness,
    _aten_reference,
    _Capture,
    _close,
    _error_text,
    _pre_dispatch_calls,
    compare,
    describe,
)  # fmt: skip
from torchlib.conformance.spec import DEFAULT_TOL, Call, Skip, dtype_name

COUNTED = ("ok", "overflow", "mismatch", "error", "crash", "timeout")
_DIM_NAMES = {"dim", "dims", "dim0", "dim1", "dim2", "axis", "start_dim", "end_dim", "source", "destination"}


@dataclasses.dataclass
class Finding:
    function: str
    dtype: str
    transform: str
    outcome: str  # ok | overflow | mismatch | error | crash | timeout | rejected | known
    call: str = ""
    message: str = ""


# -- base calls: what the harness routes to the function ---------------------------------------
def base_calls(harness: Harness, key: str, dtype: torch.dtype, limit: int) -> Iterator[tuple[Call, Callable[..., Any], str, Any]]:
    """The first `limit` calls of the cell (in the function's signature), the torch function
    that computes the expected output of any such call, and the reason of the table's
    expected failure for the sample ("" when it is expected to pass), and its tolerance."""
    entry = harness.entries[key]
    names = harness.functions[key].aten_names
    overloads = frozenset(entry.aten or names)
    found = 0
    for label, make, reference, route in harness.sources(key, dtype):
        torch.manual_seed(SEED)
        samples = make()
        try:
            for index, sample in enumerate(samples):
                if found >= limit or index >= 20 * limit:
                    break
                if any(r.matches(dtype, index, sample, label) for r in entry.skip):
                    continue
                got = _route(entry, sample, reference, route, overloads, names, label)
                if got is not None:
                    found += 1
                    known = next((x.reason for x in entry.xfail if x.matches(dtype, index, sample, "eager", label)), "")
                    yield (*got, known, harness.tolerance(key, dtype, label))
        finally:
            _close(samples)


def _route(entry: Any, sample: Any, reference: Callable[..., Any], route: str, overloads: frozenset[str],
           names: Sequence[str], label: str) -> tuple[Call, Callable[..., Any]] | None:
    try:
        if route == "public":
            if entry.adapter is not None and label != OWN_SAMPLES:
                return None  # an adapted public call has no ATen reference of its own
            the_call = Call((sample.input, *sample.args), dict(sample.kwargs))
            return the_call, reference
        if route == "aten":
            capture = _Capture(overloads)
            with capture:
                reference(sample.input, *sample.args, **sample.kwargs)
            if capture.hit is None:
                return None
            the_call, name = capture.hit[0], capture.name
        else:
            hits = _pre_dispatch_calls(reference, sample, overloads)
            if not hits:
                return None
            name, the_call, _ = hits[0]
    except Exception:
        return None
    if entry.adapter is not None:
        the_call = entry.adapter(the_call)
        if the_call is None or isinstance(the_call, Skip):
            return None
        name = names[0]
    return the_call, _aten_reference(name)


# -- transforms: one edge input from one call --------------------------------------------------
def _map_tensors(x: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map_tensors(v, fn) for v in x) if not hasattr(x, "_fields") else tuple(_map_tensors(v, fn) for v in x)
    if isinstance(x, dict):
        return {k: _map_tensors(v, fn) for k, v in x.items()}
    return x


def _tensors(c: Call) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    _map_tensors((c.args, c.kwargs), lambda t: out.append(t) or t)
    return out


def _first(c: Call, want: Callable[[torch.Tensor], bool], edit: Callable[[torch.Tensor], torch.Tensor]) -> Call | None:
    """The call with the first tensor satisfying `want` replaced by edit(copy)."""
    done = [False]

    def fn(t: torch.Tensor) -> torch.Tensor:
        if done[0] or not want(t):
            return t
        done[0] = True
        return edit(t.clone())

    args, kwargs = _map_tensors((c.args, c.kwargs), fn)
    return Call(tuple(args), dict(kwargs)) if done[0] else None


def _put(t: torch.Tensor, values: Sequence[float]) -> torch.Tensor:
    flat = t.view(-1)
    for i, v in enumerate(values[: flat.numel()]):
        flat[i] = v
    return t


def nan_inf(c: Call) -> Call | None:
    return _first(c, lambda t: t.is_floating_point() and t.numel() > 0, lambda t: _put(t, [float("nan"), float("inf"), float("-inf")]))


def huge(c: Call) -> Call | None:
    def edit(t: torch.Tensor) -> torch.Tensor:
        info = torch.finfo(t.dtype)
        return _put(t, [info.max, -info.max, info.tiny, info.max / 3, -info.tiny])

    return _first(c, lambda t: t.is_floating_point() and t.numel() > 0, edit)


def int_extremes(c: Call) -> Call | None:
    def edit(t: torch.Tensor) -> torch.Tensor:
        info = torch.iinfo(t.dtype)
        return _put(t, [info.max, info.min, -1, 0, info.max - 1])

    ints = (torch.int64, torch.int32, torch.int16, torch.int8)
    return _first(c, lambda t: t.dtype in ints and t.numel() > 0, edit)


def noncontiguous(c: Call) -> Call | None:
    from torch.testing._internal.common_utils import noncontiguous_like

    if not any(t.numel() > 1 for t in _tensors(c)):
        return None
    return Call(*_map_tensors((c.args, c.kwargs), lambda t: noncontiguous_like(t) if t.numel() > 1 else t))


def _narrow(size: int) -> Callable[[Call], Call | None]:
    """Dim 0 of the first tensor (and of every tensor of the same shape) cut to `size`."""

    def transform(c: Call) -> Call | None:
        tensors = [t for t in _tensors(c) if t.dim() > 0]
        if not tensors or tensors[0].shape[0] <= size:
            return None
        shape = tensors[0].shape
        return Call(*_map_tensors((c.args, c.kwargs), lambda t: t[:size].clone() if t.shape == shape else t))  # its own storage, as a graph input

    return transform


def negative_dims(reference: Callable[..., Any]) -> Callable[[Call], Call | None]:
    """Non-negative dim arguments (found by name in the overload's schema) as negative ones."""
    schema = getattr(reference, "_schema", None)

    def transform(c: Call) -> Call | None:
        tensors = _tensors(c)
        if schema is None or not tensors:
            return None
        rank = max(tensors[0].dim(), 1)
        args, kwargs, changed = list(c.args), dict(c.kwargs), False

        def negate(v: Any) -> Any:
            nonlocal changed
            if isinstance(v, bool) or v is None:
                return v
            if isinstance(v, int) and 0 <= v < rank:
                changed = True
                return v - rank
            if isinstance(v, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) for d in v):
                return type(v)(negate(d) for d in v)
            return v

        for i, arg in enumerate(schema.arguments):
            if arg.name not in _DIM_NAMES:
                continue
            if i < len(args) and not arg.kwarg_only:
                args[i] = negate(args[i])
            elif arg.name in kwargs:
                kwargs[arg.name] = negate(kwargs[arg.name])
        return Call(tuple(args), kwargs) if changed else None

    return transform


def transforms(reference: Callable[..., Any]) -> list[tuple[str, Callable[[Call], Call | None] | None]]:
    return [
        ("original", lambda c: c),
        ("empty", _narrow(0)),
        ("size1", _narrow(1)),
        ("nan_inf", nan_inf),
        ("huge", huge),
        ("int_extremes", int_extremes),
        # as_strided reads the input's storage, which a graph input never shares with anything
        ("noncontiguous", None if "as_strided" in str(getattr(reference, "_schema", "")) else noncontiguous),
        ("negative_dims", negative_dims(reference)),
    ]


# -- one cell, in the current process -----------------------------------------------------------
def cell_inputs(harness: Harness, key: str, dtype: torch.dtype, limit: int) -> list[tuple[str, Call, Callable[..., Any], str, Any]]:
    """(transform name, call, torch function, the table's expected failure of the base call,
    tolerance) for every edge input of the cell, in order."""
    inputs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for base, reference, known, tol in base_calls(harness, key, dtype, limit):
            for name, transform in transforms(reference):
                if transform is None:
                    continue
                try:
                    changed = transform(base)
                except Exception:
                    changed = None
                if changed is not None:
                    inputs.append((name, changed, reference, known, tol))
    return inputs


def run_input(harness: Harness, key: str, name: str, the_call: Call, reference: Callable[..., Any], dtype: torch.dtype,
              tol: tuple[float, float] | None = None, torch_done: Callable[[], None] | None = None) -> tuple[str, str]:
    """(outcome, message) of one edge input: the function eagerly against torch. `torch_done`
    is called once torch has computed its result (a process that dies before it died in torch)."""
    entry = harness.entries[key]
    tol = tol or entry.tol.get(dtype)
    fn = harness.functions[key].function
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = reference(*the_call.args, **the_call.kwargs)
        except Exception as e:
            return "rejected", _error_text(e, 200)
        if torch_done is not None:
            torch_done()
        try:
            actual = fn(*the_call.args, **the_call.kwargs)
            if entry.output is not None:
                actual = entry.output(actual)
        except Exception as e:
            return "error", _error_text(e, 300)
        too_big = _beyond_int64(expected)
        if too_big is not None:
            return "rejected", f"torch's result {too_big} does not fit the int64 that holds the function's result"
        try:
            compare(actual, expected, tol=tol, shape_only=entry.compare == "shape")
        except Exception as e:
            if entry.compare != "shape" and _overflow_excused(the_call, reference, actual, expected, tol):
                return "overflow", _error_text(e, 300)
            return "mismatch", _error_text(e, 300)
    return "ok", ""


# -- overflow: where the exact result is not representable, only "non-finite" is checked ------------
_WIDENED = (torch.float16, torch.bfloat16, torch.float32)


def _beyond_int64(expected: Any) -> int | None:
    """torch's Python int result when int64 cannot hold it (SymInt ops: math.ceil(3.4e38))."""
    if isinstance(expected, int) and not isinstance(expected, bool) and not -(2**63) <= expected < 2**63:
        return expected
    return None


def _flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _overflow_excused(the_call: Call, reference: Callable[..., Any], actual: Any, expected: Any,
                      tol: tuple[float, float] | None) -> bool:
    """True when every element where we differ from torch is an overflowed element on which
    torch and we are both non-finite (see the module docstring); checked by comparing again
    with those elements of ours replaced by torch's."""
    inputs = [t for t in _tensors(the_call) if t.is_floating_point() or t.is_complex()]
    if not inputs or not all(bool(torch.isfinite(t).all()) for t in inputs):
        return False  # inf or NaN given: propagating them is not an overflow
    args, kwargs = _map_tensors((the_call.args, the_call.kwargs), _widen)
    try:
        wide = _flat(reference(*args, **kwargs))
    except Exception:
        wide = None
    actual_flat, expected_flat = _flat(actual), _flat(expected)
    if len(actual_flat) != len(expected_flat) or (wide is not None and len(wide) != len(expected_flat)):
        return False
    patched, any_excused = [], False
    for i, (a, e) in enumerate(zip(actual_flat, expected_flat)):
        ok_types = isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and (e.dtype.is_floating_point or e.dtype.is_complex)
        if not ok_types or a.shape != e.shape or a.dtype != e.dtype:
            patched.append(a)
            continue
        w = wide[i] if wide is not None else None
        if e.dtype.is_complex:  # each of the real and imaginary parts is a real number of its own
            w = torch.view_as_real(w) if isinstance(w, torch.Tensor) and w.is_complex() else None
            a_real, e_real = torch.view_as_real(a), torch.view_as_real(e)
            excused_real = _excused(a_real, e_real, w, tol)
            any_excused = any_excused or bool(excused_real.any())
            patched.append(torch.view_as_complex(torch.where(excused_real, e_real, a_real).contiguous()))
            continue
        excused = _excused(a, e, w, tol)
        any_excused = any_excused or bool(excused.any())
        patched.append(torch.where(excused, e, a))
    if not any_excused:
        return False
    try:
        compare(_unflat(actual, iter(patched)), expected, tol=tol)
    except Exception:
        return False
    return True


def _excused(a: torch.Tensor, e: torch.Tensor, w: Any, tol: tuple[float, float] | None) -> torch.Tensor:
    """The elements of a real result where ours may differ from torch's (the module docstring):
    torch and we are both non-finite where the exact value overflows, or torch overflowed
    inside its own algorithm. `w` is torch's result on the widened inputs (or None)."""
    torch_lost = ~torch.isfinite(e)
    if e.dtype in _WIDENED and isinstance(w, torch.Tensor) and w.shape == e.shape:
        w = w.double()
        overflowed = ~torch.isfinite(w) | (w.abs() > torch.finfo(e.dtype).max)
        # torch overflowed inside its own algorithm (the float64 result is representable):
        # ours may be non-finite too, or be that float64 result
        rtol, atol = tol if tol is not None else DEFAULT_TOL.get(e.dtype, (0.0, 0.0))
        near = (a.double() - w).abs() <= atol + rtol * w.abs()
        internal = torch_lost & ~overflowed & (~torch.isfinite(a) | near)
    else:  # float64, or no wider result: torch's non-finite result from finite inputs is no reference
        overflowed = torch_lost
        internal = torch_lost
    return (overflowed & torch_lost & ~torch.isfinite(a)) | internal


def _widen(t: torch.Tensor) -> torch.Tensor:
    if t.dtype is torch.complex64:
        return t.to(torch.complex128)
    return t.double() if t.dtype in _WIDENED else t


def _unflat(shape: Any, items: Iterator[Any]) -> Any:
    if isinstance(shape, (list, tuple)):
        return type(shape)(_unflat(v, items) for v in shape) if not hasattr(shape, "_fields") else tuple(_unflat(v, items) for v in shape)
    return next(items)


def _describe_call(c: Call) -> str:
    from torchlib.conformance.engine import _describe_call as d

    return d(c)


# -- crash-safe driver ----------------------------------------------------------------------------
def _child(harness: Harness, key: str, dtype: torch.dtype, limit: int, start: int, fd: int) -> None:
    import faulthandler

    faulthandler.disable()  # an abort is the parent's finding, not a traceback on the terminal
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # onnxruntime's own error log
    with os.fdopen(fd, "w") as out:
        inputs = cell_inputs(harness, key, dtype, limit)
        out.write(json.dumps({"count": len(inputs)}) + "\n")
        out.flush()
        for i, (name, the_call, reference, known, tol) in enumerate(inputs):
            if i < start:
                continue
            out.write(json.dumps({"start": i, "transform": name, "call": _describe_call(the_call)}) + "\n")
            out.flush()
            def torch_done() -> None:
                out.write(json.dumps({"torch_done": i}) + "\n")
                out.flush()

            outcome, message = run_input(harness, key, name, the_call, reference, dtype, tol, torch_done)
            if known and outcome in ("mismatch", "error"):
                outcome, message = "known", f"the table expects this sample to fail: {known}"
            out.write(json.dumps({"index": i, "outcome": outcome, "message": message}) + "\n")
            out.flush()
    os._exit(0)


def fuzz_cell(harness: Harness, key: str, dtype: torch.dtype, limit: int = 3, timeout: float = 60.0) -> list[Finding]:
    """Every edge input of one cell, each outcome recorded; crashes and hangs cost one input."""
    findings: list[Finding] = []
    start = 0
    while True:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read)
            try:
                _child(harness, key, dtype, limit, start, write)
            finally:
                os._exit(1)
        os.close(write)
        current: dict[str, Any] | None = None
        count = None
        buffer = b""
        hung = False
        with os.fdopen(read, "rb", buffering=0) as pipe:
            deadline = time.monotonic() + timeout * 3  # making the inputs takes a while
            while True:
                ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    hung = True
                    os.kill(pid, signal.SIGKILL)
                    break
                chunk = pipe.read(65536)
                if not chunk:
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    record = json.loads(line)
                    if "count" in record:
                        count = record["count"]
                    elif "start" in record:
                        current = record
                        deadline = time.monotonic() + timeout
                    elif "torch_done" in record:
                        assert current is not None
                        current["torch_done"] = True
                    else:
                        assert current is not None
                        findings.append(Finding(key, dtype_name(dtype), current["transform"], record["outcome"], current["call"], record["message"]))
                        current = None
        _, status = os.waitpid(pid, 0)
        if current is None:
            if count is None and not hung and status != 0:
                findings.append(Finding(key, dtype_name(dtype), "making inputs", "crash", "", f"the child exited with status {status}"))
            break
        outcome = "timeout" if hung else "crash"
        why = f"no result in {timeout:.0f} s" if hung else f"the process died ({_status_text(status)})"
        if not current.get("torch_done"):  # torch itself crashed or hung: an input it does not check
            outcome, why = "rejected", f"torch itself {'hung' if hung else 'crashed'} on this input ({why})"
        findings.append(Finding(key, dtype_name(dtype), current["transform"], outcome, current["call"], why))
        start = current["start"] + 1
        if count is not None and start >= count:
            break
    return _mark_known(findings)


def _status_text(status: int) -> str:
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return f"exit status {os.WEXITSTATUS(status)}"


def _mark_known(findings: list[Finding]) -> list[Finding]:
    """A transformed input of a base call that already fails untransformed is "known" (the
    table's expected failures); the untransformed calls that fail stay as they are."""
    result, failing_base = [], False
    for f in findings:
        if f.transform == "original":
            failing_base = f.outcome in ("mismatch", "error")
        elif failing_base and f.outcome in ("mismatch", "error"):
            f = dataclasses.replace(f, outcome="known")
        result.append(f)
    return result


@dataclasses.dataclass
class FuzzReport:
    findings: list[Finding]
    functions: int
    cells: int
    seconds: float
    stopped_early: bool = False

    def totals(self) -> Counter:
        return Counter(f.outcome for f in self.findings)

    def summary(self) -> str:
        t = self.totals()
        tried = sum(t[o] for o in COUNTED)
        return (
            f"fuzz: {self.functions} functions x {tried} edge inputs run ({self.cells} function x dtype cells): "
            f"{t['ok']} same as torch, {t['overflow']} overflow (both overflow, differently), {t['crash']} crashes, {t['mismatch']} mismatches, {t['error']} errors (we raise, torch works), "
            f"{t['timeout']} timeouts; {t['rejected']} inputs torch rejects, {t['known']} on calls the table already expects to fail; "
            f"{self.seconds:.0f} s" + (" (time budget reached: not every cell ran)" if self.stopped_early else "")
        )

    def lines(self, outcomes: Sequence[str] = ("crash", "timeout", "mismatch", "error", "overflow")) -> list[str]:
        return [
            f"{f.outcome:8} {f.function} {f.dtype} [{f.transform}] {f.call}: {f.message.splitlines()[0] if f.message else ''}"
            for f in sorted(self.findings, key=lambda f: (outcomes.index(f.outcome) if f.outcome in outcomes else 99, f.function, f.dtype))
            if f.outcome in outcomes
        ]


_DTYPE_ORDER = (torch.float32, torch.float64, torch.int64, torch.float16, torch.bool, torch.int32, torch.bfloat16, torch.complex64)


def by_breadth(jobs: Sequence[tuple[str, torch.dtype]]) -> list[tuple[str, torch.dtype]]:
    """Every function's first dtype (float32 first, then float64, int64, ...) before any
    function's second: a time budget then still covers every function."""
    rank: dict[str, int] = {}
    ranked = []
    for key, dtype in sorted(jobs, key=lambda j: _DTYPE_ORDER.index(j[1]) if j[1] in _DTYPE_ORDER else 99):
        ranked.append((rank.get(key, 0), key, dtype))
        rank[key] = rank.get(key, 0) + 1
    return [(key, dtype) for _, key, dtype in sorted(ranked, key=lambda r: r[0])]


def fuzz(harness: Harness, jobs: Sequence[tuple[str, torch.dtype]], limit: int = 3, budget: float | None = None,
         timeout: float = 60.0, progress: Callable[[str], None] | None = None) -> FuzzReport:
    start = time.monotonic()
    findings: list[Finding] = []
    done = 0
    jobs = by_breadth(jobs)
    stopped = False
    for key, dtype in jobs:
        if budget is not None and time.monotonic() - start > budget:
            stopped = True
            break
        cell = fuzz_cell(harness, key, dtype, limit, timeout)
        findings += cell
        done += 1
        if progress is not None:
            bad = sum(1 for f in cell if f.outcome in ("crash", "timeout", "mismatch", "error"))
            progress(f"{done}/{len(jobs)} {key} {dtype_name(dtype)}: {len(cell)} inputs, {bad} findings")
    functions = len({k for k, _ in jobs[:done]})
    return FuzzReport(findings, functions, done, time.monotonic() - start, stopped)


__all__ = ["Finding", "FuzzReport", "base_calls", "cell_inputs", "describe", "fuzz", "fuzz_cell", "run_input"]
