"""`python -m codegen check`: over the real registry and generated files, and its failure messages
against a fake registry of deliberately wrong functions."""

import functools
import textwrap

import pytest

import torchlib
from codegen import check, files, native, onnx_opset
from graph_builder import types
from torchlib.registry import Registry, aten_op


def test_registered_functions_match_their_schemas():
    problems = check.check_registry(torchlib.get_registry())
    assert not problems, f"{len(problems)} registered function(s) do not match their schema:\n\n" + "\n\n".join(map(str, problems))


def test_generated_files_are_up_to_date():
    problems = check.check_generated()
    assert not problems, "generated files differ from what codegen writes now:\n\n" + "\n\n".join(map(str, problems))


# -- failure messages, against a fake registry ----------------------------------------------------

SCHEMAS = native.parse_entries(
    [
        {"func": "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "tags": ["core", "pointwise"]},
        {"func": "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"},
        {"func": "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"},
        {"func": "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0) -> Tensor"},
        {"func": "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"},
        {"func": "arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None) -> Tensor"},
        {"func": "lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"},
        {"func": "range(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=long) -> Tensor"},
        {"func": "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)"},
        {"func": "kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)"},
    ]
)


def problems_of(*functions, overloads=SCHEMAS):
    """Register (names, function) pairs in a fresh registry and check it."""
    registry = Registry()
    for names, fn in functions:
        aten_op(*names, registry=registry)(fn)
    return [str(p) for p in check.check_registry(registry, overloads)]


def test_a_correct_function_passes():
    def aten_add(self, other, *, alpha: float = 1.0):
        """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""

    def aten_sum_dim(self, dim, keepdim=False, *, dtype=None):
        """sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""

    def aten_avg_pool2d(self, kernel_size, stride=(), padding=0):
        """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0) -> Tensor"""

    def aten_range(start, end, step=1, *, dtype=types.INT64):
        """range(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=long) -> Tensor"""

    def aten_contiguous(self, *, memory_format="contiguous_format"):
        """contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)"""

    assert problems_of(
        (["aten::add.Tensor"], aten_add),
        (["aten::sum.dim_IntList"], aten_sum_dim),
        (["aten::avg_pool2d"], aten_avg_pool2d),
        (["aten::range"], aten_range),
        (["aten::contiguous"], aten_contiguous),
    ) == []


def test_keyword_only_mismatch_names_function_schema_and_difference():
    def aten_add(self, other, alpha=1):
        """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""

    (message,) = problems_of((["aten::add.Tensor"], aten_add))
    assert message == textwrap.dedent(
        f"""\
        aten::add.Tensor: {__name__}.test_keyword_only_mismatch_names_function_schema_and_difference.<locals>.aten_add
            schema:   add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
            function: (self, other, alpha=1)
            expected: (self, other, *, alpha=1)
            - 'alpha' is keyword-only in the schema (after *), positional in the function"""
    )


def test_names_and_order_mismatches():
    def aten_sum(input, keepdim=False, dim=None, *, dtype=None, out=None):
        """sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""

    (message,) = problems_of((["aten::sum.dim_IntList"], aten_sum))
    assert "- missing parameter: self" in message
    assert "- parameters not in the schema: input, out" in message
    assert "- parameter order differs: the schema has (dim, keepdim, dtype), the function (keepdim, dim, dtype)" in message
    assert "- 'dim' has default None; the schema has none (int[1]? dim)" in message


def test_default_mismatches():
    def aten_avg_pool2d(self, kernel_size, stride=(1, 1), padding=(0,)):
        """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0) -> Tensor"""

    def aten_div(self, other, *, rounding_mode="floor"):
        """div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"""

    def aten_arange(end, *, dtype, layout=None):
        """arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None) -> Tensor"""

    def aten_range(start, end, step=1, *, dtype=None):
        """range(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=long) -> Tensor"""

    messages = "\n".join(
        problems_of(
            (["aten::avg_pool2d"], aten_avg_pool2d),
            (["aten::div.Tensor_mode"], aten_div),
            (["aten::arange"], aten_arange),
            (["aten::range"], aten_range),
        )
    )
    assert "'stride' defaults to (1, 1); the schema's default is () (int[2] stride)" in messages
    assert "'padding' defaults to (0,); the schema's default is (0, 0) (int[2] padding)" in messages
    assert "'rounding_mode' has default 'floor'; the schema has none (str? rounding_mode)" in messages
    assert "'dtype' has no default; the schema's is None (ScalarType? dtype)" in messages
    assert "'dtype' defaults to None; the schema's default is INT64 (ScalarType? dtype)" in messages


def test_docstring_must_be_the_schema():
    def aten_lerp(self, end, weight):
        """lerp(Tensor self, Tensor end, Scalar weight) -> Tensor"""

    def aten_kthvalue(self, k, dim=-1, keepdim=False):
        return None

    messages = problems_of((["aten::lerp.Scalar"], aten_lerp), (["aten::kthvalue"], aten_kthvalue))
    assert "- docstring's first line is 'lerp(Tensor self, Tensor end, Scalar weight) -> Tensor'; it must be the schema (as above)" in messages[1]
    assert "    schema:   lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor" in messages[1]
    assert "- no docstring; it must be the schema (as above)" in messages[0]


def test_several_overloads_share_a_docstring_but_each_signature_is_checked():
    def aten_add(self, other, *, alpha=1):
        """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""

    (message,) = problems_of((["aten::add.Tensor", "aten::add.Scalar"], aten_add))
    assert message.startswith("aten::add.Scalar: ")
    assert "- 'alpha' is positional in the schema, keyword-only in the function" in message
    assert "- docstring" not in message and "- no docstring" not in message


def test_decorated_functions_are_checked_through_wraps():
    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        return wrapper

    @logged
    def aten_add(self, other, *, alpha=2):
        """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""

    (message,) = problems_of((["aten::add.Tensor"], aten_add))
    assert "- 'alpha' defaults to 2; the schema's default is 1 (Scalar alpha)" in message


def test_varargs_and_positional_only_are_reported():
    def aten_lerp(self, end, /, *args):
        """lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"""

    (message,) = problems_of((["aten::lerp.Scalar"], aten_lerp))
    assert "function: (self, end, /, *args)" in message
    assert "- takes *args; the schema names every parameter" in message
    assert "- 'self' is positional-only; the schema's parameters can be passed by name" in message
    assert "- missing parameter: weight" in message


def test_unknown_names_and_namespaces():
    def f(self):
        """f(Tensor self) -> Tensor"""

    messages = problems_of((["aten::no_such_op.Tensor"], f), (["mylib::f"], f))
    assert messages[0].startswith("aten::no_such_op.Tensor: ")
    assert "- no_such_op.Tensor is not in native_functions.yaml nor among torch's registered ATen operators" in messages[0]
    assert messages[1].startswith("mylib::f: ")
    assert "namespace 'mylib' is neither aten nor a documented non-ATen namespace (_operator, builtins, higher_order, math, operator, prims, quantized_decomposed, torch, torch_nn, torchvision, transformers)" in messages[1]


def test_documented_non_aten_namespaces_are_accepted():
    def anything(a, b):
        return a

    assert problems_of((["_operator::add"], anything), (["math::ceil"], anything), (["prims::convert_element_type"], anything)) == []


def test_quantized_decomposed_functions_are_checked_against_torch():
    import torchlib.ops.quantized  # noqa: F401  (loads torch.ops.quantized_decomposed)

    def right(input, scale, zero_point, quant_min, quant_max, dtype):
        """quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"""

    def wrong(input, scale, zero_point, quant_min, quant_max, dtype, axis=0):
        """quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"""

    assert problems_of((["quantized_decomposed::quantize_per_tensor"], right)) == []
    (message,) = problems_of((["quantized_decomposed::quantize_per_tensor"], wrong))
    assert "axis" in message


def test_torch_nn_functions_are_checked_against_torch():
    import torchlib.ops.losses  # (loads torch.ops.torch_nn)

    if not torchlib.ops.losses.HAS_LINEAR_CROSS_ENTROPY:
        pytest.skip("torch < 2.13 has no torch.ops.torch_nn linear_cross_entropy ops")

    name = "torch_nn::_linear_cross_entropy_batch_chunked_no_reduction"
    doc = "_linear_cross_entropy_batch_chunked_no_reduction(Tensor input, Tensor linear_weight, Tensor target, Tensor? linear_bias, Tensor? weight, SymInt ignore_index, SymInt batch_chunk_size, str acc_policy, ScalarType acc_dtype) -> Tensor"

    def right(input, linear_weight, target, linear_bias, weight, ignore_index, batch_chunk_size, acc_policy, acc_dtype):
        pass

    def wrong(input, linear_weight, target, linear_bias, weight, ignore_index, acc_policy, acc_dtype):
        pass

    right.__doc__ = wrong.__doc__ = doc
    assert problems_of(([name], right)) == []
    (message,) = problems_of(([name], wrong))
    assert "batch_chunk_size" in message


def test_aten_operators_outside_the_yaml_are_checked_against_torch():
    def aten_sym_size(self, dim):
        """sym_size.int(Tensor self, int dim) -> SymInt"""

    def wrong_sym_size(self):
        """sym_size.int(Tensor self, int dim) -> SymInt"""

    assert problems_of((["aten::sym_size.int"], aten_sym_size)) == []
    (message,) = problems_of((["aten::sym_size.int"], wrong_sym_size))
    assert "- missing parameter: dim" in message


def test_every_problem_is_reported():
    def a(self, other):
        """nothing"""

    def b(x):
        """nothing"""

    assert len(problems_of((["aten::add.Tensor"], a), (["aten::lerp.Scalar"], b), (["aten::kthvalue"], b))) == 3


# -- generated files ---------------------------------------------------------------------------------


def test_generated_files_check_reports_missing_changed_stale_and_hand_written(tmp_path):
    produced = onnx_opset.generate(23)
    files.write(produced, onnx_opset.command(23), tmp_path)
    assert check.check_generated(tmp_path, commands=["opset"]) == []

    opset23 = tmp_path / "graph_builder/generated/opset23.py"
    opset23.write_text(opset23.read_text().replace('return self._call("Add", A, B)', 'return self._call("Sub", A, B)'))
    (tmp_path / "graph_builder/generated/__init__.py").unlink()
    (tmp_path / "graph_builder/generated/helpers.py").write_text("def f():\n    pass\n")
    (tmp_path / "graph_builder/generated/opset99old.py").write_text(files.header("opset --opset 23") + "x = 1\n")

    messages = [str(p) for p in check.check_generated(tmp_path, commands=["opset"])]
    assert messages[0] == "graph_builder/generated/__init__.py: run: python -m codegen opset\n    - missing"
    assert messages[1].startswith("graph_builder/generated/opset23.py: run: python -m codegen opset --opset 23\n")
    assert '    -        return self._call("Sub", A, B)' in messages[1]
    assert '    +        return self._call("Add", A, B)' in messages[1]
    assert messages[1].endswith("- out of date")
    assert messages[2] == (
        "graph_builder/generated/helpers.py: generated directory\n"
        "    - has no generated header: hand-written code does not belong here"
    )
    assert messages[3] == (
        "graph_builder/generated/opset99old.py: run: python -m codegen opset --opset 23\n"
        "    - stale: the command no longer produces it"
    )
    assert len(messages) == 4


def test_a_header_naming_no_command_is_reported(tmp_path):
    (tmp_path / "torchlib/generated").mkdir(parents=True)
    (tmp_path / "torchlib/generated/x.py").write_text(files.header("frobnicate") + "x = 1\n")
    messages = [str(p) for p in check.check_generated(tmp_path, commands=[])]
    assert any(m.startswith("frobnicate: a generated file's header") for m in messages)


def test_stubs_of_another_torch_give_notes_not_problems(tmp_path, monkeypatch):
    """On a torch other than the one the stubs were generated from, how its overloads differ is
    reported as notes; the stubs are not compared (they stay the pinned torch's)."""
    from codegen import aten

    older = native.parse_entries([
        {"func": "relu(Tensor self) -> Tensor"},
        {"func": "_cdist_backward(Tensor grad, Tensor x1) -> Tensor"},
        {"func": "gone(Tensor self) -> Tensor"},
    ])
    installed = native.parse_entries([
        {"func": "relu(Tensor self) -> Tensor"},
        {"func": "_cdist_backward(Tensor grad_output, Tensor x1) -> Tensor"},
        {"func": "added.Tensor(Tensor self, Tensor other) -> Tensor"},
    ])
    files.write(aten.generate(older, [], "2.0.0"), aten.COMMAND, tmp_path)
    monkeypatch.setattr(aten, "generate_current", lambda: aten.generate(installed, [], aten.installed_release()))
    assert check.stubs_torch(files.generated_files_on_disk(tmp_path)) == "2.0.0"
    assert check.check_generated(tmp_path, commands=["aten"]) == []
    notes = check.torch_notes(tmp_path)
    assert len(notes) == 3
    assert notes[0].endswith(f"1 overload(s) without a function are new in torch {aten.installed_release()}: added.Tensor")
    assert "_cdist_backward changed its schema\n    - _cdist_backward(Tensor grad, Tensor x1) -> Tensor\n    + _cdist_backward(Tensor grad_output" in notes[1]
    assert notes[2].endswith("native_functions.yaml: gone")


def test_a_function_for_an_op_torch_lacks_is_a_note_when_marked():
    from codegen import aten

    registry = Registry()

    @aten_op("aten::no_such_op_in_any_torch", registry=registry, if_torch_has=True)
    def f(self):
        """no_such_op_in_any_torch(Tensor self) -> Tensor"""
        return self

    assert "aten::no_such_op_in_any_torch" not in registry
    assert check.check_registry(registry) == []
    assert check.registry_notes(registry) == [
        f"aten::no_such_op_in_any_torch: {check._qualname(f)} is not registered: torch {aten.installed_release()} has no such op"
    ]
