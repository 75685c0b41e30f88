"""The `op` namespace: every ONNX operator of an opset as `op.Name(*inputs, **attributes)`.

Each call is checked against the operator's schema (arity, attribute names and types, input
dtypes against the type constraints), Python scalars and lists among the inputs become
constants of the dtype their type constraint binds from the other inputs, and the call is
handed to the current evaluator: eager (onnxruntime on real data) outside a graph, tracing
inside `with builder:`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import defs

from graph_builder import types
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
    __slots__ = ("name", "type_str", "option", "homogeneous")

    def __init__(self, p: defs.OpSchema.FormalParameter):
        self.name = p.name
        self.type_str = p.type_str
        self.option = p.option
        self.homogeneous = p.is_homogeneous


class OpSignature:
    """What the binder needs from an OpSchema, precomputed once per operator."""

    def __init__(self, schema: defs.OpSchema, opset: int):
        self.schema = schema
        self.name = schema.name
        self.domain = schema.domain
        self.since_version = schema.since_version
        self.opset = opset
        self.inputs = [Param(p) for p in schema.inputs]
        self.outputs = [Param(p) for p in schema.outputs]
        self.input_names = {p.name: i for i, p in enumerate(self.inputs)}
        self.attributes = {name: a for name, a in schema.attributes.items()}
        self.attr_types = {name: int(a.type) for name, a in schema.attributes.items()}
        self.required_attrs = [name for name, a in schema.attributes.items() if a.required]
        self.allowed: dict[str, frozenset[DType]] = {}
        for tc in schema.type_constraints:
            dtypes = {types.from_type_str(t) for t in tc.allowed_type_strs}
            self.allowed[tc.type_param_str] = frozenset(d for d in dtypes if d is not None)
        self.variadic_input = any(p.option == _VARIADIC for p in self.inputs)
        self.variadic_output = any(p.option == _VARIADIC for p in self.outputs)
        self.n_required_outputs = sum(1 for p in self.outputs if p.option == _SINGLE)
        self.nondeterministic = self.name.startswith("Random") or self.name in ("Bernoulli", "Multinomial")

    def allowed_str(self, type_str: str) -> str:
        allowed = self.allowed.get(type_str)
        if allowed is None:
            return type_str
        return "{" + ", ".join(sorted(d.name for d in allowed)) + "}"

    # -- binding ---------------------------------------------------------------------------
    def bind(self, args: tuple, kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any], int | None]:
        """Split a call into positional inputs (None for omitted optional ones), attributes and
        the number of outputs asked for with `_outputs=`."""
        n_outputs = kwargs.pop("_outputs", None)
        inputs = list(args)
        attrs: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in self.attr_types:
                if value is not None:
                    attrs[key] = self.coerce_attribute(key, value)
            elif key in self.input_names:
                index = self.input_names[key]
                if index < len(inputs) and inputs[index] is not None:
                    raise OpError(f"op.{self.name}: input {key!r} given twice")
                inputs.extend([None] * (index + 1 - len(inputs)))
                inputs[index] = value
            else:
                known = sorted(self.attr_types) + [p.name for p in self.inputs]
                raise OpError(f"op.{self.name} (opset {self.opset}) has no attribute or input {key!r}; it has {known}")
        if not self.variadic_input and len(inputs) > len(self.inputs):
            raise OpError(f"op.{self.name} takes at most {len(self.inputs)} inputs, got {len(inputs)}")
        for i, p in enumerate(self.inputs):
            if p.option == _SINGLE and (i >= len(inputs) or inputs[i] is None):
                raise OpError(f"op.{self.name}: required input {i} ({p.name!r}) is missing")
            if p.option == _VARIADIC:
                break
        for name in self.required_attrs:
            if name not in attrs:
                raise OpError(f"op.{self.name}: required attribute {name!r} is missing")
        while inputs and inputs[-1] is None:
            inputs.pop()
        return inputs, attrs, n_outputs

    def coerce_attribute(self, key: str, value: Any) -> Any:
        kind = self.attr_types[key]
        try:
            if kind == _A.INT:
                return int(value)
            if kind == _A.FLOAT:
                return float(value)
            if kind == _A.STRING:
                return value if isinstance(value, str) else value.decode()
            if kind == _A.INTS:
                return [int(v) for v in value]
            if kind == _A.FLOATS:
                return [float(v) for v in value]
            if kind == _A.STRINGS:
                return [str(v) for v in value]
            if kind == _A.TENSOR:
                return as_array(value)
            if kind == _A.GRAPH:
                return value if isinstance(value, Graph) else value.finalize_subgraph()
        except (TypeError, ValueError) as e:
            raise OpError(f"op.{self.name}: attribute {key!r} expects {_A.AttributeType.Name(kind)}, got {value!r}") from e
        return value

    def param_for_input(self, index: int) -> Param:
        if index < len(self.inputs):
            return self.inputs[index]
        return self.inputs[-1]  # variadic tail

    def resolve_types(self, inputs: list[Any]) -> tuple[list[Any], dict[str, DType]]:
        """Bind type parameters from typed inputs and turn Python scalars and lists into numpy
        constants of the bound dtype. Returns the inputs (Value, ndarray, torch tensor or None)
        and the bindings."""
        bound: dict[str, DType] = {}
        bound_by: dict[str, int] = {}
        pending: list[int] = []
        for i, x in enumerate(inputs):
            if x is None:
                continue
            dtype = dtype_of(x)
            if dtype is None:
                pending.append(i)
                continue
            p = self.param_for_input(i)
            type_str = p.type_str
            allowed = self.allowed.get(type_str)
            if allowed is not None and dtype not in allowed:
                raise OpError(
                    f"op.{self.name}: input {i} ({p.name!r}) has dtype {dtype}, "
                    f"but {type_str} allows {self.allowed_str(type_str)}"
                )
            if allowed is None or not p.homogeneous and p.option == _VARIADIC:
                continue
            previous = bound.get(type_str)
            if previous is None:
                bound[type_str] = dtype
                bound_by[type_str] = i
            elif previous is not dtype:
                j = bound_by[type_str]
                raise OpError(
                    f"op.{self.name}: input {i} ({p.name!r}) has dtype {dtype} but input {j} "
                    f"({self.param_for_input(j).name!r}) has {previous}; both must share type {type_str}"
                )
        for i in pending:
            p = self.param_for_input(i)
            value = inputs[i]
            dtype = bound.get(p.type_str)
            if dtype is None:
                allowed = self.allowed.get(p.type_str)
                if allowed is not None and len(allowed) == 1:
                    (dtype,) = allowed
                else:
                    dtype = types.from_python(value)
                    if allowed is not None and dtype not in allowed:
                        raise OpError(
                            f"op.{self.name}: input {i} ({p.name!r}) is the Python value {value!r} "
                            f"({dtype}), but {p.type_str} allows {self.allowed_str(p.type_str)}"
                        )
                if p.type_str in self.allowed:
                    bound[p.type_str] = dtype
            inputs[i] = np.asarray(value, dtype=dtype.numpy)
        return inputs, bound

    def output_count(self, attrs: dict[str, Any], inputs: list[Any], n_outputs: int | None) -> int:
        if n_outputs is not None:
            return n_outputs
        if not self.variadic_output:
            return self.n_required_outputs
        if self.name == "Split":
            if "num_outputs" in attrs:
                return attrs["num_outputs"]
            if len(inputs) > 1 and inputs[1] is not None:
                split = constant_of(inputs[1])
                if split is not None:
                    return len(split)
        raise OpError(f"op.{self.name} has a variadic output: say how many with _outputs=N")


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


def as_array(value: Any) -> np.ndarray:
    """numpy view of a numpy array, torch tensor, Python scalar or list, or eager Value."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, Value):
        return value.numpy()
    if type(value).__module__ == "torch":
        return torch_to_numpy(value)
    return np.asarray(value)


