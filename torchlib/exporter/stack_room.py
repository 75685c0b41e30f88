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
used are never touched. On other Python implementations it is a plain call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")
_SLOTS = 64 * 1024


def _call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    return fn(*args, **kwargs)


try:  # a larger declared stack than the code needs is safe: the frame is only bigger
    _call.__code__ = _call.__code__.replace(co_stacksize=_SLOTS)
except (AttributeError, TypeError, ValueError):  # not CPython's code objects
    pass


def with_stack_room(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """`fn(*args, **kwargs)`, run with ~512 KiB of CPython frame stack free below it."""
    return _call(fn, args, kwargs)
