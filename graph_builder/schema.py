"""ONNX operator schemas as the binder needs them: `OpSignature` checks a call (arity,
attribute names and types, input dtypes against the type constraints) and turns Python scalars
and lists among the inputs into constants of the dtype their type constraint binds.

This module knows onnx.defs and the IR; the `op` namespace (`opset.py`) and the evaluators
(`evaluator.py`, `builder.py`) are built on it.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
import onnx
from onnx import defs

from graph_builder import types
from graph_builder.arrays import as_array
from graph_builder.ir import Graph, Value
from graph_builder.types import DType

DEFAULT_OPSET = 23

_SINGLE, _OPTIONAL, _VARIADIC = (
    defs.OpSchema.FormalParameterOption.Single,
    defs.OpSchema.FormalParameterOption.Optional,
    defs.OpSchema.FormalParameterOption.Variadic,
)
_A = onnx.AttributeProto


class OpError(TypeError):
    """A call to an ONNX operator that does not fit its schema."""


class Param:
    __slots__ = ("name", "type_str", "option", "homogeneous", "min_arity", "allowed", "binds")

    def __init__(self, p: defs.OpSchema.FormalParameter, allowed: dict[str, frozenset[DType]]):
        self.name = p.name
        self.type_str = p.type_str
        self.option = p.option
        self.homogeneous = p.is_homogeneous
        self.min_arity = p.min_arity
        # the dtypes this input admits (None: a type the schema spells out, e.g. tensor(int64))
        self.allowed = allowed.get(p.type_str)
        if self.allowed is None:
            fixed = types.from_type_str(p.type_str)
            self.allowed = frozenset({fixed}) if fixed is not None else None
        # whether this input binds its type parameter (all inputs sharing it must agree)
        self.binds = p.type_str in allowed and (p.option != _VARIADIC or p.is_homogeneous)


_SUBGRAPH_OUTPUTS = {"If": ("then_branch", 0), "Loop": ("body", 1), "Scan": ("body", 0)}


class OpSignature:
    """What the binder needs from an OpSchema, precomputed once per operator."""

    def __init__(self, schema: defs.OpSchema, opset: int):
        self.schema = schema
        self.name = schema.name
        self.lower_name = schema.name.lower()
        self.domain = schema.domain
        self.since_version = schema.since_version
        self.opset = opset
        self.allowed: dict[str, frozenset[DType]] = {}
        for tc in schema.type_constraints:
            dtypes = {types.from_type_str(t) for t in tc.allowed_type_strs}
            self.allowed[tc.type_param_str] = frozenset(d for d in dtypes if d is not None)
        self.inputs = [Param(p, self.allowed) for p in schema.inputs]
        self.outputs = [Param(p, self.allowed) for p in schema.outputs]
        self.input_names = {p.name: i for i, p in enumerate(self.inputs)}
        self.attributes = {name: a for name, a in schema.attributes.items()}
        # onnx's stub of OpSchema.AttrType lacks the __int__ its pybind11 enum has
        self.attr_types = {name: int(a.type) for name, a in schema.attributes.items()}  # type: ignore[call-overload]
        self.required_attrs = [name for name, a in schema.attributes.items() if a.required]
        self.variadic_input = any(p.option == _VARIADIC for p in self.inputs)
        self.variadic_output = any(p.option == _VARIADIC for p in self.outputs)
        self.n_required_outputs = sum(1 for p in self.outputs if p.option == _SINGLE)
        # (Dropout is random in training mode: its mask must not fold into a constant at trace time)
        self.nondeterministic = self.name.startswith("Random") or self.name in ("Bernoulli", "Multinomial", "Dropout")
        # fewest positional inputs a call may give: every Single input up to the last one, and
        # the minimum arity of a variadic tail
        n_min = 0
        for i, p in enumerate(self.inputs):
            if p.option == _SINGLE:
                n_min = i + 1
            elif p.option == _VARIADIC:
                n_min = i + p.min_arity
        self.min_inputs = n_min
        self.max_inputs = None if self.variadic_input else len(self.inputs)
        self.subgraph_outputs = _SUBGRAPH_OUTPUTS.get(self.name) if self.domain == "" else None

    def allowed_str(self, type_str: str) -> str:
        allowed = self.allowed.get(type_str)
        if allowed is None:
            return type_str
        return "{" + ", ".join(sorted(d.name for d in allowed)) + "}"

    def describe(self) -> str:
        """`op.Add(A: T, B: T)` with its type constraints, for error messages."""
        params = []
        for p in self.inputs:
            suffix = "?" if p.option == _OPTIONAL else "..." if p.option == _VARIADIC else ""
            params.append(f"{p.name}{suffix}: {p.type_str}")
        constraints = "; ".join(f"{t} in {self.allowed_str(t)}" for t in self.allowed)
        return f"op.{self.name}({', '.join(params)})" + (f" where {constraints}" if constraints else "")

    def param_for_input(self, index: int) -> Param:
        if index < len(self.inputs):
            return self.inputs[index]
        return self.inputs[-1]  # variadic tail

    # -- binding ---------------------------------------------------------------------------
    def bind(self, args: tuple, kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any], int | None]:
        """Split a call into positional inputs (None for omitted optional ones), attributes and
        the number of outputs asked for with `_outputs=`."""
        inputs = list(args)
        attrs: dict[str, Any] = {}
        n_outputs = None
        if kwargs:
            attr_types = self.attr_types
            for key, value in kwargs.items():
                kind = attr_types.get(key)
                if kind is not None:
                    if value is not None:
                        attrs[key] = value if type(value) is _EXACT_TYPE.get(kind) else self.coerce_attribute(key, value)
                elif key == "_outputs":
                    n_outputs = value
                elif key in self.input_names:
                    index = self.input_names[key]
                    if index < len(inputs) and inputs[index] is not None:
                        raise OpError(f"op.{self.name}: input {key!r} given twice")
                    inputs.extend([None] * (index + 1 - len(inputs)))
                    inputs[index] = value
                else:
                    raise OpError(
                        f"op.{self.name} (opset {self.opset}) has no attribute or input {key!r}; "
                        f"its attributes are {sorted(self.attr_types)}, its inputs {[p.name for p in self.inputs]}"
                    )
        while inputs and inputs[-1] is None:  # omitted optional inputs at the end
            inputs.pop()
        n = len(inputs)
        if n < self.min_inputs or self.max_inputs is not None and n > self.max_inputs:
            self._check_arity(inputs)
        for x in inputs:
            if x is None:  # an omitted input in the middle: fine if it is optional
                self._check_arity(inputs)
                break
        if self.required_attrs:
            for name in self.required_attrs:
                if name not in attrs:
                    raise OpError(f"op.{self.name}: required attribute {name!r} is missing")
        return inputs, attrs, n_outputs

    def _check_arity(self, inputs: list[Any]) -> None:
        if self.max_inputs is not None and len(inputs) > self.max_inputs:
            raise OpError(f"{self.describe()} takes at most {self.max_inputs} inputs, got {len(inputs)}")
        for i, p in enumerate(self.inputs):
            if p.option == _VARIADIC:
                given = sum(1 for x in inputs[i:] if x is not None)
                if given < p.min_arity:
                    raise OpError(f"{self.describe()}: variadic input {i} ({p.name!r}) needs at least {p.min_arity} values, got {given}")
                if any(x is None for x in inputs[i:]):
                    raise OpError(f"{self.describe()}: variadic input {p.name!r} cannot hold None")
                break
            if p.option == _SINGLE and (i >= len(inputs) or inputs[i] is None):
                raise OpError(f"{self.describe()}: required input {i} ({p.name!r}) is missing")

    def coerce_attribute(self, key: str, value: Any) -> Any:
        kind = self.attr_types[key]
        try:
            if kind == _A.INT:
                if isinstance(value, DType):  # op.Cast(x, to=FLOAT)
                    return value.onnx
                return operator.index(value)
            if kind == _A.FLOAT:
                if isinstance(value, (str, bytes)):
                    raise TypeError(key)
                return float(value)
            if kind == _A.STRING:
                if isinstance(value, bytes):
                    return value.decode()
                if not isinstance(value, str):
                    raise TypeError(key)
                return value
            if kind == _A.INTS:
                if isinstance(value, (str, bytes)):
                    raise TypeError(key)
                ints = list(value)  # a copy: the caller may reuse its list
                for v in ints:
                    if type(v) is not int:
                        return [operator.index(v) for v in ints]
                return ints
            if kind == _A.FLOATS:
                return [float(v) for v in value]
            if kind == _A.STRINGS:
                if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                    raise TypeError(key)
                return list(value)
            if kind == _A.TENSOR:
                return as_array(value)
            if kind == _A.GRAPH:
                if isinstance(value, Graph):
                    return value
                if hasattr(value, "finalize_subgraph"):
                    return value.finalize_subgraph()
                raise TypeError(key)
        except (TypeError, ValueError) as e:
            raise OpError(
                f"op.{self.name}: attribute {key!r} expects {_A.AttributeType.Name(kind)}, "
                f"got {type(value).__name__} {value!r}"
            ) from e
        return value

    def resolve_types(self, inputs: list[Any]) -> tuple[list[Any], dict[str, DType]]:
        """Bind type parameters from typed inputs and turn Python scalars and lists into numpy
        constants of the bound dtype. Returns the inputs (Value, ndarray, torch tensor or None)
        and the bindings."""
        bound: dict[str, DType] = {}
        pending: list[int] | None = None
        params = self.inputs
        last = len(params) - 1
        for i, x in enumerate(inputs):
            if x is None:
                continue
            t = type(x)
            if t is Value:
                dtype = x.dtype
            elif t is np.ndarray:
                dtype = types._BY_NUMPY.get(x.dtype)
                if dtype is None:
                    dtype = dtype_of(x)
            else:
                dtype = None if t is list or t is float or t is int or t is tuple or t is bool else dtype_of(x)
                if dtype is None:  # a Python value: typed once the other inputs have bound its type
                    if pending is None:
                        pending = []
                    pending.append(i)
                    continue
            p = params[i] if i <= last else params[last]
            allowed = p.allowed
            if allowed is not None and dtype not in allowed:
                newer = f" ({dtype} exists from opset {dtype.since_opset}); export with a newer opset" if (
                    dtype is not None and dtype.since_opset > self.since_version) else ""
                raise OpError(
                    f"op.{self.name}: input {i} ({p.name!r}) has dtype {dtype}, "
                    f"but {p.type_str} allows {self.allowed_str(p.type_str)}{newer}"
                )
            if not p.binds:
                continue
            type_str = p.type_str
            previous = bound.get(type_str)
            if previous is None:
                bound[type_str] = dtype
            elif previous is not dtype:
                j = next(k for k, y in enumerate(inputs) if self.param_for_input(k).type_str == type_str and dtype_of(y) is not None)
                raise OpError(
                    f"op.{self.name}: input {i} ({p.name!r}) has dtype {dtype} but input {j} "
                    f"({self.param_for_input(j).name!r}) has {previous}; both must share type {type_str}"
                )
        if pending is not None:
            for i in pending:
                p = params[i] if i <= last else params[last]
                value = inputs[i]
                dtype = bound.get(p.type_str)
                if dtype is None:
                    allowed = p.allowed
                    if allowed is not None and len(allowed) == 1:
                        (dtype,) = allowed
                    else:
                        dtype = types.from_python(value)
                        if allowed is not None and dtype not in allowed:
                            raise OpError(
                                f"op.{self.name}: input {i} ({p.name!r}) is the Python value {value!r} "
                                f"({dtype}), but {p.type_str} allows {self.allowed_str(p.type_str)}"
                            )
                    if p.binds:
                        bound[p.type_str] = dtype
                inputs[i] = python_constant(value, dtype, self, i)
        return inputs, bound

    def output_count(self, attrs: dict[str, Any], inputs: list[Any], n_outputs: int | None) -> int:
        if n_outputs is not None:
            return n_outputs
        if not self.variadic_output:
            return self.n_required_outputs
        if self.subgraph_outputs is not None:
            attr, skip = self.subgraph_outputs
            body = attrs.get(attr)
            if isinstance(body, Graph):
                return len(body.outputs) - skip
        if self.name == "Split":
            if "num_outputs" in attrs:
                return attrs["num_outputs"]
            if len(inputs) > 1 and inputs[1] is not None:
                split = constant_of(inputs[1])
                if split is not None:
                    return len(split)
        raise OpError(f"op.{self.name} has a variadic output: say how many with _outputs=N")


# Attribute values of these exact Python types need no coercion.
_EXACT_TYPE = {_A.INT: int, _A.FLOAT: float, _A.STRING: str}

_PYTHON_CONSTANTS: dict[Any, np.ndarray] = {}


def python_constant(value: Any, dtype: DType, sig: OpSignature | None = None, index: int = 0) -> np.ndarray:
    """A Python scalar or (nested) list as a read-only numpy array of `dtype`. Hashable scalars
    and flat lists are cached, so that the builder can share the constant they make."""
    t = type(value)
    key: Any = None
    if t is int or t is bool or t is float:
        # -0.0 == 0.0 and hash alike: tell them apart by sign
        key = (dtype, t, value, t is float and math.copysign(1.0, value) < 0)
    elif (t is list or t is tuple) and len(value) <= 64:
        key = (dtype, tuple, tuple(value))
        for v in value:
            if type(v) is not int:  # floats: -0.0 == 0.0; bools: True == 1
                key = None
                break
    if key is not None:
        array = _PYTHON_CONSTANTS.get(key)
        if array is not None:
            return array
    try:
        array = np.array(value, dtype=dtype.numpy)  # a float for an integer type truncates, like torch
    except (TypeError, ValueError, OverflowError) as e:
        where = f"op.{sig.name}: input {index} ({sig.param_for_input(index).name!r})" if sig else "a constant"
        raise OpError(f"{where} is the Python value {value!r}, which cannot be a {dtype} constant: {e}") from None
    array.flags.writeable = False
    if key is not None:
        if len(_PYTHON_CONSTANTS) > 10_000:
            _PYTHON_CONSTANTS.clear()
        _PYTHON_CONSTANTS[key] = array
    return array


def dtype_of(x: Any) -> DType | None:
    """The dtype of a typed input (Value, numpy array or scalar, torch tensor), None for Python values."""
    if isinstance(x, Value):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return types.from_numpy(x.dtype)
    if type(x).__module__ == "torch" and hasattr(x, "dtype"):
        return types.from_torch(x.dtype)
    if isinstance(x, (bool, int, float, complex, str, list, tuple)):
        return None
    raise OpError(f"cannot use a {type(x).__name__} as an ONNX operator input: {x!r}")


def constant_of(x: Any) -> np.ndarray | None:
    if isinstance(x, Value):
        return x.const_value
    if isinstance(x, np.ndarray):
        return x
    return None
