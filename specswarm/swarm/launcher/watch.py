"""Start every peer process and watch the observer's event log until the plan converges, the
budget runs out, the run can no longer complete (peers short, or nothing can change any more:
:mod:`~specswarm.swarm.launcher.stalls`), a peer fails for good, the observer dies or a signal
arrives; then stop every peer.

Each seat runs under :func:`~specswarm.swarm.launcher.heal.keep`, which restarts a peer that
died; the watcher only reads: the observer's log, the peers' status lines and exit codes.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import trio

from specswarm.errors import RunError
from specswarm.plan import FoldState, Plan
from specswarm.protocol.bodies import RunBody
from specswarm.protocol.events import admit
from specswarm.swarm.cadence import spread
from specswarm.swarm.launcher import endpoints, models, stalls
from specswarm.swarm.launcher.diagnose import diagnose
from specswarm.swarm.launcher.eventlog import LogTail
from specswarm.swarm.launcher.groups import group_command, groups_of, keep_group, peer_entry
from specswarm.swarm.launcher.heal import RestartPolicy, Seats, keep
from specswarm.swarm.launcher.prepare import PreparedRun
from specswarm.swarm.launcher.procs import PeerProc, boot_addrs, last_words, peer_command
from specswarm.swarm.launcher.progress import Progress
from specswarm.swarm.launcher.reach import out_of_reach
from specswarm.swarm.peer import DETERMINISTIC_EXIT, model_settings

AGREE_GRACE = 15.0
"""Once the observer sees a complete plan, how long the other peers have to report its digest
and one event set;
in a swarm of more than ANNOUNCERS peers, that many times longer (:func:`agree_grace`)."""


def agree_grace(peers: int) -> float:
    """Seconds the peers have to reach the final digest and one event set once the plan is
    complete: a repair waits for announcements, which thin out as the swarm grows (peers /
    ANNOUNCERS rounds apart). At 32 peers on 2 cores a join was still missing at one peer when
    the 15 s had run out, and that peer was stopped without it."""
    return AGREE_GRACE * spread(peers)


POLL = 0.25
OUT_OF_REACH_HOLD = 2.0
"""How long the plan must stay out of the live peers' reach before the run stops: the
observer's view may lag a moment behind what the peers had published before they died."""

Status = Literal[
    "complete",
    "stuck",
    "stalled",
    "out of reach",
    "peer failed",
    "endpoint lost",
    "model lost",
    "interrupted",
]


@dataclass
class Outcome:
    """How a launch ended."""

    status: Status = "stuck"
    reasons: list[str] = field(default_factory=list)
    """Why it is stuck (for the error and the report): for ``out of reach`` the roles that are
    short first, then the stuck nodes; for ``stalled`` why nothing can change first; for ``peer
    failed`` the peer and its last words."""
    short: list[str] = field(default_factory=list)
    """The first of ``reasons`` that say why the run cannot go on: for ``out of reach`` one line
    per role the run is short of, for ``stalled`` one per node nothing can change (or the quiet
    time)."""
    notes: list[tuple[float, str]] = field(default_factory=list)
    """(monotonic time, text) of every death and restart (for the report)."""


def run_swarm(
    peers: Sequence[PeerProc],
    run: PreparedRun,
    budget: float,
    progress: Progress,
    policy: RestartPolicy | None = None,
    services: Sequence[models.ServiceProc] = (),
    *,
    per_process: int = 1,
) -> Outcome:
    """Run the swarm until it converges, gets stuck or is interrupted; every peer is stopped.
    The shared model ``services`` start first (and are kept running until the end);
    ``per_process`` > 1: that many peers share each process (:mod:`.groups`)."""
    seats = Seats(policy or RestartPolicy(), progress)
    try:
        return trio.run(_launch, peers, run, budget, seats, services, per_process)
    except KeyboardInterrupt:  # pragma: no cover - a signal before trio installed its handlers
        return Outcome("interrupted", ["interrupted"], notes=seats.events)


async def _launch(
    peers: Sequence[PeerProc],
    run: PreparedRun,
    budget: float,
    seats: Seats,
    services: Sequence[models.ServiceProc] = (),
    per_process: int = 1,
) -> Outcome:
    observer = next(p for p in peers if p.role == "observer")
    tail = LogTail(observer.events, FoldState([run.run_event]))
    spec = run.run_event.body.spec if isinstance(run.run_event.body, RunBody) else None
    watched = endpoints.watched(spec, lambda role: model_settings(spec, role)) if spec else []
    dead: list[str] = []  # an endpoint that stopped answering the launcher's probes
    outcome = Outcome(notes=seats.events)
    progress = seats.progress
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def on_signal() -> None:
                async for _ in signals:
                    outcome.status = "interrupted"
                    progress.say("stopping all peers…")
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(on_signal)
            for s in services:
                started = time.monotonic()
                try:
                    await models.start(s)
                except RunError as exc:
                    nursery.cancel_scope.cancel()
                    return Outcome("model lost", [str(exc)], notes=seats.events)
                progress.say(
                    f"{s.name} ready on {s.url} (pid {s.pids[-1]}) in {time.monotonic() - started:.1f} s"
                )
                nursery.start_soon(models.keep, s, seats)
            if per_process > 1:
                for group in groups_of(peers, per_process):
                    nursery.start_soon(keep_group, group, _group_command(group, peers, run), seats)
            else:
                for p in peers:
                    nursery.start_soon(keep, p, _command(p, peers, run), seats)
            nursery.start_soon(endpoints.watch, watched, dead)
            outcome.status, outcome.reasons = await _watch(
                outcome, tail, observer, peers, budget, seats, dead
            )
            nursery.cancel_scope.cancel()
    # every keep() was cancelled and has stopped its process: read what was written last
    tail.read()
    return outcome


