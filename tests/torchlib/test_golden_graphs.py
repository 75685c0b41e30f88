"""Golden snapshots of tiny exported graphs (expecttest: EXPECTTEST_ACCEPT=1 rewrites them)."""

from __future__ import annotations

import onnx
import torch
from expecttest import TestCase
from torch import nn

import torchlib


def graph_text(model: nn.Module, *args: torch.Tensor, **export_kwargs) -> str:
    proto = onnx.ModelProto()
    proto.CopyFrom(torchlib.export(model, args, **export_kwargs).model_proto)
    for node in proto.graph.node:
        del node.metadata_props[:]  # source paths depend on the checkout
    del proto.graph.initializer[:]  # weights are random; their names are checked elsewhere
    return onnx.printer.to_text(proto.graph)


class GoldenGraphs(TestCase):
    def test_linear_relu(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).eval()
        self.assertExpectedInline(graph_text(model, torch.randn(2, 4)), """\
main_graph (float[2,4] input) => (float[2,3] output) {
   [node_gemm] gemm = Gemm <transB: int = 1> (input, "0.weight", "0.bias")
   [node_output] output = Relu (gemm)
}""")

    def test_int_plus_float_scalar_promotes(self):
        class M(nn.Module):
            def forward(self, x):
                return x + 1.5

        self.assertExpectedInline(graph_text(M(), torch.arange(3)), """\
main_graph (int64[3] x) => (float[3] output) {
   [node_cast] cast = Cast <to: int = 1> (x)
   [node_output] output = Add (cast, scalar_float)
}""")

    def test_softmax_with_dynamic_batch(self):
        class M(nn.Module):
            def forward(self, x):
                return torch.softmax(x * 2, dim=-1)

        text = graph_text(M(), torch.randn(2, 5), dynamic_shapes=({0: torch.export.Dim("batch")},))
        self.assertExpectedInline(text, """\
main_graph (float[batch,5] x) => (float[batch,5] output) {
   [node_mul] mul = Mul (x, scalar_float)
   [node_output] output = Softmax <axis: int = 1> (mul)
}""")


def test_golden_graph_up_to_names():
    """The same check without pinning value names: graph_builder.compare ignores names and node
    order, so this golden graph survives a renaming of the exporter's values."""
    from graph_builder.compare import assert_same_graph

    class M(nn.Module):
        def forward(self, x, y):
            return torch.relu(x + y) * x

    proto = torchlib.export(M(), (torch.randn(2, 3), torch.randn(2, 3))).model_proto
    expected = onnx.parser.parse_model(f"""<ir_version: {proto.ir_version}, opset_import: ["" : 23]>
        g (float[2,3] a, float[2,3] b) => (float[2,3] out) {{
            s = Add (a, b)
            r = Relu (s)
            out = Mul (r, a)
        }}""")
    assert_same_graph(proto, expected)
