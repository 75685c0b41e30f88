"""Errors for people: what went wrong, where in the user's code, and what to try.

`capture_failure` turns an exception raised inside torch.export into one paragraph that comes
before torch's own long report; `quiet_torch` silences torch's internal chatter during capture
(warnings and log lines that say nothing about the user's model).
"""

from __future__ import annotations

import contextlib
import logging
import os
import traceback
import warnings
from collections.abc import Iterator

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the torchlib package
_LIBRARY_PARTS = (os.sep + "torch" + os.sep, "site-packages", "dist-packages", "<frozen", _HERE,
                  os.path.dirname(contextlib.__file__))


def user_frame(exc: BaseException) -> str | None:
    """'file.py:12 in forward: code' for the innermost frame of the traceback (or of its causes)
    that is the user's: outside torch, torchlib, site-packages and the standard library."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = [f for f in traceback.extract_tb(exc.__traceback__)
                  if not any(p in f.filename for p in _LIBRARY_PARTS)]
        if frames:
            f = frames[-1]
            return f"{f.filename}:{f.lineno} in {f.name}" + (f": {f.line.strip()}" if f.line else "")
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return None


def raised_by_user_code(exc: BaseException) -> bool:
    """Whether the exception was raised by the user's own code (its innermost frame is the
    user's: a `raise` in forward), not by torch on the user's behalf."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and not any(p in frames[-1].filename for p in _LIBRARY_PARTS)


# (words in the exception's type or message, what happened, what to try)
_KNOWN = (
    (("GuardOnDataDependent", "data-dependent", "data dependent"),
     "the model branches on (or reads) the value of a tensor, which torch.export cannot trace: "
     "it records shapes, not data",
     "rewrite the branch with tensor ops (torch.where), use torch.cond for a real data-dependent "
     "branch, or compute the decision outside the model and pass it in"),
    (("Constraints violated", "ConstraintViolation", "specialized", "must be specialized"),
     "a dimension marked dynamic cannot be dynamic: the model's code fixes its size",
     "drop that dimension from dynamic_shapes, or mark it Dim.AUTO to let torch decide "
     "(the report below names the dimension and the guard)"),
    (("Unsupported", "not supported", "NotImplementedError"),
     "torch.export met Python or an operation it cannot trace",
     "simplify that line (no Python side effects or unsupported builtins in forward), or "
     "try strict=False / strict=True"),
)


def capture_failure(exc: BaseException) -> str:
    """One paragraph about an exception raised while torch.export captured the model."""
    text = f"{type(exc).__name__} {exc}"
    what = "forward raised an error while torch.export traced it"
    advice = "check that line for the sample inputs given (torch's full report: --debug on the command line, or this exception's __cause__)"
    for words, happened, hint in _KNOWN:
        if any(w in text for w in words):
            what, advice = happened, hint
            break
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    where = user_frame(exc)
    lines = [f"torch.export could not capture the model: {what}."]
    if where:
        lines.append(f"  at {where}")
    lines.append(f"  torch says: {type(exc).__name__}: {first[:300]}")
    lines.append(f"  what to try: {advice}.")
    return "\n".join(lines)


# torch's own messages during capture that say nothing about the user's model
_CHATTER = (
    (UserWarning, r"The tensor attributes .* were assigned during export"),
    (FutureWarning, r".*LeafSpec.*"),
    (UserWarning, r".*is deprecated.*torch\.export.*"),
)


@contextlib.contextmanager
def quiet_torch() -> Iterator[None]:
    """Silence torch's internal warnings and log lines while it captures a model.
    TORCH_LOGS, when set, is the user asking for them: then nothing is silenced."""
    if os.environ.get("TORCH_LOGS"):
        yield
        return
    # A logger at NOTSET takes its level from its nearest ancestor with one, so setting "torch"
    # and the torch loggers that have a level of their own silences them all. Each setLevel
    # clears the cache of every logger in the process: a few calls, not one per torch logger
    # (~250 after an export, which made this context cost ~10 ms).
    loggers = [logging.getLogger("torch")] + [
        lg for name, lg in list(logging.root.manager.loggerDict.items())
        if name.startswith("torch.") and isinstance(lg, logging.Logger) and lg.level != logging.NOTSET]
    levels = [lg.level for lg in loggers]
    with warnings.catch_warnings():
        for category, message in _CHATTER:
            warnings.filterwarnings("ignore", message=message, category=category)
        for lg in loggers:
            lg.setLevel(logging.CRITICAL)  # failures reach the user as exceptions; torch logs them too
        try:
            yield
        finally:
            for lg, level in zip(loggers, levels):
                lg.setLevel(level)