def _command(p: PeerProc, peers: Sequence[PeerProc], run: PreparedRun) -> Callable[[], list[str]]:
    """``p``'s command line for each start: a restart also preloads the peer's own log."""
    admission = admit(run.keys.admission, run.run, p.identity.peer_id, p.role)
    return lambda: peer_command(
        p, boot_addrs(peers, p), run.run_file, admission, run.preload_file, own_log=p.restarts > 0
    )


def _group_command(
    group: Sequence[PeerProc], peers: Sequence[PeerProc], run: PreparedRun
) -> Callable[[], list[str]]:
    """The group's command line for each start (a restart also preloads each peer's own log)."""

    def build() -> list[str]:
        entries = [
            peer_entry(
                p,
                boot_addrs(peers, p),
                run.run_file,
                admit(run.keys.admission, run.run, p.identity.peer_id, p.role),
                run.preload_file,
            )
            for p in group
        ]
        return group_command(group, entries)

    return build


async def _watch(
    outcome: Outcome,
    tail: LogTail,
    observer: PeerProc,
    peers: Sequence[PeerProc],
    budget: float,
    seats: Seats,
    dead: Sequence[str] = (),
) -> tuple[Status, list[str]]:
    """Watch until the run ends: its status and why (``outcome.short`` when out of reach or
    stalled); ``dead``: the endpoints found dead so far."""
    progress = seats.progress
    deadline = time.monotonic() + budget
    complete_since: float | None = None
    short_since: float | None = None
    quiet = stalls.Quiet(time.monotonic())
    while True:
        plan = tail.read()
        progress.update(plan, peers)
        now = time.monotonic()
        if plan.complete:
            seats.over = True  # a peer that dies now is not started again
            complete_since = complete_since or now
            if _agreed(plan, peers, progress, now - complete_since > agree_grace(len(peers))):
                return "complete", []
        if seats.fatal is not None and not plan.complete:
            return "model lost", [seats.fatal, *diagnose(plan, peers)]
        if dead and not plan.complete:
            return "endpoint lost", [dead[0], *diagnose(plan, peers)]
        failed = next((p for p in peers if p.exited == DETERMINISTIC_EXIT), None)
        if failed is not None and not plan.complete:
            said = last_words(failed) or "?"
            lost = said.startswith("model.base_url: ")  # the endpoint stopped working mid-run
            return "endpoint lost" if lost else "peer failed", [
                f"{failed.name} exited {failed.exited}: {said}"
            ]
        if observer.exited is not None:
            return "stuck", [f"the observer exited with code {observer.exited}; see {observer.log}"]
        short = out_of_reach(plan, peers)
        short_since = (short_since or now) if short else None
        if short_since is not None and now - short_since >= OUT_OF_REACH_HOLD:
            outcome.short = short
            return "out of reach", short + diagnose(plan, peers)
        stalled = [] if plan.complete else stalls.used_up(plan, peers)
        still = None if plan.complete else quiet.stalled(plan, peers, now)
        if stalled or still:
            outcome.short = stalled or [still or ""]
            named = tuple(" ".join(line.split()[:2]) + " " for line in stalled)  # "node ID "
            return "stalled", outcome.short + [r for r in diagnose(plan, peers) if not r.startswith(named)]
        if now > deadline:
            return "stuck", diagnose(plan, peers)
        await trio.sleep(POLL)


def _agreed(plan: Plan, peers: Sequence[PeerProc], progress: Progress, waited_enough: bool) -> bool:
    """Every live peer reports the complete plan's digest and the same event set (or the grace
    is over: say who lags). The plan's digest alone left events that do not change the plan (a
    join, a late vote) missing at some peers when they were stopped: at 32 peers on 2 cores a
    join was missing at 28 of them."""
    alive = [p for p in peers if p.alive]
    digests = {p.status.get("digest") for p in alive}
    sets = {p.status.get("set") for p in alive}
    if digests == {plan.digest} and len(sets) == 1:
        return True
    if waited_enough:
        lag = [p.name for p in alive if p.status.get("digest") != plan.digest]
        if lag:
            progress.say(f"warning: peers not yet at the final digest: {', '.join(lag)}")
        else:
            most = max(alive, key=lambda p: int(p.status.get("events") or 0)).status.get("set")
            behind = [p.name for p in alive if p.status.get("set") != most]
            progress.say(f"warning: peers still missing events the plan does not show: {', '.join(behind)}")
    return waited_enough
