"""Capture: a model and sample inputs in, one ExportedProgram out.

The strategies torch offers, tried in order until one succeeds:

1. `non-strict`: `torch.export.export(..., strict=False)`, which runs forward in Python;
2. `strict`: `torch.export.export(..., strict=True)`, which traces forward's bytecode with
   TorchDynamo and handles some code non-strict cannot (and the other way round);
3. `draft_export`: `torch.export.draft_export`, which always gives a program, specializing
   what it cannot trace (data-dependent branches take the sample's way); its report of what it
   specialized goes to the export's diagnostics.

Not every failure goes down the whole chain (docs/exporter_front_end.md): when non-strict fails
only because dims marked dynamic cannot take every size, torch's suggested fixes are applied to
`dynamic_shapes` and non-strict runs again; a data-dependent failure (or a constraint still
violated) skips strict, which traces the same shapes and data; forward's own error ends capture
at once. While capture runs, the registry's capture kernels stand in for torch's decompositions
that would fix a dynamic size on fake tensors (`capture_kernels`). torchvision's detection code that
branches on data-dependent sizes is replaced by traceable stand-ins (`torchvision_capture.py`).

When all fail, CaptureError shows the first failure (non-strict's is the one that explains the
model) and one line for each other. A dynamic dim whose sample size is 0 or 1 would be
specialized by torch.export (it treats 0 and 1 as special); capture then runs with torch's
`backed_size_oblivious` so that it stays dynamic, and when that fails the error says to give a
sample of size 2 or more.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import itertools
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch._subclasses.fake_tensor import FakeTensor
from torch.export import Dim
from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
from torch.utils._sympy.numbers import int_oo

from torchlib.exporter.draft_stacks import innermost_stacks
from torchlib.exporter.dynamic_shapes import RequestedDim
from torchlib.exporter.explain import capture_failure, raised_by_user_code
from torchlib.exporter.torchvision_capture import patched as torchvision_patched
from torchlib.registry import CAPTURE_KERNELS

STRATEGIES = ("non-strict", "strict", "draft_export")


class CaptureError(RuntimeError):
    """No capture strategy could export the model; the message starts with the first failure."""


@dataclasses.dataclass
class Captured:
    program: torch.export.ExportedProgram
    strategy: str
    notes: list[str]
    refinements: list[str] = dataclasses.field(default_factory=list)  # torch's suggested fixes applied


_MAX_REFINEMENTS = 2  # a refined spec can fail on another dim's constraint once more


def capture(model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any = None,
            size_one: list[RequestedDim] | None = None) -> Captured:
    """Export with the first strategy that succeeds (see the module docstring). `size_one` lists
    the dynamic dims whose sample size is 0 or 1."""
    attempts: dict[str, tuple[Callable[..., torch.export.ExportedProgram], dict[str, Any]]] = {
        "non-strict": (torch.export.export, {"strict": False}),
        "strict": (torch.export.export, {"strict": True}),
        "draft_export": (_draft_export, {}),
    }
    with EXPORT_LOCK, _state_kept(model):
        return _capture(model, args, kwargs, dynamic_shapes, size_one, attempts)


def _draft_export(*args: Any, **kwargs: Any) -> torch.export.ExportedProgram:
    """torch.export.draft_export, its log's stacks taken from the innermost frames (draft_stacks.py)."""
    with innermost_stacks():
        return torch.export.draft_export(*args, **kwargs)


# torch.export swaps a module's parameters and buffers for fake tensors while it traces, and
# puts back what it finds afterwards: two captures of one module at once put back each other's
# fakes, and the user's weights are gone. One export at a time (translation shares process-wide
# state too: the builder pauses the garbage collector); `export` holds this lock throughout.
EXPORT_LOCK = threading.RLock()


@contextlib.contextmanager
def keywords_as_parameters(model: Any, kwargs: dict) -> Iterator[None]:
    """Inside the block, the sample's keywords that forward takes through `**kwargs`
    (transformers 5 takes `past_key_values=` so) are keyword parameters of forward's signature,
    so that `dynamic_shapes` keyed by their names reaches them: torch.export (2.13) lists such
    arguments twice when it matches dynamic_shapes to the inputs (once under the `**kwargs`
    name, once by their own), and fails with "Must provide a tree_name when there might be a
    mismatch". forward itself is called as before."""
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError, AttributeError):
        signature = None
    parameters = list(signature.parameters.values()) if signature is not None else []
    extra = [k for k in kwargs if signature is not None and k not in signature.parameters]
    if not extra or not any(p.kind is p.VAR_KEYWORD for p in parameters) or "forward" in vars(model):
        yield
        return
    original = model.forward

    def forward(*args: Any, **kw: Any) -> Any:
        return original(*args, **kw)

    keyword = [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None) for k in extra]
    forward.__signature__ = signature.replace(  # type: ignore[attr-defined, union-attr]
        parameters=[p for p in parameters if p.kind is not p.VAR_KEYWORD] + keyword)
    model.forward = forward
    try:
        yield
    finally:
        del model.forward


