"""Peers leave with their launcher (specswarm/swarm/lifeline.py): a launcher killed outright
(SIGKILL: no handler runs) leaves no process of its run behind, and no traceback in any log."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import trio

from specswarm.swarm import lifeline
from tests.plankit import PlanRun, plan_env

TINY = Path(__file__).resolve().parent.parent / "goals" / "tiny.yaml"
SEATS = ("decomposer-0", "scorer-0", "scorer-1", "executor-0", "observer-0")


def test_a_process_whose_parent_is_not_the_one_named_stops_as_orphaned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def forever() -> None:
        await trio.sleep_forever()

    monkeypatch.setenv(lifeline.PARENT_ENV, str(os.getppid() + 1))
    started = time.monotonic()
    with pytest.raises(lifeline.ParentGoneError, match="the launcher is gone"):
        trio.run(lambda: lifeline.run_stoppable(forever, by_hand=False))
    assert time.monotonic() - started < 2
    time.sleep(0.05)  # the cancelled hard-exit timer (it would end this process) is gone
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    monkeypatch.setenv(lifeline.PARENT_ENV, str(os.getppid()))
    assert not lifeline.orphaned(lifeline.expected_parent())


def _states() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process on the machine."""
    out: dict[int, tuple[int, str]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[int(d.name)] = (int(fields[1]), fields[0])
    return out


def _descendants(root: int) -> set[int]:
    states = _states()
    found, todo = set(), [root]
    while todo:
        parent = todo.pop()
        kids = {pid for pid, (ppid, _) in states.items() if ppid == parent} - found
        found |= kids
        todo.extend(kids)
    return found


def _alive(pids: set[int]) -> set[int]:
    states = _states()
    return {pid for pid in pids if pid in states and states[pid][1] not in ("Z", "X")}


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("env", "args"),
    [
        ({"SPECSWARM_MODEL_SHARED": "1"}, ()),  # forked peers, a shared model service
        ({"SPECSWARM_FORK": "0"}, ("--peers-per-process", "2")),  # exec'd peer groups
    ],
    ids=["forked+service", "exec+groups"],
)
def test_sigkill_of_the_launcher_leaves_no_process_and_no_traceback(
    env: dict[str, str], args: tuple[str, ...]
) -> None:
    run_env = plan_env() | env | {"SPECSWARM_MODEL_BACKEND": "scripted", "SPECSWARM_TEST_MODEL_DELAY": "5"}
    with PlanRun(str(TINY), *args, env=run_env) as launch:
        for seat in SEATS:
            launch.wait_pid(seat)
        deadline = time.monotonic() + 60
        while len([e for e in launch.log_events("observer-0") if e.kind == "join"]) < 4:
            assert time.monotonic() < deadline, launch.stderr[-3000:]
            time.sleep(0.1)
        procs = _descendants(launch.proc.pid)  # peers, groups, the model service, the fork server
        assert len(procs) >= 3
        launch.proc.send_signal(signal.SIGKILL)
        launch.wait(30)
        killed = time.monotonic()
        while _alive(procs) and time.monotonic() - killed < 15:
            time.sleep(0.1)
        left = _alive(procs)
        print(f"{len(procs)} processes gone {time.monotonic() - killed:.1f} s after the SIGKILL")
        logs = sorted(launch.workdir.glob("*.log"))
        text = {p.name: p.read_text(errors="replace") for p in logs}
    for pid in left:  # never leave one behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not left, f"still running 15 s after the launcher died: {sorted(left)}"
    assert not [name for name, t in text.items() if "Traceback" in t], text
    said = [name for name, t in text.items() if "the launcher is gone" in t]
    assert len(said) == (5 if args == () else 3), text  # each peer process stopped on its own
