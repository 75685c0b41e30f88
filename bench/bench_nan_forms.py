"""onnxruntime latency of the exact NaN forms of float32 2-D max pooling, in isolation.

    OMP_NUM_THREADS=1 python bench/bench_nan_forms.py [--runs 1000]

onnxruntime's MaxPool skips NaN, torch's max of a window holding one is NaN. Forms (each a
graph `x -> [Conv 1x1 -> Relu ->] MaxPool + NaN form`; with the Conv, as in a CNN, onnxruntime
runs the pooling in its blocked NCHWc layout):
- bare: MaxPool alone (not exact, the floor);
- where: `Where(Cast(MaxPool(Cast(IsNaN(x)))), NaN, MaxPool(x))`, the form before;
- conv: `MaxPool(x) * Conv1x1_{w=0,b=1}(Sigmoid(DepthwiseConv_{w=1}(Relu(x))))`, the form now
  (torchlib.ops.conv_pool._ones_or_nan_per_window).
Median microseconds per run, 1 intra-op thread, the forms timed run by run in alternation.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def build(form: str, shape: tuple[int, ...], k: int, s: int, p: int, conv_first: bool):  # type: ignore[no-untyped-def]
    c = shape[1]
    pool = {"kernel_shape": [k, k], "strides": [s, s], "pads": [p] * 4}
    inits = []
    nodes = []
    x = "x"
    if conv_first:
        inits.append(numpy_helper.from_array(np.random.default_rng(0).standard_normal((c, c, 1, 1)).astype(np.float32), "w"))
        nodes += [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Relu", ["c"], ["r0"])]
        x = "r0"
    nodes.append(helper.make_node("MaxPool", [x], ["y"], **pool))
    if form == "bare":
        nodes.append(helper.make_node("Identity", ["y"], ["out"]))
    elif form == "where":
        inits.append(numpy_helper.from_array(np.array(np.nan, np.float32), "nan"))
        nodes += [helper.make_node("IsNaN", [x], ["i"]), helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
                  helper.make_node("MaxPool", ["f"], ["m"], **pool), helper.make_node("Cast", ["m"], ["b"], to=TensorProto.BOOL),
                  helper.make_node("Where", ["b", "nan", "y"], ["out"])]  # fmt: skip
    else:
        inits += [numpy_helper.from_array(np.ones((c, 1, k, k), np.float32), "ones"),
                  numpy_helper.from_array(np.zeros((c, 1, 1, 1), np.float32), "zeros"),
                  numpy_helper.from_array(np.ones(c, np.float32), "bias")]  # fmt: skip
        relu = [] if conv_first else [helper.make_node("Relu", [x], ["r0"])]  # Relu(Relu(x)) is one Relu after optimizing
        nodes += relu + [helper.make_node("Conv", ["r0", "ones"], ["sums"], group=c, **pool),
                         helper.make_node("Sigmoid", ["sums"], ["sig"]),
                         helper.make_node("Conv", ["sig", "zeros", "bias"], ["m"], group=c, kernel_shape=[1, 1]),
                         helper.make_node("Mul", ["y", "m"], ["out"])]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=9)


def session(model) -> ort.InferenceSession:  # type: ignore[no-untyped-def]
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    ns = parser.parse_args()
    forms = ["bare", "where", "conv"]
    print("| input, kernel / stride / pad | Conv first | " + " | ".join(f"{f} us" for f in forms) + " | conv / where |")
    print("|---|---|" + "---|" * (len(forms) + 1))
    for shape, k, s, p in [((2, 16, 32, 32), 2, 2, 0), ((8, 3, 64, 64), 2, 2, 0), ((4, 64, 56, 56), 3, 2, 1)]:
        for conv_first in (True, False):
            x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
            sessions = [session(build(f, shape, k, s, p, conv_first)) for f in forms]
            for sess in sessions:
                for _ in range(20):
                    sess.run(None, {"x": x})
            samples: list[list[float]] = [[] for _ in forms]
            for r in range(ns.runs):
                for i in (range(len(forms)) if r % 2 == 0 else reversed(range(len(forms)))):
                    start = time.perf_counter()
                    sessions[i].run(None, {"x": x})
                    samples[i].append(time.perf_counter() - start)
            med = [statistics.median(t) * 1e6 for t in samples]
            print(f"| {list(shape)}, {k} / {s} / {p} | {'yes' if conv_first else 'no'} | " + " | ".join(f"{m:.1f}" for m in med)
                  + f" | {med[2] / med[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
