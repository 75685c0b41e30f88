"""Test-session settings shared by every test (and every pytest-xdist worker)."""

import os

# One intra-op thread per process: the suite runs one process per core (pytest -n), and
# torch / onnxruntime threads on top of that would only compete for the same cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

import graph_builder  # noqa: E402
import torchlib  # noqa: E402, F401  (first: its torchvision stand-ins apply to any test module that imports torchvision)


@pytest.fixture
def exact_nan_mode():
    """Functions called eagerly or traced inside the test give torch's NaN and overflow edges
    (`graph_builder.exact_nan(True)`, the `export(..., exact_nan=True)` forms): for the tests of
    those edges. The default is the runtime's native ops (docs/nan_latency.md)."""
    with graph_builder.exact_nan(True):
        yield
