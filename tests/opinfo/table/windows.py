"""Expectations for torchlib/ops/windows.py: samples of their own (the OpInfos
signal.windows.* run torch's Python windows, not these factories)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate, sample_input

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
LENGTHS = (0, 1, 2, 5, 16)


def _windows(*extra: Any) -> Callable[[torch.dtype], Iterator[Any]]:
    """Each window_length of LENGTHS; with `extra` ('periodic', then alpha, beta...), each
    with periodic True and False followed by the rest of extra."""

    def samples(dtype: torch.dtype) -> Iterator[Any]:
        for n in LENGTHS:
            if not extra:
                yield sample_input(n, dtype=dtype)
                continue
            for periodic in (True, False):
                yield sample_input(n, periodic, *extra[1:], dtype=dtype)

    return samples


def _frequencies(dtype: torch.dtype) -> Iterator[Any]:
    for n, d in ((1, 1.0), (4, 1.0), (5, 0.3), (16, 2.5)):
        yield sample_input(n, d, dtype=dtype)


# torch builds its float16/bfloat16 windows one rounded in-place op at a time (arange, mul_, cos_,
# add_); we compute in float32 and round once. Measured against torch's float64 window, torch's
# float16 hann(16) is 1.6e-3 off and ours 6.5e-5, bfloat16 hamming(16, periodic=False) 1.0e-2 and
# ours 1.9e-3: the arbiter checks every differing sample.
_HALF = TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16])


ENTRIES = [
    Entry('aten_hann_window', samples=_windows(), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_hann_window_periodic', samples=_windows('periodic'), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_hamming_window', samples=_windows(), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_hamming_window_periodic', samples=_windows('periodic'), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_hamming_window_periodic_alpha', samples=_windows('periodic', 0.6), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_hamming_window_periodic_alpha_beta', samples=_windows('periodic', 0.6, 0.3), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_blackman_window', samples=_windows(), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_blackman_window_periodic', samples=_windows('periodic'), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_bartlett_window', samples=_windows(), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_bartlett_window_periodic', samples=_windows('periodic'), dtypes=FLOATS, xfail=[_HALF]),
    Entry('aten_fft_fftfreq', samples=_frequencies, dtypes=FLOATS),
    Entry('aten_fft_rfftfreq', samples=_frequencies, dtypes=FLOATS),
]
