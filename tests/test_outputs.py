"""Outputs a command cannot write: refused in one line (exit 2) before any work starts, or, when
writing fails only at the end of a run, kept in the run's directory with both paths named."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
import trio

from specswarm.cli import main
from specswarm.plan import FoldState
from specswarm.protocol.events import read_event_log
from specswarm.render import render_plan
from specswarm.swarm.launcher.progress import Progress
from specswarm.swarm.launcher.run import Launch, PlanRequest, finish
from specswarm.swarm.launcher.watch import Outcome
from specswarm.swarm.observe import observe_until_complete
from specswarm.swarm.outputs import OutputError, unwritable
from specswarm.testing.synth import Swarm

ROOT = Path(__file__).resolve().parent.parent
GOAL = str(ROOT / "goals" / "tiny.yaml")
LOG = str(ROOT / "docs" / "examples" / "japan-events.jsonl")
LONG = "n" * 300  # longer than any file system's name limit
JOIN = "/ip4/127.0.0.1/tcp/9"

CASES = {
    "plan --out under a file": (
        ["plan", GOAL, "--out", "afile/x.md"],
        "--out afile/x.md: cannot write the plan there: afile is not a directory",
    ),
    "plan --events a directory": (
        ["plan", GOAL, "--events", "adir"],
        "--events adir: cannot write the event log there: it is a directory",
    ),
    "plan --report too long": (
        ["plan", GOAL, "--report", f"new/{LONG}"],
        f"--report new/{LONG}: cannot write the run report there: File name too long",
    ),
    "plan --events, its keys too long": (
        ["plan", GOAL, "--events", "e" * 250],
        f"--events {'e' * 250}: cannot write the run's keys beside it ({'e' * 250}.keys.json): "
        "File name too long",
    ),
    "plan --cache under a file": (
        ["plan", GOAL, "--cache", "afile/c"],
        "--cache {tmp}/afile/c: cannot use it as the answer cache: {tmp}/afile is not a directory",
    ),
    "plan --resume a missing log": (
        ["plan", GOAL, "--resume", "missing.jsonl"],
        "--resume missing.jsonl: cannot read the event log: No such file or directory",
    ),
    "render a missing log": (
        ["render", "missing.jsonl"],
        "missing.jsonl: cannot read event log: No such file or directory",
    ),
    "render a binary file": (["render", "afile.bin"], "afile.bin: cannot read event log: not UTF-8 text"),
    "render a file with no run event": (
        ["render", "afile"],
        "afile: no run event (expected an event log that `plan --events` or `peer --events` wrote)",
    ),
    "render --out a directory": (
        ["render", LOG, "--out", "adir"],
        "--out adir: cannot write the plan there: it is a directory",
    ),
    "observe --out under a file": (
        ["observe", "--join", JOIN, "--out", "afile/p.md"],
        "--out afile/p.md: cannot write the plan there: afile is not a directory",
    ),
    "peer --events under a file": (
        ["peer", "--role", "scorer", "--join", JOIN, "--events", "afile/e.jsonl"],
        "--events afile/e.jsonl: cannot write the event log there: afile is not a directory",
    ),
    "peer --key under a file": (
        ["peer", "--role", "scorer", "--join", JOIN, "--key", "afile/k"],
        "--key afile/k: cannot write the peer's key there: afile is not a directory",
    ),
    "init FILE under a file": (
        ["init", "afile/x.yaml", "--goal", "Plan a picnic"],
        "afile/x.yaml: cannot write the spec there: afile is not a directory",
    ),
    "an OSError no command words": (
        ["peer", "--role", "scorer", "--join", JOIN, "--key", "adir"],
        "error: adir: Is a directory",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_an_unusable_path_is_one_line_and_exit_2_before_any_work(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args, message = CASES[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    (tmp_path / "afile.bin").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "adir").mkdir()
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(runs))  # where a run's directory would go
    monkeypatch.setenv("SPECSWARM_MODEL_BACKEND", "scripted")
    monkeypatch.setattr(sys, "argv", ["specswarm", *args])
    started = time.monotonic()
    with pytest.raises(SystemExit) as info:
        main()
    assert time.monotonic() - started < 5
    assert info.value.code == 2
    assert capsys.readouterr().err == message.format(tmp=tmp_path) + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile", "afile.bin", "runs"]
    assert not list(runs.iterdir()) and not list((tmp_path / "adir").iterdir())  # no run began


def test_the_check_changes_nothing(tmp_path: Path) -> None:
    kept = tmp_path / "kept.md"
    kept.write_text("the plan of yesterday\n")
    os.utime(kept, (1_000_000, 1_000_000))
    assert unwritable(kept) is None
    assert kept.read_text() == "the plan of yesterday\n" and kept.stat().st_mtime == 1_000_000
    assert unwritable(tmp_path / "new" / "deep" / "plan.md") is None
    assert list(tmp_path.iterdir()) == [kept]  # the directories it tried with are gone


def test_a_plan_that_cannot_be_written_at_the_end_is_kept_in_the_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, converged: Swarm
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    from specswarm.swarm.launcher.prepare import prepare_run, start_of

    state = FoldState(converged.events)
    spec = state.plan().spec
    assert spec is not None
    out = Path("out")
    out.mkdir()
    request = PlanRequest(
        Path("goal.yaml"),
        "markdown",
        out / "plan.md",
        out / "events.jsonl",
        None,
        None,
        True,
        out / "report.json",
    )
    run = prepare_run(start_of(spec, resume=None), events_path=request.events_path)
    launch = Launch(request, spec, run, [], Progress(quiet=True))
    shutil.rmtree(out)  # while the run went on, its directory became a file
    out.write_text("")
    with pytest.raises(OutputError) as caught:
        finish(launch, Outcome(status="complete"), state)
    rundir = run.workdir
    lost = "out is not a directory; it is in"
    assert str(caught.value) == (
        f"cannot write the event log to out/events.jsonl: {lost} {rundir}/events.jsonl\n"
        f"cannot write the plan to out/plan.md: {lost} {rundir}/plan.md\n"
        f"cannot write the run report to out/report.json: {lost} {rundir}/report.json\n"
        f"events: {rundir}/events.jsonl"
    )
    assert caught.value.exit_code == 1
    assert (rundir / "plan.md").read_text() == render_plan(state.plan(), "markdown")
    assert len(read_event_log(rundir / "events.jsonl").events) == len(state)
    assert (rundir / "events.jsonl.keys.json").exists()  # --resume takes the log from there
    assert json.loads((rundir / "report.json").read_text())["exit_code"] == 1


def test_an_observer_that_cannot_write_its_plan_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], converged: Swarm
) -> None:
    plan = FoldState(converged.events).plan()

    class Converged:  # the node an observer watches, already complete
        def plan(self) -> object:
            return plan

    (tmp_path / "afile").write_text("")
    out = tmp_path / "afile" / "plan.md"
    with pytest.raises(OutputError) as caught:
        trio.run(observe_until_complete, Converged(), "markdown", out)
    assert (
        str(caught.value)
        == f"cannot write the plan to {out}: {tmp_path}/afile is not a directory; it is on stdout"
    )
    assert capsys.readouterr().out == render_plan(plan, "markdown")
