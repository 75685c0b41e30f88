"""`python -m torchlib export MODULE:FACTORY -o model.onnx --verify` and `python -m torchlib demo`.

A mistake of the user's (a module that does not exist, a bad --dynamic spec, a model torch.export
cannot capture, an op without a function) prints one clear message to stderr and exits with 2;
`--debug` shows the full traceback instead.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import io
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch


class UsageError(Exception):
    """A mistake in what the user asked for: printed as one message, no traceback."""


def _user_errors() -> tuple[type[BaseException], ...]:
    from graph_builder.weight_sources import SafetensorsError
    from torchlib.exporter import CaptureError, DynamicShapesError, UnsupportedOpsError
    from torchlib.exporter.checkpoint import WeightsError

    return UsageError, CaptureError, DynamicShapesError, UnsupportedOpsError, WeightsError, SafetensorsError


def run_cli(main: Callable[[argparse.Namespace], int], parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Parse, run, and turn expected errors into one message on stderr (exit 2); an unexpected
    one (a bug of ours) into a short message that says how to see and report it (exit 3)."""
    parser.add_argument("--debug", action="store_true", help="show full tracebacks and torch's own reports")
    ns = parser.parse_args(argv)
    try:
        return main(ns)
    except _user_errors() as e:
        if ns.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if ns.debug:
            raise
        last = traceback.extract_tb(e.__traceback__)[-1]
        print(f"error: {type(e).__name__}: {e}\n  (raised at {last.filename}:{last.lineno}; rerun with --debug for "
              "the traceback, and please report it if the model is valid)", file=sys.stderr)
        return 3


# -- the model to export ---------------------------------------------------------------------


def load_factory(spec: str) -> Callable[[], Any]:
    """MODULE:FACTORY -> the factory; MODULE is a dotted module name or a path to a .py file."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"expected MODULE:FACTORY (for example mypkg.models:make), got {spec!r}")
    if module_name.endswith(".py") or os.sep in module_name:
        module = _import_path(module_name)
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name and module_name.startswith(e.name):
                raise UsageError(f"no module named {module_name!r} (looked in {os.getcwd()} and sys.path; "
                                 f"run from the directory that contains it, or give a path: path/to/file.py:{attr})") from e
            raise UsageError(f"importing {module_name!r} failed: {e}{_causes(e)}{_at(e)}") from e
        except Exception as e:
            raise UsageError(f"importing {module_name!r} failed: {type(e).__name__}: {e}{_causes(e)}{_at(e)}") from e
    factory = getattr(module, attr, None)
    if factory is None:
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")
                       and getattr(v, "__module__", None) == module.__name__)
        raise UsageError(f"module {module_name!r} has no {attr!r}" + (f"; it defines: {', '.join(names)}" if names else ""))
    if not callable(factory):
        raise UsageError(f"{spec} is a {type(factory).__name__}, not a function returning (model, args)")
    return factory


def _import_path(path: str) -> Any:
    if not os.path.isfile(path):
        raise UsageError(f"no file {path!r}")
    # under a private name of its own: a file named copy.py or json.py must not stand in for the
    # standard library's module of that name (sys.modules is shared with torch)
    stem = os.path.splitext(os.path.basename(path))[0]
    digest = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:8]
    name = f"_torchlib_user_{digest}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise UsageError(f"importing {path!r} failed: {type(e).__name__}: {e}{_causes(e)}{_at(e)}") from e
    return module


def _causes(e: BaseException) -> str:
    """The errors behind `e`, innermost last: a library that wraps an import error (transformers'
    "Could not import module 'LlamaConfig'") says what went wrong only in its cause."""
    lines, seen = [], {id(e)}
    cause = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        lines.append(f"\n  caused by {type(cause).__name__}: {cause}")
        cause = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
    return "".join(lines)


def _at(e: BaseException) -> str:
    from torchlib.exporter.explain import user_frame

    where = user_frame(e)
    return f"\n  at {where}" if where else ""


def make_model(factory: Callable[[], Any], spec: str) -> tuple[torch.nn.Module, tuple, dict]:
    try:
        made = factory()
    except Exception as e:
        raise UsageError(f"{spec}() raised {type(e).__name__}: {e}{_causes(e)}{_at(e)}") from e
    if not isinstance(made, (tuple, list)) or len(made) not in (2, 3):
        raise UsageError(f"{spec}() must return (model, args) or (model, args, kwargs), got {type(made).__name__}")
    model, args = made[0], made[1]
    kwargs = made[2] if len(made) == 3 else {}
    if not isinstance(model, torch.nn.Module) and not hasattr(model, "graph_signature"):
        raise UsageError(f"{spec}() returned a {type(model).__name__} as the model: expected a torch.nn.Module")
    if not isinstance(kwargs, dict):
        raise UsageError(f"{spec}(): the third item (kwargs) must be a dict, got {type(kwargs).__name__}")
    return model, tuple(args) if isinstance(args, (tuple, list)) else (args,), kwargs


# -- --dynamic --------------------------------------------------------------------------------

DYNAMIC_HELP = ("mark dimensions dynamic: INPUT:AXIS=NAME[,AXIS=NAME...], e.g. --dynamic x:0=batch,1=seq. "
                "INPUT is the forward() parameter name or its position (0, 1, ...); the same NAME on two "
                "inputs is the same dimension. Repeat the option for each input.")


def parse_dynamic(specs: list[str], model: Any, args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """--dynamic specs -> torch.export dynamic_shapes keyed by forward()'s parameter names."""
    if not specs:
        return None
    forward = model.forward if isinstance(model, torch.nn.Module) else model.module().forward
    try:
        bound = inspect.signature(forward).bind(*args, **kwargs)
    except TypeError as e:
        raise UsageError(f"the factory's args do not fit forward{inspect.signature(forward)}: {e}") from e
    names = list(bound.arguments)
    dims: dict[str, torch.export.Dim] = {}
    shapes: dict[str, Any] = {n: None for n in names}
    for spec in specs:
        who, sep, axes = spec.partition(":")
        if not sep or not axes:
            raise UsageError(f"--dynamic {spec!r}: expected INPUT:AXIS=NAME[,AXIS=NAME...], e.g. x:0=batch,1=seq")
        name = names[int(who)] if who.isdigit() and int(who) < len(names) else who
        if name not in names:
            raise UsageError(f"--dynamic {spec!r}: forward() has no input {who!r}; its inputs are {', '.join(names)}")
        value = bound.arguments[name]
        if not isinstance(value, torch.Tensor):
            raise UsageError(f"--dynamic {spec!r}: input {name!r} is a {type(value).__name__}, not a tensor")
        per_input = shapes[name] or {}
        for item in axes.split(","):
            axis_text, eq, dim_name = item.partition("=")
            try:
                axis = int(axis_text)
            except ValueError:
                raise UsageError(f"--dynamic {spec!r}: {axis_text!r} is not an axis number") from None
            if not eq or not dim_name.isidentifier():
                raise UsageError(f"--dynamic {spec!r}: give each axis a name that is an identifier, e.g. {axis}=batch")
            if not -value.dim() <= axis < value.dim():
                raise UsageError(f"--dynamic {spec!r}: input {name!r} has {value.dim()} dims, no axis {axis}")
            per_input[axis % value.dim()] = dims.setdefault(dim_name, torch.export.Dim(dim_name))
        shapes[name] = per_input
    return shapes


