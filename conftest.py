"""Test-session settings shared by every test (and every pytest-xdist worker)."""

import os

# One intra-op thread per process: the suite runs one process per core (pytest -n), and
# torch / onnxruntime threads on top of that would only compete for the same cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# torchvision's PyPI wheels are CUDA builds whose compiled ops do not load beside torch's CPU
# wheel (constraints.txt), and transformers imports torchvision whenever it is installed: the
# stand-in ops make `import torchvision` work for the language-model tests and README snippet.
from torchlib.conformance import torchvision_reference  # noqa: E402

torchvision_reference.register()

import pytest  # noqa: E402

import graph_builder  # noqa: E402


@pytest.fixture
def exact_nan_mode():
    """Functions called eagerly or traced inside the test give torch's NaN and overflow edges
    (`graph_builder.exact_nan(True)`, the `export(..., exact_nan=True)` forms): for the tests of
    those edges. The default is the runtime's native ops (docs/nan_latency.md)."""
    with graph_builder.exact_nan(True):
        yield
