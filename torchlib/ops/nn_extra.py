"""Other nn ops: pixel (un)shuffle, channel shuffle, reflection and replication padding, grid
sampling, prelu, rrelu (eval), instance norm, cdist, cosine similarity, pairwise distance.

Shuffles are Reshape/Transpose, so they work for every dtype; shapes come from op.Shape, so they
hold for dynamic dimensions too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import current_exact_nan, op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TReal, TTensor
from graph_builder.types import FLOAT
from torchlib.ops._helpers import as_shape, normalize_dim
from torchlib.ops._kernels import FLOATS, MIN_MAX, OPMATH, like, run_supported
from torchlib.promotion import DEFAULT, DEFAULT_FLOAT, cast_to, elementwise
from torchlib.registry import aten_op


def _check_rank(name: str, x: Value, low: int) -> None:
    if x.rank is None or x.rank < low:
        raise ValueError(f"aten::{name} needs an input of rank >= {low}, got rank {x.rank}")


def _batch(x: Value) -> Value:
    """The product of the dims before the last three, as a 1-element INT64 (1 when there are none)."""
    if x.rank == 3:
        return op.Constant(value_ints=[1])
    return op.ReduceProd(op.Shape(x, end=-3), keepdims=1)


@aten_op("aten::pixel_shuffle")
def aten_pixel_shuffle(self: TTensor, upscale_factor: int) -> TTensor:
    """pixel_shuffle(Tensor self, int upscale_factor) -> Tensor"""
    _check_rank("pixel_shuffle", self, 3)
    r = upscale_factor
    chw = op.Shape(self, start=-3)
    c = op.Div(op.Shape(self, start=-3, end=-2), r * r)
    hw = op.Shape(self, start=-2)
    x = op.Reshape(self, op.Concat(_batch(self), c, op.Constant(value_ints=[r, r]), hw, axis=0), allowzero=1)
    x = op.Transpose(x, perm=[0, 1, 4, 2, 5, 3])  # (B, C, H, r, W, r)
    out_chw = op.Mul(op.Div(chw, [r * r, 1, 1]), [1, r, r])
    return op.Reshape(x, op.Concat(op.Shape(self, end=-3), out_chw, axis=0), allowzero=1)


@aten_op("aten::pixel_unshuffle")
def aten_pixel_unshuffle(self: TTensor, downscale_factor: int) -> TTensor:
    """pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor"""
    _check_rank("pixel_unshuffle", self, 3)
    r = downscale_factor
    chw = op.Shape(self, start=-3)
    h = op.Div(op.Shape(self, start=-2, end=-1), r)
    w = op.Div(op.Shape(self, start=-1), r)
    c = op.Shape(self, start=-3, end=-2)
    r_ = op.Constant(value_ints=[r])
    x = op.Reshape(self, op.Concat(_batch(self), c, h, r_, w, r_, axis=0), allowzero=1)
    x = op.Transpose(x, perm=[0, 1, 3, 5, 2, 4])  # (B, C, r, r, H, W)
    out_chw = op.Div(op.Mul(chw, [r * r, 1, 1]), [1, r, r])
    out_shape = op.Concat(op.Shape(self, end=-3), out_chw, axis=0)
    # torch returns an empty input as it is (shape included): pixel_unshuffle([0, 1, 6, 6], 3)
    # has shape [0, 1, 6, 6], not [0, 9, 2, 2]
    empty = op.Equal(op.ReduceProd(op.Shape(self), keepdims=0), np.array(0, np.int64))  # (no bfloat16 Size)
    return op.Reshape(x, op.Where(empty, op.Shape(self), out_shape), allowzero=1)


def _channel_shuffle(self: Value, groups: Any) -> Value:
    _check_rank("channel_shuffle", self, 3)
    g = as_shape([groups])
    rest = op.ReduceProd(op.Shape(self, start=2), keepdims=1)
    split = op.Concat(op.Shape(self, end=1), g, op.Div(op.Shape(self, start=1, end=2), g), rest, axis=0)
    x = op.Transpose(op.Reshape(self, split, allowzero=1), perm=[0, 2, 1, 3])
    return op.Reshape(x, op.Shape(self), allowzero=1)


@aten_op("aten::channel_shuffle")
def aten_channel_shuffle(self: TTensor, groups: int) -> TTensor:
    """channel_shuffle(Tensor self, SymInt groups) -> Tensor"""
    return _channel_shuffle(self, groups)


@aten_op("aten::native_channel_shuffle")
def aten_native_channel_shuffle(self: TTensor, groups: int) -> TTensor:
    """native_channel_shuffle(Tensor self, SymInt groups) -> Tensor"""
    return _channel_shuffle(self, groups)


_INT64_MAX = 2**63 - 1


def _pad(name: str, self: Value, padding: Sequence[Any], mode: str) -> Value:
    """torch's padding (last dim first: [left, right, top, bottom, ...]) as ONNX Pad over the
    last len(padding) // 2 axes."""
    k = len(padding) // 2
    _check_rank(name, self, k + 1)
    if self.known_dtype.is_bool:
        raise TypeError(f"aten::{name} is not defined for bool tensors (torch raises too)")
    begins = [padding[2 * i] for i in reversed(range(k))]
    ends = [padding[2 * i + 1] for i in reversed(range(k))]
    axes = list(range(self.known_rank - k, self.known_rank))
    x = self
    negative = any(isinstance(q, int) and q < 0 for q in begins + ends)
    if negative and mode == "edge":  # output[j] = input[clamp(j - begin, 0, size - 1)] on each axis
        for axis, begin, end in zip(axes, begins, ends):
            size = op.Shape(x, start=axis, end=axis + 1)
            positions = op.Range(0, op.Squeeze(op.Add(op.Add(size, begin), end), [0]), 1)
            index = op.Clip(op.Sub(positions, begin), op.Constant(value_int=0), op.Squeeze(op.Sub(size, 1), [0]))
            x = op.Gather(x, index, axis=axis)
        return x
    if negative:  # negative reflection padding crops (Slice)
        starts = [-q if isinstance(q, int) and q < 0 else 0 for q in begins]
        stops = [q if isinstance(q, int) and q < 0 else _INT64_MAX for q in ends]
        x = op.Slice(x, starts, stops, axes)
        begins = [0 if isinstance(q, int) and q < 0 else q for q in begins]
        ends = [0 if isinstance(q, int) and q < 0 else q for q in ends]
    return run_supported(lambda y: op.Pad(y, as_shape(begins + ends), None, axes, mode=mode), MIN_MAX, x)


