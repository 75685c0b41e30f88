"""`torchlib.onnx_export`: torch.onnx.export's calling convention, so that code written for
`torch.onnx.export(model, args, f, ..., dynamo=True)` ports by changing that one line."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import torch

from torchlib.exporter.dynamic_shapes import from_dynamic_axes
from torchlib.exporter.export import export
from torchlib.exporter.result import ExportResult


def onnx_export(
    model: torch.nn.Module | torch.export.ExportedProgram,
    args: tuple[Any, ...] = (),
    f: str | os.PathLike[str] | None = None,
    *,
    kwargs: dict[str, Any] | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset_version: int | None = None,
    dynamic_axes: Mapping[str, Mapping[int, str]] | Mapping[str, Sequence[int]] | None = None,
    dynamic_shapes: Any = None,
    external_data: bool = True,
    custom_translation_table: Mapping[Any, Callable[..., Any]] | None = None,
    dynamo: bool = True,
    export_params: bool = True,
    keep_initializers_as_inputs: bool = False,
    verify: bool = False,
    verbose: bool | None = None,
    report: bool = False,
    optimize: bool = True,
    profile: bool = False,
    dump_exported_program: bool = False,
    artifacts_dir: str | os.PathLike[str] = ".",
    do_constant_folding: bool = True,
    export_modules_as_functions: bool | Collection[type[torch.nn.Module]] = False,
) -> ExportResult:
    """torch.onnx.export(..., dynamo=True) with torchlib's functions. Returns an ExportResult
    (like torch's ONNXProgram: `model_proto`, `save(path)`, calling it runs onnxruntime), and
    writes it to `f` when given, weights in `<f>.data` when `external_data`.

    Same meaning as torch.onnx.export: `kwargs`, `input_names`, `output_names`,
    `opset_version` (default 23), `dynamic_axes`, `dynamic_shapes`, `external_data`,
    `custom_translation_table` ({torch op: function}, torchlib's `functions`), `verify` (compare
    with torch on `args`; raises on a mismatch), `export_modules_as_functions` (True: every
    module call below the root as a model-local function, or the module classes to keep;
    torchlib's `functions="modules"` / `functions=[classes]`, from torch.onnx's TorchScript
    exporter, which the dynamo exporter does not implement). As in torch.onnx, the graph's outputs
    are forward's alone: the new value of a buffer forward writes is not one (a warning names it;
    `torchlib.export` returns it). As in torch.onnx, a dict at the end of `args` is
    the keyword arguments (when `kwargs` is not given), and a `torch.onnx.ExportableModule` given
    without arguments supplies its `example_arguments()`, `input_names()`, `output_names()` and
    `dynamic_shapes()`. Accepted and without effect here: `dynamo`,
    `verbose`, `report`, `optimize`, `profile`, `dump_exported_program`, `artifacts_dir`,
    `do_constant_folding` (torchlib folds constants while building). `export_params=False` and
    `keep_initializers_as_inputs=True` are not supported and raise.
    """
    if not export_params or keep_initializers_as_inputs:
        raise ValueError("torchlib.onnx_export always stores the weights as initializers: "
                         "export_params=False and keep_initializers_as_inputs=True are not supported")
    if dynamic_axes is not None and dynamic_shapes is not None:
        raise ValueError("give dynamic_shapes or dynamic_axes, not both (as torch.onnx.export)")
    exportable = _exportable_module(model)
    if exportable is not None and not args and not kwargs:
        args, kwargs = exportable.example_arguments()
        input_names = input_names if input_names is not None else exportable.input_names()
        output_names = output_names if output_names is not None else exportable.output_names()
        dynamic_shapes = dynamic_shapes if dynamic_shapes is not None else exportable.dynamic_shapes()
    if not isinstance(args, tuple):
        args = (args,)
    if not kwargs and args and isinstance(args[-1], dict):
        args, kwargs = args[:-1], args[-1]  # torch.onnx reads a trailing dict as the keyword arguments
    kwargs = dict(kwargs or {})
    if dynamic_axes is not None and not isinstance(model, torch.export.ExportedProgram):
        dynamic_shapes = from_dynamic_axes(model.forward, args, kwargs, dynamic_axes, input_names)
    # torch.onnx does not compare the model with torch unless asked (verify=True); its users'
    # translation tables may compute something else on purpose, so with one the self-check is
    # left to `verify`
    check = False if custom_translation_table and not verify else None
    functions: list[Any] = [custom_translation_table] if custom_translation_table else []
    if export_modules_as_functions is True:
        functions.append("modules")
    elif export_modules_as_functions:
        functions.extend(export_modules_as_functions)
    result = export(model, args, kwargs, dynamic_shapes, opset=opset_version or 23, input_names=input_names,
                    output_names=output_names, functions=functions or None, check=check, written_outputs=False)
    if verify:
        bad = [d for d in result.verify(*args, **kwargs) if not d.ok()]
        if bad:
            raise AssertionError(f"the ONNX model differs from torch: {bad}")
    if f is not None:
        result.save(f, external_data=external_data)
    return result


def _exportable_module(model: Any) -> Any:
    """`model` when it is a torch.onnx.ExportableModule (torch 2.10+), which supplies its own
    example arguments, names and dynamic shapes; else None."""
    exportable = getattr(torch.onnx, "ExportableModule", None)
    return model if exportable is not None and isinstance(model, exportable) else None
