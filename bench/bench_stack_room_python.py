"""stack_room on the running Python, without torch: page faults per deep call at every caller
depth, plain and through with_stack_room. A call path that straddles a 16 KiB data-stack chunk
boundary mmaps and munmaps a chunk on every crossing (minor page faults); with stack room it
should not, at any caller depth.

    python bench/bench_stack_room_python.py        # any CPython; prints one line per mode
"""

from __future__ import annotations

import importlib.util
import resource
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("stack_room", Path(__file__).resolve().parents[1] / "torchlib/exporter/stack_room.py")
stack_room = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stack_room)


def leaf(n: int) -> int:  # a chain of 40 small frames, called many times back and forth
    return 0 if n == 0 else leaf(n - 1) + 1


def work() -> int:
    return sum(leaf(40) for _ in range(2000))


def at_depth(d: int, fn):
    return fn() if d == 0 else at_depth(d - 1, fn)


def faults(d: int, room: bool) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    at_depth(d, (lambda: stack_room.with_stack_room(work)) if room else work)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


if __name__ == "__main__":
    for room in (False, True):
        counts = [faults(d, room) for d in range(0, 300, 3)]
        print(f"python {sys.version.split()[0]} stack room {'on ' if room else 'off'} (known layout {stack_room.KNOWN_LAYOUT}): "
              f"minor page faults per 2000 deep calls over 100 caller depths: min {min(counts)}, median {sorted(counts)[50]}, max {max(counts)}")
