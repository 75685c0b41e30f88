"""The saved file, run by onnxruntime with its default session options (every graph optimization
on), gives torch's answer where onnxruntime's own rewrites would change it (issue 19, class 3)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch

import torchlib


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def run_saved(tmp_path, fn, *args, dynamic_shapes=None, optimize=True):
    """Export fn, save it, load it with InferenceSession(path) and run it on args."""
    path = tmp_path / "model.onnx"
    torchlib.export(Fn(fn), args, dynamic_shapes=dynamic_shapes, optimize=optimize).save(path)
    session = ort.InferenceSession(str(path))
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)}
    return [torch.from_numpy(o) for o in session.run(None, feeds)]


def assert_same(got, expected):
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("optimize", [True, False])
def test_tiny_double_constant_after_a_reduction(tmp_path, optimize):
    # onnxruntime's NoopElimination compares a float64 constant after a cast to float32
    p = torch.tensor([[0.0, 0.0], [0.25, 0.75]], dtype=torch.float64)
    fn = lambda p: torch.log(p.sum(-1) + 1e-300)  # noqa: E731
    (got,) = run_saved(tmp_path, fn, p, optimize=optimize)
    assert got[0].item() == pytest.approx(-690.7755278982137)
    assert_same(got, fn(p))


def test_double_tiny_denominator(tmp_path):
    fn = lambda x: x / (x.abs().sum() + torch.finfo(torch.float64).tiny)  # noqa: E731
    for x in (torch.zeros(3, dtype=torch.float64), torch.tensor([1.0, -3.0], dtype=torch.float64)):
        (got,) = run_saved(tmp_path, fn, x)
        assert_same(got, fn(x))


@pytest.mark.parametrize("case", ["mul", "div", "sub", "scalar", "rank3", "dynamic"])
def test_double_constants_that_round_to_neutral_in_float(tmp_path, case):
    x = torch.tensor([1e12, -3.0, 2.0 ** 40], dtype=torch.float64)
    fns = {"mul": lambda x: x * (1 + 1e-12), "div": lambda x: (x * 2) / (1 - 1e-12),
           "sub": lambda x: (x * 2) - 1e-60, "scalar": lambda x: x.sum() * (1 + 1e-12),
           "rank3": lambda x: (x * 2).reshape(1, 3, 1) + 1e-45, "dynamic": lambda x: (x * 2) * (1 + 1e-12)}
    dims = (({0: torch.export.Dim("n")},),) if case == "dynamic" else None
    (got,) = run_saved(tmp_path, fns[case], x, dynamic_shapes=dims)
    assert_same(got, fns[case](x))
    if case == "dynamic":
        x = torch.arange(7, dtype=torch.float64) * 1e12
        (got,) = run_saved(tmp_path, fns[case], x, dynamic_shapes=dims)
        assert_same(got, fns[case](x))


@pytest.mark.parametrize("fn", [lambda x: (x * x).float(), lambda x: (x * x) / 300,
                                lambda x: (x * x - 60000).double(), lambda x: (x.float() * 300).half() / 300],
                         ids=["mul-cast", "mul-div", "chain", "cast-in"])
def test_float16_overflow_between_ops(tmp_path, fn):
    # on CPU onnxruntime runs these float16 ops in float32 and merges the Casts between them
    x = torch.tensor([300.0, 2.0, -250.0], dtype=torch.float16)
    (got,) = run_saved(tmp_path, fn, x)
    expected = fn(x)
    assert torch.isinf(expected).any()
    assert got.dtype == expected.dtype
    assert_same(got, expected)


def test_float16_rounding_between_ops(tmp_path):
    x = torch.tensor([1.0009765625, 3.0, 0.1], dtype=torch.float16)
    fn = lambda x: ((x * x) * 7).float() - (x * x).float() * 7  # noqa: E731
    (got,) = run_saved(tmp_path, fn, x)
    assert_same(got, fn(x))


@pytest.mark.parametrize("fn", [lambda x, y: x ** 2.0, lambda x, y: x * y, lambda x, y: x / y],
                         ids=["pow", "mul", "div"])
def test_float16_node_alone_stays_float16_and_exact(tmp_path, fn):
    # one float16 node between the graph's inputs and outputs: no pair of inserted Casts for
    # onnxruntime to merge, so no Casts of ours; its answer is torch's on every finite float16
    x = torch.from_numpy(np.arange(65536, dtype=np.uint16).view(np.float16).copy())
    x = x[torch.isfinite(x)]
    args = (x, x.flip(0))
    path = tmp_path / "model.onnx"
    result = torchlib.export(Fn(fn), args)
    assert "Cast" not in [n.op_type for n in result.model_proto.graph.node]
    result.save(path)
    session = ort.InferenceSession(str(path))
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)}
    (got,) = session.run(None, feeds)
    expected = fn(*args).numpy()
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint16), expected[~nan].view(np.uint16))


@pytest.mark.parametrize("onesided", [True, False])
def test_rfft_dynamic_length_real_input_bins_exact(tmp_path, onesided):
    # torch's DC (and, for even n, Nyquist) imaginary parts of a real signal are exactly 0
    fn = (lambda x: torch.fft.rfft(x).angle()) if onesided else (lambda x: torch.fft.fft(x).angle())  # noqa: E731
    x = -torch.rand(2, 10, dtype=torch.float64) - 0.5
    path = tmp_path / "model.onnx"
    torchlib.export(Fn(fn), (x,), dynamic_shapes=(({1: torch.export.Dim("n", min=2)},),)).save(path)
    session = ort.InferenceSession(str(path))
    for n in (10, 9, 16, 7, 130):
        x = -torch.rand(2, n, dtype=torch.float64) - 0.5
        (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
        expected = fn(x)
        assert (torch.from_numpy(got)[:, 0] == expected[:, 0]).all()
        torch.testing.assert_close(torch.from_numpy(got), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_adaptive_max_pool_nan_in_saved_model(tmp_path, n):
    pool = [torch.nn.functional.adaptive_max_pool1d, torch.nn.functional.adaptive_max_pool2d,
            torch.nn.functional.adaptive_max_pool3d][n - 1]
    fn = lambda x: pool(x, [3] * n, return_indices=True)  # noqa: E731
    x = torch.arange(2 * 7 ** n, dtype=torch.float32).reshape(1, 2, *[7] * n)
    size = 2 * 7 ** n
    x.view(-1)[[i % size for i in (5, 9, 40, 41, size - 1)]] = float("nan")  # NaNs not first in their windows
    values, indices = run_saved(tmp_path, fn, x)
    expected_values, expected_indices = fn(x)
    assert_same(values, expected_values)
    assert torch.equal(indices, expected_indices)


@pytest.mark.parametrize("name", ["sqrt", "log", "pow-half", "rsqrt", "reciprocal"])
def test_complex64_near_the_largest_float(tmp_path, name):
    fn = {"sqrt": torch.sqrt, "log": torch.log, "pow-half": lambda z: torch.pow(z, 0.5), "rsqrt": torch.rsqrt,
          "reciprocal": torch.reciprocal}[name]
    z = torch.tensor([3e38 + 3e38j, -3e38 + 3e38j, 3e38 - 2e38j, 1e38 + 3.4e38j, 1e-40 + 1e-40j, 3 - 4j], dtype=torch.complex64)
    path = tmp_path / "model.onnx"
    torchlib.export(Fn(fn), (z,)).save(path)
    session = ort.InferenceSession(str(path))  # complex tensors are their real views at the graph's edge
    (got,) = session.run(None, {session.get_inputs()[0].name: torch.view_as_real(z).numpy()})
    got = torch.view_as_complex(torch.from_numpy(got))
    expected = fn(z)
    assert torch.isfinite(torch.view_as_real(expected[:4])).all()  # 1 / (1e-40 + 1e-40j) is inf in torch
    torch.testing.assert_close(got, expected, rtol=2e-6, atol=0, equal_nan=True)


def test_float16_rounding_inside_a_cond_body(tmp_path):
    def fn(x):
        return torch.cond(x.sum() > 0, lambda x: (x * x) / 300, lambda x: x - 1, (x,))

    x = torch.tensor([300.0, 2.0], dtype=torch.float16)
    (got,) = run_saved(tmp_path, fn, x)
    assert_same(got, fn(x))
    assert torch.isinf(got[0])


def test_float64_near_neutral_constant_inside_a_cond_body(tmp_path):
    def fn(p):
        return torch.cond(p.sum() >= 0, lambda p: torch.log(p.sum(-1) + 1e-300), lambda p: p.sum(-1), (p,))

    p = torch.zeros(2, 3, dtype=torch.float64)
    (got,) = run_saved(tmp_path, fn, p)
    assert_same(got, fn(p))
