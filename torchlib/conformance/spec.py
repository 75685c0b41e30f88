"""The vocabulary of the expectations table: one `Entry` per registered function.

    Entry("aten__softmax", opinfo=["nn.functional.softmax", "softmax"],
          tol={torch.float16: (2e-3, 2e-3)},
          xfail=[XFail("onnxruntime has no bfloat16 Softmax kernel", dtypes=[torch.bfloat16])])

An entry says which OpInfo(s) exercise the function (or gives samples of its own), how a
sample reaches the ATen signature (by default: the ATen call torch dispatches the OpInfo's op
to, see Entry.route), the tolerances, and the expected failures and skips, each with its
reason. Expected failures are strict: one that passes fails the run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from torchlib.torch_version import torch_matches

MODES = ("eager", "traced")

# The dtypes the harness runs, in report order. Complex variants (registered with complex=True)
# run the complex dtypes only.
REAL_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool)
COMPLEX_DTYPES = (torch.complex64, torch.complex128)

# (rtol, atol) by the dtype of the compared output: torch.testing.assert_close's defaults.
# An OpInfo's own tolerance overrides (DecorateInfo(toleranceOverride(...)) on the tests that
# compare an implementation with eager, see opinfo_tolerances) widen them for its samples; an
# entry's tol= (with tol_reason) replaces them. Integer and bool outputs compare exactly.
DEFAULT_TOL: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}

# The torch test classes whose tolerance overrides apply here: each compares an
# implementation (decomposition, compiled kernel, strided or reference variant) with eager.
TOLERANCE_SOURCES = ("TestCommon", "TestDecomp", "TestInductorOpInfo", "TestUnaryUfuncs", "TestBinaryUfuncs", "TestBinaryUfuncsDevice", "TestReductions")


def opinfo_tolerances(info: Any) -> dict[torch.dtype, tuple[float, float]]:
    """{dtype: (rtol, atol)}: the largest tolerance an OpInfo declares for CPU (or every
    device) on the tests of TOLERANCE_SOURCES, never below DEFAULT_TOL."""
    from torch.testing._internal.common_device_type import (
        precisionOverride,
        toleranceOverride,
    )

    found: dict[torch.dtype, tuple[float, float]] = {}
    for decorate in getattr(info, "decorators", ()):
        if getattr(decorate, "device_type", None) not in (None, "cpu") or getattr(decorate, "cls_name", None) not in TOLERANCE_SOURCES:
            continue
        if getattr(decorate, "test_name", None) == "test_complex_half_reference_testing":
            continue
        for d in getattr(decorate, "decorators", ()):
            if isinstance(d, toleranceOverride):
                pairs = {dtype: (t.rtol, t.atol) for dtype, t in d.d.items()}
            elif isinstance(d, precisionOverride):
                pairs = {dtype: (DEFAULT_TOL.get(dtype, (0.0, 0.0))[0], atol) for dtype, atol in d.d.items()}
            else:
                continue
            for dtype, (rtol, atol) in pairs.items():
                base = found.get(dtype, DEFAULT_TOL.get(dtype, (0.0, 0.0)))
                found[dtype] = (max(base[0], rtol), max(base[1], atol))
    return found

DTYPE_NAMES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float64": torch.float64, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool,
    "complex64": torch.complex64, "complex128": torch.complex128,
}  # fmt: skip


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def sample_input(input: Any, *args: Any, **kwargs: Any) -> Any:
    """torch's OpInfo SampleInput (for entries that generate samples of their own)."""
    from torch.testing._internal.opinfo.core import SampleInput

    return SampleInput(input, args=args, kwargs=kwargs)


@dataclasses.dataclass(frozen=True)
class Call:
    """The arguments of the ATen function for one sample."""

    args: tuple
    kwargs: dict[str, Any]


def call(*args: Any, **kwargs: Any) -> Call:
    return Call(args, kwargs)


@dataclasses.dataclass(frozen=True)
class Skip:
    """A sample (or dtype) that is not run, and why. As an adapter's return value: this sample's
    public call has no equivalent in the ATen signature."""

    reason: str
    dtypes: Sequence[torch.dtype] | None = None
    samples: Sequence[int] | None = None
    when: Callable[[Any], bool] | None = None
    opinfo: str | None = None
    torch_version: str | None = None

    def matches(self, dtype: torch.dtype, index: int, sample: Any, source: str = "") -> bool:
        return _matches(self, dtype, index, sample, source)


