"""Adapters and sample generators shared by the table's modules."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Call, call, sample_input


def scalar_arg(i: int) -> Callable[[Call], Call | None]:
    """For a .Scalar overload: take the captured .Tensor call whose argument i is a Python
    number (what the Scalar overload receives); other calls are not this function's."""

    def adapt(c: Call) -> Call | None:
        return c if isinstance(c.args[i], (bool, int, float)) else None

    return adapt


# -- symbolic values: a SymInt / SymFloat / SymBool is a 0-d tensor in a graph -----------------
_INT_PAIRS = [(7, 3), (-7, 3), (0, 5), (12, -5), (2, 10)]


def on_python(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The Python reference of a symbolic op: 0-d tensors become Python numbers first."""

    def reference(*args: Any, **kwargs: Any) -> Any:
        args = tuple(a.item() if isinstance(a, torch.Tensor) else a for a in args)
        return fn(*args, **{k: v.item() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()})

    reference.__name__ = getattr(fn, "__name__", "reference")
    return reference


def int_pairs(dtype: torch.dtype) -> Iterator[Any]:
    for a, b in _INT_PAIRS:
        yield sample_input(torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype))


def int_lists(dtype: torch.dtype) -> Iterator[Any]:
    for a, b in _INT_PAIRS:
        yield sample_input([torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype), torch.tensor(7, dtype=dtype)])


def positive_int_pairs(dtype: torch.dtype) -> Iterator[Any]:
    for a, b in [(7, 3), (2, 10), (9, 1), (0, 4)]:
        yield sample_input(torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype))


def ints(dtype: torch.dtype) -> Iterator[Any]:
    for a, _ in _INT_PAIRS:
        yield sample_input(torch.tensor(a, dtype=dtype))


def floats(dtype: torch.dtype) -> Iterator[Any]:
    for a in (2.5, -2.5, 9.0, 0.3, 1e-3):
        yield sample_input(torch.tensor(a, dtype=dtype))


def bools(dtype: torch.dtype) -> Iterator[Any]:
    for a in (True, False):
        yield sample_input(torch.tensor(a))


def logical_pairs(dtype: torch.dtype) -> Iterator[Any]:
    """Every pair of bools for torch.bool (SymBools), else int_pairs (SymInts: bitwise)."""
    if dtype != torch.bool:
        yield from int_pairs(dtype)
        return
    for a in (True, False):
        for b in (True, False):
            yield sample_input(torch.tensor(a), torch.tensor(b))


def ite(dtype: torch.dtype) -> Iterator[Any]:
    for b in (True, False):
        yield sample_input(torch.tensor(b), torch.tensor(4, dtype=dtype), torch.tensor(-9, dtype=dtype))


def sizes_and_dims(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.ones(2, 3, 5, dtype=dtype)
    for dim in (0, 1, 2, -1):
        yield sample_input(x, dim)


def tensors(dtype: torch.dtype) -> Iterator[Any]:
    for shape in ((2, 3, 5), (7,), (), (0, 4)):
        yield sample_input(torch.ones(shape, dtype=dtype))


def getitem(dtype: torch.dtype) -> Iterator[Any]:
    items = [torch.arange(3).to(dtype), torch.ones(2, 2, dtype=dtype), torch.zeros(4, dtype=dtype)]
    for i in (0, 1, 2, -1):
        yield sample_input(items, i)


def type_as(dtype: torch.dtype) -> Iterator[Any]:
    for source in (torch.float32, torch.int64, torch.bool):
        yield sample_input(torch.arange(6).reshape(2, 3).to(source), torch.ones(1, dtype=dtype))


def batch_norm_no_update(dtype: torch.dtype) -> Iterator[Any]:
    torch.manual_seed(0)
    for shape in ((2, 3), (2, 3, 4), (1, 3, 2, 2)):
        x = torch.randn(shape).to(dtype)
        c = shape[1]
        w, b = torch.randn(c).to(dtype), torch.randn(c).to(dtype)
        mean, var = torch.randn(c).to(dtype), torch.rand(c).to(dtype) + 0.5
        yield sample_input(x, w, b, mean, var, 0.1, 1e-5)
        yield sample_input(x, None, None, mean, var, 0.1, 1e-3)


OPERATOR = operator
MATH = math


def _values(dtype: torch.dtype, shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    torch.manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-5, 6, shape, dtype=dtype)


def tensor_and_scalar(dtype: torch.dtype) -> Iterator[Any]:
    scalar = 0.5 if dtype.is_floating_point else 2
    for shape in ((3, 4), (5,), ()):
        yield sample_input(_values(dtype, shape), scalar)


def scalar_and_tensor(dtype: torch.dtype) -> Iterator[Any]:
    for base, shape in ((2.0, (3, 4)), (3, (5,)), (0.5, ())):
        exponent = _values(dtype, shape).abs() if not dtype.is_floating_point else _values(dtype, shape)
        yield sample_input(base, exponent)


def movedim(dtype: torch.dtype) -> Iterator[Any]:
    x = _values(dtype, (2, 3, 4))
    for source, destination in ((0, 2), (2, 0), (-1, 1), (1, 1)):
        yield sample_input(x, source, destination)


def split_sizes(dtype: torch.dtype) -> Iterator[Any]:
    x = _values(dtype, (6, 4))
    for sizes, dim in (([1, 2, 3], 0), ([2, 2], 1), ([6], 0), ([0, 4], -1)):
        yield sample_input(x, sizes, dim)


def to_other(dtype: torch.dtype) -> Iterator[Any]:
    for target in (torch.float32, torch.float16, torch.int64, torch.bool):
        yield sample_input(_values(dtype, (3, 4)), torch.ones(1, dtype=target))


def contiguous(dtype: torch.dtype) -> Iterator[Any]:
    x = _values(dtype, (3, 4, 2))
    yield sample_input(x)
    yield sample_input(x.transpose(0, 2))
    yield sample_input(x[:, ::2])


def where_scalars(kind: str) -> Callable[[torch.dtype], Iterator[Any]]:
    """Samples of where.Scalar (both branches scalars), .ScalarSelf or .ScalarOther."""

    def samples(dtype: torch.dtype) -> Iterator[Any]:
        condition = _values(torch.bool, (3, 4))
        tensor = _values(dtype, (3, 4))
        for a, b in ((1.5, -2.0), (3, 0), (True, False)):
            if kind == "Scalar":
                yield sample_input(condition, a, b)
            elif kind == "ScalarSelf":
                yield sample_input(condition, a, tensor)
            else:
                yield sample_input(condition, tensor, b)

    return samples


def rms_norm(dtype: torch.dtype) -> Iterator[Any]:
    x = _values(dtype, (2, 3, 4))
    yield sample_input(x, [4], _values(dtype, (4,)), 1e-5)
    yield sample_input(x, [3, 4], None, None)
    yield sample_input(x, [4], None, 1e-3)


def batch_norm_functional(dtype: torch.dtype) -> Iterator[Any]:
    """(input, weight, bias, running_mean, running_var, training, momentum, eps)."""
    for sample in batch_norm_no_update(dtype):
        x, w, b, mean, var, momentum, eps = (sample.input, *sample.args)
        for training in (True, False):
            yield sample_input(x, w, b, mean, var, training, momentum, eps)


def norms(kind: str) -> Callable[[torch.dtype], Iterator[Any]]:
    """Samples of norm.Scalar, norm.ScalarOpt_dtype or norm.ScalarOpt_dim_dtype."""

    def samples(dtype: torch.dtype) -> Iterator[Any]:
        x = _values(dtype, (3, 4))
        wider = torch.float64 if dtype == torch.float64 else torch.float32
        for p in (2, 1, 3, 0.5, float("inf")):
            if kind == "Scalar":
                yield sample_input(x, p)
            elif kind == "ScalarOpt_dtype":
                yield sample_input(x, p, dtype=wider)
            else:
                for dim, keepdim in (([1], False), ([0, 1], True), ([-1], True)):
                    yield sample_input(x, p, dim, keepdim, dtype=wider)

    return samples


def conv_padding_mode(c: Call) -> Call:
    """conv1d/2d/3d.padding as the pre-dispatch graph records it (defaults left out, ints for
    one-element lists) onto _convolution_mode's explicit arguments."""
    names = ("bias", "stride", "padding", "dilation", "groups")
    values = dict(zip(names, (None, 1, "valid", 1, 1)))
    values.update(zip(names, c.args[2:]))
    values.update(c.kwargs)
    n = c.args[1].dim() - 2
    stride, dilation = ([v] * n if isinstance(v, int) else list(v) for v in (values["stride"], values["dilation"]))
    return call(c.args[0], c.args[1], values["bias"], stride, values["padding"], dilation, values["groups"])


def copy(dtype: torch.dtype) -> Iterator[Any]:
    """aten::copy(self, src): src of every dtype, broadcast to self's shape, empty included."""
    for source in (torch.float32, torch.float64, torch.int64, torch.bool):
        for shape in ((3, 4), (4,), (1, 4), ()):
            yield sample_input(_values(dtype, (3, 4)), _values(source, shape))
    yield sample_input(_values(dtype, (0, 4)), _values(torch.float32, (4,)))
    yield sample_input(_values(dtype, (3, 4)).t(), _values(torch.int32, (3,)))  # non-contiguous self


def to_dtype_layout(dtype: torch.dtype) -> Iterator[Any]:
    """aten::to.dtype_layout: the dtype keyword (or none: a copy), layout and device as torch passes them."""
    x = _values(dtype, (3, 4))
    for target in (torch.float32, torch.float64, torch.float16, torch.int64, torch.int8, torch.bool, None):
        yield sample_input(x, dtype=target)
    yield sample_input(x, dtype=torch.float64, layout=torch.strided, device="cpu")
    yield sample_input(_values(dtype, (0, 2)), dtype=torch.int32)


def one_element(dtype: torch.dtype) -> Iterator[Any]:
    """Tensors of one element (what .item() takes): 0-d, 1-d and 2-d, extremes included."""
    yield sample_input(_values(dtype, ()))
    yield sample_input(_values(dtype, (1,)))
    yield sample_input(_values(dtype, (1, 1)))
    if dtype.is_floating_point:
        yield sample_input(torch.tensor(float("nan"), dtype=dtype))
        yield sample_input(torch.tensor(-float("inf"), dtype=dtype))
    elif dtype != torch.bool:
        yield sample_input(torch.tensor(torch.iinfo(dtype).min, dtype=dtype))
