"""The decomposer: proposes splits of accepted, unsplit nodes, and revises rejected ones.

Up to four decomposers compete at the root (every strategy's first seat first); below it two
of them per node, with different strategies (chosen by hashing what the node is about with
each strategy: :func:`~specswarm.swarm.roles.base.owners_of`), propose rival splits; anyone
else takes over only once the owners are gone, or none has proposed within the takeover window.

What a decomposer is asked, and how it checks its split before proposing, depends only on
the node's ancestors and the stages beside its branch (fixed once their parents were split),
never on what other branches or rival decomposers happen to have proposed so far: the same
spec and a deterministic model give the same proposals in every run. The scorers then judge
each split against the whole tree, node after node in breadth-first order
(:func:`~specswarm.swarm.roles.base.node_in_turn`). A revision waits for its node's turn and
is checked against that same whole tree: a child its judges rejected for repeating what
another branch plans is dropped in code before the revision is proposed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from specswarm import critics
from specswarm.model.base import Model
from specswarm.plan.rules import chain_ended
from specswarm.plan.views import NodeView, Plan, ProposalView
from specswarm.protocol.bodies import Child, ProposalBody
from specswarm.swarm.roles.base import (
    UNHEARD,
    ModelRole,
    ancestors_of,
    declared_strategies,
    in_turn,
    owner_slots,
    owners_of,
    siblings_of,
    spread,
)

if TYPE_CHECKING:
    from specswarm.swarm.node import Node


class Decomposer(ModelRole):
    name = "decomposer"

    def __init__(
        self, model_factory: Callable[[], Model] | None, strategy: str, takeover_seconds: float = 45.0
    ) -> None:
        super().__init__(model_factory)
        self.strategy = strategy
        self.takeover_seconds = takeover_seconds

    def responsible(self, node: Node, plan: Plan, n: NodeView) -> bool:
        """The node's owners (up to four at the root, two below it); anyone else only once no
        proposal of it is alive and its owners are gone, or none has proposed within the
        takeover window (a live owner queued behind the machine's other generations keeps its
        node that long). An owner that has proposed keeps the node: its chain of revisions runs
        out into the fold's fallback, the best rejected split (a newcomer would restart that
        chain, and make the plan depend on timing)."""
        slots = owner_slots(plan, n.id)
        owners = owners_of(plan, n.id, slots)
        first = self.seen(n.id)
        heard_long = node.peer_gone(UNHEARD, since=first)
        if node.peer_id in owners:
            # an owner by a strategy several peers share is sure of its seat only once it has
            # heard of all of them (or waited for the joins long enough)
            mine = plan.strategies.get(node.peer_id, "")
            known = sum(1 for s in plan.strategies.values() if s == mine)
            return heard_long or known >= declared_strategies(plan).count(mine)
        live = [p for p in n.proposals if p.status in ("pending", "approved", "accepted")]
        if live:
            return False
        # a seat nobody was heard in for the grace period counts as a gone owner
        gone = all(node.peer_gone(owner, since=first) for owner in owners)
        if gone and (len(owners) == len(slots) or heard_long):
            return True
        if any(p.author in owners for p in n.proposals):
            return False
        return trio.current_time() - first > self.takeover_seconds

    async def act(self, node: Node, plan: Plan) -> None:
        spec = plan.spec
        if spec is None:
            return
        todo = sorted(
            (n for n in plan.nodes.values() if not n.leaf and not n.accepted),
            key=lambda n: (n.depth, spread(node.peer_id, n.id)),
        )
        for n in todo:
            self.seen(n.id)
            if self.backing_off(n.id):
                continue
            mine = sorted((p for p in n.proposals if p.author == node.peer_id), key=lambda p: p.lamport)
            if not mine:
                if self.responsible(node, plan, n):
                    await self._propose(node, plan, n, None)
                    return
                continue
            # a revision the model wrote word for word again (after the self-check's second
            # try) ends this chain too: the fold's fallback counts it as used up. It is written
            # once the node is in turn: the tree its judges saw is here, the same in every run
            # (their votes came in turn, so this waits only for news still on its way)
            revise = mine[-1].status == "rejected" and not chain_ended(mine, spec.tree.max_revisions)
            if revise and in_turn(plan, n):
                await self._propose(node, plan, n, mine[-1])
                return

    async def _propose(self, node: Node, plan: Plan, n: NodeView, revising: ProposalView | None) -> None:
        from specswarm.model import tasks

        spec = plan.spec
        assert spec is not None
        critiques = review_lines(revising) if revising else []
        ancestors, siblings = ancestors_of(plan, n), siblings_of(plan, n)
        previous = list(revising.children) if revising else None
        # the split is self-checked against its ancestors and the stages beside its branch
        # (what the scorers will see too, and the same in every run: not the other branches,
        # which may or may not be split yet); a revision, written with the node in turn,
        # against the whole tree its judges saw (a child they rejected for repeating a node
        # planned in another branch is dropped, not proposed again). It must not repeat one of
        # this decomposer's own earlier splits (a revision the greedy model copied word for word)
        relatives = [
            r
            for r in critics.relatives_in_tree(plan.nodes, n.id)
            if revising is not None or r.relation != "elsewhere"
        ]
        proposed = [p.children for p in n.proposals if p.author == node.peer_id]
        # earlier calls for this split failed: the next one is asked another way (another
        # strategy, fewer parts, the last answer's problem named, sampled), never the same
        # greedy prompt again (:func:`~specswarm.model.tasks.decompose`'s ``attempt``)
        retry = self.retry(n.id)
        children = await self.think(
            node,
            n.id,
            lambda model: tasks.decompose(
                model,
                spec,
                n,
                ancestors,
                siblings,
                self.strategy,
                critiques,
                previous=previous,
                counts=node.counters.tasks,
                relatives=relatives,
                proposed=proposed,
                strategies=spec.roles.decomposer.strategies,
                **retry,
            ),
        )
        if not children:
            return
        last_level = n.depth + 1 >= spec.tree.max_depth
        body_children = tuple(Child(c.title, c.detail, c.leaf or last_level, dict(c.facts)) for c in children)
        how = self.strategy if self.strategy.startswith("by ") else f"by {self.strategy}"
        rationale = f"Split {how}" + (f", revised after: {'; '.join(critiques)[:600]}" if critiques else "")
        await node.publish(
            ProposalBody(
                node=n.id,
                strategy=self.strategy,
                children=body_children,
                revises=revising.id if revising else None,
                rationale=rationale[:3900],
            )
        )


MAX_CRITIQUE_LINES = 6
"""Critique lines a revision prompt names, at most (the small model loses the rest)."""


def review_lines(p: ProposalView) -> list[str]:
    """What the rejecting votes of ``p`` ask to fix, one line per distinct problem: failed hard
    checks first (they decide), then the rest; the same problem seen by three scorers is named
    once (a vote's critique has one line per failed check)."""
    lines: list[str] = []
    for v in p.votes:
        if v.approve or not v.critique:
            continue
        for line in v.critique.splitlines():
            line = " ".join(line.split())
            if ":" in line and line not in lines:  # "name: note" (not "no problems found")
                lines.append(line)
    hard = [ln for ln in lines if ln.split(":", 1)[0] in critics.HARD_CHECKS]
    soft = [ln for ln in lines if ln not in hard]
    return (hard + soft)[:MAX_CRITIQUE_LINES]
