"""The public `torch.fft` transforms (fft, ifft, rfft, irfft, hfft, ihfft and their 2-D and
n-D forms), written as torch's own CompositeImplicit kernels write them
(aten/src/ATen/native/SpectralOps.cpp) on `_fft_r2c`, `_fft_c2c` and `_fft_c2r` (fft.py):

- `n` / `s` zero-pads or trims each transformed dim first (`resize_fft_input`); `s` alone
  transforms the last len(s) dims, neither transforms every dim, -1 in `s` keeps a size;
- `norm` ("backward" by default, "forward", "ortho") becomes the normalization of the
  direction: none / 1/n / 1/sqrt(n) forward, 1/n / none / 1/sqrt(n) backward;
- integer and bool inputs compute in float32 (torch's default dtype); float16 and bfloat16
  raise (torch's CPU kernels refuse them too);
- a real input to fft / ifft is a two-sided r2c (conjugated for ifft), to fftn / ifftn and the
  c2r transforms a complex tensor with zero imaginary part;
- hfft is the c2r transform of the conjugate, ihfft the conjugate of rfft.

A function whose input may be complex has a complex variant (`complex=True`); the exporter calls
it for every node with a complex input or output, so it also takes real inputs (fft of a real
signal). Transforms of real inputs only (rfft, ihfft) have none: the registry refuses a complex
input for them, as torch does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from graph_builder.types import DOUBLE, FLOAT
from torchlib.ops._helpers import as_shape, normalize_dim
from torchlib.ops.fft import aten__fft_c2c, aten__fft_c2r, aten__fft_r2c
from torchlib.registry import aten_op


def _norm(name: str, norm: str | None, forward: bool) -> int:
    """torch's norm_from_string: 0 none, 1 1/sqrt(n), 2 1/n."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise ValueError(f"aten::{name}: invalid normalization mode {norm!r} (torch raises too)")


def _promote(name: str, x: Value, complex_: bool = False) -> Value:
    """torch's promote_tensor_fft: ints and bool to float32, float32/float64 kept (others raise
    on CPU), then to complex when asked (zero imaginary part)."""
    if x.is_complex:
        return x
    if not x.known_dtype.is_floating:
        x = op.Cast(x, to=FLOAT.onnx)
    elif x.dtype not in (FLOAT, DOUBLE):
        raise TypeError(f"aten::{name}: unsupported dtype {x.dtype} (torch's CPU FFT takes float32 and float64)")
    if not complex_:
        return x
    pads = [0] * (x.known_rank + 1) + [0] * x.known_rank + [1]  # an imaginary part of exact zeros (also beside inf and NaN)
    return op.Pad(op.Unsqueeze(x, [-1]), np.array(pads, dtype=np.int64)).as_complex()


def _rank(name: str, x: Value) -> int:
    rank = x.logical_rank
    if rank is None:
        raise ValueError(f"aten::{name}: the input's rank must be known")
    return rank


def _size(x: Value, axis: int) -> Any:
    return x.logical_shape[axis]  # type: ignore[index]


def _resize(x: Value, dims: Sequence[int], sizes: Sequence[Any]) -> Value:
    """torch's resize_fft_input: trim dims longer than their size, zero-pad shorter ones (the
    real view's axes are the logical ones, its trailing 2 comes last)."""
    complex_, rank = x.is_complex, x.known_rank
    pads: list[Any] = [0] * (2 * rank)
    padded = False
    for d, n in zip(dims, sizes):
        have = _size(x, d)
        if n is None or n is have or (isinstance(n, (int, str)) and (n == -1 or n == have)):  # kept as it is
            continue
        if isinstance(have, int) and isinstance(n, int):
            if have > n:
                x = op.Slice(x, [0], [n], [d])
            else:
                pads[rank + d] = n - have
                padded = True
        else:  # a dynamic size (or n): trim (Slice stops at the end), then pad what is missing
            end = as_shape([n])
            x = op.Slice(x, [0], end, [d])
            pads[rank + d] = op.Squeeze(op.Max(op.Sub(end, op.Shape(x, start=d, end=d + 1)), [0]), [0])
            padded = True
    if padded:
        x = op.Pad(x, as_shape(pads))
    return x.as_complex() if complex_ and not x.is_complex else x


