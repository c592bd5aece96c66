"""When a run can no longer change: the rules by which the launcher ends it before its budget.

- **Used up** (:func:`used_up`): an open node whose every decomposer that tried it (at least
  two, or every live one if fewer) has failed on it again and again
  (:func:`~specswarm.swarm.streaks.used_up`: the same way :data:`~specswarm.swarm.streaks.SAME_WAY`
  times in a row, each time asked another way), none is working on it now, no proposal of it is
  alive and no other decomposer has one it may still revise; or a leaf whose executors that
  tried it all did. Asking again would give the
  same failure: nothing can change.
- **Quiet** (:class:`Quiet`): no new event from any peer for :func:`quiet_bound` seconds while
  the plan is incomplete, and no peer working with its model meanwhile (a status line whose
  ``doing`` is set: waiting for the machine's model or generating). A slow model is busy, not
  stalled; the bound is longer than every wait the roles keep (the claim timeout, the takeover
  window) and than a few of the slowest model calls seen.

Both read only the observer's plan and the peers' status lines (``failing``: a role's failures
in a row per key, :meth:`~specswarm.swarm.streaks.Streak.to_json`; ``doing``). The run then
ends as ``stalled`` (exit 1, the stuck report, the partial plan).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from specswarm.plan import NodeView, Plan
from specswarm.swarm import streaks
from specswarm.swarm.launcher.procs import PeerProc

RIVALS_TRIED = 2
"""Decomposers that must have used a node up (or every live one, if fewer)."""
QUIET_FLOOR = 120.0
"""The shortest quiet time that ends a run (seconds)."""
QUIET_MARGIN = 30.0
"""Added to the longest wait a role keeps (the claim timeout)."""
QUIET_CALLS = 3
"""The quiet bound is at least this many of the slowest peer's mean model call."""


def _failing(p: PeerProc, key: str) -> dict[str, Any] | None:
    got = p.status.get("failing", {}).get(key)
    return got if isinstance(got, dict) else None


def _working_on(p: PeerProc, key: str) -> bool:
    doing = p.status.get("doing")
    return isinstance(doing, dict) and doing.get("on") == key


def _used_up(n: NodeView, peers: Sequence[PeerProc]) -> str | None:
    """Why nothing can change ``n`` any more, or None."""
    role = "executor" if n.leaf else "decomposer"
    live = [p for p in peers if p.role == role and p.alive]
    if any(_working_on(p, n.id) for p in live):
        return None
    tried = {p.name: f for p in live if (f := _failing(p, n.id)) is not None}
    if not tried or not all(
        streaks.used_up(int(f.get("times", 0)), int(f.get("same", 0))) for f in tried.values()
    ):
        return None
    if len(tried) < (1 if n.leaf else min(RIVALS_TRIED, len(live))):
        return None
    if any(p.status in ("pending", "approved") for p in n.proposals):
        return None
    authors = {p.author for p in n.proposals}
    if any(p.identity.peer_id in authors and p.name not in tried for p in live):
        return None  # it may still revise its split
    counts = ", ".join(f"{name} {f.get('times')}x" for name, f in tried.items())
    why = str(next(iter(tried.values())).get("why", "?"))
    what = "leaf" if n.leaf else "node"
    return (
        f"{what} {n.id} {n.title[:50]!r}: every {role} that tried it failed again and again, "
        f"each time asked another way ({counts}); last: {why}"
    )


def used_up(plan: Plan, peers: Sequence[PeerProc]) -> list[str]:
    """One line per open node or leaf that nothing can change any more (see the module)."""
    lines = []
    for n in plan.walk():
        if (n.leaf and n.result is None) or (not n.leaf and not n.accepted):
            why = _used_up(n, peers)
            if why is not None:
                lines.append(why)
    return lines


def quiet_bound(plan: Plan, peers: Sequence[PeerProc]) -> float:
    """Seconds without news that end a run: :data:`QUIET_FLOOR`, the claim timeout plus
    :data:`QUIET_MARGIN`, or :data:`QUIET_CALLS` of the slowest peer's mean model call,
    whichever is longest."""
    claim = plan.spec.budget.claim_timeout if plan.spec is not None else 0.0
    slowest = max((_mean_call(p) for p in peers), default=0.0)
    return max(QUIET_FLOOR, claim + QUIET_MARGIN, QUIET_CALLS * slowest)


def _mean_call(p: PeerProc) -> float:
    """Seconds ``p``'s model calls took on average (waiting for the machine's model included)."""
    calls = p.counter("model_calls")
    seconds = p.status.get("counters", {}).get("model_seconds", 0.0)
    return float(seconds) / calls if calls and isinstance(seconds, int | float) else 0.0


class Quiet:
    """How long the swarm has had no news: no new event and no peer working with its model."""

    def __init__(self, now: float) -> None:
        self.since = now
        """When the latest news came."""
        self.events = -1

    def seconds(self, plan: Plan, peers: Sequence[PeerProc], now: float) -> float:
        """Seconds since the latest news (0 when there is news now)."""
        events = sum(plan.counts.values())
        busy = any(p.alive and p.status.get("doing") for p in peers)
        if events != self.events or busy or plan.complete:
            self.events, self.since = events, now
        return now - self.since

    def stalled(self, plan: Plan, peers: Sequence[PeerProc], now: float) -> str | None:
        """Why the run is stalled (quiet for longer than :func:`quiet_bound`), or None."""
        quiet = self.seconds(plan, peers, now)
        bound = quiet_bound(plan, peers)
        if quiet < bound:
            return None
        return (
            f"no new event from any peer for {quiet:.0f} s and no peer working with its model "
            f"(the bound: {bound:.0f} s): nothing is left that could change the plan"
        )
