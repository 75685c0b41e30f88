"""onnxruntime latency of one DFT along an axis: the DFT node vs one MatMul with the twiddle matrix.

    OMP_NUM_THREADS=1 python bench/bench_dft_matmul.py [--runs 200] [--batch 1000] [--lengths 3,5,...]

Forms, on x [batch, n, parts] (parts 1: real, onesided; parts 2: complex, all n bins):
- dft: `DFT(x, axis=1)` (what torchlib.ops.fft used for every length);
- matmul: `Reshape(MatMul(Reshape(x, [batch, n * parts]), W), [batch, bins, 2])`, W the
  [n * parts, 2 * bins] real twiddle matrix (torchlib.ops.fft._twiddle_matrix);
- stft: the stft front end (n_fft 400, hop 160, 1 s of 16 kHz audio: 98 frames of 400) through
  DFT, to check that it stays as it is.
Median microseconds per run, 1 intra-op thread, the two forms timed run by run in alternation.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from torchlib.ops.fft import _twiddle_matrix


def build(form: str, batch: int, n: int, parts: int, dtype: type) -> ort.InferenceSession:
    onesided = parts == 1
    bins = n // 2 + 1 if onesided else n
    elem = TensorProto.DOUBLE if dtype is np.float64 else TensorProto.FLOAT
    inits = []
    if form == "dft":
        inits.append(numpy_helper.from_array(np.array(1, np.int64), "axis"))
        nodes = [helper.make_node("DFT", ["x", "", "axis"], ["out"], onesided=int(onesided))]
    else:
        inits += [numpy_helper.from_array(_twiddle_matrix(n, bins, parts).astype(dtype), "w"),
                  numpy_helper.from_array(np.array([batch, n * parts], np.int64), "flat"),
                  numpy_helper.from_array(np.array([batch, bins, 2], np.int64), "split")]
        nodes = [helper.make_node("Reshape", ["x", "flat"], ["f"]), helper.make_node("MatMul", ["f", "w"], ["m"]),
                 helper.make_node("Reshape", ["m", "split"], ["out"])]
    graph = helper.make_graph(nodes, form, [helper.make_tensor_value_info("x", elem, [batch, n, parts])],
                              [helper.make_tensor_value_info("out", elem, [batch, bins, 2])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def timed(sessions: dict[str, ort.InferenceSession], x: np.ndarray, runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in sessions}
    for s in sessions.values():
        s.run(None, {"x": x})
    for _ in range(runs):
        for k, s in sessions.items():
            t = time.perf_counter()
            s.run(None, {"x": x})
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e6 for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--lengths", default="3,4,5,6,7,8,10,12,16,24,31,32,48,64,80,96,100,127,128")
    parser.add_argument("--dtypes", default="float64,float32")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"batch {args.batch}, median us of {args.runs} runs (dft | matmul | ratio matmul/dft)")
    for name in args.dtypes.split(","):
        dtype = np.dtype(name).type
        for n in (int(v) for v in args.lengths.split(",")):
            row = [f"{name} n={n:4d}"]
            for parts in (1, 2):
                x = rng.standard_normal((args.batch, n, parts)).astype(dtype)
                t = timed({f: build(f, args.batch, n, parts, dtype) for f in ("dft", "matmul")}, x, args.runs)
                row.append(f"{'r2c' if parts == 1 else 'c2c'} {t['dft']:8.0f} {t['matmul']:8.0f} {t['matmul'] / t['dft']:5.2f}")
            print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
