"""The launcher heals its own swarm: a peer it started that dies is started again in its seat.

:func:`keep` runs one seat for the whole launch: it starts the peer, supervises it, and when
the process dies (a nonzero exit or a signal) while the run is not over, starts it again with
the same key, port and event log — the peer preloads its own log, so it resumes from what it
published before and does nothing twice (a peer that could not listen on its port again
moves to a free one). Restarts are bounded (:class:`RestartPolicy`: 3 per
seat, after 0.5 s, 1 s, 2 s). A peer that exits 0 was stopped on purpose; one that exits with
:data:`~specswarm.swarm.peer.DETERMINISTIC_EXIT` would fail the same way again, so it is not
restarted (the watcher stops the run); the observer is never restarted (the launcher reads
the plan from its log; the watcher ends the run when it dies).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from specswarm.swarm.launcher.procs import PeerProc, free_port, last_words, port_taken, spawn, supervise
from specswarm.swarm.launcher.progress import Progress
from specswarm.swarm.peer import DETERMINISTIC_EXIT


@dataclass(frozen=True)
class RestartPolicy:
    """When the launcher starts a dead peer again."""

    enabled: bool = True
    """False: ``specswarm plan --no-restart`` (a dead peer stays dead)."""
    backoff: tuple[float, ...] = (0.5, 1.0, 2.0)
    """Seconds before restart 1, 2, 3…; its length is the number of restarts per seat."""

    @property
    def limit(self) -> int:
        return len(self.backoff) if self.enabled else 0

    def why_not(self, p: PeerProc) -> str | None:
        """Why ``p``, which just died, is not restarted (None: it is)."""
        if p.role == "observer":
            return "the observer is not restarted"
        if p.exited == DETERMINISTIC_EXIT:
            return "it would fail the same way again"
        if not self.enabled:
            return "restarts are off (--no-restart)"
        if p.restarts >= self.limit:
            return f"restarts used up ({p.restarts}/{self.limit})"
        return None


@dataclass
class Seats:
    """What every seat's keeper shares with the watcher."""

    policy: RestartPolicy
    progress: Progress
    over: bool = False
    """Set by the watcher once the plan is complete: a peer that dies then stays down."""
    events: list[tuple[float, str]] = field(default_factory=list)
    """(monotonic time, what happened) for each death and restart, in order."""
    fatal: str | None = None
    """Set when something every peer needs is gone for good (a model service that cannot be
    started again): the watcher stops the run with it."""

    def note(self, text: str) -> None:
        self.events.append((time.monotonic(), text))
        self.progress.say(text)


async def keep(p: PeerProc, command: Callable[[], list[str]], seats: Seats) -> None:
    """Run ``p``'s seat until the launch ends (then its process is stopped) or it is lost.

    ``command()`` builds the peer's command line for each start (a restart preloads its own
    log)."""
    while True:
        await supervise(p, await spawn(p, command()))
        code = p.exited
        if code == 0 or code is None:  # stopped on purpose (SIGTERM handled: exit 0)
            return
        p.deaths.append(code)
        why = "the plan is complete" if seats.over else seats.policy.why_not(p)
        if why is not None:
            p.lost = True
            if p.role != "observer" and code != DETERMINISTIC_EXIT:
                seats.note(f"{p.name} exited {code}; not restarted: {why}")
            return
        if port_taken(p, last_words(p)):  # move to a free one
            p.port = free_port(p.listen.host)
        delay = seats.policy.backoff[p.restarts]
        p.restarts += 1
        seats.note(f"{p.name} exited {code}; restarting ({p.restarts}/{seats.policy.limit}) in {delay:g} s")
        await trio.sleep(delay)
