"""Why a run that did not complete ended: the error ``specswarm plan`` exits with.

:func:`failure` turns the watcher's :class:`~specswarm.swarm.launcher.watch.Outcome` into the
error whose message is the stuck report: what stopped the run, the nodes stuck and why, where
the events and the peer logs are, and how to resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from specswarm.errors import InterruptedRunError, RunError
from specswarm.swarm.launcher.watch import Outcome
from specswarm.swarm.peer import DETERMINISTIC_EXIT


class PeerFailedError(RunError):
    """A peer stopped on an error a restart would meet again (it exited with
    :data:`~specswarm.swarm.peer.DETERMINISTIC_EXIT`: a spec or prompt template problem); the
    run was stopped at once. The message is the peer's own last line."""

    exit_code: ClassVar[int] = DETERMINISTIC_EXIT


class EndpointLostError(RunError):
    """A model endpoint stopped working mid-run (every call, or every probe of the launcher,
    failed for half a minute): exit 2, as for an endpoint the preflight finds unusable; the
    message names the spec field (``model.base_url``) and how to resume."""

    exit_code: ClassVar[int] = 2


@dataclass(frozen=True)
class RunFacts:
    """What the stuck report names of a run."""

    events: Path
    """The union event log."""
    logs: Path
    """The folder of the peers' logs."""
    resume_hint: str
    """The command that resumes the run."""
    elapsed: str
    """The run's wall time, as the progress lines show it."""
    budget: float
    """The run's time budget in seconds."""


def failure(outcome: Outcome, run: RunFacts, n_events: int, done: str) -> RunError | None:
    """The error a run that did not complete ends with (None when it completed)."""
    events = run.events
    if outcome.status == "complete":
        return None
    if outcome.status == "interrupted":
        return InterruptedRunError(
            f"interrupted: all peers stopped; {n_events} events saved to {events}\n{run.resume_hint}"
        )
    logs = f"\nevents saved to {events}; peer logs in {run.logs}"
    saved = logs + f"\n{run.resume_hint}"
    if outcome.status == "endpoint lost":  # once it is back, the run goes on from its events
        return EndpointLostError(f"the run stopped: {outcome.reasons[0]} ({done})" + saved)
    if outcome.status == "peer failed":  # no resume hint: the run event holds the spec as it was
        return PeerFailedError(
            f"a peer failed for good: {outcome.reasons[0]}\n"
            f"(not restarted: it would fail the same way again; every peer stopped; {done})"
            + logs
            + "\nfix the spec and start the run again"
        )
    if outcome.status == "model lost":
        return RunError(f"the run stopped: {outcome.reasons[0]} ({done})" + saved)
    stuck = "\n".join(f"  stuck: {r}" for r in outcome.reasons if r not in outcome.short)
    if outcome.status == "stalled":
        return RunError(
            f"the run stopped after {run.elapsed}: nothing can change the plan any more "
            f"({done}):\n"
            + "\n".join(f"  stalled: {r}" for r in outcome.short)
            + ("\n" + stuck if stuck else "")
            + saved
        )
    if outcome.status == "out of reach":
        return RunError(
            f"the run can no longer complete after {run.elapsed} ({done}):\n"
            + "\n".join(f"  short of {r}" for r in outcome.short)
            + ("\n" + stuck if stuck else "")
            + saved
        )
    return RunError(f"the plan did not converge within {run.budget:g} s ({done})\n" + stuck + saved)