@aten_op("aten::reflection_pad1d")
def aten_reflection_pad1d(self: TReal, padding: Sequence[int]) -> TReal:
    """reflection_pad1d(Tensor self, SymInt[2] padding) -> Tensor"""
    return _pad("reflection_pad1d", self, padding, "reflect")


@aten_op("aten::reflection_pad2d")
def aten_reflection_pad2d(self: TReal, padding: Sequence[int]) -> TReal:
    """reflection_pad2d(Tensor self, SymInt[4] padding) -> Tensor"""
    return _pad("reflection_pad2d", self, padding, "reflect")


@aten_op("aten::reflection_pad3d")
def aten_reflection_pad3d(self: TReal, padding: Sequence[int]) -> TReal:
    """reflection_pad3d(Tensor self, SymInt[6] padding) -> Tensor"""
    return _pad("reflection_pad3d", self, padding, "reflect")


@aten_op("aten::replication_pad1d")
def aten_replication_pad1d(self: TReal, padding: Sequence[int]) -> TReal:
    """replication_pad1d(Tensor self, SymInt[2] padding) -> Tensor"""
    return _pad("replication_pad1d", self, padding, "edge")


@aten_op("aten::replication_pad2d")
def aten_replication_pad2d(self: TReal, padding: Sequence[int]) -> TReal:
    """replication_pad2d(Tensor self, SymInt[4] padding) -> Tensor"""
    return _pad("replication_pad2d", self, padding, "edge")


@aten_op("aten::replication_pad3d")
def aten_replication_pad3d(self: TReal, padding: Sequence[int]) -> TReal:
    """replication_pad3d(Tensor self, SymInt[6] padding) -> Tensor"""
    return _pad("replication_pad3d", self, padding, "edge")


