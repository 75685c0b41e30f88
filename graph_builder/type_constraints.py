"""Type-constraint groups (TFloat, TInt, TTensor, ...): the annotations of the functions of the
library, with the set of element types each admits in ALLOWED (for people and tools).

A type checker reads every group as `ir.Value`: functions are checked as they are traced. Eagerly
the same functions get torch tensors, which the evaluator converts at each op, so no separate eager
typing is needed. At run time each group is a TypeVar bound to `Tensor`, what any tensor has.

This module sits above the IR (it names `ir.Value`); graph_builder/types.py, the element types,
sits below it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

from graph_builder.ir import Value
from graph_builder.types import ALL_DTYPES, BOOL, COMPLEX64, COMPLEX128, DOUBLE, FLOAT, FLOAT_TYPES, INT_TYPES, DType


class Tensor(Protocol):
    """What a function may ask of any tensor it is given: `ir.Value` has these, so does every
    eager value."""

    @property
    def dtype(self) -> DType | None: ...

    @property
    def shape(self) -> tuple[Any, ...] | None: ...


if TYPE_CHECKING:
    TFloat: TypeAlias = Value
    TFloatHighPrecision: TypeAlias = Value
    TInt: TypeAlias = Value
    TReal: TypeAlias = Value
    TRealOrBool: TypeAlias = Value
    TComplex: TypeAlias = Value
    TTensor: TypeAlias = Value
    TBool: TypeAlias = Value
else:
    TFloat = TypeVar("TFloat", bound=Tensor)
    TFloatHighPrecision = TypeVar("TFloatHighPrecision", bound=Tensor)
    TInt = TypeVar("TInt", bound=Tensor)
    TReal = TypeVar("TReal", bound=Tensor)
    TRealOrBool = TypeVar("TRealOrBool", bound=Tensor)
    TComplex = TypeVar("TComplex", bound=Tensor)
    TTensor = TypeVar("TTensor", bound=Tensor)
    TBool = TypeVar("TBool", bound=Tensor)

ALLOWED: dict[str, frozenset[DType]] = {
    "TFloat": FLOAT_TYPES,
    "TFloatHighPrecision": frozenset({FLOAT, DOUBLE}),
    "TInt": INT_TYPES,
    "TReal": FLOAT_TYPES | INT_TYPES,
    "TRealOrBool": FLOAT_TYPES | INT_TYPES | {BOOL},
    "TComplex": frozenset({COMPLEX64, COMPLEX128}),
    "TTensor": frozenset(ALL_DTYPES),
    "TBool": frozenset({BOOL}),
}
