"""In-place and mutating ATen ops, translated functionally inside the translation loop.

torch.export's graph keeps in-place ops (`aten::add_.Tensor` for `out += identity`,
`aten::relu_` for `ReLU(inplace=True)`, `aten::masked_fill_.Scalar`, `aten::copy_`, ...). Their
schemas say which arguments they write (`Tensor(a!) self`). The exporter calls the function of
the op's functional variant (`aten::add.Tensor`), and the result replaces the written value
from then on: every later reader of that tensor, or of another name for the same tensor, reads
the new value. A written buffer or user input becomes an extra graph output, as torch.export's
graph signature says after functionalization (mutated inputs first, then the user outputs).

A write into a view (`y[:, 0] = 5`, `cache[:, pos].copy_(k)`) updates the whole tensor: the
view ops from the whole tensor to the view and the write are traced functionally together on
their own (decompose.py), which gives the new whole tensor (through `select_scatter`,
`slice_scatter`, ...).

A view of the written tensor taken before the write and read after it aliases that tensor in
torch: it reads the written values. After the write, each such view is taken again from the new
value of the tensor, through the view ops that made it (`Aliases.views_to_take_again`), as
functionalization replays a view after a write to its base. That needs view ops that always
alias their argument (the ops torch has a `_copy` variant of: select, slice, view, transpose,
...). `reshape`, `flatten`, `to` and `contiguous` return a view only when they need not copy:
when one of them made the view, only functionalization of the whole program
(`run_decompositions`) keeps it right, and `Aliases.problem` names the node so that the
exporter falls back to it and says why.
"""

from __future__ import annotations

import operator
from typing import Any

import torch


