"""The command line of `python -m codegen`: its subcommands and their options.

Kept apart from `__main__` so that `check` can parse the generating command named in a
generated file's header without importing the entry point.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m codegen", description="Keep torchlib in step with PyTorch and ONNX.")
    sub = p.add_subparsers(dest="command", required=True)
    aten = sub.add_parser("aten", help="typed stubs for ATen overloads without a function (torchlib/generated/)")
    aten.add_argument("--root", type=Path, default=None, help="write under this directory instead of the repository")
    opset = sub.add_parser("opset", help="the typed op namespace of one ONNX opset (graph_builder/generated/)")
    opset.add_argument("--opset", type=int, default=23, help="ONNX opset version (default 23)")
    opset.add_argument("--root", type=Path, default=None, help="write under this directory instead of the repository")
    sub.add_parser("check", help="registered functions match their ATen schemas; generated files are up to date")
    coverage = sub.add_parser("coverage", help="which ATen overloads have functions")
    coverage.add_argument("--json", action="store_true", help="print the report as JSON")
    coverage.add_argument("--missing", choices=("core", "all", "none"), default="core", help="which missing overloads to list")
    coverage.add_argument("--nodes", action="store_true",
                          help="export each listed overload that has a torch decomposition on an OpInfo sample and "
                               "show its ONNX node count (minutes for --missing all)")
    coverage.add_argument("--op", metavar="NAME", action="append", default=None,
                          help="only this ATen overload (aten::add.Tensor, or add for all its overloads): "
                               "whether it has a function, its schema and its stub; repeatable")
    return p
