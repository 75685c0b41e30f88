"""NonMaxSuppression against onnxruntime's kernel on random boxes (ties, thresholds met exactly,
several blocks of ranks), eager and captured by torch.export with a dynamic number of boxes
(the selection is a torch.while_loop there); RoiAlign likewise."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto
from onnx import helper as h

from torchlib.importer import import_onnx


def _nms_model(center_point_box: int, score_threshold: bool) -> onnx.ModelProto:
    names = ["boxes", "scores", "max_output", "iou_threshold"] + (["score_threshold"] if score_threshold else [])
    node = h.make_node("NonMaxSuppression", names, ["selected"], center_point_box=center_point_box)
    inputs = [h.make_tensor_value_info("boxes", TensorProto.FLOAT, [2, "n", 4]),
              h.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 3, "n"]),
              h.make_tensor_value_info("max_output", TensorProto.INT64, [1]),
              h.make_tensor_value_info("iou_threshold", TensorProto.FLOAT, [1])]
    if score_threshold:
        inputs.append(h.make_tensor_value_info("score_threshold", TensorProto.FLOAT, [1]))
    graph = h.make_graph([node], "nms", inputs, [h.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 11)], ir_version=8)


def _inputs(n: int, seed: int, limit: int, iou: float, score: float | None) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    corner = rng.uniform(0, 40, (2, n, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(1, 20, (2, n, 2))], -1).astype(np.float32)
    scores = rng.uniform(0, 1, (2, 3, n)).astype(np.float32)
    scores[:, :, : n // 4] = scores[:, :, n // 4: 2 * (n // 4)]  # tied scores: lower index first
    arrays = [boxes, scores, np.array([limit], np.int64), np.array([iou], np.float32)]
    return arrays + ([np.array([score], np.float32)] if score is not None else [])


CASES = [(0, 40, 0, 10, 0.5, None), (0, 60, 1, 100, 0.3, 0.4), (1, 30, 2, 5, 0.0, 0.2), (1, 1, 3, 3, 0.5, None),
         (0, 25, 4, 0, 0.5, None), (0, 0, 5, 3, 0.5, 0.1)]


@pytest.mark.parametrize("center, n, seed, limit, iou, score", CASES)
def test_nms_matches_onnxruntime(center, n, seed, limit, iou, score):
    model = _nms_model(center, score is not None)
    arrays = _inputs(n, seed, limit, iou, score)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, dict(zip(["boxes", "scores", "max_output", "iou_threshold",
                                                                  "score_threshold"], arrays)))
    got = import_onnx(model)(*map(torch.from_numpy, arrays))
    assert got.dtype == torch.int64
    np.testing.assert_array_equal(got.numpy(), expected)


def _onnxruntime_iou(a: np.ndarray, b: np.ndarray, center: int) -> np.float32:
    """IoU of two boxes in float32, with onnxruntime's formula."""
    def corners(box: np.ndarray) -> tuple[np.float32, ...]:
        if center:
            half_w, half_h = box[2] / np.float32(2), box[3] / np.float32(2)
            return box[0] - half_w, box[1] - half_h, box[0] + half_w, box[1] + half_h
        return min(box[1], box[3]), min(box[0], box[2]), max(box[1], box[3]), max(box[0], box[2])

    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = corners(a), corners(b)
    w, h = min(ax1, bx1) - max(ax0, bx0), min(ay1, by1) - max(ay0, by0)
    if w <= 0 or h <= 0:
        return np.float32(0)
    inter = w * h
    return inter / ((ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter)


def _boundary_inputs(n: int, seed: int, grid: bool, center: int, limit: int) -> list[np.ndarray]:
    """Boxes (integer corners on a small grid, or random floats), few distinct scores (many ties)
    or a third of them tied, the score threshold equal to one of the scores and the IoU
    threshold equal to the float32 IoU of an overlapping pair that ranks first and second in
    (batch 0, class 0): both comparisons are strict, so the pair is kept, though for the random
    floats the pair's IoU computed in float64 exceeds the threshold."""
    rng = np.random.default_rng(seed)
    if grid:
        corner, size = rng.integers(0, 12, (2, n, 2)), rng.integers(1, 6, (2, n, 2))
        scores = rng.integers(0, 8, (2, 3, n)).astype(np.float32) / 8
    else:
        corner, size = rng.uniform(0, 30, (2, n, 2)), rng.uniform(1, 15, (2, n, 2))
        scores = rng.uniform(0, 1, (2, 3, n)).astype(np.float32)
        scores[:, :, : n // 3] = scores[:, :, n // 3: 2 * (n // 3)]
    boxes = np.concatenate([corner, size if center else corner + size], -1).astype(np.float32)
    pairs = [(i, j, _onnxruntime_iou(boxes[0, i], boxes[0, j], center)) for i in range(40) for j in range(i + 1, 40)]
    wide = boxes[0].astype(np.float64)
    pairs = [(i, j, iou) for i, j, iou in pairs if 0 < iou < 1
             and (grid or _onnxruntime_iou(wide[i], wide[j], center) > np.float64(iou))]
    i, j, iou = pairs[int(rng.integers(len(pairs)))]
    scores[0, 0, i], scores[0, 0, j] = 2, 1.5
    return [boxes, scores, np.array([limit], np.int64), np.array([iou], np.float32),
            np.array([scores[0, 0, n - 1]], np.float32)]


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("grid", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nms_at_the_thresholds_matches_onnxruntime(center, grid, seed):
    """Over several blocks of ranks (300 boxes), ties, and thresholds met exactly: the IoUs are
    compared in float32 as onnxruntime computes them."""
    model = _nms_model(center, True)
    arrays = _boundary_inputs(300, seed, grid, center, [300, 40, 7][seed])
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, dict(zip(["boxes", "scores", "max_output", "iou_threshold",
                                                                  "score_threshold"], arrays)))
    got = import_onnx(model)(*map(torch.from_numpy, arrays))
    assert len(expected) > 20
    np.testing.assert_array_equal(got.numpy(), expected)


def test_nms_exports_with_dynamic_box_count():
    model = _nms_model(0, True)
    gm = import_onnx(model)
    n = torch.export.Dim("n", min=2)
    args = tuple(map(torch.from_numpy, _inputs(30, 0, 20, 0.4, 0.2)))
    program = torch.export.export(gm, args, dynamic_shapes=({1: n}, {2: n}, None, None, None))
    assert "while_loop" in str(program.graph)
    session = ort.InferenceSession(model.SerializeToString())
    for count, seed in ((30, 1), (57, 2), (9, 3), (300, 4)):  # 300: three blocks of ranks
        arrays = _inputs(count, seed, 20, 0.4, 0.2)
        (expected,) = session.run(None, dict(zip(["boxes", "scores", "max_output", "iou_threshold", "score_threshold"],
                                                 arrays)))
        np.testing.assert_array_equal(program.module()(*map(torch.from_numpy, arrays)).numpy(), expected)


def test_nms_exports_on_an_unbacked_box_count():
    """The boxes NonMaxSuppression reads are those over a score (NonZero then Gather): their
    number is unbacked under torch.export, at the top level of the program."""
    init = [onnx.numpy_helper.from_array(np.array(v, dtype), name) for name, v, dtype in
            (("floor", 0.2, np.float32), ("flat", [-1], np.int64), ("zero", [0], np.int64), ("one", [1], np.int64),
             ("limit", [100], np.int64), ("iou", [0.5], np.float32))]  # fmt: skip
    nodes = [h.make_node("Greater", ["scores", "floor"], ["over"]), h.make_node("NonZero", ["over"], ["nz"]),
             h.make_node("Reshape", ["nz", "flat"], ["idx"]), h.make_node("Gather", ["boxes", "idx"], ["b"]),
             h.make_node("Gather", ["scores", "idx"], ["s"]), h.make_node("Unsqueeze", ["b", "zero"], ["b3"]),
             h.make_node("Unsqueeze", ["s", "zero"], ["s2"]), h.make_node("Unsqueeze", ["s2", "one"], ["s3"]),
             h.make_node("NonMaxSuppression", ["b3", "s3", "limit", "iou"], ["selected"])]
    graph = h.make_graph(nodes, "nms", [h.make_tensor_value_info("boxes", TensorProto.FLOAT, ["n", 4]),
                                        h.make_tensor_value_info("scores", TensorProto.FLOAT, ["n"])],
                         [h.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])], init)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=8)
    session = ort.InferenceSession(model.SerializeToString())
    program = None
    for count, seed in ((40, 0), (300, 1), (7, 2)):
        boxes, scores = (a[0] for a in _inputs(count, seed, 0, 0.5, None)[:2])
        scores = scores[0]
        if program is None:
            n = torch.export.Dim("n")
            program = torch.export.export(import_onnx(model), (torch.from_numpy(boxes), torch.from_numpy(scores)),
                                          dynamic_shapes=({0: n}, {0: n}))
        (expected,) = session.run(None, {"boxes": boxes, "scores": scores})
        np.testing.assert_array_equal(program.module()(torch.from_numpy(boxes), torch.from_numpy(scores)).numpy(),
                                      expected)