# -- commands ---------------------------------------------------------------------------------


def _writable(path: str) -> str:
    """Create the output's directory, or say why it cannot be; before any export work."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create the output directory {directory!r}: {e.strerror}") from e
    if os.path.isdir(path):
        raise UsageError(f"the output path {path!r} is a directory; give a file name such as {os.path.join(path, 'model.onnx')}")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"cannot write to {directory!r}: permission denied")
    return path


def export_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m torchlib export",
        description="Export a model to ONNX. FACTORY() returns (model, args) or (model, args, kwargs): "
                    "the model and the example inputs to trace it with.")
    parser.add_argument("factory", help="MODULE:FACTORY (mypkg.models:make) or path/to/file.py:FACTORY")
    parser.add_argument("-o", "--output", required=True, help="path of the .onnx file (its directory is created)")
    parser.add_argument("--opset", type=int, default=23, metavar="N",
                        help="ONNX opset to target, 18 to 23 (default 23, which has Attention, RMSNormalization "
                             "and the other fused ops; lower opsets write formulas instead)")
    parser.add_argument("--dynamic", action="append", default=[], metavar="INPUT:AXIS=NAME,...", help=DYNAMIC_HELP)
    parser.add_argument("--output-names", default=None, metavar="A,B,...", help="names for the graph's outputs, in order")
    parser.add_argument("--verify", action="store_true", help="run in onnxruntime and compare with torch")
    parser.add_argument("--external-data", action="store_true",
                        help="write the weights to OUTPUT.data next to the model (automatic over 2 GB)")
    parser.add_argument("--weights", action="append", default=[], metavar="PATH",
                        help="take the weights from this safetensors file or directory (repeat for shards); the "
                             "model may then be on the meta device")
    parser.add_argument("--weight-quantization", choices=("int4", "int8"), default=None,
                        help="store MatMul / Gemm weights as int4 or int8 (DequantizeLinear -> MatMul, opset 21+)")
    parser.add_argument("--block-size", type=int, default=32, help="quantization block size (default 32)")
    parser.add_argument("--asymmetric", action="store_true", help="quantize with a zero point (unsigned types)")
    parser.add_argument("--exact-nan", action="store_true",
                        help="torch's answer on NaN inputs and near the dtype's largest value too, at the cost of nodes "
                             "(default: the runtime's native ops there; docs/nan_latency.md)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar while the weights are written (it shows only on a terminal)")
    return run_cli(_export, parser, argv)


def _export(ns: argparse.Namespace) -> int:
    from torchlib.exporter import export

    if not 18 <= ns.opset <= 23:
        raise UsageError(f"--opset {ns.opset}: torchlib writes opsets 18 to 23")
    quantization = None
    if ns.weight_quantization:
        from graph_builder.optimizer.quantization import MIN_OPSET, WeightQuantization

        if ns.opset < MIN_OPSET:
            raise UsageError(f"--weight-quantization needs --opset {MIN_OPSET} or more (blocked DequantizeLinear)")
        try:
            quantization = WeightQuantization(ns.weight_quantization, ns.block_size, not ns.asymmetric)
        except ValueError as e:
            raise UsageError(str(e)) from None
    for path in ns.weights:
        if not os.path.exists(path):
            raise UsageError(f"--weights {path}: no such file or directory")
    weights = (ns.weights[0] if len(ns.weights) == 1 else ns.weights) or None
    output = _writable(ns.output)
    model, args, kwargs = make_model(load_factory(ns.factory), ns.factory)
    dynamic = parse_dynamic(ns.dynamic, model, args, kwargs)
    # torch prints partial graphs to stderr when capture fails: without --debug our one
    # paragraph replaces them (CaptureError)
    with contextlib.nullcontext() if ns.debug else contextlib.redirect_stderr(io.StringIO()):
        result = export(model, args, kwargs, dynamic_shapes=dynamic, opset=ns.opset, weights=weights,
                        weight_quantization=quantization, exact_nan=ns.exact_nan)  # fmt: skip
    if ns.output_names:
        result.rename_outputs([n.strip() for n in ns.output_names.split(",")])
    data = result.save(output, external_data=True if ns.external_data else None, progress=not ns.no_progress)
    size = sum(os.path.getsize(p) for p in (output, data) if p and os.path.exists(p))
    weights = f", weights in {data}" if data else ""
    print(f"wrote {output} ({size / 1e6:.1f} MB{weights}): {result.node_count} nodes, opset {ns.opset}, "
          f"exported in {result.timings['total']:.2f} s")
    for d in result.diagnostics:
        if d.startswith("WARNING: "):
            print("warning:", d[len("WARNING: "):], file=sys.stderr)
        else:
            print("note:", d)
    if ns.verify:
        return _report_verify(result.verify(*args, **kwargs))
    return 0


def _report_verify(diffs: list[Any]) -> int:
    bad = 0
    for d in diffs:
        status = "ok" if d.ok() else "MISMATCH"
        bad += status != "ok"
        atol, rtol = d.tolerance
        print(f"  {d.name}: max abs {d.max_abs:.2e} (allowed {atol * d.scale:.1e} = atol {atol:g} x output scale "
              f"{d.scale:.3g}), max rel {d.max_rel:.2e} (allowed {rtol:g}; either suffices), "
              f"dtype {'ok' if d.dtype_ok else 'DIFFERS'}, shape {'ok' if d.shape_ok else 'DIFFERS'}: {status}")
    return 1 if bad else 0


def demo_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchlib demo", description="Export and verify the built-in demo models.")
    parser.add_argument("--output-dir", default=None, help="also save the .onnx files here (created if missing)")
    return run_cli(_demo, parser, argv)


def _demo(ns: argparse.Namespace) -> int:
    from torchlib.exporter import export
    from torchlib.exporter.demo import DEMOS

    if ns.output_dir:
        _writable(os.path.join(ns.output_dir, "demo.onnx"))
    rows = []
    failed = 0
    start = time.perf_counter()
    for name, (factory, dynamic) in DEMOS.items():
        model, args = factory()
        export(model, args, dynamic_shapes=dynamic() if dynamic else None)  # warm-up: first-call costs
        t = time.perf_counter()
        result = export(model, args, dynamic_shapes=dynamic() if dynamic else None)
        seconds = time.perf_counter() - t
        diffs = result.verify(*args)
        ok = all(d.ok() for d in diffs)
        failed += not ok
        path = os.path.join(ns.output_dir, f"{name}.onnx") if ns.output_dir else None
        if path is not None:
            result.save(path)
        rows.append((name, max(d.max_abs for d in diffs), result.node_count, seconds, "ok" if ok else "MISMATCH", path))
    print(f"{'model':<12} {'max abs err':>12} {'nodes':>6} {'export s':>9}  verified")
    for name, err, nodes, seconds, status, path in rows:
        print(f"{name:<12} {err:>12.2e} {nodes:>6} {seconds:>9.2f}  {status}" + (f"  -> {path}" if path else ""))
    print(f"(export s: one export after a warm-up export of the same model; the whole demo took "
          f"{time.perf_counter() - start:.1f} s including loading the function library and verifying)")
    return 1 if failed else 0
