"""Capture: a model and sample inputs in, one ExportedProgram out.

The strategies torch offers, tried in order until one succeeds:

1. `non-strict`: `torch.export.export(..., strict=False)`, which runs forward in Python;
2. `strict`: `torch.export.export(..., strict=True)`, which traces forward's bytecode with
   TorchDynamo and handles some code non-strict cannot (and the other way round);
3. `draft_export`: `torch.export.draft_export`, which always gives a program, specializing
   what it cannot trace (data-dependent branches take the sample's way); its report of what it
   specialized goes to the export's diagnostics.

When all fail, CaptureError shows the first failure (non-strict's is the one that explains the
model) and one line for each other. A dynamic dim whose sample size is 0 or 1 would be
specialized by torch.export (it treats 0 and 1 as special); capture then runs with torch's
`backed_size_oblivious` so that it stays dynamic, and when that fails the error says to give a
sample of size 2 or more.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable
from typing import Any

import torch

STRATEGIES = ("non-strict", "strict", "draft_export")


class CaptureError(RuntimeError):
    """No capture strategy could export the model; the message starts with the first failure."""


@dataclasses.dataclass
class Captured:
    program: torch.export.ExportedProgram
    strategy: str
    notes: list[str]


def capture(model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any = None,
            size_one: list[str] | None = None) -> Captured:
    """Export with the first strategy that succeeds (see the module docstring). `size_one` lists
    the dynamic dims whose sample size is 0 or 1."""
    attempts: dict[str, Callable[[], torch.export.ExportedProgram]] = {
        "non-strict": lambda: torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes, strict=False),
        "strict": lambda: torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes, strict=True),
        "draft_export": lambda: torch.export.draft_export(model, args, kwargs, dynamic_shapes=dynamic_shapes),
    }
    failures: list[tuple[str, BaseException]] = []
    for strategy in STRATEGIES:
        try:
            if size_one:
                import torch.fx.experimental._config as fx_config

                with fx_config.patch(backed_size_oblivious=True):
                    program = attempts[strategy]()
            else:
                program = attempts[strategy]()
        except Exception as e:  # noqa: BLE001  (torch fails in many ways; every failure is reported)
            failures.append((strategy, e))
            continue
        notes = [f"captured with {strategy} after: " + "; ".join(f"{s} failed ({_first_line(e)})" for s, e in failures)] if failures else []
        notes.extend(_draft_report(program) if strategy == "draft_export" else [])
        return Captured(program, strategy, notes)
    raise CaptureError(_message(failures, size_one or [])) from failures[0][1]


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def _message(failures: list[tuple[str, BaseException]], size_one: list[str]) -> str:
    strategy, first = failures[0]
    lines = [f"torch.export could not capture the model. First failure ({strategy}):", ""]
    lines.extend("    " + line for line in "".join(traceback.format_exception_only(type(first), first)).rstrip().splitlines())
    lines.append("")
    lines.extend(f"Then {s} failed too: {_first_line(e)}" for s, e in failures[1:])
    if size_one:
        lines.append(
            "These dims are marked dynamic but their sample size is 0 or 1, which torch.export "
            f"specializes: {', '.join(size_one)}. Give a sample of size 2 or more on those dims."
        )
    return "\n".join(lines)


def _draft_report(program: torch.export.ExportedProgram) -> list[str]:
    report = getattr(program, "_report", None)
    failures = getattr(report, "failures", None) or []
    return [f"draft_export: {str(f).strip().splitlines()[0]}" for f in failures]
