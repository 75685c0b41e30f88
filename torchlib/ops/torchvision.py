"""torchvision's detection operators, as torch.export records them when a model calls
torchvision.ops (Faster/Mask R-CNN, RetinaNet, SSD, R-FCN, deformable convolutions):
`torchvision::nms`, `roi_align`, `roi_pool`, `ps_roi_align`, `ps_roi_pool`, `deform_conv2d`.
`batched_nms` is Python in torchvision (boxes offset per class, then one `nms`).

Each follows torchvision's CPU kernel (torchvision/csrc/ops/cpu), checked against a port of
that kernel written in torch (torchlib/conformance/torchvision_reference.py), since
torchvision's compiled ops do not load beside torch's CPU wheel.

- nms: onnxruntime's NonMaxSuppression when the boxes are float32 and well formed (x1 <= x2,
  y1 <= y2; decided at run time), which then gives torchvision's answer: candidates by
  decreasing score, ties by index, a box suppressed when its IoU with a kept one is above the
  threshold, the IoU computed in float32 in the same order. Otherwise (other dtypes, boxes with
  a corner swapped or NaN, a negative threshold) the kernel's own loop, exactly: the pairwise
  IoU matrix of the boxes sorted by score and one Loop step per box.
- roi_align and ps_roi_align: onnxruntime has no RoiAlign kernel from opset 22 on (nor
  MaxRoiPool), so the kernel's sampling is written out (`_roi_samples`): every sample's
  coordinate as the kernel computes and clamps it, read by one GridSample (bilinear, corners
  aligned: at exactly those pixel coordinates) over every roi. float16 rounds the coordinates
  in float16 as torchvision's half kernel does, and interpolates in float32 (the half kernel
  rounds every weight and partial sum: the two differ within float16's tolerance).
- roi_pool and ps_roi_pool: each bin's integer window as masks over the roi's image
  [K, C, PH, PW, H, W]; roi_pool takes the first value above -FLT_MAX (NaN and -inf are never
  picked, as in the kernel), its argmax (read only by the backward) comes with it.
- deform_conv2d: the kernel's bilinear sampling written out (GatherElements of the 4 pixels
  around each tap's point) and one MatMul for the grouped convolution; float16 and bfloat16
  compute in float32. onnxruntime's DeformConv (opset 19+) agrees on finite images; on an
  image holding inf and -inf it gives NaN at more outputs than torchvision (12 against 5 per
  channel in the fuzz pass's input), so it is used only with `exact_nan=False`.
"""

from __future__ import annotations

import numpy as np

from graph_builder import GraphBuilder, current_exact_nan, op, types
from graph_builder.evaluator import current_evaluator
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops._helpers import n_outputs, one_output
from torchlib.ops._kernels import like
from torchlib.registry import aten_op


def _float32_threshold(t: float) -> np.float32:
    """The largest float32 <= t: for a float32 x, `x > t` (torchvision compares in double)
    is then exactly `x > threshold` in float32."""
    f = np.float32(t)
    return np.nextafter(f, np.float32(-np.inf)) if float(f) > t else f


