"""Expectations for torchlib/ops/shape_aliases.py."""

from __future__ import annotations

from torchlib.conformance.spec import Entry, XFail

from . import shape
from .aliases import alias

ENTRIES = [
    alias('aten_concat', 'aten_cat', shape.ENTRIES),
    alias('aten_concatenate', 'aten_cat', shape.ENTRIES),
    alias('aten_swapdims', 'aten_transpose', shape.ENTRIES),
    alias('aten_moveaxis', 'aten_movedim', shape.ENTRIES),
    alias('aten_moveaxis_intlist', 'aten_movedim_intlist', shape.ENTRIES),
    Entry('aten_atleast_1d', opinfo=['atleast_1d']),
    Entry('aten_atleast_1d_sequence', opinfo=['atleast_1d']),
    Entry('aten_atleast_2d', opinfo=['atleast_2d']),
    Entry('aten_atleast_2d_sequence', opinfo=['atleast_2d']),
    Entry('aten_atleast_3d', opinfo=['atleast_3d']),
    Entry('aten_atleast_3d_sequence', opinfo=['atleast_3d']),
    Entry('aten_hstack', opinfo=['hstack']),
    Entry('aten_vstack', opinfo=['vstack']),
    Entry('aten_row_stack', opinfo=['vstack'], aten=['aten::vstack']),
    Entry('aten_dstack', opinfo=['dstack']),
    Entry('aten_column_stack', opinfo=['column_stack']),
    Entry('aten_mT', opinfo=['mT']),
    Entry('aten_mH', opinfo=['mH']),
    Entry('aten_adjoint', opinfo=['mH'], aten=['aten::mH']),
    Entry('aten_matrix_H', opinfo=['H']),
    Entry('aten_numpy_T', opinfo=['T']),
    Entry('aten_ravel', opinfo=['ravel']),
    Entry('aten_reshape_as', opinfo=['reshape_as']),
    Entry('aten_flipud', opinfo=['flipud']),
    Entry('aten_fliplr', opinfo=['fliplr']),
    Entry('aten_broadcast_to', opinfo=['broadcast_to']),
    Entry('aten_broadcast_tensors', opinfo=['broadcast_tensors']),
    Entry('aten_tensor_split_sections', opinfo=['tensor_split']),
    Entry('aten_tensor_split_indices', opinfo=['tensor_split']),
    Entry('aten_tensor_split_tensor', opinfo=['tensor_split'], xfail=[
        XFail("traced, the indices tensor is a graph input: the number of outputs would depend on its data (the function "
              "needs it constant, as torch.export records it; it raises saying so)", mode='traced')]),
    Entry('aten_hsplit', opinfo=['hsplit']),
    Entry('aten_hsplit_array', opinfo=['hsplit']),
    Entry('aten_vsplit', opinfo=['vsplit']),
    Entry('aten_vsplit_array', opinfo=['vsplit']),
    Entry('aten_dsplit', opinfo=['dsplit']),
    Entry('aten_dsplit_array', opinfo=['dsplit']),
    Entry('aten_unsafe_chunk', opinfo=['unsafe_chunk']),
    Entry('aten_fft_fftshift', opinfo=['fft.fftshift']),
    Entry('aten_fft_ifftshift', opinfo=['fft.ifftshift']),
    Entry('aten_diagflat', opinfo=['diagflat']),
    Entry('aten_sum_to_size', opinfo=['sum_to_size']),
]
