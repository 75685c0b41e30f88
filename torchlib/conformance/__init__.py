"""OpInfo conformance: every registered function checked against PyTorch's OpInfo database,
eagerly and as a traced ONNX graph, with an expectations table (tests/opinfo/table).

    python -m torchlib conformance [--ops add,mul] [--dtypes float32] [--html reports/conformance.html]

`main(argv)` is the command; `engine.Harness` runs it for pytest (tests/opinfo/test_opinfo.py)
and the command alike; `spec` is the vocabulary of the table; `report` writes the matrix.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """`python -m torchlib conformance [args]`; returns the exit code."""
    from torchlib.conformance.cli import main as _main

    return _main(argv)


__all__ = ["main"]
