"""Round trips on a transformers decoder with its KV cache and on a torchvision detector:
torchlib.export -> import_onnx -> compared with the original torch model at two sizes -> the
imported module captured by torch.export (dynamic dims kept) -> compared again."""

from __future__ import annotations

import pytest
import torch

from torchlib.conformance import round_trip_models as rt
from torchlib.importer import import_onnx

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def llama():
    model = rt.llama()
    return model, import_onnx(rt.export_decode_step(model).model_proto)


SIZES = [(2, 3, 5, 1), (3, 1, 9, 2)]  # batch, sequence, past, seed: a prompt on a past, a decode step


@pytest.mark.parametrize("batch, sequence, past, seed", SIZES)
def test_imported_llama_decode_step_matches_transformers(llama, batch, sequence, past, seed):
    model, gm = llama
    flat = rt.decode_inputs(batch, sequence, past, seed)
    want = rt.decode_reference(model, flat)
    with torch.no_grad():
        got = gm(*flat)
    assert len(got) == len(want) == 1 + 2 * rt.LAYERS
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


def test_imported_llama_exports_with_dynamic_batch_sequence_and_past(llama):
    model, gm = llama
    program = torch.export.export(gm, tuple(rt.decode_inputs(2, 3, 5, 0)), dynamic_shapes=rt.decode_dynamic_shapes())
    for batch, sequence, past, seed in SIZES + [(1, 4, 2, 3)]:
        flat = rt.decode_inputs(batch, sequence, past, seed)
        for g, w in zip(program.module()(*flat), rt.decode_reference(model, flat)):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def detector():
    """torchvision's Faster R-CNN (MobileNetV3, random weights, calibrated) exported by torchlib
    and imported; the ONNX graph holds If, Loop and NonMaxSuppression."""
    pytest.importorskip("torchvision")
    import torchlib
    from torchlib.conformance.detection_models import MODELS, build, image

    name = "fasterrcnn_mobilenet_v3_large_320_fpn"
    model, size = build(name), MODELS[name][0]
    proto = torchlib.export(model, ([image(size, 0)],), check=False).model_proto
    assert {"If", "Loop"} <= {n.op_type for n in proto.graph.node} | {
        n.op_type for node in proto.graph.node for a in node.attribute for n in a.g.node}
    return model, size, import_onnx(proto), [o.name.split(".")[-1] for o in proto.graph.output]


def _check_detections(model, size, run, keys):
    """The same detections as torchvision (as sets, within 1e-3) at the sample image and another."""
    from torchlib.conformance.detection_models import image, match

    for seed in (0, 1):
        img = image(size, seed)
        with torch.no_grad():
            expected = model([img])[0]
            got = dict(zip(keys, run(img)))
        assert expected["scores"].numel() > 10
        problem = match(expected, got)
        assert problem is None, problem


@pytest.mark.slow
def test_imported_detector_matches_torchvision_at_two_images(detector):
    model, size, gm, keys = detector
    _check_detections(model, size, gm, keys)


@pytest.mark.slow
def test_exported_imported_detector_matches_torchvision_at_two_images(detector):
    """torch.export.export of the imported detector (its Ifs as torch.cond, the Loop and
    NonMaxSuppression as torch.while_loop, the detection counts unbacked), run as a torch
    program, at the sample image and another one."""
    from torchlib.conformance.detection_models import image

    model, size, gm, keys = detector
    program = torch.export.export(gm, (image(size, 0),))
    _check_detections(model, size, program.module(), keys)
