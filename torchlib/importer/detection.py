"""NonMaxSuppression, as onnxruntime selects boxes, vectorised over batches and classes.

Per (batch, class) the candidates (score over the threshold) are ranked by score, ties by lower
index; a candidate is kept unless a kept one of better rank overlaps it by more than the IoU
threshold; the first max_output_boxes_per_class kept ones are selected. The ranks are decided a
block at a time: a block's boxes are first checked against the boxes kept before it (one matrix
of IoUs), then decided among themselves, where a box is kept as soon as every better-ranked box
that would suppress it has been dropped, and dropped as soon as a kept one suppresses it (each
pass decides at least the best undecided box, usually many). The IoUs are computed in the
boxes' float type with onnxruntime's formula, so that a box at the threshold is decided alike.

Eager mode runs the blocks in a Python loop over the ranks holding a candidate, comparing each
block with the kept boxes only, and stops once every (batch, class) has max_output boxes; under
torch.export / torch.compile the blocks and the passes are `torch.while_loop`s, so that the
number of boxes stays a dynamic (or unbacked) dim and the number selected is an unbacked one
(from `nonzero`). Memory is linear in the number of boxes (a block times the boxes)."""

from __future__ import annotations

import torch

from torchlib.importer._common import impl
from torchlib.importer.control_flow import tracing

BLOCK = 128  # ranks decided together


def _corners(boxes: torch.Tensor, center_point_box: int) -> torch.Tensor:
    """[..., 4] boxes as (x_min, y_min, x_max, y_max): from (y1, x1, y2, x2) in either order of each
    pair, or from (x_center, y_center, width, height)."""
    if center_point_box:
        xc, yc, w, h = boxes.unbind(-1)
        half_w, half_h = w / 2, h / 2
        return torch.stack((xc - half_w, yc - half_h, xc + half_w, yc + half_h), dim=-1)
    y1, x1, y2, x2 = boxes.unbind(-1)
    return torch.stack((torch.minimum(x1, x2), torch.minimum(y1, y2), torch.maximum(x1, x2), torch.maximum(y1, y2)), -1)


def _suppresses(a: torch.Tensor, area_a: torch.Tensor, b: torch.Tensor, area_b: torch.Tensor,
                threshold: torch.Tensor) -> torch.Tensor:
    """[..., k, m]: whether IoU(a_i, b_j) > threshold, for corner boxes a [..., 4, k] and b
    [..., 4, m] (coordinate-major: each coordinate a contiguous row), as onnxruntime's
    SuppressByIOU computes it: False without an overlap (its checks of empty boxes and unions
    follow: an overlap's area is at most each box's area)."""
    a, b = a.unsqueeze(-1), b.unsqueeze(-2)
    w = (torch.minimum(a[..., 2, :, :], b[..., 2, :, :]) - torch.maximum(a[..., 0, :, :], b[..., 0, :, :])).clamp(min=0)
    h = (torch.minimum(a[..., 3, :, :], b[..., 3, :, :]) - torch.maximum(a[..., 1, :, :], b[..., 1, :, :])).clamp(min=0)
    inter = w * h
    union = area_a.unsqueeze(-1) + area_b.unsqueeze(-2) - inter
    return (inter > 0) & (inter / union > threshold)


