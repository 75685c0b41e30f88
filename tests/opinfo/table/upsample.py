"""Expectations for torchlib/ops/upsample.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

ENTRIES = [
    Entry('aten__upsample_bicubic2d_aa', reason='no OpInfo reaches it: op_db has antialiased samples only for bilinear (_upsample_bilinear2d_aa)'),
    Entry('aten__upsample_bicubic2d_aa_vec', reason='no OpInfo reaches it: op_db has antialiased samples only for bilinear (_upsample_bilinear2d_aa)'),
    Entry('aten__upsample_bilinear2d_aa', opinfo=['_upsample_bilinear2d_aa'], xfail=[
        XFail("both compute in float32, in another order; against a float64 reference of the same inputs (|y| up to 8.63) torch's greatest error is 2.09e-05, this function's 9.01e-07: float32 rounding either way, 2.12e-05 apart", dtypes=[torch.float32], samples=[2]),
    ]),  # _upsample_bilinear2d_aa
    Entry('aten__upsample_bilinear2d_aa_vec', opinfo=['_upsample_bilinear2d_aa'], xfail=[
        XFail("both compute in float32, in another order; against a float64 reference of the same inputs (|y| up to 8.63) torch's greatest error is 2.09e-05, this function's 9.01e-07: float32 rounding either way, 2.12e-05 apart", dtypes=[torch.float32], samples=[2]),
    ]),  # _upsample_bilinear2d_aa.vec (CompositeImplicit)
    Entry('aten__upsample_nearest_exact1d', opinfo=[('nn.functional.interpolate', 'nearest-exact')]),  # _upsample_nearest_exact1d
    Entry('aten__upsample_nearest_exact1d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten__upsample_nearest_exact2d', opinfo=[('nn.functional.interpolate', 'nearest-exact')]),  # _upsample_nearest_exact2d
    Entry('aten__upsample_nearest_exact2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten__upsample_nearest_exact3d', opinfo=[('nn.functional.interpolate', 'nearest-exact')]),  # _upsample_nearest_exact3d
    Entry('aten__upsample_nearest_exact3d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_bicubic2d', opinfo=[('nn.functional.interpolate', 'bicubic')], xfail=[
        XFail("torch rounds intermediate results to bfloat16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 9.35) torch's greatest error is 0.0569, this function's 0.0245 (0.0625 apart)", dtypes=[torch.bfloat16], samples=[4, 6]),
        XFail("torch rounds intermediate results to float16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 10.4) torch's greatest error is 0.00503, this function's 0.0038 (0.00781 apart)", dtypes=[torch.float16], samples=[3, 4, 6, 12, 20]),
        XFail("both compute in float32, in another order; against a float64 reference of the same inputs (|y| up to 10.4) torch's greatest error is 7.42e-06, this function's 1.2e-05: float32 rounding either way, 1.12e-05 apart", dtypes=[torch.float32], samples=[12, 20]),
    ]),  # upsample_bicubic2d
    Entry('aten_upsample_bicubic2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest'], xfail=[
        XFail("torch rounds intermediate results to bfloat16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 9.35) torch's greatest error is 0.0569, this function's 0.0245 (0.0625 apart)", dtypes=[torch.bfloat16], samples=[4, 6]),
        XFail("torch rounds intermediate results to float16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 10.4) torch's greatest error is 0.00503, this function's 0.0038 (0.00781 apart)", dtypes=[torch.float16], samples=[3, 4, 6, 12, 20]),
        XFail("both compute in float32, in another order; against a float64 reference of the same inputs (|y| up to 10.4) torch's greatest error is 7.42e-06, this function's 1.2e-05: float32 rounding either way, 1.12e-05 apart", dtypes=[torch.float32], samples=[12, 20]),
    ]),
    Entry('aten_upsample_bilinear2d', opinfo=[('nn.functional.interpolate', 'bilinear'), 'nn.functional.upsample_bilinear']),  # upsample_bilinear2d
    Entry('aten_upsample_bilinear2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_linear1d', opinfo=[('nn.functional.interpolate', 'linear')], xfail=[
        XFail("torch rounds intermediate results to float16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 8.48) torch's greatest error is 0.00288, this function's 0.0019 (0.00391 apart)", dtypes=[torch.float16], samples=[7, 8, 13, 14]),
    ]),  # upsample_linear1d
    Entry('aten_upsample_linear1d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest'], xfail=[
        XFail("torch rounds intermediate results to float16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 8.48) torch's greatest error is 0.00288, this function's 0.0019 (0.00391 apart)", dtypes=[torch.float16], samples=[7, 8, 13, 14]),
    ]),
    Entry('aten_upsample_nearest1d', opinfo=[('nn.functional.interpolate', 'nearest'), 'nn.functional.upsample_nearest']),  # upsample_nearest1d
    Entry('aten_upsample_nearest1d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_nearest2d', opinfo=[('nn.functional.interpolate', 'nearest'), 'nn.functional.upsample_nearest']),  # upsample_nearest2d
    Entry('aten_upsample_nearest2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_nearest3d', opinfo=[('nn.functional.interpolate', 'nearest'), 'nn.functional.upsample_nearest']),  # upsample_nearest3d
    Entry('aten_upsample_nearest3d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_trilinear3d', opinfo=[('nn.functional.interpolate', 'trilinear')], xfail=[
        XFail("torch rounds intermediate results to bfloat16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 9) torch's greatest error is 0.0573, this function's 0.0312 (0.0625 apart)", dtypes=[torch.bfloat16], samples=[3, 4, 6, 9, 12, 14, 17, 20, 22]),
        XFail("torch rounds intermediate results to float16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 8.99) torch's greatest error is 0.00586, this function's 0.00391 (0.00781 apart)", dtypes=[torch.float16], samples=[3, 4, 6, 9, 11, 12, 14, 17, 19, 20, 22]),
    ]),  # upsample_trilinear3d
    Entry('aten_upsample_trilinear3d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest'], xfail=[
        XFail("torch rounds intermediate results to bfloat16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 9) torch's greatest error is 0.0573, this function's 0.0312 (0.0625 apart)", dtypes=[torch.bfloat16], samples=[3, 4, 6, 9, 12, 14, 17, 20, 22]),
        XFail("torch rounds intermediate results to float16 where this computes in float32 and rounds once: against a float64 reference of the same inputs (|y| up to 8.99) torch's greatest error is 0.00586, this function's 0.00391 (0.00781 apart)", dtypes=[torch.float16], samples=[3, 4, 6, 9, 11, 12, 14, 17, 19, 20, 22]),
    ]),
]
