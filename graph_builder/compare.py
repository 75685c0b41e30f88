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

When an output differs, `difference` names the first node where the computations part: the
first node of the first graph (in its order) computing a value the second graph does not, and
the node of the second graph that stands for it (computing a value the first does not, reading
the most of the same inputs), each with its inputs, and what differs between them (an input,
an attribute, or the op itself).

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
            return (f"{where}: output {i} ({x.name!r} / {y.name!r}) is computed differently; "
                    f"{_first_difference(a, scope_a, b, scope_b)}")
        if _type_text(x.type) != _type_text(y.type):
            return f"{where}: output {i} ({x.name!r} / {y.name!r}) has type {_type_text(x.type)} against {_type_text(y.type)}"
    ca, cb = Counter(prints_a), Counter(prints_b)
    if ca != cb:
        only_a = [n.op_type for n, p in zip(a.node, prints_a, strict=True) if ca[p] > cb[p]]
        only_b = [n.op_type for n, p in zip(b.node, prints_b, strict=True) if cb[p] > ca[p]]
        return (f"{where}: the outputs agree but the nodes differ (nodes nothing reads?): only in the first "
                f"{only_a}, only in the second {only_b}")
    return None


def _first_difference(a: onnx.GraphProto, scope_a: Mapping[str, str], b: onnx.GraphProto,
                      scope_b: Mapping[str, str]) -> str:
    """The first node of `a` (in its order) that computes a value `b` does not, and the node of `b`
    it stands for: of b's nodes that compute a value `a` does not, the one that reads the most of
    the same inputs (the earliest on a tie). What comes before the first such node is the same
    computation in both graphs, so the difference starts there."""
    in_a, in_b = set(scope_a.values()), set(scope_b.values())
    novel_a = [n for n in a.node if any(name and scope_a[name] not in in_b for name in n.output)]
    novel_b = [n for n in b.node if any(name and scope_b[name] not in in_a for name in n.output)]
    if not (novel_a and novel_b):  # every value of one graph is one of the other's: the outputs read others
        for which, novel in (("first", novel_a), ("second", novel_b)):
            if novel:
                return f"only the {which} graph computes {_describe(novel[0])}; every value of the other is one of its"
        return "both graphs compute the same values, and the outputs read different ones of them"
    first = novel_a[0]
    reads = Counter(scope_a[name] for name in first.input if name)

    def shared(n: onnx.NodeProto) -> int:
        return sum((reads & Counter(scope_b[name] for name in n.input if name)).values())

    other = max(novel_b, key=lambda n: (shared(n), -novel_b.index(n)))
    found = f"the first node that differs: {_describe(first)} against {_describe(other)}"
    differing = [name for name in first.input if name and scope_a[name] not in in_b]
    if differing:
        inputs = f"inputs {', '.join(differing)} have" if len(differing) > 1 else f"input {differing[0]} has"
        return found + f"; its {inputs} no equal in the second graph"
    if shared(other) == len([name for name in first.input if name]) == len([name for name in other.input if name]):
        attributes = {x.name for x in first.attribute} ^ {x.name for x in other.attribute} | {
            x.name for x in first.attribute for y in other.attribute
            if x.name == y.name and _attribute(x, scope_a) != _attribute(y, scope_b)}
        return found + (f", reading the same inputs; attributes {sorted(attributes)} differ" if attributes and
                        (first.domain, first.op_type) == (other.domain, other.op_type) else ", reading the same inputs")
    return found


def _describe(node: onnx.NodeProto) -> str:
    op = f"{node.domain}::{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
    return f"{op}({', '.join(node.input)})" + (f" (node {node.name!r})" if node.name else "")


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
