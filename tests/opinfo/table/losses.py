"""Expectations for torchlib/ops/losses.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

ENTRIES = [
    Entry('aten_binary_cross_entropy', opinfo=['nn.functional.binary_cross_entropy']),
    Entry('aten_binary_cross_entropy_with_logits', opinfo=['nn.functional.binary_cross_entropy_with_logits']),
    Entry('aten_hinge_embedding_loss', opinfo=['nn.functional.hinge_embedding_loss']),  # CompositeImplicit
    Entry('aten_huber_loss', opinfo=['nn.functional.huber_loss']),
    Entry('aten_kl_div', opinfo=['nn.functional.kl_div']),  # CompositeImplicit
    Entry('aten_l1_loss', opinfo=['nn.functional.l1_loss']),  # CompositeImplicit
    Entry('aten_margin_ranking_loss', opinfo=['nn.functional.margin_ranking_loss']),  # CompositeImplicit
    Entry('aten_mse_loss', opinfo=['nn.functional.mse_loss']),
    Entry('aten_nll_loss2d_forward', opinfo=['nn.functional.nll_loss', 'nn.functional.cross_entropy']),
    Entry('aten_nll_loss_forward', opinfo=['nn.functional.nll_loss', 'nn.functional.cross_entropy']),
    Entry('aten_smooth_l1_loss', opinfo=['nn.functional.smooth_l1_loss']),
    Entry('aten_soft_margin_loss', opinfo=['nn.functional.soft_margin_loss']),
]
