"""`python tools/typecheck.py`: mypy over the packages, held to a ratchet.

mypy runs with the configuration in pyproject.toml over graph_builder, torchlib and codegen.
Most of what it reports today is one question asked many times: a Value's `dtype` and `shape`
are Optional in the IR (a graph read from a file may lack them), while every function in
torchlib/ops works on traced Values, which always have both. Until the IR says so in its types,
the errors are counted per file in tools/typecheck_baseline.json, and this command fails when a
file has more errors than its baseline (a new error), or when a file now has fewer and the
baseline was not lowered (so the count only goes down: run with --update to write the lower
counts). CI runs it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "typecheck_baseline.json"
PACKAGES = ["graph_builder", "torchlib", "codegen"]


def errors_by_file() -> tuple[Counter[str], list[str]]:
    proc = subprocess.run([sys.executable, "-m", "mypy", *PACKAGES], cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if re.match(r"^[\w/.]+\.py:\d+: error:", line)]
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not lines):
        sys.exit(f"mypy failed to run:\n{proc.stdout}\n{proc.stderr}")
    return Counter(line.split(":", 1)[0] for line in lines), lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/typecheck.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="write today's counts as the baseline")
    args = parser.parse_args(argv)
    counts, lines = errors_by_file()
    if args.update:
        BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n")
        print(f"typecheck: baseline written, {sum(counts.values())} errors in {len(counts)} files")
        return 0
    baseline: dict[str, int] = json.loads(BASELINE.read_text())
    worse = {f: (baseline.get(f, 0), n) for f, n in counts.items() if n > baseline.get(f, 0)}
    better = {f: (n, counts.get(f, 0)) for f, n in baseline.items() if counts.get(f, 0) < n}
    for f, (was, now) in sorted(worse.items()):
        print(f"{f}: {now} mypy errors, baseline {was}:")
        for line in lines:
            if line.startswith(f + ":"):
                print("  " + line)
    for f, (was, now) in sorted(better.items()):
        print(f"{f}: {now} mypy errors, fewer than the baseline's {was}: run `python tools/typecheck.py --update`")
    total, allowed = sum(counts.values()), sum(baseline.values())
    print(f"typecheck: {total} mypy errors (baseline {allowed}) in {len(counts)} files")
    return 1 if worse or better else 0


if __name__ == "__main__":
    sys.exit(main())
