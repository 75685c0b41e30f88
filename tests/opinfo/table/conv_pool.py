"""Expectations for torchlib/ops/conv_pool.py."""

from __future__ import annotations

import math
import operator

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

from . import _helpers as h
from ._helpers import scalar_arg

ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]

ENTRIES = [
    Entry('aten__adaptive_avg_pool2d', opinfo=['nn.functional.adaptive_avg_pool2d']),  # _adaptive_avg_pool2d
    Entry('aten__adaptive_avg_pool3d', opinfo=['nn.functional.adaptive_avg_pool3d']),  # _adaptive_avg_pool3d
    Entry('aten__convolution', opinfo=['nn.functional.conv1d', 'nn.functional.conv2d', 'nn.functional.conv_transpose2d'], aten=['aten::convolution'], adapter=lambda c: call(*c.args, False, False, True, True)),
    Entry('aten__convolution_deprecated', opinfo=['nn.functional.conv1d', 'nn.functional.conv2d', 'nn.functional.conv_transpose2d'], aten=['aten::convolution'], adapter=lambda c: call(*c.args, False, False, True)),
    Entry('aten__convolution_mode', reason='no OpInfo sample reaches it (conv*d with a padding string is captured as conv*d.padding); tests/ops/test_conv_pool.py checks it'),
    Entry('aten_adaptive_avg_pool1d', opinfo=['nn.functional.adaptive_avg_pool1d']),  # adaptive_avg_pool1d (CompositeImplicit)
    Entry('aten_adaptive_avg_pool2d', opinfo=['nn.functional.adaptive_avg_pool2d']),  # adaptive_avg_pool2d (CompositeImplicit)
    Entry('aten_adaptive_avg_pool3d', opinfo=['nn.functional.adaptive_avg_pool3d']),  # adaptive_avg_pool3d (CompositeImplicit)
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
    Entry('aten_conv3d_padding', opinfo=['nn.functional.conv3d']),  # conv3d.padding (CompositeImplicit)
    Entry('aten_conv_transpose1d', opinfo=['nn.functional.conv_transpose1d']),  # conv_transpose1d (CompositeImplicit)
    Entry('aten_conv_transpose2d', opinfo=['nn.functional.conv_transpose2d']),  # conv_transpose2d.input (CompositeImplicit)
    Entry('aten_conv_transpose3d', opinfo=['nn.functional.conv_transpose3d']),  # conv_transpose3d.input (CompositeImplicit)
    Entry('aten_convolution', opinfo=['nn.functional.conv2d', 'nn.functional.conv3d']),  # convolution
    Entry('aten_max_pool1d', opinfo=['nn.functional.max_pool1d']),  # max_pool1d (CompositeImplicit)
    Entry('aten_max_pool1d_with_indices', opinfo=['nn.functional.max_pool1d']),
    Entry('aten_max_pool2d', opinfo=['nn.functional.max_pool2d']),  # max_pool2d (CompositeImplicit)
    Entry('aten_max_pool2d_with_indices', opinfo=['nn.functional.max_pool2d', 'nn.functional.max_pool1d']),  # max_pool2d_with_indices
    Entry('aten_max_pool3d', opinfo=['nn.functional.max_pool3d']),  # max_pool3d (CompositeImplicit)
    Entry('aten_max_pool3d_with_indices', opinfo=['nn.functional.max_pool3d']),  # max_pool3d_with_indices
]