def _nms_loop(dets: Value, scores: Value, iou_threshold: float) -> Value:
    """torchvision's nms kernel as written: sort by score (stable, descending), then each box
    in turn, if still kept, suppresses every later box whose IoU with it exceeds the threshold."""
    n = op.Shape(scores)
    order = op.TopK(scores, n, axis=0, largest=1, sorted=1)[1]  # ties keep the lower index first
    boxes = op.Gather(dets, order, axis=0)
    x1, y1, x2, y2 = (op.Gather(boxes, i, axis=1) for i in range(4))
    area = op.Mul(op.Sub(x2, x1), op.Sub(y2, y1))

    def pairwise(v: Value, pick: str) -> Value:
        rows, cols = op.Unsqueeze(v, [1]), op.Unsqueeze(v, [0])
        return op.Max(rows, cols) if pick == "max" else op.Min(rows, cols)

    zero = op.CastLike(0, dets)
    w = op.Max(op.Sub(pairwise(x2, "min"), pairwise(x1, "max")), zero)
    h = op.Max(op.Sub(pairwise(y2, "min"), pairwise(y1, "max")), zero)
    inter = op.Mul(w, h)
    union = op.Sub(op.Add(op.Unsqueeze(area, [1]), op.Unsqueeze(area, [0])), inter)
    threshold = _float32_threshold(iou_threshold) if dets.dtype is types.FLOAT else iou_threshold
    above = op.Greater(op.Div(inter, union), op.CastLike(threshold, dets))
    index = op.Range(0, op.Squeeze(n, [0]), 1)
    later = op.Less(op.Unsqueeze(index, [1]), op.Unsqueeze(index, [0]))
    suppress = op.And(above, later)  # [i, j]: kept box i (in score order) removes box j

    ev = current_evaluator()
    body = ev.subgraph("nms_step") if isinstance(ev, GraphBuilder) else GraphBuilder(name="nms_step")
    i = body.input("i", types.INT64, [])
    body.input("cond", types.BOOL, [])
    keep = body.input("keep", types.BOOL, [None])
    table = body.input("suppress", types.BOOL, [None, None])
    with body:
        kills = op.And(op.Gather(table, i, axis=0), op.Gather(keep, i, axis=0))
        body.output(op.Constant(value=np.array(True)))
        body.output(op.And(keep, op.Not(kills)))
        body.output(table)
    all_kept = op.Expand(op.Constant(value=np.array(True)), n)
    kept, _ = n_outputs(op.Loop(op.Squeeze(n, [0]), np.array(True), all_kept, suppress, body=body), 2)
    positions = op.Reshape(op.NonZero(kept), [-1])
    return op.Gather(order, positions, axis=0)


def _nms_onnx(dets: Value, scores: Value, iou_threshold: float) -> Value:
    selected = op.NonMaxSuppression(
        op.Unsqueeze(dets, [0]), op.Unsqueeze(scores, [0, 1]), op.Shape(scores),
        np.array([_float32_threshold(iou_threshold)], np.float32), center_point_box=0)
    return op.Reshape(op.Gather(selected, [2], axis=1), [-1])


@aten_op("torchvision::nms", not_unique="boxes with equal scores may be kept in either order")
def torchvision_nms(dets: TFloat, scores: TFloat, iou_threshold: float) -> TInt:
    """nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"""
    if dets.dtype is not types.FLOAT or iou_threshold < 0:
        return _nms_loop(dets, scores, iou_threshold)
    x1, y1, x2, y2 = (op.Gather(dets, i, axis=1) for i in range(4))
    bad = op.Not(op.And(op.LessOrEqual(x1, x2), op.LessOrEqual(y1, y2)))  # NaN is bad too
    well_formed = op.Equal(op.ReduceSum(op.Cast(bad, to=types.INT64.onnx), keepdims=0), np.array(0, np.int64))
    builder = current_evaluator()
    if not isinstance(builder, GraphBuilder):  # eager: the values are known
        return _nms_onnx(dets, scores, iou_threshold) if bool(well_formed.const_value) else _nms_loop(dets, scores, iou_threshold)
    fast, exact = builder.subgraph("nms_onnx"), builder.subgraph("nms_loop")
    with fast:
        fast.output(_nms_onnx(dets, scores, iou_threshold))
    with exact:
        exact.output(_nms_loop(dets, scores, iou_threshold))
    return one_output(op.If(well_formed, then_branch=fast, else_branch=exact))


# -- RoIAlign -------------------------------------------------------------------------------------


def _column(rois: Value, i: int) -> Value:
    return op.Gather(rois, i, axis=1)


