"""torchlib.onnx_export runs code written for torch.onnx.export(..., dynamo=True) unchanged:
the calling conventions and the custom functions torch.onnx users write with onnxscript."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest
import torch

import torchlib


class TwoInputs(torch.nn.Module):
    def forward(self, x, b):
        return x.relu(), b.sigmoid()


def test_trailing_dict_in_args_is_kwargs():
    x, b = torch.randn(2, 3), torch.randn(2, 3)
    result = torchlib.onnx_export(TwoInputs(), (x, {"b": b}), dynamic_axes={"x": [0, 1], "b": [0, 1]})
    for got, want in zip(result(x, b=b), TwoInputs()(x, b), strict=True):
        torch.testing.assert_close(got, want)
    x2, b2 = torch.randn(5, 4), torch.randn(5, 4)
    torch.testing.assert_close(result(x2, b=b2)[1], b2.sigmoid())


def test_explicit_kwargs_keep_a_trailing_dict_positional():
    class TakesDict(torch.nn.Module):
        def forward(self, x, d, *, scale):
            return x * d["w"] * scale

    x, w, s = torch.randn(3), torch.randn(3), torch.randn(3)
    result = torchlib.onnx_export(TakesDict(), (x, {"w": w}), kwargs={"scale": s})
    torch.testing.assert_close(result(x, {"w": w}, scale=s), x * w * s)


@pytest.mark.skipif(not hasattr(torch.onnx, "ExportableModule"), reason="torch.onnx.ExportableModule is torch 2.10+")
def test_exportable_module_without_args():
    class Exportable(torch.onnx.ExportableModule):
        def forward(self, x):
            return x * 2

        def example_arguments(self):
            return (torch.randn(2, 3),), None

        def input_names(self):
            return ("image",)

        def output_names(self):
            return ("doubled",)

        def dynamic_shapes(self):
            return ({0: "batch"},)

    result = torchlib.onnx_export(Exportable())
    proto = result.model_proto
    assert [i.name for i in proto.graph.input] == ["image"]
    assert [o.name for o in proto.graph.output] == ["doubled"]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    x = torch.randn(7, 3)
    torch.testing.assert_close(result(x), x * 2)


def test_is_in_onnx_export_during_capture():
    class Branches(torch.nn.Module):
        def forward(self, x):
            return x + 1 if torch.onnx.is_in_onnx_export() else x - 1

    x = torch.randn(3)
    torch.testing.assert_close(torchlib.export(Branches(), (x,))(x), x + 1)
    assert not torch.onnx.is_in_onnx_export()


needs_onnxscript = pytest.mark.skipif(importlib.util.find_spec("onnxscript") is None,
                                      reason="onnxscript (the bench extra) is not installed")


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


@needs_onnxscript
def test_trace_only_onnxscript_function_replaces_an_op():
    from onnxscript import opset18 as op

    def custom_add(self, other, alpha: float = 1.0):
        return op.Sub(self, other)  # add becomes sub, as in torch's own test

    x, y = torch.randn(2, 2), torch.randn(2, 2)
    result = torchlib.onnx_export(Add(), (x, y), custom_translation_table={torch.ops.aten.add.Tensor: custom_add})
    assert [n.op_type for n in result.model_proto.graph.node] == ["Sub"]
    torch.testing.assert_close(result(x, y), x - y)


@needs_onnxscript
def test_list_of_onnxscript_functions_dispatches_on_dtype():
    from onnxscript import BOOL, FLOAT
    from onnxscript import opset18 as op

    class And(torch.nn.Module):
        def forward(self, x, y):
            return torch.ops.aten.logical_and.default(x, y)

    def for_bool(self: BOOL, other: BOOL) -> BOOL:
        return op.Xor(self, other)

    def for_float(self: FLOAT, other: FLOAT) -> FLOAT:
        return op.Mul(self, other)

    table = {torch.ops.aten.logical_and.default: [for_float, for_bool]}
    x, y = torch.tensor([True, False, True]), torch.tensor([True, True, False])
    result = torchlib.onnx_export(And(), (x, y), custom_translation_table=table)
    assert "Xor" in [n.op_type for n in result.model_proto.graph.node]
    torch.testing.assert_close(result(x, y), x ^ y)


@needs_onnxscript
def test_scripted_onnxscript_function_is_inlined(tmp_path, monkeypatch):
    # @onnxscript.script() reads the function's source, so it must live in a file
    (tmp_path / "scripted_gelu.py").write_text(textwrap.dedent("""
        import onnxscript
        from onnxscript import FLOAT, opset18 as op

        @onnxscript.script()
        def scaled_tanh(x: FLOAT, scale: float = 2.0) -> FLOAT:
            return op.Mul(op.Tanh(x), op.CastLike(scale, x))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    from scripted_gelu import scaled_tanh  # type: ignore[import-not-found]

    class Tanh(torch.nn.Module):
        def forward(self, x):
            return torch.tanh(x) + 1

    x = torch.randn(4)
    result = torchlib.onnx_export(Tanh(), (x,), custom_translation_table={torch.ops.aten.tanh.default: scaled_tanh})
    torch.testing.assert_close(result(x), 2 * torch.tanh(x) + 1)
    assert {"Tanh", "Mul"} <= {n.op_type for n in result.model_proto.graph.node}


