"""ONNX -> torch: `import_onnx(model_or_path)` gives a torch.fx.GraphModule.

The inverse of the function library: one converter per ONNX op (by domain, op type and opset
range, `torchlib.importer.registry`), in one small module per family of ops. The importer reads
graph_builder's weight sources and torch; the library and the exporter never import it, and it
never imports the exporter.
"""

from __future__ import annotations

import os

import onnx
import torch

from torchlib.importer import (  # noqa: F401  (each module registers its converters)
    activations,
    com_microsoft,
    com_microsoft_attention,
    contrib,
    control_flow,
    conv_pool,
    detection,
    elementwise,
    indexing,
    normalization,
    quantization,
    reductions,
    resize,
    rnn,
    sampling,
    shape,
    spectral,
    text,
    trees,
)
from torchlib.importer.converter import Importer, OnnxImportError

__all__ = ["OnnxImportError", "import_onnx"]


def import_onnx(model_or_path: onnx.ModelProto | str | os.PathLike[str]) -> torch.fx.GraphModule:
    """The ONNX model as a GraphModule: called with torch tensors in the graph's input order, it
    returns its outputs (a tensor, or a tuple). Floating point initializers are parameters.

    Raises OnnxImportError naming the op, the node and the opset of what cannot be imported."""
    if isinstance(model_or_path, onnx.ModelProto):
        model, base_dir = model_or_path, None
    else:
        path = os.fspath(model_or_path)
        model, base_dir = onnx.load(path, load_external_data=False), os.path.dirname(os.path.abspath(path))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is not None and opset < 7:
        try:
            model = onnx.version_converter.convert_version(model, 7)
        except Exception as e:  # onnx's converter raises its own C++ errors
            raise OnnxImportError(f"the model uses ai.onnx opset {opset}; onnx's version converter could not "
                                  f"bring {_unconvertible(model)} to opset 7: {e}") from e  # fmt: skip
    return Importer(model, base_dir).import_model()


def _unconvertible(model: onnx.ModelProto) -> str:
    """The first node that onnx's version converter cannot bring to opset 7 on its own (a
    one-node model of it), as "node 'name' (op type)"; "it" when every node converts alone."""
    for node in model.graph.node:
        values = [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in node.input if n]
        outputs = [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in node.output if n]
        alone = onnx.helper.make_model(onnx.helper.make_graph([node], "node", values, outputs),
                                       opset_imports=model.opset_import, ir_version=model.ir_version)
        try:
            onnx.version_converter.convert_version(alone, 7)
        except Exception:
            return f"node {node.name!r} ({node.op_type})"
    return "it"
