"""ExportResult: the ONNX model, and running and verifying it against torch."""

from __future__ import annotations

import inspect
import os
from typing import Any, Literal, overload

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.utils._pytree as pytree

from graph_builder import weights
from graph_builder.evaluator import run_session
from graph_builder.ir import COMPLEX_KEY, Graph, ModelTooLargeError, complex_from_real_view, real_view
from graph_builder.opset import numpy_to_torch, torch_to_numpy
from torchlib.exporter import dataclass_trees
from torchlib.exporter.comparison import DEFAULT_TOLERANCE, TOLERANCES, Differences, OutputDiff, compare
from torchlib.exporter.hf_cache import contains_cache, registered
from torchlib.exporter.intermediates import VerifyReport
from torchlib.exporter.intermediates import compare_intermediates as compare_nodes


class StaleWeightsError(RuntimeError):
    """The model's weights changed after export: the exported model would mix old and new ones."""


def snapshot(tensors: Any) -> list[tuple[torch.Tensor, torch.Tensor, int]]:
    """(tensor, a copy, its version) of each tensor, for `put_back`."""
    return [(t, t.detach().clone(), t._version) for t in tensors]


def put_back(saved: list[tuple[torch.Tensor, torch.Tensor, int]]) -> None:
    """Give each tensor its values and version counter of `snapshot` time: running the model
    to compare (a training-mode batch norm writes its statistics) is no change of the user's,
    and exported results of the module (`_WeightVersions`) stay valid."""
    for t, value, version in saved:
        t.detach().copy_(value)
        torch._C._autograd._unsafe_set_version_counter((t,), (version,))


class _WeightVersions:
    """Each weight of the exported program (parameters, buffers, constants) with torch's version
    counter and memory address at export time. The ONNX graph holds some weights as views of the
    parameters (they follow later changes) and some as constants computed from them at export
    (BatchNorm folded into a Conv: they do not), so after a change it would give neither torch's
    old answer nor its new one. Running or saving it then refuses, naming the weight.

    Caught: in-place writes (`with torch.no_grad(): p.add_(1)`, `p.copy_(...)`, optimizer steps,
    `load_state_dict`), `p.data = t`, and a parameter or buffer replaced in the module. Not
    caught: in-place writes through `p.data` (`p.data.add_(1)`), which torch does not count
    either (`.data` has a version counter of its own); export again after those."""

    def __init__(self, model: Any, ep: Any):
        state = {**getattr(ep, "state_dict", {}), **getattr(ep, "constants", {})}
        self.model = model
        self.recorded = {name: (t, t._version, t.data_ptr()) for name, t in state.items() if isinstance(t, torch.Tensor)}

    def check(self, what: str) -> None:
        current = self.model.state_dict(keep_vars=True) if isinstance(self.model, torch.nn.Module) else {}
        for name, (t, version, address) in self.recorded.items():
            if name in current and current[name] is not t:
                change = "was replaced in the module by another tensor"
            elif t._version != version:
                change = "was written in place (load_state_dict, an optimizer step, p.add_(...) under no_grad)"
            elif t.data_ptr() != address:
                change = "has new data (p.data = ...)"
            else:
                continue
            raise StaleWeightsError(
                f"{what}: the weight {name!r} {change} after export. The exported model holds some weights as "
                "they were at export (folded into other ops) and reads others from the module, so it would give "
                "neither the old answer nor the new one. Export the model again to use the new weights "
                "(torchlib.export(model, args)).")


class NoRuntimeKernelError(RuntimeError):
    """onnxruntime has no kernel for an op of a valid exported model, so `result(...)` cannot run it."""


_FLOAT4_NOTE = "; it has none for FLOAT4E2M1 tensors (torch's float4_e2m1fn_x2), not even Identity or Cast"


def _holds(graph: Graph, dtype_name: str) -> bool:
    """Whether a graph input, output, weight or node output has this dtype."""
    values = [*graph.inputs, *graph.outputs, *graph.initializers.values(), *(v for n in graph.nodes for v in n.outputs)]
    return any(v.dtype is not None and v.dtype.name == dtype_name for v in values)