def _grid_axis(start: Value, bin_size: Value, pooled: int, grid: Value | int, count: Value | int,
               extent: Value) -> tuple[Value, Value]:
    """One axis of the kernel's sampling grid, for every roi [K], bin [P] and sample [G]: the
    coordinate the kernel interpolates at (clamped to [0, extent - 1] as the kernel clamps it),
    scaled to GridSample's [-1, 1], and whether the sample is read at all (inside [-1, extent]
    and within the roi's own grid)."""
    dtype = start.dtype
    assert dtype is not None
    samples = op.Range(0, count, 1) if isinstance(count, Value) else np.arange(count, dtype=np.int64)
    s = op.Unsqueeze(op.Cast(samples, to=dtype.onnx), [0, 1])  # [1, 1, G]
    p = op.Unsqueeze(np.arange(pooled).astype(dtype.numpy), [0, 2])  # [1, P, 1]
    start3, bin3 = op.Unsqueeze(start, [1, 2]), op.Unsqueeze(bin_size, [1, 2])
    grid3 = op.Unsqueeze(op.Cast(grid, to=dtype.onnx), [1, 2]) if isinstance(grid, Value) else np.array(grid, dtype.numpy)
    coord = op.Add(op.Add(start3, op.Mul(p, bin3)), op.Div(op.Mul(op.Add(s, op.CastLike(0.5, s)), bin3), grid3))
    size = op.Cast(extent, to=dtype.onnx)
    inside = op.And(op.GreaterOrEqual(coord, op.CastLike(-1.0, coord)), op.LessOrEqual(coord, size))
    if isinstance(grid, Value):
        inside = op.And(inside, op.Less(op.Unsqueeze(samples, [0, 1]), op.Unsqueeze(grid, [1, 2])))
    last = op.Sub(size, op.CastLike(1, size))
    # y <= 0 reads row 0; from the last row on, the last row alone; NaN and unread samples: 0
    coord = op.Where(inside, op.Min(op.Max(coord, op.CastLike(0, coord)), last), op.CastLike(0, coord))
    scaled = op.Sub(op.Div(op.Mul(coord, op.CastLike(2, coord)), last), op.CastLike(1, coord))
    scaled = op.Where(op.Greater(last, op.CastLike(0, last)), scaled, op.CastLike(0, coord))  # a single row
    return scaled, inside


