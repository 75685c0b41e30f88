"""`python -m codegen opset [--opset N]`: the typed `op` namespace of graph_builder.

Writes graph_builder/generated/opsetN.py: `class OpsetN(graph_builder.opset.Opset)` with one
method per operator of the default ONNX domain at opset N (the newest schema with since_version
<= N; operators deprecated at N, such as Scatter and Upsample, are left out and stay reachable
through the dynamic namespace). A method takes the operator's inputs (optional ones default to
None, a variadic one is `*name`), its attributes as keyword-only parameters (None means the
schema default), `_outputs` where the operator has optional or variadic outputs, and returns a
Value or a tuple of Values. Its body is `return self._call("Name", inputs..., attr=attr, ...)`,
the binding path of the dynamic `op.Name(...)`, so both behave the same.
"""

from __future__ import annotations

import textwrap

import onnx
from onnx import defs

from codegen import files, signature

DEFAULT_OPSET = 23
DIRECTORY = "graph_builder/generated"

_O = defs.OpSchema.FormalParameterOption
_A = onnx.AttributeProto
_ATTRIBUTE_TYPES = {
    _A.INT: "int",
    _A.FLOAT: "float",
    _A.STRING: "str",
    _A.INTS: "Sequence[int]",
    _A.FLOATS: "Sequence[float]",
    _A.STRINGS: "Sequence[str]",
    _A.GRAPH: "Graph | GraphBuilder",
    _A.GRAPHS: "Sequence[Graph | GraphBuilder]",
}  # TENSOR (numpy array, torch tensor or Python list), SPARSE_TENSOR, TYPE_PROTO...: Any
# INT attributes that hold an element type: the binder also takes a graph_builder DType there.
_DTYPE_ATTRIBUTES = frozenset({"to", "dtype", "output_dtype", "stash_type"})
_MAX_TYPES_LISTED = 24


def command(version: int) -> str:
    return f"opset --opset {version}"


def schemas(version: int) -> list[defs.OpSchema]:
    """The operators of the default domain at `version`, by name, without deprecated ones."""
    latest: dict[str, defs.OpSchema] = {}
    for s in defs.get_all_schemas_with_history():
        if s.domain == "" and s.since_version <= version:
            if s.name not in latest or latest[s.name].since_version < s.since_version:
                latest[s.name] = s
    return [latest[name] for name in sorted(latest) if not latest[name].deprecated]


def _first_paragraph(doc: str) -> str:
    lines = []
    for line in (doc or "").strip().split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith(("```", "|", "<")):
            break
        lines.append(stripped)
    return " ".join(lines)


def _type_str(t: str) -> str:
    return t[len("tensor(") : -1] if t.startswith("tensor(") and t.count("(") == 1 else t


def _constraint(tc: defs.OpSchema.TypeConstraintParam) -> str:
    allowed = [_type_str(t) for t in tc.allowed_type_strs]
    if len(allowed) > _MAX_TYPES_LISTED:
        allowed = allowed[:12] + [f"... {len(allowed)} types in all"]
    return f"{tc.type_param_str} in ({', '.join(allowed)})"


def _attribute_default(a: defs.OpSchema.Attribute) -> str | None:
    if a.required or not a.default_value.type:
        return None
    value = onnx.helper.get_attribute_value(a.default_value)
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, list):
        value = [v.decode() if isinstance(v, bytes) else v for v in value]
    if isinstance(value, (int, float, str, list)):
        return f"{a.name}={value!r}"
    return None


def _docstring(s: defs.OpSchema) -> str:
    wrap = lambda text: textwrap.fill(text, width=signature.WIDTH - 12, break_on_hyphens=False, break_long_words=False)  # noqa: E731
    paragraphs = [wrap(f"{s.name} (since opset {s.since_version}): {_first_paragraph(s.doc)}".rstrip(": "))]
    defaults = [d for d in (_attribute_default(a) for a in sorted(s.attributes.values(), key=lambda a: a.name)) if d]
    if defaults:
        paragraphs.append(wrap("Attribute defaults: " + ", ".join(defaults) + "."))
    constraints = [_constraint(tc) for tc in s.type_constraints]
    if constraints:
        paragraphs.append(wrap("Types: " + "; ".join(constraints) + "."))
    return "\n\n".join(paragraphs)


