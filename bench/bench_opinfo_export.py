"""OpInfo end to end: every OpInfo of torch's op_db, wrapped in a tiny nn.Module, through
torchlib.export and onnxruntime, compared with torch.

    python bench/bench_opinfo_export.py                                # float32, int64, bool
    python bench/bench_opinfo_export.py --dtypes float32 --limit 50    # quick check
    python bench/bench_opinfo_export.py --ops add,sort --verbose       # a few OpInfos
    python bench/bench_opinfo_export.py --budget 1800 --json out.json  # stop after 30 min

For each OpInfo and dtype (among those the OpInfo supports), the first `--samples` samples
(default 2) are exported: the sample's tensors are the module's inputs, every other argument is
a constant. An OpInfo passes for a dtype when all its samples pass. torch.export failures are
counted apart ("not capturable"); the pass rate is over the capturable OpInfos. Failures are
grouped by reason: "unsupported op" (an ATen op without a torchlib function), "error" (the
export or onnxruntime raised), "mismatch" (the outputs differ from torch's).

Outputs are compared with the tolerance of their own dtype (a float32 result of int64 inputs,
special.i1's, gets float32's), integers and bools exactly. A floating output that differs from
torch's beyond it passes only when it is at least as close as torch's to torch's own result on
the floating inputs upcast to float64, and within 100 times its tolerance of that result (not
another answer, such as an eigenvector of the other sign): torch's is the less accurate (the
float32 accumulation order of addbmm, for one). The summary lists those samples with both errors.
Outputs torch defines only up to sign (eigenvectors, singular vectors) are compared through the
invariants the conformance table gives for that OpInfo (its entry's `canonical`), as the
harness compares them.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import io
import itertools
import json
import os
import re
import sys
import time
import warnings
from typing import Any

import torch
from torch.utils import _pytree as pytree

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's torchlib
import torchlib  # noqa: E402
from graph_builder.progress import progress, write  # noqa: E402

DTYPES = {"float32": torch.float32, "int64": torch.int64, "bool": torch.bool, "float16": torch.float16,
          "float64": torch.float64, "int32": torch.int32}  # fmt: skip
# OpInfos whose outputs are uninitialized memory in torch: only their dtypes and shapes mean anything
_UNINITIALIZED = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
_RANDOM_OPS = {"RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Bernoulli", "Multinomial"}
TOL = {torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2)}


class OpModule(torch.nn.Module):
    """Calls one OpInfo's op; the sample's tensors are the inputs, everything else a constant."""

    def __init__(self, fn: Any, spec: Any, leaves: list[Any], tensor_positions: list[int]):
        super().__init__()
        self.fn, self.spec, self.leaves, self.positions = fn, spec, leaves, tensor_positions

    def forward(self, *tensors: torch.Tensor) -> Any:
        leaves = list(self.leaves)
        for i, t in zip(self.positions, tensors):
            leaves[i] = t
        inp, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return self.fn(inp, *args, **kwargs)


def module_for(opinfo: Any, sample: Any) -> tuple[OpModule, tuple[torch.Tensor, ...]]:
    leaves, spec = pytree.tree_flatten((sample.input, tuple(sample.args), dict(sample.kwargs)))
    positions = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    return OpModule(opinfo.op, spec, leaves, positions), tuple(leaves[i] for i in positions)


def _clone(xs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(x.clone() for x in xs)


def _tensors(out: Any) -> list[torch.Tensor]:
    return [x for x in pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]


def _meta(out: Any) -> list[torch.Tensor]:
    """Zeros of the outputs' dtypes and shapes (random outputs are compared by these only)."""
    return [torch.zeros(x.shape, dtype=x.dtype) for x in _tensors(out)]


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for an output of this dtype: exact for integers and bool."""
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0.0, 0.0
    return TOL.get(dtype, (1.3e-6 if dtype in (torch.float32, torch.complex64) else 1e-7, 1e-5))


def compare(expected: Any, got: list[torch.Tensor], dtype: torch.dtype) -> str | None:
    """None when the outputs agree (each within its own dtype's tolerance), else what differs.
    dtype: the sample's (unused: the outputs' dtypes decide)."""
    want = _tensors(expected)
    if len(want) != len(got):
        return f"{len(got)} outputs, torch returns {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        rtol, atol = _tolerance(w.dtype)
        try:
            torch.testing.assert_close(g, w, rtol=rtol, atol=atol, equal_nan=True, check_device=False)
        except AssertionError as e:
            return f"output {i}: {str(e).splitlines()[0]}"
    return None


def _largest_error(x: torch.Tensor, exact: torch.Tensor) -> float:
    a, e = x.to(torch.float64), exact.to(torch.float64)
    same = (a == e) | (a.isnan() & e.isnan())
    diff = torch.where(same, torch.zeros_like(a), (a - e).abs().nan_to_num(float("inf"), float("inf"), float("inf")))
    return float(diff.max()) if diff.numel() else 0.0


def torch_less_accurate(model: Any, inputs: tuple[torch.Tensor, ...], expected: Any, got: list[torch.Tensor]) -> str | None:
    """When every output is floating, ours is within 100 times its dtype's tolerance of torch's
    result on the floating inputs upcast to float64, and at least as close to it as torch's
    own: both errors (else None)."""
    want = _tensors(expected)
    if not want or not all(w.dtype.is_floating_point and w.dtype != torch.float64 for w in want):
        return None
    try:
        exact = _tensors(model(*tuple(x.double() if x.is_floating_point() else x for x in _clone(inputs))))
    except Exception:
        return None
    if len(exact) != len(want) or any(e.shape != w.shape for e, w in zip(exact, want)):
        return None
    for g, e in zip(got, exact):  # the same answer, rounded differently (not, e.g., eigenvectors of another sign)
        rtol, atol = _tolerance(g.dtype)
        try:
            torch.testing.assert_close(g.to(torch.float64), e, rtol=100 * rtol, atol=100 * atol, equal_nan=True, check_device=False)
        except AssertionError:
            return None
    torchs = max(_largest_error(w, e) for w, e in zip(want, exact))
    ours = max(_largest_error(g, e) for g, e in zip(got, exact))
    return f"largest error against float64: torch {torchs:.3g}, ours {ours:.3g}" if ours <= torchs else None


@functools.cache
def _invariants() -> dict[str, Any]:
    """OpInfo name -> the conformance table's `canonical` for it: outputs torch defines only up
    to sign (eigenvectors, singular vectors) are compared through invariants, as the harness does."""
    from torchlib.conformance.engine import load_table

    found: dict[str, Any] = {}
    for entry in load_table().values():
        if entry.canonical is not None:
            for name in entry.opinfo:
                if isinstance(name, str):
                    found.setdefault(name, entry.canonical)
    return found


def _same_up_to_sign(name: str, expected: Any, got: list[torch.Tensor], dtype: torch.dtype) -> bool:
    """True when the OpInfo's outputs are defined only up to sign and agree through the table's
    invariants (a canonical form that does not apply to these outputs counts as no agreement)."""
    canonical = _invariants().get(name)
    if canonical is None:
        return False
    try:
        return compare(canonical(tuple(_tensors(expected))), _tensors(canonical(tuple(got))), dtype) is None
    except Exception:  # noqa: BLE001  (the canonical form is for another output structure)
        return False


def run_sample(opinfo: Any, sample: Any, dtype: torch.dtype) -> tuple[str, str]:
    """(outcome, detail): outcome is pass, not_capturable, unsupported, error or mismatch."""
    model, inputs = module_for(opinfo, sample)
    try:
        torch.manual_seed(0)
        expected = model(*_clone(inputs))
        torch.manual_seed(1)
        random = compare(expected, _tensors(model(*_clone(inputs))), dtype) is not None
    except Exception as e:  # the sample itself fails in torch: not a torchlib outcome
        return "not_capturable", f"torch eager: {type(e).__name__}"
    sink = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
            warnings.simplefilter("ignore")
            result = torchlib.export(model, _clone(inputs))
    except Exception as e:  # torchlib's CaptureError / UnsupportedOpsError, by name (their module may move)
        kinds = {c.__name__ for c in type(e).__mro__}
        if "CaptureError" in kinds:
            return "not_capturable", str(e).splitlines()[0][:200] if str(e) else "CaptureError"
        if "UnsupportedOpsError" in kinds:
            return "unsupported", " ".join(dict.fromkeys(re.findall(r"aten::[\w.]+", str(e)))) or str(e).splitlines()[0]
        return "error", f"export: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    try:
        got = _tensors(result(*_clone(inputs)))
    except Exception as e:
        return "error", f"onnxruntime: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    random = random or any(n.op_type in _RANDOM_OPS or (n.op_type == "Dropout" and len(n.input) == 3)
                           for n in result.model_proto.graph.node)  # fmt: skip
    if random or opinfo.name in _UNINITIALIZED:  # torch's random stream is not reproducible in ONNX: compare dtypes and shapes
        expected, got = _meta(expected), _meta(got)
    diff = compare(expected, got, dtype)
    if diff is None:
        return "pass", ""
    if not random and _same_up_to_sign(opinfo.name, expected, got, dtype):
        return "pass", ""
    arbitrated = None if random or opinfo.name in _UNINITIALIZED else torch_less_accurate(model, inputs, expected, got)
    return ("pass", f"torch less accurate: {arbitrated}") if arbitrated else ("mismatch", diff[:200])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="float32,int64,bool", help=f"comma-separated, of {sorted(DTYPES)}")
    parser.add_argument("--samples", type=int, default=2, help="samples per OpInfo and dtype")
    parser.add_argument("--limit", type=int, default=0, help="only the first N OpInfos of op_db (0: all)")
    parser.add_argument("--ops", default="", help="only these OpInfo names (comma-separated)")
    parser.add_argument("--budget", type=float, default=0, help="stop starting OpInfos after this many seconds")
    parser.add_argument("--json", default="", help="write every (opinfo, dtype) outcome to this file")
    parser.add_argument("--verbose", action="store_true", help="print every OpInfo's outcome")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (it shows only on a terminal)")
    ns = parser.parse_args()

    from torch.testing._internal.common_methods_invocations import op_db

    dtypes = [DTYPES[d] for d in ns.dtypes.split(",") if d]
    opinfos = [o for o in op_db if not ns.ops or o.name in ns.ops.split(",")]
    if ns.limit:
        opinfos = opinfos[: ns.limit]
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    stopped_at = None
    for k, opinfo in enumerate(progress(opinfos, desc="OpInfos", unit="opinfo", enabled=not ns.no_progress)):
        if ns.budget and time.perf_counter() - start > ns.budget:
            stopped_at = k
            break
        supported = opinfo.supported_dtypes("cpu")
        for dtype in dtypes:
            if dtype not in supported:
                continue
            try:
                samples = list(itertools.islice(opinfo.sample_inputs("cpu", dtype), ns.samples))
            except Exception as e:
                rows.append(dict(op=_name(opinfo), dtype=str(dtype), outcome="not_capturable",
                                 detail=f"sample_inputs: {type(e).__name__}"))  # fmt: skip
                continue
            if not samples:
                continue
            outcome, detail = "pass", ""
            for sample in samples:
                o, d = run_sample(opinfo, sample, dtype)
                if o != "pass":  # the first non-pass sample decides
                    outcome, detail = o, d
                    break
                detail = detail or d  # a pass of a torch-less-accurate sample says so
            rows.append(dict(op=_name(opinfo), dtype=str(dtype).replace("torch.", ""), outcome=outcome, detail=detail))
            if ns.verbose:
                write(f"{_name(opinfo):40s} {rows[-1]['dtype']:8s} {outcome:15s} {detail[:100]}")
    elapsed = time.perf_counter() - start
    _report(rows, dtypes, len(opinfos), stopped_at, elapsed)
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def _name(opinfo: Any) -> str:
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


def _report(rows: list[dict[str, Any]], dtypes: list[torch.dtype], total: int, stopped_at: int | None,
            elapsed: float) -> None:  # fmt: skip
    ran = total if stopped_at is None else stopped_at
    print(f"\nOpInfo export bench: {ran} of {total} OpInfos in {elapsed:.0f} s"
          + (" (time budget reached)" if stopped_at is not None else ""))  # fmt: skip
    print(f"{'dtype':10s} {'capturable':>10s} {'pass':>6s} {'rate':>7s} {'unsupported':>12s} {'error':>6s} "
          f"{'mismatch':>9s} {'not capturable':>15s}")  # fmt: skip
    for dtype in dtypes:
        name = str(dtype).replace("torch.", "")
        c = collections.Counter(r["outcome"] for r in rows if r["dtype"] == name)
        capturable = sum(c.values()) - c["not_capturable"]
        rate = f"{100 * c['pass'] / capturable:.1f}%" if capturable else "-"
        print(f"{name:10s} {capturable:10d} {c['pass']:6d} {rate:>7s} {c['unsupported']:12d} {c['error']:6d} "
              f"{c['mismatch']:9d} {c['not_capturable']:15d}")  # fmt: skip
    arbitrated = [r for r in rows if r["outcome"] == "pass" and r["detail"]]
    if arbitrated:
        print(f"\npassed where torch is less accurate ({len(arbitrated)}):")
        for r in arbitrated:
            print(f"  {r['op']:40s} {r['dtype']:8s} {r['detail'][:150]}")
    for reason in ("unsupported", "error", "mismatch"):
        failed = [r for r in rows if r["outcome"] == reason]
        if failed:
            print(f"\n{reason} ({len(failed)}):")
            for r in failed:
                print(f"  {r['op']:40s} {r['dtype']:8s} {r['detail'][:150]}")


if __name__ == "__main__":
    raise SystemExit(main())
