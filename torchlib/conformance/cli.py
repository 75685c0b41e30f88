"""`python -m torchlib conformance`: run the OpInfo harness and write the report."""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from graph_builder.progress import progress
from torchlib.conformance.spec import COMPLEX_DTYPES, DTYPE_NAMES, REAL_DTYPES, dtype_name

_HARNESS: Any = None  # the harness a forked worker inherits


def _run_one(job: tuple[int, str, Any, int | None]) -> tuple[int, Any]:
    index, key, dtype, max_samples = job
    return index, _HARNESS.run(key, dtype, max_samples)


def run_jobs(harness: Any, jobs: Sequence[tuple[str, Any]], max_samples: int | None, workers: int,
             bar: Any) -> Iterator[Any]:
    """Run (function, dtype) jobs, in this process or in forked workers; yields JobResults in
    completion order, each counted on `bar` (a `graph_builder.progress.progress`)."""
    global _HARNESS
    if workers <= 1:
        yield from _counted((harness.run(key, dtype, max_samples) for key, dtype in jobs), bar)
        return
    _HARNESS = harness
    work = [(i, key, dtype, max_samples) for i, (key, dtype) in enumerate(jobs)]
    with multiprocessing.get_context("fork").Pool(workers, maxtasksperchild=200) as pool:
        yield from _counted((result for _, result in pool.imap_unordered(_run_one, work, chunksize=1)), bar)


def _counted(results: Iterator[Any], bar: Any) -> Iterator[Any]:
    failed = 0
    for result in results:
        failed += not result.ok
        bar.set_postfix_str(f"failures {failed}, {result.function} {result.dtype}", refresh=False)
        bar.update(1)
        yield result


