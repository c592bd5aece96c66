"""`plan SPEC --resume LOG` when SPEC was edited since the run began: exit 2 naming every changed
field and both commands; `--spec-changed original` resumes the run as it began (its spec, its
roster), `--spec-changed new` starts a new run of the edited spec. No peer is started here: the
launch is prepared (swarm/launcher/run.py `prepare`) and inspected."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from specswarm.cli import main
from specswarm.protocol.events import write_event_log
from specswarm.resources import template_dir
from specswarm.swarm.launcher.prepare import SpecChangedError, SpecChoice, spec_changes
from specswarm.swarm.launcher.run import Launch, PlanRequest, prepare

SPEC = """\
name: resume-spec
goal: Plan a weekend in Lisbon
roles:
  decomposer: {count: 1}
  scorer: {count: 2}
  executor: {count: 1}
  observer: {count: 1}
model: {backend: scripted}
"""
EDITED = SPEC.replace("Lisbon", "Porto").replace("scorer: {count: 2}", "scorer: {count: 3}") + (
    "prompts: {execute: my-execute.j2}\n"
)


def _prepare(spec: Path, resume: Path | None = None, choice: SpecChoice | None = None) -> Launch:
    events = spec.parent / ("first.jsonl" if resume is None else "second.jsonl")
    request = PlanRequest(spec, None, None, events, None, resume, True, None, spec_changed=choice)
    return prepare(request)


@pytest.fixture
def begun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Launch]:
    """A run of SPEC begun (its run event logged, its keys saved), then SPEC edited to EDITED."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the launches' work directories
    monkeypatch.delenv("SPECSWARM_MODEL_BACKEND", raising=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    first = _prepare(spec)
    with open(first.run.events_path, "w") as fh:
        write_event_log([first.run.run_event], fh)
    execute = (template_dir() / "prompts" / "execute.j2").read_text()
    (tmp_path / "my-execute.j2").write_text(execute + "\nKeep it short.\n")
    spec.write_text(EDITED)
    return spec, first.run.events_path, first


def test_an_edited_spec_stops_the_resume_naming_each_field_and_both_commands(
    begun: tuple[Path, Path, Launch], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, log, _ = begun
    argv = ["specswarm", "plan", "spec.yaml", "--resume", "first.jsonl", "--timeout", "1", "-q"]
    monkeypatch.setattr(sys, "argv", argv)  # (the timeout: a run started by mistake ends soon)
    with pytest.raises(SystemExit) as info:
        main()
    err = capsys.readouterr().err
    assert info.value.code == SpecChangedError.exit_code == 2
    lines = err.splitlines()
    assert lines[0] == (
        "spec.yaml changed since the run in first.jsonl began "
        "(changed: goal, roles.scorer.count, prompts.execute):"
    )
    assert lines[1] == '  goal: "Plan a weekend in Lisbon" -> "Plan a weekend in Porto"'
    assert lines[2] == "  roles.scorer.count: 2 -> 3"
    assert lines[3].startswith('  prompts.execute: "{#- execute: carry out one leaf task.')
    assert "  specswarm plan spec.yaml --resume first.jsonl --spec-changed original" in lines
    assert "  specswarm plan spec.yaml --resume first.jsonl --spec-changed new" in lines
    assert "logs in" not in err  # no peer was started

    monkeypatch.setattr(sys, "argv", ["specswarm", "plan", "spec.yaml", "--spec-changed", "new"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2 and "--spec-changed goes with --resume" in capsys.readouterr().err


def test_spec_changed_original_resumes_the_run_with_the_spec_and_roster_it_began_with(
    begun: tuple[Path, Path, Launch],
) -> None:
    spec, log, first = begun
    launch = _prepare(spec, log, "original")
    assert launch.run.run == first.run.run and launch.run.resumed == log
    assert launch.spec.goal == "Plan a weekend in Lisbon" and spec_changes(launch.spec, first.spec) == []
    assert [p.role for p in launch.peers].count("scorer") == 2  # not the edited 3
    assert launch.run.edits == ("goal", "roles.scorer.count", "prompts.execute")
    assert launch.resume_hint.endswith(f"--resume {launch.run.events_path} --spec-changed original")


def test_spec_changed_new_starts_a_new_run_of_the_edited_spec(begun: tuple[Path, Path, Launch]) -> None:
    spec, log, first = begun
    launch = _prepare(spec, log, "new")
    assert launch.run.run != first.run.run and launch.run.resumed is None
    assert launch.run.preload == [] and launch.run.preload_file is None
    assert launch.spec.goal == "Plan a weekend in Porto"
    assert [p.role for p in launch.peers].count("scorer") == 3
    assert not launch.resume_hint.endswith("original")


def test_an_unchanged_spec_resumes_as_before_whatever_the_flag(begun: tuple[Path, Path, Launch]) -> None:
    spec, log, first = begun
    spec.write_text(SPEC)
    choices: list[SpecChoice | None] = [None, "new"]
    for choice in choices:
        launch = _prepare(spec, log, choice)
        assert launch.run.run == first.run.run and launch.run.resumed == log and launch.run.edits == ()
        assert [e.id for e in launch.run.preload] == [first.run.run_event.id]