def _pass(undecided: torch.Tensor, kept: torch.Tensor, inner: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One pass over a block: keep the undecided boxes that no undecided or kept box of better
    rank suppresses, then drop the undecided ones that a kept box suppresses."""
    threatened = ((undecided | kept).unsqueeze(-1) & inner).any(-2)
    kept = kept | (undecided & ~threatened)
    hit = (kept.unsqueeze(-1) & inner).any(-2)
    return undecided & ~kept & ~hit, kept


def _decide_block(rows: torch.Tensor, row_areas: torch.Tensor, open_: torch.Tensor, earlier: torch.Tensor,
                  earlier_areas: torch.Tensor, earlier_kept: torch.Tensor, threshold: torch.Tensor) -> torch.Tensor:
    """The kept boxes among a block's ranks (rows [..., 4, k], open_: a candidate not yet decided),
    given the boxes of better rank before the block (earlier [..., 4, m], earlier_kept [..., m])."""
    blocked = (_suppresses(rows, row_areas, earlier, earlier_areas, threshold) & earlier_kept.unsqueeze(-2)).any(-1)
    k = rows.shape[-1]
    before = torch.arange(k, device=rows.device).unsqueeze(-1) < torch.arange(k, device=rows.device)
    inner = _suppresses(rows, row_areas, rows, row_areas, threshold) & before  # [i, j]: i ranks better, suppresses j
    undecided, kept = open_ & ~blocked, torch.zeros_like(open_)
    if tracing():
        return torch.while_loop(lambda u, k_: u.any(), lambda u, k_: tuple(t.clone() for t in _pass(u, k_, inner)),
                                (undecided, kept))[1]
    while bool(undecided.any()):
        undecided, kept = _pass(undecided, kept, inner)
    return kept


def _traced_blocks(candidate: torch.Tensor, corners: torch.Tensor, areas: torch.Tensor,
                   threshold: torch.Tensor) -> torch.Tensor:
    """Every rank decided, a block per torch.while_loop step; each block compared with all the
    ranks (those not kept before it masked out)."""

    def step(start: torch.Tensor, keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = keep.shape[-1]
        ranks = start + torch.arange(BLOCK, device=keep.device)
        inside = ranks < n
        at = torch.where(inside, ranks, torch.zeros_like(ranks))
        rows, row_areas = torch.index_select(corners, -1, at), torch.index_select(areas, -1, at)
        open_ = torch.index_select(candidate, -1, at) & inside
        kept = _decide_block(rows, row_areas, open_, corners, areas, keep, threshold) & inside
        # the block's decisions into place (ranks past the end add a False to rank 0)
        placed = torch.zeros_like(keep, dtype=torch.int64).scatter_add(-1, at.expand(kept.shape), kept.to(torch.int64))
        return start + BLOCK, keep | (placed > 0)

    keep = torch.zeros_like(candidate)
    start = torch.zeros((), dtype=torch.int64, device=keep.device)
    return torch.while_loop(lambda s, k: s < k.shape[-1], lambda s, k: tuple(t.clone() for t in step(s, k)),
                            (start, keep))[1]


def _eager_blocks(candidate: torch.Tensor, corners: torch.Tensor, areas: torch.Tensor, threshold: torch.Tensor,
                  limit: torch.Tensor) -> torch.Tensor:
    """Every rank up to the last candidate decided, a block at a time, each block compared with
    the boxes kept before it only; stops once every (batch, class) holds `limit` kept boxes."""
    keep = torch.zeros_like(candidate)
    ranks = torch.nonzero(candidate.flatten(0, -2).any(0)).reshape(-1)
    end = int(ranks[-1]) + 1 if ranks.numel() else 0
    for start in range(0, end, BLOCK):
        stop = min(start + BLOCK, end)
        before = keep[..., :start]
        most = int(before.sum(-1).max()) if start else 0
        # the kept boxes first, in rank order, per (batch, class)
        first = torch.sort((~before).to(torch.uint8), dim=-1, stable=True).indices[..., :most]
        earlier_kept = torch.gather(before, -1, first)
        earlier = torch.gather(corners, -1, first.unsqueeze(-2).expand(*first.shape[:-1], 4, most))
        keep[..., start:stop] = _decide_block(corners[..., start:stop], areas[..., start:stop],
                                              candidate[..., start:stop], earlier, torch.gather(areas, -1, first),
                                              earlier_kept, threshold)
        if bool((keep.sum(-1) >= limit).all()):
            break
    return keep


@impl("NonMaxSuppression", since=10, center_point_box=0)
def non_max_suppression(boxes: torch.Tensor, scores: torch.Tensor, max_output: torch.Tensor | None = None,
                        iou_threshold: torch.Tensor | None = None, score_threshold: torch.Tensor | None = None, *,
                        center_point_box: int) -> torch.Tensor:
    """[selected, 3] int64 rows (batch, class, box): per batch and class, boxes by decreasing
    score (ties: lower index first), over score_threshold (strictly), each kept unless its IoU
    with a kept one exceeds iou_threshold, at most max_output of them (0 or absent: none)."""
    batches, classes, count = scores.shape
    limit = max_output.reshape(-1)[:1].sum() if max_output is not None else torch.zeros((), dtype=torch.int64)
    order = torch.sort(scores, dim=-1, descending=True, stable=True)
    candidate = torch.ones_like(order.values, dtype=torch.bool)
    if score_threshold is not None:
        candidate = order.values > score_threshold.reshape(-1)[0].to(scores.dtype)
    threshold = (iou_threshold.reshape(-1)[0] if iou_threshold is not None else torch.zeros(())).to(boxes.dtype)
    corners = _corners(boxes, center_point_box)  # [batch, n, 4]
    corners = torch.gather(corners.transpose(1, 2).unsqueeze(1).expand(batches, classes, 4, count), 3,
                           order.indices.unsqueeze(2).expand(batches, classes, 4, count))  # [b, c, 4, rank]
    areas = (corners[:, :, 2] - corners[:, :, 0]) * (corners[:, :, 3] - corners[:, :, 1])
    if tracing():
        keep = _traced_blocks(candidate, corners, areas, threshold)
    else:
        keep = _eager_blocks(candidate, corners, areas, threshold, limit)
    keep = keep & (torch.cumsum(keep.to(torch.int64), -1) <= limit)  # the first max_output kept ones
    b, c, rank = torch.nonzero(keep, as_tuple=True)
    return torch.stack((b, c, order.indices[b, c, rank]), dim=1)
