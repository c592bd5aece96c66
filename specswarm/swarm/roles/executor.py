"""The executor: claims an unclaimed leaf, waits the settle window, executes it only if its
claim is still the oldest, publishes the result; supersedes the claim of an executor that is
gone, and finishes what it holds after a restart."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from specswarm.model.base import Model
from specswarm.plan.critics import repeats_of
from specswarm.plan.views import NodeView, Plan
from specswarm.protocol.bodies import ClaimBody, ResultBody
from specswarm.protocol.identity import short_id
from specswarm.swarm.roles.base import ModelRole, ancestors_of, siblings_of, tree_orders

if TYPE_CHECKING:
    from specswarm.swarm.node import Node

log = logging.getLogger("specswarm.swarm.roles")


class Executor(ModelRole):
    name = "executor"

    def __init__(
        self,
        model_factory: Callable[[], Model] | None,
        settle_seconds: float = 1.0,
        claim_timeout: float = 180.0,
        gone_seconds: float = 15.0,
    ) -> None:
        super().__init__(model_factory)
        self.settle = settle_seconds
        self.claim_timeout = claim_timeout
        self.gone_seconds = gone_seconds
        self.lost_races = 0
        self.executed = 0

    def holder_gone(self, node: Node, holder: str, claim_id: str) -> bool:
        if holder == node.peer_id:
            return False
        first = self.seen(claim_id)
        if trio.current_time() - first > self.claim_timeout:
            return True
        return node.peer_gone(holder, since=first, grace=self.gone_seconds)

    async def act(self, node: Node, plan: Plan) -> None:
        if plan.spec is None:
            return
        open_leaves = [n for n in plan.leaves() if n.result is None]
        # 1. finish what I hold (e.g. after a restart or a resume)
        for leaf in open_leaves:
            if leaf.claim and leaf.claim_holder == node.peer_id and not self.backing_off(leaf.id):
                await self._execute(node, plan, leaf, leaf.claim)
                return
        # 2. claim something unclaimed, or take over a dead holder's claim: in tree order, so
        # the earlier siblings a result is compared with (_execute) are under way already
        orders = tree_orders(plan)
        for leaf in sorted(open_leaves, key=lambda n: (orders.get(n.id, (0, ())), n.id)):
            if self.backing_off(leaf.id):
                continue
            if leaf.claim is None:
                await self._claim_and_run(node, leaf.id, None)
                return
            holder = leaf.claim_holder
            if holder and self.holder_gone(node, holder, leaf.claim):
                log.info("executor: %s holds %s but is gone; superseding", short_id(holder), leaf.id)
                await self._claim_and_run(node, leaf.id, leaf.claim)
                return

    async def _claim_and_run(self, node: Node, leaf_id: str, supersedes: str | None) -> None:
        claim = await node.publish(ClaimBody(leaf=leaf_id, supersedes=supersedes))
        # The settle window: an older claim we have not heard of yet may still arrive.
        await trio.sleep(self.settle)
        plan = node.plan()
        leaf = plan.nodes.get(leaf_id)
        if leaf is None or leaf.result is not None:
            return
        if leaf.claim != claim.id:
            self.lost_races += 1
            log.info("executor: lost the race for %s; moving on", leaf_id)
            return
        await self._execute(node, plan, leaf, claim.id)

    async def _execute(self, node: Node, plan: Plan, leaf: NodeView, claim_id: str) -> None:
        from specswarm.model import tasks

        spec = plan.spec
        assert spec is not None
        ancestors, siblings = ancestors_of(plan, leaf), siblings_of(plan, leaf)
        output = await self.think(
            node,
            leaf.id,
            lambda model: tasks.execute(
                model, spec, leaf, ancestors, siblings=siblings, counts=node.counters.tasks
            ),
        )
        if output is None:
            return
        # a result that repeats an earlier sibling's is written once more: compared with the
        # siblings before it only, once they are written, so the same plan gets the same
        # results whichever executor finished first
        repeated = repeats_of(output, await self._earlier_results(node, leaf))
        if repeated:
            again = await self.think(
                node,
                leaf.id,
                lambda model: tasks.redo(
                    model, spec, leaf, ancestors, repeated, siblings=siblings, counts=node.counters.tasks
                ),
            )
            output = again if again is not None else output
        model_name = self._model.name if self._model is not None else "?"
        await node.publish(
            ResultBody(leaf=leaf.id, claim=claim_id, output=output[:19000], model=model_name[:190])
        )
        self.executed += 1

    async def _earlier_results(self, node: Node, leaf: NodeView) -> list[str]:
        """The results of the siblings before ``leaf``, once all are written. Waiting stops early
        (with those written so far) when one of them is held by no live executor, and after
        ``claim_timeout`` seconds: a failure is not waited out here (it is taken over)."""
        earlier: list[NodeView] = []
        with trio.move_on_after(self.claim_timeout):
            while True:
                plan = node.plan()
                parent = plan.nodes.get(leaf.parent or "")
                kids = parent.children if parent is not None else ()
                earlier = [plan.nodes[c] for c in kids[: kids.index(leaf.id)]] if leaf.id in kids else []
                open_ = [s for s in earlier if s.result is None]
                if not open_ or any(self._unattended(node, s) for s in open_):
                    break
                await node.wait_changed(1.0)
        return [s.result.output for s in earlier if s.result is not None]

    def _unattended(self, node: Node, leaf: NodeView) -> bool:
        """No live executor is working on ``leaf``: unclaimed, or its holder is gone."""
        holder = leaf.claim_holder
        return holder is None or (leaf.claim is not None and self.holder_gone(node, holder, leaf.claim))
