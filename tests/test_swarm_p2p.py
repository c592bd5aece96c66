"""Real processes, real libp2p: `specswarm plan` and hand-started peers (scripted model, fast)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from specswarm.plan.fold import fold
from specswarm.protocol.events import read_event_log
from specswarm.resources import load_schema

pytestmark = pytest.mark.slow

SPEC = """\
name: p2p-test
goal: Plan a weekend in Lisbon
context: Two adults, spring, mid-range budget.
quorum: majority
roles:
  decomposer: {count: %(dec)d, strategies: [by place, by day, by theme]}
  scorer: {count: %(sc)d}
  executor: {count: %(ex)d}
  observer: {count: 1}
tree: {max_depth: %(depth)d, min_children: 2, max_children: 3}
model: {backend: scripted}
budget: {seconds: 240, settle_seconds: 0.5, claim_timeout: 30}
"""


def write_spec(tmp_path: Path, dec: int = 3, sc: int = 3, ex: int = 2, depth: int = 2) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC % {"dec": dec, "sc": sc, "ex": ex, "depth": depth})
    return path


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SPECSWARM_MODEL_BACKEND", None)
    return env


def test_plan_converges_with_one_process_per_peer_and_leaves_none_behind(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    events, report, out = tmp_path / "events.jsonl", tmp_path / "report.json", tmp_path / "plan.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "specswarm",
            "plan",
            str(spec),
            "--format",
            "json",
            "--out",
            str(out),
            "--events",
            str(events),
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=400,
        env=_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "split accepted" in proc.stderr and "plan complete" in proc.stderr
    rep = json.loads(report.read_text())
    assert rep["complete"] is True
    assert Counter(p["role"] for p in rep["peers"]) == {
        "decomposer": 3,
        "scorer": 3,
        "executor": 2,
        "observer": 1,
    }
    # every peer (the observer included) folded the same plan
    assert {p["digest"] for p in rep["peers"]} == {rep["digest"]}
    # the saved event log folds to that plan, and the JSON output is valid
    log = read_event_log(events)
    assert log.rejected == []
    plan = fold(log.events)
    assert plan.digest == rep["digest"] and plan.complete
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, load_schema("plan.schema.json"))
    assert doc["digest"] == rep["digest"]
    # exactly one counted result per leaf, and every result is under that leaf's winning claim
    per_leaf = Counter(e.body.leaf for e in log.events if e.kind == "result")
    assert set(per_leaf) == {n.id for n in plan.leaves()}
    # the observer never published anything
    observer = next(p for p in rep["peers"] if p["role"] == "observer")
    assert observer["counters"]["published"] == 0
    assert all(e.author != observer["peer_id"] for e in log.events)
    # no peer process is left
    for p in rep["peers"]:
        with pytest.raises(ProcessLookupError):
            os.kill(p["pid"], 0)


def _start_peer(args: list[str], log: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "specswarm", "peer", "--json-status", *args],
        stdout=subprocess.PIPE,
        stderr=open(log, "w"),
        text=True,
        env=_env(),
    )


def _read_status(proc: subprocess.Popen[str], until, timeout: float):  # type: ignore[no-untyped-def]
    """Read JSON status lines until ``until(status)`` holds."""
    import selectors

    sel = selectors.DefaultSelector()
    assert proc.stdout is not None
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.5):
            line = proc.stdout.readline()
            if not line:
                raise AssertionError("peer exited")
            status = json.loads(line)
            if until(status):
                return status
    raise AssertionError("timed out waiting for a peer status")


def test_peers_that_only_join_learn_the_run_and_a_late_observer_reaches_the_same_digest(
    tmp_path: Path,
) -> None:
    spec = write_spec(tmp_path, dec=1, sc=2, ex=2, depth=1)
    procs: list[subprocess.Popen[str]] = []
    try:
        first = _start_peer(["--role", "decomposer", "--spec", str(spec)], tmp_path / "p0.log")
        procs.append(first)
        status = _read_status(first, lambda s: bool(s.get("addrs")), 60)
        addr = next(a for a in status["addrs"] if "/ip4/127.0.0.1/" in a)
        joiners = []
        for i, role in enumerate(["scorer", "scorer", "executor", "executor"]):
            boot = addr if i == 0 else None
            p = _start_peer(["--role", role, "--join", boot or addr], tmp_path / f"p{i + 1}.log")
            procs.append(p)
            joiners.append(p)
        finals = [_read_status(p, lambda s: s.get("complete"), 120) for p in procs]
        # complete everywhere; the digests agree once every event has reached everyone
        deadline = time.monotonic() + 60
        while len({s["digest"] for s in finals}) > 1 and time.monotonic() < deadline:
            finals = [_read_status(p, lambda s: s.get("complete"), 30) for p in procs]
        digests = {s["digest"] for s in finals}
        assert len(digests) == 1
        # a late observer, knowing one address only, learns everything and publishes nothing
        out = tmp_path / "late.json"
        obs = subprocess.run(
            [
                sys.executable,
                "-m",
                "specswarm",
                "observe",
                "--join",
                finals[2]["addrs"][0],
                "--format",
                "json",
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(),
        )
        assert obs.returncode == 0, obs.stderr[-2000:]
        assert json.loads(out.read_text())["digest"] == digests.pop()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                assert p.wait(timeout=15) == 0
            except subprocess.TimeoutExpired:
                p.kill()
                raise


def test_invalid_spec_exits_2_with_located_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        textwrap.dedent("""\
        goal: x
        roles:
          decomposer: {count: 1}
          scorer: {count: two}
          executor: {count: 1}
        """)
    )
    proc = subprocess.run(
        [sys.executable, "-m", "specswarm", "plan", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert f"{bad}:4: roles.scorer.count:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_eight_peers_in_two_processes_converge_each_with_its_own_host(tmp_path: Path) -> None:
    """``--peers-per-process 4``: 8 peers, 2 processes; each peer keeps its own key, port and log."""
    spec = write_spec(tmp_path, dec=2, sc=3, ex=2, depth=2)
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "specswarm", "plan", str(spec), "--peers-per-process", "4"]
        + ["--report", str(report), "--quiet"],
        capture_output=True,
        text=True,
        timeout=400,
        env=_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(report.read_text())
    peers = rep["peers"]
    assert len(peers) == 8 and rep["complete"] is True
    assert len({p["pid"] for p in peers}) == 2  # two processes
    assert len({p["peer_id"] for p in peers}) == 8  # eight hosts, eight identities
    assert {p["digest"] for p in peers} == {rep["digest"]}
    for pid in {p["pid"] for p in peers}:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_malformed_peer_group_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "group.json"
    bad.write_text('[{"role": "scorer", "port": 1}]')
    proc = subprocess.run(
        [sys.executable, "-m", "specswarm", "peer-group", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"{bad}: peer 0: unknown option(s) port"
