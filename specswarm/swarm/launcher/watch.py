"""Start every peer process and watch the observer's event log until the plan converges, the
budget runs out, the observer dies or a signal arrives; then stop every peer."""

from __future__ import annotations

import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import trio

from specswarm.plan import FoldState, Plan
from specswarm.protocol.events import admit
from specswarm.swarm.launcher.diagnose import diagnose
from specswarm.swarm.launcher.eventlog import LogTail
from specswarm.swarm.launcher.prepare import PreparedRun
from specswarm.swarm.launcher.procs import PeerProc, boot_addrs, peer_command, spawn, supervise
from specswarm.swarm.launcher.progress import Progress

AGREE_GRACE = 15.0
"""Once the observer sees a complete plan, how long the other peers have to report its digest."""
POLL = 0.25


@dataclass
class Outcome:
    """How a launch ended."""

    status: Literal["complete", "stuck", "interrupted"] = "stuck"
    reasons: list[str] = field(default_factory=list)
    """Why it is stuck (for the error and the report)."""


def run_swarm(peers: Sequence[PeerProc], run: PreparedRun, budget: float, progress: Progress) -> Outcome:
    """Run the swarm until it converges, gets stuck or is interrupted; every peer is stopped."""
    try:
        return trio.run(_launch, peers, run, budget, progress)
    except KeyboardInterrupt:  # pragma: no cover - a signal before trio installed its handlers
        return Outcome("interrupted", ["interrupted"])


async def _launch(peers: Sequence[PeerProc], run: PreparedRun, budget: float, progress: Progress) -> Outcome:
    observer = next(p for p in peers if p.role == "observer")
    tail = LogTail(observer.events, FoldState([run.run_event]))
    outcome = Outcome()
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def on_signal() -> None:
                async for _ in signals:
                    outcome.status = "interrupted"
                    progress.say("stopping all peers…")
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(on_signal)
            for p in peers:
                cmd = peer_command(
                    p,
                    boot_addrs(peers, p),
                    run.run_file,
                    admit(run.keys.admission, run.run, p.identity.peer_id, p.role),
                    run.preload_file,
                )
                nursery.start_soon(supervise, p, await spawn(p, cmd))
            outcome.status, outcome.reasons = await _watch(tail, observer, peers, budget, progress)
            nursery.cancel_scope.cancel()
    # every supervise() was cancelled and has stopped its process: read what was written last
    tail.read()
    return outcome


async def _watch(
    tail: LogTail, observer: PeerProc, peers: Sequence[PeerProc], budget: float, progress: Progress
) -> tuple[Literal["complete", "stuck"], list[str]]:
    deadline = time.monotonic() + budget
    complete_since: float | None = None
    while True:
        plan = tail.read()
        progress.update(plan, peers)
        if plan.complete:
            complete_since = complete_since or time.monotonic()
            if _agreed(plan, peers, progress, time.monotonic() - complete_since > AGREE_GRACE):
                return "complete", []
        if observer.exited is not None:
            return "stuck", [f"the observer exited with code {observer.exited}; see {observer.log}"]
        if time.monotonic() > deadline:
            return "stuck", diagnose(plan, peers)
        await trio.sleep(POLL)


def _agreed(plan: Plan, peers: Sequence[PeerProc], progress: Progress, waited_enough: bool) -> bool:
    """Every live peer reports the complete plan's digest (or the grace is over: say who lags)."""
    alive = [p for p in peers if p.alive]
    digests = {p.status.get("digest") for p in alive}
    if digests == {plan.digest}:
        return True
    if waited_enough:
        lag = [p.name for p in alive if p.status.get("digest") != plan.digest]
        progress.say(f"warning: peers not yet at the final digest: {', '.join(lag)}")
    return waited_enough
