"""ai.onnx.ml tree ensembles (TreeEnsemble-5, TreeEnsembleRegressor, TreeEnsembleClassifier), vectorised.

At import time the trees become tables over one index space (the branch nodes, then the leaves;
a leaf points to itself): per entry its feature, split, comparison mode, next entry when the
comparison holds and when it does not, and (leaves) its value per target. At run time every
(sample, tree) pair descends one level per step, a fixed number of steps (the deepest tree's
depth), each step a few gathers: no Python per sample or per tree, and torch.export captures it
with a dynamic batch. The leaves' values are aggregated over the trees in float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
import torch

from torchlib.importer.converter import Ctx
from torchlib.importer.registry import onnx_op

ML = "ai.onnx.ml"
# comparison modes (TreeEnsemble-5's numbering; the older ops' strings map to it)
LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
MODE_NAMES = {"BRANCH_LEQ": LEQ, "BRANCH_LT": LT, "BRANCH_GTE": GTE, "BRANCH_GT": GT, "BRANCH_EQ": EQ,
              "BRANCH_NEQ": NEQ}  # fmt: skip
AGGREGATES = {"AVERAGE": 0, "SUM": 1, "MIN": 2, "MAX": 3}
POST_TRANSFORMS = {"NONE": 0, "SOFTMAX": 1, "LOGISTIC": 2, "SOFTMAX_ZERO": 3, "PROBIT": 4}


@dataclass
class Tables:
    """The forest as arrays over entries (branch nodes, then leaves)."""

    feature: list[int] = field(default_factory=list)
    split: list[float] = field(default_factory=list)
    mode: list[int] = field(default_factory=list)
    true_next: list[int] = field(default_factory=list)
    false_next: list[int] = field(default_factory=list)
    missing_true: list[bool] = field(default_factory=list)
    member_row: list[int] = field(default_factory=list)
    members: list[list[float]] = field(default_factory=list)
    leaf_values: list[dict[int, float]] = field(default_factory=list)  # per entry: target -> value
    roots: list[int] = field(default_factory=list)

    def depth(self) -> int:
        """The deepest root-to-leaf path, in steps (a path longer than the entries is a cycle)."""
        best, frontier = 0, [(r, 0) for r in self.roots]
        while frontier:
            entry, d = frontier.pop()
            if d > len(self.feature):
                raise ValueError("the trees' node ids form a cycle")
            following = {self.true_next[entry], self.false_next[entry]} - {entry}
            if not following:
                best = max(best, d)
            frontier.extend((n, d + 1) for n in following)
        return best


def _add_leaf(t: Tables, values: dict[int, float]) -> int:
    entry = len(t.feature)
    t.feature.append(0)
    t.split.append(0.0)
    t.mode.append(LEQ)
    t.true_next.append(entry)
    t.false_next.append(entry)
    t.missing_true.append(False)
    t.member_row.append(0)
    t.leaf_values.append(values)
    return entry


def forest_from_attributes(ctx: Ctx) -> Tables:
    """TreeEnsemble-5's attributes as tables (set membership nodes read their sets, in node
    order, from membership_values, NaN-separated)."""
    def tensor(name: str) -> np.ndarray | None:
        a = ctx.attrs.get(name)
        return onnx.numpy_helper.to_array(a.t) if a is not None else None

    modes = tensor("nodes_modes")
    splits, weights = tensor("nodes_splits"), tensor("leaf_weights")
    if modes is None or splits is None or weights is None:
        raise ctx.error("nodes_modes, nodes_splits and leaf_weights are required")
    features, true_ids, false_ids = ctx.attr("nodes_featureids"), ctx.attr("nodes_truenodeids"), ctx.attr("nodes_falsenodeids")
    true_leaf, false_leaf = ctx.attr("nodes_trueleafs"), ctx.attr("nodes_falseleafs")
    missing = ctx.attr("nodes_missing_value_tracks_true") or [0] * len(modes)
    targets = ctx.attr("leaf_targetids")
    t = Tables()
    count = len(modes)
    membership = tensor("membership_values")
    sets: list[list[float]] = []
    if membership is not None:
        current: list[float] = []
        for v in membership.tolist():
            if np.isnan(v):
                sets.append(current)
                current = []
            else:
                current.append(v)
    member_nodes = [i for i in range(count) if modes[i] == MEMBER]
    if len(member_nodes) != len(sets):
        raise ctx.error(f"{len(member_nodes)} set membership nodes but {len(sets)} sets in membership_values")
    t.members = sets or [[]]
    set_of = {node: k for k, node in enumerate(member_nodes)}
    for i in range(count):
        if not 0 <= int(modes[i]) <= MEMBER:
            raise ctx.error(f"node {i}: nodes_modes {int(modes[i])} is not a comparison mode (0-6)")
        t.feature.append(int(features[i]))
        t.split.append(float(splits[i]))
        t.mode.append(int(modes[i]))
        t.missing_true.append(bool(missing[i]))
        t.member_row.append(set_of.get(i, 0))
        t.leaf_values.append({})
        t.true_next.append(i)  # set below, once the leaves have their entries
        t.false_next.append(i)
    leaf_entry = [_add_leaf(t, {int(targets[j]): float(weights[j])}) for j in range(len(targets))]
    for i in range(count):
        t.true_next[i] = leaf_entry[true_ids[i]] if true_leaf[i] else true_ids[i]
        t.false_next[i] = leaf_entry[false_ids[i]] if false_leaf[i] else false_ids[i]
    for r in ctx.attr("tree_roots"):
        degenerate = true_leaf[r] and false_leaf[r] and true_ids[r] == false_ids[r]  # the tree is one leaf
        t.roots.append(leaf_entry[r] if degenerate else r)
    return t


def forest_from_regressor(ctx: Ctx, prefix: str = "target") -> Tables:
    """TreeEnsembleRegressor's (and TreeEnsembleClassifier's) per-tree node ids and string modes
    as tables; a leaf may hold values for several targets (target_* lists; class_* for the
    classifier)."""
    tree_ids, node_ids = ctx.attr("nodes_treeids"), ctx.attr("nodes_nodeids")
    modes = ctx.attr("nodes_modes")
    values = ctx.attr("nodes_values") or []
    if not values and "nodes_values_as_tensor" in ctx.attrs:
        values = onnx.numpy_helper.to_array(ctx.attrs["nodes_values_as_tensor"].t).tolist()
    missing = ctx.attr("nodes_missing_value_tracks_true") or [0] * len(modes)
    entry = {(tree, node): k for k, (tree, node) in enumerate(zip(tree_ids, node_ids))}
    leaf_values: dict[int, dict[int, float]] = {}
    weights = ctx.attr(f"{prefix}_weights") or []
    if not weights and f"{prefix}_weights_as_tensor" in ctx.attrs:
        weights = onnx.numpy_helper.to_array(ctx.attrs[f"{prefix}_weights_as_tensor"].t).tolist()
    for tree, node, target, w in zip(ctx.attr(f"{prefix}_treeids"), ctx.attr(f"{prefix}_nodeids"),
                                     ctx.attr(f"{prefix}_ids"), weights):
        per_target = leaf_values.setdefault(entry[(tree, node)], {})
        per_target[target] = per_target.get(target, 0.0) + w
    t = Tables(members=[[]])
    for k, mode in enumerate(modes):
        if mode not in MODE_NAMES and mode != "LEAF":
            raise ctx.error(f"nodes_modes {mode!r} is not one of {sorted(MODE_NAMES)} or LEAF")
        leaf = mode == "LEAF"
        t.feature.append(0 if leaf else ctx.attr("nodes_featureids")[k])
        t.split.append(0.0 if leaf else float(values[k]))
        t.mode.append(LEQ if leaf else MODE_NAMES[mode])
        tree = tree_ids[k]
        t.true_next.append(k if leaf else entry[(tree, ctx.attr("nodes_truenodeids")[k])])
        t.false_next.append(k if leaf else entry[(tree, ctx.attr("nodes_falsenodeids")[k])])
        t.missing_true.append(bool(missing[k]))
        t.member_row.append(0)
        t.leaf_values.append(leaf_values.get(k, {}))
    roots: dict[int, int] = {}
    for k, tree in enumerate(tree_ids):
        roots.setdefault(tree, k)  # a tree's first node is its root
    pointed = {n for k, (a, b) in enumerate(zip(t.true_next, t.false_next)) for n in (a, b) if n != k}
    for tree in sorted(roots):
        if roots[tree] in pointed:
            raise ctx.error(f"tree {tree}: its first node is not its root")
    t.roots = [roots[tree] for tree in sorted(roots)]
    return t


def _post_transformed(scores: torch.Tensor, post_transform: int) -> torch.Tensor:
    """The ensemble's post_transform: 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 4 PROBIT (3 SOFTMAX_ZERO is
    refused where the attribute is read)."""
    if post_transform == 1:
        return torch.softmax(scores, dim=-1)
    if post_transform == 2:
        return torch.sigmoid(scores)
    if post_transform == 4:
        return _probit(scores)
    return scores


def _probit(p: torch.Tensor) -> torch.Tensor:
    """sqrt(2) erfinv(2 p - 1) with the approximation of erfinv (a = 0.147) that onnx's reference
    and onnxruntime use, not the exact inverse."""
    x = 2 * p - 1
    t = (1 - x) * (1 + x)
    log = torch.log(torch.where(t == 0, torch.ones_like(t), t))
    a = 2 / (torch.pi * 0.147) + 0.5 * log
    root = torch.sqrt(torch.sqrt(a * a - log / 0.147) - a)
    edge = torch.where(x < 0, -torch.inf, torch.inf)  # p = 0 or 1: -inf / inf, as onnxruntime (the reference: 0)
    return 1.41421356 * torch.where(t == 0, edge, torch.where(x < 0, -root, root))


def _descend(data: torch.Tensor, feature: torch.Tensor, split: torch.Tensor, mode: torch.Tensor,
             true_next: torch.Tensor, false_next: torch.Tensor, missing_true: torch.Tensor, member_row: torch.Tensor,
             members: torch.Tensor, roots: torch.Tensor, depth: int) -> torch.Tensor:
    """[N, trees]: the leaf entry every sample reaches in every tree."""
    at = roots.expand(data.shape[0], roots.shape[0])
    thresholds = split.to(data.dtype)
    for _ in range(depth):
        v = torch.gather(data, 1, feature[at])
        s, m = thresholds[at], mode[at]
        member = (v.unsqueeze(-1) == members[member_row[at]]).any(-1)
        holds = torch.where(m == LEQ, v <= s, torch.where(m == LT, v < s, torch.where(m == GTE, v >= s, torch.where(
            m == GT, v > s, torch.where(m == EQ, v == s, torch.where(m == NEQ, v != s, member))))))
        holds = holds | (missing_true[at] & torch.isnan(v))
        at = torch.where(holds, true_next[at], false_next[at])
    return at


def _features(x: torch.Tensor) -> torch.Tensor:
    x = x.reshape(x.shape[0], -1) if x.dim() != 2 else x
    return x if x.is_floating_point() else x.to(torch.float32)


def run_forest(x: torch.Tensor, feature: torch.Tensor, split: torch.Tensor, mode: torch.Tensor, true_next: torch.Tensor,
               false_next: torch.Tensor, missing_true: torch.Tensor, member_row: torch.Tensor, members: torch.Tensor,
               values: torch.Tensor, has_value: torch.Tensor, roots: torch.Tensor, base: torch.Tensor, *, depth: int,
               aggregate: int, post_transform: int) -> torch.Tensor:
    """x [N, F] -> [N, targets]: every tree's leaf for every sample, its values aggregated over
    the trees (SUM, AVERAGE, MIN, MAX), plus `base`, then the post transform."""
    data = _features(x)
    at = _descend(data, feature, split, mode, true_next, false_next, missing_true, member_row, members, roots, depth)
    leaf, hit = values[at], has_value[at]  # [N, trees, targets]
    if aggregate in (0, 1):
        out = leaf.sum(1) / (roots.shape[0] if aggregate == 0 else 1)
    else:
        filler = torch.full_like(leaf, torch.inf if aggregate == 2 else -torch.inf)
        picked = torch.where(hit, leaf, filler)
        out = picked.amin(1) if aggregate == 2 else picked.amax(1)
    # a target that no tree's leaf reaches is 0, base value not added, as in onnxruntime (onnx's
    # reference for MIN / MAX: the dtype's max / min)
    out = torch.where(hit.any(1), out + base, torch.zeros_like(out))
    return _post_transformed(out.to(data.dtype), post_transform)  # in the output's type, as onnxruntime computes it


def _table_nodes(ctx: Ctx, t: Tables, n_targets: int, base: list[float]) -> tuple[list[Any], int]:
    """The tables as buffers of the module (in run_forest's argument order) and the depth."""
    values = np.zeros((len(t.feature), n_targets), np.float64)
    has_value = np.zeros((len(t.feature), n_targets), bool)
    for entry, per_target in enumerate(t.leaf_values):
        for target, v in per_target.items():
            if not 0 <= target < n_targets:
                raise ctx.error(f"a leaf's target id {target} is outside [0, n_targets={n_targets})")
            values[entry, target], has_value[entry, target] = v, True
    width = max(len(m) for m in t.members) or 1
    members = np.full((len(t.members), width), np.nan)
    for row, m in enumerate(t.members):
        members[row, :len(m)] = m
    arrays = {"feature": np.array(t.feature, np.int64), "split": np.array(t.split, np.float64),
              "mode": np.array(t.mode, np.int64), "true_next": np.array(t.true_next, np.int64),
              "false_next": np.array(t.false_next, np.int64), "missing_true": np.array(t.missing_true, bool),
              "member_row": np.array(t.member_row, np.int64), "members": members, "values": values,
              "has_value": has_value, "roots": np.array(t.roots, np.int64),
              "base": np.array(base or [0.0] * n_targets, np.float64)}  # fmt: skip
    nodes = []
    for name, array in arrays.items():
        node = ctx.builder.add_tensor(f"{ctx.node.name or ctx.node.op_type}_{name}", torch.from_numpy(array), False)
        ctx.created.append(node)
        nodes.append(node)
    try:
        return nodes, t.depth()
    except ValueError as e:
        raise ctx.error(str(e)) from None


def run_classifier(x: torch.Tensor, feature: torch.Tensor, split: torch.Tensor, mode: torch.Tensor,
                   true_next: torch.Tensor, false_next: torch.Tensor, missing_true: torch.Tensor,
                   member_row: torch.Tensor, members: torch.Tensor, values: torch.Tensor, has_value: torch.Tensor,
                   roots: torch.Tensor, base: torch.Tensor, labels: torch.Tensor, *, depth: int, has_base: bool,
                   binary: int, all_positive: bool, post_transform: int) -> tuple[torch.Tensor, torch.Tensor]:
    """x [N, F] -> (labels [N], scores [N, classes]) as onnxruntime's TreeEnsembleClassifier: a
    class's score is its leaf weights summed over the trees plus its base value, the label the
    first class of highest score among those with a weight (or a base value), the scores then
    post-transformed. `binary` (two classes, every weight for one class: its id + 1): that class's
    score p decides the label, the second one when p > 0.5 (all weights >= 0) or p > 0; with
    class 0's weights the scores are (1 - p, p) (all weights >= 0, no transform) or (-p, p)."""
    data = _features(x)
    at = _descend(data, feature, split, mode, true_next, false_next, missing_true, member_row, members, roots, depth)
    scores = values[at].sum(1) + base  # [N, classes], float64
    if binary:
        p = scores[:, binary - 1]
        index = ((p > 0.5) if all_positive else (p > 0)).to(torch.int64)
        if binary == 1:
            scores = torch.stack((1 - p if all_positive and post_transform == 0 else -p, p), 1)
    else:
        scored = has_value[at].any(1) | has_base
        index = torch.argmax(torch.where(scored, scores, torch.full_like(scores, -torch.inf)), 1)
    return labels[index], _post_transformed(scores.to(torch.float32), post_transform)


def _convert(ctx: Ctx, x: Any, t: Tables, n_targets: int, aggregate: int, post_transform: int,
             base: list[float]) -> Any:
    if post_transform not in (0, 1, 2, 4):
        raise ctx.error(f"post_transform {post_transform} (SOFTMAX_ZERO) is not supported")
    nodes, depth = _table_nodes(ctx, t, n_targets, base)
    return ctx.call(run_forest, x, *nodes, depth=depth, aggregate=aggregate, post_transform=post_transform)


@onnx_op(ML, "TreeEnsemble", since=5)
def tree_ensemble(ctx: Ctx, x: Any) -> Any:
    return _convert(ctx, x, forest_from_attributes(ctx), ctx.attr("n_targets"), ctx.attr("aggregate_function", 1),
                    ctx.attr("post_transform", 0), [])


@onnx_op(ML, "TreeEnsembleRegressor", since=1)
def tree_ensemble_regressor(ctx: Ctx, x: Any) -> Any:
    base = ctx.attr("base_values") or []
    if not base and "base_values_as_tensor" in ctx.attrs:
        base = onnx.numpy_helper.to_array(ctx.attrs["base_values_as_tensor"].t).tolist()
    aggregate, post = ctx.attr("aggregate_function", "SUM"), ctx.attr("post_transform", "NONE")
    if aggregate not in AGGREGATES or post not in POST_TRANSFORMS:
        raise ctx.error(f"aggregate_function {aggregate!r} / post_transform {post!r} unknown")
    return _convert(ctx, x, forest_from_regressor(ctx), ctx.attr("n_targets"), AGGREGATES[aggregate],
                    POST_TRANSFORMS[post], list(base))


@onnx_op(ML, "TreeEnsembleClassifier", since=1)
def tree_ensemble_classifier(ctx: Ctx, x: Any) -> Any:
    """Integer class labels only; the two-class forms where onnxruntime and onnx's reference
    disagree (or onnxruntime drops the trees' scores) are refused, naming the form."""
    if ctx.attr("classlabels_strings"):
        raise ctx.error("string class labels (classlabels_strings): torch has no string tensor; a model with "
                        "integer labels (classlabels_int64s) imports")
    labels = list(ctx.attr("classlabels_int64s") or [])
    if len(labels) < 2:
        raise ctx.error(f"{len(labels)} class label(s): at least two are needed")
    base = list(ctx.attr("base_values") or [])
    if not base and "base_values_as_tensor" in ctx.attrs:
        base = onnx.numpy_helper.to_array(ctx.attrs["base_values_as_tensor"].t).tolist()
    post = ctx.attr("post_transform", "NONE")
    if post not in POST_TRANSFORMS or post == "SOFTMAX_ZERO":
        raise ctx.error(f"post_transform {post!r} is not supported (NONE, SOFTMAX, LOGISTIC, PROBIT are)")
    weights = ctx.attr("class_weights") or []
    if not weights and "class_weights_as_tensor" in ctx.attrs:
        weights = onnx.numpy_helper.to_array(ctx.attrs["class_weights_as_tensor"].t).tolist()
    weighted = sorted(set(ctx.attr("class_ids") or []))
    binary = weighted[0] + 1 if len(labels) == 2 and len(weighted) == 1 else 0
    if len(labels) == 2 and base and not (binary == 1 and len(base) == 1):
        raise ctx.error(f"two classes with base_values {base} (weights for classes {weighted}): onnxruntime and "
                        "onnx's reference disagree here (onnxruntime adds base_values[1] to class 0's score); "
                        "only a one-class (class 0) binary forest takes a base value")
    if binary == 1 and post in ("SOFTMAX", "PROBIT"):
        raise ctx.error(f"a binary forest (class 0's weights) with post_transform {post}: onnxruntime returns the "
                        "scores untransformed, onnx's reference transforms (-p, p); not imported")
    if base and len(base) != len(labels) and binary != 1:
        raise ctx.error(f"{len(base)} base_values for {len(labels)} classes")
    nodes, depth = _table_nodes(ctx, forest_from_regressor(ctx, "class"), len(labels), base + [0.0] * (len(labels) - len(base)))
    label_node = ctx.builder.add_tensor(f"{ctx.node.name or ctx.node.op_type}_labels",
                                        torch.tensor(labels, dtype=torch.int64), False)
    ctx.created.append(label_node)
    return ctx.call_multi(run_classifier, 2, x, *nodes, label_node, depth=depth, has_base=bool(base), binary=binary,
                          all_positive=all(w >= 0 for w in weights), post_transform=POST_TRANSFORMS[post])
