"""A revision is checked against the whole tree its judges saw.

A first split is self-checked against its ancestors and the stages beside its branch only
(other branches may or may not be split yet: what a decomposer is asked must not depend on
timing). The scorers, judging node after node in breadth-first order, also reject a child that
repeats what another branch plans. Seen in a real todo-cli run: "Mark a task as completed" under
one stage, rejected six times over for repeating "Mark a task as complete or incomplete" under
another, because every revision was checked without that branch and kept the child; the stage
ended as one leaf that re-planned the whole app. A revision now waits for its node's turn and
drops such a child in code, as the scorers would ask."""

from __future__ import annotations

from typing import Any

import trio

from specswarm.model import GenerationRequest, ScriptedModel
from specswarm.plan import ROOT, Plan, child_id, fold
from specswarm.protocol.bodies import ProposalBody
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.roles.base import in_turn, owners_of
from specswarm.swarm.roles.decomposer import Decomposer
from specswarm.testing.synth import Swarm, minimal_spec

SINTRA = [
    "- Pena Palace: the painted palace on the hilltop above Sintra",
    "- Moorish Castle: the ramparts walk above the town",
    "- Tram 28 ride: the yellow tram from Martim Moniz to Prazeres",
]


def answer(req: GenerationRequest) -> str:
    return "\n".join(SINTRA)


class _Peer:
    """What a decomposer asks of its node: who it is, its counters, and a way to publish."""

    def __init__(self, peer_id: str) -> None:
        self.peer_id = peer_id
        self.counters = NodeCounters()
        self.published: list[Any] = []

    def peer_gone(self, peer: str, since: float) -> bool:
        return False

    async def publish(self, body: Any) -> None:
        self.published.append(body)


def revisions_written(plan: Plan, peer_id: str, strategy: str) -> list[ProposalBody]:
    role = Decomposer(lambda: ScriptedModel(answer), strategy)
    peer = _Peer(peer_id)
    trio.run(role.act, peer, plan)
    return [b for b in peer.published if isinstance(b, ProposalBody) and b.revises is not None]


def test_a_revision_waits_for_its_turn_and_drops_a_child_another_branch_plans() -> None:
    roles = {
        "decomposer": {"count": 2, "strategies": ["by place", "by day"]},
        "scorer": {"count": 3},
        "executor": {"count": 1},
        "observer": {"count": 0},
    }
    tree = {"max_depth": 2, "min_children": 2, "max_children": 6}
    sw = Swarm(spec=minimal_spec(roles=roles, tree=tree))
    root = sw.accept(ROOT, ["Lisbon old town", "Sintra palaces"])
    lisbon, sintra = child_id(root.id, 0), child_id(root.id, 1)
    split_root = fold(sw.events)
    owner_id = owners_of(split_root, sintra)[0]
    owner = next(i for i in sw.peers["decomposer"] if i.peer_id == owner_id)
    strategy = split_root.strategies[owner_id]
    # the owner has a split of Lisbon on the table (so it has nothing else to write there)
    old_town = sw.propose(
        owner, lisbon, ["Alfama walk", "Tram 28 ride", "Belem tower"], leaf=True, strategy=strategy
    )
    first = sw.propose(owner, sintra, [s[2:].split(":")[0] for s in SINTRA], leaf=True, strategy=strategy)
    for scorer in sw.peers["scorer"]:
        sw.vote(scorer, first, False, 40, failed=("repeats",))

    plan = fold(sw.events)
    assert [p.status for p in plan.nodes[sintra].proposals] == ["rejected"]
    assert not in_turn(plan, plan.nodes[sintra])  # Lisbon's split is still being judged
    assert revisions_written(plan, owner_id, strategy) == []

    for scorer in sw.peers["scorer"]:
        sw.vote(scorer, old_town, True, 90)
    for scorer in sw.peers["scorer"]:
        sw.ballot(scorer, lisbon, [old_town])
    plan = fold(sw.events)
    assert in_turn(plan, plan.nodes[sintra])
    [revision] = revisions_written(plan, owner_id, strategy)
    assert revision.revises == first.id
    # the model wrote the tram ride again; the revision leaves it to Lisbon, where it is planned
    assert [c.title for c in revision.children] == ["Pena Palace", "Moorish Castle"]