_GRID_MODES = {0: "linear", 1: "nearest", 2: "cubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _grid_sample(input: Value, grid: Value, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Value:
    """ONNX GridSample (2-D or 3-D); float16/bfloat16 sample in float32."""
    mode, padding = _GRID_MODES[interpolation_mode], _GRID_PADDING[padding_mode]

    def sample(x: Value, g: Value) -> Value:
        return op.GridSample(x, g, mode=mode, padding_mode=padding, align_corners=int(align_corners))

    if input.dtype in OPMATH:
        return sample(input, grid)
    return op.Cast(sample(op.Cast(input, to=FLOAT.onnx), op.Cast(grid, to=FLOAT.onnx)), to=input.known_dtype.onnx)


@aten_op("aten::grid_sampler_2d")
def aten_grid_sampler_2d(input: TFloat, grid: TFloat, interpolation_mode: int, padding_mode: int, align_corners: bool) -> TFloat:
    """grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor"""
    if interpolation_mode not in _GRID_MODES or padding_mode not in _GRID_PADDING:
        raise ValueError(f"aten::grid_sampler_2d: interpolation_mode must be 0, 1 or 2 and padding_mode 0, 1 or 2, got {interpolation_mode}, {padding_mode}")
    if not input.known_dtype.is_floating:
        raise TypeError(f"aten::grid_sampler_2d is defined for floating tensors only, got {input.dtype}")
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


@aten_op("aten::grid_sampler_3d")
def aten_grid_sampler_3d(input: TFloat, grid: TFloat, interpolation_mode: int, padding_mode: int, align_corners: bool) -> TFloat:
    """grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor

    ONNX GridSample on 5-D input (trilinear or nearest; torch has no bicubic in 3-D).
    float16/bfloat16 compute in float32."""
    if interpolation_mode not in (0, 1) or padding_mode not in _GRID_PADDING:
        raise ValueError(f"aten::grid_sampler_3d: interpolation_mode must be 0 (bilinear) or 1 (nearest) and padding_mode 0, 1 or 2, got {interpolation_mode}, {padding_mode}")
    if not input.known_dtype.is_floating or input.rank != 5 or grid.rank != 5:
        raise TypeError(f"aten::grid_sampler_3d expects 5-D floating input and grid, got {input.dtype} of rank {input.rank} and grid of rank {grid.rank}")
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


@aten_op("aten::grid_sampler")
def aten_grid_sampler(input: TFloat, grid: TFloat, interpolation_mode: int, padding_mode: int, align_corners: bool) -> TFloat:
    """grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor

    torch's dispatch on CPU: grid_sampler_2d for 4-D input, else grid_sampler_3d (torchvision's
    RAFT calls it through F.grid_sample; without this function each call was decomposed by tracing)."""
    if input.rank == 4:
        return aten_grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)
    return aten_grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)


def _prelu(x: Value, weight: Value) -> Value:
    return run_supported(lambda a, w: op.Where(op.Greater(a, like(0, a)), a, op.Mul(a, w)), FLOATS, x, weight)


@aten_op("aten::_prelu_kernel")
def aten__prelu_kernel(self: TFloat, weight: TFloat) -> TFloat:
    """_prelu_kernel(Tensor self, Tensor weight) -> Tensor"""
    return _prelu(self, weight)


@aten_op("aten::prelu")
def aten_prelu(self: TFloat, weight: TFloat) -> TFloat:
    """prelu(Tensor self, Tensor weight) -> Tensor"""
    if self.rank is not None and self.rank >= 2 and weight.rank == 1:  # one weight per channel (dim 1)
        weight = op.Reshape(weight, as_shape([-1] + [1] * (self.rank - 2)))
    elif self.rank == 0:  # a scalar input keeps its rank: its one weight becomes a scalar too
        weight = op.Reshape(weight, op.Constant(value_ints=[]))
    return _prelu(self, weight)


@aten_op("aten::rrelu")
def aten_rrelu(self: TFloat, lower: float = 0.125, upper: float = 0.3333333333333333, training: bool = False,
               generator: Any = None) -> TFloat:  # fmt: skip
    """rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor"""
    if training:
        raise ValueError("aten::rrelu in training mode (random slopes) is not exported; export in eval mode")
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::rrelu is defined for floating tensors only, got {self.dtype}")
    slope = (lower + upper) / 2
    return run_supported(lambda a: op.Where(op.Greater(a, like(0, a)), a, op.Mul(a, like(slope, a))), FLOATS, self)


