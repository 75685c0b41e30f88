"""The harness: every registered function, every dtype, every sample, eagerly and traced,
compared with torch eager output.

    harness = Harness()                       # registry, expectations table, op_db (once)
    for key, dtype in harness.jobs():
        result = harness.run(key, dtype, max_samples=4)

Per sample: the torch output (the OpInfo's op) is computed once; the adapted call runs
(a) eagerly, each ONNX op in onnxruntime, and (b) traced into one graph, checked by
onnx.checker and run in one onnxruntime session; each is compared with the torch output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import importlib.util
import math
import operator
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import graph_builder
from graph_builder.evaluator import loose_reads
from torchlib.conformance.spec import (
    COMPLEX_DTYPES,
    DEFAULT_TOL,
    MODES,
    REAL_DTYPES,
    Call,
    Entry,
    Skip,
    TorchLessAccurate,
    XFail,
    dtype_name,
    opinfo_tolerances,
)
from torchlib.torch_version import torch_matches

PASSED, XFAIL, FAILED, XPASS, SKIPPED = "passed", "xfail", "failed", "xpass", "skipped"
SEED = 0
OWN_SAMPLES = "own samples"  # the source label of an entry's samples= (never adapted: already in the function's signature)
TABLE_PATH = Path(__file__).resolve().parents[2] / "tests" / "opinfo" / "table"


@functools.cache
def load_op_db() -> dict[tuple[str, str], Any]:
    """op_db by (name, variant_test_name); loaded once per process (it takes seconds)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return {(o.name, o.variant_test_name): o for o in op_db}


