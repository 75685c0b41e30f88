"""Expectations for torchlib/ops/nn_extra.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate, XFail

from . import _own_samples as own

_HALF = ("torch's half-precision kernel computes the sampling coordinates and weights in {}; this computes in float32 "
         "(bilinear and bicubic values differ beyond the tolerance, nearest picks a neighbouring pixel)")

ENTRIES = [
    Entry('aten__cdist_forward', opinfo=['cdist']),
    Entry('aten__prelu_kernel', opinfo=['nn.functional.prelu']),
    Entry('aten_bilinear', opinfo=['nn.functional.bilinear'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # bilinear (CompositeImplicit); torch's _trilinear rounds its half intermediate products (input1 x weight) to the dtype, we round once
    Entry('aten_channel_shuffle', opinfo=['nn.functional.channel_shuffle']),
    Entry('aten_cosine_similarity', opinfo=['nn.functional.cosine_similarity'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # CompositeImplicit
    Entry('aten_grid_sampler', opinfo=['nn.functional.grid_sample'], xfail=[  # torch's dispatch by rank to the two below
        TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16]),  # as grid_sampler_3d's: torch samples in half precision
    ]),
    Entry('aten_grid_sampler_2d', opinfo=['grid_sampler_2d', 'nn.functional.grid_sample'], xfail=[
        XFail(_HALF.format('float16'), dtypes=[torch.float16], opinfo='grid_sampler_2d', samples=[0, 1, 2, 3, 4, 5, 10, 12, 13, 14, 15, 16, 17]),
        XFail(_HALF.format('float16'), dtypes=[torch.float16], opinfo='nn.functional.grid_sample', samples=[0, 1, 2, 3, 4, 5, 12, 13, 14, 15, 16, 17]),
        XFail(_HALF.format('bfloat16'), dtypes=[torch.bfloat16], opinfo='grid_sampler_2d'),
        XFail(_HALF.format('bfloat16'), dtypes=[torch.bfloat16], opinfo='nn.functional.grid_sample', samples=[0, 1, 2, 3, 4, 5, 7, 9, 11, 12, 13, 14, 15, 16, 17]),
    ]),
    Entry('aten_grid_sampler_3d', opinfo=['grid_sampler_3d', 'nn.functional.grid_sample'], xfail=[
        TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16]),  # torch computes the sampling coordinates and weights in half precision, we in float32
    ]),
    Entry('aten_instance_norm', opinfo=['nn.functional.instance_norm'], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
        XFail("torch runs instance_norm as batch_norm on a reshaped input, rounding intermediates to the half dtype; one element differs by 1.5e-3 from this float32 computation", dtypes=[torch.float16], samples=[0, 1]),
        XFail("torch runs instance_norm as batch_norm on a reshaped input, rounding intermediates to the half dtype; one element differs by 2.4e-2 from this float32 computation", dtypes=[torch.bfloat16], samples=[4, 5]),
    ]),  # CompositeImplicit
    Entry('aten_native_channel_shuffle', samples=own.native_channel_shuffle, dtypes=own.ALL),  # F.channel_shuffle records aten::channel_shuffle, so no OpInfo sample calls it
    Entry('aten_pairwise_distance', opinfo=['nn.functional.pairwise_distance']),  # CompositeImplicit
    Entry('aten_pixel_shuffle', opinfo=['nn.functional.pixel_shuffle']),
    Entry('aten_pixel_unshuffle', opinfo=['nn.functional.pixel_unshuffle']),
    Entry('aten_prelu', opinfo=['nn.functional.prelu']),  # CompositeImplicit
    Entry('aten_reflection_pad1d', opinfo=[('nn.functional.pad', 'reflect')]),
    Entry('aten_reflection_pad2d', opinfo=[('nn.functional.pad', 'reflect')]),
    Entry('aten_reflection_pad3d', opinfo=[('nn.functional.pad', 'reflect')]),
    Entry('aten_replication_pad1d', opinfo=[('nn.functional.pad', 'replicate'), ('nn.functional.pad', 'replicate_negative')]),
    Entry('aten_replication_pad2d', opinfo=[('nn.functional.pad', 'replicate'), ('nn.functional.pad', 'replicate_negative')]),
    Entry('aten_replication_pad3d', opinfo=[('nn.functional.pad', 'replicate'), ('nn.functional.pad', 'replicate_negative')]),
    Entry('aten_rrelu', opinfo=['nn.functional.rrelu'], xfail=[
        XFail('ValueError: aten::rrelu in training mode (random slopes) is not exported; export in eval mode', when=lambda s: s.kwargs.get('training', False)),
    ]),  # CompositeImplicit
]
