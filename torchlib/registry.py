"""The registry: ATen overload name -> the function that implements it in ONNX.

    @aten_op("aten::add.Tensor", "aten::add.Scalar")
    @elementwise("self", "other")
    def aten_add(self: TReal, other: TReal, alpha: float = 1.0) -> TReal:
        \"\"\"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\"\"\"
        ...

A registered function runs in two ways with the same body. Inside `with builder:` its op calls
become nodes. Called directly with torch tensors (or numpy arrays), it runs eagerly: the
arguments become eager Values, every op runs in onnxruntime, and the results come back as
torch tensors. Either way the function sees Values with `.dtype` (a graph_builder DType) and
`.shape`, and torch dtype arguments arrive as DTypes.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from graph_builder import types
from graph_builder.evaluator import EAGER, current_evaluator
from graph_builder.ir import Value, complex_from_real_view, real_view
from graph_builder.opset import as_array, numpy_to_torch
from torchlib.torch_version import torch_has_op

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder

F = TypeVar("F", bound=Callable[..., Any])


class Body(Protocol):
    """What a higher-order op's function (torchlib/ops/control_flow.py) receives for a branch or
    a body: the contract between the library and whoever translates the program. The exporter
    passes its FX sub-GraphModules (torchlib/exporter/subgraph.py) this way, so the library never
    imports the exporter."""

    name: str

    def input_like(self, builder: GraphBuilder, index: int) -> Value:
        """A formal input of `builder` (a Loop or Scan body) typed like the body's input `index`."""
        ...

    def inline(self, *args: Any, autocast: bool = False) -> list[Any]:
        """Translate the body into the graph being built, its inputs bound to `args`; returns
        its outputs, flattened."""
        ...


@dataclasses.dataclass(frozen=True)
class OverloadFunction:
    """One registration: the ATen name, the function, and whether it is the complex variant."""

    name: str
    function: Callable[..., Any]
    complex: bool = False

    @property
    def schema(self) -> str:
        return (inspect.getdoc(self.function) or "").split("\n", 1)[0]


def _qualify(name: str) -> str:
    """'aten::add.default' and 'aten::add' are the same overload; store without '.default'."""
    if "::" not in name:
        name = "aten::" + name
    return name[: -len(".default")] if name.endswith(".default") else name


class Registry:
    def __init__(self) -> None:
        self._entries: dict[str, list[OverloadFunction]] = {}
        # functions registered with if_torch_has=True whose op the installed torch does not have
        self.not_in_torch: list[OverloadFunction] = []

    def register(self, name: str, function: Callable[..., Any], complex: bool = False) -> None:
        name = _qualify(name)
        entries = self._entries.setdefault(name, [])
        for e in entries:
            if e.complex == complex:
                raise ValueError(f"{name} (complex={complex}) is registered twice: {e.function.__qualname__} and {function.__qualname__}")
        entries.append(OverloadFunction(name, function, complex))

    def lookup(self, target: Any, complex: bool = False) -> OverloadFunction | None:
        """By name ('aten::add.Tensor', 'aten::add' for the default overload) or by a torch
        OpOverload / Python callable from an FX graph. With complex=True the complex variant is
        preferred and required when the op has one."""
        entries = self._entries.get(qualified_name(target))
        if not entries:
            return None
        real = next((e for e in entries if not e.complex), None)
        if complex:
            return next((e for e in entries if e.complex), real)
        return real

    def __contains__(self, target: Any) -> bool:
        return qualified_name(target) in self._entries

    def extended(self, functions: dict[Any, Callable[..., Any]]) -> Registry:
        """A copy in which `functions` ({torch op or "ns::op.overload": function}) implement
        their ops, replacing this registry's function for an op it has."""
        copy = Registry()
        copy._entries = {name: list(entries) for name, entries in self._entries.items()}
        copy.not_in_torch = list(self.not_in_torch)
        for target, function in functions.items():
            name = qualified_name(target)
            copy._entries[name] = [OverloadFunction(name, function)]
        return copy

    def names(self) -> list[str]:
        return sorted(self._entries)

    def items(self) -> Iterable[OverloadFunction]:
        for name in sorted(self._entries):
            yield from self._entries[name]


def qualified_name(target: Any) -> str:
    if isinstance(target, str):
        return _qualify(target)
    schema = getattr(target, "_schema", None)
    if schema is not None:  # torch._ops.OpOverload
        overload = schema.overload_name
        return _qualify(schema.name + (f".{overload}" if overload else ""))
    if getattr(target, "namespace", None) == "higher_order":  # torch._ops.HigherOrderOperator
        return f"higher_order::{target.name()}"
    module = getattr(target, "__module__", "") or ""
    name = getattr(target, "__name__", str(target))
    if module in ("_operator", "operator"):
        return f"_operator::{name}"
    if module.startswith("math"):
        return f"math::{name}"
    return f"{module}::{name}"


REGISTRY = Registry()

# ATen name -> what the math leaves free in the op's outputs, and which outputs (None: all of
# them; see aten_op's `not_unique` and `free_outputs`)
NOT_UNIQUE: dict[str, tuple[str, tuple[int, ...] | None]] = {}

# ATen name -> a torch function giving the op's outputs on torch.export's fake tensors during
# capture (see `capture_kernel`)
CAPTURE_KERNELS: dict[str, Callable[..., Any]] = {}