def load_table(path: str | Path | None = None) -> dict[str, Entry]:
    """The expectations table: a Python module or package whose ENTRIES is a list of Entry."""
    path = Path(path or TABLE_PATH)
    init = path / "__init__.py" if path.is_dir() else path
    name = "torchlib_conformance_table"
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(path)] if path.is_dir() else None)
    if spec is None or spec.loader is None or not init.exists():
        raise FileNotFoundError(f"no expectations table at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the table's own modules import each other relatively
    spec.loader.exec_module(module)
    entries: dict[str, Entry] = {}
    for entry in module.ENTRIES:
        if entry.torch_version is not None and not torch_matches(entry.torch_version):
            continue  # a function the installed torch has no op for
        if entry.function in entries:
            raise ValueError(f"the expectations table has two entries for {entry.function}")
        entries[entry.function] = entry
    return entries


@dataclasses.dataclass(frozen=True)
class Registered:
    """One registered Python function and the ATen overloads it implements."""

    key: str
    function: Callable[..., Any]
    aten_names: tuple[str, ...]
    complex: bool


def registered_functions() -> dict[str, Registered]:
    """Every function in the registry, keyed by its Python name (aten_add, ...)."""
    import torchlib

    by_function: dict[int, Registered] = {}
    for item in torchlib.get_registry().items():
        known = by_function.get(id(item.function))
        if known is None:
            by_function[id(item.function)] = Registered(item.function.__name__, item.function, (item.name,), item.complex)
        else:
            by_function[id(item.function)] = dataclasses.replace(known, aten_names=(*known.aten_names, item.name))
    result: dict[str, Registered] = {}
    for reg in by_function.values():
        declared = getattr(reg.function, "aten_names", ())  # the decorator's order: default overload first
        reg = dataclasses.replace(reg, aten_names=tuple(n for n in declared if n in reg.aten_names) or reg.aten_names)
        key = reg.key
        if key in result:  # two different functions with one name: qualify both by module
            other = result.pop(key)
            result[_qualified(other)] = dataclasses.replace(other, key=_qualified(other))
            key = _qualified(reg)
        result[key] = dataclasses.replace(reg, key=key)
    return dict(sorted(result.items()))


def _qualified(reg: Registered) -> str:
    return f"{reg.function.__module__.rsplit('.', 1)[-1]}.{reg.function.__name__}"


@dataclasses.dataclass
class SampleResult:
    index: int
    description: str
    outcome: str  # passed | xfail | failed | xpass | skipped
    message: str = ""  # the reason (xfail, skipped, xpass) or the error (failed)
    modes: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # mode -> (outcome, message)
    source: str = ""  # the OpInfo ("name.variant") or "own samples"


@dataclasses.dataclass
class JobResult:
    function: str
    dtype: str
    samples: list[SampleResult]
    error: str = ""  # a failure of the whole job (e.g. the samples could not be made)
    seconds: float = 0.0
    elsewhere: int = 0  # samples (route "aten") whose ATen call belongs to other functions

    def count(self, outcome: str) -> int:
        return sum(1 for s in self.samples if s.outcome == outcome)

    @property
    def ok(self) -> bool:
        return not self.error and all(s.outcome not in (FAILED, XPASS) for s in self.samples)

    def problems(self) -> list[str]:
        """One line per unexpected outcome, naming the function, dtype, sample and mode."""
        lines = [f"{self.function} {self.dtype}: {self.error}"] if self.error else []
        for s in self.samples:
            for mode, (outcome, message) in s.modes.items():
                if outcome == FAILED:
                    lines.append(f"{self.function} {self.dtype} sample {s.index} [{mode}] failed: {message}\n    sample: {s.description}")
                elif outcome == XPASS:
                    lines.append(f"{self.function} {self.dtype} sample {s.index} [{mode}] passed unexpectedly (expected failure: {message})\n    sample: {s.description}")
        return lines


class Harness:
    """The registry, the expectations table and op_db, joined once."""

    def __init__(self, table: str | Path | None = None, exact_nan: bool = False):
        """The column of `export(..., exact_nan=...)`. False (default, export's default): every
        function runs with `graph_builder.exact_nan(False)`; a sample whose inputs hold a NaN may
        differ from torch (an expected failure, NAN_MAY_DIFFER) only when its function asked for
        the setting (`graph_builder.current_exact_nan()`); every other sample must match. True:
        the exact column, where no such difference is allowed."""
        self.exact_nan = exact_nan
        self.functions = registered_functions()
        self.entries = load_table(table)
        self.op_db = load_op_db()

    # -- completeness ----------------------------------------------------------------------
    def missing(self) -> list[str]:
        """Registered functions without an entry."""
        return [k for k in self.functions if k not in self.entries]

    def problems(self) -> list[str]:
        """Everything wrong with the table itself: missing and stale entries, unknown OpInfos."""
        problems = [
            f"{k} ({', '.join(self.functions[k].aten_names)}) has no entry in the expectations table; "
            f"perhaps Entry({k!r}, opinfo={self.suggest(k)!r})"
            for k in self.missing()
        ]
        problems += [f"the table has an entry for {k}, which is not a registered function" for k in self.entries if k not in self.functions]
        for key, entry in self.entries.items():
            for ref in entry.opinfo_refs:
                if ref not in self.op_db:
                    problems.append(f"{key}: no OpInfo named {ref[0]!r} with variant {ref[1]!r} in op_db")
            if entry.samples is None and entry.dtypes is not None:
                problems.append(f"{key}: dtypes is for entries with samples of their own; skip an OpInfo dtype with Skip(reason, dtypes=...)")
        return problems

    def suggest(self, key: str) -> list[str | tuple[str, str]]:
        """OpInfos whose names look like the function's ATen overloads (for a new entry)."""
        found: list[str | tuple[str, str]] = []
        for aten in self.functions[key].aten_names:
            base = aten.split("::", 1)[-1].split(".", 1)[0]
            stems = dict.fromkeys([base, base.lstrip("_"), base.removeprefix("native_"), base.lstrip("_").removesuffix("_")])
            for stem in stems:
                for prefix in ("", "nn.functional.", "linalg.", "special."):
                    for name, variant in self.op_db:
                        if name == prefix + stem:
                            ref = (name, variant) if variant else name
                            if ref not in found:
                                found.append(ref)
        return found

    def untested(self) -> dict[str, str]:
        """Functions whose entry says why they are not run."""
        return {k: e.reason for k, e in self.entries.items() if k in self.functions and not e.opinfo and e.samples is None}

    def figures(self) -> dict[str, int]:
        """Counts of the table, for READMEs to quote (`python -m torchlib conformance --figures`)."""
        entries = [e for k, e in self.entries.items() if k in self.functions]
        xfails = [(e.function, x) for e in entries for x in e.xfail if not isinstance(x, TorchLessAccurate)]
        arbiters = [(e.function, x) for e in entries for x in e.xfail if isinstance(x, TorchLessAccurate)]
        return {
            "registered functions": len(self.functions),
            "entries": len(entries),
            "run by OpInfo samples": sum(1 for e in entries if e.opinfo),
            "run by samples of their own only": sum(1 for e in entries if e.samples is not None and not e.opinfo),
            "not run (reason only)": len(self.untested()),
            "function x dtype cells": len(self.jobs()),
            "XFail rules": len(xfails),
            "functions with XFails": len({f for f, _ in xfails}),
            "TorchLessAccurate rules": len(arbiters),
            "functions with TorchLessAccurate": len({f for f, _ in arbiters}),
            "entries with tol=": sum(1 for e in entries if e.tol),
        }

    # -- coverage: which cells get samples, by routing alone ---------------------------------
    def coverage(self, jobs: Sequence[tuple[str, torch.dtype]] | None = None) -> dict[tuple[str, torch.dtype], str]:
        """For each (function, dtype) cell: where its first runnable sample comes from (the
        OpInfo, "own samples", or "skipped: <reason>" for a Skip rule covering the whole
        dtype), or "" when no sample reaches it. Routing only: torch runs each OpInfo sample
        (under the dispatch recorder, or make_fx for the pre-dispatch route), onnxruntime
        never runs. Samples are scanned per (OpInfo, dtype, route) until every cell waiting
        on them has one, so functions sharing an OpInfo share the scan."""
        jobs = self.jobs() if jobs is None else jobs
        found: dict[tuple[str, torch.dtype], str] = {}
        waiting: dict[tuple[tuple[str, str], torch.dtype, str], list[str]] = {}
        for key, dtype in jobs:
            entry = self.entries[key]
            found[(key, dtype)] = ""
            whole = next((r for r in entry.skip if r.dtypes and dtype in r.dtypes and r.samples is None and r.when is None and r.opinfo is None), None)
            if whole is not None:
                found[(key, dtype)] = f"skipped: {whole.reason}"
                continue
            if entry.samples is not None and dtype in (entry.dtypes or ()):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    samples = entry.samples(dtype)
                    if any(not any(r.matches(dtype, i, s, OWN_SAMPLES) for r in entry.skip) for i, s in enumerate(samples)):
                        found[(key, dtype)] = OWN_SAMPLES
                        continue
            for ref in entry.opinfo_refs:
                if dtype in self.op_db[ref].supported_dtypes("cpu"):
                    waiting.setdefault((ref, dtype, self.route(key)), []).append(key)
        for (ref, dtype, route), keys in waiting.items():
            pending = [k for k in keys if not found[(k, dtype)]]
            if pending:
                for key, label in self._scan_routes(ref, dtype, route, pending).items():
                    found[(key, dtype)] = label
        return found

    def _scan_routes(self, ref: tuple[str, str], dtype: torch.dtype, route: str, keys: list[str]) -> dict[str, str]:
        info = self.op_db[ref]
        label = ref[0] + (f".{ref[1]}" if ref[1] else "")
        pending = set(keys)
        reached: dict[str, str] = {}
        torch.manual_seed(SEED)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = info.sample_inputs("cpu", dtype, requires_grad=False)
            try:
                for index, sample in enumerate(samples):
                    if not pending:
                        break
                    calls = _routed_calls(info.op, sample, route)
                    if calls is None:
                        continue  # torch rejects the sample
                    for key in sorted(pending):
                        entry = self.entries[key]
                        if any(r.matches(dtype, index, sample, label) for r in entry.skip):
                            continue
                        if route == "public":
                            the_call: Any = entry.adapter(sample) if entry.adapter else sample
                        else:
                            wanted = frozenset(entry.aten or self.functions[key].aten_names)
                            the_call = next((c for name, c in calls if name in wanted), None)
                            if the_call is not None and entry.adapter is not None:
                                the_call = entry.adapter(the_call)
                        if the_call is not None and not isinstance(the_call, Skip):
                            reached[key] = label
                            pending.discard(key)
            finally:
                _close(samples)
        return reached

    # -- planning -----------------------------------------------------------------------------
    def select(self, ops: Iterable[str] | None = None) -> list[str]:
        """Function keys matching names: a key (aten_add), an overload (aten::add.Tensor,
        add.Tensor) or an op name (add: every overload of aten::add)."""
        if ops is None:
            return list(self.functions)
        wanted = [o.strip() for o in ops if o.strip()]
        selected = []
        unknown = set(wanted)
        for key, reg in self.functions.items():
            for w in wanted:
                if _names_match(w, key, reg.aten_names):
                    selected.append(key)
                    unknown.discard(w)
                    break
        if unknown:
            raise KeyError(f"no registered function matches {', '.join(sorted(unknown))}")
        return selected

    def dtypes_for(self, key: str) -> list[torch.dtype]:
        entry = self.entries.get(key)
        if entry is None:
            return []
        harness_dtypes = COMPLEX_DTYPES if self.functions[key].complex else REAL_DTYPES
        supported: set[torch.dtype] = set(entry.dtypes or ()) if entry.samples is not None else set()
        for ref in entry.opinfo_refs:
            if ref in self.op_db:
                supported |= set(self.op_db[ref].supported_dtypes("cpu"))
        return [d for d in harness_dtypes if d in supported]

    def jobs(self, ops: Iterable[str] | None = None, dtypes: Sequence[torch.dtype] | None = None) -> list[tuple[str, torch.dtype]]:
        """(function, dtype) pairs to run, in table order."""
        return [(k, d) for k in self.select(ops) for d in self.dtypes_for(k) if dtypes is None or d in dtypes]

    # -- running ------------------------------------------------------------------------------
    def route(self, key: str) -> str:
        entry = self.entries[key]
        if entry.samples is not None and not entry.opinfo:
            return "public"
        if entry.route is not None:
            return entry.route
        implicit = all(_is_composite_implicit(n) for n in self.functions[key].aten_names)
        return "pre_dispatch" if implicit else "aten"

    def sources(self, key: str, dtype: torch.dtype) -> list[tuple[str, Callable[[], Iterable[Any]], Callable[..., Any], str]]:
        """(label, make samples, torch reference, route) per OpInfo supporting dtype, and own
        samples (route "public": called as they are)."""
        entry = self.entries[key]
        sources = []
        for ref in entry.opinfo_refs:
            info = self.op_db[ref]
            if dtype in info.supported_dtypes("cpu"):
                label = ref[0] + (f".{ref[1]}" if ref[1] else "")
                sources.append((label, functools.partial(info.sample_inputs, "cpu", dtype, requires_grad=False), info.op, self.route(key)))
        if entry.samples is not None and dtype in (entry.dtypes or ()):
            reference = entry.reference or _aten_reference(self.functions[key].aten_names[0])
            sources.append((OWN_SAMPLES, functools.partial(entry.samples, dtype), reference, "public"))
        return sources

    def tolerance(self, key: str, dtype: torch.dtype, source: str) -> tuple[float, float] | None:
        """(rtol, atol) for the samples of one source: the entry's tol, else the OpInfo's own
        tolerance overrides for dtype (spec.opinfo_tolerances), else None (DEFAULT_TOL by the
        output's dtype)."""
        entry = self.entries[key]
        if dtype in entry.tol:
            return entry.tol[dtype]
        name, _, variant = source.partition(".")
        for ref in entry.opinfo_refs:  # "name.variant" splits ambiguously ("nn.functional.x")
            if ref[0] + (f".{ref[1]}" if ref[1] else "") == source:
                return _opinfo_tolerances(self.op_db[ref]).get(dtype)
        return None

    def run(self, key: str, dtype: torch.dtype, max_samples: int | None = None) -> JobResult:
        """Every sample of the function and dtype (at most max_samples per source), eagerly and
        traced. With route "aten" a source is scanned for samples whose ATen call is one of
        the function's overloads (at most SCAN_FACTOR * max_samples samples are looked at)."""
        start = time.perf_counter()
        result = JobResult(key, dtype_name(dtype), [])
        entry = self.entries[key]
        fn = self.functions[key].function
        overloads = frozenset(entry.aten or self.functions[key].aten_names)
        sources = self.sources(key, dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for label, make, reference, route in sources:
                    tol = self.tolerance(key, dtype, label)
                    torch.manual_seed(SEED)
                    found = 0
                    samples = make()
                    try:
                        for index, sample in enumerate(samples):
                            if max_samples is not None and (found >= max_samples or index >= SCAN_FACTOR * max_samples):
                                break
                            outcome = run_sample(fn, entry, dtype, index, sample, reference, label, route, overloads, tol,
                                                 self.functions[key].aten_names[0], self.exact_nan)
                            if outcome is None:
                                result.elsewhere += 1
                                continue
                            found += 1
                            outcome.source = label
                            result.samples.append(outcome)
                    finally:  # close a half-read generator now, not when collected inside a later trace
                        _close(samples)
        except Exception as e:  # the samples themselves could not be made
            result.error = f"making samples failed: {_error_text(e)}"
        result.seconds = time.perf_counter() - start
        return result


SCAN_FACTOR = 10


def _close(samples: Any) -> None:
    """Close a sample generator (OpInfo wraps it in a TrackedInputIter)."""
    inner = getattr(samples, "child_iter", samples)
    close = getattr(inner, "close", None)
    if close is not None:
        close()


def _routed_calls(op: Callable[..., Any], sample: Any, route: str) -> list[tuple[str, Call]] | None:
    """The ATen calls the sample makes on the route (empty for "public"), or None when torch
    rejects the sample."""
    try:
        if route == "pre_dispatch":
            return [(name, c) for name, c, _ in _pre_dispatch_calls(op, sample)]
        recorder = _RecordCalls() if route == "aten" else contextlib.nullcontext()
        with recorder:
            op(sample.input, *sample.args, **sample.kwargs)
        return recorder.calls if route == "aten" else []
    except Exception:
        return None


@functools.cache
def _opinfo_tolerances_cached(name: str, variant: str) -> dict[torch.dtype, tuple[float, float]]:
    return opinfo_tolerances(load_op_db()[(name, variant)])


def _opinfo_tolerances(info: Any) -> dict[torch.dtype, tuple[float, float]]:
    return _opinfo_tolerances_cached(info.name, info.variant_test_name)


def _is_composite_implicit(name: str) -> bool:
    if not name.startswith("aten::"):
        return False
    try:
        return torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd")
    except RuntimeError:
        return False


def _names_match(wanted: str, key: str, aten_names: Sequence[str]) -> bool:
    if wanted == key:
        return True
    qualified = wanted if "::" in wanted else f"aten::{wanted}"
    return any(n == qualified or n.split(".", 1)[0] == qualified for n in aten_names)


def _aten_reference(name: str) -> Callable[..., Any]:
    namespace, _, rest = name.partition("::")
    if namespace == "_operator":
        return getattr(operator, rest)
    if namespace == "math":
        return getattr(math, rest)
    op_name, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, namespace), op_name)
    return getattr(packet, overload or "default")


