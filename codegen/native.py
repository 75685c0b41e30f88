"""native_functions.yaml of the installed torch, read through torchgen.

torchgen ships inside the torch wheel with its copy of the YAML under
`torchgen/packaged/ATen/native/`. Every `func:` line is parsed with torchgen's own schema parser
(`torchgen.model.FunctionSchema.parse`), never by hand.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import yaml
from torchgen.model import FunctionSchema

# The kinds of overload a function library implements. out= and in-place variants (and
# `scratch`, an out= variant with scratch buffers) never reach an exporter: torch.export
# functionalizes them away. `mutable` overloads (e.g. `_native_batch_norm_legit`, which updates
# running statistics in place) are kept: they appear in core ATen.
FUNCTIONAL_KINDS = frozenset({"functional", "mutable"})


@dataclasses.dataclass(frozen=True)
class Overload:
    """One entry of native_functions.yaml."""

    name: str  # "add.Tensor"; the default overload by its bare name: "relu"
    func: str  # the schema as written in the YAML, e.g. "add.Tensor(Tensor self, ...) -> Tensor"
    schema: FunctionSchema
    tags: tuple[str, ...]
    python_module: str  # "" for torch.*, else "nn", "linalg", "fft", "special", "sparse", "nested"

    @property
    def qualified_name(self) -> str:
        return "aten::" + self.name

    @property
    def base_name(self) -> str:
        return str(self.schema.name.name)

    @property
    def overload_name(self) -> str:
        return self.schema.name.overload_name

    @property
    def kind(self) -> str:
        """torchgen's SchemaKind: functional, inplace, out, mutable or scratch."""
        return self.schema.kind().name

    @property
    def is_functional(self) -> bool:
        """Not an out= or in-place variant: the overloads a function library implements."""
        return self.kind in FUNCTIONAL_KINDS

    @property
    def is_core(self) -> bool:
        return "core" in self.tags


def yaml_path() -> Path:
    """native_functions.yaml of the installed torch (found through torchgen)."""
    import torchgen

    return Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


_DIMNAME = re.compile(r"\bDimname\b")


def parse_schema(func: str) -> FunctionSchema:
    """torchgen's FunctionSchema.parse. Named tensors are gone from torch 2.13, and its torchgen
    no longer knows the `Dimname` type; schemas of older torch that still use it parse with
    `Dimname` read as `str` (a dimension name is a string in Python)."""
    return FunctionSchema.parse(_DIMNAME.sub("str", func))


def _tags(entry: dict) -> tuple[str, ...]:
    """`tags:` is absent, one name, a comma-separated string, or a YAML list."""
    raw = entry.get("tags") or ()
    if isinstance(raw, str):
        raw = raw.split(",")
    return tuple(sorted(str(t).strip() for t in raw if str(t).strip()))


def parse_entries(entries: list[dict]) -> list[Overload]:
    overloads = []
    for entry in entries:
        func = entry["func"]
        schema = parse_schema(func)
        name = str(schema.name)
        overloads.append(Overload(name, func, schema, _tags(entry), entry.get("python_module", "")))
    return overloads


@functools.cache
def load(path: str | None = None) -> tuple[Overload, ...]:
    """Every overload of native_functions.yaml (the installed torch's unless `path` is given)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path or yaml_path(), encoding="utf-8") as f:
        entries = yaml.load(f, Loader=loader)
    return tuple(parse_entries(entries))


def index(overloads: tuple[Overload, ...] | list[Overload]) -> dict[str, Overload]:
    """name ("add.Tensor", "relu") -> Overload."""
    return {o.name: o for o in overloads}
