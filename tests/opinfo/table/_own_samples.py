"""Samples of their own for functions (or dtypes) no OpInfo sample reaches: RNNs, the
out_dtype overloads, native_dropout, native_channel_shuffle, the assertions, bicubic
antialiasing and the .Scalar overloads' missing dtypes. Each generator takes the dtype under
test and yields torch's SampleInput in the function's own signature."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from torchlib.conformance.spec import sample_input

from ._helpers import _values

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
ALL = [*FLOATS, torch.int64, torch.int32, torch.bool]


# -- .Scalar overloads: (self, other, alpha) -------------------------------------------------------
def tensor_scalar_alpha(dtype: torch.dtype) -> Iterator[Any]:
    """add.Scalar / sub.Scalar / rsub.Scalar: a tensor, a Python scalar, an alpha."""
    if dtype == torch.bool:
        scalars = [(True, True), (False, True), (True, False)]
    elif dtype.is_floating_point:
        scalars = [(0.5, 1), (-2.25, 3), (3, 0.5), (1e3, -1)]
    else:
        scalars = [(2, 1), (-7, 3), (0, 2), (2**20, -1)]
    for i, shape in enumerate(((3, 4), (5,), (), (0, 3))):
        other, alpha = scalars[i % len(scalars)]
        yield sample_input(_values(dtype, shape, i), other, alpha=alpha)
    yield sample_input(_values(dtype, (4, 6))[:, ::2], scalars[0][0])  # non-contiguous


def tensor_int_exponent(dtype: torch.dtype) -> Iterator[Any]:
    """pow.Tensor_Scalar with an int exponent (torch rejects negative integer powers of ints)."""
    for i, (shape, exponent) in enumerate((((3, 4), 2), ((5,), 3), ((), 0), ((0, 2), 1), ((2, 3), 5))):
        yield sample_input(_values(dtype, shape, i), exponent)


# -- recurrent networks: aten::lstm.input / gru.input / rnn_tanh.input / rnn_relu.input -------------
_RNN_CONFIGS = [  # (num_layers, bias, bidirectional, batch_first, shape (T, N) or (N, T))
    (1, True, False, False, (5, 2)),
    (2, True, True, False, (4, 3)),
    (1, False, False, True, (2, 6)),
    (2, True, False, True, (1, 1)),
    (1, True, True, False, (1, 2)),
]
# LSTM with proj_size > 0 (no ONNX LSTM counterpart: the cell equations, unrolled)
_LSTM_PROJ_CONFIGS = [  # (num_layers, bias, bidirectional, batch_first, shape, proj_size)
    (2, True, True, True, (2, 3), 2),
    (1, False, False, False, (4, 2), 3),
]


def rnn(kind: str) -> Callable[[torch.dtype], Iterator[Any]]:
    """Samples of aten::{lstm,gru,rnn_tanh,rnn_relu}.input built from the torch.nn module's
    flat weights: every combination of layers, biases, directions and batch_first above, and
    for LSTM projections (proj_size > 0)."""
    module = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn_tanh": torch.nn.RNN, "rnn_relu": torch.nn.RNN}[kind]
    configs = [(*c, 0) for c in _RNN_CONFIGS]
    if kind == "lstm":  # among the first four samples, which the quick run takes
        configs[1:1] = _LSTM_PROJ_CONFIGS[:1]
        configs[3:3] = _LSTM_PROJ_CONFIGS[1:]

    def samples(dtype: torch.dtype) -> Iterator[Any]:
        input_size, hidden = 3, 4
        for i, (layers, bias, bidirectional, batch_first, (a, b), proj) in enumerate(configs):
            torch.manual_seed(i)
            extra: dict[str, Any] = {"nonlinearity": "relu" if kind == "rnn_relu" else "tanh"} if module is torch.nn.RNN else {}
            if proj:
                extra["proj_size"] = proj
            m = module(input_size, hidden, layers, bias=bias, batch_first=batch_first, bidirectional=bidirectional, **extra)
            params = [p.detach().to(dtype) for p in m._flat_weights]
            x = torch.randn(a, b, input_size).to(dtype)
            batch = x.shape[0] if batch_first else x.shape[1]
            h = torch.randn(layers * (2 if bidirectional else 1), batch, proj or hidden).to(dtype)
            c = torch.randn(layers * (2 if bidirectional else 1), batch, hidden).to(dtype)
            hx: Any = [h, c] if kind == "lstm" else h
            yield sample_input(x, hx, params, bias, layers, 0.0, False, bidirectional, batch_first)

    return samples


# -- out_dtype overloads (CUDA-only in torch; compared with the same computation in out_dtype) -------
OUT_DTYPE_INPUTS = [torch.float16, torch.bfloat16, torch.float32]


def _out_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32


def mm_dtype(dtype: torch.dtype) -> Iterator[Any]:
    for i, (m, k, n) in enumerate(((3, 4, 5), (1, 7, 1), (2, 0, 3))):
        yield sample_input(_values(dtype, (m, k), i), _values(dtype, (k, n), i + 10), _out_dtype(dtype))


def bmm_dtype(dtype: torch.dtype) -> Iterator[Any]:
    for i, (b, m, k, n) in enumerate(((2, 3, 4, 5), (1, 1, 7, 1), (3, 2, 0, 3))):
        yield sample_input(_values(dtype, (b, m, k), i), _values(dtype, (b, k, n), i + 10), _out_dtype(dtype))


def addmm_dtype(dtype: torch.dtype) -> Iterator[Any]:
    for i, ((m, k, n), self_shape, beta, alpha) in enumerate((((3, 4, 5), (3, 5), 1, 1), ((2, 6, 3), (3,), 0.5, 2), ((2, 3, 4), (1, 4), 0, 1))):
        yield sample_input(_values(_out_dtype(dtype), self_shape, i), _values(dtype, (m, k), i + 1), _values(dtype, (k, n), i + 2), _out_dtype(dtype), beta=beta, alpha=alpha)


def baddbmm_dtype(dtype: torch.dtype) -> Iterator[Any]:
    for i, ((b, m, k, n), beta, alpha) in enumerate((((2, 3, 4, 5), 1, 1), ((1, 2, 6, 3), 0.5, 2), ((2, 2, 3, 4), 0, 1))):
        yield sample_input(_values(_out_dtype(dtype), (b, m, n), i), _values(dtype, (b, m, k), i + 1), _values(dtype, (b, k, n), i + 2), _out_dtype(dtype), beta=beta, alpha=alpha)


def _wide(*tensors: torch.Tensor, out_dtype: torch.dtype) -> list[torch.Tensor]:
    return [t.to(out_dtype) for t in tensors]


def mm_dtype_reference(self: torch.Tensor, mat2: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """mm.dtype as CUDA computes it: the product of the inputs in out_dtype."""
    return torch.mm(*_wide(self, mat2, out_dtype=out_dtype))


def bmm_dtype_reference(self: torch.Tensor, mat2: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    return torch.bmm(*_wide(self, mat2, out_dtype=out_dtype))


def addmm_dtype_reference(self: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, out_dtype: torch.dtype, *, beta: float = 1, alpha: float = 1) -> torch.Tensor:
    return torch.addmm(*_wide(self, mat1, mat2, out_dtype=out_dtype), beta=beta, alpha=alpha)


def baddbmm_dtype_reference(self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, out_dtype: torch.dtype, *, beta: float = 1, alpha: float = 1) -> torch.Tensor:
    return torch.baddbmm(*_wide(self, batch1, batch2, out_dtype=out_dtype), beta=beta, alpha=alpha)


# -- the rest ---------------------------------------------------------------------------------------
def native_dropout(dtype: torch.dtype) -> Iterator[Any]:
    """The deterministic cases: eval mode, p=0 in training (input and an all-true mask) and
    p=1 in training (zeros and an all-false mask)."""
    for i, (shape, p, train) in enumerate((((3, 4), 0.5, False), ((2, 3, 2), 0.0, True), ((5,), 1.0, True), ((0, 3), 0.3, False), ((), 0.0, True))):
        yield sample_input(_values(dtype, shape, i), p, train)


def native_channel_shuffle(dtype: torch.dtype) -> Iterator[Any]:
    for i, (shape, groups) in enumerate((((1, 6, 2, 2), 3), ((2, 4, 3), 2), ((1, 4, 1, 1, 2), 4), ((2, 3, 2), 1))):
        yield sample_input(_values(dtype, shape, i), groups)


def bicubic_aa(dtype: torch.dtype) -> Iterator[Any]:
    """_upsample_bicubic2d_aa(self, output_size, align_corners, scales_h, scales_w): down- and
    upsampling, with and without align_corners and scales."""
    x = _values(dtype, (1, 2, 8, 6))
    yield sample_input(x, [4, 3], False, None, None)
    yield sample_input(x, [5, 9], True, None, None)
    yield sample_input(x, [3, 3], False, 0.4, 0.5)
    yield sample_input(_values(dtype, (2, 1, 5, 5)), [5, 2], False, None, None)


def bicubic_aa_vec(dtype: torch.dtype) -> Iterator[Any]:
    """_upsample_bicubic2d_aa.vec(input, output_size, align_corners, scale_factors)."""
    x = _values(dtype, (1, 2, 8, 6))
    yield sample_input(x, [4, 3], False, None)
    yield sample_input(x, None, False, [0.5, 0.7])
    yield sample_input(x, None, True, [1.5, 0.4])


def assert_true(dtype: torch.dtype) -> Iterator[Any]:
    """_assert_async: a true (non-zero) one-element tensor; both sides return nothing."""
    for value in (1, True):
        yield sample_input(torch.tensor(value).to(dtype))


def assert_true_msg(dtype: torch.dtype) -> Iterator[Any]:
    for sample in assert_true(dtype):
        yield sample_input(sample.input, "the condition holds")


def assert_scalar(dtype: torch.dtype) -> Iterator[Any]:
    yield sample_input(torch.tensor(True), "u0 >= 0")
    yield sample_input(torch.tensor(3, dtype=torch.int64), "u0 > 0")


def assert_tensor_metadata(dtype: torch.dtype) -> Iterator[Any]:
    x = _values(dtype, (2, 3))
    yield sample_input(x, [2, 3], [3, 1], dtype)
    yield sample_input(x, None, None, dtype)
    yield sample_input(x)


def constrain_range(dtype: torch.dtype) -> Iterator[Any]:
    for value, low, high in ((5, 0, 10), (2, 2, None), (7, None, 7)):
        yield sample_input(torch.tensor(value, dtype=dtype), min=low, max=high)



def truth_tensors(dtype: torch.dtype) -> Iterator[Any]:
    """Boolean tensors all true, all false, mixed, 0-d and empty (an assert's test: aten::_is_all_true)."""
    for x in (torch.ones(2, 3), torch.zeros(4), torch.tensor([[1.0, 0.0], [1.0, 1.0]]), torch.tensor(1.0),
              torch.tensor(0.0), torch.zeros(0, 3)):
        yield sample_input(x.to(dtype))


def complex_assert_tensor_metadata(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.complex(_values(torch.float32, (2, 3)), _values(torch.float32, (2, 3))).to(dtype)
    yield sample_input(x, [2, 3], [3, 1], dtype)
    yield sample_input(x)
