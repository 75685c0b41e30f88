"""Where an FX node came from in the user's code: module path and source line."""

from __future__ import annotations

import re
from typing import Any

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_LIBRARY_PARTS = ("/torch/", "/site-packages/", "/dist-packages/", "<frozen")


def module_path(node: Any) -> str:
    """Dotted path of the innermost nn.Module the node was called from ('' for the root)."""
    stack = node.meta.get("nn_module_stack") or {}
    for path, _ in reversed(list(stack.values())):
        if isinstance(path, str) and not path.startswith("_empty"):
            return _clean(path)
    return ""


def module_class(node: Any) -> str:
    stack = node.meta.get("nn_module_stack") or {}
    entries = [v for v in stack.values() if not str(v[0]).startswith("_empty")]
    if not entries:
        return ""
    cls = entries[-1][1]
    return cls if isinstance(cls, str) else getattr(cls, "__qualname__", str(cls))


def _clean(path: str) -> str:
    # torch.export writes L['self'].layers[0].attn style paths in some versions
    path = re.sub(r"L\['self'\]\.?|L__self__\.?", "", path)
    return re.sub(r"\[(\d+)\]", r".\1", path).strip(".")


def source_line(node: Any) -> str:
    """'file.py:12 in forward: y = self.fc(x)' for the user's frame (the innermost frame outside
    torch and site-packages, or the innermost one)."""
    trace = node.meta.get("stack_trace") or ""
    lines = trace.rstrip().splitlines()
    frames: list[tuple[str, str, str, str]] = []
    for i, line in enumerate(lines):
        m = _FRAME.search(line)
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME.search(lines[i + 1]) else ""
            frames.append((m.group(1), m.group(2), m.group(3), code))
    if not frames:
        return ""
    user = [f for f in frames if not any(p in f[0] for p in _LIBRARY_PARTS)]
    file, line, fn, code = (user or frames)[-1]
    return f"{file}:{line} in {fn}" + (f": {code}" if code else "")
