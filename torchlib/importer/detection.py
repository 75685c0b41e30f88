"""NonMaxSuppression, as onnx's reference selects boxes. Its output's length depends on the data
and the selection is a Python loop over the boxes: eager mode (torch.export cannot capture it)."""

from __future__ import annotations

import torch

from torchlib.importer._common import impl


def _corners(boxes: torch.Tensor, center_point_box: int) -> torch.Tensor:
    """[n, 4] boxes as (x_min, y_min, x_max, y_max): from (y1, x1, y2, x2) in either order of each
    pair, or from (x_center, y_center, width, height)."""
    if center_point_box:
        xc, yc, w, h = boxes.unbind(-1)
        return torch.stack((xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2), dim=-1)
    y1, x1, y2, x2 = boxes.unbind(-1)
    return torch.stack((torch.minimum(x1, x2), torch.minimum(y1, y2), torch.maximum(x1, x2), torch.maximum(y1, y2)), -1)


def _iou(box: torch.Tensor, others: torch.Tensor) -> torch.Tensor:
    """IoU of one corner box with each of `others` (0 where they do not overlap or an area is 0)."""
    w = (torch.minimum(box[2], others[:, 2]) - torch.maximum(box[0], others[:, 0])).clamp(min=0)
    h = (torch.minimum(box[3], others[:, 3]) - torch.maximum(box[1], others[:, 1])).clamp(min=0)
    inter = w * h
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    valid = (inter > 0) & (area > 0) & (areas > 0) & (union > 0)
    return torch.where(valid, inter / torch.where(valid, union, torch.ones_like(union)), torch.zeros_like(inter))


@impl("NonMaxSuppression", since=10, center_point_box=0)
def non_max_suppression(boxes: torch.Tensor, scores: torch.Tensor, max_output: torch.Tensor | None = None,
                        iou_threshold: torch.Tensor | None = None, score_threshold: torch.Tensor | None = None, *,
                        center_point_box: int) -> torch.Tensor:
    """[selected, 3] int64 rows (batch, class, box): per batch and class, boxes by decreasing
    score (ties: lower index first), over score_threshold (strictly), each kept unless its IoU
    with a kept one exceeds iou_threshold, at most max_output of them (0 or absent: none)."""
    limit = int(max_output.reshape(-1)[0]) if max_output is not None and max_output.numel() else 0
    iou_limit = float(iou_threshold.reshape(-1)[0]) if iou_threshold is not None else 0.0
    rows: list[tuple[int, int, int]] = []
    for b in range(boxes.shape[0]):
        corners = _corners(boxes[b].to(torch.float64), center_point_box)
        for c in range(scores.shape[1]):
            s = scores[b, c].to(torch.float64)
            candidates = torch.arange(s.shape[0])
            if score_threshold is not None:
                candidates = candidates[s > float(score_threshold.reshape(-1)[0])]
            order = candidates[torch.sort(s[candidates], descending=True, stable=True).indices]
            kept: list[int] = []
            for i in order.tolist():
                if len(kept) >= limit:
                    break
                if not kept or not bool((_iou(corners[i], corners[kept]) > iou_limit).any()):
                    kept.append(i)
                    rows.append((b, c, i))
    return torch.tensor(rows, dtype=torch.int64).reshape(-1, 3)
