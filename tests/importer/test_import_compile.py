"""torch.compile of imported modules (fullgraph, dynamic shapes): a TransformerEncoder exported
by torchlib with dynamic batch and sequence, at two sizes against torch; NonMaxSuppression (its
torch.while_loops) at two box counts against onnxruntime. The encoder with aot_eager is in the
default suite; inductor (C++ code generation) and the NMS marked slow (15 s and more here)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch
from test_import_detection_ops import _inputs, _nms_model

import torchlib
from torchlib.importer import import_onnx


@pytest.mark.parametrize("backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.slow)])
def test_compiled_imported_encoder_matches_torch(backend):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2).eval()
    gm = import_onnx(torchlib.export(model, (torch.randn(2, 5, 16),),
                                     dynamic_shapes=({0: "batch", 1: "seq"},)).model_proto)
    compiled = torch.compile(gm, backend=backend, fullgraph=True, dynamic=True)
    for shape in ((2, 5, 16), (3, 7, 16)):
        x = torch.randn(*shape)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_compiled_imported_nms_matches_onnxruntime():
    model = _nms_model(0, True)
    names = ["boxes", "scores", "max_output", "iou_threshold", "score_threshold"]
    session = ort.InferenceSession(model.SerializeToString())
    compiled = torch.compile(import_onnx(model), backend="aot_eager", fullgraph=True, dynamic=True)
    for count, seed in ((30, 0), (300, 1)):
        arrays = _inputs(count, seed, 20, 0.4, 0.2)
        (expected,) = session.run(None, dict(zip(names, arrays)))
        np.testing.assert_array_equal(compiled(*map(torch.from_numpy, arrays)).numpy(), expected)
