"""torchvision's detection models with random weights, for exporting and comparing with torch
(tests/torchlib/test_detection_models.py, bench/bench_detection.py).

Random weights out of the box give degenerate detectors: with `weights_backbone=None` the
backbones' BatchNorm layers keep their initial statistics (mean 0, variance 1) and the
activations shrink layer by layer (mobilenet_v3's last features have a standard deviation near
1e-8), so every roi gets the same scores and the kept detections are an arbitrary pick among
ties, in torch and in onnxruntime alike. `build()` therefore calibrates: each BatchNorm takes
the statistics of one forward pass on a calibration image (momentum None), as training would
set them, and score thresholds are lowered so that a head initialised to predict background
still reports detections. The scores are then distinct and the answers comparable.

`match()` compares two detection lists as sets: the same number of detections, and each one
expected paired with a detection of the same label, score and box within tolerance (ties of
nearly equal scores may come in another order; torchvision's eager batched_nms over more than
4000 coordinates sorts with an unstable sort).
"""

from __future__ import annotations

from typing import Any

import torch

# name -> (image size, keyword arguments of the factory)
MODELS: dict[str, tuple[int, dict[str, Any]]] = {
    "fasterrcnn_mobilenet_v3_large_320_fpn": (160, {"min_size": 160, "max_size": 160, "box_score_thresh": 0.0}),
    "fasterrcnn_resnet50_fpn": (128, {"min_size": 128, "max_size": 128, "box_score_thresh": 0.0}),
    "retinanet_resnet50_fpn": (128, {"min_size": 128, "max_size": 128, "score_thresh": 0.0}),
    "ssdlite320_mobilenet_v3_large": (160, {"score_thresh": 0.0}),
    "maskrcnn_resnet50_fpn": (128, {"min_size": 128, "max_size": 128, "box_score_thresh": 0.0}),
}

# name -> detections that may differ between torch and onnxruntime through NMS decisions at float32
# noise (match's `swaps`); measured with build(name): 2 at image(size, 0), 1 at image(size, 1)
NEAR_TIE_SWAPS: dict[str, int] = {"maskrcnn_resnet50_fpn": 2}


def image(size: int, seed: int) -> torch.Tensor:
    """A random 3 x size x size image in [0, 1)."""
    return torch.rand(3, size, size, generator=torch.Generator().manual_seed(seed))


def build(name: str, seed: int = 0) -> torch.nn.Module:
    """torchvision.models.detection.<name> with random weights (seeded), BatchNorm calibrated on
    two images, in eval mode."""
    from torchvision.models import detection

    size, kwargs = MODELS[name]
    torch.manual_seed(seed)
    model = getattr(detection, name)(weights=None, weights_backbone=None, **kwargs).eval()
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        model([image(size, 1000 + seed), image(size, 2000 + seed)])
    return model.eval()


def _rows(detections: dict[str, torch.Tensor]) -> torch.Tensor:
    boxes = detections["boxes"].double()
    return torch.cat([detections["labels"].double()[:, None], detections["scores"].double()[:, None], boxes], 1)


def match(expected: dict[str, torch.Tensor], got: dict[str, torch.Tensor], atol: float = 1e-3,
          rtol: float = 1e-3, swaps: int = 0) -> str | None:
    """None when `got` holds the detections of `expected` (as a set, within tolerance, masks
    included when there are any), else what differs.

    Up to `swaps` detections of `expected` may be missing, as many others of `got` taking
    their place: where NMS or the top-`detections_per_img` cut decides between candidates at
    float32 noise (torch and onnxruntime scores differ by ~1e-6): two overlapping boxes of a class
    scored 1.5e-6 apart, an IoU of 0.5000009 against the 0.5 threshold (Mask R-CNN with random
    weights). Masks are compared at the detections paired by box."""
    if set(expected) != set(got):
        return f"keys {sorted(expected)} != {sorted(got)}"
    a, b = _rows(expected), _rows(got)
    if a.shape != b.shape:
        return f"{a.shape[0]} detections expected, {b.shape[0]} given"
    free = torch.ones(b.shape[0], dtype=torch.bool)
    missing = []
    for i, row in enumerate(a):
        close = ((b - row).abs() <= atol + rtol * row.abs()).all(1) & free
        if not close.any():
            missing.append(i)
            continue
        j = int(close.nonzero()[0])
        free[j] = False
        if "masks" in expected:
            diff = (expected["masks"][i].double() - got["masks"][j].double()).abs().max().item()
            if diff > atol * 10:
                return f"detection {i}'s mask differs by {diff}"
    if len(missing) > swaps:
        i = missing[0]
        return f"detection {i} (label, score, box {a[i].tolist()}) has no match ({len(missing)} unmatched)"
    return None
