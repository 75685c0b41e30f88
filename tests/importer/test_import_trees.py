"""ai.onnx.ml tree ensembles (TreeEnsemble-5, TreeEnsembleRegressor) against onnxruntime's
kernels on random forests: every comparison mode, set membership, missing values, each
aggregate function and post transform; and torch.export with a dynamic batch."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto as T
from onnx import helper as h

from torchlib.importer import import_onnx

FEATURES, TARGETS = 5, 3


def _random_trees(rng: np.random.Generator, count: int, depth: int, modes: list[int]) -> dict[str, list]:
    """Full binary trees (depth levels of branches) in TreeEnsemble-5's layout: branch nodes
    numbered tree by tree, leaves likewise."""
    a: dict[str, list] = {k: [] for k in ("modes", "splits", "features", "true", "false", "true_leaf", "false_leaf",
                                          "missing", "roots", "leaf_targets", "leaf_weights", "members")}
    for _ in range(count):
        a["roots"].append(len(a["modes"]))

        def build(level: int) -> tuple[int, int]:  # (id, is_leaf)
            if level == depth:
                a["leaf_targets"].append(int(rng.integers(TARGETS)))
                a["leaf_weights"].append(float(rng.normal()))
                return len(a["leaf_targets"]) - 1, 1
            me = len(a["modes"])
            mode = int(rng.choice(modes))
            a["modes"].append(mode)
            a["splits"].append(float(np.round(rng.normal() * 5) / 5))
            a["features"].append(int(rng.integers(FEATURES)))
            a["missing"].append(int(rng.integers(2)))
            for k in ("true", "false", "true_leaf", "false_leaf"):
                a[k].append(0)
            if mode == 6:
                # onnxruntime takes small non-negative integer members only (a bitset); onnx's reference ends
                # a set at a 0 member
                a["members"] += [float(v) for v in rng.choice([1, 2, 3, 5], size=3)] + [np.nan]
            a["true"][me], a["true_leaf"][me] = build(level + 1)
            a["false"][me], a["false_leaf"][me] = build(level + 1)
            return me, 0

        build(0)
    return a


def _tree_ensemble_model(a: dict[str, list], aggregate: int, post: int) -> onnx.ModelProto:
    f32 = lambda v: h.make_tensor("t", T.FLOAT, [len(v)], v)  # noqa: E731
    attrs = dict(n_targets=TARGETS, aggregate_function=aggregate, post_transform=post, tree_roots=a["roots"],
                 nodes_modes=h.make_tensor("m", T.UINT8, [len(a["modes"])], a["modes"]), nodes_splits=f32(a["splits"]),
                 nodes_featureids=a["features"], nodes_truenodeids=a["true"], nodes_falsenodeids=a["false"],
                 nodes_trueleafs=a["true_leaf"], nodes_falseleafs=a["false_leaf"],
                 nodes_missing_value_tracks_true=a["missing"], leaf_targetids=a["leaf_targets"],
                 leaf_weights=f32(a["leaf_weights"]))  # fmt: skip
    if a["members"]:
        attrs["membership_values"] = f32(a["members"])
    node = h.make_node("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", **attrs)
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", FEATURES])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["n", TARGETS])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("ai.onnx.ml", 5)], ir_version=10)


def _inputs(rng: np.random.Generator, n: int) -> np.ndarray:
    x = (np.round(rng.normal(size=(n, FEATURES)) * 5) / 2).astype(np.float32)  # on the splits' grid: ties, integers
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


def _check(model: onnx.ModelProto, x: np.ndarray, ort_model: onnx.ModelProto | None = None) -> None:
    (want,) = ort.InferenceSession((ort_model or model).SerializeToString()).run(None, {"x": x})
    got = import_onnx(model)(torch.from_numpy(x))
    torch.testing.assert_close(got, torch.from_numpy(want), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("post", [0, 1, 2, 4])
def test_tree_ensemble_matches_onnxruntime(aggregate, post):
    rng = np.random.default_rng(10 * aggregate + post)
    trees = _random_trees(rng, count=6, depth=4, modes=[0, 1, 2, 3, 4, 5, 6])
    if post == 4:  # probit reads probabilities
        trees["leaf_weights"] = [float(v) for v in rng.uniform(0.01, 0.15, len(trees["leaf_weights"]))]
    # onnxruntime's TreeEnsemble-5 reads post_transform 1 as LOGISTIC and 2 as SOFTMAX (its older ops'
    # order); the spec, and the importer: 1 SOFTMAX, 2 LOGISTIC
    ort_model = _tree_ensemble_model(trees, aggregate, {1: 2, 2: 1}.get(post, post))
    _check(_tree_ensemble_model(trees, aggregate, post), _inputs(rng, 64), ort_model)


def _regressor_model(rng: np.random.Generator, count: int, depth: int, aggregate: str, post: str) -> onnx.ModelProto:
    """TreeEnsembleRegressor (ai.onnx.ml 3): per-tree node ids, string modes, leaves as LEAF nodes
    each voting for one or two targets, base values."""
    names = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
    a: dict[str, list] = {k: [] for k in ("treeids", "nodeids", "modes", "values", "features", "true", "false",
                                          "missing", "t_tree", "t_node", "t_id", "t_w")}  # fmt: skip
    for tree in range(count):
        ids = iter(range(2 ** (depth + 1)))

        def build(level: int) -> int:
            me = next(ids)
            a["treeids"].append(tree)
            a["nodeids"].append(me)
            a["missing"].append(int(rng.integers(2)))
            k = len(a["modes"])
            for key in ("values", "features", "true", "false"):
                a[key].append(0)
            if level == depth:
                a["modes"].append("LEAF")
                for target in rng.choice(TARGETS, size=int(rng.integers(1, 3)), replace=False):
                    a["t_tree"].append(tree)
                    a["t_node"].append(me)
                    a["t_id"].append(int(target))
                    a["t_w"].append(float(rng.normal()))
                return me
            a["modes"].append(str(rng.choice(names)))
            a["values"][k] = float(np.round(rng.normal() * 5) / 5)
            a["features"][k] = int(rng.integers(FEATURES))
            a["true"][k] = build(level + 1)
            a["false"][k] = build(level + 1)
            return me

        build(0)
    node = h.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", n_targets=TARGETS,
                       aggregate_function=aggregate, post_transform=post, base_values=[0.5, -0.25, 0.0],
                       nodes_treeids=a["treeids"], nodes_nodeids=a["nodeids"], nodes_modes=a["modes"],
                       nodes_values=a["values"], nodes_featureids=a["features"], nodes_truenodeids=a["true"],
                       nodes_falsenodeids=a["false"], nodes_missing_value_tracks_true=a["missing"],
                       target_treeids=a["t_tree"], target_nodeids=a["t_node"], target_ids=a["t_id"],
                       target_weights=a["t_w"])  # fmt: skip
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", FEATURES])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["n", TARGETS])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("ai.onnx.ml", 3)], ir_version=10)


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
def test_tree_ensemble_regressor_matches_onnxruntime(aggregate, post):
    rng = np.random.default_rng(len(aggregate) * 7 + len(post))
    _check(_regressor_model(rng, 5, 3, aggregate, post), _inputs(rng, 64))


def test_tree_ensemble_exports_with_dynamic_batch():
    rng = np.random.default_rng(0)
    model = _tree_ensemble_model(_random_trees(rng, 4, 3, [0, 1, 6]), 1, 0)
    gm = import_onnx(model)
    program = torch.export.export(gm, (torch.from_numpy(_inputs(rng, 8)),), dynamic_shapes=({0: torch.export.Dim("n")},))
    session = ort.InferenceSession(model.SerializeToString())
    for n in (1, 8, 33):
        x = _inputs(rng, n)
        (want,) = session.run(None, {"x": x})
        torch.testing.assert_close(program.module()(torch.from_numpy(x)), torch.from_numpy(want), rtol=1e-5, atol=1e-5)


def _classifier_model(rng: np.random.Generator, labels: list[int], weighted: list[int], post: str,
                      base: list[float] | None, positive: bool, strings: bool = False) -> onnx.ModelProto:
    """TreeEnsembleClassifier (ai.onnx.ml 3): 5 trees of depth 3 in the regressor's layout, each
    leaf weighting one or more of the classes `weighted` (uniform [0, 0.2) weights, or normal)."""
    names = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
    a: dict[str, list] = {k: [] for k in ("treeids", "nodeids", "modes", "values", "features", "true", "false",
                                          "c_tree", "c_node", "c_id", "c_w")}  # fmt: skip
    for tree in range(5):
        ids = iter(range(16))

        def build(level: int) -> int:
            me = next(ids)
            a["treeids"].append(tree)
            a["nodeids"].append(me)
            k = len(a["modes"])
            for key in ("values", "features", "true", "false"):
                a[key].append(0)
            if level == 3:
                a["modes"].append("LEAF")
                for c in rng.choice(weighted, size=int(rng.integers(1, len(weighted) + 1)), replace=False):
                    a["c_tree"].append(tree)
                    a["c_node"].append(me)
                    a["c_id"].append(int(c))
                    a["c_w"].append(float(rng.uniform(0, 0.2) if positive else rng.normal()))
                return me
            a["modes"].append(str(rng.choice(names)))
            a["values"][k] = float(np.round(rng.normal() * 5) / 5)
            a["features"][k] = int(rng.integers(FEATURES))
            a["true"][k] = build(level + 1)
            a["false"][k] = build(level + 1)
            return me

        build(0)
    attrs = dict(nodes_treeids=a["treeids"], nodes_nodeids=a["nodeids"], nodes_modes=a["modes"],
                 nodes_values=a["values"], nodes_featureids=a["features"], nodes_truenodeids=a["true"],
                 nodes_falsenodeids=a["false"], class_treeids=a["c_tree"], class_nodeids=a["c_node"],
                 class_ids=a["c_id"], class_weights=a["c_w"], post_transform=post)  # fmt: skip
    if strings:
        attrs["classlabels_strings"] = [f"c{v}" for v in labels]
    else:
        attrs["classlabels_int64s"] = labels
    if base is not None:
        attrs["base_values"] = base
    node = h.make_node("TreeEnsembleClassifier", ["x"], ["label", "scores"], domain="ai.onnx.ml", **attrs)
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, ["n", FEATURES])],
                         [h.make_tensor_value_info("label", T.STRING if strings else T.INT64, ["n"]),
                          h.make_tensor_value_info("scores", T.FLOAT, ["n", len(labels)])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("ai.onnx.ml", 3)], ir_version=10)


def _check_classifier(model: onnx.ModelProto, x: np.ndarray, atol: float = 1e-5) -> tuple[np.ndarray, torch.Tensor]:
    """Scores against onnxruntime within atol; returns onnxruntime's labels and the import's."""
    want_labels, want_scores = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    labels, scores = import_onnx(model)(torch.from_numpy(x))
    assert labels.dtype == torch.int64
    torch.testing.assert_close(scores, torch.from_numpy(want_scores), rtol=1e-5, atol=atol)
    return want_labels, labels


MULTICLASS = [([10, 20, 30, 40], [0, 1, 2, 3], None), ([10, 20, 30, 40], [0, 2], None),
              ([7, -3, 5], [0, 1, 2], [0.1, -0.2, 0.3]), ([0, 1, 2, 3], [1, 3], [0.0, 0.5, -0.5, 0.2])]


@pytest.mark.parametrize("labels, weighted, base", MULTICLASS)
@pytest.mark.parametrize("post", ["NONE", "SOFTMAX", "LOGISTIC", "PROBIT"])
def test_tree_ensemble_classifier_multiclass_matches_onnxruntime(labels, weighted, base, post):
    """Labels and scores; the label is the best class among those a leaf weights (or all, with base values)."""
    rng = np.random.default_rng(len(labels) * 10 + len(weighted) + len(post))
    positive = post == "PROBIT"  # probit reads probabilities
    model = _classifier_model(rng, labels, weighted, post, None if positive else base, positive)
    # probit's erfinv approximation, in float32 here and in onnxruntime, differs by up to 4e-5 near p = 0.5
    want, got = _check_classifier(model, _inputs(rng, 200), atol=1e-4 if positive else 1e-5)
    np.testing.assert_array_equal(got.numpy(), want)


BINARY = [(0, True, None, "NONE"), (0, False, None, "NONE"), (0, True, [-0.1], "LOGISTIC"), (0, False, [-0.5], "NONE"),
          (0, False, None, "LOGISTIC"), (1, True, None, "NONE"), (1, False, None, "LOGISTIC"), (1, False, None, "SOFTMAX")]


@pytest.mark.parametrize("weighted, positive, base, post", BINARY)
def test_tree_ensemble_classifier_binary_matches_onnxruntime(weighted, positive, base, post):
    """Every weight for one class: its score p decides (p > 0.5 with weights >= 0, else p > 0);
    int64 labels that are not 0 and 1."""
    rng = np.random.default_rng(weighted * 100 + 10 * positive + len(post))
    model = _classifier_model(rng, [4, 9], [weighted], post, base, positive)
    want, got = _check_classifier(model, _inputs(rng, 200))
    assert set(want) == {4, 9}
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("post", ["NONE", "SOFTMAX", "LOGISTIC"])
def test_tree_ensemble_classifier_two_weighted_classes(post):
    """Two classes, both weighted: the scores as onnxruntime's; the label the class of highest
    score (onnxruntime returns 1 when class 1's score is > 0, else 0, whatever the labels)."""
    rng = np.random.default_rng(len(post))
    model = _classifier_model(rng, [4, 9], [0, 1], post, None, False)
    x = _inputs(rng, 200)
    _, got = _check_classifier(model, x)
    _, scores = import_onnx(model)(torch.from_numpy(x))
    np.testing.assert_array_equal(got.numpy(), np.array([4, 9])[scores.argmax(1).numpy()])
    assert set(got.tolist()) == {4, 9}


@pytest.mark.parametrize("strings, labels, weighted, base, post, message", [
    (True, [0, 1, 2], [0, 1, 2], None, "NONE", "string class labels"),
    (False, [4, 9], [0, 1], [0.1, 0.2], "NONE", "onnxruntime and onnx's reference disagree"),
    (False, [4, 9], [0], None, "SOFTMAX", "untransformed"),
    (False, [4, 9, 5], [0, 1], None, "SOFTMAX_ZERO", "SOFTMAX_ZERO"),
])  # fmt: skip
def test_tree_ensemble_classifier_refuses_with_reason(strings, labels, weighted, base, post, message):
    from torchlib.importer import OnnxImportError

    model = _classifier_model(np.random.default_rng(0), labels, weighted, post, base, False, strings)
    with pytest.raises(OnnxImportError, match=message) as e:
        import_onnx(model)
    assert "TreeEnsembleClassifier" in str(e.value)


def test_tree_ensemble_classifier_exports_with_dynamic_batch():
    rng = np.random.default_rng(3)
    model = _classifier_model(rng, [10, 20, 30], [0, 1, 2], "SOFTMAX", None, False)
    program = torch.export.export(import_onnx(model), (torch.from_numpy(_inputs(rng, 8)),),
                                  dynamic_shapes=({0: torch.export.Dim("n")},))
    session = ort.InferenceSession(model.SerializeToString())
    for n in (1, 8, 33):
        x = _inputs(rng, n)
        want_labels, want_scores = session.run(None, {"x": x})
        labels, scores = program.module()(torch.from_numpy(x))
        np.testing.assert_array_equal(labels.numpy(), want_labels)
        torch.testing.assert_close(scores, torch.from_numpy(want_scores), rtol=1e-5, atol=1e-5)