@contextlib.contextmanager
def _quiet_stderr(enabled: bool) -> Iterator[TextIO]:
    """Send file descriptor 2 (where onnxruntime's C++ logger writes) to /dev/null; yields a
    stream on the real stderr for the progress bar."""
    if not enabled:
        yield sys.stderr
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    stream = os.fdopen(os.dup(saved), "w", encoding="utf-8", errors="replace")
    try:
        yield stream
    finally:
        stream.flush()
        stream.close()
        os.dup2(saved, 2)
        os.close(saved)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m torchlib conformance",
        description="Check every registered function against PyTorch's OpInfo database, eagerly and "
        "as a traced ONNX graph, and report a function x dtype matrix.",
    )
    p.add_argument("--ops", help="comma-separated functions (aten_add), overloads (add.Tensor) or op names (add); default: all")
    nan = p.add_mutually_exclusive_group()
    nan.add_argument("--exact-nan", action="store_true",
                     help="the export(..., exact_nan=True) column: every function gives torch's NaN and overflow edges "
                          "(default: export's default column, where a function that uses the runtime's native op may "
                          "differ from torch on a sample with a NaN input, and no other)")
    nan.add_argument("--no-exact-nan", action="store_true", help="the default column, said explicitly")
    p.add_argument("--dtypes", help=f"comma-separated dtypes among {', '.join(DTYPE_NAMES)}; default: all")
    p.add_argument("--max-samples", type=int, default=None, metavar="N", help="at most N samples per OpInfo and dtype (default: all)")
    p.add_argument("--html", type=Path, metavar="PATH", help="write the HTML report here (e.g. reports/conformance.html)")
    p.add_argument("--markdown", type=Path, metavar="PATH", help="also write the markdown report to a file")
    p.add_argument("--json", type=Path, metavar="PATH", help="write every sample's result as JSON")
    p.add_argument("--jobs", "-j", type=int, default=_cores(), metavar="N",
                   help=f"worker processes (default: every core this process may use, here {_cores()})")
    p.add_argument("--table", type=Path, help="the expectations table (default: tests/opinfo/table)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the summary and unexpected results, not the matrix "
                   "(the default when a report file is written)")
    p.add_argument("--matrix", action="store_true", help="print the whole matrix even when a report file is written")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr (it shows only on a terminal)")
    p.add_argument("--ort-logs", action="store_true", help="keep onnxruntime's own error logging on stderr")
    p.add_argument("--timings", action="store_true", help="print the slowest function x dtype cells")
    p.add_argument("--figures", action="store_true", help="print the table's figures (functions, cells, XFail rules) and exit without running")
    p.add_argument("--coverage", action="store_true", help="check by routing alone (torch only, no onnxruntime) that every selected cell gets a sample, and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the conformance harness; 0 when every outcome is the expected one, 1 on unexpected
    failures, unexpected passes or table problems, 2 on bad arguments."""
    args = _parser().parse_args(argv)
    from torchlib.conformance.engine import Harness
    from torchlib.conformance.report import Report, slowest, to_html, to_json, to_markdown

    dtypes = None
    if args.dtypes:
        try:
            dtypes = [DTYPE_NAMES[d.strip()] for d in args.dtypes.split(",") if d.strip()]
        except KeyError as e:
            print(f"conformance: unknown dtype {e.args[0]!r}; choose among {', '.join(DTYPE_NAMES)}", file=sys.stderr)
            return 2
    start = time.perf_counter()
    harness = Harness(args.table, exact_nan=args.exact_nan)
    try:
        keys = harness.select(args.ops.split(",") if args.ops else None)
        jobs = harness.jobs(keys, dtypes)
    except KeyError as e:
        print(f"conformance: {e.args[0]}", file=sys.stderr)
        return 2
    if args.figures:
        for name, value in harness.figures().items():
            print(f"{value:6d}  {name}")
        return 0
    if args.coverage:
        empty = [f"{k} {dtype_name(d)}" for (k, d), source in harness.coverage(jobs).items() if not source]
        print(f"coverage: {len(jobs) - len(empty)} of {len(jobs)} function x dtype cells get samples")
        for line in empty:
            print(f"no sample reaches {line}: name other OpInfos or give samples of its own")
        return 1 if empty else 0
    with _quiet_stderr(enabled=not args.ort_logs) as stderr:  # onnxruntime logs the errors it raises
        with progress(total=len(jobs), desc="conformance", unit="cell", enabled=not args.no_progress, file=stderr) as bar:
            results = list(run_jobs(harness, jobs, args.max_samples, args.jobs, bar))
    order = {job: i for i, job in enumerate((k, dtype_name(d)) for k, d in jobs)}
    results.sort(key=lambda r: order[(r.function, r.dtype)])

    shown = [DTYPE_NAMES[n] for n in DTYPE_NAMES if dtypes is None or DTYPE_NAMES[n] in dtypes]
    used = {r.dtype for r in results}
    columns = [dtype_name(d) for d in (*REAL_DTYPES, *COMPLEX_DTYPES) if d in shown and (d in REAL_DTYPES or dtype_name(d) in used)]
    selected = set(keys)
    problems = harness.problems() if args.ops is None else [p for p in harness.problems() if p.split(" ", 1)[0] in selected]
    report = Report(
        results=results,
        dtypes=columns,
        functions={k: harness.functions[k].aten_names for k in keys},
        untested={k: r for k, r in harness.untested().items() if k in selected},
        problems=problems,
        missing=[k for k in harness.missing() if k in selected],
        seconds=time.perf_counter() - start,
        max_samples=args.max_samples,
        figures=harness.figures(),
    )
    markdown = to_markdown(report)
    if args.quiet or (any((args.html, args.markdown, args.json)) and not args.matrix):
        print(report.summary())
        for line in report.problem_lines():
            print(line)
    else:
        print(markdown, end="")
    for path, text in ((args.markdown, markdown), (args.html, args.html and to_html(report)), (args.json, args.json and to_json(report))):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"conformance: wrote {path}", file=sys.stderr)
    if args.timings:
        print("\nslowest cells:\n" + "\n".join(slowest(results)))
    return 0 if report.ok else 1
