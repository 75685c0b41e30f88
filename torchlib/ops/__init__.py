"""The function library, one module per family of ops. Importing this package fills the registry."""

from torchlib.ops import elementwise  # noqa: F401
from torchlib.ops import rnn  # noqa: F401
