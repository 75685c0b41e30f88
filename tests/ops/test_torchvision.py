"""torchvision's ops (torchlib/ops/torchvision.py) inside exported models. Each function's
values against torchvision's CPU kernel are checked by the conformance table
(tests/opinfo/table/torchvision.py); here: the schemas, and exports with a dynamic number of
boxes, run at several sizes."""

from __future__ import annotations

import inspect

import pytest
import torch

import torchlib
from torchlib.conformance import torchvision_reference as reference
from torchlib.ops import torchvision as ops

reference.register()  # torch.ops.torchvision.* where torchvision's compiled ops do not load


@pytest.mark.parametrize("name", sorted(reference.SCHEMAS))
def test_docstring_is_torchvisions_schema(name):
    assert inspect.getdoc(getattr(ops, f"torchvision_{name}")).split("\n")[0] == reference.SCHEMAS[name]


def boxes(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 20
    return torch.cat([xy, xy + torch.rand(n, 2, generator=g) * 8], 1)


class Detector(torch.nn.Module):
    """What a two-stage detector's head does: NMS over boxes, then pooling of the kept ones."""

    def forward(self, features, dets, scores):
        keep = torch.ops.torchvision.nms(dets, scores, 0.5)
        kept = dets[keep]
        rois = torch.cat([torch.zeros_like(kept[:, :1]), kept], 1)
        pooled = torch.ops.torchvision.roi_align(features, rois, 0.25, 3, 3, 2, True)
        return keep, pooled.mean(dim=(2, 3))


def test_detector_head_with_a_dynamic_number_of_boxes():
    features = torch.randn(1, 8, 8, 8)
    result = torchlib.export(Detector(), (features, boxes(40, 0), torch.rand(40)),
                             dynamic_shapes=(None, {0: "boxes"}, {0: "boxes"}))
    for n, seed in [(40, 1), (7, 2), (0, 3), (200, 4)]:
        args = (features, boxes(n, seed), torch.rand(n, generator=torch.Generator().manual_seed(seed)))
        expected = Detector()(*args)
        got = result(*args)
        assert torch.equal(got[0], expected[0]), n
        torch.testing.assert_close(got[1], expected[1])


def test_nms_takes_onnxruntimes_op_for_well_formed_boxes_and_the_loop_otherwise():
    class Nms(torch.nn.Module):
        def forward(self, dets, scores):
            return torch.ops.torchvision.nms(dets, scores, 0.3)

    result = torchlib.export(Nms(), (boxes(10, 0), torch.rand(10)), dynamic_shapes=({0: "n"}, {0: "n"}))
    graph = result.model_proto.graph
    (branch,) = [n for n in graph.node if n.op_type == "If"]
    kinds = {a.name: {n.op_type for n in a.g.node} for a in branch.attribute}
    assert "NonMaxSuppression" in kinds["then_branch"] and "Loop" in kinds["else_branch"]
    swapped = boxes(12, 5)
    swapped[3] = swapped[3][[2, 3, 0, 1]]  # x1 > x2: onnxruntime would reorder the corners, torchvision does not
    scores = torch.rand(12)
    assert torch.equal(result(swapped, scores), reference.nms(swapped, scores, 0.3))


def test_pooling_ops_export_with_a_dynamic_number_of_rois():
    class Pools(torch.nn.Module):
        def forward(self, x, rois):
            a, _ = torch.ops.torchvision.roi_pool(x, rois, 0.5, 2, 2)
            b, _ = torch.ops.torchvision.ps_roi_align(x, rois, 0.5, 2, 2, -1)
            c, _ = torch.ops.torchvision.ps_roi_pool(x, rois, 0.5, 2, 2)
            return a, b, c

    def rois(k: int) -> torch.Tensor:
        return torch.cat([torch.randint(0, 2, (k, 1)).float(), boxes(k, k)], 1)

    x = torch.randn(2, 8, 12, 12)
    result = torchlib.export(Pools(), (x, rois(5)), dynamic_shapes=(None, {0: "rois"}))
    for k in (5, 1, 9):
        r = rois(k)
        for got, expected in zip(result(x, r), Pools()(x, r), strict=True):
            torch.testing.assert_close(got, expected)


class Deformable(torch.nn.Module):
    """A DCNv2 block: offsets and mask predicted by a convolution, then deform_conv2d."""

    def __init__(self):
        super().__init__()
        self.predict = torch.nn.Conv2d(4, 3 * 2 * 9, 3, padding=1)  # 2 offset groups: 2*2*9 offsets, 2*9 mask
        self.weight = torch.nn.Parameter(torch.randn(6, 2, 3, 3))
        self.bias = torch.nn.Parameter(torch.randn(6))

    def forward(self, x):
        p = self.predict(x)
        offset, mask = p[:, :36], p[:, 36:].sigmoid()
        return torch.ops.torchvision.deform_conv2d(x, self.weight, offset * 3, mask, self.bias, 1, 1, 1, 1, 1, 1, 2, 2, True)


@pytest.mark.parametrize("exact_nan", [True, False])
def test_deform_conv2d_exports_with_dynamic_batch_and_size(exact_nan):
    torch.manual_seed(0)
    model = Deformable().eval()
    result = torchlib.export(model, (torch.randn(2, 4, 9, 8),), exact_nan=exact_nan,
                             dynamic_shapes=({0: "batch", 2: "h", 3: "w"},))
    ops_used = {n.op_type for n in result.model_proto.graph.node}
    assert ("DeformConv" in ops_used) is not exact_nan
    for shape in [(2, 4, 9, 8), (1, 4, 5, 11), (3, 4, 16, 7)]:
        x = torch.randn(shape)
        torch.testing.assert_close(result(x), model(x), rtol=1e-4, atol=1e-4)


@pytest.mark.usefixtures("exact_nan_mode")
def test_deform_conv2d_next_to_an_inf_pixel_is_torchvisions():
    """An inf pixel meets a zero bilinear weight only where torchvision's kernel multiplies them
    (inf * 0 = NaN); onnxruntime's DeformConv gives NaN at more places, so the default does not
    use it."""
    x = torch.randn(2, 4, 7, 6)
    x[0, 0, 0, :3] = torch.tensor([float("nan"), float("inf"), float("-inf")])
    g = torch.Generator().manual_seed(0)
    args = (x, torch.randn(6, 2, 3, 3, generator=g), torch.randn(2, 36, 4, 3, generator=g) * 2,
            torch.rand(2, 18, 4, 3, generator=g), torch.randn(6, generator=g), 2, 2, 1, 1, 1, 1, 2, 2, True)
    expected = reference.deform_conv2d(*args)
    torch.testing.assert_close(torch.as_tensor(ops.torchvision_deform_conv2d(*args)), expected, equal_nan=True)
    assert int(expected.isnan().sum()) > 0


def test_torchvision_python_api_when_installed():
    torchvision = pytest.importorskip("torchvision")
    d = boxes(30, 7)
    s = torch.rand(30)
    labels = torch.randint(0, 3, (30,))

    class Batched(torch.nn.Module):
        def forward(self, d, s, labels):
            return torchvision.ops.batched_nms(d, s, labels, 0.4)

    result = torchlib.export(Batched(), (d, s, labels), dynamic_shapes=({0: "n"}, {0: "n"}, {0: "n"}))
    for n in (30, 11):
        args = (boxes(n, n), torch.rand(n), torch.randint(0, 3, (n,)))
        assert torch.equal(result(*args), Batched()(*args))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("aligned", [False, True])
def test_reference_roi_align_fixed_grid_is_the_loop_port(dtype, aligned):
    """The vectorized kernel register() installs for a fixed sampling grid (what the detection
    models run in eager) gives the loop port's answer bit for bit."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 5, 9, 11, generator=g).to(dtype)
    corners = torch.rand(7, 4, generator=g) * 30 - 8
    corners[:, 2:] = torch.maximum(corners[:, 2:], corners[:, :2])
    rois = torch.cat([torch.randint(0, 2, (7, 1), generator=g).float(), corners], 1).to(dtype)
    expected = reference.roi_align(x, rois, 0.5, 3, 4, 2, aligned)
    assert torch.equal(reference._roi_align_grid(x, rois, 0.5, 3, 4, 2, aligned), expected)
