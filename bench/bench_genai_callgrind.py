"""onnxruntime-genai's folders counted by valgrind: instructions and data-cache misses per token.

    python bench/bench_genai_callgrind.py --dir WORK [--tokens 64] [--folders "builder int4,torchlib int4"]

WORK is a folder bench/bench_genai.py wrote (`--dir WORK`): its six folders (builder's, torchlib's
onnxruntime target, torchlib's standard target; fp32 and int4). Each chosen folder generates
`--tokens` greedy tokens in onnxruntime-genai once to warm up, then again under callgrind's
instrumentation (valgrind --tool=callgrind --cache-sim=yes --separate-threads=yes, switched on
around the second generation only: the model's loading is not counted), one process per folder
(`--jobs` at once), one intra-op thread. Only the thread that generates is counted: onnxruntime
runs the model on it (one intra-op thread), while onnxruntime-genai's telemetry thread
compresses and uploads its events on a timer (Microsoft::Applications::Events, zlib's deflate),
so that the other threads' counts grow with the wall time a run takes on a loaded machine
(0.03 M instructions per token, 0.22 % of the total, in one int4 run at load 15; twice as
many calls to its compression in one fp32 run as in another: docs/genai.md).

Counts depend far less than times on what else runs on the machine (a machine shared by other
work moves tokens/s by several percent from run to run): a difference of a few tenths of a
percent between two folders is visible here, within one run of this command (the same folder
counted in two runs moved by up to 0.3 %, the ratio between two folders by 0.02 %: docs/genai.md).
They are a simulation: instructions executed and a modelled cache's misses, not time. Prints one
JSON line per folder, then a table (per token; ratio: the folder's count over the builder
folder's of the same precision, below 1 is fewer).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROMPT = [5, 17, 99, 250, 1000, 7, 3, 4242, 31000, 12]  # bench_genai.py's
# each count: the sum of these events of callgrind's cache simulation
COUNTS = {"instructions": ("Ir",), "data reads and writes": ("Dr", "Dw"), "L1 data misses": ("D1mr", "D1mw"),
          "last-level data misses": ("DLmr", "DLmw")}  # fmt: skip


def child(folder: str, tokens: int) -> None:
    """Generate twice in this process; callgrind counts only the second generation."""
    import numpy as np
    import onnxruntime_genai as og

    model = og.Model(folder)

    def generate() -> None:
        params = og.GeneratorParams(model)
        length = len(PROMPT) + tokens
        params.set_search_options(do_sample=False, max_length=length, min_length=length)
        generator = og.Generator(model, params)
        generator.append_tokens(np.array([PROMPT], np.int64))
        while not generator.is_done():
            generator.generate_next_token()

    generate()
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True, check=True)
    generate()
    subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True, check=True)


def count(folder: Path, tokens: int, cache_sim: bool = True) -> dict[str, int]:
    """The counts of the thread that generates (the process' first: Python's main thread)."""
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--cache-sim={'yes' if cache_sim else 'no'}", "--instr-atstart=no",
                               "--separate-threads=yes", f"--callgrind-out-file={tmp}/out", sys.executable, __file__,
                               "--child", str(folder), "--tokens", str(tokens)],
                              capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), check=False)  # fmt: skip
        main = Path(tmp) / "out-01"
        text = main.read_text() if main.exists() else ""
    events = re.search(r"^events: (.*)$", text, re.M)
    totals = re.search(r"^totals: (.*)$", text, re.M)
    if proc.returncode != 0 or events is None or totals is None:
        raise RuntimeError(f"valgrind on {folder} failed:\n{proc.stderr[-3000:]}")
    found = dict(zip(events.group(1).split(), map(int, totals.group(1).split())))
    return {k: sum(found[e] for e in names) for k, names in COUNTS.items() if all(e in found for e in names)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="a folder bench/bench_genai.py --dir wrote")
    parser.add_argument("--tokens", type=int, default=64, help="new tokens per generation (default 64)")
    parser.add_argument("--folders", default="builder int4,torchlib int4,torchlib standard int4",
                        help="comma-separated bench_genai.py folder names (default: the int4 ones)")
    parser.add_argument("--jobs", type=int, default=1, help="folders counted at once (default 1)")
    parser.add_argument("--instructions-only", action="store_true",
                        help="no cache simulation: instructions only, several times faster on the fp32 folders")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        child(ns.child, ns.tokens)
        return 0
    if ns.dir is None or shutil.which("valgrind") is None:
        parser.error("--dir WORK (from bench/bench_genai.py --dir WORK) and valgrind on the PATH are needed")
    names = [n.strip() for n in ns.folders.split(",")]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(ns.jobs) as pool:
        futures = {pool.submit(count, Path(ns.dir) / name.replace(" ", "_"), ns.tokens, not ns.instructions_only): name for name in names}
        for future in concurrent.futures.as_completed(futures):  # printed as each ends
            results[futures[future]] = future.result()
            print(json.dumps({"folder": futures[future], "tokens": ns.tokens, **results[futures[future]]}), flush=True)
    results = {name: results[name] for name in names}
    print(f"\nper token, {ns.tokens} greedy tokens after a {len(PROMPT)}-token prompt, 1 thread "
          f"(ratio: over the builder's folder of the same precision)\n")
    columns = list(next(iter(results.values())))
    print("| folder | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, counts in results.items():
        builder = results.get("builder " + name.split()[-1])
        cells = [f"{v / ns.tokens / 1e6:.3f} M" + (f" ({v / builder[k]:.4f})" if builder else "") for k, v in counts.items()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
