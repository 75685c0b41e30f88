"""Call a function with room on CPython's frame stack, so deep call paths do not thrash it.

CPython (3.11 and later) keeps Python frames on a per-thread data stack made of 16 KiB chunks.
When a frame does not fit in the current chunk, a new chunk is mmap'ed; when the frame at the
start of a chunk returns, that chunk is munmap'ed at once. A hot call path that goes back and
forth across a chunk boundary pays an mmap, a munmap and fresh page faults on every crossing.
torch.export dispatches every op through ~100 Python frames, so whether its hot paths straddle a
boundary depends on how deep the caller was: on an LSTM, `torch.export.export` took 0.09 s of
CPU at some caller depths and 0.24 s at others (23,000 page faults and 0.17 s of system time per
call; `bench/bench_capture.py` shows it).

`with_stack_room(fn, ...)` calls `fn` from a frame that declares a 64 Ki-slot value stack
(512 KiB). Pushing that frame allocates one chunk of 1 MiB, and the frames below `fn` fill the
rest of it instead of crossing chunk boundaries: one mmap per call, and the pages that are never
used are never touched.

Versions: the chunked data stack is CPython's since 3.11 (Python/pystate.c, _PyThreadState_PushFrame).
The thrashing and its cure are the same on 3.11, 3.12 and 3.13: `bench/bench_stack_room_python.py`
(no torch) counts minor page faults per 2000 calls of a 40-frame chain at 100 caller depths:
without room at most 4004 (3.11) / 4005 (3.12, 3.13) at the worst depths, with room at most 8 on
all three. torch.export itself on 3.12 (3.12.1, torch 2.13.0; 2026-11-27, `OMP_NUM_THREADS=1
python bench/bench_capture.py --repeat 3 --models lstm,mlp,gpt`, both cores loaded by other jobs,
load average 12-13): through the room 1.15 / 0.25 / 1.35 s against 1.27 / 0.29 / 1.68 s for the
plain call (lstm / mlp / gpt; 3.11.7 in the same minutes: 1.42 / 0.17 / 0.50 against 1.44 / 0.23
/ 0.77 s). So on 3.12 it still helps or does nothing and never hurts; the load blurs how much,
the page-fault counts above are the firmer figure. A larger declared stack is harmless wherever frames live (the frame is only bigger),
but the benefit depends on that layout, so the code object is changed only on CPython 3.11 to
3.13; on any other Python (other implementations, a later CPython whose frames may live
elsewhere) `with_stack_room` is a plain call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")
_SLOTS = 64 * 1024


def _call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    return fn(*args, **kwargs)


# CPython versions whose per-thread frame data stack of chunks this is written for
KNOWN_LAYOUT = sys.implementation.name == "cpython" and (3, 11) <= sys.version_info[:2] <= (3, 13)

if KNOWN_LAYOUT:  # a larger declared stack than the code needs is safe: the frame is only bigger
    _call.__code__ = _call.__code__.replace(co_stacksize=_SLOTS)


def with_stack_room(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """`fn(*args, **kwargs)`, run with ~512 KiB of CPython frame stack free below it."""
    return _call(fn, args, kwargs)