@aten_op("aten::instance_norm")
def aten_instance_norm(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat | None, running_var: TFloat | None,
    use_input_stats: bool, momentum: float, eps: float, cudnn_enabled: bool,
) -> TFloat:  # fmt: skip
    """instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor

    Normalizes each (sample, channel) over its spatial dims with its own statistics, or with the
    running statistics when use_input_stats is False (eval mode with track_running_stats). The
    running-statistics update of training mode is not exported (the output does not depend on it)."""
    if not input.known_dtype.is_floating:
        raise TypeError(f"aten::instance_norm is defined for floating tensors only, got {input.dtype}")
    _check_rank("instance_norm", input, 2)
    if not use_input_stats and (running_mean is None or running_var is None):
        raise ValueError("aten::instance_norm: use_input_stats=False needs running_mean and running_var")
    channel = as_shape([-1] + [1] * (input.known_rank - 2))
    wide = input.dtype if input.dtype in OPMATH else FLOAT  # half types compute in float32

    def up(v: Value | None) -> Value | None:
        return v if v is None or v.dtype is wide else op.Cast(v, to=wide.onnx)

    x = input if input.dtype is wide else op.Cast(input, to=wide.onnx)
    w, b, mean, var = (up(v) for v in (weight, bias, running_mean, running_var))
    channels = input.known_shape[1]
    if use_input_stats and wide is FLOAT and input.known_rank >= 3 and isinstance(channels, int) and not current_exact_nan():
        # onnxruntime's InstanceNormalization (one node), float32 statistics as torch's; it
        # differs from torch only for |x| near finfo.max (NaN where torch may give the bias,
        # docs/nan_latency.md)
        scale = w if w is not None else np.ones(channels, np.float32)
        shift = b if b is not None else np.zeros(channels, np.float32)
        y = op.InstanceNormalization(x, scale, shift, epsilon=eps)
        return y if wide is input.dtype else op.Cast(y, to=input.known_dtype.onnx)
    if use_input_stats:
        axes = op.Constant(value_ints=list(range(2, input.known_rank)))
        mean = op.ReduceMean(x, axes, keepdims=1)
        centered = op.Sub(x, mean)
        var = op.ReduceMean(op.Mul(centered, centered), axes, keepdims=1)
    else:
        assert mean is not None and var is not None  # running statistics, checked above
        mean = op.Reshape(mean, channel)
        var = op.Reshape(var, channel)
    # torch runs batch_norm: x * alpha + beta, alpha = invstd * weight, beta = bias - mean * alpha
    # (a variance that overflows, invstd 0, gives the bias, not (x - mean) * 0 = NaN)
    alpha = op.Reciprocal(op.Sqrt(op.Add(var, like(eps, x))))
    if w is not None:
        alpha = op.Mul(alpha, op.Reshape(w, channel))
    beta = op.Neg(op.Mul(mean, alpha))
    if b is not None:
        beta = op.Add(op.Reshape(b, channel), beta)
    y = op.Add(op.Mul(x, alpha), beta)
    return y if wide is input.dtype else op.Cast(y, to=input.known_dtype.onnx)


def _norm(x: Value, p: float, axis: int, keepdims: int) -> Value:
    """The p-norm of x along one axis (torch's vector_norm)."""
    axes = op.Constant(value_ints=[axis])
    if p == 2:
        return op.Sqrt(op.ReduceSum(op.Mul(x, x), axes, keepdims=keepdims))
    if p == 1:
        return op.ReduceSum(op.Abs(x), axes, keepdims=keepdims)
    if p == float("inf"):
        return op.ReduceMax(op.Abs(x), axes, keepdims=keepdims)
    if p == float("-inf"):
        return op.ReduceMin(op.Abs(x), axes, keepdims=keepdims)
    if p == 0:
        return op.ReduceSum(op.Cast(op.Not(op.Equal(x, like(0, x))), to=x.known_dtype.onnx), axes, keepdims=keepdims)
    return op.Pow(op.ReduceSum(op.Pow(op.Abs(x), like(p, x)), axes, keepdims=keepdims), like(1.0 / p, x))


@aten_op("aten::_cdist_forward")
def aten__cdist_forward(x1: TFloat, x2: TFloat, p: float, compute_mode: int | None) -> TFloat:
    """_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor"""
    if not x1.known_dtype.is_floating:
        raise TypeError(f"aten::_cdist_forward is defined for floating tensors only, got {x1.dtype}")
    if p < 0:
        raise ValueError(f"aten::_cdist_forward: p must be >= 0, got {p}")

    def dist(a: Value, b: Value) -> Value:  # (*, P, M), (*, R, M) -> (*, P, R), directly over M
        diff = op.Sub(op.Unsqueeze(a, [-2]), op.Unsqueeze(b, [-3]))
        # NaN as torch's scalar kernel gives it: p=0 sums min(ceil(|d|), 1), NaN for a NaN d (the
        # norm counts it as nonzero); p=inf folds std::max(agg, |d|) from 0, which drops NaN
        if p == 0:
            diff = op.Where(op.IsNaN(diff), diff, op.Cast(op.Not(op.Equal(diff, like(0, diff))), to=diff.known_dtype.onnx))
            p_norm = 1.0
        elif p == float("inf"):
            diff = op.Where(op.IsNaN(diff), like(0, diff), diff)
            p_norm = p
        else:
            p_norm = p
        # the Reshape restores the reduced shape: onnxruntime leaves empty inputs unreduced
        return op.Reshape(_norm(diff, p_norm, -1, 0), op.Shape(diff, end=-1), allowzero=1)

    return run_supported(dist, OPMATH, x1, x2)


