"""transformers' custom ops against the op's own torch implementation, at two sizes."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("transformers.integrations.moe")  # registers transformers::grouped_mm_fallback

import torchlib


class GroupedMM(torch.nn.Module):
    def __init__(self, experts: int, k: int, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(experts, k, n))

    def forward(self, x, counts):
        return torch.ops.transformers.grouped_mm_fallback(x, self.weight, torch.cumsum(counts, 0))


@pytest.mark.parametrize("counts", [[3, 0, 2, 1], [1, 4, 0, 0], [2, 1, 1, 0]])
def test_grouped_mm_fallback_two_sizes(counts):
    torch.manual_seed(0)
    model = GroupedMM(4, 8, 5)
    x = torch.randn(sum(counts) + 1, 8)  # one row past offs[-1]: the op leaves it zero
    c = torch.tensor(counts)
    result = torchlib.export(model, (x, c), dynamic_shapes=({0: "rows"}, None))
    for xs, cs in [(x, c), (torch.randn(9, 8), torch.tensor([0, 5, 2, 2]))]:
        torch.testing.assert_close(result(xs, cs), model(xs, cs), rtol=1e-5, atol=1e-5)