def _roi_samples(input: Value, rois: Value, spatial_scale: float, pooled_height: int, pooled_width: int,
                 sampling_ratio: int, aligned: bool, position_sensitive: bool) -> Value:
    """The RoIAlign kernels' sampling, in the input's dtype (float16 and bfloat16 in float32):
    roi_align (every channel, count at least 1, rois of legacy alignment at least 1x1) or
    ps_roi_align (bin (ph, pw) of output channel c reads input channel (c * PH + ph) * PW + pw;
    count unclamped). The samples' coordinates are the kernel's, clamped as it clamps them;
    GridSample (bilinear, corners aligned, so at those very pixel coordinates) reads them for
    every roi in one call, and each roi keeps the samples of its own image."""
    dtype = input.dtype
    assert dtype is not None
    # the coordinates in the kernel's dtype (float16 rounds them as torchvision's half kernel
    # does); GridSample reads float16 and bfloat16 in float32
    compute = dtype if dtype in (types.FLOAT, types.DOUBLE, types.FLOAT16) else types.FLOAT
    sample = dtype if dtype in (types.FLOAT, types.DOUBLE) else types.FLOAT
    x = input if sample is dtype else op.Cast(input, to=sample.onnx)
    rois = rois if rois.dtype is compute else op.Cast(rois, to=compute.onnx)
    shape = op.Shape(x)
    height, width = op.Gather(shape, 2), op.Gather(shape, 3)
    scale = np.array(spatial_scale, compute.numpy)
    offset = np.array(0.5 if aligned else 0.0, compute.numpy)
    start_w, start_h, end_w, end_h = (op.Sub(op.Mul(_column(rois, i), scale), offset) for i in (1, 2, 3, 4))
    roi_w, roi_h = op.Sub(end_w, start_w), op.Sub(end_h, start_h)
    if not aligned:
        one = np.array(1, compute.numpy)
        roi_w, roi_h = op.Max(roi_w, one), op.Max(roi_h, one)
    bin_h = op.Div(roi_h, np.array(pooled_height, compute.numpy))
    bin_w = op.Div(roi_w, np.array(pooled_width, compute.numpy))
    grid_h: Value | int
    grid_w: Value | int
    count_h: Value | int
    count_w: Value | int
    divisor: Value | np.ndarray
    if sampling_ratio > 0:
        grid_h = grid_w = count_h = count_w = sampling_ratio
        divisor = np.array(sampling_ratio * sampling_ratio, compute.numpy)
    else:
        grid_h = op.Cast(op.Ceil(bin_h), to=types.INT64.onnx)
        grid_w = op.Cast(op.Ceil(bin_w), to=types.INT64.onnx)
        # the largest grid of any roi (0 for none): how many samples each bin is given room for
        count_h = op.ReduceMax(op.Concat(grid_h, np.array([0], np.int64), axis=0), keepdims=0)
        count_w = op.ReduceMax(op.Concat(grid_w, np.array([0], np.int64), axis=0), keepdims=0)
        product = op.Mul(grid_h, grid_w)
        if not position_sensitive:
            product = op.Max(product, np.array(1, np.int64))
        divisor = op.Reshape(op.Cast(product, to=compute.onnx), [-1, 1, 1, 1])
    gy, y_in = _grid_axis(start_h, bin_h, pooled_height, grid_h, count_h, height)  # [K, PH, IY]
    gx, x_in = _grid_axis(start_w, bin_w, pooled_width, grid_w, count_w, width)  # [K, PW, IX]
    # every roi's samples as one row of points [K, PH, IY, PW, IX, (x, y)], the same for each image
    gy5, gx5 = op.Unsqueeze(gy, [3, 4]), op.Unsqueeze(gx, [1, 2])
    full = op.Shape(op.Add(gy5, gx5))  # [K, PH, IY, PW, IX]
    points = op.Concat(op.Unsqueeze(op.Expand(gx5, full), [5]), op.Unsqueeze(op.Expand(gy5, full), [5]), axis=5)
    batch_size = op.Gather(shape, [0])
    points = points if compute is sample else op.Cast(points, to=sample.onnx)
    grid = op.Expand(op.Reshape(points, [1, 1, -1, 2]), op.Concat(batch_size, np.array([1, 1, 2], np.int64), axis=0))
    sampled = op.GridSample(x, grid, align_corners=1, mode="linear", padding_mode="zeros")  # [N, C, 1, M]
    k = op.Gather(full, [0])
    sampled = op.Reshape(sampled, op.Concat(op.Shape(x, end=2), full, axis=0), allowzero=1)  # [N, C, K, PH, IY, PW, IX]
    sampled = op.Transpose(sampled, perm=[2, 0, 1, 3, 4, 5, 6])
    batch = op.Unsqueeze(op.Cast(_column(rois, 0), to=types.INT64.onnx), [1])  # truncated toward 0, as (int)
    sampled = op.GatherND(sampled, batch, batch_dims=1)  # [K, C, PH, IY, PW, IX]
    if position_sensitive:
        bins = pooled_height * pooled_width
        # [K, C_out, bins (channel), PH, IY, PW, IX] -> the channel of each bin: [K, C_out, PH, PW, IY, IX]
        c_out = op.Div(op.Gather(shape, [1]), np.array([bins], np.int64))
        sampled = op.Reshape(sampled, op.Concat(k, c_out, np.array([bins], np.int64), op.Shape(sampled, start=2), axis=0),
                             allowzero=1)
        sampled = op.Transpose(sampled, perm=[0, 1, 3, 5, 2, 4, 6])  # [K, C_out, PH, PW, bins, IY, IX]
        sampled = op.Reshape(sampled, op.Concat(op.Shape(sampled, end=2), np.array([bins, bins], np.int64),
                                                op.Shape(sampled, start=5), axis=0), allowzero=1)
        diagonal = op.Reshape(np.arange(bins, dtype=np.int64), [1, 1, bins, 1, 1, 1])
        index = op.Expand(diagonal, op.Concat(op.Shape(sampled, end=3), np.array([1], np.int64), op.Shape(sampled, start=4), axis=0))
        sampled = op.Reshape(op.GatherElements(sampled, index, axis=3),
                             op.Concat(op.Shape(sampled, end=2), np.array([pooled_height, pooled_width], np.int64),
                                       op.Shape(sampled, start=4), axis=0), allowzero=1)  # [K, C_out, PH, PW, IY, IX]
        mask = op.And(op.Unsqueeze(y_in, [1, 3, 5]), op.Unsqueeze(x_in, [1, 2, 4]))  # [K, 1, PH, PW, IY, IX]
    else:
        sampled = op.Transpose(sampled, perm=[0, 1, 2, 4, 3, 5])  # [K, C, PH, PW, IY, IX]
        mask = op.And(op.Unsqueeze(y_in, [1, 3, 5]), op.Unsqueeze(x_in, [1, 2, 4]))
    total = op.ReduceSum(op.Where(mask, sampled, op.CastLike(0, sampled)), [4, 5], keepdims=0)
    out = op.Div(total, divisor if compute is sample else op.Cast(divisor, to=sample.onnx))
    return out if sample is dtype else op.Cast(out, to=dtype.onnx)


