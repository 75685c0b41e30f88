"""Self-check on the sample: the exported model must reproduce the model on its own sample input.

torch eager runs once on (a copy of) the sample; then the ONNX model in onnxruntime (after
translation) runs on the same sample, and every tensor output must agree with torch's within its
dtype's tolerance (`result.compare`). The ONNX model runs as written: in a session of its own
with onnxruntime's graph optimizations off, on one thread (`result.check_session()`), which costs
a fraction of the optimized session `result(...)` builds on its first call. The captured program runs too: right after capture when
draft_export captured it (it specialised the model: fail before translating), else only when the
ONNX model differs, so that the error says whether capture or translation is wrong (building
`ep.module()` costs more than the rest of the check for a small model).
A mismatch raises SelfCheckError naming the first output that differs: its path in forward's
output structure, its ONNX name, the max abs / rel difference and the tolerance used.
An output that differs but depends on an op whose outputs the math leaves free (its function
says so with `aten_op(..., not_unique="...")`: eigenvectors up to sign or phase, the order of
equal scores in NMS) is not an error: `result.self_check` says "inconclusive", names the op
and what it leaves free, and the exporter warns. Every other output is still checked.

When it runs (`export(..., check=...)`):
- `check=None` (default): when the check is cheap (below), and always for a program captured by
  draft_export, which follows the sample's path where torch.export could not trace the model;
- `check=True`: always; `check=False`: never (the diagnostics say so).

Cheap means at most MAX_PARAMETERS parameter and buffer elements and at most MAX_WORK units of
work at the sample's sizes, estimated from the captured graph without running it: for every node
that reads a weight, the weight's elements times the elements produced per row of its first dim
(a Linear's or a convolution's multiply-adds; not for a weight that broadcasts to the output,
read element by element; a node computed from weights alone is a weight), plus the elements
every node produces. For such a model one eager run and one onnxruntime run take a fraction of
capture and translation.

A program that draws random numbers cannot be compared run to run: when the program has an op
tagged `nondeterministic_seeded` (dropout, rand, bernoulli), torch eager runs a second time with
another seed, and when the two runs differ the check is skipped (`result.self_check` says why).
Dropout at p=0 or in eval mode stays checked. A program with torch.empty and its kin (values
undefined until written: MoE routers write an inverse permutation into `empty_like`) makes torch
eager run twice more, each allocation of that family filled first with zeros, then with a poison
(NaN, or an integer's extreme): an output that differs between the runs depends on memory torch
leaves undefined, and when the ONNX model differs there it is "inconclusive" (named, not an
error); every other output is compared as usual. When every output depends on such memory the
check is skipped and says so. Each run is seeded inside `fork_rng`, so the
user's random state is left as it was. The model's buffers are put back after each run and the sample is copied, so the check
changes neither the user's model nor the sample.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import operator
import time
from typing import Any

import torch
import torch.fx.experimental.symbolic_shapes as _symbolic_shapes
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from torchlib.exporter.comparison import agree_where_finite
from torchlib.exporter.result import ExportResult, OutputDiff, compare, put_back, snapshot
from torchlib.exporter.subgraph import all_nodes
from torchlib.registry import NOT_UNIQUE, qualified_name


def _unguarded_size_hint() -> Any:
    """torch's size hint that adds no guard, `(dim, fallback=...) -> int`: `optimization_hint`
    from torch 2.12, `size_hint` in 2.11 (where `hint_int` warns that it is deprecated),
    `hint_int` in 2.10 (whose `size_hint` takes no fallback)."""
    found = getattr(_symbolic_shapes, "optimization_hint", None)
    if found is not None:
        return found
    size_hint = getattr(_symbolic_shapes, "size_hint", None)
    if size_hint is not None and "fallback" in inspect.signature(size_hint).parameters:
        return size_hint
    return vars(_symbolic_shapes)["hint_int"]


optimization_hint: Any = _unguarded_size_hint()

_FLOAT4_X2 = getattr(torch, "float4_e2m1fn_x2", None)
MAX_PARAMETERS = 50_000_000
MAX_WORK = 5_000_000_000


class SelfCheckError(RuntimeError):
    """The exported model does not reproduce the model on its own sample input."""


def plan(check: bool | None, strategy: str, ep: torch.export.ExportedProgram) -> str | None:
    """Why the check is skipped (for `result.self_check`), or None when it runs."""
    if check is False:
        return "skipped (check=False)"
    if any(isinstance(v, torch.Tensor) and v.dtype == _FLOAT4_X2 for n in all_nodes(ep.graph_module)
           for v in pytree.tree_leaves(n.meta.get("val"))):
        return ("skipped: the program holds torch.float4_e2m1fn_x2 tensors, which torch cannot copy and onnxruntime "
                "has no kernels for (FLOAT4E2M1)")
    if check or strategy == "draft_export":
        return None
    parameters = sum(t.numel() for t in ep.state_dict.values()) + sum(
        t.numel() for t in ep.constants.values() if isinstance(t, torch.Tensor))
    if parameters > MAX_PARAMETERS:
        return (f"skipped: {parameters / 1e6:.0f}M parameter elements, over the {MAX_PARAMETERS / 1e6:.0f}M "
                "a cheap check allows (export(..., check=True) forces it; result.verify(*args) checks any input)")
    work = estimated_work(ep)
    if work > MAX_WORK:
        return (f"skipped: about {work / 1e9:.1f}G multiply-adds at the sample's sizes, over the "
                f"{MAX_WORK / 1e9:.0f}G a cheap check allows (export(..., check=True) forces it)")
    return None


def estimated_work(ep: torch.export.ExportedProgram) -> int:
    """Multiply-adds against the weights plus elements produced, at the sample's sizes (see the
    module docstring); symbolic sizes count at their sample value. A node computed from weights
    alone (a reshape of a weight, NFNet's weight standardization) is a weight too: its elements
    are counted once, and the node that reads it with the data is the product."""
    weights = {s.arg.name for s in ep.graph_signature.input_specs
               if s.kind.name in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR") and hasattr(s.arg, "name")}
    work = 0
    for node in all_nodes(ep.graph_module):
        if node.op != "call_function":
            continue
        outputs = [v for v in pytree.tree_leaves(node.meta.get("val")) if isinstance(v, torch.Tensor)]
        produced = sum(_numel(v) for v in outputs)
        work += produced
        inputs = node.all_input_nodes
        if inputs and all(arg.name in weights for arg in inputs):
            weights.add(node.name)
            continue
        for arg in inputs:
            weight = arg.meta.get("val")
            if arg.name not in weights or not isinstance(weight, torch.Tensor) or weight.dim() < 2:
                continue
            shape = [optimization_hint(d, fallback=1) for d in weight.shape]
            if shape[0] and not any(_broadcasts(shape, v.shape) for v in outputs):
                work += math.prod(shape) * produced // shape[0]
    return work


def _broadcasts(weight: list[int], output: Any) -> bool:
    """Whether a weight of this shape broadcasts to the output's (at the sample's sizes): read
    element by element (LeViT's attention biases added to the scores), its work is the elements
    produced, not a multiply-add per weight element and row. A Linear's [out, in] weight
    broadcasts to its [..., rows, out] output only when in == out == rows: then it counts as
    elementwise."""
    sizes = [optimization_hint(d, fallback=1) for d in output]
    return len(weight) <= len(sizes) and all(w in (1, o) for w, o in zip(reversed(weight), reversed(sizes)))


def _numel(t: torch.Tensor) -> int:
    return math.prod(optimization_hint(d, fallback=1) for d in t.shape)


def _is_random(node: torch.fx.Node) -> bool:
    """Whether the node may draw random numbers: an op tagged `nondeterministic_seeded` whose
    arguments do not rule randomness out. Dropout-like arguments rule it out: a bool `train` or
    `training` that is False, or a probability `p` or `dropout_p` that is 0 (eval-mode dropout,
    attention without dropout, bernoulli(p=0))."""
    target = node.target
    if torch.Tag.nondeterministic_seeded not in getattr(target, "tags", ()):
        return False
    values = _arguments(node)
    if values is None:
        return True
    if any(values.get(name) is False for name in ("train", "training")):
        return False
    return not any(type(values.get(name)) in (int, float) and values[name] == 0 for name in ("p", "dropout_p"))


def _arguments(node: torch.fx.Node) -> dict[str, Any] | None:
    """The node's arguments by their schema's names (given, or the defaults); None without a schema."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return None
    return {a.name: node.args[i] if i < len(node.args) else node.kwargs.get(
        a.name, a.default_value if a.has_default_value() else None) for i, a in enumerate(schema.arguments)}


def training_nodes(ep: torch.export.ExportedProgram) -> list[torch.fx.Node]:
    """The nodes told to behave as in training: a `train` or `training` argument that is True
    (dropout, batch norm, ...), or instance norm using the input's statistics where it has running
    ones to update, except a dropout whose probability is 0, which is the same in
    both modes. An nn.Module left in training mode exports these."""
    found = []
    for node in all_nodes(ep.graph_module):
        values = _arguments(node)
        if values is None:
            continue
        training = any(values.get(name) is True for name in ("train", "training")) or (
            values.get("use_input_stats") is True and values.get("running_mean") is not None)  # instance norm
        no_drop = any(type(values.get(name)) in (int, float) and values[name] == 0 for name in ("p", "dropout_p"))
        if training and not no_drop:
            found.append(node)
    return found


def _is_uninitialized(target: Any) -> bool:
    """torch.empty and its kin: their values are whatever the memory held."""
    return _op_name(target).split(".")[0] in ("aten::empty", "aten::empty_like", "aten::empty_strided",
                                              "aten::new_empty", "aten::new_empty_strided", "aten::empty_permuted")


def _op_name(target: Any) -> str:
    return str(getattr(target, "_name", target))


def _same(a: list[_Output], b: list[_Output]) -> bool:
    return len(a) == len(b) and all(compare("", x.tensor, y.tensor).ok() for x, y in zip(a, b))


@dataclasses.dataclass
class _Output:
    path: str  # "[0]", "['logits']", "" for a single tensor
    tensor: torch.Tensor
    scalar: bool = False  # a Python int or float (a symbolic one is a graph output)
    undefined: str = ""  # why its value is not defined by the model (memory torch leaves undefined), if so


class _FillUninitialized(TorchDispatchMode):
    """Fill every allocation of torch.empty's family with zeros ("zeros") or with a poison
    ("poison": NaN for floating and complex dtypes, the largest value for integers, True for bool),
    so that two runs tell the outputs that depend on its undefined values."""

    def __init__(self, fill: str):
        super().__init__()
        self.fill = fill

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and _is_uninitialized(func):
            with torch.no_grad():
                out.fill_(0 if self.fill == "zeros" else _poison(out.dtype))
        return out


def _poison(dtype: torch.dtype) -> Any:
    if dtype.is_floating_point or dtype.is_complex:
        return math.nan
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max


class Sample:
    """The sample and torch eager's outputs on it, computed once. `seconds` says where the
    check's time went: "eager" (torch on the sample, every run the check makes), "session"
    (building the check session), "onnxruntime" (running it on the sample); the rest of the
    check (deciding whether it runs, copying the sample, comparing) is what these leave of it."""

    def __init__(self, model: torch.nn.Module, args: tuple, kwargs: dict, ep: torch.export.ExportedProgram):
        self.args, self.kwargs = args, kwargs
        self.model = model
        self.seconds = {"eager": 0.0, "session": 0.0, "onnxruntime": 0.0}
        self.expected = self._run(model)
        self.random = ""  # why the outputs cannot be compared, when they cannot
        ops = sorted({_op_name(n.target) for n in all_nodes(ep.graph_module) if _is_random(n)})
        if ops:  # ops that may draw random numbers (dropout, even at p=0): random if two seeds differ,
            # in the model or in the program (a model that seeds its own generator inside forward is
            # the same under both seeds; the program, which does not keep that call, is not)
            if not (_same(self.expected, self._run(model, seed=1)) and self._program_is_seeded(ep)):
                self.random = f"skipped: the program draws random numbers ({', '.join(ops)}), so two runs differ"
        empty = sorted({_op_name(n.target) for n in all_nodes(ep.graph_module) if _is_uninitialized(n.target)})
        if empty and not self.random:
            self._mark_undefined(model, ", ".join(empty))

    def _mark_undefined(self, model: Any, ops: str) -> None:
        """Mark the outputs that depend on memory the program allocates and may not fill (torch.empty
        and its kin, `ops`): those that differ between eager runs with every such allocation filled
        with zeros and with a poison. When every output does, the check is skipped (self.random)."""
        why = f"memory torch leaves undefined (the program allocates it with {ops} and does not fill all of it)"
        try:
            zeros, poison = (self._run(model, fill=fill) for fill in ("zeros", "poison"))
        except Exception as e:  # noqa: BLE001  (an op the dispatch mode cannot run: then nothing is compared)
            self.random = (f"skipped: the program allocates memory it may not fill ({ops}), and torch eager failed "
                           f"under the mode that fills it ({type(e).__name__}: {str(e).strip()[:200]})")
            return
        for expected, z, p in zip(self.expected, zeros, poison):
            if not (compare("", expected.tensor, z.tensor).ok() and compare("", z.tensor, p.tensor).ok()):
                expected.undefined = why
        if len(zeros) != len(self.expected) or all(o.undefined for o in self.expected):
            self.random = f"skipped: every output depends on {why}"

    def _program_is_seeded(self, ep: torch.export.ExportedProgram) -> bool:
        """Whether the program gives one answer under two seeds (a failing run: check_program says so)."""
        program = ep.module()
        try:
            return _same(self._run(program, seed=0), self._run(program, seed=1))
        except Exception:  # noqa: BLE001
            return True

    def _run(self, function: Any, seed: int = 0, fill: str | None = None) -> list[_Output]:
        """function(copy of the sample), with the model's buffers put back after (a program captured
        for training writes buffers in place, with no trace in its signature). `fill` ("zeros" or
        "poison"): every torch.empty-like allocation is filled so (_FillUninitialized)."""
        start = time.perf_counter()
        saved = snapshot(self.model.buffers())
        args, kwargs = pytree.tree_map_only(torch.Tensor, lambda t: t.clone(), (self.args, self.kwargs))
        mode = _FillUninitialized(fill) if fill else contextlib.nullcontext()
        try:
            with torch.no_grad(), torch.random.fork_rng(devices=[]), mode:  # the user's random state is kept
                # the CPU generator only, the one fork_rng(devices=[]) restores: torch.manual_seed
                # also queues a seeding of each accelerator module not yet initialised (cuda, xpu,
                # mtia), formatting the stack for each: 0.4-1.5 ms a call, by the stack's depth
                torch.default_generator.manual_seed(seed)
                out = function(*args, **kwargs)
        finally:
            put_back(saved)
            self.seconds["eager"] += time.perf_counter() - start
        leaves, _ = pytree.tree_flatten_with_path(out)
        return [_Output(pytree.keystr(path), v, False) if isinstance(v, torch.Tensor) else
                _Output(pytree.keystr(path), torch.tensor(v), True) for path, v in leaves if isinstance(v, (torch.Tensor, int, float))]

    def check_program(self, ep: torch.export.ExportedProgram, strategy: str) -> None:
        """The captured program against torch eager (raises SelfCheckError)."""
        try:
            actual = self._run(ep.module())
        except Exception as e:  # noqa: BLE001  (a runtime assertion of the program, or any failure, is a mismatch)
            raise SelfCheckError(
                f"the program captured by torch.export ({strategy}) fails on the sample input it was captured "
                f"from: {type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
                + _advice(strategy)) from e
        names = [o.path or "output" for o in self.expected]
        self._raise_on_mismatch(names, self.expected, [o.tensor for o in actual],
                                f"the program captured by torch.export ({strategy})", strategy)

    def check_onnx(self, result: ExportResult, ep: torch.export.ExportedProgram, strategy: str,
                   native_forms: bool = False) -> list[str]:
        """The ONNX model in onnxruntime against torch eager (raises SelfCheckError). When it
        differs, the captured program is checked too (unless it already was, after
        draft_export), so that the error says which of capture and translation is wrong.

        An output that differs but depends on an op whose outputs the math leaves free
        (`aten_op(..., not_unique=...)`: eigenvectors up to sign, equal scores in either order)
        does not raise: it is returned as an inconclusive finding, and the caller warns. So does,
        with `native_forms` (exact_nan=False, and a function chose a native form), an output that
        differs only where torch's value is NaN or infinite: the difference those forms document."""
        try:
            return self._check_onnx(result, ep, strategy, native_forms)
        except SelfCheckError:
            if strategy != "draft_export":
                self.check_program(ep, strategy)
            raise

    def _check_onnx(self, result: ExportResult, ep: torch.export.ExportedProgram, strategy: str,
                    native_forms: bool) -> list[str]:
        args, kwargs = pytree.tree_map_only(torch.Tensor, lambda t: t.clone(), (self.args, self.kwargs))
        start = time.perf_counter()
        try:
            try:
                session = result.check_session()
            finally:
                built = time.perf_counter()
                self.seconds["session"] += built - start
            actual = result.run_in(session, args, kwargs)[len(result.written_inputs):]
        except Exception as e:  # noqa: BLE001  (onnxruntime failing on the sample is the finding)
            raise SelfCheckError(f"the ONNX model fails in onnxruntime on the sample input it was exported from: "
                                 f"{type(e).__name__}: {str(e).strip()[:300]}") from e
        finally:
            self.seconds["onnxruntime"] += time.perf_counter() - built
        names = [v.name for v in result.graph.outputs][len(result.written_inputs):]
        nodes = self._graph_output_nodes(ep)
        # reached only with a program that reproduces the model (checked before, or by check_onnx
        # when this raises): what differs is the translation
        expected = self._graph_outputs(ep)

        def excuse(i: int) -> str | None:
            if native_forms and i < len(actual) and agree_where_finite(expected[i].tensor, actual[i]):
                return _NATIVE_FORMS
            return _not_unique_source(nodes[i]) if i < len(nodes) else None

        return self._raise_on_mismatch(names, expected, actual, "the ONNX model", TRANSLATION, excuse=excuse)

    def _graph_outputs(self, ep: torch.export.ExportedProgram) -> list[_Output]:
        """The eager outputs that are graph outputs: tensors and symbolic ints / floats, not the
        constants torch.export kept out of the graph."""
        specs = [s for s in ep.graph_signature.output_specs if s.kind.name == "USER_OUTPUT"]
        if len(specs) != len(self.expected):
            return [o for o in self.expected if not o.scalar]
        return [o for o, s in zip(self.expected, specs) if type(s.arg).__name__ != "ConstantArgument"]

    def _graph_output_nodes(self, ep: torch.export.ExportedProgram) -> list[Any]:
        """The FX value behind each graph output of `_graph_outputs`, in the same order."""
        values = list(ep.graph.output_node().args[0])
        return [value for value, spec in zip(values, ep.graph_signature.output_specs)
                if spec.kind.name == "USER_OUTPUT" and type(spec.arg).__name__ != "ConstantArgument"]

    def _raise_on_mismatch(self, names: list[str], expected_outputs: list[_Output], actual: list[torch.Tensor],
                           what: str, strategy: str, excuse: Any = None) -> list[str]:
        if len(actual) != len(expected_outputs):
            raise SelfCheckError(f"{what} gives {len(actual)} outputs on the sample input where torch gives "
                                 f"{len(expected_outputs)}" + _advice(strategy))
        inconclusive = []
        for i, (name, expected, a) in enumerate(zip(names, expected_outputs, actual)):
            diff = compare(name, expected.tensor, a)
            if not diff.ok():
                source = expected.undefined or (excuse(i) if excuse is not None else None)
                if source is None:
                    raise SelfCheckError(f"{what} does not reproduce the model on the sample input it was exported "
                                         f"from: {_describe(expected, a, diff)}" + _advice(strategy))
                inconclusive.append(f"{_describe(expected, a, diff)}, and it depends on {source}")
        return inconclusive


_NATIVE_FORMS = ("elements where torch gives NaN or infinity only, which the runtime's native ops chosen by "
                 "exact_nan=False (the default) do not reproduce (docs/exact_nan.md); export(..., exact_nan=True) "
                 "gives torch's values there")


def _not_unique_source(output: Any) -> str | None:
    """The first op upstream of an FX value whose outputs the math leaves free, with what is free
    (NOT_UNIQUE, declared by the op's function), or None. Where the op declares which of its
    outputs are free, an output reached through another one (eigh's eigenvalues) is unique: the
    walk goes on above the op's inputs instead."""
    seen: set[tuple[Any, int | None]] = set()
    todo: list[tuple[Any, int | None]] = [(output, None)]  # (node, the output of it that is used)
    while todo:
        node, index = todo.pop()
        if not isinstance(node, torch.fx.Node) or (node, index) in seen:
            continue
        seen.add((node, index))
        if node.op == "call_function" and node.target is operator.getitem and isinstance(node.args[1], int):
            todo.append((node.args[0], node.args[1]))
            continue
        if node.op == "call_function":
            name = qualified_name(node.target)
            if name in NOT_UNIQUE:
                reason, free = NOT_UNIQUE[name]
                if free is None or index is None or index in free:
                    return f"{name} ({reason})"
        todo.extend((n, None) for n in node.all_input_nodes)
    return None


def _describe(expected: _Output, actual: torch.Tensor, diff: OutputDiff) -> str:
    where = f"output {expected.path}" if expected.path else "the output"
    if diff.name != (expected.path or "output"):
        where += f" (ONNX output {diff.name!r})"
    if not diff.shape_ok:
        return f"{where} has shape {tuple(actual.shape)} where torch gives {tuple(expected.tensor.shape)}"
    if not diff.dtype_ok:
        return f"{where} has dtype {actual.dtype} where torch gives {expected.tensor.dtype}"
    atol, rtol = diff.tolerance
    return (f"{where} differs by max abs {diff.max_abs:.3g} (tolerance {atol:g} x scale {diff.scale:.3g}) "
            f"and max rel {diff.max_rel:.3g} (tolerance {rtol:g})")


TRANSLATION = "translation"  # _advice's key for an ONNX model that differs from a program that does not


def _advice(strategy: str) -> str:
    if strategy == TRANSLATION:
        return ("\n  The captured program reproduces the model; its ONNX translation does not: a function that "
                "translated one of its ATen ops is wrong (one given in functions= or registered with @aten_op, or "
                "torchlib's own: then please report it with the model). To find the first op that differs, export "
                "with check=False and run result.verify(*args, compare_intermediates=True), which names its ATen op "
                "and source line. export(..., check=False) skips this check.")
    if strategy == "draft_export":
        return ("\n  draft_export captured the model where torch.export could not (see the warning): it specialised "
                "data-dependent code, and the result is not the model. Rewrite the data-dependent branch with "
                "torch.cond or tensor ops (torch.where), so that non-strict capture succeeds. "
                "export(..., check=False) skips this check.")
    return ("\n  This is a bug in torchlib or torch.export: please report it with the model. "
            "export(..., check=False) skips this check.")
