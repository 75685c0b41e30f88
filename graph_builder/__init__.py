"""graph_builder: a small ONNX IR, the typed `op` namespace, eager and tracing evaluators."""

from graph_builder.builder import GraphBuilder
from graph_builder.evaluator import current_exact_nan, current_opset, exact_nan
from graph_builder.generated.opset23 import Opset23
from graph_builder.ir import Graph, Node, Value, model_from_proto
from graph_builder.opset import DEFAULT_OPSET, OpError, Opset, custom_op, opset
from graph_builder.types import (
    BFLOAT16,
    BOOL,
    COMPLEX64,
    COMPLEX128,
    DOUBLE,
    FLOAT,
    FLOAT16,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    DType,
)  # fmt: skip

op: Opset23 = opset(DEFAULT_OPSET)  # type: ignore[assignment]  # opset() gives the generated, typed class

__all__ = [
    "BFLOAT16", "BOOL", "COMPLEX64", "COMPLEX128", "DEFAULT_OPSET", "DOUBLE", "DType", "FLOAT", "FLOAT16",
    "Graph", "GraphBuilder", "current_exact_nan", "current_opset", "exact_nan", "custom_op", "INT8", "INT16", "INT32", "INT64", "Node", "OpError", "Opset", "STRING",
    "UINT8", "UINT16", "UINT32", "UINT64", "Value", "model_from_proto", "op", "opset",
]  # fmt: skip
