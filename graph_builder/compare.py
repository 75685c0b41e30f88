"""Are two ONNX graphs the same computation? Equal up to value names and node order.

    >>> difference(model_a, model_b)        # None when equal, else a sentence saying where not
    >>> assert_same_graph(model_a, model_b)

Each value gets a fingerprint built from what computes it, not from its name: a graph input is
its position and type, an initializer its element type, shape and bytes, a node output the
node's domain, op type, attributes (subgraphs fingerprinted the same way, their references to
outer values by the outer fingerprint) and its inputs' fingerprints. Two graphs are equal when
their outputs have the same fingerprints in the same order, their inputs the same types, and
they hold the same multiset of node fingerprints (so a node nobody reads still counts). Node
order is immaterial as long as each graph is topologically sorted, which ONNX requires.

Dim names of inputs and outputs are compared as written (`batch` is not `N`); value names,
node names, doc strings and metadata are not. ModelProtos also compare their opset imports and
their model-local functions (by domain and name, each compared the same way).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence

import onnx
from onnx import numpy_helper

Proto = onnx.ModelProto | onnx.GraphProto | onnx.FunctionProto


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:24]


def _type_text(t: onnx.TypeProto) -> str:
    t2 = onnx.TypeProto()
    t2.CopyFrom(t)
    t2.ClearField("denotation")
    return str(t2).replace("\n", " ")


def _attribute(a: onnx.AttributeProto, outer: Mapping[str, str]) -> tuple:
    if a.type == onnx.AttributeProto.GRAPH:
        return a.name, _graph_fingerprint(a.g, outer)
    if a.type == onnx.AttributeProto.GRAPHS:
        return a.name, tuple(_graph_fingerprint(g, outer) for g in a.graphs)
    if a.type == onnx.AttributeProto.TENSOR:
        return a.name, _tensor(a.t)
    if a.ref_attr_name:
        return a.name, "ref", a.ref_attr_name
    value = onnx.helper.get_attribute_value(a)
    if isinstance(value, list):
        value = tuple(_tensor(v) if isinstance(v, onnx.TensorProto) else v for v in value)
    return a.name, value


def _tensor(t: onnx.TensorProto) -> str:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        raise ValueError(f"tensor {t.name!r} is stored in external data; load the model with its data to compare it")
    array = numpy_helper.to_array(t)
    return _digest(t.data_type, tuple(t.dims), array.tobytes())


def _nodes(nodes: Sequence[onnx.NodeProto], scope: dict[str, str]) -> list[str]:
    """Fingerprint each node (in order) and bind its outputs' names in `scope`."""
    prints = []
    for node in nodes:
        inputs = []
        for name in node.input:
            if name == "":
                inputs.append("<none>")
            elif name in scope:
                inputs.append(scope[name])
            else:
                raise ValueError(f"node {node.name or node.op_type!r} reads {name!r}, which nothing before it defines "
                                 "(the graph is not topologically sorted)")
        attrs = tuple(sorted(_attribute(a, scope) for a in node.attribute))
        fp = _digest(node.domain or "", node.op_type, attrs, tuple(inputs))
        prints.append(fp)
        for i, name in enumerate(node.output):
            if name:
                scope[name] = _digest(fp, i)
    return prints