# -- routing: the ATen call an OpInfo sample makes ----------------------------------------------
def _overload_name(func: Any) -> str:
    schema = func._schema
    return schema.name + (f".{schema.overload_name}" if schema.overload_name and schema.overload_name != "default" else "")


def _snapshot(x: Any) -> Any:
    """A copy that later in-place ops inside the OpInfo's op cannot change."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_snapshot(v) for v in x) if not hasattr(x, "_fields") else tuple(_snapshot(v) for v in x)
    if isinstance(x, dict):
        return {k: _snapshot(v) for k, v in x.items()}
    return x


class _Capture(TorchDispatchMode):
    """Records the first top-level ATen call to one of `wanted`: its arguments and output."""

    def __init__(self, wanted: frozenset[str]):
        super().__init__()
        self.wanted = wanted
        self.hit: tuple[Call, Any] | None = None
        self.name = ""  # the overload of the hit

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if self.hit is not None or _overload_name(func) not in self.wanted:
            return func(*args, **kwargs)
        call_ = Call(_snapshot(args), _snapshot(kwargs))
        out = func(*args, **kwargs)
        self.hit, self.name = (call_, _snapshot(out)), _overload_name(func)
        return out


class _RecordCalls(TorchDispatchMode):
    """Records every top-level ATen call (overload name, arguments) in call order: routing
    only, for the coverage check (the adapters look at the arguments, nothing runs them)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, Call]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        self.calls.append((_overload_name(func), Call(args, kwargs)))
        return func(*args, **kwargs)


