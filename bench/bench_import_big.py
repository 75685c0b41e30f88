"""Import an ONNX model whose weights (external data) are over 2 GB, and measure the importer's
peak memory: the weights are mapped from their file, not copied, so the import and a forward
call stay within the memory of the weights (issue: a model over 2 GB imports within the memory
of its weights).

    python bench/bench_import_big.py [--gib 2.25] [--dir DIR]

The model is a chain of MatMul + Relu layers with float32 weights of 4096 x 4096 (64 MiB each),
written once with external data. A child process imports it and runs one forward call on a
batch of 2; it prints its peak resident memory (VmHWM) against the weights' size, and the
largest difference from onnxruntime's output on the same input.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WIDTH = 4096


def write_model(path: str, layers: int) -> None:
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x = "x"
    for i in range(layers):
        w = (rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / np.sqrt(WIDTH)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"layer{i}.weight"))
        nodes.append(helper.make_node("MatMul", [x, f"layer{i}.weight"], [f"h{i}"]))
        nodes.append(helper.make_node("Relu", [f"h{i}"], [f"r{i}"]))
        x = f"r{i}"
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", WIDTH])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", WIDTH])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(path) + ".data", size_threshold=0)


def _peak_gib() -> float:
    """This process's peak resident memory (VmHWM: ru_maxrss would carry the parent's over exec)."""
    with open("/proc/self/status") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    return kib / 2**20


def child(path: str) -> None:
    import torch

    from torchlib.importer import import_onnx

    base = _peak_gib()
    t = time.perf_counter()
    gm = import_onnx(path)
    imported = time.perf_counter() - t
    x = torch.randn(2, WIDTH)
    with torch.no_grad():
        y = gm(x)
    peak = _peak_gib()
    import onnxruntime as ort

    del gm
    expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x.numpy()})[0]
    err = float(np.abs(expected - y.numpy()).max())
    print(f"{base:.2f} {peak:.2f} {imported:.2f} {err:.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=2.25, help="weights' size in GiB (default 2.25)")
    parser.add_argument("--dir", default=None, help="where to write the model (default: a temporary folder)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    layers = max(1, round(args.gib * 2**30 / (WIDTH * WIDTH * 4)))
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = os.path.join(folder, "big.onnx")
        write_model(path, layers)
        weights = os.path.getsize(path + ".data") / 2**30
        out = subprocess.run([sys.executable, __file__, "--child", path], capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"the import failed:\n{out.stderr[-3000:]}")
        base, peak, seconds, err = out.stdout.split()[-4:]
    print("| weights (external data) | layers | peak RSS after import + forward | RSS before import | import time | max abs err vs onnxruntime |")
    print("|---|---|---|---|---|---|")
    print(f"| {weights:.2f} GiB | {layers} | {float(peak):.2f} GiB | {float(base):.2f} GiB | {seconds} s | {err} |")


if __name__ == "__main__":
    main()