@dataclasses.dataclass(frozen=True)
class TorchLessAccurate:
    """Samples whose output differs from torch's beyond the tolerance because torch's own
    low-precision kernel is further from the exact result than we are. Checked on every
    matching sample that fails the comparison with torch: torch's function runs again on the
    inputs upcast to float64, and the sample counts as an expected failure only when our
    largest error against that result is at most torch's (the message gives both errors);
    otherwise it fails. A matching sample that passes the comparison with torch passes.

    dtypes, samples, when, mode, opinfo, torch_version: as for XFail."""

    dtypes: Sequence[torch.dtype] | None = None
    samples: Sequence[int] | None = None
    when: Callable[[Any], bool] | None = None
    mode: str | None = None
    opinfo: str | None = None
    reason: str = "torch is less accurate than we are"
    torch_version: str | None = None

    def matches(self, dtype: torch.dtype, index: int, sample: Any, mode: str, source: str = "") -> bool:
        return (self.mode is None or self.mode == mode) and _matches(self, dtype, index, sample, source)


@dataclasses.dataclass(frozen=True)
class XFail:
    """Samples expected to fail, and why (what differs: dtype, value, error message).

    dtypes: only these dtypes (None: all); samples: only these sample indices (None: all);
    when: only samples for which when(sample) is true; mode: "eager" or "traced" (None: both);
    opinfo: only samples of this OpInfo ("name" or "name.variant"; None: all);
    torch_version: only on the installed torch versions this condition names (">=2.14", "<2.14"; see
    torchlib/torch_version.py), for an expectation that holds only where torch's own kernel
    behaves so (None: every version in the support window).
    Strict: a matching sample that passes is an unexpected pass and fails the run."""

    reason: str
    dtypes: Sequence[torch.dtype] | None = None
    samples: Sequence[int] | None = None
    when: Callable[[Any], bool] | None = None
    mode: str | None = None
    opinfo: str | None = None
    torch_version: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in (None, *MODES):
            raise ValueError(f"XFail mode must be one of {MODES} or None, not {self.mode!r}")

    def matches(self, dtype: torch.dtype, index: int, sample: Any, mode: str, source: str = "") -> bool:
        return (self.mode is None or self.mode == mode) and _matches(self, dtype, index, sample, source)


def _matches(rule: Skip | XFail | TorchLessAccurate, dtype: torch.dtype, index: int, sample: Any, source: str) -> bool:
    if rule.opinfo is not None and rule.opinfo != source:
        return False
    if rule.torch_version is not None and not torch_matches(rule.torch_version):
        return False
    if rule.dtypes is not None and dtype not in rule.dtypes:
        return False
    if rule.samples is not None and index not in rule.samples:
        return False
    return rule.when is None or bool(rule.when(sample))


OpInfoRef = str | tuple[str, str]  # "add" or ("max", "reduction_with_dim")