@aten_op("torchvision::roi_align")
def torchvision_roi_align(input: TFloat, rois: TFloat, spatial_scale: float, pooled_height: int, pooled_width: int,
                          sampling_ratio: int, aligned: bool) -> TFloat:
    """roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor"""
    return _roi_samples(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, False)


@aten_op("torchvision::ps_roi_align")
def torchvision_ps_roi_align(input: TFloat, rois: TFloat, spatial_scale: float, pooled_height: int,
                             pooled_width: int, sampling_ratio: int) -> tuple[TFloat, TInt]:
    """ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)"""
    out = _roi_samples(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, True, True)
    return out, _channel_mapping(out, pooled_height, pooled_width)


def _channel_mapping(out: Value, pooled_height: int, pooled_width: int) -> Value:
    """The input channel each output element read: (c * PH + ph) * PW + pw, int32, out's shape."""
    shape = op.Shape(out)
    c_out = op.Gather(shape, 1)
    per = pooled_height * pooled_width
    first = op.Mul(op.Range(0, c_out, 1), np.array(per, np.int64))
    mapping = op.Add(op.Unsqueeze(first, [1, 2]), np.arange(per, dtype=np.int64).reshape(pooled_height, pooled_width))
    return op.Expand(op.Cast(mapping, to=types.INT32.onnx), shape)


# -- RoIPool --------------------------------------------------------------------------------------


def _round_half_away(x: Value) -> Value:
    """C's round(): halves away from zero (ONNX Round goes to even)."""
    magnitude = op.Abs(x)
    whole = op.Floor(magnitude)
    up = op.CastLike(op.GreaterOrEqual(op.Sub(magnitude, whole), op.CastLike(0.5, x)), x)
    return op.Mul(op.Sign(x), op.Add(whole, up))


def _int_bins_axis(start: Value, end: Value, pooled: int, plus_one: int, clip: Value) -> tuple[Value, Value]:
    """roi_pool's and ps_roi_pool's integer bins on one axis: for each roi [K] and bin [P], the
    window [begin, stop) of input rows (or columns), clipped to [0, clip]."""
    length = op.Max(op.Add(op.Sub(end, start), np.array(plus_one, np.int64)), np.array(1, np.int64))
    dtype = types.DOUBLE  # the kernels compute bin sizes in the input's dtype; float64 holds both exactly
    bin_size = op.Div(op.Cast(length, to=dtype.onnx), np.array(pooled, np.float64))
    p = np.arange(pooled, dtype=np.float64)
    lo = op.Cast(op.Floor(op.Mul(op.Unsqueeze(bin_size, [1]), p)), to=types.INT64.onnx)
    hi = op.Cast(op.Ceil(op.Mul(op.Unsqueeze(bin_size, [1]), p + 1)), to=types.INT64.onnx)
    s = op.Unsqueeze(start, [1])
    zero = np.array(0, np.int64)
    return op.Min(op.Max(op.Add(lo, s), zero), clip), op.Min(op.Max(op.Add(hi, s), zero), clip)


def _window(begin: Value, stop: Value, extent: Value) -> Value:
    """[K, P, extent] bool: whether each row lies in each bin's window."""
    index = op.Range(0, extent, 1)
    return op.And(op.GreaterOrEqual(index, op.Unsqueeze(begin, [2])), op.Less(index, op.Unsqueeze(stop, [2])))


