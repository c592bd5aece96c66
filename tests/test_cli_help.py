"""Every command's --help: an example, a description for every visible option and argument, plain
metavars; --version and shell completion; `validate DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from specswarm.cli import app

runner = CliRunner()


def _commands() -> list[tuple[str, Any]]:
    """(the command's words after ``specswarm``, its click command), hidden ones left out."""
    out: list[tuple[str, Any]] = []

    def walk(group: Any, prefix: str) -> None:
        for name, cmd in group.commands.items():
            if cmd.hidden:
                continue
            if hasattr(cmd, "commands"):
                walk(cmd, f"{prefix}{name} ")
            else:
                out.append((f"{prefix}{name}", cmd))

    walk(typer.main.get_command(app), "")
    return out


@pytest.mark.parametrize("name, cmd", _commands(), ids=[n for n, _ in _commands()])
def test_every_command_explains_every_parameter_and_shows_an_example(name: str, cmd: Any) -> None:
    for param in cmd.params:
        if getattr(param, "hidden", False) or param.name in ("help",):
            continue
        assert getattr(param, "help", None), f"specswarm {name}: {param.name} has no help"
    shown = runner.invoke(app, [*name.split(), "--help"])
    assert shown.exit_code == 0, shown.output
    assert "Example" in shown.output, f"specswarm {name} --help shows no example"
    assert "<bool>" not in shown.output


def test_version_and_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import version

    import typer.completion

    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0 and shown.output == f"specswarm {version('specswarm')}\n"
    # --show-completion names the shell it finds among the parent processes: none under a
    # detached runner, so the test names it
    monkeypatch.setattr(typer.completion, "_get_shell_name", lambda: "bash")
    shown = runner.invoke(app, ["--show-completion", "bash"])
    assert shown.exit_code == 0 and "complete" in shown.output


def test_validate_takes_a_folder(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    shown = runner.invoke(app, ["validate", str(root / "goals")])
    assert shown.exit_code == 0, shown.output
    assert len(shown.output.splitlines()) == len(list((root / "goals").glob("*.yaml")))
    shown = runner.invoke(app, ["validate", str(tmp_path)])
    assert shown.exit_code == 2 and "no *.yaml or *.yml file in this folder" in shown.output