@dataclasses.dataclass(frozen=True)
class Entry:
    """How one registered function (keyed by its Python name, e.g. "aten_add") is checked.

    opinfo:   the OpInfo entries that exercise it: "name" or (name, variant_test_name).
    route:    how a sample reaches the function.
              "aten": the OpInfo's op runs under a dispatch mode that records the top-level ATen
                calls; a sample belongs to this function when it calls one of `aten` (default:
                the function's registered overloads), and the function gets that call's
                arguments and is compared with that call's output.
              "pre_dispatch": the same on the op's pre-dispatch graph (make_fx, as torch.export
                sees it), where CompositeImplicitAutograd overloads (conv2d, softmax.int,
                linear, ...) are not decomposed yet.
              Samples that call none of the overloads belong to other functions and are not
              counted. Either way the arguments are exactly what an exported graph records.
              "public": fn(sample.input, *sample.args, **sample.kwargs) (or the adapter's call),
                compared with the OpInfo op's output.
              None (default): "pre_dispatch" when every overload is CompositeImplicitAutograd,
                else "aten".
    aten:     the ATen overloads whose calls route to this function (route "aten").
    adapter:  maps the call onto the function's signature, or returns Skip(reason) for a call
              that has no equivalent, or None for a call that is not this function's. Routes
              "aten"/"pre_dispatch": Call -> Call | Skip | None (e.g. convolution's arguments
              onto _convolution's); route "public": SampleInput -> Call | Skip | None.
    output:   maps the function's result onto what torch returns (e.g. lambda r: r[0]).
    samples:  samples of its own: dtype -> iterable of SampleInput, called as they are (route
              "public") and checked against `reference` (default: torch.ops.aten.<first
              overload>). For a function no OpInfo reaches, or in addition to its OpInfos for
              the dtypes they leave without a sample. The adapter is not applied to them.
    dtypes:   the dtypes of `samples` (required with it; OpInfo entries run every dtype the
              OpInfo supports among the harness dtypes, skip one with Skip(reason, dtypes=...)).
    tol:      {dtype under test: (rtol, atol)} replacing DEFAULT_TOL and the OpInfo's own
              tolerances; tol_reason (required with tol) says why this function needs it.
    compare:  "values", or "shape" for nondeterministic outputs (shape and dtype only).
    canonical: for outputs torch defines only up to sign or rotation (singular vectors,
              eigenvectors): maps both the function's result and torch's output to invariants
              (e.g. U·diag(S)·Vᴴ and UᴴU) that are then compared; say why in a comment.
    normwise: the outputs (after `canonical`) are eigenvalues or singular values of the first
              input, or invariants built from them, which LAPACK computes to an absolute error
              of p(n)·eps·‖A‖ only (LAPACK Users' Guide, "Error bounds for the symmetric
              eigenproblem" and "for the singular value decomposition"): the fuzz pass counts a
              difference within n·eps·max|torch's value| on finite inputs as "normwise", not as
              a mismatch (values below that bound are rounding noise of the largest). Fourier
              transforms have the same kind of bound (an FFT's error is c·log n·eps·‖x‖ in
              norm, bin by bin only where the algorithm happens to be exact): stft's entries
              use it too.
    xfail, skip: expected failures and skipped samples, each with its reason. Sample indices
              count the samples of one OpInfo (or of `samples`) from 0, before routing.
    reason:   for a function that is not run at all: why (must be given when there are
              neither OpInfos nor samples).
    torch_version: a version condition (">=2.13") for a function that is registered only on those
              torch versions (an op torch added); elsewhere the table leaves the entry out.
    """

    function: str
    opinfo: Sequence[OpInfoRef] = ()
    route: str | None = None
    aten: Sequence[str] = ()
    adapter: Callable[[Any], Call | Skip] | None = None
    output: Callable[[Any], Any] | None = None
    samples: Callable[[torch.dtype], Iterable[Any]] | None = None
    reference: Callable[..., Any] | None = None
    dtypes: Sequence[torch.dtype] | None = None
    tol: dict[torch.dtype, tuple[float, float]] = dataclasses.field(default_factory=dict)
    tol_reason: str = ""
    compare: str = "values"
    canonical: Callable[[Any], Any] | None = None
    normwise: bool = False
    xfail: Sequence[XFail | TorchLessAccurate] = ()
    skip: Sequence[Skip] = ()
    reason: str = ""
    torch_version: str | None = None

    def __post_init__(self) -> None:
        if self.compare not in ("values", "shape"):
            raise ValueError(f"{self.function}: compare must be 'values' or 'shape', not {self.compare!r}")
        if self.route not in (None, "aten", "pre_dispatch", "public"):
            raise ValueError(f"{self.function}: route must be 'aten', 'pre_dispatch', 'public' or None, not {self.route!r}")
        if self.samples is not None and self.dtypes is None:
            raise ValueError(f"{self.function}: an entry with samples of its own must list its dtypes")
        looser = [d for d, (rtol, atol) in (self.tol or {}).items()
                  if rtol > DEFAULT_TOL.get(d, (0.0, 0.0))[0] or atol > DEFAULT_TOL.get(d, (0.0, 0.0))[1]]
        if looser and not self.tol_reason:
            raise ValueError(f"{self.function}: tol= looser than torch's for {looser} needs tol_reason=: why this function needs it")
        if not self.opinfo and self.samples is None and not self.reason:
            raise ValueError(f"{self.function}: give an OpInfo, samples of its own, or the reason it is not tested")

    @property
    def opinfo_refs(self) -> list[tuple[str, str]]:
        return [(r, "") if isinstance(r, str) else (r[0], r[1]) for r in self.opinfo]
