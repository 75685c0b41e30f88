import pytest
import torch

from torchlib.ops import elementwise as ew
from torchlib.testing import check_function


@pytest.mark.parametrize(
    "a, b, alpha",
    [
        (torch.tensor([1, 2]), torch.tensor([3.5, 4.0]), 2),
        (torch.tensor([1.0, 2.0], dtype=torch.float16), torch.tensor(3.0), 1),
        (torch.tensor([True, False]), torch.tensor([True, True]), 1),
        (torch.tensor([1, 2]), 2.5, 1),
    ],
)
def test_add_promotes_like_torch(a, b, alpha):
    check_function(ew.aten_add, (a, b), {"alpha": alpha}, expected=torch.add(a, b, alpha=alpha))


def test_sqrt_of_int_is_float():
    x = torch.tensor([4, 9])
    check_function(ew.aten_sqrt, (x,), expected=torch.sqrt(x))
