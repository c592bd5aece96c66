"""The launcher's two reads of the peers' event logs: following the observer's while the run
goes on, and the union of every peer's once it is over."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from specswarm.plan import FoldState, Plan
from specswarm.protocol.events import Event, check_event, read_event_log, write_event_log
from specswarm.swarm.launcher.prepare import PreparedRun
from specswarm.swarm.launcher.procs import PeerProc


class LogTail:
    """Follows one peer's event log as it grows, folding each new complete line."""

    def __init__(self, path: Path, state: FoldState) -> None:
        self.path = path
        self.state = state
        self.offset = 0

    def read(self) -> Plan:
        """Apply the lines written since the last read; the plan they fold to."""
        if self.path.exists():
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
            end = data.rfind(b"\n") + 1
            self.offset += end
            run = self.state.run_event.run if self.state.run_event else None
            for line in data[:end].splitlines():
                event, _ = check_event(line, run)
                if event is not None:
                    self.state.apply(event)
        return self.state.plan()


def collect_events(run: PreparedRun, peers: Sequence[PeerProc]) -> FoldState:
    """Fold the resumed events and every peer's own log: the union of the run's events."""
    state = FoldState(run.preload)
    state.apply(run.run_event)
    verified: dict[str, Event] = {}  # a line every peer's log holds is verified once
    for p in peers:
        if p.events.exists():
            for e in read_event_log(p.events, run.run, verified).events:
                state.apply(e)
    return state


def write_events(state: FoldState, path: Path) -> None:
    """Write the events of ``state`` to ``path`` (parents created) in (lamport, author, id) order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        write_event_log(sorted(state.events(), key=lambda e: e.order), fh)
