"""The OpInfo expectations table: one Entry per registered function (see
torchlib/conformance/spec.py for the vocabulary), one module per torchlib/ops family."""

from __future__ import annotations

from . import activations, attention, casting, comparison, conv_pool, creation, dropout, elementwise, indexing, linalg, normalization, reductions, rnn, shape, sort_topk, special, symbolic, upsample
from . import scans, tensor_extra  # noqa: E402
from . import losses, nn_extra, random  # noqa: E402
from . import control_flow, quantized  # noqa: E402
from . import complex, fft  # noqa: E402
from . import effects, linalg_decompositions  # noqa: E402
from . import unique  # noqa: E402
from . import distance  # noqa: E402
from . import tensor_meta  # noqa: E402
from . import histogram  # noqa: E402
from . import backward  # noqa: E402
from . import view_copy  # noqa: E402
from . import batch_sums  # noqa: E402
from . import scatter_extra  # noqa: E402
from . import segments  # noqa: E402
from . import fractional_pool  # noqa: E402
from . import aliases, linalg_composites, shape_aliases, windows  # noqa: E402
from . import embedding_bag  # noqa: E402
from . import torchvision  # noqa: E402

ENTRIES = [
    *activations.ENTRIES,
    *attention.ENTRIES,
    *casting.ENTRIES,
    *comparison.ENTRIES,
    *conv_pool.ENTRIES,
    *creation.ENTRIES,
    *dropout.ENTRIES,
    *elementwise.ENTRIES,
    *indexing.ENTRIES,
    *linalg.ENTRIES,
    *linalg_decompositions.ENTRIES,
    *effects.ENTRIES,
    *normalization.ENTRIES,
    *reductions.ENTRIES,
    *rnn.ENTRIES,
    *shape.ENTRIES,
    *sort_topk.ENTRIES,
    *special.ENTRIES,
    *symbolic.ENTRIES,
    *upsample.ENTRIES,
    *scans.ENTRIES,
    *tensor_extra.ENTRIES,
    *losses.ENTRIES,
    *nn_extra.ENTRIES,
    *random.ENTRIES,
    *control_flow.ENTRIES,
    *quantized.ENTRIES,
    *complex.ENTRIES,
    *fft.ENTRIES,
    *unique.ENTRIES,
    *distance.ENTRIES,
    *tensor_meta.ENTRIES,
    *histogram.ENTRIES,
    *backward.ENTRIES,
    *view_copy.ENTRIES,
    *batch_sums.ENTRIES,
    *scatter_extra.ENTRIES,
    *segments.ENTRIES,
    *fractional_pool.ENTRIES,
    *aliases.ENTRIES,
    *shape_aliases.ENTRIES,
    *linalg_composites.ENTRIES,
    *windows.ENTRIES,
    *embedding_bag.ENTRIES,
    *torchvision.ENTRIES,
]