def _walk(g: onnx.GraphProto, outer: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The fingerprint of every value name in `g` (and of the outer values it may read), and of
    each of its nodes in order."""
    scope = dict(outer)
    for i, v in enumerate(g.input):
        scope[v.name] = _digest("input", i, _type_text(v.type))
    for t in g.initializer:
        scope[t.name] = _digest("initializer", _tensor(t))
    return scope, _nodes(g.node, scope)


def _graph_fingerprint(g: onnx.GraphProto, outer: Mapping[str, str]) -> str:
    scope, nodes = _walk(g, outer)
    outputs = tuple(scope.get(v.name, "<undefined>") for v in g.output)
    return _digest(tuple(sorted(nodes)), outputs)


def _graph_difference(a: onnx.GraphProto, b: onnx.GraphProto, where: str) -> str | None:
    if len(a.input) != len(b.input):
        return f"{where}: {len(a.input)} inputs against {len(b.input)}"
    for i, (x, y) in enumerate(zip(a.input, b.input, strict=True)):
        if _type_text(x.type) != _type_text(y.type):
            return f"{where}: input {i} ({x.name!r} / {y.name!r}) has type {_type_text(x.type)} against {_type_text(y.type)}"
    if len(a.output) != len(b.output):
        return f"{where}: {len(a.output)} outputs against {len(b.output)}"
    (scope_a, prints_a), (scope_b, prints_b) = _walk(a, {}), _walk(b, {})
    for i, (x, y) in enumerate(zip(a.output, b.output, strict=True)):
        if scope_a.get(x.name) != scope_b.get(y.name):
            return (f"{where}: output {i} ({x.name!r} / {y.name!r}) is computed differently: by "
                    f"{_producer(a, x.name)} against {_producer(b, y.name)}")
        if _type_text(x.type) != _type_text(y.type):
            return f"{where}: output {i} ({x.name!r} / {y.name!r}) has type {_type_text(x.type)} against {_type_text(y.type)}"
    ca, cb = Counter(prints_a), Counter(prints_b)
    if ca != cb:
        only_a = [n.op_type for n, p in zip(a.node, prints_a, strict=True) if ca[p] > cb[p]]
        only_b = [n.op_type for n, p in zip(b.node, prints_b, strict=True) if cb[p] > ca[p]]
        return (f"{where}: the outputs agree but the nodes differ (nodes nothing reads?): only in the first "
                f"{only_a}, only in the second {only_b}")
    return None


def _producer(g: onnx.GraphProto, name: str) -> str:
    for node in g.node:
        if name in node.output:
            return f"{node.op_type}({', '.join(node.input)})"
    return "an input or initializer"


def _function_as_graph(f: onnx.FunctionProto) -> onnx.GraphProto:
    g = onnx.GraphProto()
    g.node.extend(f.node)
    for name in f.input:
        g.input.append(onnx.helper.make_value_info("", onnx.TypeProto()))
        g.input[-1].name = name
    for name in f.output:
        g.output.append(onnx.helper.make_value_info("", onnx.TypeProto()))
        g.output[-1].name = name
    return g


def difference(a: Proto, b: Proto) -> str | None:
    """None when `a` and `b` compute the same thing (up to value names and node order), else
    one sentence naming the first difference found."""
    if type(a) is not type(b):
        return f"a {type(a).__name__} against a {type(b).__name__}"
    if isinstance(a, onnx.ModelProto):
        assert isinstance(b, onnx.ModelProto)
        ia = sorted((o.domain, o.version) for o in a.opset_import)
        ib = sorted((o.domain, o.version) for o in b.opset_import)
        if ia != ib:
            return f"opset imports {ia} against {ib}"
        fa = {(f.domain, f.name): f for f in a.functions}
        fb = {(f.domain, f.name): f for f in b.functions}
        if sorted(fa) != sorted(fb):
            return f"model-local functions {sorted(fa)} against {sorted(fb)}"
        for key in sorted(fa):
            found = difference(fa[key], fb[key])
            if found:
                return found
        return _graph_difference(a.graph, b.graph, "graph")
    if isinstance(a, onnx.FunctionProto):
        assert isinstance(b, onnx.FunctionProto)
        where = f"function {a.domain}::{a.name}"
        if (a.domain, a.name) != (b.domain, b.name):
            return f"function {a.domain}::{a.name} against {b.domain}::{b.name}"
        if list(a.attribute) != list(b.attribute) or len(a.attribute_proto) != len(b.attribute_proto):
            return f"{where}: attributes {list(a.attribute)} against {list(b.attribute)}"
        return _graph_difference(_function_as_graph(a), _function_as_graph(b), where)
    assert isinstance(a, onnx.GraphProto) and isinstance(b, onnx.GraphProto)
    return _graph_difference(a, b, "graph")


def assert_same_graph(a: Proto, b: Proto) -> None:
    """Raise AssertionError naming the first difference unless `a` and `b` are equal up to value
    names and node order."""
    found = difference(a, b)
    if found:
        raise AssertionError(found)