def _pre_dispatch_calls(op: Callable[..., Any], sample: Any, wanted: frozenset[str] | None = None) -> list[tuple[str, Call, Any]]:
    """The calls (overload name, arguments, output) of the sample's pre-dispatch graph (where
    CompositeImplicitAutograd ops such as conv2d or softmax.int are not decomposed yet, as in
    torch.export): the first call to one of `wanted` with its output, or (wanted None) every
    call, in graph order."""
    from torch.fx import Interpreter
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.utils._pytree import tree_flatten, tree_unflatten

    leaves, spec = tree_flatten((sample.input, sample.args, sample.kwargs))
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def call_op(*tensors: torch.Tensor) -> Any:
        filled = list(leaves)
        for i, t in zip(positions, tensors):
            filled[i] = t
        input, args, kwargs = tree_unflatten(filled, spec)
        return op(input, *args, **kwargs)

    tensors = [leaves[i] for i in positions]
    gc.disable()  # a generator collected inside the trace would run its no_grad exit in the tracer
    try:
        graph = make_fx(call_op, pre_dispatch=True)(*tensors)
    finally:
        gc.enable()
    hits: list[tuple[str, Call, Any]] = []

    class Recorder(Interpreter):
        def run_node(self, n: Any) -> Any:
            if n.op != "call_function" or not hasattr(n.target, "_schema"):
                return super().run_node(n)
            name = _overload_name(n.target)
            if wanted is not None and (hits or name not in wanted):
                return super().run_node(n)
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            the_call = Call(_snapshot(tuple(args)), _snapshot(dict(kwargs)))
            result = super().run_node(n)
            hits.append((name, the_call, _snapshot(result) if wanted is not None else None))
            return result

    Recorder(graph).run(*tensors)
    return hits


