"""The size conditions of torch.export's program, checked by the ONNX model on every run.

torch.export may keep a dim dynamic and still hold only for sizes that meet a condition beyond
the dim's range: focalnet pads a width that is not a multiple of its patch size, so its program
(captured at a width where it did not) holds only for `width // 16 % 2 == 0`. `ep.module()`
refuses other inputs ("Guard failed"); an ONNX model has no such check of its own, and would run
the sample's path on them and answer wrongly. So each such condition, one with a floor division
or a remainder of one input size (`checked`), is written into the graph from the inputs'
shapes and `require`d (`graph_builder.require`): onnxruntime stops at a node named
`check: <condition>` on inputs that do not meet it. A condition this module cannot write (a
function it does not know) is left to the export's warning, which says so.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np
import torch

from graph_builder import op, types
from graph_builder.evaluator import require
from graph_builder.ir import Value
from torchlib.exporter.dynamic_shapes import _shape_env, path_conditions


def implied_assertions(program: torch.export.ExportedProgram) -> set[str]:
    """The FX nodes of the program's run-time assertions (`aten::_assert_scalar`) that restate
    what the ops themselves make true, and so hold in any correct translation: torch asserts the
    range it gave each size that data decides (nonzero's count: `u0 >= 0`, `u0 <= numel`), and
    `Min(k, u) <= u`. The ONNX model leaves them out (detection models have hundreds: ssdlite's
    291 were a third of its graph). An assertion torch was asked for (a `torch._check` in the
    model, a branch draft_export assumed) is in the shape environment's deferred assertions, or
    about a value that is no size, and is kept."""
    import sympy

    shape_env = _shape_env(program)
    if shape_env is None:
        return set()
    asked = {str(a.expr) for found in getattr(shape_env, "deferred_runtime_asserts", {}).values() for a in found}
    sizes = set(getattr(shape_env, "size_like", ()))
    implied = set()
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten._assert_scalar.default:
            continue
        condition = getattr(getattr(node.args[0], "meta", {}).get("val"), "node", None)
        expr = getattr(condition, "expr", None)
        if not isinstance(expr, sympy.Rel):
            continue
        lhs, rhs = expr.lhs, expr.rhs
        if isinstance(expr, (sympy.GreaterThan, sympy.StrictGreaterThan)):
            lhs, rhs = rhs, lhs  # as lhs <= rhs (or <)
        bound = (lhs in sizes and rhs.is_Integer) or (rhs in sizes and lhs.is_Integer and lhs <= 0)
        tautology = isinstance(expr, (sympy.LessThan, sympy.GreaterThan)) and (
            (type(lhs).__name__ == "Min" and rhs in lhs.args) or (type(rhs).__name__ == "Max" and lhs in rhs.args))  # torch's or sympy's
        if tautology or (bound and str(expr) not in asked):
            implied.add(node.name)
    return implied


class NotWritable(Exception):
    """A condition with a function the ONNX graph is not given here."""


def require_path_conditions(program: torch.export.ExportedProgram, inputs: dict[str, Any]) -> list[str]:
    """Require, in the graph being built (inside `with builder:`), each path condition of the
    program (a floor division or a remainder of input sizes), before anything reads the inputs.
    `inputs` maps each placeholder's name to what it became; the input whose size a condition
    reads is replaced there by itself checked (`require(..., value=)`), so every node reading it
    runs after the check and onnxruntime stops at the check, naming it, not at the first node
    that fails on the other sizes. Returns the texts of the conditions it could not write."""
    conditions = [(expr, text) for expr, text, path in path_conditions(program) if checked(expr, path)]
    if not conditions:
        return []
    sizes = _size_symbols(program, inputs)
    unwritten = []
    for expr, text in conditions:
        try:
            condition = _write(expr, {symbol: read for symbol, (_, read) in sizes.items()})
        except NotWritable:
            unwritten.append(text)
            continue
        # every input whose size it reads (`checked`: one size, or an equality of several)
        for name in dict.fromkeys(sizes[symbol][0] for symbol in sorted(expr.free_symbols, key=str)):
            inputs[name] = require(condition, text, inputs[name])
    return unwritten


def checked(expr: Any, path: bool) -> bool:
    """Whether the ONNX model checks a path condition: one with a floor division or a remainder
    of one input size (focalnet's `w // 16 % 2 == 0`, mobilevit's height a multiple of 4), and an
    equality of such sizes, whatever sizes it reads: a size the program computes must be what it
    was at the sample (dinov2's patch count `(h // 14) * (w // 14) == 16`, timm's efficientformer's
    `(1 + (h - 1) // 32) * (1 + (w - 1) // 32) == 49`, the tokens its attention bias is added to;
    other sizes would fail in onnxruntime at that Add, unnamed). Not checked, only listed: an
    inequality relating several sizes (`1 + (h - 1) // 2 != l`, torch assuming two sizes stay as
    distinct as at the sample), and a size that is not 0 or 1 (`c // 6 != 1`: torch's assumption
    for every dynamic size, which a graph broadcasting at run time handles either way). Both are
    most often the inputs' contract, not the model's path."""
    import sympy

    if not path:
        return False
    if isinstance(expr, sympy.Eq):
        return True
    if len(expr.free_symbols) != 1:
        return False
    if isinstance(expr, sympy.Ne) and not expr.has(sympy.Mod) and not any(
            type(f).__name__ in ("Mod", "PythonMod") for f in expr.atoms(sympy.Function)):  # fmt: skip
        sides = {expr.lhs, expr.rhs}
        if sides & {sympy.Integer(0), sympy.Integer(1)}:
            return False
    return True


def _size_symbols(program: torch.export.ExportedProgram,
                  inputs: dict[str, Any]) -> dict[Any, tuple[str, Callable[[], Any]]]:
    """torch's symbol of each dynamic input dim -> (the placeholder it is a size of, how to read
    that size in the graph)."""
    found: dict[Any, tuple[str, Callable[[], Any]]] = {}
    for node in program.graph.nodes:
        value, fake = inputs.get(node.name), node.meta.get("val")
        if node.op != "placeholder" or not isinstance(value, Value) or not isinstance(fake, torch.Tensor):
            continue
        for axis, size in enumerate(fake.shape):
            if isinstance(size, torch.SymInt) and size.node.expr.is_Symbol and size.node.expr not in found:
                found[size.node.expr] = (node.name, lambda value=value, axis=axis: op.Squeeze(
                    op.Shape(value, start=axis, end=axis + 1), [0]))
    return found


def _int(x: Any) -> Any:
    return np.array(x, dtype=np.int64) if isinstance(x, int) else x


def _floor_div(a: Any, b: Any) -> Any:
    """Python's `a // b` on INT64 scalars: ONNX's integer Div truncates, so one less where the
    signs differ and the division is inexact."""
    quot = op.Div(_int(a), _int(b))
    inexact = op.Not(op.Equal(op.Sub(_int(a), op.Mul(quot, _int(b))), _int(0)))
    fix = op.And(inexact, op.Xor(op.Less(_int(a), _int(0)), op.Less(_int(b), _int(0))))
    return op.Sub(quot, op.Cast(fix, to=types.INT64.onnx))


def _write(expr: Any, sizes: dict[Any, Callable[[], Any]]) -> Any:
    """The INT64 or BOOL scalar Value (or Python value) that computes a sympy expression of size
    symbols: sums, products, powers, floor divisions, remainders, min / max, comparisons and logic."""
    import sympy

    if expr.is_Symbol:
        if expr not in sizes:
            raise NotWritable(f"the symbol {expr} is no input's size")
        return sizes[expr]()
    if expr.is_Integer:
        return int(expr)
    if expr is sympy.true or expr is sympy.false:
        return bool(expr)
    kind = type(expr).__name__
    if kind in ("CeilToInt", "FloorToInt") and type(expr.args[0]).__name__ == "IntTrueDiv":
        # math.ceil(a / b) and math.floor(a / b) of integers (mobilevit's patch grid), exactly
        a, b = (_write(x, sizes) for x in expr.args[0].args)
        return _floor_div(a, b) if kind == "FloorToInt" else op.Neg(_floor_div(op.Neg(_int(a)), b))
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp >= 1:
        # sympy writes a size's square as a power (dinov2's patch count: (h // 14)**2 == 16)
        base = _write(expr.base, sizes)
        return reduce(lambda a, b: op.Mul(_int(a), _int(b)), [base] * int(expr.exp))
    args = [_write(a, sizes) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return reduce(lambda a, b: op.Add(_int(a), _int(b)), args)
    if isinstance(expr, sympy.Mul):
        return reduce(lambda a, b: op.Mul(_int(a), _int(b)), args)
    if kind == "FloorDiv":
        return _floor_div(args[0], args[1])
    if kind in ("Mod", "PythonMod"):  # Python's remainder: the divisor's sign, as ONNX's Mod with fmod=0
        return op.Mod(_int(args[0]), _int(args[1]))
    if kind in ("Max", "Min"):
        return (op.Max if kind == "Max" else op.Min)(*[_int(a) for a in args])
    compare: dict[str, Callable[..., Any]] = {
        "Equality": op.Equal, "StrictLessThan": op.Less, "LessThan": op.LessOrEqual,
        "StrictGreaterThan": op.Greater, "GreaterThan": op.GreaterOrEqual,
    }  # fmt: skip
    if kind in compare:
        return compare[kind](_int(args[0]), _int(args[1]))
    if kind == "Unequality":
        return op.Not(op.Equal(_int(args[0]), _int(args[1])))
    if kind in ("And", "Or"):
        return reduce(op.And if kind == "And" else op.Or, args)
    if kind == "Not":
        return op.Not(args[0])
    raise NotWritable(f"{kind} in {expr}")

