"""Expectations for torchlib/ops/conv_pool.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten__adaptive_avg_pool2d', opinfo=['nn.functional.adaptive_avg_pool2d']),  # aten::_adaptive_avg_pool2d; candidates ['nn.functional.adaptive_avg_pool2d']
    Entry('aten__adaptive_avg_pool3d', opinfo=['nn.functional.adaptive_avg_pool3d']),  # aten::_adaptive_avg_pool3d; candidates ['nn.functional.adaptive_avg_pool3d']
    Entry('aten__convolution', reason='TODO'),  # aten::_convolution
    Entry('aten__convolution_deprecated', reason='TODO'),  # aten::_convolution.deprecated
    Entry('aten_adaptive_avg_pool1d', opinfo=['nn.functional.adaptive_avg_pool1d']),  # aten::adaptive_avg_pool1d; candidates ['nn.functional.adaptive_avg_pool1d']
    Entry('aten_adaptive_avg_pool2d', opinfo=['nn.functional.adaptive_avg_pool2d']),  # aten::adaptive_avg_pool2d; candidates ['nn.functional.adaptive_avg_pool2d']
    Entry('aten_adaptive_avg_pool3d', opinfo=['nn.functional.adaptive_avg_pool3d']),  # aten::adaptive_avg_pool3d; candidates ['nn.functional.adaptive_avg_pool3d']
    Entry('aten_adaptive_max_pool1d', opinfo=['nn.functional.adaptive_max_pool1d']),  # aten::adaptive_max_pool1d; candidates ['nn.functional.adaptive_max_pool1d']
    Entry('aten_adaptive_max_pool2d', opinfo=['nn.functional.adaptive_max_pool2d']),  # aten::adaptive_max_pool2d; candidates ['nn.functional.adaptive_max_pool2d']
    Entry('aten_adaptive_max_pool3d', opinfo=['nn.functional.adaptive_max_pool3d']),  # aten::adaptive_max_pool3d; candidates ['nn.functional.adaptive_max_pool3d']
    Entry('aten_avg_pool1d', opinfo=['nn.functional.avg_pool1d']),  # aten::avg_pool1d; candidates ['nn.functional.avg_pool1d']
    Entry('aten_avg_pool2d', opinfo=['nn.functional.avg_pool2d']),  # aten::avg_pool2d; candidates ['nn.functional.avg_pool2d']
    Entry('aten_avg_pool3d', opinfo=['nn.functional.avg_pool3d']),  # aten::avg_pool3d; candidates ['nn.functional.avg_pool3d']
    Entry('aten_conv1d', opinfo=['nn.functional.conv1d']),  # aten::conv1d; candidates ['nn.functional.conv1d']
    Entry('aten_conv1d_padding', opinfo=['nn.functional.conv1d']),  # aten::conv1d.padding; candidates ['nn.functional.conv1d']
    Entry('aten_conv2d', opinfo=['nn.functional.conv2d']),  # aten::conv2d; candidates ['nn.functional.conv2d']
    Entry('aten_conv2d_padding', opinfo=['nn.functional.conv2d']),  # aten::conv2d.padding; candidates ['nn.functional.conv2d']
    Entry('aten_conv3d', opinfo=['nn.functional.conv3d']),  # aten::conv3d; candidates ['nn.functional.conv3d']
    Entry('aten_conv3d_padding', opinfo=['nn.functional.conv3d']),  # aten::conv3d.padding; candidates ['nn.functional.conv3d']
    Entry('aten_conv_transpose1d', opinfo=['nn.functional.conv_transpose1d']),  # aten::conv_transpose1d; candidates ['nn.functional.conv_transpose1d']
    Entry('aten_conv_transpose2d', opinfo=['nn.functional.conv_transpose2d']),  # aten::conv_transpose2d.input; candidates ['nn.functional.conv_transpose2d']
    Entry('aten_conv_transpose3d', opinfo=['nn.functional.conv_transpose3d']),  # aten::conv_transpose3d.input; candidates ['nn.functional.conv_transpose3d']
    Entry('aten_convolution', reason='TODO'),  # aten::convolution
    Entry('aten_max_pool1d', opinfo=['nn.functional.max_pool1d']),  # aten::max_pool1d; candidates ['nn.functional.max_pool1d']
    Entry('aten_max_pool1d_with_indices', reason='TODO'),  # aten::max_pool1d_with_indices
    Entry('aten_max_pool2d', opinfo=['nn.functional.max_pool2d']),  # aten::max_pool2d; candidates ['nn.functional.max_pool2d']
    Entry('aten_max_pool2d_with_indices', reason='TODO'),  # aten::max_pool2d_with_indices
    Entry('aten_max_pool3d', opinfo=['nn.functional.max_pool3d']),  # aten::max_pool3d; candidates ['nn.functional.max_pool3d']
    Entry('aten_max_pool3d_with_indices', reason='TODO'),  # aten::max_pool3d_with_indices
]