# -- one sample -------------------------------------------------------------------------------
def run_sample(fn: Callable[..., Any], entry: Entry, dtype: torch.dtype, index: int, sample: Any,
               reference: Callable[..., Any], source: str = "", route: str = "public",
               overloads: frozenset[str] = frozenset(), tol: tuple[float, float] | None = None,
               overload: str = "", exact_nan: bool = False) -> SampleResult | None:
    """Run one sample eagerly and traced against torch and classify it with the entry's rules.
    None when (route "aten") the sample makes no call to the function's overloads. tol: the
    (rtol, atol) of floating outputs (None: DEFAULT_TOL by dtype); overload: the function's
    ATen overload, torch's float64 arbiter for adapted calls (TorchLessAccurate); exact_nan:
    the column (see Harness): the function runs under `graph_builder.exact_nan(exact_nan)`."""
    description = (f"[{source} #{index}] " if source else "") + describe(sample)
    for rule in entry.skip:
        if rule.matches(dtype, index, sample, source):
            return SampleResult(index, description, SKIPPED, rule.reason)
    capture = _Capture(overloads) if route == "aten" else contextlib.nullcontext()
    try:
        with capture:
            expected = reference(sample.input, *sample.args, **sample.kwargs)
    except Exception as e:
        if route == "aten" and capture.hit is None:
            return None
        return SampleResult(index, description, SKIPPED, f"torch rejects this sample: {_error_text(e)}")
    hit = capture.hit if route == "aten" else None
    hit_name = capture.name if route == "aten" else ""
    if route == "pre_dispatch":
        try:
            hits = _pre_dispatch_calls(reference, sample, overloads)
        except Exception as e:
            return SampleResult(index, description, SKIPPED, f"torch's pre-dispatch tracing fails on this sample: {_error_text(e, 300)}")
        hit, hit_name = ((hits[0][1], hits[0][2]), hits[0][0]) if hits else (None, "")
    try:
        if route in ("aten", "pre_dispatch"):
            if hit is None:
                return None
            the_call, expected = hit
            description += f" -> {_describe_call(the_call)}"
            if entry.adapter is not None:
                the_call = entry.adapter(the_call)
        else:
            own = source == OWN_SAMPLES
            the_call = entry.adapter(sample) if entry.adapter and not own else Call((sample.input, *sample.args), dict(sample.kwargs))
    except Exception as e:
        return SampleResult(index, description, FAILED, f"the adapter failed: {_error_text(e)}",
                            {m: (FAILED, "the adapter failed") for m in MODES})
    if the_call is None:
        return None
    if isinstance(the_call, Skip):
        return SampleResult(index, description, SKIPPED, the_call.reason)
    if tol is None and dtype in entry.tol:
        tol = entry.tol[dtype]
    reads = loose_reads()
    with graph_builder.exact_nan(exact_nan):
        attempts = {
            "eager": _attempt(lambda: _eager(fn, the_call), entry, expected, tol),
            "traced": _attempt(lambda: _traced(fn, the_call), entry, expected, tol),
        }
    # only a function that chose a form which may differ on NaN inputs is excused
    nan_may_differ = loose_reads() > reads and _holds_nan((the_call.args, the_call.kwargs))
    if route == "public":
        arbiter = functools.partial(reference, *_upcast((sample.input, *sample.args)), **_upcast(dict(sample.kwargs))) if isinstance(the_call, Call) and not entry.adapter or source == OWN_SAMPLES else None
    else:
        aten = _aten_reference(overload if entry.adapter is not None or not hit_name else hit_name)
        arbiter = functools.partial(aten, *_upcast(the_call.args), **_upcast(the_call.kwargs))
    modes: dict[str, tuple[str, str]] = {}
    for mode, (error, actual) in attempts.items():
        matching = [x for x in entry.xfail if x.matches(dtype, index, sample, mode, source)]
        xfail = next((x for x in matching if not isinstance(x, TorchLessAccurate)), matching[0] if matching else None)  # an XFail first
        if error is not None and nan_may_differ and not isinstance(xfail, XFail):
            modes[mode] = (XFAIL, NAN_MAY_DIFFER)
        elif isinstance(xfail, TorchLessAccurate):
            modes[mode] = (PASSED, "") if error is None else _arbitrate(actual, expected, arbiter, entry, error)
        elif xfail is None:
            modes[mode] = (PASSED, "") if error is None else (FAILED, error)
        else:
            modes[mode] = (XPASS, xfail.reason) if error is None else (XFAIL, xfail.reason)
    for outcome in (FAILED, XPASS, XFAIL, PASSED):
        hits = [m for m, (o, _) in modes.items() if o == outcome]
        if hits:
            message = "; ".join(f"{m}: {modes[m][1]}" for m in hits) if outcome in (FAILED, XPASS) else modes[hits[0]][1]
            return SampleResult(index, description, outcome, message, modes)
    raise AssertionError("unreachable")


