"""What the peers that are left can no longer reach: a run certain to fail, noticed at once.

A role is short when the plan still needs it and fewer of its peers are left than it needs:
fewer scorers than the quorum while a node is still to be split (its proposals need q votes,
its approved splits q ballots); no decomposer while a node has no live proposal (pending or
approved) to be decided; no executor while the plan is incomplete (every open node ends in
leaves to execute). A peer counts as gone only when its process exited and the launcher will
not start it again (:attr:`~specswarm.swarm.launcher.procs.PeerProc.lost`): a peer that is
merely quiet, or waiting for its restart, still counts. Pure: no clock, no I/O.

One approximation, on the side of waiting: a node whose votes or ballots from scorers now
gone already sit in the plan is not credited with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from specswarm.plan import Plan
from specswarm.swarm.launcher.procs import PeerProc


def out_of_reach(plan: Plan, peers: Sequence[PeerProc]) -> list[str]:
    """One line per role the run can no longer do without (empty: it can still complete)."""
    if plan.spec is None or plan.root is None or plan.complete:
        return []
    nodes = plan.walk()
    to_split = [n for n in nodes if not n.leaf and not n.accepted]
    unproposed = [n for n in to_split if not any(p.status in ("pending", "approved") for p in n.proposals)]
    open_leaves = sum(1 for n in nodes if n.leaf and n.result is None)
    short: list[str] = []
    quorum = plan.spec.quorum_size()
    if to_split:
        short += _short(peers, "scorer", quorum, f"the quorum; {len(to_split)} node(s) still to split")
    elif open_leaves and plan.spec.review.results:
        short += _short(peers, "scorer", quorum, f"the quorum; {open_leaves} leaf result(s) still to judge")
    if unproposed:
        short += _short(peers, "decomposer", 1, f"{len(unproposed)} node(s) with no live proposal")
    leaves = f"{open_leaves} leaf/leaves open" if open_leaves else "the plan's leaves are still to come"
    short += _short(peers, "executor", 1, leaves)
    return short


def _short(peers: Sequence[PeerProc], role: str, needed: int, why: str) -> list[str]:
    mine = [p for p in peers if p.role == role]
    left = [p.name for p in mine if not p.lost]
    if len(left) >= needed:
        return []
    gone = ", ".join(f"{p.name} (exit {p.exited}{_restarted(p)})" for p in mine if p.lost)
    return [
        f"{role}s: {needed} needed ({why}), {len(left)} alive"
        + (f" ({', '.join(left)})" if left else "")
        + f"; dead: {gone or 'none'}"
    ]


def _restarted(p: PeerProc) -> str:
    return f", restarted {p.restarts}x" if p.restarts else ""