class ExportResult:
    """The exported model. `graph` is the checked ONNX graph; its initializers are views of the
    model's parameters (no copy of the weights is made by export). Bytes are made only when
    asked: `model_proto` (under 2 GB), `save()` (streams the weights, external data over 2 GB);
    `__call__` and `verify` run in onnxruntime with the weights given as OrtValues over the same
    memory, at any size. `capture_strategy` says how torch.export captured the model
    ("non-strict", "strict", "draft_export", or "ExportedProgram" when given one)."""

    def __init__(self, graph: Graph, model: torch.nn.Module, exported_program: Any,
                 timings: dict[str, float], diagnostics: list[str], capture_strategy: str = "non-strict",
                 dataclass_types: set[type] | None = None):
        self.graph = graph
        self.capture_strategy = capture_strategy
        self.model = model
        self.exported_program = exported_program
        self.timings = timings
        self.diagnostics = diagnostics
        self.self_check = "not run"  # what export's self-check on the sample found, or why it did not run
        # each call_function FX node of exported_program -> the names of the ONNX values it became
        # (set by export; a name absent from the graph was removed by the optimizer)
        self.fx_to_onnx: dict[str, list[str]] = {}
        self._session: ort.InferenceSession | None = None
        self._model_proto: onnx.ModelProto | None = None
        self._weights = _WeightVersions(model, exported_program)
        self._dataclasses = dataclass_types or set()  # plain dataclasses of its inputs and outputs (dataclass_trees.py)

    @property
    def model_proto(self) -> onnx.ModelProto:
        """The ModelProto with the weights inside (made on first use: a copy of the weights).
        Over 2 GB of weights it cannot exist: raises ModelTooLargeError naming what to use."""
        if self._model_proto is None:
            if weights.is_too_large(self.graph):
                raise ModelTooLargeError(weights.too_large_message(
                    self.graph, "ExportResult.model_proto",
                    "Use result.save(path) (the weights go to <path>.data next to it; onnx.load(path) and "
                    "onnxruntime.InferenceSession(path) read both), result(...) and result.verify(...) (they run "
                    "without a ModelProto), or result.graph.",
                ))  # fmt: skip
            self._weights.check("ExportResult.model_proto")
            self._model_proto = onnx.ModelProto.FromString(self.graph.to_model_bytes())
        return self._model_proto

    @property
    def written_inputs(self) -> list[str]:
        """Buffers and user inputs the model writes (`self.buf.add_(1)`, BatchNorm's running
        statistics in train mode): their new values are the model's first outputs, in this
        order, before the outputs of forward (the order of torch.export's graph signature)."""
        written = self.graph.metadata.get("torchlib.written_inputs")
        return written.split(",") if written else []

    @property
    def node_count(self) -> int:
        return len(self.graph.nodes)

    def save(self, path: str | os.PathLike[str], external_data: bool | None = None, progress: bool = True) -> str | None:
        """Write the model; the weights stream to `<path>.data` next to it when they are over
        2 GB (`graph_builder.ir.EXTERNAL_DATA_THRESHOLD`) or when external_data=True, with a
        progress bar on a terminal (progress=False: none). Returns the data file's path, or
        None. Atomic: when writing fails, what was at `path` stays. Raises StaleWeightsError
        when the model's weights changed since export."""
        self._weights.check("save()")
        return weights.save_model(self.graph, path, external_data, progress=progress)

    def session(self, threads: int = 0) -> ort.InferenceSession:
        """The onnxruntime session (made once), its weights OrtValues over the parameters' memory."""
        if self._session is None:
            options = ort.SessionOptions()
            if threads:
                options.intra_op_num_threads = threads
            self._session = self._new_session(options)
        return self._session

    def check_session(self) -> ort.InferenceSession:
        """A session for one run on the sample (the self-check): the graph as written, with no
        onnxruntime graph optimization, on one thread, its weights not prepacked (packing pays
        off over many runs). A quarter to a third of the optimized session's CPU time to build
        and run once (docs/performance.md), and the closest run of what was exported;
        `session()`, which `result(...)` uses, is built apart on the first call."""
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.intra_op_num_threads = 1
        options.add_session_config_entry("session.disable_prepacking", "1")
        return self._new_session(options)

    def _new_session(self, options: ort.SessionOptions) -> ort.InferenceSession:
        options.log_severity_level = 4  # a failed run raises with onnxruntime's message; not logged twice
        try:
            return weights.ort_session(self.graph, options)
        except Exception as e:  # onnxruntime raises its own exception types
            if "Could not find an implementation" not in str(e):
                raise
            raise NoRuntimeKernelError(
                f"onnxruntime {ort.__version__} cannot run this model, which is valid ONNX: it has no kernel for one "
                f"of its ops ({e}){_FLOAT4_NOTE if _holds(self.graph, 'FLOAT4E2M1') else ''}. The saved model "
                f"(result.save(path)) runs in a runtime that has the kernel"
            ) from None

    def _feeds(self, args: tuple, kwargs: dict) -> dict[str, np.ndarray]:
        args, kwargs = self._bind(args, kwargs)
        # a KV cache's tensors are inputs, and a dataclass's
        with registered(contains_cache((args, kwargs))), dataclass_trees.registered(self._dataclasses):
            leaves = pytree.tree_leaves((args, kwargs))
        kinds = self.graph.metadata.get("torchlib.feeds", "")
        if len(kinds) == len(leaves) and "i" in kinds:  # Python ints marked dynamic are INT64 scalar inputs
            leaves = [torch.tensor(x, dtype=torch.int64) if k == "i" else x for x, k in zip(leaves, kinds) if k != "-"]
        leaves = [torch.from_numpy(x) if isinstance(x, np.ndarray) else x for x in leaves]
        leaves = [x for x in leaves if isinstance(x, torch.Tensor)]
        names = [v.name for v in self.graph.inputs]
        if len(leaves) != len(names):
            raise ValueError(f"the model takes {len(names)} tensor inputs ({names}), got {len(leaves)}")
        leaves = [_as_input_dtype(_of_input_shape(x, v), v) for x, v in zip(leaves, self.graph.inputs)]
        return {n: real_view(torch_to_numpy(x)) if x.is_complex() else torch_to_numpy(x) for n, x in zip(names, leaves)}

    def _bind(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The call's arguments in the layout the program was captured with (its first n
        arguments positional, then its keywords in capture order), bound to forward's parameters
        by name as Python binds them: `result(b=b, a=a)` is `result(a, b)`, whatever the order."""
        in_spec = getattr(getattr(self.exported_program, "call_spec", None), "in_spec", None)
        forward = getattr(self.model, "forward", None)
        if in_spec is None or forward is None or in_spec.num_children != 2:
            return args, kwargs
        captured_args, captured_kwargs = in_spec.children()
        keys = list(captured_kwargs.context or [])
        try:
            signature = inspect.signature(forward)
        except (TypeError, ValueError):  # no Python signature: keywords are still bound by name
            return args, {k: kwargs[k] for k in keys if k in kwargs}
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"the exported model takes the arguments of forward{signature}: {e}") from None
        given = set(bound.arguments)
        bound.apply_defaults()
        positional: list[tuple[str | None, Any]] = []
        named: dict[str, Any] = {}
        for name, param in signature.parameters.items():
            value = bound.arguments.get(name)
            if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                positional.append((name, value))
            elif param.kind is param.VAR_POSITIONAL:
                positional.extend((None, v) for v in value or ())
            elif param.kind is param.KEYWORD_ONLY:
                named[name] = value
            else:  # **kwargs: every name in it was given
                named.update(value or {})
                given.update(value or {})
        n = captured_args.num_children
        named.update({name: value for name, value in positional[n:] if name is not None})
        missing = [k for k in keys if k not in named]
        extra = [k for k, v in named.items() if k not in keys and k in given and isinstance(v, torch.Tensor)]
        problem = (f"lacks {missing}" if missing else f"gives tensors it was not exported with: {extra}" if extra
                   else f"gives {len(positional)} positional arguments" if len(positional) < n else "")
        if problem:
            captured = ", ".join([f"{n} positional"] + keys)
            raise TypeError(f"the model was exported with the arguments ({captured}) of forward{signature}; this call "
                            f"{problem}. Call it as it was exported, or export again with these arguments.")
        return tuple(v for _, v in positional[:n]), {k: named[k] for k in keys}

    def run(self, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        """Run in onnxruntime; the graph's outputs as a flat list of torch tensors, in order
        (complex outputs, carried as real views in the graph, come back complex)."""
        return self.run_in(self.session(), args, kwargs)

    def run_in(self, session: ort.InferenceSession, args: tuple, kwargs: dict) -> list[torch.Tensor]:
        """`run(*args, **kwargs)` in the given session (one of this graph's)."""
        self._weights.check("calling the exported model")
        results = run_session(session, self._feeds(args, kwargs))
        complex_outputs = [COMPLEX_KEY in v.metadata for v in self.graph.outputs]
        return [numpy_to_torch(complex_from_real_view(r) if c else r) for r, c in zip(results, complex_outputs)]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run in onnxruntime and return what the model returns: a tensor, or the same tuple /
        list / dict structure, with torch tensors (and the constants torch.export kept). The
        new values of buffers or inputs the model writes are `run()`'s first outputs."""
        return self._structure(self.run(*args, **kwargs))

    def _structure(self, flat: list[torch.Tensor]) -> Any:
        """The outputs of forward (after the written inputs' new values), in forward's structure."""
        flat = flat[len(self.written_inputs):]
        ep = self.exported_program
        specs = getattr(getattr(ep, "graph_signature", None), "output_specs", None)
        out_spec = getattr(getattr(ep, "call_spec", None), "out_spec", None)
        if specs is None or out_spec is None:
            return flat
        specs = [s for s in specs if s.kind.name == "USER_OUTPUT"]
        if sum(type(s.arg).__name__ != "ConstantArgument" for s in specs) != len(flat):
            return flat
        results = iter(flat)
        leaves: list[Any] = []
        for spec in specs:
            value = spec.arg.value if type(spec.arg).__name__ == "ConstantArgument" else next(results)
            if type(spec.arg).__name__ in ("SymIntArgument", "SymFloatArgument", "SymBoolArgument"):
                value = value.item()
            leaves.append(value)
        try:
            # a KV cache rebuilt from present.*, a dataclass from its fields
            with registered(contains_cache(out_spec)), dataclass_trees.registered(self._dataclasses):
                return pytree.tree_unflatten(leaves, out_spec)
        except (ValueError, TypeError):
            return leaves

    def _graph_outputs(self, leaves: list[Any]) -> list[torch.Tensor]:
        """Of forward's outputs (flattened), those that are graph outputs, as tensors: tensors,
        and the Python ints / floats the program computes (not the constants it kept)."""
        specs = getattr(getattr(self.exported_program, "graph_signature", None), "output_specs", None) or []
        specs = [s for s in specs if s.kind.name == "USER_OUTPUT"]
        if len(specs) != len(leaves):
            return [x for x in leaves if isinstance(x, torch.Tensor)]
        return [x if isinstance(x, torch.Tensor) else torch.tensor(x) for x, s in zip(leaves, specs)
                if type(s.arg).__name__ != "ConstantArgument" and isinstance(x, (torch.Tensor, int, float))]

    def rename_outputs(self, names: list[str]) -> None:
        """Give the graph's outputs these names, in order (like torch.onnx's output_names)."""
        outputs = self.graph.outputs
        if len(names) > len(outputs):
            raise ValueError(f"{len(names)} output names for a model with {len(outputs)} outputs "
                             f"({', '.join(v.name for v in outputs)})")
        taken = {v.name for v in self.graph.inputs} | set(self.graph.initializers)
        for v, name in zip(outputs, names):
            if name in taken:
                raise ValueError(f"output name {name!r} is already the name of an input or initializer")
            v.name = name
        self._session = None
        self._model_proto = None

    def __repr__(self) -> str:
        def describe(v: Any) -> str:
            dims = "?" if v.shape is None else ",".join("?" if d is None else str(d) for d in v.shape)
            return f"{v.name}: {(v.dtype.torch_name or v.dtype.name.lower()) if v.dtype else '?'}[{dims}]"

        graph = self.graph
        size = sum(v.const_value.nbytes for v in graph.initializers.values() if v.const_value is not None)
        return (f"ExportResult(inputs=[{', '.join(describe(v) for v in graph.inputs)}], "
                f"outputs=[{', '.join(describe(v) for v in graph.outputs)}], nodes={len(graph.nodes)}, "
                f"opset={graph.opset_imports.get('', '?')}, initializers={len(graph.initializers)} ({size / 1e6:.1f} MB))")

    @overload
    def verify(self, *args: Any, compare_intermediates: Literal[False] = False, repro_dir: None = None,
               **kwargs: Any) -> Differences: ...

    @overload
    def verify(self, *args: Any, compare_intermediates: Literal[True], repro_dir: str | os.PathLike[str] | None = None,
               **kwargs: Any) -> VerifyReport: ...

    def verify(self, *args: Any, compare_intermediates: bool = False, repro_dir: str | os.PathLike[str] | None = None,
               **kwargs: Any) -> Differences | VerifyReport:
        """Max absolute and relative difference of each output of forward against torch eager,
        with the tolerance of its dtype (`OutputDiff.ok()`): a `Differences`, the list of one
        OutputDiff per output, which prints as a table (output, shape, dtype, max abs, max rel,
        tolerance, ok).

        With compare_intermediates=True, also every FX node of the captured program against
        the ONNX value it became (`fx_to_onnx`), on the same inputs: a `VerifyReport` whose
        `first_divergence` names the first node in graph order that differs beyond tolerance
        (ATen op, module, source line, inputs), or is None. With `repro_dir`, that node's op
        alone is written there as `repro.py` + `inputs.pt`, a script that exports it and fails."""
        if compare_intermediates:
            outputs = self.verify(*args, **kwargs)
            bound_args, bound_kwargs = self._bind(args, kwargs)
            return compare_nodes(self.exported_program, self.graph, self.fx_to_onnx, bound_args, bound_kwargs,
                                 self._feeds(args, kwargs), outputs, repro_dir)
        if repro_dir is not None:
            raise TypeError("verify(repro_dir=...) writes the repro of the first differing node: "
                            "give compare_intermediates=True too")
        actual = self.run(*args, **kwargs)[len(self.written_inputs):]  # first: torch may write into the inputs
        # the buffers the program writes (a training-mode batch norm's running statistics) are
        # put back after torch's run: verifying must not change the user's model
        state = self.model.state_dict(keep_vars=True) if isinstance(self.model, torch.nn.Module) else {}
        saved = snapshot(state[name] for name in self.written_inputs if name in state)
        caches = contains_cache((args, kwargs))
        if caches:  # the model grows the KV caches it is given: it gets copies, the user keeps theirs
            with registered():
                args, kwargs = pytree.tree_map_only(torch.Tensor, torch.clone, (args, kwargs))
        with torch.no_grad(), dataclass_trees.registered(self._dataclasses), registered(caches or contains_cache(
                getattr(getattr(self.exported_program, "call_spec", None), "out_spec", None))):
            expected = self._graph_outputs(pytree.tree_leaves(self.model(*args, **kwargs)))
            put_back(saved)
        names = [v.name for v in self.graph.outputs][len(self.written_inputs):]
        diffs = Differences(compare(name, e, a) for name, e, a in zip(names, expected, actual))
        if len(expected) != len(actual):
            raise AssertionError(f"torch gives {len(expected)} tensor outputs, the ONNX model {len(actual)}")
        return diffs


# integer widenings that keep every value, which torch accepts where the sample's dtype goes
# (token ids into an embedding, indices): signed only, as torch reads uint8 and bool indices as masks
_WIDENINGS = {(torch.int8, torch.int16), (torch.int8, torch.int32), (torch.int8, torch.int64),
              (torch.int16, torch.int32), (torch.int16, torch.int64), (torch.int32, torch.int64)}


def _of_input_shape(x: torch.Tensor, graph_input: Any) -> torch.Tensor:
    """`x`, or an error naming the input and the dims whose sizes the export fixed (the sample's)
    where `x` has others: the newcomer's export without dynamic_shapes, run at another batch
    size (onnxruntime's own says only "Got invalid dimensions for input")."""
    shape = graph_input.shape
    if shape is None or COMPLEX_KEY in graph_input.metadata:
        return x
    if len(shape) != x.dim():
        raise ValueError(f"input {graph_input.name!r} of the exported model has {len(shape)} dims {list(shape)}, got "
                         f"{x.dim()} {list(x.shape)}")
    fixed = [(i, want, got) for i, (want, got) in enumerate(zip(shape, x.shape)) if isinstance(want, int) and want != got]
    if fixed:
        dims = ", ".join(f"dim {i} is {got}, not {want}" for i, want, got in fixed)
        raise ValueError(f"input {graph_input.name!r} of the exported model has shape {list(shape)}, got {list(x.shape)}: "
                         f"{dims}. Those sizes were fixed at export (the sample's, or torch.export's when it "
                         f"specialised them: see the export's warnings). To run other sizes, mark the dims dynamic "
                         f"with export(..., dynamic_shapes=...) (docs/dynamic_shapes.md).")
    return x


def _as_input_dtype(x: torch.Tensor, graph_input: Any) -> torch.Tensor:
    """`x` in the dtype the graph input takes: cast when that is an exact widening of signed
    integers (int32 token ids into an int64 graph), else an error naming the input and both
    dtypes (onnxruntime's own says only "Unexpected input data type")."""
    expected = graph_input.dtype
    if expected is None or COMPLEX_KEY in graph_input.metadata or expected.torch_name is None:
        return x
    want = expected.to_torch()
    if x.dtype == want:
        return x
    if (x.dtype, want) in _WIDENINGS:
        return x.to(want)
    raise TypeError(f"input {graph_input.name!r} of the exported model takes {want}, got {x.dtype}. Pass it as {want} "
                    f"(x.to({want})), or export again with a sample input of dtype {x.dtype}: the model was "
                    "captured for the sample's dtypes, and only exact integer widenings (int32 -> int64) are "
                    "converted for you.")


__all__ = ["DEFAULT_TOLERANCE", "TOLERANCES", "Differences", "ExportResult", "OutputDiff", "StaleWeightsError", "compare"]
