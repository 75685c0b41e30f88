"""torchlib.export: nn.Module -> torch.export ATen graph -> ONNX, through the registry.

The loop knows torch.export and the registry, nothing about any one op: every call_function
node is looked up by its ATen overload and the function is called under the tracing evaluator.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import time
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import torch
import torch.utils._pytree as pytree

from graph_builder import GraphBuilder, op, types
from graph_builder.evaluator import loose_reads
from graph_builder.ir import Value, real_view
from graph_builder.opset import OpError, torch_to_numpy
from graph_builder.optimizer import optimize as optimize_graph
from graph_builder.optimizer import optimize_for_onnxruntime, runtime_guards
from graph_builder.optimizer.folding import BATCH_NORMS_LEFT
from graph_builder.optimizer.onnxruntime import OnnxRuntime
from graph_builder.optimizer.quantization import WeightQuantization, check_opset, packed_projections, quantize_weights
from torchlib.exporter import dataclass_trees, self_check
from torchlib.exporter.capture import EXPORT_LOCK, caller_level, capture, keywords_as_parameters
from torchlib.exporter.checkpoint import Weights, WeightsError, attached, meta_tensors
from torchlib.exporter.decompose import (
    NeedsWholeProgramDecomposition,
    decompose_node,
    decompose_view_write,
    replay_view_write,
)
from torchlib.exporter.dynamic_shapes import became_static, path_conditions, specialising_guards
from torchlib.exporter.dynamic_shapes import normalize as normalize_dynamic_shapes
from torchlib.exporter.errors import ExportError
from torchlib.exporter.explain import quiet_torch
from torchlib.exporter.hf_cache import contains_cache, registered
from torchlib.exporter.module_functions import MODULE_CALL, Functions, ModuleSelection, outline_modules, split
from torchlib.exporter.mutation import Aliases, functional_variant, is_inplace_view, written_nodes
from torchlib.exporter.names import leaf_names
from torchlib.exporter.onnxscript_functions import adapt as adapt_function
from torchlib.exporter.result import ExportResult
from torchlib.exporter.size_checks import checked, implied_assertions, require_path_conditions
from torchlib.exporter.source import module_class, module_path, source_line
from torchlib.exporter.stack_room import with_stack_room
from torchlib.exporter.storage import storage_arguments
from torchlib.exporter.subgraph import Translator, all_nodes, attribute, fx_type
from torchlib.exporter.torch_onnx_flag import onnx_exporting
from torchlib.registry import REGISTRY, Registry, qualified_name


class UnsupportedOpsError(RuntimeError):
    """The model uses ATen ops that have no torchlib function (all of them listed at once)."""


def _load_ops() -> Registry:
    import torchlib.ops  # noqa: F401  (fills the registry)

    return REGISTRY


def decomposition_table(registry: Registry) -> dict[Any, Any]:
    """torch's default decompositions minus every op the registry implements, so fused ops
    (attention, layer norm, gelu, linear) stay fused and reach their ONNX form."""
    table = torch.export.default_decompositions()
    for overload in list(table.keys()):
        if overload in registry:
            table.pop(overload)
    return table


def export(
    model: torch.nn.Module | torch.export.ExportedProgram,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    dynamic_shapes: Any = None,
    *,
    opset: int = 23,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    functions: Functions | None = None,
    optimize: bool = True,
    weights: Weights | None = None,
    weight_quantization: str | WeightQuantization | None = None,
    check: bool | None = None,
    exact_nan: bool = False,
    written_outputs: bool = True,
    target: str | OnnxRuntime = "onnx",
) -> ExportResult:
    """Export `model(*args, **kwargs)` to ONNX.

    model: an nn.Module, or an ExportedProgram (then args, kwargs and dynamic_shapes are not
        used: the program is already captured).
    args, kwargs: sample inputs; a single tensor may be given for args.
    dynamic_shapes: which dims are dynamic, as torch.export or torch.onnx take it: per input a
        dict {axis: spec} (or a list of specs), a spec being a name (`{0: "batch"}`, the name
        of that dim in the ONNX graph), `torch.export.Dim("batch")`, `Dim.AUTO`, `Dim.DYNAMIC`
        or None; keyed by forward's parameter names or in their order, nested like the inputs.
        A transformers KV cache (DynamicCache, StaticCache, EncoderDecoderCache) is an input
        like any other: its spec is `[[spec per layer's key], [spec per layer's value]]`, its
        tensors are named `past_key_values.{i}.key` / `.value`, and a cache the model returns
        `present.{i}.key` / `.value` (see hf_cache.py; torchlib.generation runs the result).
    opset: the ONNX opset of the model (18 and up; 23 by default).
    input_names, output_names: names of the ONNX inputs (one per tensor input, flattened) and
        of the outputs of forward.
    functions: a translation table {torch op (e.g. torch.ops.mylib.foo.default) or "mylib::foo":
        function}, used instead of (or in addition to) the library's functions; see
        `torchlib.aten_op`. A function may be written with onnxscript's `op` (trace-only or
        `@onnxscript.script()`), as for torch.onnx; a list of functions is dispatched on the
        inputs' dtypes (torchlib/exporter/onnxscript_functions.py).
        Or "modules": every call of an nn.Module below the root becomes an ONNX model-local
        function (domain "pkg.<the class's module>", named after the class), nested calls
        calls inside its body; or nn.Module classes (`functions=[EncoderBlock]`): the calls of
        those classes only. A list combines them: `functions=["modules", table]`. Calls that
        compute the same share one function, weights are its inputs; inlining the functions
        gives the graph of the default export (docs/exporter_front_end.md, "Modules as functions").
    optimize: run the export-time optimizer (folding, BatchNorm into Conv, fusions into
        RMSNormalization / Gelu / RotaryEmbedding, CSE; see docs/optimizer.md).
    weights: where the weights come from, when not from the model (which may then be on the
        meta device): a state dict (name -> tensor or numpy array), or the path of a
        safetensors file, a list of them, or a directory of them (mapped, never read whole).
        Names are the model's state_dict keys. The model keeps its own tensors; `save()` writes
        each weight from the checkpoint, tensor by tensor (docs/big_models.md).
    weight_quantization: "int4" or "int8" (block size 32, symmetric), or
        `WeightQuantization(dtype, block_size, symmetric)` (graph_builder.optimizer.quantization):
        the float weights of MatMul / Gemm become `DequantizeLinear(w_q, scale[, zero_point],
        axis, block_size) -> MatMul`, standard ONNX of opset 21 and later (docs/big_models.md).
    check: the self-check on the sample (self_check.py): the captured program and the ONNX
        model must reproduce torch eager on the sample inputs, else SelfCheckError names the
        first output that differs. None (default): when cheap, and always after draft_export;
        True: always; False: never.
    exact_nan: False (default): functions use onnxruntime's native ops where the only
        difference from torch is NaN and overflow handling (max pooling of a window holding a
        NaN, recurrent layers after a NaN step, HardSwish, InstanceNormalization for group and
        instance norm, DeformConv; docs/nan_latency.md lists each difference): the graph
        runtimes run fastest, and a NaN input may give numbers where torch gives NaN, values
        within a few ulps of the dtype's largest may differ. True: torch's answer on those
        edges too, at the cost of extra nodes. Recorded in the model's metadata
        (`torchlib.exact_nan`).
    written_outputs: the new values of the buffers and inputs forward writes
        (`self.buf.add_(1)`, BatchNorm's running statistics in train mode) are the model's
        first outputs (default; `result.written_inputs` names them). False: only forward's
        outputs, as torch.onnx exports a model; a warning names each new value left out.

    Capture tries torch.export non-strict, then strict, then draft_export
    (`result.capture_strategy` says which worked). Returns an ExportResult: `graph` (its
    initializers are views of the model's parameters, not copies), `save(path)`, `model_proto`,
    calling it runs onnxruntime, `verify(*args)` compares with torch, `diagnostics` lists what
    the exporter noticed. Works at any model size (external data over 2 GB).
    """
    # with room on CPython's frame stack: torch.export's deep dispatch otherwise thrashes its
    # chunks at some caller depths (up to 2.5x slower capture; see stack_room.py)
    with EXPORT_LOCK, onnx_exporting():  # one export at a time (see capture.py)
        return with_stack_room(_export, model, args, kwargs, dynamic_shapes, opset, input_names, output_names,
                               functions, optimize, weights, weight_quantization, check, exact_nan, written_outputs,
                               OnnxRuntime.of(target))


def _export(model: torch.nn.Module | torch.export.ExportedProgram, args: Any, kwargs: Mapping[str, Any] | None,
            dynamic_shapes: Any, opset: int, input_names: Sequence[str] | None, output_names: Sequence[str] | None,
            functions: Functions | None, optimize: bool,
            weights: Weights | None = None, weight_quantization: str | WeightQuantization | None = None,
            check: bool | None = None, exact_nan: bool = False, written_outputs: bool = True,
            target: OnnxRuntime | None = None) -> ExportResult:
    with quiet_torch():
        registry = _load_ops()
        table, modules = split(functions)
        if modules is not None and isinstance(model, torch.nn.Module):
            modules = dataclasses.replace(modules, root=model)  # its modules' settings label the calls
        if table:
            registry = registry.extended({target: adapt_function(f) for target, f in table.items()})
        if not isinstance(args, tuple):
            args = (args,)
        kwargs = dict(kwargs or {})
        quantization = None if weight_quantization is None else WeightQuantization.of(weight_quantization)
        if quantization is not None:
            check_opset(opset)  # before the capture: say it at once
        timings: dict[str, float] = {}
        notes: list[str] = []
        start = time.perf_counter()
        requested, refinements = [], []
        caches = contains_cache((args, kwargs))  # never imports transformers
        if caches and input_names is None and isinstance(model, torch.nn.Module):
            kwargs = _in_forward_order(model.forward, kwargs)
        if isinstance(model, torch.export.ExportedProgram):
            if weights is not None:
                raise TypeError("export(ExportedProgram, weights=...): the program holds its weights already; "
                                "give the nn.Module to use a checkpoint's weights")  # fmt: skip
            ep, strategy, dim_names, dataclass_types = model, "ExportedProgram", {}, set()
            model = ep.module()
        else:
            # transformers' KV caches and plain dataclasses as pytrees while capturing
            with registered(caches), keywords_as_parameters(model, kwargs), \
                    dataclass_trees.capturing(model, args, kwargs) as dataclass_types:
                spec = normalize_dynamic_shapes(model.forward, args, kwargs, dynamic_shapes)
                if weights is None:
                    no_data = meta_tensors(model)
                    if no_data:
                        raise WeightsError(f"the model's weights are on the meta device (no data: {', '.join(no_data[:3])}"
                                           f"{', ...' if len(no_data) > 3 else ''}): give them with export(..., weights=<state "
                                           f"dict, or path(s) of safetensors files>)")  # fmt: skip
                    captured = capture(model, args, kwargs, spec.dynamic_shapes, spec.size_one)
                else:
                    with attached(model, weights) as weight_notes:
                        captured = capture(model, args, kwargs, spec.dynamic_shapes, spec.size_one)
                    notes.extend(weight_notes)
                    model = captured.program.module()  # runs in torch on the checkpoint's tensors (verify)
                input_names = _cache_input_names(captured.program, args, kwargs, input_names)
            ep, strategy, dim_names = captured.program, captured.strategy, spec.dim_names
            notes.extend(captured.notes)
            notes.extend(_training_mode(ep))
            requested, refinements = spec.requested, captured.refinements
        timings["torch.export"] = time.perf_counter() - start
        sample, checked = None, "not run: the model was given as an ExportedProgram, without a sample"
        if strategy != "ExportedProgram":
            t = time.perf_counter()
            skipped = self_check.plan(check, strategy, ep)
            if skipped:
                checked = skipped
            else:
                with registered(caches), dataclass_trees.registered(dataclass_types):
                    sample = self_check.Sample(model, args, kwargs, ep)
                    if sample.random:
                        checked, sample = sample.random, None
                    elif strategy == "draft_export":  # the program most likely to be wrong: fail before translating
                        sample.check_program(ep, strategy)
            timings["self_check"] = time.perf_counter() - t
        t = time.perf_counter()
        reason = ""
        fx_to_onnx: dict[str, list[str]] = {}
        translate_program = functools.partial(
            translate, registry=registry, opset=opset, dim_names=dim_names, optimize=optimize,
            weight_quantization=quantization, modules=modules, fx_to_onnx=fx_to_onnx, input_names=input_names,
            output_names=output_names, exact_nan=exact_nan, written_outputs=written_outputs, target=target)
        reads = loose_reads()  # a function's choice of a native form (exact_nan=False) counts one
        try:
            graph, diagnostics = translate_program(ep, decompose_nodes=True)
        except NeedsWholeProgramDecomposition as e:
            reason = str(e)
        if reason:  # the rare program that only functionalization of the whole program can express
            decomposed_at = time.perf_counter()
            with registered(caches):  # it re-traces the program: its inputs are flattened and rebuilt
                ep = ep.run_decompositions(decomposition_table(registry))
            timings["decompositions"] = time.perf_counter() - decomposed_at
            fx_to_onnx.clear()
            graph, diagnostics = translate_program(ep, decompose_nodes=False)
            diagnostics.insert(0, f"the whole program was decomposed (run_decompositions) because {reason}")
        timings["translate"] = time.perf_counter() - t - timings.get("decompositions", 0.0)
        notes.extend(_static_dims(graph, ep, requested, strategy, refinements, bool(reason)))
        notes.extend(_size_guards(ep))
        result = ExportResult(graph, model, ep, timings, notes + diagnostics, strategy, dataclass_types)
        result.fx_to_onnx = fx_to_onnx
        if sample is not None and quantization is not None:
            checked = ("skipped for the ONNX model: weight_quantization changes its numbers by design "
                       "(bench/bench_quantize.py measures by how much)")
        elif sample is not None:
            t = time.perf_counter()
            with registered(caches), dataclass_trees.registered(dataclass_types):
                inconclusive = sample.check_onnx(result, ep, strategy, native_forms=loose_reads() > reads)
            timings["self_check"] += time.perf_counter() - t
            checked = "passed: the captured program and the ONNX model reproduce the model on the sample"
            if inconclusive:
                checked = ("inconclusive: " + "; ".join(inconclusive) + ". Such an output can differ from torch's "
                           "and be right: compare what the math defines (result.verify gives the numbers)")
                warnings.warn(f"self-check {checked}", UserWarning, stacklevel=caller_level())
                result.diagnostics.append(f"self-check {checked}")
        result.self_check = checked
        if sample is not None:  # where the check's time went (self_check.Sample.seconds)
            timings.update({f"self_check.{part}": seconds for part, seconds in sample.seconds.items()})
        timings["total"] = time.perf_counter() - start
        return result


def _in_forward_order(forward: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keywords in the order of forward's parameters (those it takes through `**kwargs`
    last, as given). A model with a transformers cache, whose inputs torchlib names, gets them
    in the order optimum and onnxruntime-genai use: `input_ids`, `attention_mask`,
    `position_ids`, then the cache (`past_key_values.*`). Names given in `input_names` follow
    the order they were given in, so then the order is left as it is."""
    try:
        order = list(inspect.signature(forward).parameters)
    except (TypeError, ValueError):
        return kwargs
    return dict(sorted(kwargs.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)))


def _static_dims(graph: Any, ep: torch.export.ExportedProgram, requested: list[Any], strategy: str,
                 refinements: list[str], decomposed: bool) -> list[str]:
    """A warning (also returned for the diagnostics) for each dim marked dynamic that the
    exported model's inputs fix, saying why (and where, when torch.export's guards say)."""
    if refinements:
        why = "torch.export could not keep it dynamic: the model's code fixes its size (" + "; ".join(refinements) + ")"
    elif strategy == "draft_export":
        why = "draft_export specialised it (torch.export could not capture the model with it dynamic; see the warning above)"
    elif decomposed:
        why = "the whole-program decomposition (run_decompositions) specialised it"
    else:
        why = "torch.export specialised it: the model's code fixes its size"
    messages = []
    for dim, size in became_static(list(graph.inputs), requested):
        message = f"{dim.where} is marked dynamic, but the exported model fixes it to {size}: {why}"
        guards = _diagnostic(specialising_guards, ep, dim.axis, size) if why.startswith("torch.export specialised") else []
        if guards:
            message += " (torch.export's guard: " + "; ".join(guards) + ")"
        warnings.warn(message, UserWarning, stacklevel=caller_level())
        messages.append(message)
    return messages


def _training_mode(ep: torch.export.ExportedProgram) -> list[str]:
    """A warning (also returned for the diagnostics) when the model was left in training mode
    and its program shows it: dropout that draws random masks, batch norm that normalises by
    the batch and updates its running statistics. The export keeps what the model does, as
    torch.export does; a model built from its config (transformers) or constructed in code is
    in training mode until `model.eval()`, and the newcomer who forgets it gets a graph that
    gives other answers than the inference model."""
    nodes = self_check.training_nodes(ep)
    if not nodes:
        return []
    where = sorted({f"module {module_path(n) or '(root)'} ({n.target})" for n in nodes})
    shown = ", ".join(where[:_GUARDS_SHOWN]) + (f" and {len(where) - _GUARDS_SHOWN} more" if len(where) > _GUARDS_SHOWN else "")
    message = (f"the model is in training mode: the exported graph runs {shown} as in training (e.g. dropout's random masks, "
               f"batch norm's batch statistics and running-statistics updates). For inference, "
               f"call model.eval() before exporting; to export the training graph on purpose, ignore this warning")
    warnings.warn(message, UserWarning, stacklevel=caller_level())
    return [message]


_Note = TypeVar("_Note")


def _diagnostic(read: Callable[..., list[_Note]], *args: Any) -> list[_Note]:
    """What `read` (a reader of torch.export's shape environment, private to torch) finds, or
    nothing where this torch's shape environment does not have what it reads: a note must not
    fail the export it annotates."""
    try:
        return read(*args)
    except (AttributeError, ImportError, TypeError, KeyError):
        return []


def _size_guards(ep: torch.export.ExportedProgram) -> list[str]:
    """A warning (also returned for the diagnostics) when torch.export's program holds only for
    input sizes that meet conditions beyond their ranges (focalnet: the width's patch count even,
    where the model pads otherwise; dinov2: the patch count of the sample): `ep.module()` checks
    them, and so does the ONNX model (`size_checks`): onnxruntime stops on inputs of other sizes.

    Only a condition with a floor division or a remainder warns: a size's parity or multiple is
    how a model chooses a path. Inequalities between sizes alone (a decode step's attention mask
    as long as the past and the new tokens) are the inputs' own contract far more often: they go
    to the diagnostics only, so that every language model's export does not warn."""
    conditions = _diagnostic(path_conditions, ep)
    paths = [text for expr, text, path in conditions if checked(expr, path)]
    unchecked = [text for expr, text, path in conditions if path and not checked(expr, path)]
    others = [text for _, text, path in conditions if not path]
    messages = []
    if paths:
        def message(shown: list[str]) -> str:
            return ("torch.export's program holds only for inputs whose sizes meet: " + "; ".join(shown) + ". The "
                    "model's code takes another path for other sizes, which this program does not have: the ONNX "
                    "model checks each such condition, and onnxruntime stops with 'check: <condition>' on inputs "
                    "that do not meet it (a condition it cannot write has a warning of its own; to run other sizes, "
                    "export with an input of such a size, or one model per path)")  # fmt: skip

        warnings.warn(message(_listed(paths, _GUARDS_SHOWN)), UserWarning, stacklevel=caller_level())
        messages.append(message(_listed(paths, _GUARDS_LISTED)))
    if unchecked:
        def note(shown: list[str]) -> str:
            return ("torch.export's program holds only for inputs whose sizes meet: " + "; ".join(shown) + ". These "
                    "compare several input sizes, or assume a size is not 0 or 1 (`size_checks.checked`): most often "
                    "the inputs' own contract, which the ONNX model does not check; inputs that break them may give "
                    "wrong results")  # fmt: skip

        warnings.warn(note(_listed(unchecked, _GUARDS_SHOWN)), UserWarning, stacklevel=caller_level())
        messages.append(note(_listed(unchecked, _GUARDS_LISTED)))
    if others:
        messages.append("torch.export's program holds only for inputs whose sizes meet: " + "; ".join(_listed(others, _GUARDS_LISTED))
                        + " (the inputs' own contract, most often: the ONNX model does not check this)")
    return messages


def _listed(conditions: list[str], shown: int) -> list[str]:
    """The first `shown` conditions, and how many more: a chunked model's program can hold
    hundreds, each a long expression (qwen3_5: a 128,000-character diagnostic before)."""
    more = len(conditions) - shown
    where = f" (result.diagnostics lists the first {_GUARDS_LISTED})" if shown < _GUARDS_LISTED else ""
    return conditions[:shown] + ([f"and {more} more{where}"] if more > 0 else [])


_GUARDS_SHOWN = 8  # in the warning; those the model's own lines added come first
_GUARDS_LISTED = 32  # in the diagnostics


def check_supported(ep: torch.export.ExportedProgram, registry: Registry) -> None:
    """Raise one UnsupportedOpsError naming every op without a function, with counts and lines."""
    missing: Counter[str] = Counter()
    where: dict[str, list[str]] = {}
    for node in all_nodes(ep.graph_module):  # higher-order ops' bodies included
        if node.op == "call_function" and node.target not in registry:
            name = qualified_name(node.target)
            missing[name] += 1
            line = source_line(node) or module_path(node) or node.name
            where.setdefault(name, [])
            if line not in where[name] and len(where[name]) < 3:
                where[name].append(line)
    if missing:
        lines = [f"{len(missing)} op(s) in this model have no torchlib function:"]
        for name, count in sorted(missing.items()):
            lines.append(f"  {name}  x{count}")
            lines.extend(f"      at {w}" for w in where[name])
        aten = sorted(n for n in missing if n.startswith("aten::"))
        custom = sorted(n for n in missing if not n.startswith("aten::"))
        if aten:
            lines.append("Each ATen op needs a function written with ONNX ops (CONTRIBUTING.md shows how, in a few lines).")
            lines.append(f"`python -m codegen coverage --op {aten[0]}` prints its schema and the typed stub to start from.")
        if custom:
            example = custom[0].replace("::", ".").split(".")
            target = f"torch.ops.{example[0]}.{example[1]}.{example[2] if len(example) > 2 else 'default'}"
            lines.append(f"{', '.join(custom)} {'is not an ATen op' if len(custom) == 1 else 'are not ATen ops'} "
                         "(your own or a library's): write a function with graph_builder's `op` and pass it as "
                         f"`torchlib.export(..., functions={{{target}: my_function}})`, or register it for every export "
                         f"with `@torchlib.registry.aten_op(\"{custom[0]}\")` (docs/custom_ops.md).")
        raise UnsupportedOpsError("\n".join(lines))


class _Context:
    """What the loop needs besides the env: which FX nodes name the same tensor, the inputs
    written so far (they become extra outputs), and how to decompose a node on its own."""

    def __init__(self, graph: torch.fx.Graph, registry: Registry, decompose: bool, depth: int = 0):
        self.aliases = Aliases(graph)
        self.registry = registry
        self.decompose = decompose
        self.depth = depth
        self.written_inputs: dict[torch.fx.Node, Any] = {}  # placeholder -> its latest value
        self._table: dict[Any, Any] | None = None
        self._fake_mode: Any = None
        self.graph = graph

    @property
    def table(self) -> dict[Any, Any]:
        if self._table is None:
            self._table = decomposition_table(self.registry)
        return self._table

    @property
    def fake_mode(self) -> Any:
        if self._fake_mode is None:
            from torch._guards import detect_fake_mode

            vals = [n.meta.get("val") for n in self.graph.nodes if n.op == "placeholder"]
            self._fake_mode = detect_fake_mode([v for v in vals if isinstance(v, torch.Tensor)])
        return self._fake_mode

    def write(self, written: torch.fx.Node, value: Any, env: dict) -> None:
        """`value` replaces the tensor `written` names, under every name of that tensor."""
        for name in self.aliases.same_tensor(written):
            if name.name in env:
                env[name.name] = value
        root = self.aliases.root(written)
        if root.op == "placeholder":
            self.written_inputs[root] = value


def translate(
    ep: torch.export.ExportedProgram,
    registry: Registry,
    opset: int = 23,
    dim_names: dict[tuple[int, int], str] | None = None,
    decompose_nodes: bool = False,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    optimize: bool = True,
    weight_quantization: WeightQuantization | None = None,
    exact_nan: bool = False,
    modules: ModuleSelection | None = None,
    fx_to_onnx: dict[str, list[str]] | None = None,
    written_outputs: bool = True,
    target: OnnxRuntime | None = None,
) -> tuple[Any, list[str]]:
    """Translate the ExportedProgram's graph. With decompose_nodes, an op without a function is
    decomposed on its own node (NeedsWholeProgramDecomposition when that is impossible);
    without, every op must have a function (UnsupportedOpsError lists those that do not).
    With `modules`, the calls of those modules become local functions (module_functions.py).
    `fx_to_onnx`, when given, is filled with each call_function FX node's ONNX value names in
    the returned graph; [] where the optimizer removed or rewrote a value (`_unchanged`).
    `written_outputs=False` leaves out the new values of written buffers and inputs (export's
    argument of that name)."""
    if not decompose_nodes:
        check_supported(ep, registry)
    g = GraphBuilder(opset=opset, exact_nan=exact_nan)
    env: dict[str, Any] = {}
    diagnostics: list[str] = []
    renames = _symbol_renames(ep, dim_names or {})
    specs = {s.arg.name: s for s in ep.graph_signature.input_specs if hasattr(s.arg, "name")}
    constants = {**ep.constants}
    state = ep.state_dict
    ctx = _Context(ep.graph, registry, decompose_nodes)
    onnx_names = _onnx_names(ep, input_names, output_names)
    values: dict[str, list[Value]] = {}  # call_function FX node -> the Values it became
    implied = implied_assertions(ep)  # run-time assertions the ops themselves make true
    inputs_checked = False
    for node in ep.graph.nodes:
        if node.op != "placeholder" and not inputs_checked:  # the placeholders come first
            inputs_checked = True
            with g:  # the program's size conditions, checked on every run before anything reads the inputs
                for text in require_path_conditions(ep, env):
                    message = (f"torch.export's program holds only for inputs whose sizes meet {text}, which the "
                               "ONNX model cannot check: inputs of other sizes give wrong results")
                    warnings.warn(message, UserWarning, stacklevel=caller_level())
                    diagnostics.append(message)
        if node.name in implied:
            env[node.name] = None
        elif node.op == "placeholder":
            name = onnx_names.get(node.name, node.name)
            env[node.name] = _placeholder(g, node, specs.get(node.name), state, constants, renames, name)
        elif node.op == "call_function":
            # with modules: which module calls made these nodes
            with g.metadata(**{MODULE_CALL: node.name}) if modules is not None else contextlib.nullcontext():
                env[node.name] = _call(g, node, registry, env, renames, diagnostics, ctx)
            values[node.name] = [v for v in pytree.tree_leaves(env[node.name]) if isinstance(v, Value)]
        elif node.op == "get_attr":  # a higher-order op's body (a Body its function translates)
            env[node.name] = attribute(g, ep.graph_module, node, _body_translator(registry, renames, diagnostics))
        elif node.op == "output":
            written = _written_outputs(ctx, specs)
            fx_outputs = pytree.tree_leaves(node.args[0], is_leaf=lambda x: x is None)
            kinds = [s.kind.name for s in ep.graph_signature.output_specs]
            # a whole-program decomposition makes the writes the program's first outputs
            kinds = kinds if len(kinds) == len(fx_outputs) else ["USER_OUTPUT"] * len(fx_outputs)
            if not written_outputs:
                left_out = [name for name, _ in written] + [
                    str(s.target or s.arg) for s in ep.graph_signature.output_specs if s.kind.name != "USER_OUTPUT"]
                if left_out:
                    message = (f"forward writes {', '.join(repr(n) for n in left_out)}: the new value is not an output of "
                               "the ONNX model (written_outputs=False, as torch.onnx exports it), so a second call does not "
                               "see it; torchlib.export returns it as the first outputs by default")
                    warnings.warn(message, UserWarning, stacklevel=caller_level())
                    diagnostics.append(message)
                written = []
            for name, value in written:
                g.output(value, f"{name}_updated", exact=False)
            structure = _structure_names(ep, len(fx_outputs))
            count = 0  # graph outputs so far: output_names given by the user name them in order
            for fx_output, value, default, kind in zip(fx_outputs, _map_args(fx_outputs, env), structure, kinds):
                if not written_outputs and kind != "USER_OUTPUT":
                    continue
                if isinstance(value, Value):  # the user's name, else the output structure's
                    if isinstance(getattr(fx_output, "meta", {}).get("val"), torch.SymFloat):
                        with g:  # a SymFloat (DOUBLE inside the graph) is a float32 output, as torch.onnx gives it
                            value = op.Cast(value, to=types.FLOAT.onnx)
                    given = onnx_names.get(f"output {count}")
                    g.output(value, given or default or getattr(fx_output, "name", None), exact=given is not None)
                    count += 1
            g.graph.metadata["torchlib.feeds"] = _feeds_of(ep)
            written_names = [name for name, _ in written] or [
                s.target for s in ep.graph_signature.output_specs if s.kind.name != "USER_OUTPUT" and written_outputs]
            if written_names:
                g.graph.metadata["torchlib.written_inputs"] = ",".join(str(n) for n in written_names)
        else:
            raise ExportError(f"FX node {node.name} of kind {node.op!r} is not supported")
    g.graph.metadata["torchlib.opset"] = str(opset)
    g.graph.metadata["torchlib.exact_nan"] = str(bool(exact_nan))
    merged: list[tuple[Any, Any]] = []  # the common-subexpression pass's (kept, dropped) nodes
    made = {name: [(v, v.name, v.producer, _node_inputs(v.producer)) for v in vs]
            for name, vs in values.items()}  # as translated (outputs named), before the optimizer
    if optimize:
        report = optimize_graph(g, merged=None if modules is None else lambda kept, dropped: merged.append((kept, dropped)))
        if report.get(BATCH_NORMS_LEFT):
            diagnostics.append(f"{report[BATCH_NORMS_LEFT]} {BATCH_NORMS_LEFT}: they stay BatchNormalization nodes")
    if weight_quantization is not None:
        count = quantize_weights(g, weight_quantization)
        packed = packed_projections(g)
        q = weight_quantization
        diagnostics.append(f"weight_quantization: {count} MatMul/Gemm weight(s) quantized to {q.dtype}, blocks of "
                           f"{q.block_size}, {'symmetric' if q.symmetric else 'asymmetric'}; {packed} group(s) of "
                           f"MatMuls of one input packed side by side")  # fmt: skip
    if target is not None:
        counts = optimize_for_onnxruntime(g, target)
        g.graph.metadata["torchlib.target"] = f"onnxruntime (accuracy_level {target.accuracy_level})"
        diagnostics.append("target onnxruntime: " + (", ".join(f"{n}: {c}" for n, c in counts.items()) or "no rewrite fired"))
    runtime_guards.guard(g)  # forms onnxruntime's own graph optimizations leave exact
    if modules is not None:  # after the optimizer, which then sees (and fuses across) the whole graph
        diagnostics.extend(outline_modules(g.graph, ep.graph, modules, merged))
    graph = g.to_graph()  # checked; the weights stay views of the parameters
    if fx_to_onnx is not None:
        live = set(map(id, graph.nodes))
        fx_to_onnx.update({name: [v.name for v, *_ in vs] if all(_unchanged(graph, live, *x) for x in vs) else []
                           for name, vs in made.items()})
    return graph, diagnostics


def _node_inputs(node: Any) -> list[tuple[Any, Any]] | None:
    """A node's inputs and their payloads (the optimizer writes some in place)."""
    return None if node is None else [(v, getattr(v, "const_value", None)) for v in node.inputs]


def _unchanged(graph: Any, live: set[int], v: Value, name: str, producer: Any, inputs: list | None) -> bool:
    """Whether the optimized graph has `v` under its name, made by the same node from the same
    inputs (a BatchNorm folded into its Conv rescales the Conv's weight in place: the Conv's
    value then means another thing)."""
    if producer is None:
        return v.name == name and (graph.initializers.get(name) is v or v in graph.inputs)
    now = _node_inputs(producer) or []
    return (v.name == name and v.producer is producer and id(producer) in live and len(now) == len(inputs or [])
            and all(a is b and p is q for (a, p), (b, q) in zip(now, inputs or [])))


def _written_outputs(ctx: _Context, specs: dict) -> list[tuple[str, Any]]:
    """(buffer or input name, new value) of every input the program writes: buffers first, then
    user inputs, each in input order (the order of torch.export's functional signature)."""
    kinds = {"BUFFER": 0, "PARAMETER": 0, "USER_INPUT": 1}
    found = []
    for placeholder, value in ctx.written_inputs.items():
        spec = specs.get(placeholder.name)
        kind = spec.kind.name if spec is not None else "USER_INPUT"
        if kind in kinds:
            name = spec.target if spec is not None and spec.target else placeholder.name
            found.append((kinds[kind], ctx.aliases.order[placeholder], name, value))
    return [(name, value) for _, _, name, value in sorted(found, key=lambda f: f[:2])]


def _feeds_of(ep: torch.export.ExportedProgram) -> str:
    """For each user input (the leaves of args and kwargs, flattened), whether it is a graph
    input: "t" a tensor, "i" a Python int marked dynamic, "-" a constant of the program."""
    vals = [_placeholder_val(ep, s.arg.name) for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    return "".join("t" if isinstance(v, torch.Tensor) else "i" if isinstance(v, torch.SymInt) else "-" for v in vals)


def _onnx_names(ep: torch.export.ExportedProgram, input_names: Sequence[str] | None,
                output_names: Sequence[str] | None) -> dict[str, str]:
    """FX placeholder name (or "output i") -> the ONNX name the user gave."""
    names: dict[str, str] = {}
    tensors = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"
               and isinstance(_placeholder_val(ep, s.arg.name), torch.Tensor)]
    for given, which in ((input_names, "input_names"), (output_names, "output_names")):
        if given is not None and len(set(given)) != len(given):
            raise ValueError(f"{which} has repeated names: {list(given)}")
    if input_names is not None:
        if len(input_names) > len(tensors):
            raise ValueError(f"input_names has {len(input_names)} names for {len(tensors)} tensor inputs")
        names.update(zip(tensors, input_names))
    names.update({f"output {i}": n for i, n in enumerate(output_names or [])})
    return names


def _structure_names(ep: torch.export.ExportedProgram, count: int) -> list[str | None]:
    """The default ONNX name of each of the program's `count` outputs: a user output's name
    from forward's output structure (names.py: `logits`, `output_0`, `present.0.key`), None
    for the others (inputs the program writes, named after their FX node)."""
    specs = ep.graph_signature.output_specs
    out_spec = ep.call_spec.out_spec
    names: list[str | None] = [None] * count
    user = [i for i, s in enumerate(specs) if s.kind.name == "USER_OUTPUT"]
    if out_spec is None or len(specs) != count or out_spec.num_leaves != len(user):
        return names
    for i, name in zip(user, leaf_names(out_spec, "present")):
        names[i] = name
    return names


def _cache_input_names(ep: torch.export.ExportedProgram, args: tuple, kwargs: dict,
                       input_names: Sequence[str] | None) -> Sequence[str] | None:
    """The names runtimes expect when the model takes transformers' KV caches
    (`past_key_values.{i}.key`); names the user gave win. Called with the caches registered as
    pytree nodes (see hf_cache.py). Outputs are named by `_structure_names` (`present.{i}.key`)."""
    if input_names is not None or not contains_cache((args, kwargs)):
        return input_names
    placeholders = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    given = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    leaves = pytree.tree_leaves((args, kwargs))
    cache_names = leaf_names(pytree.tree_structure((args, kwargs)), "past_key_values")
    if len(given) != len(leaves):
        return None
    return [cache if cache.startswith("past_key_values.") else fx
            for fx, cache, leaf in zip(given, cache_names, leaves) if isinstance(placeholders.get(fx), torch.Tensor)]


def _placeholder_val(ep: torch.export.ExportedProgram, name: str) -> Any:
    return next((n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder" and n.name == name), None)


def _placeholder(g: GraphBuilder, node: Any, spec: Any, state: dict, constants: dict, renames: dict,
                 name: str) -> Any:
    kind = spec.kind.name if spec is not None else "USER_INPUT"
    if kind == "TOKEN":  # effect tokens order side effects in torch; ONNX has none (see ops/effects.py)
        return None
    if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
        tensor = state[spec.target] if spec.target in state else constants[spec.target]
        try:
            array = torch_to_numpy(tensor)
        except TypeError as e:
            raise ExportError(f"weight {spec.target!r} ({tensor.dtype}): {e}") from e
        if tensor.is_complex():  # a complex weight is stored as its real view
            return g.initializer(spec.target, real_view(array)).as_complex()
        return g.initializer(spec.target, array)
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return g.input(name, *fx_type(val, renames))
    if isinstance(val, (int, float, bool)) or val is None:
        return val  # non-tensor inputs are specialized by torch.export
    if isinstance(val, torch.SymInt):  # a Python int marked dynamic: an INT64 scalar input
        return g.input(name, types.INT64, [])
    raise ExportError(f"input {node.name} of type {type(val).__name__} is not supported")


def _body_translator(registry: Registry, renames: dict, diagnostics: list[str]) -> Translator:
    """What a higher-order op's body needs to translate itself: this loop's `_call`, with a
    context (aliases, decomposition) of the body's own graph."""

    def for_graph(graph: torch.fx.Graph) -> Callable[[GraphBuilder, Any, dict], Any]:
        ctx = _Context(graph, registry, decompose=True)
        return lambda g, node, env: _call(g, node, registry, env, renames, diagnostics, ctx)

    return Translator(registry, renames, diagnostics, for_graph)


def _call(g: GraphBuilder, node: Any, registry: Registry, env: dict, renames: dict, diagnostics: list[str],
          ctx: _Context) -> Any:
    written = written_nodes(node)
    for w in written:
        reason = ctx.aliases.problem(node, w)
        if reason:
            raise NeedsWholeProgramDecomposition(reason)
    result = _call_op(g, node, written, registry, env, renames, diagnostics, ctx)
    for w in written:  # views of a written tensor, taken before the write and read after it, read the new values
        for view in ctx.aliases.views_to_take_again(node, w):
            value = _call(g, view, registry, env, renames, diagnostics, ctx)
            for name in ctx.aliases.same_view(view):
                if name.name in env:
                    env[name.name] = value
    return result


def _call_op(g: GraphBuilder, node: Any, written: list[Any], registry: Registry, env: dict, renames: dict,
             diagnostics: list[str], ctx: _Context) -> Any:
    """Translate one call; a write gives the written tensor's new value to its names."""
    val = node.meta.get("val")
    if len(written) > 1 and not all(ctx.aliases.whole.get(w, True) for w in written):
        raise NeedsWholeProgramDecomposition(f"{node.target} (FX node {node.name!r}) writes into several tensors, some of them views")
    if written and not ctx.aliases.whole.get(written[0], True):  # a write into a view
        result = _call_decomposed(g, node, registry, env, renames, diagnostics, ctx)
        for name in ctx.aliases.same_view(written[0]):
            if name.name in env:
                env[name.name] = result
        return _conform(result, val, renames, qualified_name(node.target), diagnostics)
    target = node.target
    if target not in registry and (written or is_inplace_view(target)):
        target = functional_variant(target) or target  # add_.Tensor -> add.Tensor, squeeze_.dim -> squeeze.dim
    if target not in registry or (written and target is node.target and len(written) > 1):
        result = _call_decomposed(g, node, registry, env, renames, diagnostics, ctx)
        return _conform(result, val, renames, qualified_name(node.target), diagnostics)
    is_complex = any(isinstance(v, torch.Tensor) and v.is_complex() for v in pytree.tree_leaves((val, [a.meta.get("val") for a in node.all_input_nodes])))
    entry = registry.lookup(target, complex=is_complex)
    if entry is None:  # only a complex variant, called on real tensors: torch's decomposition, else unsupported
        result = _call_decomposed(g, node, registry, env, renames, diagnostics, ctx)
        return _conform(result, val, renames, qualified_name(node.target), diagnostics)
    result = _call_function(g, node, entry, env, renames, diagnostics)
    if written:  # an in-place op returns the tensor it wrote
        ctx.write(written[0], result, env)
    return result


def _call_decomposed(g: GraphBuilder, node: Any, registry: Registry, env: dict, renames: dict,
                     diagnostics: list[str], ctx: _Context) -> Any:
    """Translate torch's decomposition of this one node (see decompose.py)."""
    if not ctx.decompose or ctx.depth >= _MAX_DECOMPOSITION_DEPTH:
        raise NeedsWholeProgramDecomposition(f"{node.target} (FX node {node.name!r}) has no torchlib function")
    written = written_nodes(node)
    if len(written) == 1 and not ctx.aliases.whole.get(written[0], True):
        chain = ctx.aliases.view_chain(written[0]) or []
        base = ctx.aliases.root(written[0])
        decomposition = (replay_view_write(node, chain, base, ctx.aliases.resolve, ctx.fake_mode)
                         or decompose_view_write(node, chain, base, ctx.aliases.resolve, ctx.table, ctx.fake_mode))
    else:
        decomposition = decompose_node(node, ctx.table, ctx.fake_mode)
    sub_ctx = _Context(decomposition.graph, registry, True, ctx.depth + 1)
    sub_ctx._table, sub_ctx._fake_mode = ctx._table, ctx._fake_mode
    sub_env: dict[str, Any] = {}
    inputs = iter(decomposition.inputs)
    result: Any = None
    for sub in decomposition.graph.nodes:
        if sub.op == "placeholder":
            sub_env[sub.name] = env[next(inputs).name]
        elif sub.op == "call_function":
            sub_env[sub.name] = _call(g, sub, registry, sub_env, renames, diagnostics, sub_ctx)
        elif sub.op == "output":
            result, new_values = _map_args(sub.args[0], sub_env)
            for w, value in zip(decomposition.written, new_values):
                ctx.write(w, value, env)
    return result


_MAX_DECOMPOSITION_DEPTH = 4


def _call_function(g: GraphBuilder, node: Any, entry: Any, env: dict, renames: dict, diagnostics: list[str]) -> Any:
    val = node.meta.get("val")
    args = _map_args(node.args, env)
    kwargs = _map_args(node.kwargs, env)
    source = source_line(node)
    metadata = {"pkg.torchlib.aten_op": entry.name, "pkg.torchlib.fx_node": node.name}
    path = module_path(node)
    if path:
        metadata["pkg.torchlib.module"] = path
        metadata["pkg.torchlib.module_class"] = module_class(node)
    if source:
        metadata["pkg.torchlib.source"] = source
    try:
        with g.metadata(**metadata), g:
            if isinstance(node.target, torch._ops.OpOverload):
                args, kwargs = _numbers_as_tensors(g, node.target, args, kwargs)
                args, kwargs = storage_arguments(node, tuple(args), kwargs)
            result = entry.function(*args, **kwargs)
            return _conform(result, val, renames, entry.name, diagnostics)
    except (OpError, TypeError, ValueError, IndexError, KeyError, AssertionError) as e:
        described = ", ".join(_describe(a) for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, Value))
        raise ExportError(
            f"{entry.name} failed on FX node {node.name!r} (inputs: {described})\n"
            f"  at {source or path or '<unknown>'}\n  {type(e).__name__}: {e}"
        ) from e


# torch's dtype for a Python number computed on alone (wrapped numbers: floats take the default dtype)
_NUMBER_DTYPES = ((bool, types.BOOL), (int, types.INT64), (float, types.FLOAT))


def _numbers_as_tensors(g: GraphBuilder, target: torch._ops.OpOverload, args: Any, kwargs: dict) -> tuple[Any, dict]:
    """An ATen call may hold Python numbers in its Tensor slots: torch.export writes
    `aten.div.Tensor_mode(64, 8)` when both sizes are static. When no Tensor slot holds a tensor,
    torch computes on the numbers alone, as wrapped scalars: int64 for ints, bool, the default
    float32 for floats. Functions read their dtype from a tensor operand, so each
    number in a Tensor slot becomes that 0-d constant; with a tensor among them the numbers stay
    Python scalars, which promotion treats as torch does (complex numbers too: they have no 0-d
    constant here, complex tensors being held as their real view)."""
    slots = [(i, a.name) for i, a in enumerate(target._schema.arguments) if str(a.type) == "Tensor"]
    if not slots:
        return args, kwargs
    values = [args[i] if i < len(args) else kwargs.get(name) for i, name in slots]
    if any(isinstance(v, Value) for v in values) or not any(_number_dtype(v) for v in values):
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for (i, name), v in zip(slots, values):
        dtype = _number_dtype(v)
        if dtype is not None:
            if i < len(args):
                args[i] = g.constant(v, dtype)
            else:
                kwargs[name] = g.constant(v, dtype)
    return tuple(args), kwargs


def _number_dtype(v: Any) -> types.DType | None:
    return next((dtype for kind, dtype in _NUMBER_DTYPES if type(v) is kind), None)


def _describe(v: Value) -> str:
    shape = "?" if v.shape is None else list(v.shape)
    return f"{v.dtype}{shape}"


def _conform(result: Any, val: Any, renames: dict, name: str, diagnostics: list[str]) -> Any:
    """Give each output Value torch's dtype and (symbolic) shape from the FX metadata. A dtype
    that differs from torch's is cast and reported: the function has a promotion bug."""
    if isinstance(result, Value) and isinstance(val, torch.Tensor):
        dtype, shape = fx_type(val, renames)
        if val.is_complex():  # held as its real view: FLOAT/DOUBLE, shape + [2]
            if not result.is_complex:
                raise TypeError(f"{name} returned {result} where torch gives a {dtype.name.lower()} tensor (a complex variant must return its real view marked with as_complex())")
            dtype, shape = (types.FLOAT if dtype is types.COMPLEX64 else types.DOUBLE), [*shape, 2]
        elif result.is_complex:
            raise TypeError(f"{name} returned a complex tensor where torch gives {dtype}")
        if result.dtype is not dtype:
            if dtype.per_torch_element != 1 or (result.dtype is not None and result.dtype.per_torch_element != 1):
                raise TypeError(f"{name} returned {result} where torch gives {val.dtype}, a packed dtype no cast converts to")
            diagnostics.append(f"{name} returned {result.dtype} where torch gives {dtype}; cast inserted")
            result = op.Cast(result, to=dtype.onnx)
            if val.is_complex():
                result.as_complex()
        result.set_type(dtype, shape)
        return result
    if isinstance(result, (tuple, list)) and isinstance(val, (tuple, list)):
        return type(result)(_conform(r, v, renames, name, diagnostics) for r, v in zip(result, val))
    return result




def _map_args(x: Any, env: dict) -> Any:
    if isinstance(x, torch.fx.Node):
        return env[x.name]
    if isinstance(x, (list, tuple)):
        return [_map_args(v, env) for v in x] if isinstance(x, list) else tuple(_map_args(v, env) for v in x)
    if isinstance(x, dict):
        return {k: _map_args(v, env) for k, v in x.items()}
    return x


def _symbol_renames(ep: torch.export.ExportedProgram, dim_names: dict[tuple[int, int], str]) -> dict:
    """sympy symbol of each named input dim -> a symbol with the user's name."""
    import sympy

    renames: dict = {}
    user_inputs = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    tensor_index = 0
    for name in user_inputs:
        val = nodes[name].meta.get("val") if name in nodes else None
        if not isinstance(val, torch.Tensor):
            continue
        for axis, d in enumerate(val.shape):
            if not isinstance(d, int) and (tensor_index, axis) in dim_names:
                expr = d.node.expr
                if isinstance(expr, sympy.Symbol):
                    renames.setdefault(expr, sympy.Symbol(dim_names[(tensor_index, axis)]))  # the first name given wins
        tensor_index += 1
    return renames
