"""The installed torch's version, for the few places where torch changed an op's semantics or
added an op between the versions in the support window (docs/supported_versions.md).

Prefer a probe of torch's behaviour next to the function that depends on it; use these where a
probe is not practical. A condition is written as a version specifier: ">=2.14", "<2.13",
">=2.12,<2.14"."""

from __future__ import annotations

import re

import torch


def _release(version: str) -> tuple[int, ...]:
    """(2, 14, 1) for "2.14.1+cpu", "2.14.1", "2.14.0a0+git..." (pre-releases count as the release)."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    if match is None:
        raise ValueError(f"not a torch version: {version!r}")
    return tuple(int(g or 0) for g in match.groups())


TORCH = _release(torch.__version__)

_OPS = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


def torch_matches(spec: str, version: tuple[int, ...] = TORCH) -> bool:
    """Whether `version` (default: the installed torch) satisfies every comma-separated clause
    of `spec`, e.g. ">=2.12,<2.14". "==2.14" matches every 2.14.x."""
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+){1,2})\s*", clause)
        if match is None:
            raise ValueError(f"not a torch version condition: {clause!r} (write e.g. '>=2.14' or '<2.13')")
        op, bound = match.group(1), tuple(int(p) for p in match.group(2).split("."))
        if not _OPS[op](version[: len(bound)], bound):
            return False
    return True


def torch_has_op(name: str) -> bool:
    """Whether the installed torch has the operator overload "ns::op.overload" ("ns::op", or a
    bare "op" in aten, for the default overload): a probe, for ops torch added or removed within
    the support window (aten::qr and aten::cholesky are gone in 2.14)."""
    namespace, _, rest = name.rpartition("::")
    op_name, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, namespace or "aten"), op_name, None)
    return packet is not None and (overload or "default") in packet.overloads()
