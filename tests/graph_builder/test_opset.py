"""The op namespace: every operator of an opset, schema-checked calls, typed Python constants."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import defs

import graph_builder
from graph_builder import BOOL, FLOAT, FLOAT16, INT32, INT64, GraphBuilder, OpError, Opset, op, opset


def _latest_schemas(version: int) -> list[defs.OpSchema]:
    latest: dict[str, defs.OpSchema] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain == "" and schema.since_version <= version and not schema.deprecated:
            current = latest.get(schema.name)
            if current is None or schema.since_version > current.since_version:
                latest[schema.name] = schema
    return list(latest.values())


def test_every_opset_23_operator_is_callable() -> None:
    schemas = _latest_schemas(23)
    assert len(schemas) > 180
    for schema in schemas:
        assert callable(getattr(op, schema.name)), schema.name
        assert callable(getattr(dynamic_op, schema.name)), schema.name


def test_default_opset_and_other_opsets() -> None:
    assert graph_builder.DEFAULT_OPSET == 23
    assert opset(23) is opset(23)
    op18 = opset(18)
    g = GraphBuilder(opset=18)
    x = g.input("x", FLOAT, [2, 3])
    with g:
        y = op18.ReduceSum(x, [1], keepdims=0)
        # opset 18's Split has num_outputs, opset 12's did not
        a, b = op18.Split(x, num_outputs=2, axis=1, _outputs=2)
    assert y.shape == (2,) and a.shape == (2, 2) and b.shape == (2, 1)
    g.output(y, "y")
    model = g.to_model()
    assert {o.domain: o.version for o in model.opset_import} == {"": 18}
    with pytest.raises(AttributeError, match="no operator 'Attention'.*opset 18"):
        op18.Attention  # noqa: B018


def test_op_missing_from_the_target_opset_is_refused_in_a_graph() -> None:
    g = GraphBuilder(opset=18)
    x = g.input("x", FLOAT, [3])
    with g, pytest.raises(OpError, match=r"op.Gelu does not exist in opset 18.*added in opset 20"):
        op.Gelu(x)
    with g:
        assert op.Relu(x).dtype is FLOAT  # Relu has not changed since opset 14: fine


def test_unknown_operator() -> None:
    with pytest.raises(AttributeError, match="no operator 'Frobnicate'"):
        op.Frobnicate  # noqa: B018


# -- Python scalars and lists become constants typed by the other inputs -----------------------
def _traced(*inputs):  # type: ignore[no-untyped-def]
    g = GraphBuilder()
    return g, [g.input(f"x{i}", dtype, shape) for i, (dtype, shape) in enumerate(inputs)]


def test_scalar_takes_dtype_of_the_other_input() -> None:
    g, (x,) = _traced((FLOAT16, [2]))
    with g:
        y = op.Add(x, 1)
        z = op.Mul(2.5, x)  # the scalar comes first
    (add,) = [n for n in g.graph.nodes if n.op_type == "Add"]
    constant = add.inputs[1]
    assert constant.dtype is FLOAT16 and constant.const_value.dtype == np.float16 and constant.const_value == 1
    assert y.dtype is FLOAT16 and z.dtype is FLOAT16
    g, (i,) = _traced((INT32, [3]))
    with g:
        assert op.Sub(i, 1).producer.inputs[1].dtype is INT32


def test_scalar_typed_eagerly_too() -> None:
    x = np.array([1.0, 2.0], np.float16)
    y = op.Add(x, 1)
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, np.array([2.0, 3.0], np.float16))
    assert op.Mul(np.array([2], np.int32), 3).dtype == np.int32


def test_lists_and_fixed_types() -> None:
    g, (x,) = _traced((FLOAT, ["n", 6]))
    with g:
        y = op.Reshape(x, [-1, 2, 3])  # shape is tensor(int64) in the schema
        w = op.Where(op.Greater(x, 0.0), x, 0)  # 0 takes FLOAT from x
    assert y.producer.inputs[1].dtype is INT64
    assert w.producer.inputs[2].dtype is FLOAT and w.dtype is FLOAT
    assert y.shape == ("n", 2, 3)


def test_python_values_alone_use_python_types() -> None:
    assert op.Add(1, 2).dtype is INT64
    assert op.Add(1.5, 2.0).dtype is FLOAT
    assert op.Not(True).dtype is BOOL


def test_equal_constants_are_shared() -> None:
    g, (x,) = _traced((FLOAT, [3]))
    with g:
        op.Add(x, 1.0)
        op.Mul(x, 1.0)
        op.Sub(x, np.array(1.0, np.float32))
        op.Add(x, -0.0)
        op.Add(x, 0.0)
    constants = list(g.graph.initializers.values())
    assert [c.const_value.tolist() for c in constants] == [1.0, -0.0, 0.0]
    assert np.signbit(constants[1].const_value) and not np.signbit(constants[2].const_value)


def test_python_values_that_cannot_be_constants_of_the_bound_type() -> None:
    with pytest.raises(OpError, match=r"op.Add: input 1 \('B'\) is the Python value 300, which cannot be a UINT8 constant"):
        op.Add(np.array([1, 2], np.uint8), 300)
    with pytest.raises(OpError, match=r"op.Add: input 1 \('B'\) is the Python value 'a', which cannot be a INT64 constant"):
        op.Add(np.array([1, 2]), "a")
    assert op.Mul(np.array([10, 20]), 0.6).tolist() == [0, 0]  # a float for an integer type truncates, like torch


# -- schema errors name the op, the input and what is allowed ----------------------------------
# `op` is the typed namespace generated from the schemas (graph_builder/generated), whose methods
# call the binder of the dynamic namespace `Opset`; Python itself rejects a wrong number of
# arguments to a typed method. The binder's own messages are checked through `Opset(23)`.
dynamic_op = Opset(23)


def test_missing_input() -> None:
    with pytest.raises(OpError) as info:
        dynamic_op.Add(np.ones(2, np.float32))
    message = str(info.value)
    assert "op.Add(A: T, B: T)" in message
    assert "required input 1 ('B') is missing" in message
    assert "T in {BFLOAT16, DOUBLE, FLOAT, FLOAT16, INT16, INT32, INT64, INT8, UINT16, UINT32, UINT64, UINT8}" in message
    with pytest.raises(OpError, match=r"op.Add\(A: T, B: T\) .*required input 1 \('B'\) is missing"):
        dynamic_op.Add(np.ones(2, np.float32), None)
    with pytest.raises(TypeError, match=r"Add\(\) missing 1 required positional argument: 'B'"):
        op.Add(np.ones(2, np.float32))


def test_too_many_inputs() -> None:
    with pytest.raises(OpError, match=r"op.Relu\(X: T\) .*takes at most 1 inputs, got 2"):
        dynamic_op.Relu(np.ones(2, np.float32), np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"Relu\(\) takes"):
        op.Relu(np.ones(2, np.float32), np.ones(2, np.float32))


def test_variadic_minimum() -> None:
    with pytest.raises(OpError, match=r"op.Concat\(inputs\.\.\.: T\).*variadic input 0 \('inputs'\) needs at least 1 values, got 0"):
        op.Concat(axis=0)
    with pytest.raises(OpError, match=r"op.Max\(data_0\.\.\.: T\).*variadic input 'data_0' cannot hold None"):
        op.Max(np.ones(2, np.float32), None, np.ones(2, np.float32))


def test_unknown_attribute() -> None:
    with pytest.raises(OpError) as info:
        dynamic_op.Softmax(np.ones(2, np.float32), axes=1)
    assert str(info.value) == "op.Softmax (opset 23) has no attribute or input 'axes'; its attributes are ['axis'], its inputs ['input']"
    with pytest.raises(TypeError, match=r"Softmax\(\) got an unexpected keyword argument 'axes'"):
        op.Softmax(np.ones(2, np.float32), axes=1)


def test_missing_required_attribute() -> None:
    with pytest.raises(OpError, match=r"op.Cast: required attribute 'to' is missing"):
        dynamic_op.Cast(np.ones(2, np.float32))


def test_attribute_of_the_wrong_type() -> None:
    with pytest.raises(OpError, match=r"op.Softmax: attribute 'axis' expects INT, got float 1.5"):
        op.Softmax(np.ones(2, np.float32), axis=1.5)
    with pytest.raises(OpError, match=r"op.Transpose: attribute 'perm' expects INTS, got int 1"):
        op.Transpose(np.ones((2, 2), np.float32), perm=1)
    with pytest.raises(OpError, match=r"op.Gelu: attribute 'approximate' expects STRING, got int 1"):
        op.Gelu(np.ones(2, np.float32), approximate=1)


def test_attribute_coercions() -> None:
    x = np.ones((2, 3), np.float32)
    assert op.Cast(x, to=INT64).dtype == np.int64  # a DType for an INT attribute
    assert op.Transpose(x, perm=(np.int64(1), 0)).shape == (3, 2)  # numpy ints, tuples
    assert op.LeakyRelu(x, alpha=1).dtype == np.float32  # an int for a FLOAT attribute
    assert op.Softmax(x, axis=None).shape == (2, 3)  # None: the schema's default


def test_input_dtype_not_allowed() -> None:
    with pytest.raises(OpError) as info:
        op.Sqrt(np.array([1, 2], np.int64))
    assert str(info.value) == "op.Sqrt: input 0 ('X') has dtype INT64, but T allows {BFLOAT16, DOUBLE, FLOAT, FLOAT16}"
    g, (x,) = _traced((BOOL, [2]))
    with g, pytest.raises(OpError, match=r"op.Add: input 0 \('A'\) has dtype BOOL, but T allows \{BFLOAT16, "):
        op.Add(x, x)


def test_fixed_type_input_not_allowed() -> None:
    with pytest.raises(OpError, match=r"op.Reshape: input 1 \('shape'\) has dtype INT32, but tensor\(int64\) allows"):
        op.Reshape(np.ones(4, np.float32), np.array([2, 2], np.int32))


def test_inputs_sharing_a_type_must_agree() -> None:
    with pytest.raises(OpError) as info:
        op.Add(np.ones(2, np.float32), np.ones(2, np.float16))
    assert str(info.value) == "op.Add: input 1 ('B') has dtype FLOAT16 but input 0 ('A') has FLOAT; both must share type T"


def test_python_value_the_schema_does_not_allow() -> None:
    with pytest.raises(OpError, match=r"op.Sqrt: input 0 \('X'\) is the Python value 4 \(INT64\), but T allows \{BFLOAT16, DOUBLE, FLOAT, FLOAT16\}"):
        op.Sqrt(4)


def test_unsupported_input_object() -> None:
    with pytest.raises(OpError, match="cannot use a dict as an ONNX operator input"):
        op.Relu({"a": 1})


def test_inputs_by_keyword_and_optional_inputs() -> None:
    x = np.array([-2.0, 0.5, 3.0], np.float32)
    np.testing.assert_array_equal(op.Clip(x, max=np.array(1.0, np.float32)), [-2.0, 0.5, 1.0])
    np.testing.assert_array_equal(op.Clip(x, None, 1.0), [-2.0, 0.5, 1.0])
    with pytest.raises(OpError, match="input 'min' given twice"):
        dynamic_op.Clip(x, 0.0, min=0.0)


def test_output_counts() -> None:
    x = np.arange(6, dtype=np.float32)
    assert len(op.Split(x, num_outputs=3)) == 3
    assert len(op.Split(x, [2, 4])) == 2  # from the constant split sizes
    values, indices = op.TopK(x, [2])
    assert indices.dtype == np.int64
    y = op.LayerNormalization(x.reshape(2, 3), np.ones(3, np.float32))
    assert isinstance(y, np.ndarray)  # optional outputs are not asked for by default
    y, mean, inv_std = op.LayerNormalization(x.reshape(2, 3), np.ones(3, np.float32), _outputs=3)
    assert mean.shape == (2, 1)
    with pytest.raises(OpError, match="op.Split has a variadic output: say how many with _outputs=N"):
        g, (v,) = _traced((FLOAT, [6]))
        with g:
            op.Split(v, g.input("sizes", INT64, [2]))


def test_repr_and_docs() -> None:
    assert repr(dynamic_op.Add) == "<ONNX op ai.onnx::Add-14>"
    assert "element-wise binary addition" in (dynamic_op.Add.__doc__ or "")
    assert "element-wise binary addition" in (op.Add.__doc__ or "")



def test_castlike_of_a_python_value_keeps_full_precision() -> None:
    # regression (issue 13): the Python float became a FLOAT constant before the cast to DOUBLE
    import onnxruntime as ort

    from graph_builder.opset import as_array

    assert as_array(op.CastLike(1 / 1.5, np.zeros(2, np.float64))).item() == 1 / 1.5
    assert as_array(op.CastLike(0.1, np.zeros(1, np.float16))).item() == np.float16(0.1)
    assert as_array(op.CastLike(-1, np.zeros(1, np.uint8))).item() == 255  # what the cast itself gives
    g = GraphBuilder()
    x = g.input("x", graph_builder.DOUBLE, [2])
    with g:
        g.output(op.Add(x, op.CastLike(0.1, x)), "y")
    session = ort.InferenceSession(g.to_model().SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": np.zeros(2, np.float64)})
    assert y.tolist() == [0.1, 0.1]