def capture_kernel(*names: str) -> Callable[[F], F]:
    """Register a function that computes an op's outputs (shapes, dtypes, strides) on the fake
    tensors of torch.export's capture, used there in place of torch's CompositeImplicitAutograd
    kernel for an op whose function translates it whole but whose torch decomposition fixes a
    dynamic size (a Python loop over an RNN's sequence). It returns NotImplemented where it does
    not apply; torch's kernel runs then. The exporter installs these only while it captures."""

    def decorator(fn: F) -> F:
        for name in names:
            CAPTURE_KERNELS[_qualify(name)] = fn
        return fn

    return decorator


def _to_eager(x: Any, kinds: set[str]) -> Any:
    """torch tensors and numpy arrays -> eager Values (noting which kinds were seen in `kinds`);
    torch dtypes -> DTypes."""
    module = type(x).__module__
    if module == "torch":
        if hasattr(x, "detach"):
            kinds.add("torch")
            array = as_array(x)
            if array.dtype.kind == "c":  # a complex tensor is its real view, marked (Value.is_complex)
                array = real_view(array)
                return Value("", types.from_numpy(array.dtype), array.shape, const_value=array).as_complex()
            return Value("", types.from_numpy(array.dtype), array.shape, const_value=array)
        if x.__class__.__name__ == "dtype":
            return types.from_torch(x)
        return x
    if isinstance(x, np.ndarray):
        kinds.add("numpy")
        return Value("", types.from_numpy(x.dtype), x.shape, const_value=x)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_eager(v, kinds) for v in x)
    return x


def _from_eager(x: Any, to_torch: bool) -> Any:
    if isinstance(x, Value):
        array = complex_from_real_view(x.numpy()) if x.is_complex else x.numpy()
        return numpy_to_torch(array) if to_torch else array
    if isinstance(x, (list, tuple)):
        return type(x)(_from_eager(v, to_torch) for v in x)
    return x


_eager_depth = threading.local()


def _dtype_arg(x: Any) -> Any:
    if type(x).__module__ == "torch" and x.__class__.__name__ == "dtype":
        return types.from_torch(x)
    return x


def aten_op(*names: str, complex: bool = False, not_unique: str = "", free_outputs: tuple[int, ...] | None = None,
            registry: Registry = REGISTRY, if_torch_has: bool = False) -> Callable[[F], F]:
    """Register a function under ATen overload names. The returned function runs eagerly when
    called outside a graph (torch in, torch out) and traces inside `with builder:`.

    not_unique: for an op whose outputs the math does not define uniquely (eigenvectors up to a
    phase, the order of equal scores), what is free; recorded in NOT_UNIQUE, where the exporter's
    self-check reads why an output that depends on the op may differ from torch's and still be
    right. free_outputs: the positions of the outputs that are free (eigh's eigenvectors, not
    its eigenvalues, which are unique and sorted); None: every output.
    if_torch_has: register only the names the installed torch has an op for, for ops torch added
    or removed within the support window (docs/supported_versions.md): no graph can contain an
    op torch lacks, and `codegen check` would report its name as unknown."""

    def decorator(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if current_evaluator() is not EAGER:
                if not complex:
                    _no_complex(names, args, kwargs)
                return fn(*(_dtype_arg(a) for a in args), **{k: _dtype_arg(v) for k, v in kwargs.items()})
            kinds: set[str] = set()
            args = tuple(_to_eager(a, kinds) for a in args)
            kwargs = {k: _to_eager(v, kinds) for k, v in kwargs.items()}
            if not complex:
                _no_complex(names, args, kwargs)
            depth = getattr(_eager_depth, "value", 0)
            if depth:  # called from another function: Values stay Values
                return fn(*args, **kwargs)
            _eager_depth.value = depth + 1
            try:
                result = fn(*args, **kwargs)
            finally:
                _eager_depth.value = depth
            # torch in (or no tensor at all), torch out; numpy in, numpy out
            return _from_eager(result, to_torch="numpy" not in kinds or "torch" in kinds)

        wrapper.aten_names = tuple(_qualify(n) for n in names)  # type: ignore[attr-defined]
        for name in names:
            if not if_torch_has or torch_has_op(_qualify(name)):
                registry.register(name, wrapper, complex=complex)
            else:
                registry.not_in_torch.append(OverloadFunction(_qualify(name), wrapper, complex))
            if not_unique:
                NOT_UNIQUE[_qualify(name)] = (not_unique, free_outputs)
        return wrapper  # type: ignore[return-value]

    return decorator


def _no_complex(names: tuple[str, ...], args: tuple, kwargs: dict) -> None:
    """A function registered for real tensors computes nonsense on the real view of a complex
    tensor: refuse it (the complex variant, registered with complex=True, is the one to call)."""
    for x in (*args, *kwargs.values()):
        if isinstance(x, (list, tuple)):
            if any(isinstance(v, Value) and v.complex_dtype is not None for v in x):
                break
        elif isinstance(x, Value) and x.complex_dtype is not None:
            break
    else:
        return
    raise TypeError(
        f"{names[0] if names else 'this function'} has no complex variant: it got a complex tensor. "
        "Register one with @aten_op(..., complex=True) (see docs/complex.md)"
    )
