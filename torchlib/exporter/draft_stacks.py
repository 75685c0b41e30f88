"""draft_export's per-expression stacks, taken from the innermost frames only.

`torch.export.draft_export` listens to torch's structured log, where every symbolic expression
created while tracing (`expression_created`, torch/fx/experimental/sym_node.py) records the three
user frames and the three framework frames that made it. torch (2.13) takes each by capturing the
whole Python stack, symbolizing it and reading the source line of every frame
(`CapturedTraceback.extract().summary()`), then keeps three frames. A seq2seq model makes about
20,000 expressions: for fsmt, 77 s of draft_export's 93 s went there (profiled, docs/transformers.md).

`innermost_stacks()` puts in their place functions that walk the frames from the innermost and
stop at the three they keep, with the same result (tests/torchlib/test_draft_stacks.py compares
them with torch's on the same frames).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import traceback
from collections.abc import Iterator
from types import FrameType
from typing import Any

import torch
import torch._logging.structured as structured


def _frames(start: FrameType | None) -> Iterator[FrameType]:
    while start is not None:
        yield start
        start = start.f_back


def _summary(frames: list[FrameType]) -> list[traceback.FrameSummary]:
    """Outermost first, as `traceback.extract_stack` lists them."""
    return [traceback.FrameSummary(f.f_code.co_filename, f.f_lineno, f.f_code.co_name) for f in reversed(frames)]


def get_user_stack(num_frames: int) -> list[dict[str, Any]]:
    """torch's `structured.get_user_stack`: the innermost frame outside torch and the
    `num_frames - 1` frames that called it (or the innermost frames where all are torch's)."""
    from torch._guards import TracingContext

    user_tb = TracingContext.extract_stack()
    if user_tb:
        return structured.from_traceback(user_tb[-1 * num_frames:])
    torch_dir = os.path.dirname(inspect.getfile(torch)) + os.path.sep
    frames = list(_frames(sys._getframe(1)))
    first = next((i for i, f in enumerate(frames) if torch_dir not in f.f_code.co_filename), None)
    kept = frames[:num_frames] if first is None else frames[first:first + num_frames]
    return structured.from_traceback(_summary(kept))


def get_framework_stack(num_frames: int = 25, cpp: bool = False) -> list[dict[str, Any]]:
    """torch's `structured.get_framework_stack` for Python frames: the `num_frames` innermost
    frames of .py files that are not among symbolic_shapes' uninteresting files."""
    if cpp:  # C++ frames need torch's capture
        return _TORCH[1](num_frames, cpp)
    from torch.fx.experimental.symbolic_shapes import uninteresting_files

    skip = uninteresting_files()
    kept = []
    for f in _frames(sys._getframe(1)):
        name = f.f_code.co_filename
        if name.endswith(".py") and name not in skip:
            kept.append(f)
            if len(kept) == num_frames:
                break
    return structured.from_traceback(_summary(kept))


_TORCH = (structured.get_user_stack, structured.get_framework_stack)


@contextlib.contextmanager
def innermost_stacks() -> Iterator[None]:
    """Inside the block, torch's structured log takes its stacks with the functions above."""
    structured.get_user_stack, structured.get_framework_stack = get_user_stack, get_framework_stack
    try:
        yield
    finally:
        structured.get_user_stack, structured.get_framework_stack = _TORCH