def _roi_windows(input: Value, rois: Value, spatial_scale: float, pooled_height: int, pooled_width: int,
                 plus_one: int, clip_last: bool) -> tuple[Value, Value, Value, Value, Value]:
    """The image of each roi [K, C, H, W] (gathered by its batch index), and its bins' row and
    column windows [K, PH, H] and [K, PW, W] with their sizes [K, PH] and [K, PW]."""
    dtype = input.dtype
    assert dtype is not None
    shape = op.Shape(input)
    height, width = op.Gather(shape, 2), op.Gather(shape, 3)
    scale = np.array(spatial_scale, dtype.numpy)
    start_w, start_h, end_w, end_h = (op.Cast(_round_half_away(op.Mul(_column(rois, i), scale)), to=types.INT64.onnx)
                                      for i in (1, 2, 3, 4))
    one = np.array(1, np.int64)
    clip_h, clip_w = (op.Sub(height, one), op.Sub(width, one)) if clip_last else (height, width)
    h0, h1 = _int_bins_axis(start_h, end_h, pooled_height, plus_one, clip_h)
    w0, w1 = _int_bins_axis(start_w, end_w, pooled_width, plus_one, clip_w)
    images = op.Gather(input, op.Cast(_column(rois, 0), to=types.INT64.onnx), axis=0)
    zero = np.array(0, np.int64)
    return (images, _window(h0, h1, height), _window(w0, w1, width),
            op.Max(op.Sub(h1, h0), zero), op.Max(op.Sub(w1, w0), zero))


@aten_op("torchvision::roi_pool")
def torchvision_roi_pool(input: TFloat, rois: TFloat, spatial_scale: float, pooled_height: int,
                         pooled_width: int) -> tuple[TFloat, TInt]:
    """roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) -> (Tensor, Tensor)"""
    dtype = input.dtype
    assert dtype is not None
    images, rows, cols, heights, widths = _roi_windows(input, rois, spatial_scale, pooled_height, pooled_width, 1, False)
    # [K, C, PH, PW, H, W]: the window of each bin; the kernel keeps the first value above
    # -FLT_MAX (so NaN and -inf are never picked), 0 for an empty bin
    inside = op.And(op.Unsqueeze(rows, [1, 3, 5]), op.Unsqueeze(cols, [1, 2, 4]))
    x = op.Unsqueeze(images, [2, 3])
    lowest = np.array(-np.finfo(np.float32).max, dtype.numpy)
    eligible = op.And(inside, op.Greater(x, lowest))
    candidates = op.Where(eligible, x, np.array(-np.inf, dtype.numpy))
    pixels = op.ReduceProd(op.Shape(candidates, start=4), keepdims=1)
    flat = op.Reshape(candidates, op.Concat(op.Shape(candidates, end=4), pixels, axis=0), allowzero=1)  # [K, C, PH, PW, H*W]
    best = op.ReduceMax(flat, [4], keepdims=0)
    first = op.ArgMax(flat, axis=4, keepdims=0, select_last_index=0)
    found = op.ReduceMax(op.Cast(op.Reshape(eligible, op.Shape(flat), allowzero=1), to=types.INT32.onnx), [4], keepdims=0)
    found = op.Cast(found, to=types.BOOL.onnx)
    empty = op.Unsqueeze(op.Or(op.Equal(op.Unsqueeze(heights, [2]), np.array(0, np.int64)),
                               op.Equal(op.Unsqueeze(widths, [1]), np.array(0, np.int64))), [1])  # [K, 1, PH, PW]
    value = op.Where(found, best, op.Where(empty, op.CastLike(0, best), lowest))
    argmax = op.Where(found, op.Cast(first, to=types.INT32.onnx), np.array(-1, np.int32))
    return value, argmax


