"""Edge-input fuzzing: every registered function, eagerly, on OpInfo samples transformed into
the inputs torch accepts and tests rarely give (empty and size-1 dims, NaN/inf, huge values,
integer extremes, non-contiguous views, negative dims, Scalar arguments a float16 / bfloat16 /
float32 tensor cannot hold with the tensor set around them; float64 is a dtype of its own).

    python bench/fuzz_ops.py --budget 1800            # every function, report on stdout
    python bench/fuzz_ops.py --ops add,softmax --dtypes float32,int64
    python bench/fuzz_ops.py --transforms scalars --dtypes float16,bfloat16,float32

For each (function, dtype) cell the first few samples that reach the function (the harness's
routing) give ATen calls; each call is transformed, torch computes the expected output on
the transformed call (torch.ops.aten.<overload>, or the entry's reference), and the function
runs eagerly (each ONNX op in onnxruntime). A cell runs in a forked child process that
reports each outcome as it goes, so an abort inside onnxruntime costs one input, counted as a
crash, and the cell resumes after it in a new child.

Outcomes per input: "ok" (same as torch), "overflow" (both overflow, differently: see below),
"normwise" (an entry marked `normwise`, eigenvalues or singular values, within LAPACK's
absolute error bound n·eps·‖A‖ of torch's on finite inputs: with entries near finfo.max every
value below that bound is rounding noise of the largest, which torch's float32 and float64
results do not agree on either; see `_within_normwise_bound`),
"ok" also when ours is torch's answer on the same values as non-contiguous views (torch's
vectorised and scalar kernels disagree: `_torch_strided_agrees`),
"less_accurate_torch" (the table declares torch less accurate than us for the dtype, a
`TorchLessAccurate` rule, and on this input ours is at least as close as torch's to torch's own
float64 result: the harness's arbitration),
"mismatch" (torch gives a value, we give another: a silent wrong answer), "error" (we raise
where torch works), "crash" (the process died), "timeout", "rejected" (torch raises, or its
result cannot be represented, or is undefined: not a valid input, not counted), "known" (the untransformed call
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
lists it. prod of float64 has an exact reference (rational arithmetic): where torch's running
product left float64's range (a subnormal partial product loses digits) and ours is the exact
product rounded, the input counts as "overflow" too. Nothing else is relaxed: inputs holding inf/NaN are never excused (NaN propagation is checked strictly); a
finite value on either side must match; a result that is representable (the std of
[1e38, -1e38, ...] in float32) must match.

SymInt results. math.ceil/floor/trunc and sym_int of 3.4e38 give a Python int that int64
cannot hold; in a graph the result is an int64 value, so no implementation can give it. Such
an input counts as "rejected" (the result is outside what the op's output can represent).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
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
    _largest_error,
    _pre_dispatch_calls,
    _upcast,
    compare,
    describe,
)  # fmt: skip
from torchlib.conformance.spec import (
    DEFAULT_TOL,
    Call,
    Skip,
    TorchLessAccurate,
    dtype_name,
)
from torchlib.conformance.torch_undefined import torch_undefined

COUNTED = ("ok", "overflow", "normwise", "less_accurate_torch", "mismatch", "error", "crash", "timeout")
_DIM_NAMES = {"dim", "dims", "dim0", "dim1", "dim2", "axis", "start_dim", "end_dim", "source", "destination"}


@dataclasses.dataclass
class Finding:
    function: str
    dtype: str
    transform: str
    outcome: str  # ok | overflow | normwise | less_accurate_torch | mismatch | error | crash | timeout | rejected | known
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


def noncontiguous(c: Call, dense: Sequence[int] = ()) -> Call | None:
    """Every tensor with more than one element as a non-contiguous view of the same values, but
    the positional arguments `dense` (those whose layout selects torch's kernel path)."""
    from torch.testing._internal.common_utils import noncontiguous_like

    def view(t: torch.Tensor) -> torch.Tensor:
        return noncontiguous_like(t) if t.numel() > 1 else t

    args = tuple(a if i in dense else _map_tensors(a, view) for i, a in enumerate(c.args))
    changed = Call(args, _map_tensors(c.kwargs, view))
    if not any(not t.is_contiguous() for t in _tensors(changed)):
        return None
    return changed


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


_SCALAR_TYPES = {"number", "Optional[number]", "float", "Optional[float]"}  # Scalar and float in the schema


def _unrepresentable(v: float, dtype: torch.dtype) -> float:
    """A number near v (0.3 for 0) that `dtype` cannot hold: 0.37 of an ulp above a value of it."""
    if v == 0 or not math.isfinite(v):
        v = 0.3
    rounded = torch.tensor(v, dtype=dtype).double()
    ulp = (torch.nextafter(rounded.to(dtype), torch.tensor(math.inf, dtype=dtype)).double() - rounded).item()
    return rounded.item() + 0.37 * ulp


def scalars(reference: Callable[..., Any]) -> Callable[[Call], Call | None]:
    """Python number arguments (Scalar / float in the overload's schema) of a float16, bfloat16
    or float32 call replaced by numbers that dtype cannot hold, and the first such tensor's
    first elements set to the scalar rounded to the dtype, its negation and its neighbours:
    torch rounds a scalar to the tensor's dtype in some kernels and not in others (opmath), and
    a comparison with the scalar shows which (hardshrink(x, 0.3) of bfloat16 0.30078125 is 0)."""
    schema = getattr(reference, "_schema", None)

    def transform(c: Call) -> Call | None:
        floats = [t for t in _tensors(c) if t.dtype in (torch.float16, torch.bfloat16, torch.float32) and t.numel() > 0]
        if schema is None or not floats:
            return None
        dtype = floats[0].dtype
        args, kwargs, changed = list(c.args), dict(c.kwargs), []

        def replace(v: Any) -> Any:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return v
            new = _unrepresentable(float(v), dtype)
            changed.append(new)
            return new

        for i, arg in enumerate(schema.arguments):
            if str(arg.type) not in _SCALAR_TYPES or arg.name in ("p", "dropout_p"):  # a dropout is random
                continue
            if i < len(args) and not arg.kwarg_only:
                args[i] = replace(args[i])
            elif arg.name in kwargs:
                kwargs[arg.name] = replace(kwargs[arg.name])
        if not changed:
            return None
        r = torch.tensor(changed[0], dtype=dtype)
        inf = torch.tensor(math.inf, dtype=dtype)
        values = [r.item(), -r.item(), torch.nextafter(r, inf).item(), torch.nextafter(r, -inf).item(), changed[0]]
        call = Call(tuple(args), kwargs)
        return _first(call, lambda t: t is floats[0], lambda t: _put(t, values)) or call

    return transform


# Ops whose result is the input's memory layout, not a function of its values: as_strided reads
# the input's storage (which a graph input never shares with anything), the others report
# strides, the storage offset or contiguity. In an exported graph every value is a dense
# row-major tensor of its own (torch.export's functional tensors are contiguous, and these
# SymInts are evaluated at trace time on them); a hand-made view is outside the functions'
# contract, so they get no non-contiguous input.
_LAYOUT_OPS = {"as_strided", "as_strided_", "as_strided_scatter", "as_strided_copy", "sym_stride", "sym_storage_offset", "sym_is_contiguous",
               "sym_strides", "stride", "storage_offset", "is_contiguous", "is_non_overlapping_and_dense"}  # fmt: skip


# Ops whose Scalar arguments are probabilities or distribution parameters: another value draws
# other random numbers in torch and in onnxruntime, so the scalars input compares nothing.
_RANDOM_OPS = {"dropout", "native_dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout", "bernoulli",
               "rrelu", "rrelu_with_noise", "normal", "uniform", "exponential", "cauchy", "log_normal", "geometric"}


# Positional arguments whose layout changes torch's result; they stay dense under the
# noncontiguous transform (the others are still fed as views).
# - embedding_bag: torch's CPU sum takes its fast path (no offset2bag: an empty second output)
#   only when weight.stride(1) == 1 and per_sample_weights.stride(0) == 1 (is_fast_path in
#   EmbeddingBag.cpp); strided ones get the full offset2bag. In a graph weight is a dense
#   parameter and per_sample_weights a dense value.
# - native_layer_norm_backward: the CPU kernel reads mean and rstd through their data pointer,
#   ignoring their strides (a view's result holds the storage's other values: NaN rows with
#   noncontiguous_like); in a graph they are the dense outputs of native_layer_norm.
_DENSE_ARGS = {"embedding_bag": (0, 6), "_embedding_bag": (0, 6), "_embedding_bag_forward_only": (0, 6),
               "native_layer_norm_backward": (3, 4)}  # fmt: skip


def _op_names(reference: Callable[..., Any], aten_names: Sequence[str]) -> set[str]:
    """The ATen op names (no namespace, no overload) of the function: its registered names and
    the reference's schema (an entry's reference may be a lambda without one)."""
    names = {n.split("::")[-1].split(".")[0] for n in aten_names}
    schema = getattr(reference, "_schema", None)
    if schema is not None:
        names.add(schema.name.split("::")[-1])
    return names


def transforms(reference: Callable[..., Any], aten_names: Sequence[str] = ()) -> list[tuple[str, Callable[[Call], Call | None] | None]]:
    names = _op_names(reference, aten_names)
    dense = tuple(sorted({i for n in names for i in _DENSE_ARGS.get(n, ())}))
    return [
        ("original", lambda c: c),
        ("empty", _narrow(0)),
        ("size1", _narrow(1)),
        ("nan_inf", nan_inf),
        ("huge", huge),
        ("int_extremes", int_extremes),
        ("noncontiguous", None if names & _LAYOUT_OPS else functools.partial(noncontiguous, dense=dense)),
        ("negative_dims", negative_dims(reference)),
        ("scalars", None if names & _RANDOM_OPS else scalars(reference)),
    ]


# -- one cell, in the current process -----------------------------------------------------------
def cell_inputs(harness: Harness, key: str, dtype: torch.dtype, limit: int,
                only: frozenset[str] | None = None) -> list[tuple[str, Call, Callable[..., Any], str, Any]]:
    """(transform name, call, torch function, the table's expected failure of the base call,
    tolerance) for every edge input of the cell, in order; `only`: those transforms alone."""
    inputs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for base, reference, known, tol in base_calls(harness, key, dtype, limit):
            for name, transform in transforms(reference, harness.functions[key].aten_names):
                if transform is None or (only is not None and name not in only):
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
        undefined = torch_undefined(key, the_call, expected)
        try:
            actual = fn(*the_call.args, **the_call.kwargs)
            if entry.output is not None:
                actual = entry.output(actual)
        except Exception as e:
            if undefined is not None and undefined[0] is None:
                return "rejected", f"{undefined[1]} (we raise: {_error_text(e, 150)})"
            return "error", _error_text(e, 300)
        if undefined is not None:
            masks, why = undefined
            if masks is None:
                return "rejected", why
            try:
                expected = _unflat(expected, iter(_patch(_flat(actual), _flat(expected), masks)))
                compare(actual, expected, tol=tol)
            except Exception as e:
                return "mismatch", _error_text(e, 300)
            return "rejected", f"{why}; the other elements are the same as torch's"
        too_big = _beyond_int64(expected)
        if too_big is not None:
            return "rejected", f"torch's result {too_big} does not fit the int64 that holds the function's result"
        canonical = entry.canonical or (lambda out: out)  # outputs defined up to sign: compared as the harness does
        try:
            compare(canonical(actual), canonical(expected), tol=tol, shape_only=entry.compare == "shape")
        except Exception as e:
            if entry.compare != "shape" and _overflow_excused(the_call, reference, actual, expected, tol, canonical):
                return "overflow", _error_text(e, 300)
            exact = _exact_product(key, the_call, expected)
            if exact is not None and _closer(actual, exact, expected, tol):
                return "overflow", f"torch's float64 product left float64's range on the way (ours is the exact product): {_error_text(e, 200)}"
            if entry.normwise:  # overflowed elements (as above) judged by the overflow rule, the rest by the bound
                patched = _overflow_patched(the_call, reference, actual, expected, tol, canonical)
                if _within_normwise_bound(the_call, canonical(actual) if patched is None else patched, canonical(expected), tol):
                    return "normwise", _error_text(e, 300)
            closer = _torch_less_accurate(entry, dtype, the_call, reference, canonical(actual), canonical(expected), canonical)
            if closer is not None:
                return "less_accurate_torch", closer
            if entry.compare != "shape" and _torch_strided_agrees(the_call, reference, actual, expected, tol, canonical):
                return "ok", "torch's kernel for strided inputs gives our values where its contiguous kernel differs"
            return "mismatch", _error_text(e, 300)
    return "ok", ""


def _torch_less_accurate(entry: Any, dtype: torch.dtype, the_call: Call, reference: Callable[..., Any], actual: Any,
                         expected: Any, canonical: Callable[[Any], Any]) -> str | None:
    """The message when the entry declares torch less accurate than us for this dtype (a
    `TorchLessAccurate` rule of the table, eager or both modes) and ours is at least as close
    as torch's to torch's own result on the inputs upcast to float64: the harness's arbitration
    (engine._arbitrate), on the edge input. None otherwise (a mismatch)."""
    rules = [x for x in entry.xfail if isinstance(x, TorchLessAccurate) and x.mode in (None, "eager")
             and (x.dtypes is None or dtype in x.dtypes)]  # fmt: skip
    if not rules:
        return None
    try:
        exact = canonical(reference(*_upcast(the_call.args), **_upcast(the_call.kwargs)))
    except Exception:
        return None
    ours, torchs = _largest_error(actual, exact), _largest_error(expected, exact)
    if ours > torchs:
        return None
    return f"{rules[0].reason} (largest error against torch in float64: torch {torchs:.3g}, ours {ours:.3g})"


def _torch_strided_agrees(the_call: Call, reference: Callable[..., Any], actual: Any, expected: Any,
                          tol: tuple[float, float] | None, canonical: Callable[[Any], Any]) -> bool:
    """True when torch, run again on the same values as non-contiguous views, gives our result
    (every element, within the tolerance). torch's CPU kernels take a vectorised path for
    contiguous tensors and a scalar one for strided ones, and the two do not always agree:
    gelu(inf) is NaN on the AVX512 path (inf times its erf approximation's 0 term) and inf on
    the scalar one, the limit. Where torch gives two answers, ours must be one of them."""
    strided = noncontiguous(the_call)
    if strided is None:
        return False
    try:
        other = canonical(reference(*strided.args, **strided.kwargs))
    except Exception:
        return False
    try:
        compare(canonical(actual), other, tol=tol)
    except Exception:
        return False
    return True


# -- overflow: where the exact result is not representable, only "non-finite" is checked ------------
_WIDENED = (torch.float16, torch.bfloat16, torch.float32)


# -- torch's result undefined (torch_undefined.py): those elements are ours --------------------------
def _patch(actual: list[Any], expected: list[Any], masks: list[torch.Tensor]) -> list[Any]:
    """expected with ours where the mask is set (output by output)."""
    out = []
    for a, e, m in zip(actual, expected, masks, strict=True):
        if not (isinstance(a, torch.Tensor) and a.shape == e.shape and a.dtype == e.dtype):
            raise AssertionError(f"output: expected {e.dtype}{list(e.shape)}, got {getattr(a, 'dtype', type(a))}{list(getattr(a, 'shape', []))}")
        out.append(torch.where(m, a, e))
    return out


def _beyond_int64(expected: Any) -> int | None:
    """torch's Python int result when int64 cannot hold it (SymInt ops: math.ceil(3.4e38))."""
    if isinstance(expected, int) and not isinstance(expected, bool) and not -(2**63) <= expected < 2**63:
        return expected
    return None


def _flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _exact_product(key: str, the_call: Call, expected: Any) -> torch.Tensor | None:
    """prod of finite float64 factors, exactly (rational arithmetic), rounded to float64 (+-inf
    beyond its range): the reference float64 lacks a wider dtype for. torch's running product
    can pass through subnormals (a tiny partial product, then huge factors) and lose most of
    its digits, or overflow before the tiny factors come; ours is the product in the log
    domain there. None for other functions or inputs."""
    from fractions import Fraction

    if key not in ("aten_prod", "aten_prod_dim_int") or not isinstance(expected, torch.Tensor) or expected.dtype != torch.float64:
        return None
    x = the_call.args[0] if the_call.args else None
    if not isinstance(x, torch.Tensor) or x.dtype != torch.float64 or not bool(torch.isfinite(x).all()):
        return None
    if key == "aten_prod_dim_int":
        dim = the_call.args[1] if len(the_call.args) > 1 else the_call.kwargs["dim"]
        rows = x.movedim(dim, -1).reshape(-1, x.shape[dim] if x.dim() else 1)
    else:
        rows = x.reshape(1, -1)
    big = Fraction(torch.finfo(torch.float64).max)

    def rounded(q: Fraction) -> float:
        return float(q) if abs(q) <= big else math.copysign(math.inf, q)

    values = [rounded(math.prod((Fraction(v) for v in row), start=Fraction(1))) for row in rows.tolist()]
    return torch.tensor(values, dtype=torch.float64).reshape(expected.shape)


def _closer(actual: Any, exact: torch.Tensor, expected: torch.Tensor, tol: tuple[float, float] | None) -> bool:
    """ours matches the exact result and torch's does not."""
    try:
        compare(actual, exact, tol=tol)
    except Exception:
        return False
    try:
        compare(expected, exact, tol=tol)
    except Exception:
        return True
    return False


def _overflow_excused(the_call: Call, reference: Callable[..., Any], actual: Any, expected: Any,
                      tol: tuple[float, float] | None, canonical: Callable[[Any], Any] = lambda out: out) -> bool:
    """True when every element where we differ from torch is an overflowed element on which
    torch and we are both non-finite (see the module docstring); checked by comparing again
    with those elements of ours replaced by torch's. Outputs are compared through the entry's
    `canonical` (its invariants for outputs defined only up to sign)."""
    patched = _overflow_patched(the_call, reference, actual, expected, tol, canonical)
    if patched is None:
        return False
    try:
        compare(patched, canonical(expected), tol=tol)
    except Exception:
        return False
    return True


def _overflow_patched(the_call: Call, reference: Callable[..., Any], actual: Any, expected: Any,
                      tol: tuple[float, float] | None, canonical: Callable[[Any], Any]) -> Any | None:
    """canonical(actual) with its overflowed elements (`_excused`) replaced by torch's, or None
    when there are none (or an input holds inf/NaN: propagating them is not an overflow)."""
    inputs = [t for t in _tensors(the_call) if t.is_floating_point() or t.is_complex()]
    if not inputs or not all(bool(torch.isfinite(t).all()) for t in inputs):
        return None
    args, kwargs = _map_tensors((the_call.args, the_call.kwargs), _widen)
    actual, expected = canonical(actual), canonical(expected)
    try:
        wide = _flat(canonical(reference(*args, **kwargs)))
    except Exception:
        wide = None
    actual_flat, expected_flat = _flat(actual), _flat(expected)
    if len(actual_flat) != len(expected_flat) or (wide is not None and len(wide) != len(expected_flat)):
        return None
    patched, any_excused = [], False
    for i, (a, e) in enumerate(zip(actual_flat, expected_flat)):
        ok_types = isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and (e.dtype.is_floating_point or e.dtype.is_complex)
        if not ok_types or a.shape != e.shape or a.dtype != e.dtype:
            patched.append(a)
            continue
        w = wide[i] if wide is not None else None
        if e.dtype.is_complex:  # each of the real and imaginary parts is a real number of its own
            w = torch.view_as_real(w.resolve_conj()) if isinstance(w, torch.Tensor) and w.is_complex() else None
            a_real, e_real = torch.view_as_real(a.resolve_conj()), torch.view_as_real(e.resolve_conj())
            excused_real = _excused(a_real, e_real, w, tol)
            any_excused = any_excused or bool(excused_real.any())
            patched.append(torch.view_as_complex(torch.where(excused_real, e_real, a_real).contiguous()))
            continue
        excused = _excused(a, e, w, tol)
        any_excused = any_excused or bool(excused.any())
        patched.append(torch.where(excused, e, a))
    return _unflat(actual, iter(patched)) if any_excused else None


def _within_normwise_bound(the_call: Call, actual: Any, expected: Any, tol: tuple[float, float] | None) -> bool:
    """For an entry marked `normwise` (eigenvalues, singular values, Fourier transforms: see
    Entry; complex outputs part by part): True when,
    on finite inputs, every floating output of ours is within the tolerance plus n·eps·‖A‖ of
    torch's, and non-finite exactly where torch's is (values beyond the dtype's range). n is the
    largest matrix dimension of the first input A; ‖A‖ is estimated per output as the smaller
    of the largest |value| of torch's output (‖A‖₂ itself for eigen/singular values, 1 for
    VᵀV) and n·max|A[i, j]| (at least ‖A‖₂, when the largest value overflowed)."""
    inputs = [t for t in _tensors(the_call) if t.is_floating_point() or t.is_complex()]
    if not inputs or not all(bool(torch.isfinite(t).all()) for t in inputs) or inputs[0].dim() < 1:
        return False
    n = max(inputs[0].shape[-2:])
    norm = n * inputs[0].abs().double().max() if inputs[0].numel() else torch.tensor(0.0, dtype=torch.float64)
    actual_flat, expected_flat = _flat(actual), _flat(expected)
    if len(actual_flat) != len(expected_flat):
        return False
    for a, e in zip(actual_flat, expected_flat):
        if isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and e.dtype.is_complex and a.dtype == e.dtype:
            a, e = torch.view_as_real(a.resolve_conj()), torch.view_as_real(e.resolve_conj())  # each part a real value
        if not (isinstance(a, torch.Tensor) and isinstance(e, torch.Tensor) and e.dtype.is_floating_point):
            try:
                compare(a, e, tol=tol)
            except Exception:
                return False
            continue
        if a.shape != e.shape or a.dtype != e.dtype:
            return False
        finite = torch.isfinite(e)
        if not torch.equal(finite, torch.isfinite(a)):
            return False
        if not bool(finite.any()):
            continue
        rtol, atol = tol if tol is not None else DEFAULT_TOL.get(e.dtype, (0.0, 0.0))
        largest = e.double().abs().nan_to_num(nan=float("inf")).max()
        bound = n * torch.finfo(e.dtype).eps * torch.minimum(largest, norm)
        diff = (a[finite].double() - e[finite].double()).abs()
        if bool((diff > atol + rtol * e[finite].double().abs() + bound).any()):
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
def _child(harness: Harness, key: str, dtype: torch.dtype, limit: int, start: int, fd: int, only: frozenset[str] | None) -> None:
    import faulthandler

    faulthandler.disable()  # an abort is the parent's finding, not a traceback on the terminal
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)  # onnxruntime's own error log
    with os.fdopen(fd, "w") as out:
        inputs = cell_inputs(harness, key, dtype, limit, only)
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


