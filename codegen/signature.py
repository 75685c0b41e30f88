"""An ATen schema as a typed Python signature: the rules `aten` stubs are written with and `check`
compares hand-written functions against.

Names. Parameter names, order and the keyword-only marker `*` are the schema's. A name that is
a Python keyword gets a trailing underscore: `from` -> `from_`, `lambda` -> `lambda_` (hard
keywords only, `keyword.iskeyword`; soft keywords such as `match` and `type` are valid names).

Types (annotation sources; `T?` is `T | None`, a list `T[]`/`T[N]` is `Sequence[T]`):

    Tensor                    TTensor                 (graph_builder.type_constraints)
    Tensor?                   TTensor | None
    Tensor[]                  Sequence[TTensor]
    Tensor?[]                 Sequence[TTensor | None]
    int, SymInt, DeviceIndex  int                     (a SymInt may hold an INT64 Value when
    int[], SymInt[], int[N]   Sequence[int]            shapes are dynamic)
    float                     float
    Scalar                    float                   (ints and bools are accepted: Python's
                                                       numeric tower)
    bool, SymBool             bool
    str, Dimname              str
    ScalarType                DType                   (ScalarType? -> DType | None)
    Layout, Device, MemoryFormat, Generator, Storage, Stream, QScheme
                              Any                     (trace-time only: the torch object as
                                                       given, never turned into ONNX)

Defaults (the Python value; the generated source in parentheses):

    None, True, False, ints      themselves
    float                        a float: `float eps=1` -> 1.0, `inf` -> math.inf
    Scalar                       as written: `Scalar alpha=1` -> 1, `Scalar beta=1.0` -> 1.0
    str                          the string: `str reduce="mean"` -> "mean"
    int[N] / SymInt[N] = k       N copies as a tuple: `int[2] stride=1` -> (1, 1)
    lists                        tuples: `int[1] dim=[]` -> (), `[-2,-1]` -> (-2, -1)
    int reduction=Mean           1 (at::Reduction: None=0, Mean=1, Sum=2)
    ScalarType dtype=long        the DType: INT64
    MemoryFormat, Layout, Device the name as a string: `contiguous_format` -> "contiguous_format"

`check` compares defaults as Python values with `defaults_equal`: numbers by value (`1 == 1.0`,
but a bool only equals a bool), a list or tuple by its elements, a scalar k given for an
`int[N]` parameter as N copies of k (`stride=1` equals `stride=(1, 1)` for `int[2]`), DTypes by
identity, and a torch memory_format/layout/device object by its name.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import keyword
import math
import re
from typing import Any

from torchgen.model import Argument, BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type

from graph_builder import types

_BASE_ANNOTATIONS = {
    BaseTy.Tensor: "TTensor",
    BaseTy.int: "int",
    BaseTy.SymInt: "int",
    BaseTy.DeviceIndex: "int",
    BaseTy.float: "float",
    BaseTy.Scalar: "float",
    BaseTy.bool: "bool",
    BaseTy.SymBool: "bool",
    BaseTy.str: "str",
    BaseTy.ScalarType: "DType",
}

# ScalarType names as written in schema defaults (c10 names, either case) -> DType.
_SCALAR_TYPES = {
    "byte": types.UINT8, "char": types.INT8, "short": types.INT16, "int": types.INT32,
    "long": types.INT64, "half": types.FLOAT16, "float": types.FLOAT, "double": types.DOUBLE,
    "complexfloat": types.COMPLEX64, "complexdouble": types.COMPLEX128, "bool": types.BOOL,
    "bfloat16": types.BFLOAT16,
}  # fmt: skip

# at::Reduction, the enum behind `int reduction=Mean`.
_INT_ENUMS = {"None": 0, "Mean": 1, "Sum": 2}

# Enum-like trace-time types whose defaults are kept as their names.
_NAMED_DEFAULT_TYPES = frozenset({BaseTy.MemoryFormat, BaseTy.Layout, BaseTy.Device})


def python_name(name: str) -> str:
    """The Python parameter name for a schema name: Python keywords get a trailing underscore."""
    return name + "_" if keyword.iskeyword(name) else name


@dataclasses.dataclass(frozen=True)
class Param:
    """One schema argument as a Python parameter."""

    name: str  # as in the schema
    py_name: str  # python_name(name)
    type: str  # the schema type, e.g. "int[1]?"
    annotation: str  # Python annotation source
    kwarg_only: bool
    has_default: bool
    default: Any = None  # the Python value (when has_default)
    default_source: str = ""  # Python source of the default (when has_default)

    def source(self) -> str:
        text = f"{self.py_name}: {self.annotation}"
        return f"{text} = {self.default_source}" if self.has_default else text

    def text(self) -> str:
        """Without the annotation, for messages: `alpha=1`."""
        return f"{self.py_name}={self.default_source}" if self.has_default else self.py_name


@dataclasses.dataclass(frozen=True)
class PySignature:
    params: tuple[Param, ...]
    returns: str

    def items(self) -> list[str]:
        """Parameter sources with the `*` marker, ready to join into a def."""
        out: list[str] = []
        star = False
        for p in self.params:
            if p.kwarg_only and not star:
                out.append("*")
                star = True
            out.append(p.source())
        return out

    def text(self) -> str:
        """`(self, other, *, alpha=1)`: names, markers and defaults, for messages."""
        out: list[str] = []
        star = False
        for p in self.params:
            if p.kwarg_only and not star:
                out.append("*")
                star = True
            out.append(p.text())
        return "(" + ", ".join(out) + ")"


def annotation(t: Type) -> str:
    if isinstance(t, OptionalType):
        inner = annotation(t.elem)
        return inner if inner == "Any" else f"{inner} | None"
    if isinstance(t, ListType):
        return f"Sequence[{annotation(t.elem)}]"
    if isinstance(t, BaseType):
        return _BASE_ANNOTATIONS.get(t.name, "Any")
    return "Any"


def returns_annotation(schema: FunctionSchema) -> str:
    rets = [annotation(r.type) for r in schema.returns]
    if not rets:
        return "None"
    if len(rets) == 1:
        return rets[0]
    return f"tuple[{', '.join(rets)}]"


def _base(t: Type) -> Type:
    return t.elem if isinstance(t, OptionalType) else t


def _scalar_default(base: BaseTy, text: str, where: str) -> Any:
    """A default for a non-list type."""
    if base == BaseTy.bool or base == BaseTy.SymBool:
        if text in ("True", "False"):
            return text == "True"
    elif base in (BaseTy.int, BaseTy.SymInt, BaseTy.DeviceIndex):
        if text in _INT_ENUMS:
            return _INT_ENUMS[text]
        return int(text)
    elif base == BaseTy.float:
        return float(text)
    elif base == BaseTy.Scalar:
        try:
            return int(text)
        except ValueError:
            return float(text)
    elif base == BaseTy.str:
        value = ast.literal_eval(text)
        if isinstance(value, str):
            return value
    elif base == BaseTy.ScalarType:
        dtype = _SCALAR_TYPES.get(text.lower())
        if dtype is not None:
            return dtype
    elif base in _NAMED_DEFAULT_TYPES:
        return text
    raise ValueError(f"{where}: cannot read default {text!r} for type {base.name}")


def default_value(t: Type, text: str, where: str = "schema") -> Any:
    """The Python value of a schema default (`where` names the argument in errors)."""
    if text == "None" and isinstance(t, OptionalType):
        return None
    base = _base(t)
    if isinstance(base, ListType):
        elem = _base(base.elem)
        if not isinstance(elem, BaseType):
            raise ValueError(f"{where}: cannot read default {text!r} for type {t}")
        if text.startswith("["):
            items = [s.strip() for s in text[1:-1].split(",") if s.strip()]
            return tuple(_scalar_default(elem.name, s, where) for s in items)
        return (_scalar_default(elem.name, text, where),) * (base.size or 1)
    if not isinstance(base, BaseType):
        raise ValueError(f"{where}: cannot read default {text!r} for type {t}")
    return _scalar_default(base.name, text, where)


def _float_source(value: float) -> str:
    if math.isnan(value):
        return "math.nan"
    if math.isinf(value):
        return "math.inf" if value > 0 else "-math.inf"
    return repr(value)


def default_source(t: Type, value: Any) -> str:
    """Python source for a default value made by `default_value`."""
    if isinstance(value, types.DType):
        return value.name
    if isinstance(value, tuple):
        items = [default_source(t, v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, float):
        return _float_source(value)
    if isinstance(value, str):
        return json.dumps(value)  # a double-quoted Python literal, escapes included
    return repr(value)


def param(arg: Argument, kwarg_only: bool, where: str) -> Param:
    has_default = arg.default is not None
    value = source = None
    if has_default:
        value = default_value(arg.type, arg.default, f"{where}: argument {arg.name!r}")
        source = default_source(arg.type, value)
    return Param(
        name=arg.name,
        py_name=python_name(arg.name),
        type=str(arg.type),
        annotation=annotation(arg.type),
        kwarg_only=kwarg_only,
        has_default=has_default,
        default=value,
        default_source=source or "",
    )


def signature(schema: FunctionSchema) -> PySignature:
    """The Python signature of an ATen schema (names, order, `*`, defaults, annotations)."""
    where = str(schema.name)
    args = schema.arguments
    params = [param(a, False, where) for a in args.flat_positional]
    params += [param(a, True, where) for a in list(args.flat_kwarg_only) + list(args.out)]
    return PySignature(tuple(params), returns_annotation(schema))


# -- comparing defaults -----------------------------------------------------------------------


def _normalize(t: Type, value: Any) -> Any:
    """A function's default in the form `default_value` gives for type `t`."""
    base = _base(t)
    if type(value).__module__ == "torch" and isinstance(base, BaseType) and base.name in _NAMED_DEFAULT_TYPES:
        return str(value).removeprefix("torch.")
    if isinstance(base, ListType) and value is not None:
        if isinstance(value, (list, tuple)):
            return tuple(value)
        if isinstance(value, (bool, int, float)):
            return (value,) * (base.size or 1)
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, types.DType) or isinstance(b, types.DType):
        return a is b
    return type(a) is type(b) and a == b


