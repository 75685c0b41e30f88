"""CONTRIBUTING.md names every check CI runs, with the command exactly as .ci/run runs it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ci_commands() -> list[str]:
    """The commands of .ci/run, without comments and the shell's own set-up lines."""
    commands = []
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        command = line.split(" # ")[0].strip()
        if command and not command.startswith(("#", "set ", "cd ")):
            commands.append(command)
    return commands


def test_contributing_names_every_ci_command():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    commands = ci_commands()
    assert {"python -m ruff check .", "python tools/typecheck.py", "python -m pytest -n auto"} <= set(commands)
    missing = [c for c in commands if f"`{c}`" not in text]
    assert missing == [], f"CONTRIBUTING.md's 'The checks CI runs' lacks these commands of .ci/run: {missing}"
