"""fractional_max_pool2d / fractional_max_pool3d with the given random samples.

As torch's CPU kernel: for each (batch, plane), the window starts along a spatial dim of input
size I, output size O and pool size K are int((i + u)·α) - int(u·α) with α = (I - K) / (O - 1)
computed in the input's dtype (float16/bfloat16 rounded after every operation, as c10::Half
arithmetic does), and the last start is I - K; u is the plane's sample for that dim (2-D:
samples [W, H]; 3-D: [T, H, W]). Each output is the maximum of its window, the index the
flattened position in the plane of the first maximum in row-major window order, or of the last
NaN when the window holds one (torch: `val > max || isnan(val)`). Batch n uses the samples'
row n: extra rows are ignored (an empty batch gives an empty result), too few rows raise, as
in torch.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import ml_dtypes
import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops._helpers import first_rows
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _starts(sample: Value, dtype: types.DType, size: int, out: int, pool: int) -> Value:
    """The window starts [batch, planes, out] along one dim (sample: [batch, planes])."""
    if out == 1:
        return op.ConstantOfShape(op.Concat(op.Shape(sample), [1], axis=0), value=np.array([size - pool], np.int64))
    compute = types.DOUBLE if dtype is types.DOUBLE else types.FLOAT
    numpy_dtype = ml_dtypes.bfloat16 if dtype is types.BFLOAT16 else np.dtype(dtype.numpy).type
    alpha = float(numpy_dtype(size - pool) / numpy_dtype(out - 1))  # rounded to the dtype

    def rounded(v: Value) -> Value:
        return v if compute is dtype else cast_to(cast_to(v, dtype), compute)

    u = op.Unsqueeze(cast_to(sample, compute), [-1])  # [batch, planes, 1]
    i = np.arange(out, dtype=compute.numpy)
    shifted = cast_to(rounded(op.Mul(rounded(op.Add(u, i)), op.CastLike(alpha, u))), types.INT64)  # truncation, >= 0
    offset = cast_to(rounded(op.Mul(u, op.CastLike(alpha, u))), types.INT64)
    starts = op.Sub(shifted, offset)
    last = np.arange(out) == out - 1
    return op.Where(last, np.array(size - pool, np.int64), starts)


def _samples_of_batch(fn: str, x: Value, random_samples: Value, nd: int) -> Value:
    """The rows of random_samples [N', C, nd] for the batch of x [N, C, ...]: the first N.
    torch reads samples[n] for batch n, ignores the extra rows and rejects N' < N (as here)."""
    if random_samples.rank != 3:
        raise ValueError(f"aten::{fn}: random_samples must be 3-D (batch, planes, {nd}), got rank {random_samples.rank}")
    planes = x.known_shape[1]
    _, sample_planes, per_dim = random_samples.known_shape
    if isinstance(per_dim, int) and per_dim != nd:
        raise ValueError(f"aten::{fn}: random_samples must hold {nd} samples per plane, got {per_dim}")
    if isinstance(planes, int) and isinstance(sample_planes, int) and planes != sample_planes:
        raise ValueError(f"aten::{fn}: random_samples has {sample_planes} planes, the input {planes} (torch raises too)")
    return first_rows(random_samples, x, f"aten::{fn}: random_samples has {{have}} rows for an input batch of {{need}}; torch "
                                         "raises too (it needs one row per batch element)")


def _fractional_max_pool(fn: str, self: Value, kernel_size: Sequence[int], output_size: Sequence[int], random_samples: Value) -> tuple[Value, Value]:
    nd = len(kernel_size)
    if len(output_size) != nd or self.rank not in (nd + 1, nd + 2) or self.shape is None:
        raise ValueError(f"aten::{fn}: expects a {nd + 1}-D or {nd + 2}-D input and {nd} kernel and output sizes, got rank {self.rank}")
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::{fn} is defined for floating tensors only, got {self.dtype}")
    batched = self.rank == nd + 2
    x = self if batched else op.Unsqueeze(self, [0])
    dims = list(x.known_shape[2:])
    sizes = [s for s in dims if isinstance(s, int)]
    if len(sizes) != len(dims):
        raise ValueError(f"aten::{fn} needs static spatial sizes, got {dims}")
    for s, k, o in zip(sizes, kernel_size, output_size):
        if o + k - 1 > s:
            raise ValueError(f"aten::{fn}: output size {o} with pool size {k} is too large for input size {s}")
    random_samples = _samples_of_batch(fn, x, random_samples, nd)
    # torch's sample order: 2-D [W, H], 3-D [T, H, W]
    sample_of_dim = [1, 0] if nd == 2 else [0, 1, 2]
    batch_planes = op.Shape(x, start=0, end=2)
    flat_start = None
    for d in range(nd):
        sample = op.Gather(random_samples, np.array(sample_of_dim[d], np.int64), axis=2)  # [batch, planes]
        starts = _starts(sample, self.known_dtype, sizes[d], output_size[d], kernel_size[d])  # [B, C, o_d]
        view = [0, 0] + [1] * nd  # starts along dim d, broadcast over the other output dims
        view[2 + d] = output_size[d]
        stride = int(np.prod(sizes[d + 1:]))
        term = op.Mul(op.Reshape(starts, view), np.array(stride, np.int64))
        flat_start = term if flat_start is None else op.Add(flat_start, term)
    assert flat_start is not None
    # offsets of the window's elements in row-major order, in the flattened plane
    offsets = np.array([sum(o * int(np.prod(sizes[d + 1:])) for d, o in enumerate(combo))
                        for combo in itertools.product(*(range(k) for k in kernel_size))], np.int64)
    positions = op.Add(op.Unsqueeze(flat_start, [-1]), offsets)  # [B, C, *out, window]
    window = len(offsets)
    n_out = int(np.prod(output_size))
    work = types.FLOAT if self.dtype is types.BFLOAT16 else self.known_dtype  # (no bfloat16 Where kernel; exact)
    plane = op.Reshape(cast_to(x, work), op.Concat(batch_planes, [int(np.prod(sizes))], axis=0))  # [B, C, I] (no -1: B may be 0)
    flat_positions = op.Reshape(positions, op.Concat(batch_planes, [n_out * window], axis=0))
    values = op.Reshape(op.GatherElements(plane, flat_positions, axis=2), op.Concat(batch_planes, [n_out, window], axis=0))
    positions = op.Reshape(flat_positions, op.Concat(batch_planes, [n_out, window], axis=0))
    nan = op.IsNaN(values)
    slot = np.arange(window, dtype=np.int64)
    last_nan = op.ReduceMax(op.Where(nan, slot, np.array(-1, np.int64)), [-1], keepdims=1)
    largest = op.ReduceMax(op.Where(nan, op.CastLike(-np.inf, values), values), [-1], keepdims=1)
    first_max = op.ReduceMin(op.Where(op.Equal(values, largest), slot, np.array(window, np.int64)), [-1], keepdims=1)
    chosen = op.Where(op.GreaterOrEqual(last_nan, np.array(0, np.int64)), last_nan, first_max)  # [B, C, n_out, 1]
    out_shape = op.Concat(batch_planes, list(output_size), axis=0)
    result = cast_to(op.Reshape(op.GatherElements(values, chosen, axis=3), out_shape), self.known_dtype)
    indices = op.Reshape(op.GatherElements(positions, chosen, axis=3), out_shape)
    if not batched:
        result, indices = op.Squeeze(result, [0]), op.Squeeze(indices, [0])
    return result, indices


@aten_op("aten::fractional_max_pool2d")
def aten_fractional_max_pool2d(
    self: TFloat, kernel_size: Sequence[int], output_size: Sequence[int], random_samples: TFloat
) -> tuple[TFloat, TInt]:
    """fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) -> (Tensor, Tensor)"""
    return _fractional_max_pool("fractional_max_pool2d", self, kernel_size, output_size, random_samples)


@aten_op("aten::fractional_max_pool3d")
def aten_fractional_max_pool3d(
    self: TFloat, kernel_size: Sequence[int], output_size: Sequence[int], random_samples: TFloat
) -> tuple[TFloat, TInt]:
    """fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples) -> (Tensor, Tensor)"""
    return _fractional_max_pool("fractional_max_pool3d", self, kernel_size, output_size, random_samples)
