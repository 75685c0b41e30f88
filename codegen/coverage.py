"""`python -m codegen coverage [--json] [--missing core|all|none]`: which ATen overloads have functions.

Counted over the functional overloads of native_functions.yaml: out= and in-place variants are
excluded (torch.export functionalizes them away; `mutable` ones such as
`_native_batch_norm_legit` are counted). Reported: core ATen IR (the overloads tagged `core`),
every functional overload, each python_module namespace (torch, nn, linalg, fft, special,
sparse, nested), the registered names per registry namespace, and the missing overloads.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable, Mapping
from typing import Any

from codegen import native
from codegen.decomposed import Route


def _stats(group: list[native.Overload], done: set[str]) -> dict[str, Any]:
    missing = [o.qualified_name for o in group if o.qualified_name not in done]
    covered = len(group) - len(missing)
    return {
        "covered": covered,
        "total": len(group),
        "percent": round(100.0 * covered / len(group), 1) if group else 100.0,
        "missing": missing,
    }


def coverage(overloads: Iterable[native.Overload], registered: Iterable[str],
             decomposed: Mapping[str, Route] | None = None) -> dict[str, Any]:
    """The report as data (what `--json` prints). `decomposed`: the missing overloads that export
    through a torch decomposition (codegen/decomposed.py), reported under "decomposed"."""
    overloads = list(overloads)
    done = set(registered)
    functional = sorted((o for o in overloads if o.is_functional), key=lambda o: o.name)
    by_name = native.index(overloads)
    namespaces: dict[str, dict[str, int]] = {}
    for name in sorted(done):
        ns, _, rest = name.partition("::")
        counts = namespaces.setdefault(ns, {"registered": 0})
        counts["registered"] += 1
        if ns == "aten":
            o = by_name.get(rest)
            key = "not_in_yaml" if o is None else "functional" if o.is_functional else "out_or_inplace"
            counts[key] = counts.get(key, 0) + 1
    modules = sorted({o.python_module for o in functional})
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = "unknown"
    report: dict[str, Any] = {
        "torch": torch_version,
        "scope": "functional overloads of native_functions.yaml; out= and in-place variants excluded",
        "core": _stats([o for o in functional if o.is_core], done),
        "all": _stats(functional, done),
        "python_modules": {m or "torch": _stats([o for o in functional if o.python_module == m], done) for m in modules},
        "registered_namespaces": namespaces,
    }
    if decomposed is not None:
        report["decomposed"] = {name: route.as_dict() for name, route in sorted(decomposed.items())}
    return report


def _line(label: str, s: dict[str, Any]) -> str:
    return f"  {label:<28} {s['covered']:>5} / {s['total']:<5} {s['percent']:5.1f}%"


def format_report(report: dict[str, Any], missing: str = "core") -> str:
    lines = [
        f"ATen coverage, native_functions.yaml of torch {report['torch']}",
        f"({report['scope']})",
        "",
        _line("core ATen IR (tag core)", report["core"]),
        _line("all functional overloads", report["all"]),
        "",
        "by namespace (python_module):",
    ]
    lines += [_line(name, s) for name, s in report["python_modules"].items()]
    lines += ["", "registered names by registry namespace:"]
    for ns, counts in report["registered_namespaces"].items():
        detail = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items() if k != "registered")
        lines.append(f"  {ns:<28} {counts['registered']:>5}" + (f"   ({detail})" if detail else ""))
    if missing != "none":
        names = report[missing]["missing"]
        kind = "core " if missing == "core" else ""
        if "decomposed" in report:
            lines += _missing(names, {n: Route(**report["decomposed"][n]) for n in names if n in report["decomposed"]},
                              kind)
        else:
            lines += ["", f"missing {kind}overloads ({len(names)}):"]
            lines += [f"  {n}" for n in names]
        if missing == "core":
            lines += ["", f"(`--missing all` lists all {len(report['all']['missing'])} missing overloads)"]
    return "\n".join(lines)


def _missing(names: list[str], decomposed: dict[str, Route], kind: str) -> list[str]:
    """The missing overloads in two lists: those that need a function, and those that export
    through a torch decomposition today, each with what that gives."""
    failed = {n: route for n, route in decomposed.items() if route.error}  # measured with --nodes
    decomposed = {n: route for n, route in decomposed.items() if n not in failed}
    needed = [n for n in names if n not in decomposed]
    lines = ["", f"missing {kind}overloads ({len(names)}): {len(needed)} need a function, {len(decomposed)} export "
                 "through a torch decomposition", "", f"missing {kind}overloads that need a function ({len(needed)}):"]
    lines += [f"  {n}" + (f"  {failed[n]}" if n in failed else "") for n in needed]
    if decomposed:
        lines += ["", f"missing {kind}overloads that export through a torch decomposition ({len(decomposed)}); a "
                      "function is worth writing when it gives fewer nodes or closer numbers (--nodes counts them):"]
        width = max(len(n) for n in decomposed)
        lines += [f"  {n:<{width}}  {route}" for n, route in decomposed.items()]
    return lines


def _query(name: str) -> str:
    query = name.strip().replace("aten.", "aten::", 1) if name.startswith("aten.") else name.strip()
    return query.removeprefix("aten::").removesuffix(".default")


def matching(name: str, overloads: Iterable[native.Overload]) -> list[native.Overload]:
    """The overloads NAME names ('aten::add.Tensor', 'add.Tensor', 'add' for all, 'aten.add.Tensor')."""
    query = _query(name)
    return [o for o in overloads if o.name == query or o.base_name == query]


def describe_op(name: str, overloads: Iterable[native.Overload], registered: dict[str, str],
                decomposed: Mapping[str, Route] | None = None) -> str:
    """`--op NAME`: whether an overload has a function, its schema, and where to start one.
    NAME may be 'aten::add.Tensor', 'add.Tensor', 'add' (every overload of add) or 'aten.add.Tensor'.
    `registered` maps each registered name to the function that implements it; `decomposed`
    says how the exporter handles those without one (codegen/decomposed.py)."""
    from codegen import aten

    overloads = list(overloads)
    matches = matching(name, overloads)
    query = _query(name)
    if not matches:
        near = sorted({o.base_name for o in overloads if query.split(".")[0] in o.base_name})[:10]
        hint = f" Similar names: {', '.join(near)}." if near else ""
        return f"{name}: no such overload in native_functions.yaml.{hint}"
    lines = []
    for o in sorted(matches, key=lambda o: o.name):
        if o.qualified_name in registered:
            status = f"has a function: {registered[o.qualified_name]}"
        elif not o.is_functional:
            status = (f"is an {o.kind.lower()} variant: torch.export turns it into its functional form, "
                      "which is the overload to implement")
        else:
            status = (f"has no function yet; its typed stub `{aten.function_name(o)}` is in "
                      f"torchlib/generated/{aten.module_name(o)}.py: copy it into a torchlib/ops module "
                      "and write the body (CONTRIBUTING.md)")
            if decomposed is not None:
                route = decomposed.get(o.qualified_name)
                status += f"\n  today it {route}" if route else "\n  torch has no decomposition for it: it does not export today"
        tags = f"  [{', '.join(o.tags)}]" if o.tags else ""
        lines.append(f"{o.qualified_name}{tags}\n  {o.func}\n  {status}")
    return "\n".join(lines)
