"""Would packing Q, K and V into one MatMul speed up the standard target's decode step?

    python bench/bench_packed_qkv.py [--runs 400] [--past 128]

The standard target (`target="onnx"`) keeps a decoder's Q, K and V projections as three
MatMuls of one input; the onnxruntime target packs them (one MatMul over the weights side by
side, then a Split). This bench takes bench_genai.py's Llama (hidden 512, 4 layers, random
weights), builds its standard-target folder with `torchlib.genai.build(target="onnx")`, writes
the same graph with every group of three MatMuls of one input by constant 2-D weights packed that
way, and times the decode step (one token, batch 1, past `--past`) of the two in plain
onnxruntime, 1 thread, run by run in alternation: median CPU time (`time.process_time`) and the
median of the runs' ratios. Prints whether the outputs are equal bit for bit.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from torchlib.conformance import torchvision_reference

torchvision_reference.register()  # transformers imports torchvision, whose CUDA-built ops do not load here


def packed(model, groups: int = 3):
    """The model with each group of `groups` MatMuls of one input by 2-D initializers packed."""
    from onnx import helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    readers = collections.defaultdict(list)
    for n in graph.node:
        if n.op_type == "MatMul" and n.input[1] in inits and len(inits[n.input[1]].dims) == 2:
            readers[n.input[0]].append(n)
    done = 0
    for a, nodes in readers.items():
        if len(nodes) != groups:
            continue
        weights = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
        name = nodes[0].input[1] + "_packed"
        graph.initializer.extend([numpy_helper.from_array(np.concatenate(weights, 1), name),
                                  numpy_helper.from_array(np.array([w.shape[1] for w in weights], np.int64), name + "_sizes")])  # fmt: skip
        at = list(graph.node).index(nodes[0])
        for n in nodes:
            graph.node.remove(n)
        graph.node.insert(at, helper.make_node("Split", [name + "_y", name + "_sizes"], [n.output[0] for n in nodes], axis=-1))
        graph.node.insert(at, helper.make_node("MatMul", [a, name], [name + "_y"]))
        done += 1
    return model, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--past", type=int, default=128)
    ns = parser.parse_args()
    import onnx
    import onnxruntime as ort

    import torchlib.genai
    from torchlib.genai import demo_folders

    work = Path(tempfile.mkdtemp(prefix="bench_packed_qkv_"))
    folder = demo_folders.write("llama", work / "model", **demo_folders.BENCH_LLAMA)
    torchlib.genai.build(folder, work / "standard", target="onnx")
    model = onnx.load(work / "standard" / "model.onnx")
    three = packed(onnx.load(work / "standard" / "model.onnx"))
    print(json.dumps({"groups_packed": three[1], "nodes": [len(model.graph.node), len(three[0].graph.node)]}), flush=True)
    sessions = {}
    for name, proto in (("three MatMuls", model), ("packed", three[0])):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        sessions[name] = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sessions["packed"].get_inputs():
        if i.name == "input_ids":
            feeds[i.name] = np.array([[5]], np.int64)
        elif i.name == "attention_mask":
            feeds[i.name] = np.ones((1, ns.past + 1), np.int64)
        elif i.name == "position_ids":
            feeds[i.name] = np.array([[ns.past]], np.int64)
        else:
            feeds[i.name] = rng.standard_normal((1, 4, ns.past, 64), dtype=np.float32)
    outs = [s.run(None, feeds) for s in sessions.values()]
    equal = all(np.array_equal(a, b) for a, b in zip(*outs))
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(ns.runs):
        for name, s in sessions.items():
            start = time.process_time()
            s.run(None, feeds)
            times[name].append(time.process_time() - start)
    ratio = statistics.median(a / b for a, b in zip(times["three MatMuls"], times["packed"]))
    print(json.dumps({"outputs_equal_bit_for_bit": equal,
                      "cpu_ms_median": {k: round(statistics.median(v) * 1e3, 3) for k, v in times.items()},
                      "three_over_packed_median_ratio": round(ratio, 3), "load_average": os.getloadavg()[0]}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
