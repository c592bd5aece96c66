"""When a scorer casts its ballot: once every rival of the node has said its last word.

A conference run with the real model stood still for the whole ``tree.ballot_wait`` (600 s) at
its root: one decomposer's revision repeated its own rejected split in another order, so that
decomposer would propose no more (its chain had ended), but the scorers counted only revisions
used up as a rival's last word and kept waiting for it."""

from __future__ import annotations

import trio

from specswarm.plan import ROOT, FoldState
from specswarm.plan.rules import chain_ended
from specswarm.swarm.roles.scorer import Scorer
from specswarm.testing.synth import Swarm, minimal_spec


class _Node:
    """What the scorer asks of its node here: nobody is gone."""

    def peer_gone(self, peer: str, since: float) -> bool:
        return False


def _swarm(revision: list[str]) -> Swarm:
    """Two rivals at the root: "by place" approved by every scorer; "by day" rejected, then
    revised as ``revision`` and rejected again (one revision of the two allowed is left)."""
    sw = Swarm(spec=minimal_spec(tree={"max_depth": 2, "max_revisions": 2}), seed=3)
    place, day = sw.peers["decomposer"]
    good = sw.propose(place, ROOT, ["Alfama walk", "Belem tower", "Sintra day trip"])
    bad = sw.propose(day, ROOT, ["Day one", "Day two"], strategy="by day")
    for scorer in sw.peers["scorer"]:
        sw.vote(scorer, good, True, 90)
        sw.vote(scorer, bad, False, 40)
    again = sw.propose(day, ROOT, revision, strategy="by day", revises=bad.id)
    for scorer in sw.peers["scorer"]:
        sw.vote(scorer, again, False, 40)
    return sw


def _ballot_due(sw: Swarm) -> bool:
    plan = FoldState(sw.events).plan()
    assert plan.spec is not None and plan.root is not None
    spec, root = plan.spec, plan.root
    scorer = Scorer(None, "coverage")

    async def ask() -> bool:
        return scorer._ballot_due(_Node(), plan, root, spec)  # type: ignore[arg-type]

    return trio.run(ask)


def test_a_rival_whose_revision_repeats_itself_is_not_waited_for() -> None:
    sw = _swarm(["Day two", "Day one"])  # the same split in another order: the chain ended
    root = FoldState(sw.events).plan().root
    assert root is not None
    mine = sorted((p for p in root.proposals if p.strategy == "by day"), key=lambda p: p.lamport)
    assert chain_ended(mine, max_revisions=2)
    assert _ballot_due(sw)


def test_a_rival_that_may_still_revise_is_waited_for() -> None:
    sw = _swarm(["Alfama day", "Belem and Sintra day"])  # a new split: one revision left
    root = FoldState(sw.events).plan().root
    assert root is not None
    mine = sorted((p for p in root.proposals if p.strategy == "by day"), key=lambda p: p.lamport)
    assert not chain_ended(mine, max_revisions=2)
    assert chain_ended(mine, max_revisions=1)  # with one revision allowed, it was the last
    assert not _ballot_due(sw)
