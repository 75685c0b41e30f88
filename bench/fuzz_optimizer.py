"""Differential fuzzing of the export-time optimizer (torchlib/conformance/optimizer_fuzz.py).

    python bench/fuzz_optimizer.py [--models 400] [--seed 0] [--verbose] [--families heads_inside,kv_cache]

Random small models built from each rewrite's pattern and its near misses, exported with
optimize=True and optimize=False, compared in onnxruntime (and against torch) at three sizes of
every dynamic dim. Prints: models tried, rewrites hit (per rewrite), differences found, then one
line per difference. Exit code 1 when a difference is found or a rewrite was never hit (with
`--families`: only a difference). `--families` runs the cases of those families only (their first
`--models` rounds each: case r * len(FAMILIES) + f, the indices a full run gives them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's torchlib, not an installed one


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python bench/fuzz_optimizer.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=int, default=400, help="models to try (default 400)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", action="store_true", help="one line per model")
    p.add_argument("--families", help="comma-separated family names (optimizer_fuzz.FAMILIES): their first --models rounds")
    args = p.parse_args(argv)

    from torchlib.conformance import optimizer_fuzz as fz

    start = time.perf_counter()

    def progress(o: fz.Outcome) -> None:
        if args.verbose or o.differences or o.skipped:
            print(f"{time.perf_counter() - start:7.1f}s  {o.case}  {dict(o.hits)}  {o.differences or o.skipped}", flush=True)

    indices = list(range(args.models))
    if args.families:
        known = {f.__name__: i for i, f in enumerate(fz.FAMILIES)}
        chosen = [n.strip() for n in args.families.split(",")]
        unknown = [n for n in chosen if n not in known]
        if unknown:
            p.error(f"--families: {unknown} are not families; the families: {', '.join(known)}")
        indices = [r * len(fz.FAMILIES) + known[n] for r in range(args.models) for n in chosen]
    tried, hits, diffs, skipped = fz.summary(fz.fuzz(indices, args.seed, progress))
    print(f"models tried: {tried} (seed {args.seed}, {time.perf_counter() - start:.0f} s), "
          f"{len(skipped)} skipped (the optimize=False export fails: not the optimizer's doing)")
    print("rewrites hit:")
    names = fz.rewrite_names()
    for name in names + sorted(k for k in hits if k not in names):
        print(f"  {name:55s} {hits[name]}")
    missed = [n for n in names if not hits[n]] if not args.families else []
    print(f"differences found: {len(diffs)}")
    for d in diffs:
        print("  " + d)
    if missed:
        print(f"never hit: {missed}")
    for s in skipped:
        print("  skipped: " + s.replace("\n", " "))
    return 1 if diffs or missed else 0


if __name__ == "__main__":
    sys.exit(main())
