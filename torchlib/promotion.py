"""torch's type promotion, declared at the op instead of hand-written casts.

    @elementwise("self", "other")                      # DEFAULT: int + float -> float
    @elementwise("self", kind=INT_TO_FLOAT)            # sqrt(int) -> float
    @elementwise("self", "other", kind=ALWAYS_BOOL)    # eq: compare in the common type, bool out

Before the body runs, the named tensor arguments are cast to the computation dtype, decided by
torch's rules from their dtypes and ranks (dimensioned tensors win over zero-dim tensors, which
win over Python scalars of the same category). Python scalars stay Python scalars; the `op`
namespace gives them the dtype of the tensor they meet.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.types import DType

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT = "default"
INT_TO_FLOAT = "int_to_float"
ALWAYS_BOOL = "always_bool"
BOOL_TO_LONG = "bool_to_long"

DEFAULT_FLOAT = types.FLOAT


def promote_types(a: DType, b: DType) -> DType:
    """torch.promote_types on DTypes."""
    if a is b:
        return a
    import torch

    return types.from_torch(torch.promote_types(a.to_torch(), b.to_torch()))


def _scalar_dtype(x: Any) -> DType:
    if isinstance(x, bool):
        return types.BOOL
    if isinstance(x, int):
        return types.INT64
    if isinstance(x, complex):
        return types.COMPLEX64
    return DEFAULT_FLOAT


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    """torch's combine_categories: the higher-priority group wins unless the lower one is of a
    higher category (bool < int < float < complex)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        # a float tensor with a complex scalar: complex of the tensor's precision
        return types.COMPLEX128 if higher is types.DOUBLE else types.COMPLEX64 if higher.is_floating else lower
    if higher.is_floating:
        return higher
    if higher is types.BOOL or lower.is_floating:
        return promote_types(higher, lower)
    return higher


def result_type(*args: Any) -> DType:
    """The dtype torch gives an elementwise op on these arguments (Values or Python scalars)."""
    dim: DType | None = None
    zero: DType | None = None
    wrapped: DType | None = None
    for x in args:
        if x is None:
            continue
        if isinstance(x, Value):
            if x.dtype is None:
                raise TypeError(f"Value {x.name!r} has no dtype")
            if x.shape is not None and len(x.shape) == 0:
                zero = x.dtype if zero is None else promote_types(zero, x.dtype)
            else:
                dim = x.dtype if dim is None else promote_types(dim, x.dtype)
        elif isinstance(x, (bool, int, float, complex)):
            d = _scalar_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
        elif isinstance(x, DType):
            dim = x if dim is None else promote_types(dim, x)
        else:
            raise TypeError(f"cannot take part in type promotion: {x!r}")
    result = _combine(dim, _combine(zero, wrapped))
    if result is None:
        raise TypeError("type promotion needs at least one argument")
    return result


def computation_dtype(dtype: DType, kind: str) -> DType:
    if kind == INT_TO_FLOAT and not (dtype.is_floating or dtype.is_complex):
        return DEFAULT_FLOAT
    if kind == BOOL_TO_LONG and dtype is types.BOOL:
        return types.INT64
    return dtype


def cast_to(x: Any, dtype: DType) -> Any:
    """Cast a Value to dtype (no node when it already is); Python scalars are left as they are."""
    if isinstance(x, Value) and x.dtype is not dtype:
        if dtype is types.FLOAT8E8M0:
            raise TypeError(
                f"a cast of {x.dtype} to torch.float8_e8m0fnu is not exported: torch rounds to a power of two "
                "with its own rules (ties up on the mantissa, the sign dropped, zero to 2**-127) that ONNX's Cast "
                "does not reproduce; compute the scale in the model's float type, or cast outside the model")
        packed = next((d for d in (x.dtype, dtype) if d is not None and d.per_torch_element != 1), None)
        if packed is not None:
            raise TypeError(
                f"a cast of {x.dtype} to {dtype} is not exported: torch converts no tensor to or from "
                f"torch.{packed.torch_name} (its copy kernel refuses the dtype; it only views it as uint8), and "
                f"its shape counts {packed.per_torch_element} {packed.name} values an element")
        return op.Cast(x, to=dtype.onnx)
    return x


def elementwise(*params: str, kind: str = DEFAULT) -> Callable[[F], F]:
    """Cast the named parameters to torch's computation dtype before the body runs."""

    def decorator(fn: F) -> F:
        signature = inspect.signature(fn)
        for p in params:
            if p not in signature.parameters:
                raise TypeError(f"{fn.__name__} has no parameter {p!r} to promote")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            values = [bound.arguments.get(p) for p in params]
            dtype = computation_dtype(result_type(*values), kind)
            for p in params:
                if p in bound.arguments:
                    bound.arguments[p] = cast_to(bound.arguments[p], dtype)
            return fn(*bound.args, **bound.kwargs)

        wrapper.promotion = (params, kind)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorator


def promote_all(values: Sequence[Any], kind: str = DEFAULT) -> list[Any]:
    """The same promotion for a list of tensors (cat, stack, where's branches, ...)."""
    dtype = computation_dtype(result_type(*values), kind)
    return [cast_to(v, dtype) for v in values]
