"""torchvision's detection code, made capturable: applied only while torch.export captures a
model, only when the model's code has imported torchvision, and undone after.

torchvision's `batched_nms` (the last step of Faster/Mask R-CNN, RetinaNet, SSD, FCOS) has two
branches that depend on the number of boxes, which depends on the data (how many scores pass
the threshold), so torch.export cannot decide them: non-strict capture fails, and draft_export
would follow the sample's branches, wrong for other images.

- `if boxes.numel() > 4000 (on CPU)`: per-class NMS in a Python loop over the classes present
  (not capturable at all), else one NMS over boxes offset apart by class (the "coordinate
  trick"). Under capture the trick is taken for every count, as torchvision itself does when
  traced for export (`torchvision._is_tracing()`). The two keep the same boxes except where an
  IoU lies within rounding of the threshold: the trick computes IoUs on coordinates shifted
  by class * (max coordinate + 1).
- the trick's `if boxes.numel() == 0` early return: the largest coordinate is taken over the
  boxes and one -inf instead, which is the boxes' own maximum whenever there is a box; with no
  boxes NMS keeps none, as the early return does.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import torch


def _batched_nms(boxes: torch.Tensor, scores: torch.Tensor, idxs: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """torchvision.ops.batched_nms as torchvision traces it, without a data-dependent branch."""
    boxes_module = sys.modules["torchvision.ops.boxes"]
    lowest = boxes.new_full((1,), float("-inf"))
    max_coordinate = torch.cat([boxes.reshape(-1), lowest]).max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    boxes_for_nms = boxes + offsets[:, None]
    return boxes_module.nms(boxes_for_nms, scores, iou_threshold)


@contextlib.contextmanager
def capturable() -> Iterator[None]:
    """Within: torchvision's functions that torch.export cannot capture are replaced by
    equivalents it can (only when the model has imported them)."""
    boxes_module = sys.modules.get("torchvision.ops.boxes")
    if boxes_module is None or not hasattr(boxes_module, "batched_nms"):
        yield
        return
    original = boxes_module.batched_nms
    boxes_module.batched_nms = _batched_nms
    try:
        yield
    finally:
        boxes_module.batched_nms = original