@aten_op("aten::cosine_similarity")
@elementwise("x1", "x2", kind=DEFAULT)
def aten_cosine_similarity(x1: TFloat, x2: TFloat, dim: int = 1, eps: float = 1e-08) -> TFloat:
    """cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor"""
    if not x1.known_dtype.is_floating:
        raise TypeError(f"aten::cosine_similarity is defined for floating tensors only, got {x1.dtype}")
    rank = max(x1.known_rank, x2.known_rank)
    axis = normalize_dim(dim, rank)

    def cosine(a: Value, b: Value) -> Value:
        a, b = op.Expand(a, op.Shape(b)), op.Expand(b, op.Shape(a))
        if rank == 0:  # one element along dim 0
            a, b = op.Reshape(a, [1]), op.Reshape(b, [1])
        na = op.Max(_norm(a, 2, axis, 1), like(eps, a))
        nb = op.Max(_norm(b, 2, axis, 1), like(eps, b))
        return op.ReduceSum(op.Mul(op.Div(a, na), op.Div(b, nb)), op.Constant(value_ints=[axis]), keepdims=0)

    return run_supported(cosine, OPMATH, x1, x2)


@aten_op("aten::pairwise_distance")
@elementwise("x1", "x2", kind=DEFAULT)
def aten_pairwise_distance(x1: TFloat, x2: TFloat, p: float = 2, eps: float = 1e-06, keepdim: bool = False) -> TFloat:
    """pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor"""
    if x1.known_dtype.is_bool:
        raise TypeError("aten::pairwise_distance: bool tensors cannot be subtracted (torch raises too)")
    if not x1.known_dtype.is_floating:  # x1 - x2 + eps: a float eps makes the default float dtype
        x1, x2 = op.Cast(x1, to=DEFAULT_FLOAT.onnx), op.Cast(x2, to=DEFAULT_FLOAT.onnx)
    rank = max(x1.known_rank, x2.known_rank)
    axis = max(rank - 1, 0)

    def distance(a: Value, b: Value) -> Value:
        diff = op.Add(op.Sub(a, b), like(eps, a))
        if rank == 0:
            diff = op.Reshape(diff, [1])
        return _norm(diff, p, axis, int(keepdim) if rank > 0 else 0)

    return run_supported(distance, OPMATH, x1, x2)


@aten_op("aten::bilinear")
def aten_bilinear(input1: TReal, input2: TReal, weight: TReal, bias: TReal | None = None) -> TReal:
    """bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor

    y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] (+ bias[o]): input1 times
    weight laid out as [in1, out·in2] (one MatMul), then a MatMul with input2 over j.
    float16/bfloat16 compute in float32 and round once."""
    if weight.rank != 3 or input1.rank is None or input1.rank < 1:
        raise ValueError(f"aten::bilinear expects input1 of rank >= 1 and a 3-D weight, got ranks {input1.rank} and {weight.rank}")
    dtype = input1.known_dtype
    if dtype is types.BOOL or input2.dtype != dtype or weight.dtype != dtype or (bias is not None and bias.dtype != dtype):
        raise TypeError(f"aten::bilinear expects input1, input2, weight and bias of one numeric dtype, got {input1.dtype}, {input2.dtype}, {weight.dtype}")
    work = types.FLOAT if dtype in (types.FLOAT16, types.BFLOAT16) else dtype
    work = types.INT32 if work in (types.INT8, types.UINT8, types.INT16) else work
    x1, x2, w = cast_to(input1, work), cast_to(input2, work), cast_to(weight, work)
    out_in2 = op.Concat(op.Shape(w, start=0, end=1), op.Shape(w, start=2, end=3), axis=0)  # [out, in2]
    w = op.Reshape(op.Transpose(w, perm=[1, 0, 2]), op.Concat(op.Shape(w, start=1, end=2), [-1], axis=0))  # [in1, out*in2]
    left = op.Reshape(op.MatMul(x1, w), op.Concat(op.Shape(x1, start=0, end=-1), out_in2, axis=0), allowzero=1)  # [..., out, in2]
    y = op.Squeeze(op.MatMul(left, op.Unsqueeze(x2, [-1])), [-1])  # (onnxruntime's ReduceSum mishandles an empty batch)
    if bias is not None:
        y = op.Add(y, cast_to(bias, work))
    return cast_to(y, dtype)
