"""torchvision's detection models exported end to end (random weights, calibrated: see
torchlib/conformance/detection_models.py), compared with torch eager at the sample image and
at a second one, as sets of detections; the number of detections is a dynamic output dim.
The stand-ins capture uses for torchvision's data-dependent Python (torchvision_capture.py)
are checked against torchvision's own functions."""

from __future__ import annotations

import pytest
import torch

import torchlib
from torchlib.conformance import torchvision_reference
from torchlib.conformance.detection_models import MODELS, NEAR_TIE_SWAPS, build, image, match
from torchlib.exporter import torchvision_capture

torchvision_reference.register()
torchvision = pytest.importorskip("torchvision")
from torchvision.models.detection import roi_heads, transform  # noqa: E402
from torchvision.ops import boxes as box_ops  # noqa: E402
from torchvision.ops import poolers  # noqa: E402


def _boxes(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    corner = torch.rand(n, 2, generator=g) * 60
    boxes = torch.cat([corner, corner + 4 + torch.rand(n, 2, generator=g) * 30], 1)
    return boxes, torch.rand(n, generator=g), torch.randint(0, 4, (n,), generator=g)


@pytest.mark.parametrize("n", [0, 1, 40, 1200])
def test_batched_nms_stand_in_keeps_torchvision_boxes(n):
    """The branch-free coordinate trick keeps torchvision's boxes: the trick itself below 4000
    coordinates, its per-class loop above (1200 boxes), in the same order of scores."""
    boxes, scores, idxs = _boxes(n, n)
    expected = box_ops.batched_nms(boxes, scores, idxs, 0.5)
    assert torch.equal(torchvision_capture.batched_nms(boxes, scores, idxs, 0.5), expected)


def _masks_and_boxes(n: int, height: int, width: int, size: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """n random masks and boxes as a detector gives them (0 <= x0 <= x2, clipped to the image
    before they are expanded): tiny boxes, large ones, some touching the right/bottom edges
    and some starting at 0."""
    g = torch.Generator().manual_seed(seed)
    corner = torch.rand(n, 2, generator=g) * torch.tensor([width, height])
    corner[: n // 4] = 0
    extent = torch.rand(n, 2, generator=g) ** 3 * torch.tensor([width, height]) * 1.2
    extent[n // 4: n // 3] = 0.01
    far = torch.minimum(corner + extent, torch.tensor([width, height], dtype=torch.float32))
    boxes = torch.cat([corner, far], 1)
    return torch.rand(n, 1, size, size, generator=g), boxes


@pytest.mark.parametrize("n, height, width, size", [(0, 20, 30, 28), (1, 9, 7, 28), (60, 64, 48, 28), (40, 33, 57, 5)])
def test_paste_masks_stand_in_matches_torchvision(n, height, width, size):
    """All masks pasted at once (bilinear weights as matrices) give torchvision's per-detection
    F.interpolate and paste, within float32 rounding, zero detections included."""
    masks, boxes = _masks_and_boxes(n, height, width, size, seed=n)
    expected = roi_heads.paste_masks_in_image(masks, boxes, (height, width))
    got = torchvision_capture.paste_masks_in_image(masks, boxes, (height, width))
    assert got.shape == expected.shape == (n, 1, height, width)
    torch.testing.assert_close(got, expected, atol=2e-6, rtol=0)


def test_stand_ins_only_while_patched():
    original = (torchvision.ops.batched_nms, box_ops.batched_nms, poolers._multiscale_roi_align,
                torchvision.models.detection._utils.BoxCoder.decode, roi_heads.paste_masks_in_image,
                transform.paste_masks_in_image)
    with torchvision_capture.patched():
        assert box_ops.batched_nms is torchvision_capture.batched_nms
        assert poolers._multiscale_roi_align is torchvision_capture._multiscale_roi_align
        assert roi_heads.paste_masks_in_image is transform.paste_masks_in_image is torchvision_capture.paste_masks_in_image
    assert (torchvision.ops.batched_nms, box_ops.batched_nms, poolers._multiscale_roi_align,
            torchvision.models.detection._utils.BoxCoder.decode, roi_heads.paste_masks_in_image,
            transform.paste_masks_in_image) == original


class Detector(torch.nn.Module):
    """A score threshold, batched_nms and multi-scale RoIAlign: the data-dependent parts of a
    two-stage detector, small."""

    def __init__(self):
        super().__init__()
        self.pool = torchvision.ops.MultiScaleRoIAlign(["0", "1"], 3, 2)

    def forward(self, features, boxes, scores, labels):
        keep = torch.where(scores > 0.3)[0]
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        keep = box_ops.batched_nms(boxes, scores, labels, 0.5)
        boxes = boxes[keep]
        maps = {"0": features, "1": features[:, :, ::2, ::2]}
        return self.pool(maps, [boxes], [(64, 64)]), boxes


def test_small_detector_exports_without_draft_export():
    features = torch.randn(1, 4, 16, 16)
    model = Detector().eval()
    args = (features, *_boxes(50, 1))
    result = torchlib.export(model, args)
    assert result.capture_strategy == "non-strict"
    assert result.model_proto.graph.output[1].type.tensor_type.shape.dim[0].dim_param  # dynamic: detections
    for seed in (1, 2, 3):
        args = (torch.randn(1, 4, 16, 16), *_boxes(50, seed))
        with torch.no_grad():
            expected = model(*args)
        got = result(*args)
        assert got[1].shape[0] == expected[1].shape[0]
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn",
                                  "ssdlite320_mobilenet_v3_large", "fasterrcnn_resnet50_fpn",
                                  "maskrcnn_resnet50_fpn"])
def test_detection_model_matches_torch_at_two_images(name):
    model = build(name)
    size = MODELS[name][0]
    sample, other = [image(size, 0)], [image(size, 1)]
    result = torchlib.export(model, (sample,), check=False)  # compared below, as sets of detections
    assert result.capture_strategy == "non-strict"
    dims = [o.type.tensor_type.shape.dim[0] for o in result.model_proto.graph.output]
    assert all(d.dim_param and not d.HasField("dim_value") for d in dims), dims  # the number of detections
    for images in (sample, other):
        with torch.no_grad():
            expected = model(images)[0]
        assert expected["scores"].numel() > 10
        problem = match(expected, result(images)[0], swaps=NEAR_TIE_SWAPS.get(name, 0))
        assert problem is None, problem


@pytest.mark.slow
def test_mask_rcnn_eager_with_paste_stand_in_unchanged(monkeypatch):
    """Mask R-CNN in eager gives the same masks with the paste stand-in in place of torchvision's
    per-detection loop (the other stand-ins left out: batched_nms may order ties differently)."""
    name = "maskrcnn_resnet50_fpn"
    model = build(name)
    images = [image(MODELS[name][0], 1)]
    with torch.no_grad():
        expected = model(images)[0]
        for module in (roi_heads, transform):
            monkeypatch.setattr(module, "paste_masks_in_image", torchvision_capture.paste_masks_in_image)
        got = model(images)[0]
    assert expected["masks"].shape[0] == 100
    torch.testing.assert_close(got, expected, atol=2e-6, rtol=0)
