"""draft_stacks.py: torch's structured-log stacks, taken from the innermost frames, are the
same as torch's own, and draft_export reports the same with them."""

import torch
import torch._logging.structured as structured

from torchlib.exporter.draft_stacks import get_framework_stack, get_user_stack, innermost_stacks


def _stacks() -> list:
    return [structured.get_user_stack(3), get_user_stack(3),
            structured.get_framework_stack(3), get_framework_stack(3),
            structured.get_framework_stack(), get_framework_stack()]


def _caller() -> list:
    return _stacks()


def test_same_frames_as_torch() -> None:
    torch_user, ours_user, torch_fw, ours_fw, torch_fw25, ours_fw25 = _caller()
    assert [f["name"] for f in ours_user][-2:] == ["_caller", "_stacks"]
    assert ours_user == torch_user
    assert ours_fw == torch_fw
    assert ours_fw25 == torch_fw25


class _DataDependent(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = (x > 0).sum().item()
        if n > 3:
            return x[:n] * 2
        return x + 1


def _draft_report() -> str:
    structured.INTERN_TABLE.clear()  # file names reach the report once per process, as the table fills
    program = torch.export.draft_export(_DataDependent(), (torch.arange(-4.0, 4.0),))
    return str(program._report)


def test_draft_export_reports_the_same() -> None:
    torch_report = _draft_report()
    with innermost_stacks():
        ours = _draft_report()
    assert structured.get_user_stack is not get_user_stack  # put back
    assert "test_draft_stacks.py, lineno" in ours and "if n > 3:" in ours  # the user frame, found
    assert ours == torch_report
