"""The importer's NonMaxSuppression in eager mode against onnxruntime's kernel: time per call
and whether the selected indices are the same, on random boxes in a 160 x 160 image (sizes 4 to
80, as a detector's proposals; scores uniform, a quarter of them tied).

    OMP_NUM_THREADS=1 python bench/bench_import_nms.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto  # noqa: E402
from onnx import helper as h  # noqa: E402

from torchlib.importer import import_onnx  # noqa: E402

# (batches, classes, boxes, max_output_boxes_per_class, iou_threshold, score_threshold)
CASES = [(1, 1, 7000, 7000, 0.5, 0.0), (1, 1, 7000, 100, 0.7, 0.05), (2, 80, 1000, 100, 0.5, 0.3)]
NAMES = ["boxes", "scores", "max_output", "iou_threshold", "score_threshold"]


def model(batches: int, classes: int) -> onnx.ModelProto:
    inputs = [h.make_tensor_value_info("boxes", TensorProto.FLOAT, [batches, "n", 4]),
              h.make_tensor_value_info("scores", TensorProto.FLOAT, [batches, classes, "n"]),
              h.make_tensor_value_info("max_output", TensorProto.INT64, [1]),
              h.make_tensor_value_info("iou_threshold", TensorProto.FLOAT, [1]),
              h.make_tensor_value_info("score_threshold", TensorProto.FLOAT, [1])]
    graph = h.make_graph([h.make_node("NonMaxSuppression", NAMES, ["selected"])], "nms", inputs,
                         [h.make_tensor_value_info("selected", TensorProto.INT64, [None, 3])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 11)], ir_version=8)


def inputs(batches: int, classes: int, n: int, limit: int, iou: float, score: float) -> list[np.ndarray]:
    rng = np.random.default_rng(n + classes)
    center, size = rng.uniform(0, 160, (batches, n, 2)), rng.uniform(4, 80, (batches, n, 2))
    boxes = np.concatenate([center - size / 2, center + size / 2], -1)[..., [1, 0, 3, 2]].astype(np.float32)
    scores = rng.uniform(0, 1, (batches, classes, n)).astype(np.float32)
    scores[..., : n // 4] = scores[..., n // 4: 2 * (n // 4)]
    return [boxes, scores, np.array([limit], np.int64), np.array([iou], np.float32), np.array([score], np.float32)]


def main() -> int:
    print("| batches x classes x boxes | max_output, iou, score thresholds | selected | importer eager (wall / CPU) "
          "| onnxruntime (wall) | same indices |")
    print("|---|---|---|---|---|---|")
    for b, c, n, limit, iou, score in CASES:
        proto = model(b, c)
        arrays = inputs(b, c, n, limit, iou, score)
        session = ort.InferenceSession(proto.SerializeToString())
        start = time.perf_counter()
        (want,) = session.run(None, dict(zip(NAMES, arrays)))
        ort_wall = time.perf_counter() - start
        gm = import_onnx(proto)
        args = [torch.from_numpy(a) for a in arrays]
        gm(*args)  # warm up
        wall, cpu = time.perf_counter(), time.process_time()
        got = gm(*args)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        same = got.shape == want.shape and bool((got.numpy() == want).all())
        print(f"| {b} x {c} x {n} | {limit}, {iou}, {score} | {len(want)} | {wall:.3f} s / {cpu:.3f} s | "
              f"{ort_wall:.3f} s | {'yes' if same else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
