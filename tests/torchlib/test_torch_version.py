"""torchlib/torch_version.py: version conditions and the op probe that registration relies on."""

import pytest

from torchlib.torch_version import TORCH, torch_has_op, torch_matches


def test_conditions_compare_releases_clause_by_clause():
    assert torch_matches(">=2.12,<2.14", (2, 13, 0))
    assert not torch_matches(">=2.12,<2.14", (2, 14, 1))
    assert torch_matches("==2.14", (2, 14, 1))  # every 2.14.x
    assert torch_matches(f"=={TORCH[0]}.{TORCH[1]}")
    with pytest.raises(ValueError, match="not a torch version condition"):
        torch_matches("~=2.14")


def test_op_probe_names_overloads_as_the_registry_does():
    assert torch_has_op("aten::add.Tensor")
    assert torch_has_op("aten::relu")  # the default overload
    assert torch_has_op("linalg_qr")  # a bare name is aten's
    assert not torch_has_op("aten::add.no_such_overload")
    assert not torch_has_op("aten::no_such_op_in_any_torch")
