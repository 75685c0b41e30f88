"""A conformance report: run torchlib's functions on torch's OpInfo samples (eagerly and traced,
against torch) and write the function x dtype matrix as HTML and JSON, then read the JSON.

This is `python -m torchlib conformance` called from Python; the command takes the same options
(`--ops`, `--dtypes`, `--max-samples`, `-j`, `--no-exact-nan`).

    python examples/conformance_report.py            # the activation functions, every sample
    python examples/conformance_report.py --quick    # abs and relu, float32, 2 samples each
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from torchlib.conformance.cli import main as conformance

ACTIVATIONS = "aten_relu,aten_gelu,aten_silu,aten_hardswish,aten_elu,aten_leaky_relu,aten_softplus,aten_mish"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two functions, float32, two samples each")
    parser.add_argument("-o", "--output", type=Path, default=Path("conformance"), help="folder for the reports")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    html, report = args.output / "conformance.html", args.output / "conformance.json"

    if args.quick:
        options = ["--ops", "aten_abs,aten_relu", "--dtypes", "float32", "--max-samples", "2", "-j", "1"]
    else:
        options = ["--ops", ACTIVATIONS]
    code = conformance([*options, "--html", str(html), "--json", str(report), "--no-progress"])

    data = json.loads(report.read_text())
    print(f"wrote {html} and {report}")
    for result in data["results"]:
        outcomes: dict[str, int] = {}
        for sample in result["samples"]:
            outcomes[sample["outcome"]] = outcomes.get(sample["outcome"], 0) + 1
        print(f"  {result['function']:>20} {result['dtype']:>9}: {outcomes}")
    assert code == 0, "an unexpected failure or pass: see the report"


if __name__ == "__main__":
    main()
