"""The machinery of bench/bench_decode_sweep.py (issue 34's decode step): the step's inputs are
what generate gives the model at a decode step."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_decode_sweep as sweep  # noqa: E402
import bench_transformers as bench  # noqa: E402


def test_the_step_takes_position_ids_where_generate_gives_them():
    """RoBERTa-like models count their own positions from padding_idx + 1 and generate's from 0:
    the step takes generate's `position_ids` (camembert was 2 of 24 ids equal without them)."""
    bench._torchvision_ops()
    row: dict = {}
    model, inputs, dynamic, cache = sweep._prepare("camembert", "CamembertForCausalLM", row)
    assert cache is not None and row.get("cache") == "DynamicCache"
    assert "position_ids" in inputs and dynamic["position_ids"] == dynamic["input_ids"]
    assert inputs["position_ids"].tolist() == [[5, 6, 7], [5, 6, 7]]  # after a prefill of 5 tokens
