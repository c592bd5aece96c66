"""Rounds of revisions and the rivals who write in them (``review.rivals``), as executors read
them off the folded plan.

A leaf's results form rounds: its first results, then the revisions of one rejected result
(:attr:`~specswarm.protocol.bodies.ResultBody.revises`), then the revisions of one of those.
Once the board rejects every result of a round and the fold counts none, the next round
writes again the one the board scored highest (:func:`next_target`). Its writers: the leaf's
holder, who keeps the rejected result's good lines and asks for the rest, and up to
``review.rivals`` other executors (:func:`rival_seats`, ranked by a hash of (leaf, peer) as
claims are), each under a rival's claim (:attr:`~specswarm.protocol.bodies.ClaimBody.rival`),
writing the whole result afresh, told what failed, with a sampling of its own
(:data:`RIVAL_ATTEMPTS`). The fold counts none of the round until every writer that claimed
it has written and the board has decided each (:mod:`specswarm.plan.results`). The holder
starts once every rival seat has claimed (:func:`rival_claimed`) and names those claims in its
revision (:attr:`~specswarm.protocol.bodies.ResultBody.rivals`), so the round is the same in
every run whatever the timing, unless no rival is live.
"""

from __future__ import annotations

from collections.abc import Callable

from specswarm.plan.results import revision_depths
from specswarm.plan.views import NodeView, ResultView

RIVAL_ATTEMPTS = 16
"""A rival's revision samples as the holder's would after this many more failed calls per seat:
another sampling of the same prompt, the same whoever sits in the seat."""


def depths(leaf: NodeView) -> dict[str, int]:
    """Result id -> how many revisions it is from a first result of ``leaf``."""
    return revision_depths({r.id: r.revises for r in leaf.results})


def holder_wrote(leaf: NodeView, target: str | None) -> bool:
    """Whether a result revising ``target`` (None: a first result) was written under a claim
    that is not a rival's (the holder's, or a dead holder's)."""
    rivals = {c.id for c in leaf.claims if c.rival is not None}
    return any(r.revises == target and r.claim not in rivals for r in leaf.results)


def rival_owed(leaf: NodeView, target: str) -> bool:
    """Whether a live rival claim made to write ``target`` again has no result yet."""
    return any(c.rival == target for c in leaf.rivals_awaited)


def rival_claimed(leaf: NodeView, target: str, seats: list[str]) -> bool:
    """Whether every executor in ``seats`` (and at least one) holds a live rival claim made to
    write ``target`` again."""
    claimed = {c.author for c in leaf.claims if c.live and c.rival == target}
    return bool(claimed) and set(seats) <= claimed


def next_target(leaf: NodeView) -> ResultView | None:
    """The rejected result of ``leaf`` its revisions write again now: the open round's (its
    holder's or a rival's revision still unwritten), or, once every result of the latest round
    is rejected and none counts, the one of them the board scored highest (then what it says,
    then the lesser id: the same in every run). None while nothing is to be revised (a result
    awaits the board's votes, or one counts)."""
    if leaf.result is not None or not leaf.results:
        return None
    steps = depths(leaf)
    deepest = max(steps.values())
    latest = [r for r in leaf.results if steps[r.id] == deepest]
    target = latest[0].revises
    by_id = {r.id: r for r in leaf.results}
    writing = target is not None and (not holder_wrote(leaf, target) or rival_owed(leaf, target))
    if target is not None and target in by_id and writing:
        return by_id[target]
    if any(r.status == "pending" for r in leaf.results):
        return None
    rejected = [r for r in latest if r.status == "rejected"]
    return min(rejected, key=lambda r: (-(r.mean_score or 0), r.output, r.id)) if rejected else None


def rival_seats(leaf: NodeView, ranked: list[str], seats: int, gone: Callable[[str], bool]) -> list[str]:
    """The executors that write ``leaf``'s next round beside its holder: the first ``seats`` of
    ``ranked`` (the run's executors in the leaf's claim order) that are neither the holder
    nor ``gone``."""
    holder = leaf.claim_holder
    return [p for p in ranked if p != holder and not gone(p)][:seats]