@contextlib.contextmanager
def _state_kept(model: Any) -> Iterator[None]:
    """Puts back each parameter and buffer of `model` (the very objects it had) that capture
    left replaced, whatever happened: the user's module never comes out changed."""
    modules = list(model.modules()) if isinstance(model, torch.nn.Module) else []
    saved: list[tuple[dict[str, Any], str, torch.Tensor | None]] = [
        (slots, name, t) for m in modules for slots in (m._parameters, m._buffers) for name, t in slots.items()]
    try:
        yield
    finally:
        for slots, name, t in saved:
            if slots.get(name) is not t:
                slots[name] = t


def _capture(model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any,
             size_one: list[RequestedDim] | None, attempts: dict[str, Any]) -> Captured:
    failures: list[tuple[str, BaseException]] = []
    refinements: list[str] = []  # torch's suggested fixes applied to dynamic_shapes
    strategies = list(STRATEGIES)
    while strategies:
        strategy = strategies[0]
        function, options = attempts[strategy]
        try:
            with capture_kernels(), torchvision_patched():
                if size_one:
                    import torch.fx.experimental._config as fx_config

                    # patch() is installed when the module loads (torch's install_config_module)
                    with fx_config.patch(backed_size_oblivious=True):  # type: ignore[attr-defined]
                        program = function(model, args, kwargs, dynamic_shapes=dynamic_shapes, **options)
                else:
                    program = function(model, args, kwargs, dynamic_shapes=dynamic_shapes, **options)
        except Exception as e:  # noqa: BLE001  (torch fails in many ways; every failure is reported)
            refined = _refine(e, dynamic_shapes) if strategy == "non-strict" and len(refinements) < _MAX_REFINEMENTS else None
            if refined is not None:  # a dim torch cannot keep as asked: its fix, and non-strict again
                dynamic_shapes, fixes = refined
                refinements.append(fixes)
                continue
            failures.append((strategy, e))
            strategies.pop(0)
            if strategy == "non-strict" and raised_by_user_code(e):
                break  # forward's own error for this sample: every strategy runs forward and meets it
            if strategy == "non-strict" and "strict" in strategies and _tracing_limit(e):
                strategies.remove("strict")  # TorchDynamo traces the same shapes and data: it fails alike
            continue
        if size_one:
            _check_size_one(program, size_one, strategy)
        notes = [f"captured with {strategy} after: " + "; ".join(f"{s} failed ({_first_line(e)})" for s, e in failures)] if failures else []
        notes.extend(f"dynamic_shapes refined: {fixes}" for fixes in refinements)
        if strategy == "draft_export" and failures:
            warning = ("draft_export made the program follow the sample's path where torch.export could not trace "
                       "the model. Where it recorded what it assumed of the data (a branch on a value, as run-time "
                       "assertions), the ONNX model checks it and stops on inputs that take another path; anything it "
                       "assumed without recording gives wrong results for them. Why the other strategies failed:\n" + capture_failure(failures[0][1]))
            notes.insert(0, "WARNING: " + warning)
            warnings.warn(warning, UserWarning, stacklevel=caller_level())
        notes.extend(_draft_report(program) if strategy == "draft_export" else [])
        return Captured(program, strategy, notes, refinements)
    raise CaptureError(_message(failures, size_one or [])) from failures[0][1]


@contextlib.contextmanager
def capture_kernels() -> Iterator[None]:
    """Install the registry's capture kernels (`torchlib.registry.capture_kernel`) as the
    CompositeImplicitAutograd kernels of their ops while torch.export captures: on fake tensors
    they give the op's outputs without torch's decomposition, which would fix a dynamic size;
    on real tensors, or where a kernel returns NotImplemented, torch's own kernel runs."""
    from torch._C import DispatchKey

    key = DispatchKey.CompositeImplicitAutograd
    installed = []
    for name, kernel in CAPTURE_KERNELS.items():
        namespace, _, rest = name.partition("::")
        base, _, overload = rest.partition(".")
        target = getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")
        original = target.py_kernels.get(key)
        if original is None:
            continue  # torch's kernel is C++ only: nothing in Python to stand in for

        def kernel_or_torch(*args: Any, _kernel: Any = kernel, _original: Any = original, **kwargs: Any) -> Any:
            if any(isinstance(t, FakeTensor) for t in pytree.tree_leaves((args, kwargs))):
                result = _kernel(*args, **kwargs)
                if result is not NotImplemented:
                    return result
            return _original(*args, **kwargs)

        installed.append((target, original))
        target.py_kernels[key] = kernel_or_torch
        target._dispatch_cache.clear()
    try:
        yield
    finally:
        for target, original in installed:
            target.py_kernels[key] = original
            target._dispatch_cache.clear()


