"""Adaptive average and max pooling with symbolic spatial dims (textnet's AdaptiveAvgPool2d((2, 2))
after strided convolutions), exported once and run at sizes where the output does and does not
divide the input."""

from __future__ import annotations

import pytest
import torch

import torchlib

F = torch.nn.functional
SIZES = [(2, 3, 8, 9), (3, 3, 7, 5), (1, 3, 13, 16), (2, 3, 4, 3), (2, 3, 2, 11), (1, 3, 12, 8)]


class AvgPool(torch.nn.Module):
    def __init__(self, out: tuple[int, ...]):
        super().__init__()
        self.out = out

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self.out)


class MaxPool(AvgPool):
    def forward(self, x):
        return F.adaptive_max_pool2d(x, self.out, return_indices=True)


def _export(module: torch.nn.Module, dtype: torch.dtype = torch.float32, dims: dict | None = None):
    x = torch.randn(2, 3, 8, 9, dtype=dtype)
    return torchlib.export(module, (x,), dynamic_shapes=(dims or {0: "n", 2: "h", 3: "w"},))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("out", [(2, 2), (3, 2), (5, 7)])
def test_adaptive_avg_pool2d_symbolic_spatial_dims(dtype: torch.dtype, out: tuple[int, int]):
    """Right at every size against torch; bit-exact against the export with those sizes static
    (the same windows, computed in the graph instead of at trace time), where that export takes
    the windows' path too (an axis that its output does not divide)."""
    module = AvgPool(out)
    result = _export(module, dtype)
    for shape in SIZES:
        x = torch.randn(*shape, dtype=dtype)
        got = result(x)
        torch.testing.assert_close(got, module(x), rtol=1e-6 if dtype in (torch.float32, torch.float64) else None,
                                   atol=1e-6 if dtype in (torch.float32, torch.float64) else None)  # fmt: skip
        if any(size % o for size, o in zip(shape[2:], out)):
            static = torchlib.export(module, (x,))
            assert torch.equal(got, static(x)), shape


def test_adaptive_avg_pool_symbolic_nan_and_inf_stay_in_their_windows():
    module = AvgPool((3, 2))
    result = _export(module)
    x = torch.randn(3, 3, 7, 5)
    x[0, 0, 0, 0], x[1, 2, 6, 4], x[2, 1, 3, 2] = float("nan"), float("inf"), float("-inf")
    torch.testing.assert_close(result(x), module(x), equal_nan=True)


def test_adaptive_avg_pool_1d_and_3d_symbolic():
    for module, x, dims, others in [
        (torch.nn.AdaptiveAvgPool1d(3), torch.randn(2, 4, 10), {0: "n", 2: "l"}, [(3, 4, 7), (1, 4, 2)]),
        (torch.nn.AdaptiveAvgPool3d((2, 3, 2)), torch.randn(2, 2, 5, 6, 4), {2: "d", 3: "h", 4: "w"},
         [(2, 2, 7, 3, 5), (2, 2, 2, 8, 9)]),
    ]:  # fmt: skip
        result = torchlib.export(module, (x,), dynamic_shapes=(dims,))
        for xs in [x] + [torch.randn(*s) for s in others]:
            torch.testing.assert_close(result(xs), module(xs), rtol=1e-6, atol=1e-6)


def test_global_average_pool_stays_one_node():
    """Output 1x1: GlobalAveragePool, on any size."""
    result = _export(AvgPool((1, 1)))
    assert [n.op_type for n in result.model_proto.graph.node] == ["GlobalAveragePool"]
    for shape in SIZES:
        x = torch.randn(*shape)
        torch.testing.assert_close(result(x), AvgPool((1, 1))(x))


@pytest.mark.parametrize("out", [(2, 2), (3, 2), (5, 7), (1, 1)])
def test_adaptive_max_pool2d_symbolic_spatial_dims(out: tuple[int, int]):
    """Values and flat indices equal to torch's (distinct values: with ties any maximum's index
    would do), NaN at the window's last NaN."""
    module = MaxPool(out)
    result = _export(module)
    for shape in SIZES:
        x = (torch.randperm(torch.Size(shape).numel()) % 1000).reshape(shape).float()
        got, want = result(x), module(x)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]), shape
    x = torch.randn(3, 3, 7, 5)
    x[torch.rand(x.shape) < 0.15] = float("nan")
    got, want = result(x), module(x)
    torch.testing.assert_close(got[0], want[0], equal_nan=True, rtol=0, atol=0)
    assert torch.equal(got[1], want[1])
