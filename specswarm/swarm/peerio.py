"""What a peer process writes: its event log (``--events``) and its status lines."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specswarm.protocol.identity import short_id


class EventLogFile(io.TextIOWrapper):
    """A peer's ``--events`` log, opened to append: a line it already holds is not written again
    (a restarted peer preloads its own log, and the store writes every event it applies)."""

    held: set[str]

    @classmethod
    def open(cls, path: Path) -> EventLogFile:
        held: set[str] = set()
        if path.exists():
            data = path.read_bytes()
            end = data.rfind(b"\n") + 1
            if end < len(data):  # a line cut short by a kill mid-write was never sent: drop it
                with open(path, "r+b") as fh:
                    fh.truncate(end)
            held = {line.decode("utf-8", "replace") for line in data[:end].splitlines()}
        log = cls(open(path, "ab"), encoding="utf-8")
        log.held = held
        return log

    def write(self, text: str) -> int:
        if self.held and text.rstrip("\n") in self.held:
            return 0
        return super().write(text)


class StatusPrinter:
    """Status lines: JSON for the launcher (``--json-status``), a short human line otherwise."""

    def __init__(self, role: str, json_status: bool) -> None:
        self.role = role
        self.json = json_status
        self.last_human = 0.0

    def __call__(self, status: Mapping[str, Any]) -> None:
        if self.json:
            try:
                sys.stdout.write(json.dumps(status, separators=(",", ":")) + "\n")
                sys.stdout.flush()
            except BrokenPipeError:  # the launcher is gone (lifeline.run_stoppable ends this process)
                detach_stdout()
            return
        now = time.monotonic()
        if self.role == "observer" or now - self.last_human < 2:
            return
        self.last_human = now
        p = status["progress"]
        print(
            f"[{self.role} {short_id(status['peer'])}] peers {status['peers']} events {status['events']} "
            f"nodes {p['nodes']} leaves {p['done']}/{p['leaves']} done"
            + (" — plan complete" if status["complete"] else ""),
            file=sys.stderr,
            flush=True,
        )


def detach_stdout() -> None:
    """Point stdout at the null device: nobody reads the pipe any more, and what is still
    buffered (or written later, or flushed at exit) must not fail again with a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
