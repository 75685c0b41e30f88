"""Progress bars for long work (tqdm), shown only where a person is watching.

    for name in progress(models, desc="export", unit="model", enabled=not ns.no_progress):
        write(f"| {name} | ...")   # a line of output, printed above the bar

    with progress(total=nbytes, desc="weights", unit="B", unit_scale=True, enabled=progress) as bar:
        bar.update(n)

A bar is drawn when all hold: the caller's flag is on (`progress=True` in Python APIs,
no `--no-progress` on a command line), the stream (stderr by default) is a terminal, and no
test is running (pytest sets PYTEST_CURRENT_TEST). Otherwise the same object is returned with
tqdm's `disable=True`: it iterates and counts, and prints nothing. Used by saving weights
(`weights.save_model`), the conformance run, the benches and the compatibility runner: the one
mechanism for all of them. It lives here, in the lowest room, so every layer can use it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, TextIO


def shown(enabled: bool = True, stream: TextIO | None = None) -> bool:
    """Whether a bar would be drawn on `stream` (default: sys.stderr)."""
    stream = sys.stderr if stream is None else stream
    return enabled and "PYTEST_CURRENT_TEST" not in os.environ and stream.isatty()


def progress(iterable: Iterable[Any] | None = None, *, total: float | None = None, desc: str | None = None,
             unit: str = "it", unit_scale: bool = False, enabled: bool = True, file: TextIO | None = None) -> Any:
    """A tqdm bar over `iterable` (or updated by hand: `.update(n)`), on `file` (default:
    sys.stderr); drawn only when `shown(enabled, file)`. It leaves no line behind when done."""
    from tqdm import tqdm

    file = sys.stderr if file is None else file
    return tqdm(iterable, total=total, desc=desc, unit=unit, unit_scale=unit_scale, file=file, leave=False,
                dynamic_ncols=True, disable=not shown(enabled, file))


def write(text: str) -> None:
    """Print a line to stdout, flushed, above any bar being drawn (a print() would land inside it)."""
    from tqdm import tqdm

    tqdm.write(text)
    sys.stdout.flush()