def defaults_equal(p: Param, t: Type, value: Any) -> bool:
    """Whether a function default `value` equals the schema default of parameter `p` (type `t`)."""
    return _same(p.default, _normalize(t, value))


# -- formatting ---------------------------------------------------------------------------------

WIDTH = 100


def format_bracketed(indent: str, head: str, items: list[str], tail: str) -> str:
    """`head(items)tail` on one line when it fits in WIDTH columns, else one item per line with a
    trailing comma (the layout ruff and black give)."""
    one = f"{indent}{head}{', '.join(items)}{tail}"
    if len(one) <= WIDTH or not items:
        return one
    inner = indent + "    "
    return f"{indent}{head}\n" + "".join(f"{inner}{item},\n" for item in items) + f"{indent}{tail}"


_IMPORTS = {
    "Any": ("typing", "Any"),
    "Sequence": ("collections.abc", "Sequence"),
    "TTensor": ("graph_builder.type_constraints", "TTensor"),
    "DType": ("graph_builder.types", "DType"),
    **{d.name: ("graph_builder.types", d.name) for d in _SCALAR_TYPES.values()},
}
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def import_lines(code: str) -> list[str]:
    """The import lines the names used in `code` need (annotations and defaults), sorted."""
    words = set(_WORD.findall(code))
    modules: dict[str, set[str]] = {}
    plain = ["import math"] if "math.inf" in code or "math.nan" in code else []
    for word in words & _IMPORTS.keys():
        module, name = _IMPORTS[word]
        modules.setdefault(module, set()).add(name)
    stdlib = [f"from {m} import {', '.join(sorted(modules[m]))}" for m in sorted(modules) if not m.startswith("graph_builder")]
    ours = [f"from {m} import {', '.join(sorted(modules[m]))}" for m in sorted(modules) if m.startswith("graph_builder")]
    lines = plain + stdlib
    if ours:
        lines += [""] + ours if lines else ours
    return lines
