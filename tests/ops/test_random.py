"""torchlib/ops/random.py: shape, dtype and statistics of the samples, eagerly and traced.

Samples come from onnxruntime's Dropout coin flips (see the module docstring), not from torch's
random stream, so values are checked by range and by moments over a few thousand samples
(bounds are > 6 standard errors wide: a correct implementation does not fail them by chance).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graph_builder import op, types
from graph_builder.opset import numpy_to_torch
from torchlib.ops import random as R
from torchlib.testing import run_dynamic, run_model, run_traced, trace

FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
N = 4000


def _torch(x):
    return numpy_to_torch(x) if isinstance(x, np.ndarray) else x


def both(fn, *args, **kwargs):
    """fn's result eagerly and traced (bfloat16 results go through float32 in the traced graph)."""
    eager = _torch(fn(*args, **kwargs))

    def traced_fn(*a, **k):
        y = fn(*a, **k)
        return op.Cast(y, to=types.FLOAT.onnx) if y.dtype is types.BFLOAT16 else y

    feeds = tuple(a.float() if isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 else a for a in args)
    if any(isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 for a in args):
        return [eager]  # bfloat16 graph inputs cannot be fed; the eager run covers the function
    traced = run_traced(traced_fn, *feeds, **kwargs)
    return [eager, traced.to(eager.dtype)]


def check_uniform(x, low, high):
    x = x.double()
    assert x.min() >= low and x.max() < high
    width = high - low
    assert abs(x.mean().item() - (low + high) / 2) < 0.03 * width
    assert abs(x.std().item() - width / 12**0.5) < 0.03 * width


