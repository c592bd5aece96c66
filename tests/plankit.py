"""`specswarm plan` as a child process, with its peers in reach: find a seat's process, SIGKILL it,
follow the logs the launcher keeps in its work directory, time what happens.

Used by the healing scenarios (tests/chaos.py) and bench/heal.py: faults are injected from
outside, exactly as a crash would strike, and nothing in the launcher knows it is watched.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from specswarm.plan.fold import FoldState, Plan
from specswarm.protocol.events import Event, check_event


def plan_env() -> dict[str, str]:
    """The environment of a test launch: no model or test overrides from the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECSWARM_MODEL_", "SPECSWARM_TEST_"))}
    env["PYTHONUNBUFFERED"] = "1"
    return env


class PlanRun:
    """One `specswarm plan` child process; its stderr lines are kept with the time each came."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.started = time.monotonic()
        self.lines: list[tuple[float, str]] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "specswarm", "plan", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env or plan_env(),
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._workdir: Path | None = None
        self.ended = 0.0
        """When the process was seen to exit (0 while it runs)."""
        self._tails: dict[Path, tuple[int, FoldState]] = {}

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line))

    @property
    def stderr(self) -> str:
        return "".join(line for _, line in list(self.lines))

    def wait_line(self, pattern: str, timeout: float) -> tuple[float, str]:
        """The first stderr line matching ``pattern`` and when it came (fails if plan exits first)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            hit = next(((t, ln) for t, ln in list(self.lines) if re.search(pattern, ln)), None)
            if hit:
                return hit
            assert self.proc.poll() is None, "plan exited early:\n" + self.stderr[-3000:]
            time.sleep(0.02)
        raise AssertionError(f"no line matching {pattern!r} in {timeout} s:\n" + self.stderr[-3000:])

    def wait(self, timeout: float = 240) -> int:
        """Its exit code, once it exits (``ended``: when that was seen)."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"plan still running after {timeout} s:\n" + self.stderr[-3000:]) from None
        self.ended = self.ended or time.monotonic()
        self._reader.join(timeout=10)
        return code

    def stop(self) -> None:
        """Stop the launch if it still runs (SIGTERM: it stops every peer)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> PlanRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the launcher's work directory ---------------------------------------------------------
    @property
    def workdir(self) -> Path:
        if self._workdir is None:
            _, line = self.wait_line(r"logs in (\S+)", 60)
            m = re.search(r"logs in (\S+)", line)
            assert m is not None
            self._workdir = Path(m.group(1))
        return self._workdir

    def pid(self, seat: str) -> int | None:
        """The pid of the live process in ``seat`` (e.g. ``scorer-1``): its ``SEAT.pid`` file (a
        forked peer's command line is the fork server's), if that process is alive."""
        try:
            pid = int((self.workdir / f"{seat}.pid").read_text())
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, ValueError):
            return None
        return None if state in ("Z", "X") else pid

    def wait_pid(self, seat: str, timeout: float = 60, other_than: int | None = None) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self.pid(seat)
            if pid is not None and pid != other_than:
                return pid
            assert self.proc.poll() is None, "plan exited early:\n" + self.stderr[-3000:]
            time.sleep(0.05)
        raise AssertionError(f"no process in seat {seat} after {timeout} s:\n" + self.stderr[-3000:])

    def kill(self, seat: str) -> tuple[int, float]:
        """SIGKILL the process in ``seat``: (its pid, when)."""
        pid = self.wait_pid(seat)
        os.kill(pid, signal.SIGKILL)
        return pid, time.monotonic()

    def log_events(self, seat: str) -> list[Event]:
        """Every event in ``seat``'s own event log right now."""
        path = self.workdir / f"{seat}.jsonl"
        if not path.exists():
            return []
        return [e for line in path.read_bytes().splitlines() if (e := check_event(line)[0]) is not None]

    def plan_of(self, seat: str) -> Plan:
        """The plan ``seat``'s own log folds to now (the observer's: what the swarm has heard)."""
        path = self.workdir / f"{seat}.jsonl"
        offset, state = self._tails.get(path, (0, FoldState()))
        if path.exists():
            with open(path, "rb") as fh:
                fh.seek(offset)
                data = fh.read()
            end = data.rfind(b"\n") + 1
            for line in data[:end].splitlines():
                event, _ = check_event(line)
                if event is not None:
                    state.apply(event)
            offset += end
        self._tails[path] = (offset, state)
        return state.plan()

    def seats(self, role: str) -> list[str]:
        """The seat names of ``role`` (from the key files the launcher wrote)."""
        return sorted(p.stem for p in self.workdir.glob(f"{role}-*.key"))


def read_report(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def parent_cmdline(pid: int) -> str:
    """The command line of ``pid``'s parent process (spaces for NULs)."""
    ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return Path(f"/proc/{ppid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
