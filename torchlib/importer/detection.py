"""NonMaxSuppression, as onnx's reference selects boxes, vectorised over batches and classes.

The greedy selection (a box is kept unless a kept box of higher score overlaps it more than the
threshold) is one step per candidate over a [batch, class, candidate] mask: a Python loop in
eager mode, `torch.while_loop` under torch.export / torch.compile, so that the number of boxes
stays a dynamic dim and the number of selected boxes is an unbacked one (from `nonzero`)."""

from __future__ import annotations

import torch

from torchlib.importer._common import impl
from torchlib.importer.control_flow import tracing


def _corners(boxes: torch.Tensor, center_point_box: int) -> torch.Tensor:
    """[n, 4] boxes as (x_min, y_min, x_max, y_max): from (y1, x1, y2, x2) in either order of each
    pair, or from (x_center, y_center, width, height)."""
    if center_point_box:
        xc, yc, w, h = boxes.unbind(-1)
        return torch.stack((xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2), dim=-1)
    y1, x1, y2, x2 = boxes.unbind(-1)
    return torch.stack((torch.minimum(x1, x2), torch.minimum(y1, y2), torch.maximum(x1, x2), torch.maximum(y1, y2)), -1)


def _iou(box: torch.Tensor, area: torch.Tensor, others: torch.Tensor, areas: torch.Tensor) -> torch.Tensor:
    """IoU of corner boxes [..., 1, 4] with each of `others` [..., n, 4] (0 where they do not
    overlap or an area is 0), as onnx's reference computes it."""
    w = (torch.minimum(box[..., 2], others[..., 2]) - torch.maximum(box[..., 0], others[..., 0])).clamp(min=0)
    h = (torch.minimum(box[..., 3], others[..., 3]) - torch.maximum(box[..., 1], others[..., 1])).clamp(min=0)
    inter = w * h
    union = area + areas - inter
    valid = (inter > 0) & (area > 0) & (areas > 0) & (union > 0)
    return torch.where(valid, inter / torch.where(valid, union, torch.ones_like(union)), torch.zeros_like(inter))


def _select_step(i: torch.Tensor, keep: torch.Tensor, candidate: torch.Tensor, corners: torch.Tensor,
                 areas: torch.Tensor, threshold: torch.Tensor | float, limit: torch.Tensor) -> torch.Tensor:
    """Decide candidate i (in score order) of every (batch, class): kept when it is a candidate,
    fewer than `limit` are kept, and no kept one overlaps it by more than the threshold. One row
    of IoUs per step: memory stays linear in the number of boxes."""
    at = i.reshape(1)
    iou = _iou(torch.index_select(corners, 2, at), torch.index_select(areas, 2, at), corners, areas)
    blocked = (keep & (iou > threshold)).any(-1)
    take = torch.index_select(candidate, 2, at).squeeze(2) & ~blocked & (keep.sum(-1) < limit)
    column = torch.arange(keep.shape[-1], device=keep.device) == i
    return keep | (column & take[..., None])


@impl("NonMaxSuppression", since=10, center_point_box=0)
def non_max_suppression(boxes: torch.Tensor, scores: torch.Tensor, max_output: torch.Tensor | None = None,
                        iou_threshold: torch.Tensor | None = None, score_threshold: torch.Tensor | None = None, *,
                        center_point_box: int) -> torch.Tensor:
    """[selected, 3] int64 rows (batch, class, box): per batch and class, boxes by decreasing
    score (ties: lower index first), over score_threshold (strictly), each kept unless its IoU
    with a kept one exceeds iou_threshold, at most max_output of them (0 or absent: none)."""
    batches, classes, count = scores.shape
    limit = max_output.reshape(-1)[:1].sum() if max_output is not None else torch.zeros((), dtype=torch.int64)
    order = torch.sort(scores.to(torch.float64), dim=-1, descending=True, stable=True)
    candidate = torch.ones_like(order.values, dtype=torch.bool)
    if score_threshold is not None:
        candidate = order.values > score_threshold.reshape(-1)[0].to(torch.float64)
    threshold = iou_threshold.reshape(-1)[0].to(torch.float64) if iou_threshold is not None else 0.0
    corners = _corners(boxes.to(torch.float64), center_point_box)  # [batch, n, 4]
    corners = torch.gather(corners[:, None].expand(batches, classes, count, 4), 2,
                           order.indices[..., None].expand(batches, classes, count, 4))  # in score order per class
    areas = (corners[..., 2] - corners[..., 0]) * (corners[..., 3] - corners[..., 1])
    keep = torch.zeros_like(candidate)
    if tracing():
        keep = torch.while_loop(
            lambda i, k: i < count,
            lambda i, k: (i + 1, _select_step(i, k, candidate, corners, areas, threshold, limit).clone()),
            (torch.zeros((), dtype=torch.int64), keep))[1]
    else:  # the same steps, over the ranks holding a candidate, until every (batch, class) is full
        for i in torch.nonzero(candidate.any(1).any(0)).reshape(-1):
            if bool((keep.sum(-1) >= limit).all()):
                break
            keep = _select_step(i, keep, candidate, corners, areas, threshold, limit)
    b, c, rank = torch.nonzero(keep, as_tuple=True)
    return torch.stack((b, c, order.indices[b, c, rank]), dim=1)
