"""torchvision's Python around its detection ops, made traceable while a model is captured.

torchvision.ops.batched_nms picks its algorithm by the number of boxes (a per-class loop over
`torch.unique(idxs)` above 4000 coordinates on CPU, else one `nms` over boxes offset per
class, the "coordinate trick"), and the trick returns early on an empty input: both read
`boxes.numel()`, which in a detection model depends on the data (the boxes left after a score
threshold), so torch.export cannot decide them and falls back to draft_export, which follows
the sample's path (an empty sample gives a graph that always answers nothing).

While capture runs, `patched()` replaces `torchvision.ops.batched_nms` (and the name in
`torchvision.ops.boxes`, through which the detection models call it) with the coordinate
trick written without a branch, the form torchvision itself takes when traced
(`torchvision._is_tracing()`) and the one torch.onnx's exporters record. The per-class loop
and the trick keep the same boxes, except where adding the class offset (the largest
coordinate plus one, times the class) rounds a box's float32 coordinates enough to move an IoU
across the threshold; torchvision's eager above 4000 coordinates may also order equal scores
differently (its final sort is not stable). Nothing is patched unless torchvision is already
imported, and everything is put back afterwards.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import torch


def batched_nms(boxes: torch.Tensor, scores: torch.Tensor, idxs: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """torchvision's `_batched_nms_coordinate_trick` without its `numel() == 0` branch: the
    largest coordinate is taken over the boxes and the dtype's lowest value (what an empty
    input gives; it offsets nothing then)."""
    lowest = boxes.new_full((1,), torch.finfo(boxes.dtype).min)
    max_coordinate = torch.cat([boxes.reshape(-1), lowest]).max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    return torch.ops.torchvision.nms(boxes + offsets[:, None], scores, iou_threshold)


def _multiscale_roi_align(x_filtered: list[torch.Tensor], boxes: list[torch.Tensor], output_size: list[int],
                          sampling_ratio: int, scales: list[float] | None, mapper: Any) -> torch.Tensor:
    """torchvision.ops.poolers._multiscale_roi_align with the number of rois as a size
    (`rois.shape[0]`) rather than `len(rois)`, which asks for a Python int."""
    from torchvision.ops import poolers, roi_align

    if scales is None or mapper is None:
        raise ValueError("scales and mapper should not be None")
    rois = poolers._convert_to_roi_format(boxes)
    if len(x_filtered) == 1:
        return roi_align(x_filtered[0], rois, output_size=output_size, spatial_scale=scales[0],
                         sampling_ratio=sampling_ratio)
    levels = mapper(boxes)
    result = x_filtered[0].new_zeros((rois.shape[0], x_filtered[0].shape[1], *output_size))
    for level, (per_level_feature, scale) in enumerate(zip(x_filtered, scales)):
        idx_in_level = torch.where(levels == level)[0]
        pooled = roi_align(per_level_feature, rois[idx_in_level], output_size=output_size, spatial_scale=scale,
                           sampling_ratio=sampling_ratio)
        result[idx_in_level] = pooled.to(result.dtype)
    return result


def _decode(self: Any, rel_codes: torch.Tensor, boxes: list[torch.Tensor]) -> torch.Tensor:
    """BoxCoder.decode without its two `if box_sum > 0:` (the number of boxes may depend on the
    data): the codes [boxes, 4 * classes] (or [boxes, classes, 4]) decode to [boxes, classes, 4],
    also when there are no boxes (torchvision's eager then returns [0, 4 * classes], empty too)."""
    return self.decode_single(rel_codes.flatten(1), torch.cat(boxes, dim=0)).unflatten(1, (-1, 4))


def paste_masks_in_image(masks: torch.Tensor, boxes: torch.Tensor, img_shape: tuple[int, int],
                         padding: int = 1) -> torch.Tensor:
    """torchvision.models.detection.roi_heads.paste_masks_in_image for every detection at once.

    torchvision resizes each padded mask [M + 2p, M + 2p] with F.interpolate(bilinear,
    align_corners=False) to its box's integer size (w = x2 - x0 + 1, at least 1) and pastes it
    at the box's corner, clipped to the image: a Python loop over the detections with a shape per
    detection. Here the resize is separable: out = Ry @ mask @ Rx^T, where the row of Ry for
    image row y holds the two bilinear weights of the source rows that F.interpolate's CPU
    kernel samples (scale = in / out in float32, src = max(scale * (y - y0 + 0.5) - 0.5, 0),
    i0 = floor(src), i1 = min(i0 + 1, in - 1), lambda = src - i0), and is zero outside
    [y0, y2]; likewise Rx for the columns. Boxes are expanded and rounded by torchvision's own
    expand_masks / expand_boxes. Same values within float32 rounding, for boxes with x2 >= x0
    and y2 >= y0 (a detector's boxes)."""
    from torchvision.models.detection import roi_heads

    masks, scale = roi_heads.expand_masks(masks, padding=padding)
    boxes = roi_heads.expand_boxes(boxes, scale).to(dtype=torch.int64)
    im_h, im_w = img_shape
    rows = _bilinear_weights(boxes[:, 1], boxes[:, 3], masks.shape[-2], im_h, masks.dtype)
    columns = _bilinear_weights(boxes[:, 0], boxes[:, 2], masks.shape[-1], im_w, masks.dtype)
    return (rows @ masks[:, 0] @ columns.transpose(1, 2))[:, None]


def _bilinear_weights(start: torch.Tensor, end: torch.Tensor, size: int, image_size: int,
                      dtype: torch.dtype) -> torch.Tensor:
    """[detections, image_size, size]: the weights of F.interpolate(bilinear, align_corners=False)
    from `size` source pixels to the end - start + 1 pixels of each box, placed at image pixels
    start..end (zero elsewhere)."""
    out_size = (end - start + 1).clamp(min=1)
    scale = torch.tensor(size, dtype=torch.float32) / out_size.to(torch.float32)
    pixel = torch.arange(image_size, device=start.device)
    local = (pixel[None, :] - start[:, None]).to(torch.float32)
    source = (scale[:, None] * (local + 0.5) - 0.5).clamp(min=0)
    low = source.floor().to(torch.int64).clamp(max=size - 1)
    high = (low + 1).clamp(max=size - 1)
    weight_high = (source - low.to(torch.float32)).clamp(0, 1)
    inside = ((pixel[None, :] >= start[:, None]) & (pixel[None, :] <= end[:, None])).to(torch.float32)
    index = torch.arange(size, device=start.device)
    weights = ((1 - weight_high) * inside)[:, :, None] * (index == low[:, :, None]).to(torch.float32) \
        + (weight_high * inside)[:, :, None] * (index == high[:, :, None]).to(torch.float32)
    return weights.to(dtype)


# (module, attribute path, stand-in)
_STAND_INS = (
    ("torchvision.ops", "batched_nms", batched_nms),
    ("torchvision.ops.boxes", "batched_nms", batched_nms),
    ("torchvision.ops.poolers", "_multiscale_roi_align", _multiscale_roi_align),
    ("torchvision.models.detection._utils", "BoxCoder.decode", _decode),
    ("torchvision.models.detection.roi_heads", "paste_masks_in_image", paste_masks_in_image),
    ("torchvision.models.detection.transform", "paste_masks_in_image", paste_masks_in_image),
)


@contextlib.contextmanager
def patched() -> Iterator[None]:
    """The stand-ins above replace torchvision's functions inside the block, when torchvision
    is imported; the originals are put back after it."""
    saved = []
    try:
        for module_name, path, stand_in in _STAND_INS:
            owner = sys.modules.get(module_name)
            *parents, attribute = path.split(".")
            for parent in parents:
                owner = getattr(owner, parent, None)
            if owner is not None and hasattr(owner, attribute):
                saved.append((owner, attribute, getattr(owner, attribute)))
                setattr(owner, attribute, stand_in)
        yield
    finally:
        for module, attribute, original in saved:
            setattr(module, attribute, original)