NAN_MAY_DIFFER = "exact_nan=False: a NaN input may give numbers where torch gives NaN"


def _holds_nan(x: Any) -> bool:
    """Whether a (nested) argument holds a NaN: a floating or complex tensor or a float."""
    if isinstance(x, torch.Tensor):
        return (x.is_floating_point() or x.is_complex()) and bool(torch.isnan(x).any())
    if isinstance(x, float):
        return math.isnan(x)
    if isinstance(x, (list, tuple)):
        return any(_holds_nan(v) for v in x)
    if isinstance(x, dict):
        return any(_holds_nan(v) for v in x.values())
    return False


def _eager(fn: Callable[..., Any], the_call: Call) -> Any:
    return fn(*the_call.args, **the_call.kwargs)


def _traced(fn: Callable[..., Any], the_call: Call) -> Any:
    from torchlib.testing import run_model, trace

    model, feeds, structure = trace(fn, the_call.args, the_call.kwargs)  # onnx.checker runs here
    return run_model(model, feeds, structure)  # one onnxruntime session for this sample


def _attempt(run: Callable[[], Any], entry: Entry, expected: Any, tol: tuple[float, float] | None) -> tuple[str | None, Any]:
    """(the error or None, our output or None)."""
    actual = None
    try:
        actual = run()
        if entry.output is not None:
            actual = entry.output(actual)
        if entry.canonical is not None:
            actual, expected = entry.canonical(actual), entry.canonical(expected)
        compare(actual, expected, tol=tol, shape_only=entry.compare == "shape")
    except Exception as e:
        return _error_text(e), actual
    return None, actual