# Cases of torch's test/onnx/exporter/test_api.py that run through torchlib.onnx_export
# (tools/run_torch_exporter_tests.py runs the file itself; these keep them in our suite).

def test_python_int_input_with_no_dynamic_dim_is_not_a_graph_input():
    class Model(torch.nn.Module):
        def forward(self, a, x):
            return a + torch.tensor(1) + x

    x = torch.ones(2)
    result = torchlib.onnx_export(Model(), (1, x), dynamic_shapes=(None, {0: torch.export.Dim.DYNAMIC}))
    assert [i.name for i in result.model_proto.graph.input] == ["x"]
    torch.testing.assert_close(result(1, torch.ones(5)), 2 + torch.ones(5))


def test_int_keyword_with_no_dynamic_shape_is_not_a_graph_input():
    class Model(torch.nn.Module):
        def forward(self, x=None, y=None, option=1):
            return x + y if option == 1 else x - y

    dims = {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}
    kwargs = {"x": torch.randn(5, 7), "y": torch.randn(5, 7), "option": 0}
    result = torchlib.onnx_export(Model(), (), kwargs=kwargs, dynamic_shapes={"x": dims, "y": dims, "option": None})
    assert [i.name for i in result.model_proto.graph.input] == ["x", "y"]
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(result(x=x, y=y, option=0), x - y)


def test_dynamic_dim_whose_sample_is_one_stays_dynamic():
    class Model(torch.nn.Module):
        def forward(self, x, y, z):
            return torch.cat((x, y), axis=1) + z

    dims = {0: "batch", 1: "sequence"}
    args = (torch.randn(1, 3), torch.randn(1, 5), torch.randn(1, 8))
    result = torchlib.onnx_export(Model(), args, dynamic_shapes=(dims, dims, dims))
    assert result.model_proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    bigger = (torch.randn(4, 3), torch.randn(4, 5), torch.randn(4, 8))
    torch.testing.assert_close(result(*bigger), Model()(*bigger))


def test_keyword_only_input_with_batch_of_one_keeps_the_batch_dynamic():
    class RMSNorm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(16))

        def forward(self, hidden_states):
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            return self.weight * hidden_states * torch.rsqrt(variance + 1e-6)

    result = torchlib.onnx_export(RMSNorm(), (), kwargs={"hidden_states": torch.rand(1, 4, 16)},
                                  dynamic_shapes={"hidden_states": {0: "batch_size", 1: "seq_len"}})
    assert result.model_proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch_size"


