"""Side effects in an exported program. torch.export threads a token through effectful ops as
`with_effects(token, op, *args)`; torch.linalg.inv, solve and cholesky call their error check
`_linalg_check_errors` that way. ONNX graphs have no side effects and cannot raise: the token
has no graph input (the exporter gives TOKEN inputs the value None), with_effects translates the
op with its own function, and the error checks are no-ops, so a singular input gives the inf/nan
that the `_ex` forms of the ops give, where torch would raise.
"""

from __future__ import annotations

from typing import Any

from graph_builder.type_constraints import TTensor
from torchlib.registry import REGISTRY, aten_op


@aten_op("higher_order::with_effects")
def higher_order_with_effects(token: Any, op: Any, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """with_effects(token, op, *args, **kwargs) -> (token, *outputs)"""
    entry = REGISTRY.lookup(op)
    if entry is None:
        raise ValueError(f"with_effects: the effectful op {op} has no torchlib function; add one (see CONTRIBUTING.md)")
    result = entry.function(*args, **kwargs)
    if result is None:
        return (None,)
    return (None, *result) if isinstance(result, tuple) else (None, result)


@aten_op("aten::_linalg_check_errors")
def aten__linalg_check_errors(info: TTensor, api_name: str, *, is_matrix: bool) -> None:
    """_linalg_check_errors(Tensor info, str api_name, *, bool is_matrix) -> ()

    torch raises when `info` is nonzero (a singular matrix, a matrix that is not
    positive-definite); an ONNX graph cannot raise, so this check is dropped."""