# -- torch less accurate than us: both errors against torch's float64 computation ----------------
def _upcast(x: Any) -> Any:
    """Floating tensors (and floating dtype arguments) below float64 as float64, complex64 ones
    as complex128."""
    if isinstance(x, torch.Tensor):
        if x.dtype == torch.complex64:
            return x.to(torch.complex128)
        return x.to(torch.float64) if x.is_floating_point() and x.dtype != torch.float64 else x
    if isinstance(x, torch.dtype):
        return torch.float64 if x.is_floating_point else x
    if isinstance(x, (list, tuple)):
        return type(x)(_upcast(v) for v in x) if not hasattr(x, "_fields") else tuple(_upcast(v) for v in x)
    if isinstance(x, dict):
        return {k: _upcast(v) for k, v in x.items()}
    return x


def _largest_error(actual: Any, exact: Any) -> float:
    """The largest absolute difference between floating outputs (inf where one side is NaN or
    infinite and the other is not)."""
    if isinstance(exact, torch.Tensor) and isinstance(actual, (torch.Tensor, np.ndarray)):
        if isinstance(actual, np.ndarray):
            from graph_builder.opset import numpy_to_torch

            actual = numpy_to_torch(actual)
        if exact.is_complex() and actual.is_complex() and actual.shape == exact.shape:  # (real, imaginary) parts
            actual, exact = torch.view_as_real(actual.resolve_conj()), torch.view_as_real(exact.resolve_conj())
        if not exact.is_floating_point() or actual.shape != exact.shape:
            return 0.0 if torch.equal(actual.to(exact.dtype), exact) else math.inf
        a, e = actual.to(torch.float64), exact.to(torch.float64)
        same = (a == e) | (a.isnan() & e.isnan())
        diff = torch.where(same, torch.zeros_like(a), (a - e).abs().nan_to_num(math.inf, math.inf, math.inf))
        return float(diff.max()) if diff.numel() else 0.0
    if isinstance(exact, (list, tuple)) and isinstance(actual, (list, tuple)):
        return max((_largest_error(a, e) for a, e in zip(actual, exact)), default=0.0)
    return 0.0


def _arbitrate(actual: Any, expected: Any, arbiter: Callable[[], Any] | None, entry: Entry, error: str) -> tuple[str, str]:
    """(XFAIL, both errors) when our output is at least as close to torch's float64 result as
    torch's own; else (FAILED, why)."""
    if arbiter is None or actual is None:
        return FAILED, f"{error}\n(TorchLessAccurate: no float64 arbiter for this sample)"
    try:
        exact = arbiter()
        if entry.output is not None and not isinstance(expected, (list, tuple)) and isinstance(exact, (list, tuple)):
            exact = entry.output(exact)
    except Exception as e:
        return FAILED, f"{error}\n(TorchLessAccurate: torch's float64 computation failed: {_error_text(e, 200)})"
    ours, torchs = _largest_error(actual, exact), _largest_error(expected, exact)
    numbers = f"largest error against torch in float64: torch {torchs:.3g}, ours {ours:.3g}"
    if ours <= torchs:
        return XFAIL, f"torch is less accurate than we are ({numbers})"
    return FAILED, f"{error}\nwe are less accurate than torch ({numbers})"


