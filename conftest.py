"""Test-session settings shared by every test (and every pytest-xdist worker)."""

import os

# One intra-op thread per process: the suite runs one process per core (pytest -n), and
# torch / onnxruntime threads on top of that would only compete for the same cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")
