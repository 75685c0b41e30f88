"""Expectations for torchlib/ops/conv_pool.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate, call

from . import _helpers as h

ENTRIES = [
    Entry('aten__adaptive_avg_pool2d', opinfo=['nn.functional.adaptive_avg_pool2d']),  # _adaptive_avg_pool2d
    Entry('aten__adaptive_avg_pool3d', opinfo=['nn.functional.adaptive_avg_pool3d'], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
        TorchLessAccurate(dtypes=[torch.bfloat16], samples=[1, 6]),
        TorchLessAccurate(dtypes=[torch.float16], samples=[1, 6, 7, 10, 11]),
    ]),  # _adaptive_avg_pool3d
    Entry('aten__convolution', opinfo=['nn.functional.conv1d', 'nn.functional.conv2d', 'nn.functional.conv_transpose2d'], aten=['aten::convolution'], adapter=lambda c: call(*c.args, False, False, True, True), xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16], samples=[*range(0, 12)], opinfo='nn.functional.conv_transpose2d'),
        TorchLessAccurate(dtypes=[torch.float16], samples=[*range(0, 12)], opinfo='nn.functional.conv_transpose2d'),
    ]),
    Entry('aten__convolution_deprecated', opinfo=['nn.functional.conv1d', 'nn.functional.conv2d', 'nn.functional.conv_transpose2d'], route='aten', aten=['aten::convolution'], adapter=lambda c: call(*c.args, False, False, True), xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16], samples=[*range(0, 12)], opinfo='nn.functional.conv_transpose2d'),
        TorchLessAccurate(dtypes=[torch.float16], samples=[*range(0, 12)], opinfo='nn.functional.conv_transpose2d'),
    ]),
    Entry('aten__convolution_mode', opinfo=['nn.functional.conv1d', 'nn.functional.conv2d', 'nn.functional.conv3d'], aten=['aten::conv1d.padding', 'aten::conv2d.padding', 'aten::conv3d.padding'], adapter=h.conv_padding_mode, xfail=[
        TorchLessAccurate(dtypes=[torch.float32], samples=[12, 13], opinfo='nn.functional.conv3d'),
    ]),
    Entry('aten_adaptive_avg_pool1d', opinfo=['nn.functional.adaptive_avg_pool1d']),  # adaptive_avg_pool1d (CompositeImplicit)
    Entry('aten_adaptive_avg_pool2d', opinfo=['nn.functional.adaptive_avg_pool2d']),  # adaptive_avg_pool2d (CompositeImplicit)
    Entry('aten_adaptive_avg_pool3d', opinfo=['nn.functional.adaptive_avg_pool3d'], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
        TorchLessAccurate(dtypes=[torch.bfloat16], samples=[1, 6]),
        TorchLessAccurate(dtypes=[torch.float16], samples=[1, 6, 7, 10, 11]),
    ]),  # adaptive_avg_pool3d (CompositeImplicit)
    Entry('aten_adaptive_max_pool1d', opinfo=['nn.functional.adaptive_max_pool1d']),  # adaptive_max_pool1d (CompositeImplicit)
    Entry('aten_adaptive_max_pool2d', opinfo=['nn.functional.adaptive_max_pool2d']),  # adaptive_max_pool2d
    Entry('aten_adaptive_max_pool3d', opinfo=['nn.functional.adaptive_max_pool3d']),  # adaptive_max_pool3d
    Entry('aten_avg_pool1d', opinfo=['nn.functional.avg_pool1d']),  # avg_pool1d (CompositeImplicit)
    Entry('aten_avg_pool2d', opinfo=['nn.functional.avg_pool2d']),  # avg_pool2d
    Entry('aten_avg_pool3d', opinfo=['nn.functional.avg_pool3d']),  # avg_pool3d
    Entry('aten_conv1d', opinfo=['nn.functional.conv1d']),  # conv1d (CompositeImplicit)
    Entry('aten_conv1d_padding', opinfo=['nn.functional.conv1d']),  # conv1d.padding (CompositeImplicit)
    Entry('aten_conv2d', opinfo=['nn.functional.conv2d']),  # conv2d (CompositeImplicit)
    Entry('aten_conv2d_padding', opinfo=['nn.functional.conv2d']),  # conv2d.padding (CompositeImplicit)
    Entry('aten_conv3d', opinfo=['nn.functional.conv3d']),  # conv3d (CompositeImplicit)
    Entry('aten_conv3d_padding', opinfo=['nn.functional.conv3d'], xfail=[
        TorchLessAccurate(dtypes=[torch.float32], samples=[12, 13]),
    ]),  # conv3d.padding (CompositeImplicit)
    Entry('aten_conv_transpose1d', opinfo=['nn.functional.conv_transpose1d'], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16]),
        TorchLessAccurate(dtypes=[torch.bfloat16], samples=[0, 1, 8, 9]),
        TorchLessAccurate(dtypes=[torch.float16], samples=[8, 9]),
    ]),  # conv_transpose1d (CompositeImplicit)
    Entry('aten_conv_transpose2d', opinfo=['nn.functional.conv_transpose2d'], xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),
        TorchLessAccurate(dtypes=[torch.bfloat16]),
    ]),  # conv_transpose2d.input (CompositeImplicit)
    Entry('aten_conv_transpose3d', opinfo=['nn.functional.conv_transpose3d'], xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),
        TorchLessAccurate(dtypes=[torch.bfloat16]),
    ]),  # conv_transpose3d.input (CompositeImplicit)
    Entry('aten_convolution', opinfo=['nn.functional.conv2d', 'nn.functional.conv3d'], xfail=[
        TorchLessAccurate(dtypes=[torch.float32], samples=[12, 13], opinfo='nn.functional.conv3d'),
    ]),  # convolution
    Entry('aten_max_pool1d', opinfo=['nn.functional.max_pool1d']),  # max_pool1d (CompositeImplicit)
    Entry('aten_max_pool1d_with_indices', opinfo=['nn.functional.max_pool1d']),
    Entry('aten_max_pool2d', opinfo=['nn.functional.max_pool2d']),  # max_pool2d (CompositeImplicit)
    Entry('aten_max_pool2d_with_indices', opinfo=['nn.functional.max_pool2d', 'nn.functional.max_pool1d']),  # max_pool2d_with_indices
    Entry('aten_max_pool3d', opinfo=['nn.functional.max_pool3d']),  # max_pool3d (CompositeImplicit)
    Entry('aten_max_pool3d_with_indices', opinfo=['nn.functional.max_pool3d']),  # max_pool3d_with_indices
]
