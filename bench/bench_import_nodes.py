"""onnx's backend node tests through torchlib.importer: the not-applicable rules with their
counts and the pass rate of the applicable cases (same as `python -m torchlib import-conformance`).

    nice -n 5 python bench/bench_import_nodes.py [-v]      # -v lists each failing case
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from torchlib.importer.node_tests import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