def _refine(error: BaseException, dynamic_shapes: Any) -> tuple[Any, str] | None:
    """(dynamic_shapes with torch's suggested fixes applied, the fixes) when non-strict capture
    failed only because the dims marked dynamic cannot take every size (a range or a constant
    torch suggests), else None. A dim marked Dim.DYNAMIC (or by a bare name) that the model's code
    fixes gets no suggestion from torch: it becomes Dim.AUTO, which lets torch keep it dynamic
    where it can."""
    text = str(error)
    if dynamic_shapes is None or "Constraints violated" not in text:
        return None
    if "Suggested fixes:" in text:
        lines = text.split("Suggested fixes:", 1)[1].strip("\n").splitlines()
        fixes = [line.strip() for line in itertools.takewhile(lambda line: line.strip(), lines)]
        try:
            refined = refine_dynamic_shapes_from_suggested_fixes("Suggested fixes:\n" + "\n".join(fixes), dynamic_shapes)
        except Exception:  # noqa: BLE001  (a suggestion torch cannot apply itself: the chain goes on)
            return None
        return refined, "torch.export's suggested fixes " + "; ".join(fixes)
    auto = _dynamic_to_auto(dynamic_shapes)
    if auto == dynamic_shapes:
        return None
    return auto, "dims marked Dim.DYNAMIC (or by a name) are left to torch (Dim.AUTO): the model's code fixes some"


def _dynamic_to_auto(spec: Any) -> Any:
    if spec is Dim.DYNAMIC:
        return Dim.AUTO
    if isinstance(spec, dict):
        return {k: _dynamic_to_auto(v) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return type(spec)(_dynamic_to_auto(v) for v in spec)
    return spec


def _tracing_limit(error: BaseException) -> bool:
    """Whether capture failed on what torch.export's tracing cannot do with these inputs, in any
    mode: a branch on (or a size from) a tensor's data, or a dim marked dynamic that cannot be.
    Strict capture traces the same shapes and data and fails the same way; draft_export can
    specialise it. Other failures (Python that non-strict cannot run) may pass in strict."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, GuardOnDataDependentSymNode):
            return True
        text = str(error)
        if any(words in text for words in ("data-dependent", "data dependent", "Constraints violated")):
            return True
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return False


def caller_level() -> int:
    """The `stacklevel` of the first frame outside torchlib: the user's call to export."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def _check_size_one(program: torch.export.ExportedProgram, size_one: list[RequestedDim], strategy: str) -> None:
    """Capture keeps a dim dynamic at sample size 1 by assuming the code does not treat size 1
    specially; when it does, torch bounds the dim's range (or fixes it), and the program is
    wrong for other sizes."""
    placeholders = {n.name: n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder"}
    vals = [placeholders.get(s.arg.name) for s in program.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    tensors = [v for v in vals if isinstance(v, torch.Tensor)]
    for dim in size_one:
        if dim.tensor_index >= len(tensors):
            continue
        size = tensors[dim.tensor_index].shape[dim.axis]
        problem = ""
        if isinstance(size, int):
            problem = f"it became the constant {size}"
        else:
            bounds = program.range_constraints.get(size.node.expr)
            upper = getattr(bounds, "upper", None)
            if upper is not None and upper != int_oo and (dim.max is None or int(upper) < dim.max):
                problem = f"the model's code bounds it to [{bounds.lower}, {upper}]"
        if problem:
            raise CaptureError(
                f"{dim.where} is marked dynamic, but with a sample of size 0 or 1 {problem} ({strategy} capture): "
                "the model treats that size specially. Give a sample of size 2 or more on this dim."
            )


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def _message(failures: list[tuple[str, BaseException]], size_one: list[RequestedDim]) -> str:
    """One paragraph on the first failure (what, the user's line, what to try), then one line for
    each other strategy; torch's full report is the exception's __cause__."""
    strategy, first = failures[0]
    lines = [capture_failure(first).replace("could not capture the model:", f"could not capture the model ({strategy}):", 1)]
    lines.extend(f"  then {s} failed too: {_first_line(e)[:200]}" for s, e in failures[1:])
    if len(failures) == 1 and raised_by_user_code(first):
        lines.append("  strict and draft_export were not tried: forward itself raised this error for the sample, as it would in them")
    if size_one:
        lines.append(
            "  These dims are marked dynamic but their sample size is 0 or 1, which torch.export "
            f"specializes: {', '.join(map(str, size_one))}. Give a sample of size 2 or more on those dims."
        )
    return "\n".join(lines)


def _draft_report(program: torch.export.ExportedProgram) -> list[str]:
    report = getattr(program, "_report", None)
    failures = getattr(report, "failures", None) or []
    return [f"draft_export: {str(f).strip().splitlines()[0]}" for f in failures]
