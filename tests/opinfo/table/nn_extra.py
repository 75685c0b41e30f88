"""Expectations for torchlib/ops/nn_extra.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

ENTRIES = [
    Entry('aten__cdist_forward', opinfo=['cdist']),
    Entry('aten__prelu_kernel', opinfo=['nn.functional.prelu']),
    Entry('aten_channel_shuffle', opinfo=['nn.functional.channel_shuffle']),
    Entry('aten_cosine_similarity', opinfo=['nn.functional.cosine_similarity']),  # CompositeImplicit
    Entry('aten_grid_sampler_2d', opinfo=['grid_sampler_2d', 'nn.functional.grid_sample']),
    Entry('aten_native_channel_shuffle', opinfo=['nn.functional.channel_shuffle']),  # CompositeImplicit
    Entry('aten_pairwise_distance', opinfo=['nn.functional.pairwise_distance']),  # CompositeImplicit
    Entry('aten_pixel_shuffle', opinfo=['nn.functional.pixel_shuffle']),
    Entry('aten_pixel_unshuffle', opinfo=['nn.functional.pixel_unshuffle']),
    Entry('aten_prelu', opinfo=['nn.functional.prelu']),  # CompositeImplicit
    Entry('aten_reflection_pad1d', opinfo=['nn.functional.pad.reflect']),
    Entry('aten_reflection_pad2d', opinfo=['nn.functional.pad.reflect']),
    Entry('aten_reflection_pad3d', opinfo=['nn.functional.pad.reflect']),
    Entry('aten_replication_pad1d', opinfo=['nn.functional.pad.replicate', 'nn.functional.pad.replicate_negative']),
    Entry('aten_replication_pad2d', opinfo=['nn.functional.pad.replicate', 'nn.functional.pad.replicate_negative']),
    Entry('aten_replication_pad3d', opinfo=['nn.functional.pad.replicate', 'nn.functional.pad.replicate_negative']),
    Entry('aten_rrelu', opinfo=['nn.functional.rrelu']),  # CompositeImplicit
]