def _conj(x: Value) -> Value:
    return op.Mul(x, np.array([1, -1], dtype=x.known_dtype.numpy)).as_complex()


def _default_c2r_length(name: str, x: Value, d: int) -> int:
    """2 (size - 1), the output length of a c2r transform without n / s; static (see _fft_c2r)."""
    size = _size(x, d)
    if not isinstance(size, int):
        raise ValueError(f"aten::{name}: the output length must be static: pass n= (or s=) for a dynamic input size")
    return 2 * (size - 1)


def _check_n(n: Any) -> None:
    if isinstance(n, int) and n < 1:
        raise ValueError(f"Invalid number of data points ({n}) specified (torch raises too)")


# -- one dimension -----------------------------------------------------------------------------


def _fft_1d(name: str, x: Value, n: int | None, dim: int, norm: str | None, forward: bool) -> Value:
    """fft / ifft: c2c of a complex input, a two-sided r2c of a real one (conjugated backward)."""
    d = normalize_dim(dim, _rank(name, x))
    n = _size(x, d) if n is None else n
    _check_n(n)
    x = _resize(_promote(name, x), [d], [n])
    mode = _norm(name, norm, forward)
    if x.is_complex:
        return aten__fft_c2c(x, [d], mode, forward)
    out = aten__fft_r2c(x, [d], mode, False)
    return out if forward else _conj(out)


def _r2c_1d(name: str, x: Value, n: int | None, dim: int, norm: str | None, forward: bool) -> Value:
    """rfft / ihfft: a onesided r2c (conjugated backward)."""
    d = normalize_dim(dim, _rank(name, x))
    n = _size(x, d) if n is None else n
    _check_n(n)
    x = _resize(_promote(name, x), [d], [n])
    out = aten__fft_r2c(x, [d], _norm(name, norm, forward), True)
    return out if forward else _conj(out)


