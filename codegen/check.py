"""`python -m codegen check`: hand-written functions keep their ATen signatures, generated files
are up to date.

For every registered function (the registry of `torchlib.get_registry()`):

- its name is an overload of native_functions.yaml, or an ATen operator that torch registers
  outside it (e.g. `aten::sym_size.int`, checked against torch's own schema), or lives in a
  documented non-ATen namespace (NON_ATEN_NAMESPACES), which is accepted as is;
- its signature (`inspect.signature`, which follows the `__wrapped__` of decorators) has the
  schema's parameter names (Python keywords escaped, codegen/signature.py), order, keyword-only
  marker and defaults (compared as Python values with `signature.defaults_equal`);
- the first line of its docstring is the schema as written in native_functions.yaml without the
  `aten::` prefix: the schema of this overload or of another overload the same function is
  registered under.

A function registered under several overloads must match each of them. Every problem is
reported, each naming the overload, the function, the schema and the difference.
"""

from __future__ import annotations

import difflib
import inspect
import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from codegen import files, native, signature

# Namespaces that are not ATen and have no schema to check against. FX graphs from torch.export
# call these on SymInts/SymFloats, or hold torch primitives.
NON_ATEN_NAMESPACES = {
    "prims": "torch._prims primitives (torch.ops.prims.*)",
    "_operator": "Python's operator module on symbolic values (operator.add, operator.floordiv, ...)",
    "operator": "the same, by its public name",
    "math": "Python's math module on symbolic values (math.ceil, math.floor, ...)",
    "builtins": "Python builtins on symbolic values (round, ...)",
    "torch": "torch's Python-level functions on symbolic values (torch.sym_max, torch.sym_float, ...)",
    "higher_order": "torch's higher-order operators (torch.ops.higher_order.cond, while_loop, scan, with_effects, ...)",
    "quantized_decomposed": "the decomposed quantization ops of PT2E (torch.ops.quantized_decomposed.*), checked against torch's schemas",
    "torchvision": "torchvision's detection ops (torch.ops.torchvision.*: nms, roi_align, ...), whose schemas torchvision defines; "
                   "the docstrings quote them (torchlib/conformance/torchvision_reference.py holds the same strings)",
    "transformers": "transformers' own torch.library ops (torch.ops.transformers.*: grouped_mm_fallback, its mixture-of-experts "
                    "matmul), whose schemas transformers defines when its integrations import; the docstrings quote them",
    "torch_nn": "torch.nn's custom ops (torch.ops.torch_nn.*, e.g. linear_cross_entropy's chunked kernels), checked against torch's schemas",
}
# Namespaces whose functions are checked against torch's registered schemas
SCHEMA_NAMESPACES = {"aten", "quantized_decomposed", "torch_nn"}


class Problem:
    """One mismatch: what (an overload or a file), the function or command, the details."""

    def __init__(self, what: str, where: str, details: list[str], schema: str = "", extra: Iterable[str] = ()):
        self.what = what
        self.where = where
        self.details = details
        self.schema = schema
        self.extra = list(extra)

    def __str__(self) -> str:
        lines = [f"{self.what}: {self.where}"]
        if self.schema:
            lines.append(f"    schema:   {self.schema}")
        lines += [f"    {line}" for line in self.extra]
        lines += [f"    - {d}" for d in self.details]
        return "\n".join(lines)


def _qualname(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def _function_text(sig: inspect.Signature) -> str:
    """`(self, other, alpha=1)`: the function's names, markers and defaults."""
    out = []
    params = list(sig.parameters.values())
    star = False
    for i, p in enumerate(params):
        if p.kind == p.KEYWORD_ONLY and not star:
            out.append("*")
        star = star or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        prefix = "*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD else ""
        out.append(prefix + (p.name if p.default is p.empty else f"{p.name}={p.default!r}"))
        if p.kind == p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind != p.POSITIONAL_ONLY):
            out.append("/")
    return "(" + ", ".join(out) + ")"


