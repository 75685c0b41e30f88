"""`python -m codegen aten`: typed stubs for the ATen overloads that have no function yet.

One stub per functional overload of native_functions.yaml (out= and in-place variants are left
out: torch.export never emits them) that the registry does not hold, in
torchlib/generated/aten_<letter>.py by the first letter of the name (`aten__<letter>.py` for
underscore-prefixed names such as `_softmax`; the torch.special, linalg, fft, sparse and nested
namespaces get aten_special.py and so on), so no file is gigantic. Nothing imports these
modules. A stub has the overload's typed signature (codegen/signature.py), the schema as the
first docstring line and a body that raises NotImplementedError naming the overload; implementing
one means copying it into torchlib/ops, registering it and writing the body, after which the
next run drops the stub. The output depends only on the YAML and the registered names, so a
second run changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from codegen import files, native, signature

COMMAND = "aten"
DIRECTORY = "torchlib/generated"


def function_name(overload: native.Overload) -> str:
    """`aten_<name>` plus `_<overload>` in lower case: aten_add_tensor, aten__softmax."""
    name = f"aten_{overload.base_name}"
    return f"{name}_{overload.overload_name.lower()}" if overload.overload_name else name


# python_module namespaces with a module of their own (`torch.special.*` and so on).
_OWN_MODULES = ("special", "linalg", "fft", "sparse", "nested")


def module_name(overload: native.Overload) -> str:
    """aten_special, aten_linalg, aten_fft, aten_sparse, aten_nested for those namespaces, else by
    first letter: aten_a for "a...", aten__a for "_a..."."""
    if overload.python_module in _OWN_MODULES:
        return f"aten_{overload.python_module}"
    letter = overload.base_name.lstrip("_")[0].lower()
    return f"aten__{letter}" if overload.base_name.startswith("_") else f"aten_{letter}"


def stub(overload: native.Overload, fn_name: str) -> tuple[str, str]:
    """The stub's def line(s) and its whole text."""
    sig = signature.signature(overload.schema)
    doc = overload.func
    if overload.tags:
        doc += f"\n\nTags: {', '.join(overload.tags)}."
    def_text = signature.format_bracketed("", f"def {fn_name}(", sig.items(), f") -> {sig.returns}:")
    body = files.docstring(doc, "    ") + f'    raise NotImplementedError("{overload.qualified_name} has no ONNX function yet")\n'
    return def_text, def_text + "\n" + body


def _module(title: str, stubs: list[tuple[str, str]]) -> str:
    body = "\n\n".join(text for _, text in stubs)
    imports = signature.import_lines("\n".join(def_text for def_text, _ in stubs))
    doc = (
        f"ATen overloads {title} that have no ONNX function yet: {len(stubs)} typed stubs.\n\n"
        "Nothing imports this module, so a stub is never mistaken for an implementation. To implement\n"
        "one, copy it into a torchlib/ops module, register it with @aten_op and write the body; the\n"
        "next `python -m codegen aten` drops the stub from here."
    )
    head = files.header(COMMAND) + files.docstring(doc, "") + "\nfrom __future__ import annotations\n"
    if imports:
        head += "\n" + "\n".join(imports) + "\n"
    return head + "\n\n" + body


def generate(overloads: Iterable[native.Overload], registered: Iterable[str], torch_release: str = "the installed torch") -> dict[str, str]:
    """Relative path -> text of every generated stub module (and the package's __init__, which
    names the torch release whose native_functions.yaml they come from)."""
    done = set(registered)
    todo = sorted((o for o in overloads if o.is_functional and o.qualified_name not in done), key=lambda o: o.name)
    names: dict[str, str] = {}
    groups: dict[str, list[tuple[str, str]]] = {}
    for o in todo:
        fn_name = function_name(o)
        if fn_name in names:  # overloads differing only in case: keep the overload's spelling
            fn_name = f"aten_{o.base_name}_{o.overload_name}"
        if fn_name in names:
            raise ValueError(f"stubs for {names[fn_name]} and {o.name} would both be named {fn_name}")
        names[fn_name] = o.name
        groups.setdefault(module_name(o), []).append(stub(o, fn_name))
    out = {}
    for module, stubs in sorted(groups.items()):
        prefix = module.removeprefix("aten_")
        title = f"of torch.{prefix}.*" if prefix in _OWN_MODULES else f'named "{prefix}..."'
        out[f"{DIRECTORY}/{module}.py"] = _module(title, stubs)
    n_core = sum(o.is_core for o in todo)
    init_doc = (
        "Typed stubs for the ATen overloads that have no function yet, by first letter or namespace.\n\n"
        f"Written by `python -m codegen aten` from {_torch_words(torch_release)} native_functions.yaml: "
        f"{len(todo)}\nstubs, {n_core} of them tagged core. Nothing imports these modules; "
        "the registry sees only torchlib/ops."
    )
    out[f"{DIRECTORY}/__init__.py"] = files.header(COMMAND) + files.docstring(init_doc, "")
    return out


def _torch_words(release: str) -> str:
    return f"torch {release}'s" if release[:1].isdigit() else f"{release}'s"


STUBS_TORCH = re.compile(r"from torch (\d+\.\d+\.\d+)'s native_functions\.yaml")


def installed_release() -> str:
    """The installed torch as "2.13.0" (no local version: the CPU and CUDA builds have one YAML)."""
    from torchlib.torch_version import TORCH

    return ".".join(map(str, TORCH))


def generate_current() -> dict[str, str]:
    """The stubs for the installed torch and the current registry."""
    import torchlib

    return generate(native.load(), torchlib.get_registry().names(), installed_release())