def _c2r_1d(name: str, x: Value, n: int | None, dim: int, norm: str | None, forward: bool) -> Value:
    """irfft / hfft: c2r to n points (default 2 (size - 1)) of the first n // 2 + 1 bins, of the
    conjugate for hfft."""
    x = _promote(name, x, complex_=True)
    d = normalize_dim(dim, _rank(name, x))
    last = _default_c2r_length(name, x, d) if n is None else n
    _check_n(last)
    if n is not None:
        x = _resize(x, [d], [n // 2 + 1])
    if forward:
        x = _conj(x)
    return aten__fft_c2r(x, [d], _norm(name, norm, forward), last)


@aten_op("aten::fft_fft")
def aten_fft_fft(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _fft_1d("fft_fft", self, n, dim, norm, True)


@aten_op("aten::fft_fft", complex=True)
def aten_fft_fft_complex(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _fft_1d("fft_fft", self, n, dim, norm, True)


@aten_op("aten::fft_ifft")
def aten_fft_ifft(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _fft_1d("fft_ifft", self, n, dim, norm, False)


@aten_op("aten::fft_ifft", complex=True)
def aten_fft_ifft_complex(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _fft_1d("fft_ifft", self, n, dim, norm, False)


@aten_op("aten::fft_rfft")
def aten_fft_rfft(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_rfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _r2c_1d("fft_rfft", self, n, dim, norm, True)


@aten_op("aten::fft_ihfft")
def aten_fft_ihfft(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_ihfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _r2c_1d("fft_ihfft", self, n, dim, norm, False)


@aten_op("aten::fft_irfft")
def aten_fft_irfft(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _c2r_1d("fft_irfft", self, n, dim, norm, False)


@aten_op("aten::fft_irfft", complex=True)
def aten_fft_irfft_complex(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _c2r_1d("fft_irfft", self, n, dim, norm, False)


@aten_op("aten::fft_hfft")
def aten_fft_hfft(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_hfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _c2r_1d("fft_hfft", self, n, dim, norm, True)


@aten_op("aten::fft_hfft", complex=True)
def aten_fft_hfft_complex(self: TTensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> TTensor:
    """fft_hfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"""
    return _c2r_1d("fft_hfft", self, n, dim, norm, True)


# -- n dimensions ------------------------------------------------------------------------------


def _shape_and_dims(name: str, x: Value, s: Sequence[int] | None, dim: Sequence[int] | None) -> tuple[list[Any], list[int]]:
    """torch's canonicalize_fft_shape_and_dim_args: (sizes, dims) of the transform."""
    rank = _rank(name, x)
    dims = None if dim is None else [normalize_dim(d, rank) for d in dim]
    if dims is not None and len(set(dims)) != len(dims):
        raise ValueError(f"aten::{name}: FFT dims must be unique, got {list(dim or [])} (torch raises too)")
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise ValueError(f"aten::{name}: when given, dim and shape arguments must have the same length (torch raises too)")
        if len(s) > rank:
            raise ValueError(f"aten::{name}: got shape with {len(s)} values but the input has only {rank} dimensions (torch raises too)")
        dims = list(range(rank - len(s), rank)) if dims is None else dims
        sizes = [_size(x, d) if n == -1 else n for d, n in zip(dims, s)]
    else:
        dims = list(range(rank)) if dims is None else dims
        sizes = [_size(x, d) for d in dims]
    for n in sizes:
        _check_n(n)
    return sizes, dims


def _c2r_shape_and_dims(name: str, x: Value, s: Sequence[int] | None, dim: Sequence[int] | None) -> tuple[list[Any], list[int], Any]:
    """torch's canonicalize_fft_c2r_shape_and_dim_args: (sizes of the Hermitian input, dims,
    output length of the last dim)."""
    sizes, dims = _shape_and_dims(name, x, s, dim)
    if not dims:
        raise ValueError(f"aten::{name} must transform at least one axis (torch raises too)")
    last = _default_c2r_length(name, x, dims[-1]) if s is None or s[-1] == -1 else sizes[-1]
    _check_n(last)
    return sizes[:-1] + [last // 2 + 1], dims, last


def _fftn(name: str, x: Value, s: Sequence[int] | None, dim: Sequence[int] | None, norm: str | None, forward: bool) -> Value:
    """fftn / ifftn: c2c of the input made complex."""
    sizes, dims = _shape_and_dims(name, x, s, dim)
    x = _resize(_promote(name, x, complex_=True), dims, sizes)
    return aten__fft_c2c(x, dims, _norm(name, norm, forward), forward)


def _rfftn(name: str, x: Value, s: Sequence[int] | None, dim: Sequence[int] | None, norm: str | None) -> Value:
    sizes, dims = _shape_and_dims(name, x, s, dim)
    if not dims:
        raise ValueError(f"aten::{name} must transform at least one axis (torch raises too)")
    x = _resize(_promote(name, x), dims, sizes)
    return aten__fft_r2c(x, dims, _norm(name, norm, True), True)


def _irfftn(name: str, x: Value, s: Sequence[int] | None, dim: Sequence[int] | None, norm: str | None) -> Value:
    sizes, dims, last = _c2r_shape_and_dims(name, x, s, dim)
    x = _resize(_promote(name, x, complex_=True), dims, sizes)
    return aten__fft_c2r(x, dims, _norm(name, norm, False), last)


def _hfftn(name: str, x: Value, s: Sequence[int] | None, dim: Sequence[int] | None, norm: str | None) -> Value:
    """c2c forward over all dims but the last, then c2r of the conjugate over the last."""
    sizes, dims, last = _c2r_shape_and_dims(name, x, s, dim)
    x = _resize(_promote(name, x, complex_=True), dims, sizes)
    mode = _norm(name, norm, True)
    if len(dims) > 1:
        x = aten__fft_c2c(x, dims[:-1], mode, True)
    return aten__fft_c2r(_conj(x), dims[-1:], mode, last)


def _ihfftn(name: str, x: Value, s: Sequence[int] | None, dim: Sequence[int] | None, norm: str | None) -> Value:
    """conj of a onesided r2c over the last dim, then c2c backward over the others."""
    sizes, dims = _shape_and_dims(name, x, s, dim)
    if not dims:
        raise ValueError(f"aten::{name} must transform at least one axis (torch raises too)")
    x = _resize(_promote(name, x), dims, sizes)
    mode = _norm(name, norm, False)
    out = _conj(aten__fft_r2c(x, dims[-1:], mode, True))
    return aten__fft_c2c(out, dims[:-1], mode, False) if len(dims) > 1 else out


@aten_op("aten::fft_fft2")
def aten_fft_fft2(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _fftn("fft_fft2", self, s, dim, norm, True)


@aten_op("aten::fft_fft2", complex=True)
def aten_fft_fft2_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _fftn("fft_fft2", self, s, dim, norm, True)


@aten_op("aten::fft_fftn")
def aten_fft_fftn(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _fftn("fft_fftn", self, s, dim, norm, True)


@aten_op("aten::fft_fftn", complex=True)
def aten_fft_fftn_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _fftn("fft_fftn", self, s, dim, norm, True)


@aten_op("aten::fft_ifft2")
def aten_fft_ifft2(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_ifft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _fftn("fft_ifft2", self, s, dim, norm, False)


@aten_op("aten::fft_ifft2", complex=True)
def aten_fft_ifft2_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_ifft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _fftn("fft_ifft2", self, s, dim, norm, False)


@aten_op("aten::fft_ifftn")
def aten_fft_ifftn(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_ifftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _fftn("fft_ifftn", self, s, dim, norm, False)


@aten_op("aten::fft_ifftn", complex=True)
def aten_fft_ifftn_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_ifftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _fftn("fft_ifftn", self, s, dim, norm, False)


@aten_op("aten::fft_rfft2")
def aten_fft_rfft2(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_rfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _rfftn("fft_rfft2", self, s, dim, norm)


@aten_op("aten::fft_rfftn")
def aten_fft_rfftn(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_rfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _rfftn("fft_rfftn", self, s, dim, norm)


@aten_op("aten::fft_irfft2")
def aten_fft_irfft2(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_irfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _irfftn("fft_irfft2", self, s, dim, norm)


@aten_op("aten::fft_irfft2", complex=True)
def aten_fft_irfft2_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_irfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _irfftn("fft_irfft2", self, s, dim, norm)


@aten_op("aten::fft_irfftn")
def aten_fft_irfftn(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_irfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _irfftn("fft_irfftn", self, s, dim, norm)


@aten_op("aten::fft_irfftn", complex=True)
def aten_fft_irfftn_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_irfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _irfftn("fft_irfftn", self, s, dim, norm)


@aten_op("aten::fft_hfft2")
def aten_fft_hfft2(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_hfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _hfftn("fft_hfft2", self, s, dim, norm)


@aten_op("aten::fft_hfft2", complex=True)
def aten_fft_hfft2_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_hfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _hfftn("fft_hfft2", self, s, dim, norm)


@aten_op("aten::fft_hfftn")
def aten_fft_hfftn(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_hfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _hfftn("fft_hfftn", self, s, dim, norm)


@aten_op("aten::fft_hfftn", complex=True)
def aten_fft_hfftn_complex(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_hfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _hfftn("fft_hfftn", self, s, dim, norm)


@aten_op("aten::fft_ihfft2")
def aten_fft_ihfft2(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1), norm: str | None = None) -> TTensor:
    """fft_ihfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"""
    return _ihfftn("fft_ihfft2", self, s, dim, norm)


@aten_op("aten::fft_ihfftn")
def aten_fft_ihfftn(self: TTensor, s: Sequence[int] | None = None, dim: Sequence[int] | None = None, norm: str | None = None) -> TTensor:
    """fft_ihfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"""
    return _ihfftn("fft_ihfftn", self, s, dim, norm)
