"""Shape values: the integer tensors that models compute from shapes (Shape -> Gather -> Concat
-> Reshape) are carried as Python ints and lists at run time (SymInts under torch.export), so
that dynamic dims stay symbolic and torch.export never reads a tensor's data.

At import time the converter marks an ONNX value as a shape value when it is the output of Shape,
or of one of the ops below whose inputs are all shape values or small integer constants. A
converter that takes an integer list (Reshape's shape, Expand's, Slice's starts, ...) gets the
list itself (see `_common.static_input`); any other consumer gets the list as an int64 tensor
(`as_tensor`). Each rule computes exactly what the ONNX op computes on those integers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

ShapeValue = Any  # an int / SymInt (rank 0) or a list of them (rank 1)


def as_tensor(value: ShapeValue) -> torch.Tensor:
    return torch.tensor(value, dtype=torch.int64)


def shape_of(x: torch.Tensor, start: int, end: int | None) -> list[Any]:
    return list(x.shape)[start:end]


def gather(data: Sequence[Any], index: int | tuple[int, ...], scalar: bool) -> ShapeValue:
    n = len(data)
    if scalar:
        i = index if isinstance(index, int) else index[0]
        return data[i + n if i < 0 else i]
    return [data[i + n if i < 0 else i] for i in index]  # type: ignore[union-attr]


def concat(*parts: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for p in parts:
        out.extend(p)
    return out


def unsqueeze(v: Any) -> list[Any]:
    return [v]


def squeeze(v: Sequence[Any]) -> Any:
    return v[0]


def slice_(data: Sequence[Any], start: int, end: int, step: int) -> list[Any]:
    n = len(data)
    start = max(min(start + n if start < 0 else start, n), 0) if step > 0 else max(min(start + n if start < 0 else start, n - 1), -1)
    end = max(min(end + n if end < 0 else end, n), 0) if step > 0 else max(min(end + n if end < 0 else end, n - 1), -1)
    if step < 0:
        return [data[i] for i in range(start, end, step)]
    return list(data[start:end:step])


def _trunc_div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a // b  # shape arithmetic: non-negative dims


def _where(c: Any, a: Any, b: Any) -> Any:
    return a if c else b


ARITH: dict[str, Callable[..., Any]] = {
    "Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": _trunc_div, "Equal": operator.eq,
    "Less": operator.lt, "Greater": operator.gt, "LessOrEqual": operator.le, "GreaterOrEqual": operator.ge,
    "And": lambda a, b: bool(a) and bool(b), "Or": lambda a, b: bool(a) or bool(b), "Not": operator.not_,
    "Max": torch.sym_max, "Min": torch.sym_min, "Where": _where, "Mod": operator.mod,
}  # fmt: skip


def arith(op: str, *values: ShapeValue) -> ShapeValue:
    """An elementwise op on ints / lists of ints, with ONNX broadcasting of rank 0 and length 1."""
    fn = ARITH[op]
    lengths = {len(v) for v in values if isinstance(v, list)}
    if not lengths:
        return fn(*values)
    n = max(lengths)
    columns = [(v * n if len(v) == 1 else v) if isinstance(v, list) else [v] * n for v in values]
    return [fn(*row) for row in zip(*columns)]


def const_value(array: np.ndarray) -> ShapeValue:
    cast = bool if array.dtype.kind == "b" else int
    return cast(array.reshape(())) if array.ndim == 0 else [cast(v) for v in array.reshape(-1)]
