"""Expectations for torchlib/ops/windows.py: samples of their own (the OpInfos
signal.windows.* run torch's Python windows, not these factories)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, XFail, sample_input

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


# torch's half-precision blackman and bartlett kernels do not round the way their in-place ops
# read (arange, mul_, cos_, sub, add, each to the dtype): at k = 0 torch's float16 blackman(5) is
# exactly 0 where stepwise rounding gives 7.8e-5, and bartlett(5) differs by one float16 ulp
# (0.7998 against torch's 0.8008) in the falling half. hann and hamming match torch exactly.
_HALF_BLACKMAN = XFail("torch's float16/bfloat16 blackman differs from stepwise rounding by up to 7.8e-5 (1 ulp near 0.42)",
                       dtypes=[torch.float16, torch.bfloat16], when=lambda s: s.input >= 2)
_HALF_BARTLETT = XFail("torch's float16 bartlett differs from stepwise rounding by one ulp (0.7998 vs 0.8008 at length 5)",
                       dtypes=[torch.float16], when=lambda s: s.input == 5)


ENTRIES = [
    Entry('aten_hann_window', samples=_windows(), dtypes=FLOATS),
    Entry('aten_hann_window_periodic', samples=_windows('periodic'), dtypes=FLOATS),
    Entry('aten_hamming_window', samples=_windows(), dtypes=FLOATS),
    Entry('aten_hamming_window_periodic', samples=_windows('periodic'), dtypes=FLOATS),
    Entry('aten_hamming_window_periodic_alpha', samples=_windows('periodic', 0.6), dtypes=FLOATS),
    Entry('aten_hamming_window_periodic_alpha_beta', samples=_windows('periodic', 0.6, 0.3), dtypes=FLOATS),
    Entry('aten_blackman_window', samples=_windows(), dtypes=FLOATS, xfail=[_HALF_BLACKMAN]),
    Entry('aten_blackman_window_periodic', samples=_windows('periodic'), dtypes=FLOATS, xfail=[_HALF_BLACKMAN]),
    Entry('aten_bartlett_window', samples=_windows(), dtypes=FLOATS, xfail=[_HALF_BARTLETT]),
    Entry('aten_bartlett_window_periodic', samples=_windows('periodic'), dtypes=FLOATS, xfail=[_HALF_BARTLETT]),
    Entry('aten_fft_fftfreq', samples=_frequencies, dtypes=FLOATS),
    Entry('aten_fft_rfftfreq', samples=_frequencies, dtypes=FLOATS),
]