def method(s: defs.OpSchema) -> str:
    items = ["self"]
    args = [f'"{s.name}"']
    after_optional = variadic = False
    for p in s.inputs:
        if p.option == _O.Variadic:
            items.append(f"*{p.name}: ValueLike")
            args.append(f"*{p.name}")
            variadic = True
        elif p.option == _O.Optional or after_optional:  # Python puts no required parameter after a default
            items.append(f"{p.name}: ValueLike | None = None")
            args.append(p.name)
            after_optional = True
        else:
            items.append(f"{p.name}: ValueLike")
            args.append(p.name)
    keywords = []
    for a in sorted(s.attributes.values(), key=lambda a: a.name):
        annotation = _ATTRIBUTE_TYPES.get(a.type, "Any")
        if a.type == _A.INT and a.name in _DTYPE_ATTRIBUTES:
            annotation = "int | DType"
        keywords.append(f"{a.name}: {annotation}" if a.required else f"{a.name}: {annotation} | None = None")
        args.append(f"{a.name}={a.name}")
    single = [p for p in s.outputs if p.option == _O.Single]
    if len(single) < len(s.outputs):
        keywords.append("_outputs: int | None = None")
        args.append("_outputs=_outputs")
        returns = "Value | tuple[Value, ...]"
    else:
        returns = "Value" if len(single) == 1 else f"tuple[{', '.join(['Value'] * len(single))}]"
    if keywords and not variadic:
        items.append("*")
    items += keywords
    return (
        signature.format_bracketed("    ", f"def {s.name}(", items, f") -> {returns}:")
        + "\n"
        + files.docstring(_docstring(s), "        ")
        + signature.format_bracketed("        ", "return self._call(", args, ")")
        + "\n"
    )


def _module(version: int) -> str:
    ops = schemas(version)
    doc = (
        f"ONNX opset {version}, default domain, as a typed class: one method per operator ({len(ops)}).\n\n"
        "Each method calls `Opset._call`, the binding path of the dynamic `op.Name(...)`: the same\n"
        "schema checks, Python scalars and lists turned into constants, and evaluators. Omitted\n"
        "optional inputs are None; attributes are keyword-only, None meaning the schema default;\n"
        "`_outputs=N` asks for N outputs of an operator with optional or variadic outputs.\n"
        "Deprecated operators have no method and stay reachable dynamically."
    )
    head = (
        files.header(command(version))
        + files.docstring(doc, "")
        + "\nfrom __future__ import annotations\n\n"
        "from typing import TYPE_CHECKING, Any\n\n"
        "from graph_builder.opset import Opset\n\n"
        "if TYPE_CHECKING:\n"
        "    from collections.abc import Sequence\n"
        "    from typing import TypeAlias\n\n"
        "    import numpy as np\n\n"
        "    from graph_builder.builder import GraphBuilder\n"
        "    from graph_builder.ir import Graph, Value\n"
        "    from graph_builder.types import DType\n\n"
        "    # What an input accepts: a Value, or a constant made from an array or Python values.\n"
        "    ValueLike: TypeAlias = (\n"
        "        Value | np.ndarray | bool | int | float | Sequence[bool] | Sequence[int] | Sequence[float]\n"
        "    )\n"
    )
    cls = (
        f"\n\nclass Opset{version}(Opset):\n"
        + files.docstring(f"The operators of the default ONNX domain at opset {version}, typed.", "    ")
        + "\n    def __init__(self) -> None:\n"
        + f'        super().__init__({version}, "")\n'
    )
    return head + cls + "".join("\n" + method(s) for s in ops)


def init_module() -> str:
    doc = (
        "Typed ONNX opsets written by `python -m codegen opset --opset N`: graph_builder/generated/opsetN.py.\n\n"
        "graph_builder.opset(N) returns an instance of OpsetN when that module exists; `op` is Opset23."
    )
    return files.header("opset") + files.docstring(doc, "")


def generate(version: int = DEFAULT_OPSET) -> dict[str, str]:
    """Relative path -> text: the typed class for `version` and the package's __init__."""
    return {f"{DIRECTORY}/opset{version}.py": _module(version), f"{DIRECTORY}/__init__.py": init_module()}