def torch_to_numpy(tensor: Any) -> np.ndarray:
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(types.BFLOAT16.numpy)
    if tensor.dtype in (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz):
        return tensor.view(torch.uint8).numpy().view(types.from_torch(tensor.dtype).numpy)
    if tensor.is_conj():
        tensor = tensor.resolve_conj()
    return tensor.numpy()


def numpy_to_torch(array: np.ndarray) -> Any:
    import torch

    dtype = types.from_numpy(array.dtype)
    if dtype is types.BFLOAT16 or dtype.name.startswith("FLOAT8"):
        raw = np.ascontiguousarray(array).view(np.int16 if dtype is types.BFLOAT16 else np.uint8)
        return torch.from_numpy(raw.copy()).view(dtype.to_torch())
    if not array.flags.writeable:
        array = array.copy()
    return torch.from_numpy(np.ascontiguousarray(array))


class OpFunction:
    """A callable ONNX operator of one opset: `op.Add(a, b)`."""

    def __init__(self, signature: OpSignature):
        self.signature = signature
        self.__name__ = signature.name
        self.__doc__ = signature.schema.doc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from graph_builder.evaluator import current_evaluator

        sig = self.signature
        inputs, attrs, n_outputs = sig.bind(args, kwargs)
        inputs, _ = sig.resolve_types(inputs)
        n = sig.output_count(attrs, inputs, n_outputs)
        outputs = current_evaluator().eval_op(sig, inputs, attrs, n)
        return outputs[0] if n == 1 else tuple(outputs)

    def __repr__(self) -> str:
        return f"<ONNX op {self.signature.domain or 'ai.onnx'}::{self.signature.name}-{self.signature.since_version}>"


class Opset:
    """The operators of one domain at one version, resolved from onnx.defs on first use."""

    def __init__(self, version: int = DEFAULT_OPSET, domain: str = ""):
        self.version = version
        self.domain = domain

    def __getattr__(self, name: str) -> OpFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            schema = defs.get_schema(name, self.version, self.domain)
        except defs.SchemaError:
            raise AttributeError(
                f"ONNX has no operator {name!r} in domain {self.domain or 'ai.onnx'!r} at opset {self.version}"
            ) from None
        fn = OpFunction(OpSignature(schema, self.version))
        setattr(self, name, fn)
        return fn

    def __repr__(self) -> str:
        return f"Opset({self.version}, domain={self.domain!r})"


_OPSETS: dict[tuple[str, int], Opset] = {}


def opset(version: int, domain: str = "") -> Opset:
    """The shared Opset object for a version (`opset(18).Add`)."""
    key = (domain, version)
    if key not in _OPSETS:
        _OPSETS[key] = Opset(version, domain)
    return _OPSETS[key]
