"""How an ONNX output is compared with torch's: the difference and the tolerance of its dtype
(used by `ExportResult.verify`, the self-check and the node-by-node comparison)."""

from __future__ import annotations

import dataclasses

import torch

# verify's tolerances (atol, rtol) by output dtype. atol is relative to the output's scale (its
# largest magnitude, at least 1). Half types round every op's result: a whole model stays within
# a few units in the last place (eps: float16 2**-10, bfloat16 2**-7, i.e. ~10 and ~5 eps here).
DEFAULT_TOLERANCE = (1e-4, 1e-3)
TOLERANCES = {torch.float16: (1e-2, 1e-2), torch.bfloat16: (4e-2, 4e-2)}


@dataclasses.dataclass
class OutputDiff:
    name: str
    max_abs: float
    max_rel: float
    dtype_ok: bool
    shape_ok: bool
    scale: float = 1.0  # max |expected|, at least 1
    tolerance: tuple[float, float] = DEFAULT_TOLERANCE  # (atol, rtol) of the output's dtype
    shape: tuple[int, ...] = ()  # torch's
    dtype: str = ""  # torch's, e.g. "float32"

    def ok(self, atol: float | None = None, rtol: float | None = None) -> bool:
        """Same dtype and shape, and max_abs <= atol * scale or max_rel <= rtol (the dtype's
        tolerance unless given)."""
        atol = self.tolerance[0] if atol is None else atol
        rtol = self.tolerance[1] if rtol is None else rtol
        return self.dtype_ok and self.shape_ok and (self.max_abs <= atol * self.scale or self.max_rel <= rtol)


def compare(name: str, expected: torch.Tensor, actual: torch.Tensor) -> OutputDiff:
    """Max absolute and relative difference of `actual` against `expected`, with the tolerance
    of the expected dtype. NaN where torch has NaN and infinities where torch has them agree."""
    e, a = expected, actual
    shape_ok = tuple(e.shape) == tuple(a.shape)
    dtype_ok = e.dtype == a.dtype
    scale = 1.0
    if shape_ok and e.numel():
        e64 = torch.view_as_real(e.detach().resolve_conj()).to(torch.float64) if e.is_complex() else e.detach().to(torch.float64)
        a64 = torch.view_as_real(a.detach().resolve_conj()).to(torch.float64) if a.is_complex() else a.detach().to(torch.float64)
        abs_diff = (e64 - a64).abs()
        finite = torch.isfinite(abs_diff)
        same_nonfinite = bool(((e64 == a64) | (e64.isnan() & a64.isnan()) | finite).all())
        max_abs = float(abs_diff[finite].max()) if finite.any() else 0.0
        max_rel = float((abs_diff[finite] / e64.abs()[finite].clamp_min(1e-12)).max()) if finite.any() else 0.0
        if not same_nonfinite:  # a NaN or infinity where torch has another value: neither bound holds
            max_abs = max_rel = float("inf")
        magnitudes = e64.abs()[torch.isfinite(e64)]
        scale = max(1.0, float(magnitudes.max())) if magnitudes.numel() else 1.0
    else:
        max_abs = max_rel = 0.0 if shape_ok else float("inf")
    return OutputDiff(name, max_abs, max_rel, dtype_ok, shape_ok, scale, TOLERANCES.get(e.dtype, DEFAULT_TOLERANCE),
                      tuple(e.shape), str(e.dtype).removeprefix("torch."))


def agree_where_finite(expected: torch.Tensor, actual: torch.Tensor) -> bool:
    """Whether `actual` is within `compare`'s tolerance of `expected` at every element where
    torch's value is finite (the same shape and dtype): what the runtime's native forms
    (`export(exact_nan=False)`) promise, as they differ from torch only where torch gives NaN or
    overflows to infinity."""
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return False
    e = torch.view_as_real(expected.detach().resolve_conj()) if expected.is_complex() else expected.detach()
    a = torch.view_as_real(actual.detach().resolve_conj()) if actual.is_complex() else actual.detach()
    finite = torch.isfinite(e.to(torch.float64)) if e.is_floating_point() else torch.ones_like(e, dtype=torch.bool)
    return compare("", e[finite], a[finite]).ok()


class Differences(list[OutputDiff]):
    """What `ExportResult.verify(*args)` returns: one OutputDiff per output of forward, in order.
    A list; printed, a table:

        output  shape   dtype    max abs  max rel  tolerance                   ok
        logits  [5, 4]  float32  2.4e-07  1.9e-06  1.0e-04 abs or 1.0e-03 rel  ok

    `tolerance` is what the dtype allows: the absolute difference (atol x the output's scale,
    its largest magnitude, at least 1) or the relative one; either suffices (`OutputDiff.ok`)."""

    def ok(self) -> bool:
        """Whether every output is within its tolerance."""
        return all(d.ok() for d in self)

    def __str__(self) -> str:
        return table(self)


def table(diffs: list[OutputDiff]) -> str:
    """The outputs' differences as a table, one row per output (see `Differences`)."""
    rows = [("output", "shape", "dtype", "max abs", "max rel", "tolerance", "ok")]
    for d in diffs:
        atol, rtol = d.tolerance
        status = ("shape differs" if not d.shape_ok else "dtype differs" if not d.dtype_ok
                  else "ok" if d.ok() else "DIFFERS")
        rows.append((d.name, str(list(d.shape)), d.dtype, f"{d.max_abs:.1e}", f"{d.max_rel:.1e}",
                     f"{atol * d.scale:.1e} abs or {rtol:.1e} rel", status))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)
