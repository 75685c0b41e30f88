"""Ops outside ai.onnx: ai.onnx.ml (Binarizer, ArrayFeatureExtractor)."""

from __future__ import annotations

import torch

from torchlib.importer._common import impl


@impl("Binarizer", domain="ai.onnx.ml", threshold=0.0)
def binarizer(x: torch.Tensor, *, threshold: float) -> torch.Tensor:
    return (x > threshold).to(x.dtype)


@impl("ArrayFeatureExtractor", domain="ai.onnx.ml")
def array_feature_extractor(x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    return torch.index_select(x, -1, indices.reshape(-1).to(torch.int64))