def _roi_align_model(mode: str, sampling_ratio: int, transform: str) -> onnx.ModelProto:
    node = h.make_node("RoiAlign", ["x", "rois", "batch_indices"], ["y"], mode=mode, output_height=3, output_width=4,
                       sampling_ratio=sampling_ratio, spatial_scale=0.5, coordinate_transformation_mode=transform)
    graph = h.make_graph([node], "roi", [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 12, 10]),
                                         h.make_tensor_value_info("rois", TensorProto.FLOAT, ["r", 4]),
                                         h.make_tensor_value_info("batch_indices", TensorProto.INT64, ["r"])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, ["r", 3, 3, 4])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)], ir_version=8)


def _roi_inputs(count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    corner = rng.uniform(-4, 20, (count, 2))
    rois = np.concatenate([corner, corner + rng.uniform(0, 14, (count, 2))], 1).astype(np.float32)
    return [rng.standard_normal((2, 3, 12, 10)).astype(np.float32), rois, rng.integers(0, 2, count).astype(np.int64)]


@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("sampling_ratio", [0, 2])
@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
def test_roi_align_matches_onnxruntime(mode, sampling_ratio, transform):
    model = _roi_align_model(mode, sampling_ratio, transform)
    arrays = _roi_inputs(9, sampling_ratio)
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, dict(zip(["x", "rois", "batch_indices"],
                                                                                   arrays)))
    got = import_onnx(model)(*map(torch.from_numpy, arrays))
    torch.testing.assert_close(got, torch.from_numpy(expected), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sampling_ratio", [0, 2])
def test_roi_align_exports_with_dynamic_roi_count(sampling_ratio):
    model = _roi_align_model("avg", sampling_ratio, "half_pixel")
    r = torch.export.Dim("r")
    program = torch.export.export(import_onnx(model), tuple(map(torch.from_numpy, _roi_inputs(5, 0))),
                                  dynamic_shapes=(None, {0: r}, {0: r}))
    session = ort.InferenceSession(model.SerializeToString())
    for count, seed in ((5, 1), (13, 2), (2, 3)):
        arrays = _roi_inputs(count, seed)
        (expected,) = session.run(None, dict(zip(["x", "rois", "batch_indices"], arrays)))
        torch.testing.assert_close(program.module()(*map(torch.from_numpy, arrays)), torch.from_numpy(expected),
                                   rtol=1e-5, atol=1e-5)