@aten_op("torchvision::ps_roi_pool")
def torchvision_ps_roi_pool(input: TFloat, rois: TFloat, spatial_scale: float, pooled_height: int,
                            pooled_width: int) -> tuple[TFloat, TInt]:
    """ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) -> (Tensor, Tensor)"""
    # the kernel's windows: no +1 on the roi's size, and clipped to height - 1 / width - 1
    images, rows, cols, heights, widths = _roi_windows(input, rois, spatial_scale, pooled_height, pooled_width, 0, True)
    bins = pooled_height * pooled_width
    k = op.Gather(op.Shape(rois), [0])
    # [K, C_out, PH, PW, H, W]: output channel c's bin (ph, pw) reads input channel (c * PH + ph) * PW + pw
    c_out = op.Div(op.Gather(op.Shape(images), [1]), np.array([bins], np.int64))
    x = op.Reshape(images, op.Concat(k, c_out, np.array([pooled_height, pooled_width], np.int64), op.Shape(images, start=2),
                                     axis=0), allowzero=1)
    inside = op.And(op.Unsqueeze(rows, [1, 3, 5]), op.Unsqueeze(cols, [1, 2, 4]))
    total = op.ReduceSum(op.Where(inside, x, op.CastLike(0, x)), [4, 5], keepdims=0)
    area = op.Unsqueeze(op.Mul(op.Unsqueeze(heights, [2]), op.Unsqueeze(widths, [1])), [1])  # [K, 1, PH, PW]
    empty = op.Equal(area, np.array(0, np.int64))
    out = op.Where(empty, op.CastLike(0, total), op.Div(total, op.CastLike(op.Max(area, np.array(1, np.int64)), total)))
    return out, _channel_mapping(out, pooled_height, pooled_width)


# -- deformable convolution -----------------------------------------------------------------------


@aten_op("torchvision::deform_conv2d")
def torchvision_deform_conv2d(input: TFloat, weight: TFloat, offset: TFloat, mask: TFloat, bias: TFloat,
                              stride_h: int, stride_w: int, pad_h: int, pad_w: int, dilation_h: int, dilation_w: int,
                              groups: int, offset_groups: int, use_mask: bool) -> TFloat:
    """deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor"""
    dtype = input.known_dtype
    compute = dtype if dtype in (types.FLOAT, types.DOUBLE) else types.FLOAT  # half and bfloat16 in float32
    args = [input, weight, offset, bias] + ([mask] if use_mask else [])
    args = [a if a.dtype is compute else op.Cast(a, to=compute.onnx) for a in args]
    x, w, off, b = args[:4]
    m = args[4] if use_mask else None
    if current_exact_nan():
        out = _deform_conv2d_exact(x, w, off, m, b, (stride_h, stride_w), (pad_h, pad_w), (dilation_h, dilation_w),
                                   groups, offset_groups)
    else:  # onnxruntime's kernel: the same on finite images, more NaN than torchvision's around inf pixels
        out = op.DeformConv(x, w, off, b, m, dilations=[dilation_h, dilation_w], group=groups,
                            offset_group=offset_groups, pads=[pad_h, pad_w, pad_h, pad_w], strides=[stride_h, stride_w])
    return out if dtype is compute else op.Cast(out, to=dtype.onnx)