# -- comparison -------------------------------------------------------------------------------
def compare(actual: Any, expected: Any, tol: tuple[float, float] | None = None, shape_only: bool = False, path: str = "output") -> None:
    """assert_close on every tensor of the (nested) outputs, dtypes and shapes included.
    tol overrides DEFAULT_TOL for floating outputs."""
    if isinstance(actual, np.ndarray):
        from graph_builder.opset import numpy_to_torch

        actual = numpy_to_torch(actual)
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise AssertionError(f"{path}: expected a tensor, got {type(actual).__name__}")
        if actual.dtype != expected.dtype or actual.shape != expected.shape:
            raise AssertionError(f"{path}: expected {_tensor_text(expected)}, got {_tensor_text(actual)}")
        if shape_only:
            return
        inexact = expected.dtype.is_floating_point or expected.dtype.is_complex
        rtol, atol = tol if tol is not None and inexact else DEFAULT_TOL.get(expected.dtype, (0.0, 0.0))
        close: dict[str, Any] = dict(rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"{path}: {m}")
        if expected.dtype.is_complex:
            actual, expected = _complex_parts_where_not_finite(actual, expected, **close)
        torch.testing.assert_close(actual, expected, **close)
    elif isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            got = f"{type(actual).__name__} of {len(actual)}" if isinstance(actual, (list, tuple)) else type(actual).__name__
            raise AssertionError(f"{path}: expected a sequence of {len(expected)}, got {got}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            compare(a, e, tol, shape_only, f"{path}[{i}]")
    elif isinstance(expected, (bool, int, float, complex)):
        if isinstance(actual, torch.Tensor):
            if actual.numel() != 1:
                raise AssertionError(f"{path}: expected the number {expected!r}, got {_tensor_text(actual)}")
            kind = bool if actual.dtype == torch.bool else float if actual.dtype.is_floating_point else complex if actual.dtype.is_complex else int
            if kind is not type(expected):
                raise AssertionError(f"{path}: expected a {type(expected).__name__}, got {_tensor_text(actual)}")
            actual = actual.item()
        if not shape_only:
            torch.testing.assert_close(actual, expected, equal_nan=True, msg=lambda m: f"{path}: {m}")
    elif expected is None:
        if actual is not None:
            raise AssertionError(f"{path}: expected None, got {type(actual).__name__}")
    else:
        raise AssertionError(f"{path}: cannot compare the torch output of type {type(expected).__name__}")


def _complex_parts_where_not_finite(actual: torch.Tensor, expected: torch.Tensor, **close: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """assert_close judges a complex element by |actual - expected|, which is NaN as soon as one
    part is infinite on both sides (inf - inf), however close the other parts are (inf + 1.4007132e37j
    against inf + 1.4007133e37j fails). So the elements finite on both sides are checked here as
    complex numbers, and the others are returned as (real, imaginary) pairs for the caller to
    compare as real numbers: an infinite or NaN part must still match exactly, the other part to
    the tolerance."""
    actual, expected = actual.resolve_conj(), expected.resolve_conj()
    finite = torch.isfinite(actual) & torch.isfinite(expected)
    if bool(finite.all()):
        return actual, expected
    torch.testing.assert_close(actual[finite], expected[finite], **close)
    return torch.view_as_real(actual[~finite]), torch.view_as_real(expected[~finite])


def _tensor_text(t: torch.Tensor) -> str:
    return f"{dtype_name(t.dtype)}{list(t.shape)}"


def _error_text(e: BaseException, limit: int = 1500) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text if len(text) <= limit else text[:limit] + " ..."


# -- describing a sample ------------------------------------------------------------------------
_SHORT = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.float64: "f64",
    torch.int64: "i64", torch.int32: "i32", torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8",
    torch.bool: "b8", torch.complex64: "c64", torch.complex128: "c128",
}  # fmt: skip


def describe(sample: Any) -> str:
    """A one-line summary: input f32[2, 3]; args (f32[3], 2); kwargs {alpha=2}."""
    parts = [f"input {_describe(sample.input)}"]
    if sample.args:
        parts.append(f"args ({', '.join(_describe(a) for a in sample.args)})")
    if sample.kwargs:
        parts.append("kwargs {" + ", ".join(f"{k}={_describe(v)}" for k, v in sample.kwargs.items()) + "}")
    if getattr(sample, "name", ""):
        parts.append(f"name {sample.name!r}")
    return "; ".join(parts)


def _describe_call(c: Call) -> str:
    items = [_describe(a) for a in c.args] + [f"{k}={_describe(v)}" for k, v in c.kwargs.items()]
    return f"({', '.join(items)})"


def _describe(x: Any, depth: int = 0) -> str:
    if isinstance(x, torch.Tensor):
        shape = ", ".join(str(s) for s in x.shape)
        text = f"{_SHORT.get(x.dtype, dtype_name(x.dtype))}[{shape}]"
        if x.numel() == 1:
            text += f"={x.item():.4g}" if x.dtype.is_floating_point else f"={x.item()}"
        return text + ("(noncontiguous)" if x.numel() > 1 and not x.is_contiguous() else "")
    if isinstance(x, (list, tuple)) and depth < 2:
        items = [_describe(v, depth + 1) for v in x[:8]]
        if len(x) > 8:
            items.append(f"... {len(x)} items")
        return ("[" + ", ".join(items) + "]") if isinstance(x, list) else ("(" + ", ".join(items) + ("," if len(x) == 1 else "") + ")")
    if isinstance(x, torch.dtype):
        return dtype_name(x)
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."