def compare_signature(schema: native.FunctionSchema, fn: Callable[..., Any]) -> tuple[list[str], str, str]:
    """The differences between a function's signature and a schema's, plus both as text."""
    expected = signature.signature(schema)
    types_by_name = {signature.python_name(a.name): a.type for a in schema.arguments.flat_all}
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        return [f"has no inspectable signature: {e}"], expected.text(), "?"
    got = list(sig.parameters.values())
    diffs = []
    for p in got:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            diffs.append(f"takes {'*' if p.kind == p.VAR_POSITIONAL else '**'}{p.name}; the schema names every parameter")
        elif p.kind == p.POSITIONAL_ONLY:
            diffs.append(f"{p.name!r} is positional-only; the schema's parameters can be passed by name")
    got = [p for p in got if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY, p.POSITIONAL_ONLY)]
    want_names = [p.py_name for p in expected.params]
    got_names = [p.name for p in got]
    missing = [n for n in want_names if n not in got_names]
    extra = [n for n in got_names if n not in want_names]
    if missing:
        diffs.append(f"missing parameter{'s' * (len(missing) > 1)}: {', '.join(missing)}")
    if extra:
        diffs.append(f"parameter{'s' * (len(extra) > 1)} not in the schema: {', '.join(extra)}")
    common_want = [n for n in want_names if n in got_names]
    common_got = [n for n in got_names if n in want_names]
    if common_want != common_got:
        diffs.append(f"parameter order differs: the schema has ({', '.join(common_want)}), the function ({', '.join(common_got)})")
    by_name = {p.name: p for p in got}
    for want in expected.params:
        p = by_name.get(want.py_name)
        if p is None:
            continue
        kwarg_only = p.kind == p.KEYWORD_ONLY
        if want.kwarg_only and not kwarg_only:
            diffs.append(f"{want.py_name!r} is keyword-only in the schema (after *), positional in the function")
        elif kwarg_only and not want.kwarg_only:
            diffs.append(f"{want.py_name!r} is positional in the schema, keyword-only in the function")
        has_default = p.default is not p.empty
        if want.has_default and not has_default:
            diffs.append(f"{want.py_name!r} has no default; the schema's is {want.default_source} ({want.type} {want.name})")
        elif has_default and not want.has_default:
            diffs.append(f"{want.py_name!r} has default {p.default!r}; the schema has none ({want.type} {want.name})")
        elif has_default and not signature.defaults_equal(want, types_by_name[want.py_name], p.default):
            diffs.append(
                f"{want.py_name!r} defaults to {p.default!r}; the schema's default is {want.default_source} ({want.type} {want.name})"
            )
    return diffs, expected.text(), _function_text(sig)


def _dispatcher_schema(name: str, namespace: str = "aten") -> str | None:
    """An operator torch registers outside native_functions.yaml (aten::sym_size.int, the
    quantized_decomposed ops, ...): its schema string without the namespace prefix, or None."""
    import torch

    base, _, overload = name.partition(".")
    try:
        schema = getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")._schema
    except (AttributeError, RuntimeError):
        return None
    return str(schema).removeprefix(f"{namespace}::")


def check_registry(registry: Any, overloads: Iterable[native.Overload] | None = None) -> list[Problem]:
    """Every mismatch between registered functions and their schemas."""
    by_name = native.index(overloads if overloads is not None else native.load())
    entries = list(registry.items())
    names_of: dict[int, list[str]] = {}
    for e in entries:
        names_of.setdefault(id(e.function), []).append(e.name)
    schema_cache: dict[str, str | None] = {}

    def schema_text(qualified: str) -> str | None:
        if qualified not in schema_cache:
            ns, _, name = qualified.partition("::")
            known = by_name.get(name) if ns == "aten" else None
            schema_cache[qualified] = known.func if known else _dispatcher_schema(name, ns) if ns in SCHEMA_NAMESPACES else None
        return schema_cache[qualified]

    problems = []
    for e in entries:
        where = _qualname(e.function) + (" (complex)" if e.complex else "")
        ns, sep, name = e.name.partition("::")
        if not sep:
            problems.append(Problem(e.name, where, ["not a qualified name (namespace::op.overload)"]))
            continue
        if ns in NON_ATEN_NAMESPACES and ns not in SCHEMA_NAMESPACES:
            continue
        if ns not in SCHEMA_NAMESPACES:
            known = ", ".join(sorted(NON_ATEN_NAMESPACES))
            problems.append(Problem(e.name, where, [f"namespace {ns!r} is neither aten nor a documented non-ATen namespace ({known})"]))
            continue
        text = schema_text(e.name)
        if text is None:
            problems.append(Problem(e.name, where, [
                f"{name} is not in native_functions.yaml nor among torch's registered {'ATen' if ns == 'aten' else ns} operators "
                "(an op some torch in the support window lacks: register it with if_torch_has=True)"
            ]))
            continue
        try:
            schema = native.parse_schema(text)
        except Exception as err:  # a dispatcher schema torchgen cannot read
            problems.append(Problem(e.name, where, [f"torchgen cannot parse the schema: {err}"], text))
            continue
        diffs, expected, got = compare_signature(schema, e.function)
        doc = (inspect.getdoc(e.function) or "").split("\n", 1)[0].strip()
        siblings = [n for n in names_of[id(e.function)] if n != e.name]
        if doc != text and doc not in {schema_text(n) for n in siblings}:
            what = f"docstring's first line is {doc!r}" if doc else "no docstring"
            diffs.append(f"{what}; it must be the schema (as above){' or that of ' + ', '.join(siblings) if siblings else ''}")
        if diffs:
            problems.append(Problem(e.name, where, diffs, text, [f"function: {got}", f"expected: {expected}"]))
    return problems


# -- generated files ----------------------------------------------------------------------------

DEFAULT_COMMANDS = ("aten", "opset")


def run_command(command: str) -> dict[str, str]:
    """What a generating command (as in a file's header) writes: relative path -> text."""
    from codegen import aten, onnx_opset
    from codegen.commands import parser

    args = parser().parse_args(shlex.split(command))
    if args.command == "aten":
        return aten.generate_current()
    if args.command == "opset":
        return onnx_opset.generate(args.opset)
    raise ValueError(f"{command!r} does not generate files")


