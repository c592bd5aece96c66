"""Stop and resume: a signal to `specswarm plan` stops every peer and keeps the whole event log;
`--resume` continues from it without redoing accepted work (real processes, scripted model)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from specswarm.plan.fold import fold
from specswarm.protocol.events import Event, read_event_log

pytestmark = pytest.mark.slow

# 1 decomposer, depth 2, 4 parts per split -> 5 splits and 16 leaves; one executor with a 1 s
# settle window takes a while over the leaves, so there is time to interrupt after the first split.
SPEC = """\
name: resume-test
goal: Plan a weekend in Lisbon
context: Two adults, spring, mid-range budget.
quorum: 1
roles:
  decomposer: {count: 1, strategies: [by place]}
  scorer: {count: 1}
  executor: {count: 1}
  observer: {count: 1}
tree: {max_depth: 2, min_children: 2, max_children: 4}
model: {backend: scripted}
budget: {seconds: 240, settle_seconds: 1.0, claim_timeout: 60}
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECSWARM_MODEL_", "SPECSWARM_TEST_"))}
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Launch:
    """`specswarm plan` as a child process whose stderr lines are collected as they come."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "specswarm", "plan", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**_env(), **(env or {})},
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_line(self, pattern: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            hit = next((ln for ln in list(self.lines) if re.search(pattern, ln)), None)
            if hit:
                return hit
            assert self.proc.poll() is None, "plan exited early:\n" + "".join(self.lines)[-3000:]
            time.sleep(0.02)
        raise AssertionError(f"no line matching {pattern!r} in {timeout} s:\n" + "".join(self.lines)[-3000:])

    def wait(self, timeout: float = 240) -> int:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code

    @property
    def stderr(self) -> str:
        return "".join(self.lines)


def _calls(report: dict[str, Any]) -> int:
    return sum(int(p["counters"]["model_calls"]) for p in report["peers"])


def _accepted(events: list[Event]) -> set[str]:
    return {n.accepted for n in fold(events).walk() if n.accepted}


def _results(events: list[Event]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in events:
        if e.kind == "result":
            out.setdefault(e.body.leaf, []).append(e.id)
    return out


def _assert_stopped_cleanly(launch: Launch, report: dict[str, Any], events: Path) -> list[Event]:
    # every peer was stopped by the launcher (SIGTERM -> exit 0) and no process is left
    assert [p["exit"] for p in report["peers"]] == [0] * len(report["peers"]), report["peers"]
    for p in report["peers"]:
        with pytest.raises(ProcessLookupError):
            os.kill(p["pid"], 0)
    # the saved log is complete: it holds every event any peer wrote to its own log
    log = read_event_log(events)
    assert log.rejected == []
    saved = {e.id for e in log.events}
    workdir = Path(re.search(r"logs in (\S+)", launch.stderr).group(1))  # type: ignore[union-attr]
    for peer_log in workdir.glob("*.jsonl"):
        if peer_log.name == "preload.jsonl":
            continue
        own = {e.id for e in read_event_log(peer_log).events}
        assert own <= saved, f"{peer_log.name}: {len(own - saved)} event(s) missing from {events}"
    assert report["events"] == len(log.events)
    return log.events


def test_sigint_stops_every_peer_and_resume_redoes_no_accepted_work(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)

    # 1. interrupted run: SIGINT once the first split is accepted
    events1, report1 = tmp_path / "run1.jsonl", tmp_path / "run1.report.json"
    first = Launch(str(spec), "--format", "json", "--events", str(events1), "--report", str(report1))
    first.wait_line(r"split accepted", 120)
    first.proc.send_signal(signal.SIGINT)
    assert first.wait() == 130, first.stderr[-3000:]
    assert "interrupted: all peers stopped" in first.stderr
    assert f"--resume {events1}" in first.stderr
    assert first.proc.stdout is not None and first.proc.stdout.read() == ""  # no plan rendered
    rep1 = json.loads(report1.read_text())
    assert rep1["exit_code"] == 130 and rep1["complete"] is False
    logged = _assert_stopped_cleanly(first, rep1, events1)
    plan1 = fold(logged)
    assert plan1.root is not None and plan1.root.accepted is not None
    accepted1 = _accepted(logged)
    results1 = _results(logged)
    assert Path(str(events1) + ".keys.json").exists()

    # 2. resumed run: converges, keeps every accepted proposal and every result
    events2, report2 = tmp_path / "run2.jsonl", tmp_path / "run2.report.json"
    second = Launch(
        str(spec),
        "--resume",
        str(events1),
        "--format",
        "json",
        "--out",
        str(tmp_path / "plan2.json"),
        "--events",
        str(events2),
        "--report",
        str(report2),
    )
    assert second.wait() == 0, second.stderr[-3000:]
    assert f"resuming from {events1}: {len(logged)} events" in second.stderr
    rep2 = json.loads(report2.read_text())
    final = read_event_log(events2).events
    plan2 = fold(final)
    assert plan2.complete and plan2.digest == rep2["digest"]
    assert plan2.run_id == plan1.run_id
    assert {e.id for e in logged} <= {e.id for e in final}
    assert accepted1 <= _accepted(final)
    assert plan2.root is not None and plan2.root.accepted == plan1.root.accepted
    results2 = _results(final)
    for leaf, ids in results1.items():
        assert results2[leaf] == ids, f"leaf {leaf} was executed again"
    assert set(Counter(len(v) for v in results2.values())) == {1}
    # the resumed peers are the same identities: no second join per role
    joins = Counter((e.author, e.body.role) for e in final if e.kind == "join")
    assert set(joins.values()) == {1}

    # 3. a fresh run of the same spec costs more model calls than the resumed one
    report3 = tmp_path / "run3.report.json"
    fresh = Launch(
        str(spec), "--format", "json", "--out", str(tmp_path / "plan3.json"), "--report", str(report3)
    )
    assert fresh.wait() == 0, fresh.stderr[-3000:]
    rep3 = json.loads(report3.read_text())
    fresh_calls, resumed_calls, interrupted_calls = _calls(rep3), _calls(rep2), _calls(rep1)
    print(f"model calls: fresh {fresh_calls}, interrupted {interrupted_calls}, resumed {resumed_calls}")
    assert resumed_calls < fresh_calls
    # nothing done before the interruption is paid for twice (the scripted model is deterministic)
    assert interrupted_calls > 0
    assert resumed_calls <= fresh_calls - len(accepted1) - len(results1)


def test_sigterm_stops_every_peer_and_keeps_the_log(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    events, report = tmp_path / "events.jsonl", tmp_path / "report.json"
    launch = Launch(str(spec), "--events", str(events), "--report", str(report))
    launch.wait_line(r"leaf done", 120)
    launch.proc.send_signal(signal.SIGTERM)
    assert launch.wait() == 130, launch.stderr[-3000:]
    rep = json.loads(report.read_text())
    logged = _assert_stopped_cleanly(launch, rep, events)
    assert any(n.result for n in fold(logged).leaves())
    assert "Traceback" not in launch.stderr


def test_a_run_out_of_time_still_delivers_its_partial_plan(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    out, events = tmp_path / "plan.md", tmp_path / "events.jsonl"
    # every model call takes 1 s: the executor's 21 alone outlast the timeout (a lone executor
    # no longer waits a settle window per leaf, and the instant model finished in 10 s)
    slow = {"SPECSWARM_TEST_MODEL_DELAY": "1"}
    launch = Launch(str(spec), "--out", str(out), "--events", str(events), "--timeout", "12", env=slow)
    assert launch.wait() == 1, launch.stderr
    assert "the plan did not converge within 12 s" in launch.stderr
    assert f"partial plan written to {out} (incomplete nodes marked)" in launch.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Plan a weekend in Lisbon\n")
    assert "- **Status:** incomplete" in text
    plan = fold(read_event_log(events).events)
    assert not plan.complete and plan.digest in text