def fuzz_cell(harness: Harness, key: str, dtype: torch.dtype, limit: int = 3, timeout: float = 60.0,
              only: frozenset[str] | None = None) -> list[Finding]:
    """Every edge input of one cell, each outcome recorded; crashes and hangs cost one input."""
    findings: list[Finding] = []
    start = 0
    while True:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read)
            try:
                _child(harness, key, dtype, limit, start, write, only)
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
        elif not hung and _ours_alone_survives(harness, key, dtype, limit, current["start"], timeout, only):
            outcome, why = "rejected", (f"the process died after torch returned ({why}), and our function alone on this input, "
                                        "in a fresh process, returns: torch's kernel corrupted memory it does not own")  # fmt: skip
        findings.append(Finding(key, dtype_name(dtype), current["transform"], outcome, current["call"], why))
        start = current["start"] + 1
        if count is not None and start >= count:
            break
    return _mark_known(findings)


def _ours_alone_survives(harness: Harness, key: str, dtype: torch.dtype, limit: int, index: int, timeout: float,
                         only: frozenset[str] | None = None) -> bool:
    """True when our function, run alone (torch's reference not called) on input `index` of the
    cell in a fresh process, returns or raises without the process dying. A process that dies
    after torch returned may die of torch's own heap corruption (max_pool backward with
    out-of-range indices writes outside its output), detected later by the allocator."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            import faulthandler

            faulthandler.disable()
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            _, the_call, _, _, _ = cell_inputs(harness, key, dtype, limit, only)[index]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    harness.functions[key].function(*the_call.args, **the_call.kwargs)
                except Exception:
                    pass  # raising is not dying
            os._exit(0)
        finally:
            os._exit(1)
    deadline = time.monotonic() + timeout * 3
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


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
            f"{t['ok']} same as torch, {t['overflow']} overflow (both overflow, differently), "
            f"{t['normwise']} normwise (within an n·eps·‖A‖ error bound: eigen/singular values, Fourier transforms), "
            f"{t['less_accurate_torch']} where torch is less accurate (closer to torch's float64 result), {t['crash']} crashes, {t['mismatch']} mismatches, {t['error']} errors (we raise, torch works), "
            f"{t['timeout']} timeouts; {t['rejected']} inputs torch rejects, {t['known']} on calls the table already expects to fail; "
            f"{self.seconds:.0f} s" + (" (time budget reached: not every cell ran)" if self.stopped_early else "")
        )

    def lines(self, outcomes: Sequence[str] = ("crash", "timeout", "mismatch", "error", "overflow", "normwise", "less_accurate_torch")) -> list[str]:
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
         timeout: float = 60.0, progress: Callable[[str], None] | None = None, only: frozenset[str] | None = None) -> FuzzReport:
    start = time.monotonic()
    findings: list[Finding] = []
    done = 0
    jobs = by_breadth(jobs)
    stopped = False
    for key, dtype in jobs:
        if budget is not None and time.monotonic() - start > budget:
            stopped = True
            break
        cell = fuzz_cell(harness, key, dtype, limit, timeout, only)
        findings += cell
        done += 1
        if progress is not None:
            bad = sum(1 for f in cell if f.outcome in ("crash", "timeout", "mismatch", "error"))
            progress(f"{done}/{len(jobs)} {key} {dtype_name(dtype)}: {len(cell)} inputs, {bad} findings")
    functions = len({k for k, _ in jobs[:done]})
    return FuzzReport(findings, functions, done, time.monotonic() - start, stopped)


__all__ = ["Finding", "FuzzReport", "base_calls", "cell_inputs", "describe", "fuzz", "fuzz_cell", "run_input"]
