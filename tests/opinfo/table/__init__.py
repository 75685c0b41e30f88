"""The OpInfo expectations table: one Entry per registered function (see
torchlib/conformance/spec.py for the vocabulary), one module per torchlib/ops family."""

from __future__ import annotations

from . import (  # noqa: E402  # noqa: E402  # noqa: E402  # noqa: E402  # noqa: E402  # noqa: E402
    activations,
    aliases,
    attention,
    backward,  # noqa: E402
    batch_sums,  # noqa: E402
    casting,
    comparison,
    complex,
    control_flow,
    conv_pool,
    creation,
    distance,  # noqa: E402
    dropout,
    effects,
    elementwise,
    embedding_bag,  # noqa: E402
    fft,
    fractional_pool,  # noqa: E402
    histogram,  # noqa: E402
    indexing,
    linalg,
    linalg_composites,
    linalg_decompositions,
    losses,
    nn_extra,
    normalization,
    quantized,
    random,
    reductions,
    rnn,
    scans,
    scatter_extra,  # noqa: E402
    segments,  # noqa: E402
    shape,
    shape_aliases,
    sort_topk,
    special,
    symbolic,
    tensor_extra,
    tensor_meta,  # noqa: E402
    torchvision,  # noqa: E402
    transformers_ops,  # noqa: E402
    unique,  # noqa: E402
    upsample,
    view_copy,  # noqa: E402
    windows,
)

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
    *transformers_ops.ENTRIES,
]