def written_arguments(target: Any) -> list[tuple[int, str]]:
    """(position, name) of each schema argument the op writes (`Tensor(a!)`)."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return []
    return [(i, a.name) for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write]


# Ops whose kernels write arguments their schemas do not mark: in training mode, batch norm
# updates `running_mean` and `running_var` in place (torch.export's training IR keeps
# `aten::batch_norm`, and its graph signature does not list the buffers as mutated). Keyed by
# schema name: the flag argument under which the running statistics are written.
_UNMARKED_STATS_WRITES = {
    "aten::batch_norm": "training",
    "aten::native_batch_norm": "training",
    "aten::_batch_norm_impl_index": "training",
    "aten::cudnn_batch_norm": "training",
    "aten::miopen_batch_norm": "training",
    "aten::instance_norm": "use_input_stats",
}


def node_written_arguments(node: torch.fx.Node) -> list[tuple[int, str]]:
    """(position, name) of each argument this call writes: the schema's `Tensor(a!)` ones, and
    the running statistics of a training-mode batch norm (`_UNMARKED_STATS_WRITES`)."""
    if is_inplace_view(node.target):
        return []
    found = written_arguments(node.target)
    schema = getattr(node.target, "_schema", None)
    flag = _UNMARKED_STATS_WRITES.get(schema.name) if schema is not None else None
    if schema is not None and flag is not None:
        names = [a.name for a in schema.arguments]

        def arg(name: str) -> Any:
            i = names.index(name)
            return node.args[i] if i < len(node.args) else node.kwargs.get(name)

        if arg(flag) is True:
            found += [(names.index(n), n) for n in ("running_mean", "running_var") if isinstance(arg(n), torch.fx.Node)]
    return found


def functional_variant(target: Any) -> Any:
    """The functional overload of an in-place one by torch's naming convention: `add_.Tensor`
    -> `add.Tensor`, `__iand__.Tensor` -> `__and__.Tensor`; None when there is none, or when
    it does not take the same arguments (`out=` variants, ops writing several tensors)."""
    schema = getattr(target, "_schema", None)
    if schema is None or len(written_arguments(target)) != 1 or written_arguments(target)[0][0] != 0:
        return None
    namespace, name = schema.name.split("::")
    if name.startswith("__i") and name.endswith("__"):
        functional = "__" + name[3:]
    elif name.endswith("_") and not name.endswith("__"):
        functional = name[:-1]
    else:
        return None
    packet = getattr(getattr(torch.ops, namespace), functional, None)
    overload = getattr(packet, schema.overload_name or "default", None) if packet is not None else None
    if overload is None or overload._schema.is_mutable:
        return None
    if [a.name for a in overload._schema.arguments] != [a.name for a in schema.arguments]:
        return None
    return overload


def is_inplace_view(target: Any) -> bool:
    """An in-place op that changes only the view of its argument, not its data (`squeeze_`,
    `unsqueeze_`, `t_`, `transpose_`: torch's `inplace_view` tag) and whose functional variant
    is the view op (`squeeze`): it makes a new view of the same tensor and writes nothing."""
    if torch.Tag.inplace_view not in getattr(target, "tags", ()):
        return False
    functional = functional_variant(target)
    returns = functional._schema.returns if functional is not None else []
    return bool(returns) and returns[0].alias_info is not None


def always_a_view(target: Any) -> bool:
    """An op whose result always aliases its argument: one torch has a `*_copy` variant of
    (`select` -> `select_copy`, tagged `view_copy`), which is how functionalization replays it.
    `reshape`, `flatten`, `to` and `contiguous` have none: their results alias only when they
    need not copy. An in-place view op (`unsqueeze_`) changes its argument itself: not one."""
    schema = getattr(target, "_schema", None)
    if schema is None or is_inplace_view(target):
        return False
    namespace, name = schema.name.split("::")
    packet = getattr(getattr(torch.ops, namespace), name + "_copy", None)
    copy = getattr(packet, schema.overload_name or "default", None) if packet is not None else None
    return copy is not None and torch.Tag.view_copy in copy.tags


def _into_a_list(alias_info: Any) -> bool:
    """Whether an argument's alias annotation is `Tensor(a -> *)`: its views are the elements of
    the list the op returns (`split(Tensor(a -> *) self, ...) -> Tensor(a)[]`; torch's Python
    schema does not show the elements' `a`, only the list's empty alias sets)."""
    return bool(alias_info.before_set) and "*" in alias_info.after_set and not alias_info.is_write


def written_nodes(node: torch.fx.Node) -> list[torch.fx.Node]:
    """The FX nodes whose tensors `node` writes, in schema order."""
    found = []
    for position, name in node_written_arguments(node):
        arg = node.args[position] if position < len(node.args) else node.kwargs.get(name)
        if isinstance(arg, torch.fx.Node):
            found.append(arg)
    return found


class Aliases:
    """Which FX nodes name the same tensor. A node that returns its written argument
    (`add_` -> `Tensor(a!)`) names the same whole tensor; a node that returns a non-written
    argument's alias (`select`, `view`, `transpose`: `Tensor(a)`) is a view of it."""

    def __init__(self, graph: torch.fx.Graph):
        self.storage: dict[torch.fx.Node, torch.fx.Node] = {}
        self.whole: dict[torch.fx.Node, bool] = {}
        self.names: dict[torch.fx.Node, list[torch.fx.Node]] = {}  # storage -> nodes naming the whole tensor
        self.views: dict[torch.fx.Node, list[torch.fx.Node]] = {}  # storage -> views of it
        self.order: dict[torch.fx.Node, int] = {}
        self._view_lists: set[torch.fx.Node] = set()  # nodes returning a list of views (split, unbind)
        self.source: dict[torch.fx.Node, torch.fx.Node] = {}  # alias -> the argument it aliases
        self.written_alias: set[torch.fx.Node] = set()  # aliases returned by a write (add_ -> self)
        self._named_by: dict[torch.fx.Node, list[torch.fx.Node]] | None = None  # made_by -> its names (same_view)
        for i, node in enumerate(graph.nodes):
            self.order[node] = i
            self._add(node)

    def _add(self, node: torch.fx.Node) -> None:
        source, whole = self._aliased_argument(node)
        if source is None:
            self.storage[node], self.whole[node] = node, True
        else:
            self.storage[node] = self.storage.get(source, source)
            self.whole[node] = whole and self.whole.get(source, True)
            self.source[node] = source
            if whole:
                self.written_alias.add(node)
        bucket = self.names if self.whole[node] else self.views
        bucket.setdefault(self.storage[node], []).append(node)

    def _aliased_argument(self, node: torch.fx.Node) -> tuple[torch.fx.Node | None, bool]:
        if node.op != "call_function":
            return None, True
        if node.target is operator.getitem:  # an element of a list of views (split, unbind)
            source = node.args[0]
            return (source, False) if isinstance(source, torch.fx.Node) and source in self._view_lists else (None, True)
        schema = getattr(node.target, "_schema", None)
        if schema is None or not schema.returns or schema.returns[0].alias_info is None:
            return None, True
        alias_set = schema.returns[0].alias_info.before_set
        is_list = schema.returns[0].type.kind() == "ListType"
        for i, a in enumerate(schema.arguments):
            if a.alias_info is not None and (a.alias_info.before_set & alias_set or is_list and _into_a_list(a.alias_info)):
                arg = node.args[i] if i < len(node.args) else node.kwargs.get(a.name)
                if isinstance(arg, torch.fx.Node):
                    if is_list:
                        self._view_lists.add(node)
                    return arg, a.alias_info.is_write and not is_inplace_view(node.target)
        return None, True

    def problem(self, node: torch.fx.Node, written: torch.fx.Node) -> str | None:
        """Why writing `written` at `node` cannot be translated functionally, or None."""
        if not self.whole.get(written, True) and self.view_chain(written) is None:
            return f"{node.target} (FX node {node.name!r}) writes into a view ({written.name!r}) made by an op that cannot be replayed"
        for view in self._read_after(node, written):
            chain = self.view_chain(view)
            if chain is None:
                return (f"{node.target} (FX node {node.name!r}) writes a tensor whose view {view.name!r} is read afterwards, "
                        f"and that view is not made by ATen view ops")
            made_by = next((v for v in chain if not self._always_a_view(v)), None)
            if made_by is not None:
                return (f"{node.target} (FX node {node.name!r}) writes a tensor whose view {view.name!r} is read afterwards, "
                        f"and {made_by.target} (FX node {made_by.name!r}), which made it, returns a view only when it need "
                        f"not copy: it cannot be taken again from the written tensor")
        return None

    def views_to_take_again(self, node: torch.fx.Node, written: torch.fx.Node) -> list[torch.fx.Node]:
        """The views to take again from the tensor `node` writes once it is written, in graph
        order: each view of it taken before the write and read after it (in torch it reads the
        written values), and the views it is taken from; not the view the write itself names,
        whose new value the write gives. `problem` first says whether they all can be."""
        same = set(self.same_view(written))
        found = {v for view in self._read_after(node, written) for v in self.view_chain(view) or [] if v not in same}
        return sorted(found, key=self.order.__getitem__)

    def _read_after(self, node: torch.fx.Node, written: torch.fx.Node) -> list[torch.fx.Node]:
        """The views of the tensor `written` names, other than `written`'s own view, taken
        before `node` and read after it."""
        at = self.order[node]
        same = set(self.same_view(written))
        return [view for view in self.views.get(self.root(written), [])
                if view not in same and self.order[view] < at and any(self.order[user] > at for user in view.users)]

    def _always_a_view(self, node: torch.fx.Node) -> bool:
        """Whether `node` always aliases its argument: an element of a list of views (`split`,
        `unbind`), or an op `always_a_view` accepts."""
        if node.target is operator.getitem:
            return node.args[0] in self._view_lists
        return always_a_view(node.target)

    def resolve(self, node: torch.fx.Node) -> torch.fx.Node:
        """The node that made the view (or tensor) `node` names: past the writes returning it."""
        while node in self.written_alias:
            node = self.source[node]
        return node

    def same_view(self, written: torch.fx.Node) -> list[torch.fx.Node]:
        """Every node naming exactly the view (or tensor) `written` names, in graph order."""
        if self._named_by is None:
            self._named_by = {}
            for n in self.order:
                self._named_by.setdefault(self.resolve(n), []).append(n)
        return self._named_by.get(self.resolve(written), [written])

    def view_chain(self, written: torch.fx.Node) -> list[torch.fx.Node] | None:
        """The view ops from the whole tensor to the view `written` names, in order (None when one
        of them is not an ATen op that can be called again)."""
        chain = []
        made_by = self.resolve(written)
        root = self.root(written)
        while made_by is not root:
            if made_by.op != "call_function" or made_by not in self.source:
                return None
            chain.append(made_by)
            made_by = self.resolve(self.source[made_by])
        return chain[::-1]

    def same_tensor(self, written: torch.fx.Node) -> list[torch.fx.Node]:
        """Every node naming the whole tensor `written` names."""
        return self.names.get(self.storage.get(written, written), [written])

    def root(self, written: torch.fx.Node) -> torch.fx.Node:
        return self.storage.get(written, written)

