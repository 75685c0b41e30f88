"""The decode step of folders already written, timed in plain onnxruntime against one of them.

    python bench/bench_genai_steps.py --dir WORK --folders "builder fp32,torchlib standard fp32,OTHER fp32" [--runs 300]

WORK holds the folders (bench/bench_genai.py --dir WORK writes six; any other folder with a
model.onnx and a genai_config.json can be put beside them, e.g. one written by an earlier
checkout). Each folder's `model.onnx` runs the decode step (one token, batch 1, past tensors of
`--past` tokens), all sessions timed run by run in alternation, one intra-op thread, as
bench_genai.py's decode step (`decode_step_ms`). Prints the medians (CPU time and wall clock) and
each folder's ratio to the first folder of its precision: the median over runs of the first
folder's time over this one's (above 1 is faster), the runs of one round being milliseconds apart.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))

import argparse
import os
import statistics
import sys
from pathlib import Path

from bench_genai import decode_step_ms, paired_ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True, help="the folder holding the folders")
    parser.add_argument("--folders", required=True, help="comma-separated folder names (spaces for underscores), "
                                                         "each ending in its precision; the first of a precision is the base")  # fmt: skip
    parser.add_argument("--past", default="128,1024", help="past lengths (default 128,1024)")
    parser.add_argument("--runs", type=int, default=300, help="decode steps per session, alternated (default 300)")
    ns = parser.parse_args()
    names = [n.strip() for n in ns.folders.split(",")]
    folders = {n: Path(ns.dir) / n.replace(" ", "_") for n in names}
    base = {}
    for n in names:
        base.setdefault(n.split()[-1], n)
    print(f"decode step, batch 1, 1 thread, {ns.runs} alternated runs per past; load average "
          f"{os.getloadavg()[0]:.2f} at the start\n")
    print("| folder | past | CPU time (ratio) | wall clock (ratio) |")
    print("|---|---|---|---|")
    for past in (int(p) for p in ns.past.split(",")):
        times = decode_step_ms(folders, past, ns.runs, 1)
        for n in names:
            cells = []
            for clock in ("cpu", "wall"):
                t, b = times[n][clock], times[base[n.split()[-1]]][clock]
                cells.append(f"{statistics.median(t):.2f} ms ({paired_ratio(t, b):.3f}x)")
            print(f"| {n} | {past} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end (x: the base folder's time over this one's: above 1 is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