def test_none_output_and_assert_async_node():
    class Model(torch.nn.Module):
        def forward(self, x):
            torch.ops.aten._assert_async.msg(torch.tensor(True), "assertion failed")
            return x + x, None

    x = torch.randn(2)
    result = torchlib.onnx_export(Model(), (x,))
    got = result(x)
    torch.testing.assert_close(got[0], x + x)
    assert got[1] is None


@needs_onnxscript
def test_translation_table_replaces_a_custom_op_that_has_a_decomposition():
    from onnxscript import FLOAT
    from onnxscript import opset18 as op

    with torch.library._scoped_library("torchlib_compat", "FRAGMENT") as lib:
        torch.library.define("torchlib_compat::foo", "(Tensor a, Tensor b) -> Tensor",
                             tags=torch.Tag.pt2_compliant_tag, lib=lib)

        @torch.library.impl("torchlib_compat::foo", "CompositeImplicitAutograd", lib=lib)
        def foo(a, b):
            return a + b

        class Model(torch.nn.Module):
            def forward(self, x, y):
                return torch.ops.torchlib_compat.foo(x, y)

        def onnx_sub(self: FLOAT, other: FLOAT) -> FLOAT:
            return op.Sub(self, other)

        args = (torch.ones(3, 3), torch.full((3, 3), 2.0))
        table = {torch.ops.torchlib_compat.foo.default: onnx_sub}
        replaced = torchlib.onnx_export(Model(), args, custom_translation_table=table)
        assert [n.op_type for n in replaced.model_proto.graph.node] == ["Sub"]
        decomposed = torchlib.onnx_export(Model(), args)
        assert [n.op_type for n in decomposed.model_proto.graph.node] == ["Add"]
        torch.testing.assert_close(decomposed(*args), torch.full((3, 3), 3.0))


class WritesItsBuffer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("my_buffer", torch.tensor(4.0))

    def forward(self, x, b):
        out = x + b
        self.my_buffer.add_(1.0)
        return out * self.my_buffer


def test_onnx_export_outputs_are_forwards_alone_and_the_dropped_write_is_named():
    """torch.onnx leaves out the new value of a written buffer; onnx_export does the same, and
    says so. torchlib.export keeps it as the first output."""
    args = (torch.rand(3, 3), torch.randn(3, 3))
    dim = torch.export.Dim("dim")
    with pytest.warns(UserWarning, match="forward writes 'my_buffer'"):
        result = torchlib.onnx_export(WritesItsBuffer(), args, dynamic_shapes=({0: dim}, {0: dim}))
    assert [o.name for o in result.model_proto.graph.output] == ["output"] and result.written_inputs == []
    x, b = torch.rand(4, 3), torch.randn(4, 3)
    torch.testing.assert_close(result(x, b), (x + b) * 5.0)
    full = torchlib.export(WritesItsBuffer(), args)
    assert [o.name for o in full.model_proto.graph.output] == ["my_buffer_updated", "output"]


def test_written_outputs_false_after_a_whole_program_decomposition():
    """A slice write whose view, made by reshape, is read afterwards needs the whole program
    decomposed: the buffer's write is then one of the program's outputs, and
    written_outputs=False leaves it out there too."""

    class SliceWrite(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("state", torch.zeros(3, 4))

        def forward(self, x):
            row = self.state.reshape(-1, 2)[:, 0]
            self.state[:, 0].add_(x[:, 0])
            return row * 2, x + self.state

    x = torch.randn(3, 4)
    with pytest.warns(UserWarning, match="'state'"):
        result = torchlib.export(SliceWrite(), (x,), written_outputs=False)
    assert any(d.startswith("the whole program was decomposed") for d in result.diagnostics)
    assert len(result.model_proto.graph.output) == 2 and result.written_inputs == []
    state = torch.zeros(3, 4)
    state[:, 0] += x[:, 0]
    for got, expected in zip(result(x), (state.reshape(-1, 2)[:, 0] * 2, x + state), strict=True):
        torch.testing.assert_close(got, expected)
