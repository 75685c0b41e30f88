"""torchlib/exporter/stack_room.py: a plain call, made from a frame with room below it."""

import sys
import warnings

import pytest
import torch

import torchlib
from torchlib.exporter import stack_room
from torchlib.exporter.stack_room import with_stack_room


def test_passes_arguments_and_returns_the_result():
    assert with_stack_room(lambda a, b, *, c: (a, b, c), 1, 2, c=3) == (1, 2, 3)


def test_exceptions_propagate():
    def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        with_stack_room(boom)


@pytest.mark.skipif(not stack_room.KNOWN_LAYOUT, reason="CPython 3.11-3.13's frame data stack")
def test_the_calling_frame_declares_a_large_stack():
    assert stack_room._call.__code__.co_stacksize >= 64 * 1024


def test_deep_recursion_inside_still_works():
    def depth(n: int) -> int:
        return 0 if n == 0 else 1 + depth(n - 1)

    assert with_stack_room(depth, sys.getrecursionlimit() // 2) == sys.getrecursionlimit() // 2


def test_export_warnings_point_at_the_users_line():
    """export runs through with_stack_room; a capture warning still names the caller's line."""

    class Branchy(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x + 1
            return x - 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torchlib.export(Branchy(), (torch.ones(3),))
    draft = [w for w in caught if "draft_export" in str(w.message)]
    assert draft and draft[0].filename == __file__