def stubs_torch(on_disk: dict[str, str]) -> str | None:
    """The torch release the ATen stubs on disk were generated from (their __init__ names it)."""
    from codegen import aten

    init = on_disk.get(f"{aten.DIRECTORY}/__init__.py", "")
    m = aten.STUBS_TORCH.search(init.replace("\n", " "))
    return m.group(1) if m else None


def _stub_schemas(texts: Iterable[str]) -> dict[str, str]:
    """overload name -> schema, from the docstrings of generated stubs."""
    schemas = {}
    for text in texts:
        for schema in re.findall(r'^    """(\S+\(.*\) -> .*?)(?:""")?$', text, flags=re.M):
            schemas[schema.split("(", 1)[0]] = schema
    return schemas


def torch_notes(root: Path = files.ROOT) -> list[str]:
    """Where the installed torch is not the one the ATen stubs were generated from (another torch
    in the support window): the overloads it adds, changes or no longer has, as notes. The stubs
    stay those of the pinned torch; `check_generated` does not compare them then."""
    from codegen import aten

    on_disk = files.generated_files_on_disk(root)
    generated_from, installed = stubs_torch(on_disk), aten.installed_release()
    if generated_from is None or generated_from == installed:
        return []
    produced = {rel: text for rel, text in aten.generate_current().items() if rel.startswith(aten.DIRECTORY)}
    old = _stub_schemas(text for rel, text in on_disk.items() if rel.startswith(aten.DIRECTORY))
    new = _stub_schemas(produced.values())
    head = f"torch {installed} is installed; the stubs in {aten.DIRECTORY} are torch {generated_from}'s:"
    notes = []
    added = sorted(set(new) - set(old))
    changed = sorted(n for n in set(new) & set(old) if new[n] != old[n])
    gone = sorted(set(old) - set(new))
    if added:
        notes.append(f"{head} {len(added)} overload(s) without a function are new in torch {installed}: " + ", ".join(added))
    for name in changed:
        notes.append(f"{head} {name} changed its schema\n    - {old[name]}\n    + {new[name]}")
    if gone:
        notes.append(f"{head} {len(gone)} overload(s) are not in torch {installed}'s native_functions.yaml: " + ", ".join(gone))
    return notes


def check_generated(root: Path = files.ROOT, commands: Iterable[str] = DEFAULT_COMMANDS) -> list[Problem]:
    """Regenerate in memory every file the default commands and the headers found on disk name,
    and compare with the files under torchlib/generated and graph_builder/generated. The ATen
    stubs are compared only on the torch they were generated from (the pinned one); on another
    torch `torch_notes` reports how its overloads differ."""
    from codegen import aten

    on_disk = files.generated_files_on_disk(root)
    wanted = set(commands) | {c for c in map(files.command_of, on_disk.values()) if c}
    if stubs_torch(on_disk) not in (None, aten.installed_release()):
        on_disk = {rel: text for rel, text in on_disk.items() if files.command_of(text) != aten.COMMAND}
        wanted.discard(aten.COMMAND)
    expected: dict[str, tuple[str, str]] = {}
    problems = []
    for command in sorted(wanted):
        try:
            produced = run_command(command)
        except (ValueError, SystemExit) as e:
            problems.append(Problem(command, "a generated file's header", [f"not a codegen command: {e}"]))
            continue
        for rel, text in produced.items():
            expected.setdefault(rel, (command, text))
    for rel, (command, text) in sorted(expected.items()):
        fix = f"run: python -m codegen {files.command_of(text) or command}"
        old = on_disk.get(rel)
        if old is None:
            problems.append(Problem(rel, fix, ["missing"]))
        elif old != text:
            diff = list(difflib.unified_diff(old.splitlines(), text.splitlines(), "on disk", "generated", n=0, lineterm=""))
            shown = diff[2:14] + (["..."] if len(diff) > 14 else [])
            problems.append(Problem(rel, fix, ["out of date"], extra=shown))
    for rel, text in sorted(on_disk.items()):
        if rel in expected:
            continue
        command = files.command_of(text)
        if command is None:
            problems.append(Problem(rel, "generated directory", ["has no generated header: hand-written code does not belong here"]))
        else:
            problems.append(Problem(rel, f"run: python -m codegen {command}", ["stale: the command no longer produces it"]))
    return problems


def registry_notes(registry: Any) -> list[str]:
    """The functions left unregistered because the installed torch has no op for them."""
    from codegen import aten

    return [
        f"{e.name}: {_qualname(e.function)} is not registered: torch {aten.installed_release()} has no such op"
        for e in getattr(registry, "not_in_torch", [])
    ]


def run(registry: Any = None, root: Path = files.ROOT) -> tuple[list[Problem], list[str]]:
    """The problems (each a failure) and the notes (how the installed torch differs from the
    pinned one the stubs come from: not failures)."""
    if registry is None:
        import torchlib

        registry = torchlib.get_registry()
    return check_registry(registry) + check_generated(root), registry_notes(registry) + torch_notes(root)
