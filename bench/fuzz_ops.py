"""Run every registered function on edge inputs against torch (torchlib/conformance/fuzz.py).

    python bench/fuzz_ops.py [--ops add,softmax] [--dtypes float32,int64] [--budget SECONDS]
                             [--samples 3] [--timeout 60] [--transforms scalars] [--json PATH]

Prints: functions x edge inputs run, crashes of the process, mismatches (torch gives a value,
we give another), errors (we raise where torch works), then one line per crash, mismatch and
error. Single process (each cell in a forked child, one at a time). Exit code 1 when a crash,
timeout or mismatch remains.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's torchlib, not an installed one


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python bench/fuzz_ops.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", help="comma-separated functions, overloads or op names (default: all)")
    p.add_argument("--dtypes", help="comma-separated dtypes (default: every dtype the table runs)")
    p.add_argument("--samples", type=int, default=3, help="base samples per function and dtype (default 3)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS", help="stop starting new cells after this long")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per input (default 60)")
    p.add_argument("--transforms", help="comma-separated edge inputs to make (e.g. scalars; default: all)")
    p.add_argument("--json", type=Path, help="write every finding as JSON")
    p.add_argument("--all", action="store_true", help="also list errors (we raise where torch works), overflows (both overflow, differently) and normwise differences (within an n·eps·‖A‖ error bound: eigen/singular values, Fourier transforms)")
    args = p.parse_args(argv)

    from torchlib.conformance.engine import Harness
    from torchlib.conformance.fuzz import fuzz
    from torchlib.conformance.spec import DTYPE_NAMES

    harness = Harness()
    dtypes = [DTYPE_NAMES[d.strip()] for d in args.dtypes.split(",")] if args.dtypes else None
    jobs = harness.jobs(args.ops.split(",") if args.ops else None, dtypes)
    only = frozenset(t.strip() for t in args.transforms.split(",")) if args.transforms else None
    report = fuzz(harness, jobs, args.samples, args.budget, args.timeout, progress=lambda line: print(line, file=sys.stderr, flush=True), only=only)
    print(report.summary())
    outcomes = ("crash", "timeout", "mismatch", "error", "overflow", "normwise") if args.all else ("crash", "timeout", "mismatch")
    for line in report.lines(outcomes):
        print(line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([dataclasses.asdict(f) for f in report.findings], indent=1))
    t = report.totals()
    return 1 if t["crash"] or t["timeout"] or t["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
