"""Broken specs through the real entry point: `specswarm validate` and `specswarm plan` both print
one actionable `FILE:LINE: field.path: problem` line per problem and exit 2 (no peer is started)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from specswarm.cli import main

SPECS = Path(__file__).parent / "specs"
BROKEN = sorted(SPECS.glob("*.yaml"))
LINE = re.compile(r"^\S+:\d+: \S+: .+$")


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["specswarm", *args])
    monkeypatch.delenv("SPECSWARM_MODEL_BACKEND", raising=False)
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else 0), out, err


def expectation(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.fullmatch(r"# expect: (\d+: .+)", first)
    assert match, f"{path.name}: the first line must be '# expect: LINE: path: message'"
    return match.group(1).replace("{folder}", str(path.resolve().parent))  # no machine's path in a case


def test_the_corpus_has_the_kinds_the_issue_names() -> None:
    names = {p.stem for p in BROKEN}
    assert {
        "bad-yaml-syntax",
        "wrong-type",
        "unknown-key",
        "unknown-top-level-key",
        "quorum-too-large",
        "missing-template",
        "tab-indent",
        "unclosed-bracket",
        "duplicate-key",
        "template-undefined-name",
        "template-undefined-attribute",
        "template-bad-filter",
        "template-block-syntax-error",
        "template-missing-block",
        "template-unknown-task",
        "alias-bomb",
        "goal-too-long",
        "prompt-outside-folder",
        "output-template-outside-folder",
    } <= names


@pytest.mark.parametrize("command", ["validate", "plan"])
@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_spec_one_line_and_exit_2(
    command: str, path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, command, str(path))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err  # exactly one line
    assert err.startswith(f"{path}:{expectation(path)}")  # the corpus states each line's start
    assert LINE.match(err.rstrip("\n"))
    assert "Traceback" not in err


def _unreadable(tmp_path: Path, kind: str) -> tuple[Path, str]:
    if kind == "directory":  # what a chmod 000 file would be for a non-root user: cannot be read
        path = tmp_path / "spec.yaml"
        path.mkdir()
        return path, "cannot read the spec file: Is a directory"
    if kind == "broken-symlink":
        path = tmp_path / "link.yaml"
        path.symlink_to(tmp_path / "gone.yaml")
        return path, "cannot read the spec file: No such file or directory"
    path = tmp_path / "missing.yaml"
    return path, "cannot read the spec file: No such file or directory"


@pytest.mark.parametrize("command", ["validate", "plan"])
@pytest.mark.parametrize("kind", ["directory", "broken-symlink", "missing"])
def test_unreadable_spec_one_line_and_exit_2(
    command: str,
    kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, message = _unreadable(tmp_path, kind)
    code, out, err = run_cli(monkeypatch, capsys, command, str(path))
    assert (code, out) == (2, "")
    if kind == "directory" and command == "validate":  # validate checks a folder's specs
        message = "no *.yaml or *.yml file in this folder"
        assert err == f"{path}: {message}\n"
        return
    assert err == f"{path}:1: (root): {message}\n"


def test_validate_reports_every_file_and_every_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = [SPECS / "wrong-type.yaml", SPECS / "unknown-key.yaml"]
    missing = tmp_path / "nope.yaml"
    code, out, err = run_cli(monkeypatch, capsys, "validate", *map(str, bad), str(missing))
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"{p}:{expectation(p)}" for p in bad] + [
        f"{missing}:1: (root): cannot read the spec file: No such file or directory"
    ]


def test_plan_needs_an_observer_but_validate_accepts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spec without an observer is valid (peers can be started by hand) but `plan` cannot run it."""
    path = tmp_path / "no-observer.yaml"
    path.write_text(
        "goal: Plan a trip\nroles:\n  decomposer: {count: 1}\n  scorer: {count: 1}\n"
        "  executor: {count: 1}\n  observer: {count: 0}\n"
    )
    code, out, _ = run_cli(monkeypatch, capsys, "validate", str(path))
    assert code == 0 and out == f"{path}: ok (no-observer: 'Plan a trip')\n"
    code, out, err = run_cli(monkeypatch, capsys, "plan", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"{path}:6: roles.observer.count: 0 observers (expected at least 1 to run `plan`: "
        "the launcher reads the plan from it)\n"
    )


HOSTILE = ["alias-bomb", "goal-too-long", "prompt-outside-folder", "output-template-outside-folder"]


@pytest.mark.parametrize(
    "path",
    sorted(SPECS.glob("template-*.yaml")) + [SPECS / f"{n}.yaml" for n in HOSTILE],
    ids=lambda p: p.stem,
)
def test_plan_stops_at_a_bad_template_or_a_hostile_spec_before_any_peer_starts(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The spec's templates are rendered on samples, its aliases, sizes and files bounded while
    it is loaded: no run directory is made, no peer process is spawned."""
    import subprocess
    import tempfile

    spawned: list[object] = []

    def no_popen(*args: object, **kwargs: object) -> None:
        spawned.append(args)
        raise AssertionError("a peer process was started")

    monkeypatch.setattr(subprocess, "Popen", no_popen)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code, out, err = run_cli(monkeypatch, capsys, "plan", str(path))
    assert (code, out) == (2, "")
    assert err == f"{path}:{expectation(path)}\n"
    assert spawned == [] and list(tmp_path.iterdir()) == []