def _deform_conv2d_exact(x: Value, w: Value, off: Value, mask: Value | None, bias: Value, stride: tuple[int, int],
                         pad: tuple[int, int], dilation: tuple[int, int], groups: int, offset_groups: int) -> Value:
    """deform_conv2d_kernel.cpp written out: each tap's sampling point, its bilinear value read
    from the 4 pixels around it (a pixel outside the image reads 0, a point at or beyond one
    pixel outside gives 0), times the mask, then the grouped convolution of those columns as one
    MatMul. Weights and values meet exactly as in the kernel (w1 * v1 + w2 * v2 + w3 * v3 +
    w4 * v4, only the pixels inside the image), so an inf pixel next to a point on a pixel
    centre gives inf * 0 = NaN where torchvision does, and nowhere else."""
    kh, kw = w.static_dim(2), w.static_dim(3)  # the weight's kernel size is static
    taps = kh * kw
    shape = op.Shape(x)
    batch, channels, height, width = (op.Slice(shape, [i], [i + 1]) for i in range(4))
    out_hw = op.Shape(off, start=2)

    def axis(n: Value, s: int, p: int) -> Value:  # out_y * stride - pad, as a float
        count = op.Squeeze(n, [0])
        return op.CastLike(op.Sub(op.Mul(op.Range(np.array(0, np.int64), count, np.array(1, np.int64)), s), p), x)

    rows = op.CastLike(np.array([(k // kw) * dilation[0] for k in range(taps)], np.int64), x)
    cols = op.CastLike(np.array([(k % kw) * dilation[1] for k in range(taps)], np.int64), x)
    base_y = op.Add(op.Reshape(rows, [taps, 1, 1]), op.Unsqueeze(axis(op.Slice(out_hw, [0], [1]), stride[0], pad[0]), [0, 2]))
    base_x = op.Add(op.Reshape(cols, [taps, 1, 1]), op.Unsqueeze(axis(op.Slice(out_hw, [1], [2]), stride[1], pad[1]), [0, 1]))
    # offset [B, G*K*2, OH, OW] -> y, x [B, G, K, OH, OW]
    pairs = op.Reshape(off, op.Concat(batch, [offset_groups, taps, 2], out_hw, axis=0))
    y = op.Add(base_y, op.Squeeze(op.Slice(pairs, [0], [1], [3]), [3]))
    x_ = op.Add(base_x, op.Squeeze(op.Slice(pairs, [1], [2], [3]), [3]))
    h, wd = op.CastLike(height, x), op.CastLike(width, x)
    inside = op.And(op.And(op.Greater(y, like(-1, x)), op.Less(y, h)), op.And(op.Greater(x_, like(-1, x)), op.Less(x_, wd)))
    y_low, x_low = op.Floor(y), op.Floor(x_)
    ly, lx = op.Sub(y, y_low), op.Sub(x_, x_low)
    hy, hx = op.Sub(like(1, x), ly), op.Sub(like(1, x), lx)
    # the image by offset group: [B, G, C/G, H*W]; each corner gathered for every channel of its group
    images = op.Reshape(x, op.Concat(batch, [offset_groups, -1], op.Mul(height, width), axis=0))
    per_group = op.Slice(op.Shape(images), [2], [3])
    flat_shape = op.Concat(batch, [offset_groups, 1, -1], axis=0)
    r0, c0 = op.Cast(y_low, to=types.INT64.onnx), op.Cast(x_low, to=types.INT64.onnx)
    total = None
    for dr, dc, weight in ((0, 0, op.Mul(hy, hx)), (0, 1, op.Mul(hy, lx)), (1, 0, op.Mul(ly, hx)), (1, 1, op.Mul(ly, lx))):
        r, c = op.Add(r0, dr), op.Add(c0, dc)
        ok = op.And(inside, op.And(op.And(op.GreaterOrEqual(r, 0), op.Less(r, height)),
                                   op.And(op.GreaterOrEqual(c, 0), op.Less(c, width))))
        index = op.Where(ok, op.Add(op.Mul(r, width), c), np.array(0, np.int64))
        index = op.Expand(op.Reshape(index, flat_shape), op.Concat(batch, [offset_groups], per_group, [1], axis=0))
        value = op.Where(op.Reshape(ok, flat_shape), op.GatherElements(images, index, axis=3), like(0, x))
        term = op.Mul(op.Reshape(weight, flat_shape), value)
        total = term if total is None else op.Add(total, term)
    assert total is not None
    sampled = op.Where(op.Reshape(inside, flat_shape), total, like(0, x))  # [B, G, C/G, K*OH*OW]
    if mask is not None:
        sampled = op.Mul(op.Reshape(mask, flat_shape), sampled)
    # columns [B, C*K, OH*OW] as the kernel lays them out (channel, then tap), by conv group
    columns = op.Reshape(sampled, op.Concat(batch, [groups, -1], op.ReduceProd(out_hw, keepdims=1), axis=0))
    out_channels = w.static_dim(0)
    kernel = op.Reshape(w, [groups, out_channels // groups, -1])
    out = op.MatMul(kernel, columns)  # [B, groups, O/groups, OH*OW]
    out = op.Reshape(out, op.Concat(batch, [out_channels], out_hw, axis=0))
    return op.Add(out, op.Reshape(bias, [-1, 1, 1]))
