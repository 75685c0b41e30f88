import subprocess
import sys

import pytest
import torch

import torchlib
from graph_builder import op, types
from torchlib.registry import Registry, aten_op


def test_lookup_by_name_and_by_overload():
    registry = torchlib.get_registry()
    by_name = registry.lookup("aten::add.Tensor")
    assert by_name is not None
    assert registry.lookup(torch.ops.aten.add.Tensor) is by_name
    assert registry.lookup("aten::abs") is registry.lookup("aten::abs.default") is registry.lookup(torch.ops.aten.abs.default)
    assert registry.lookup("aten::no_such_op") is None


def test_registered_function_has_schema_docstring():
    entry = torchlib.get_registry().lookup("aten::add.Tensor")
    assert entry.schema.startswith("add.Tensor(Tensor self, Tensor other")


def test_duplicate_registration_is_an_error():
    registry = Registry()

    def f(self):
        """f(Tensor self) -> Tensor"""
        return op.Identity(self)

    aten_op("aten::f", registry=registry)(f)
    with pytest.raises(ValueError, match="registered twice"):
        aten_op("aten::f", registry=registry)(f)


def test_complex_variant_is_preferred_for_complex_values():
    registry = Registry()

    @aten_op("aten::g", registry=registry)
    def g_real(self):
        """g(Tensor self) -> Tensor"""
        return self

    @aten_op("aten::g", registry=registry, complex=True)
    def g_complex(self):
        """g(Tensor self) -> Tensor"""
        return self

    assert registry.lookup("aten::g").function is g_real
    assert registry.lookup("aten::g", complex=True).function is g_complex


def test_eager_call_takes_and_returns_torch_and_converts_dtypes():
    seen = {}
    registry = Registry()

    @aten_op("aten::h", registry=registry)
    def h(self, dtype=None):
        """h(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
        seen["dtype"] = dtype
        seen["self"] = self.dtype
        return op.Cast(self, to=dtype.onnx)

    out = h(torch.tensor([1.5, 2.5]), dtype=torch.int32)
    assert seen == {"dtype": types.INT32, "self": types.FLOAT}
    assert isinstance(out, torch.Tensor) and out.dtype == torch.int32


def test_import_torchlib_is_cheap():
    code = "import sys, torchlib; print('torchlib.ops' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
