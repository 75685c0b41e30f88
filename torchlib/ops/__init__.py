"""The function library, one module per family of ops. Importing this package fills the registry."""

from torchlib.ops import elementwise  # noqa: F401
from torchlib.ops import rnn  # noqa: F401
from torchlib.ops import conv_pool  # noqa: F401
from torchlib.ops import reductions  # noqa: F401
from torchlib.ops import linalg  # noqa: F401
from torchlib.ops import sort_topk  # noqa: F401
from torchlib.ops import normalization  # noqa: F401
from torchlib.ops import activations  # noqa: F401
from torchlib.ops import comparison  # noqa: F401
from torchlib.ops import casting  # noqa: F401
from torchlib.ops import creation  # noqa: F401
from torchlib.ops import shape  # noqa: F401
from torchlib.ops import indexing  # noqa: F401
from torchlib.ops import symbolic  # noqa: F401
from torchlib.ops import upsample  # noqa: F401
from torchlib.ops import attention  # noqa: F401
from torchlib.ops import dropout  # noqa: F401
from torchlib.ops import losses  # noqa: F401
from torchlib.ops import nn_extra  # noqa: F401
from torchlib.ops import special  # noqa: F401
from torchlib.ops import tensor_extra  # noqa: F401
from torchlib.ops import scans  # noqa: F401
from torchlib.ops import random  # noqa: F401
from torchlib.ops import unique  # noqa: F401
from torchlib.ops import distance  # noqa: F401
from torchlib.ops import tensor_meta  # noqa: F401