def check_normal(x, mean, std):
    x = x.double()
    assert abs(x.mean().item() - mean) < 0.1 * std
    assert abs(x.std().item() - std) < 0.1 * std


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_rand_randn(dtype):
    for y in both(R.aten_rand, [N // 4, 4], dtype=dtype):
        assert y.shape == (N // 4, 4) and y.dtype == dtype
        check_uniform(y, 0, 1)
    for y in both(R.aten_randn, [N], dtype=dtype):
        assert y.shape == (N,) and y.dtype == dtype
        check_normal(y, 0, 1)


def test_rand_default_dtype_and_edge_shapes():
    assert _torch(R.aten_rand([3])).dtype == torch.float32
    assert _torch(R.aten_randn([])).shape == ()
    assert _torch(R.aten_rand([0, 3])).shape == (0, 3)
    assert _torch(R.aten_randn([3, 0], dtype=torch.float16)).shape == (3, 0)
    with pytest.raises(TypeError):
        R.aten_rand([2], dtype=torch.int64)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_rand_like_randn_like(dtype):
    x = torch.zeros(N // 8, 8, dtype=dtype)
    for y in both(R.aten_rand_like, x):
        assert y.shape == x.shape and y.dtype == dtype
        check_uniform(y, 0, 1)
    for y in both(R.aten_randn_like, x):
        check_normal(y, 0, 1)
    y = _torch(R.aten_rand_like(torch.zeros(3, dtype=torch.int64), dtype=dtype))
    assert y.dtype == dtype


def test_like_dynamic():
    x = torch.zeros(N // 4, 4)
    check_uniform(run_dynamic(R.aten_rand_like, x), 0, 1)
    check_normal(run_dynamic(R.aten_randn_like, x), 0, 1)
    assert run_dynamic(R.aten_rand_like, torch.zeros(0, 3)).shape == (0, 3)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32, torch.float64, torch.int8], ids=str)
def test_randint(dtype):
    for y in both(R.aten_randint, 10, [N], dtype=dtype):
        assert y.shape == (N,) and y.dtype == dtype
        assert set(y.tolist()) == set(range(10))
        assert abs(y.double().mean().item() - 4.5) < 0.3
    for y in both(R.aten_randint_low, -3, 2, [N // 4, 4], dtype=dtype):
        assert y.shape == (N // 4, 4) and set(y.flatten().tolist()) == {-3, -2, -1, 0, 1}
    assert _torch(R.aten_randint(5, [3])).dtype == torch.int64
    with pytest.raises(ValueError):
        R.aten_randint_low(3, 3, [2])


def test_randint_bool():
    """torch draws bools from bounds within [0, 2) and refuses wider ones."""
    for y in both(R.aten_randint, 2, [N], dtype=torch.bool):
        assert y.dtype == torch.bool and set(y.tolist()) == {False, True}
    torch.randint(0, 2, (1,), dtype=torch.bool)  # torch accepts it too
    with pytest.raises(RuntimeError, match="out of bounds for bool"):
        torch.randint(0, 3, (1,), dtype=torch.bool)
    with pytest.raises(ValueError, match="out of bounds for bool"):
        R.aten_randint(3, [2], dtype=torch.bool)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32], ids=str)
def test_randint_like(dtype):
    x = torch.zeros(N, dtype=dtype)
    for y in both(R.aten_randint_like, x, 7):
        assert y.shape == (N,) and y.dtype == dtype and set(y.tolist()) == set(range(7))
    for y in both(R.aten_randint_like_low_dtype, x, 100, 103, dtype=torch.int64):
        assert y.dtype == torch.int64 and set(y.tolist()) == {100, 101, 102}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_bernoulli(dtype):
    p = torch.cat([torch.full((N,), 0.3), torch.zeros(10), torch.ones(10)]).to(dtype)
    for y in both(R.aten_bernoulli, p):
        assert y.shape == p.shape and y.dtype == dtype
        assert set(y.tolist()) <= {0.0, 1.0}
        assert abs(y[:N].double().mean().item() - 0.3) < 0.05
        assert (y[N:N + 10] == 0).all() and (y[N + 10:] == 1).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("p", [0.0, 0.25, 1.0])
def test_bernoulli_p(dtype, p):
    x = torch.zeros(N, dtype=dtype)
    for y in both(R.aten_bernoulli_p, x, p):
        assert y.shape == x.shape and y.dtype == dtype
        assert abs(y.double().mean().item() - p) < 0.05
    with pytest.raises(ValueError):
        R.aten_bernoulli_p(x, 1.5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_normal(dtype):
    mean = torch.full((N,), 3.0, dtype=dtype)
    for y in both(R.aten_normal_tensor_float, mean, 2.0):
        assert y.shape == (N,) and y.dtype == dtype
        check_normal(y, 3.0, 2.0)
    for y in both(R.aten_normal_float_tensor, -1.0, torch.full((N,), 0.5, dtype=dtype)):
        check_normal(y, -1.0, 0.5)
    for y in both(R.aten_normal_tensor_tensor, torch.full((N, 1), 1.0, dtype=dtype), torch.tensor([0.5, 2.0], dtype=dtype)):
        assert y.shape == (N, 2) and y.dtype == dtype
        check_normal(y[:, 0], 1.0, 0.5)
        check_normal(y[:, 1], 1.0, 2.0)
    for y in both(R.aten_normal_float_float, 5.0, 0.1, [N], dtype=dtype):
        assert y.dtype == dtype
        check_normal(y, 5.0, 0.1)
    assert _torch(R.aten_normal_float_float(0.0, 1.0, [2, 3])).dtype == torch.float32


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_normal_functional(dtype):
    for y in both(R.aten_normal_functional, torch.zeros(N, dtype=dtype), 3.0, 2.0):
        assert y.shape == (N,) and y.dtype == dtype
        check_normal(y, 3.0, 2.0)


def _frequencies(draws, n):
    return torch.bincount(draws.reshape(-1), minlength=n).double() / draws.numel()


def test_multinomial_with_replacement():
    p = torch.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 0.0, 2.0]])
    for y in both(R.aten_multinomial, p, N, True):
        assert y.shape == (2, N) and y.dtype == torch.int64
        for row, weights in zip(y, p):
            expected = weights.double() / weights.sum()
            assert (_frequencies(row, 4) - expected).abs().max() < 6 * (0.25 / N) ** 0.5
            assert not bool((weights[row] == 0).any())  # a zero weight is never drawn


def test_multinomial_without_replacement():
    """The first draw follows the weights, later ones the weights left (Plackett-Luce); no
    category twice, zero weights never; 1-D input gives 1-D draws."""
    weights = torch.tensor([0.5, 0.3, 0.2, 0.0])
    firsts, seconds = [], []
    for _ in range(400):
        y = R.aten_multinomial(weights, 3, False)
        assert y.shape == (3,) and y.dtype == torch.int64 and len(set(y.tolist())) == 3 and 3 not in y.tolist()
        firsts.append(int(y[0]))
        seconds.append(int(y[1]))
    first = _frequencies(torch.tensor(firsts), 4)
    assert (first - torch.tensor([0.5, 0.3, 0.2, 0.0], dtype=torch.float64)).abs().max() < 6 * (0.25 / 400) ** 0.5
    # P(second = 0) = 0.3 * 0.5 / 0.7 + 0.2 * 0.5 / 0.8
    assert abs(_frequencies(torch.tensor(seconds), 4)[0] - (0.3 * 0.5 / 0.7 + 0.2 * 0.5 / 0.8)) < 6 * (0.25 / 400) ** 0.5
    traced = run_traced(R.aten_multinomial, torch.tensor([[1.0, 2.0, 3.0]]), 3, False)
    assert sorted(torch.as_tensor(traced).reshape(-1).tolist()) == [0, 1, 2]


def test_multinomial_errors():
    with pytest.raises(ValueError, match="without replacement"):
        R.aten_multinomial(torch.ones(3), 4, False)
    with pytest.raises(ValueError, match="positive"):
        R.aten_multinomial(torch.ones(3), 0, True)


def test_uniform_has_no_stuck_first_sample():
    """onnxruntime's Dropout mask always keeps its element 0; _uniform drops that coin."""
    firsts = torch.stack([_torch(R.aten_rand_like(torch.zeros(2, dtype=torch.float64)))[0] for _ in range(400)])
    assert firsts.min() < 0.5 and abs(float(firsts.mean()) - 0.5) < 6 * (1 / 12 / 400) ** 0.5


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_uniform_exponential(dtype):
    x = torch.zeros(N, dtype=dtype)
    for y in both(R.aten_uniform, x, -2.0, 5.0):
        assert y.shape == (N,) and y.dtype == dtype
        check_uniform(y, -2.0, 5.0 + 0.02)  # bfloat16 rounds up to the upper bound
    for y in both(R.aten_exponential, x, 2.0):
        assert y.shape == (N,) and y.dtype == dtype and (y >= 0).all()
        assert abs(y.double().mean().item() - 0.5) < 0.05


@pytest.mark.parametrize("fn,args", [(R.aten_rand, ([64],)), (R.aten_randn, ([64],)), (R.aten_randint, (100, [64]))], ids=["rand", "randn", "randint"])
def test_static_shapes_are_not_folded(fn, args):
    """With a static shape every input is a constant: the samples must still be drawn at run time."""
    model, feeds, structure = trace(lambda: fn(*args), ())
    assert "Dropout" in [n.op_type for n in model.graph.node]
    assert not torch.equal(run_model(model, feeds, structure), run_model(model, feeds, structure))
