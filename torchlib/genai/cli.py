"""`python -m torchlib genai HF_MODEL_DIR -o OUT_DIR [--precision fp32|int4] [--block-size 32]
[--accuracy-level 0|1|2|3|4]`: onnxruntime-genai's folder for a Hugging Face model folder.

The arguments are those of onnxruntime-genai's model builder (`-i`, `-o`, `-p`, `block_size`,
`accuracy_level`), so that a build switches by changing the command.
"""

from __future__ import annotations

import argparse
import time

from torchlib.exporter.cli import run_cli


def _main(ns: argparse.Namespace) -> int:
    import torchlib.genai as genai
    from torchlib.exporter.cli import UsageError
    from torchlib.genai.model_folder import ModelFolderError

    if (ns.model is None) == (ns.input is None):
        raise UsageError("give the model folder once: `python -m torchlib genai HF_MODEL_DIR -o OUT_DIR` (or -i HF_MODEL_DIR)")
    try:
        start = time.perf_counter()
        built = genai.build(ns.model or ns.input, ns.output, precision=ns.precision, block_size=ns.block_size,
                            accuracy_level=ns.accuracy_level, tokenizer=ns.tokenizer,
                            position_ids=None if ns.position_ids is None else ns.position_ids == "yes",
                            opset=ns.opset, target=ns.target, progress=not ns.no_progress)  # fmt: skip
    except (ModelFolderError, FileNotFoundError) as e:
        raise UsageError(str(e)) from e
    seconds = time.perf_counter() - start
    print(f"wrote {built.output_dir}: {', '.join(built.files)} ({built.nodes} nodes, {seconds:.1f} s)")
    for note in built.diagnostics:
        print(f"  note: {note}")
    return 0


def genai_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchlib genai", description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", metavar="HF_MODEL_DIR",
                        help="a model folder: config.json, *.safetensors, the tokenizer's files")
    parser.add_argument("-i", "--input", metavar="HF_MODEL_DIR", help="the model folder, as the builder's -i takes it")
    parser.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the folder to write")
    parser.add_argument("-p", "--precision", choices=("fp32", "int4"), default="fp32",
                        help="fp32 (default), or int4: MatMul weights in 4 bits, blocks along K (MatMulNBits)")
    parser.add_argument("--block-size", type=int, default=32, help="int4 block size (default 32, the builder's)")
    parser.add_argument("--accuracy-level", type=int, choices=(0, 1, 2, 3, 4), default=4,
                        help="int4: MatMulNBits' activation type, 0 unset (float32), 1 float32, 2 float16, "
                             "3 bfloat16, 4 int8 (default, the builder's choice for the CPU: fastest, least exact; "
                             "docs/genai.md gives each level's drift)")  # fmt: skip
    parser.add_argument("--tokenizer", metavar="DIR", help="copy the tokenizer's files from DIR (default: the model folder)")
    parser.add_argument("--target", choices=("onnxruntime", "onnx"), default="onnxruntime",
                        help="onnxruntime (default): contrib operators where its kernels are faster; onnx: standard "
                             "ONNX only")  # fmt: skip
    parser.add_argument("--position-ids", choices=("yes", "no"),
                        help="whether the graph takes position_ids (default: no for the onnxruntime target, as the "
                             "builder's graph; yes for onnx)")  # fmt: skip
    parser.add_argument("--opset", type=int, default=23, help="ONNX opset (default 23; 21 and up for int4)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar while the weights are written (it shows only on a terminal)")
    return run_cli(_main, parser, argv)
