"""What an executor writes besides leaf results: the summaries of split nodes
(``review.summaries``).

A split node is ready once its children are done (every leaf child's result and every split
child's summary counted: :func:`~specswarm.plan.summaries.summary_sources`); the ready nodes
are written deepest first, so summaries grow bottom-up to the root's, the plan's overview. Not
every executor writes each one: the executors are ranked for a node by a hash of (node, peer),
as leaves are for claims, and the first that is not gone writes it at once. The one ranked
``r`` among the live ones writes it too once the node has been ready, unsummarized, for ``r``
claim timeouts (its writer may be alive but stuck), so a dead or stuck writer never stalls the
run; the fold counts the least summary written from what the children hold.

The model's answer is checked where it is written (:func:`~specswarm.model.summary.
parse_summary`: prose of 2 to 4 sentences, no new numbers), asked again with the problem named,
and when the task gives up (or the model fails) the node gets :func:`~specswarm.model.summary.
fallback_summary`, its children's titles joined, marked ``fallback``: a run never waits on a
summary the model cannot write.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from specswarm.plan.summaries import summary_sources
from specswarm.plan.views import NodeView, Plan
from specswarm.protocol.bodies import SummaryBody
from specswarm.swarm.roles.base import ModelRole, ancestors_of, spread, tree_orders

if TYPE_CHECKING:
    from specswarm.swarm.node import Node

log = logging.getLogger("specswarm.swarm.roles")

FALLBACK_MODEL = "fallback"
"""The ``model`` of a summary made without the model (:func:`fallback_summary`)."""


def ready_summaries(plan: Plan) -> list[tuple[NodeView, tuple[str, ...]]]:
    """Split nodes without a counted summary whose children are done, with the sources a summary
    is written from; deepest first, then in tree order."""
    orders = tree_orders(plan)
    ready = []
    for n in plan.nodes.values():
        if n.leaf or n.accepted is None or n.summary is not None or n.id not in orders:
            continue
        sources = summary_sources([plan.nodes[c] for c in n.children if c in plan.nodes])
        if sources is not None and len(sources) == len(n.children):
            ready.append((n, sources))
    ready.sort(key=lambda ns: (-ns[0].depth, orders[ns[0].id], ns[0].id))
    return ready


def summary_text(child: NodeView) -> str:
    """What a done child holds for its parent's summary: its result, or its own summary."""
    done = child.result.output if child.result is not None else child.summary.text if child.summary else ""
    return done


class SummaryWriter(ModelRole):
    """The summarizing half of an executor (see the module docstring)."""

    claim_timeout: float = 180.0
    summarized: int = 0

    async def summarize_next(self, node: Node, plan: Plan) -> bool:
        """Write the summary of one ready node that falls to this executor now; whether it did
        some work (a summary written, withheld or failed)."""
        if plan.spec is None or not plan.spec.review.summaries:
            return False
        for view, sources in ready_summaries(plan):
            key = f"summary/{view.id}"
            if self.backing_off(key) or not self._mine(node, plan, view.id, key, sources):
                continue
            await self._write_summary(node, plan, view, sources, key)
            return True
        return False

    def _mine(self, node: Node, plan: Plan, node_id: str, key: str, sources: tuple[str, ...]) -> bool:
        """Whether this executor writes ``node_id``'s summary now: it is the first live one in the
        node's ranking, or the node has waited ``r`` claim timeouts since this executor saw it
        ready (``r``: its place among the live ones)."""
        since = self.seen(f"{key}/{spread(*sources)}")
        ranked = sorted(
            (p for p, r in plan.roles.items() if r == "executor"), key=lambda p: (spread(node_id, p), p)
        )
        live = [p for p in ranked if p == node.peer_id or not node.peer_gone(p, since=since)]
        if node.peer_id not in live:
            return False
        rank = live.index(node.peer_id)
        return rank == 0 or trio.current_time() - since > self.claim_timeout * rank

    async def _write_summary(
        self, node: Node, plan: Plan, view: NodeView, sources: tuple[str, ...], key: str
    ) -> None:
        from specswarm.model import summary

        spec = plan.spec
        assert spec is not None
        children = [plan.nodes[c] for c in view.children]
        data = [summary.child_data(c.title, c.detail, c.facts, c.leaf, summary_text(c)) for c in children]
        ancestors = ancestors_of(plan, view)
        retry = self.retry(key)
        text = await self.think(
            node,
            key,
            lambda model: summary.summarize(
                model, spec, view, ancestors, data, counts=node.counters.tasks, **retry
            ),
        )
        model_name, fallback = (self._model.name if self._model is not None else "?"), False
        if text is None:  # the answers were garbage after every retry, or the model failed
            text, model_name, fallback = (
                summary.fallback_summary(view.title, [c.title for c in children]),
                FALLBACK_MODEL,
                True,
            )
            self.failing.pop(key, None)
            log.info("executor: no usable summary of %s from the model; its parts' titles instead", view.id)
        if self._summary_outrun(node, view.id, sources):
            return
        await node.publish(SummaryBody(view.id, text[:2000], sources, model_name[:190], fallback))
        self.summarized += 1

    def _summary_outrun(self, node: Node, node_id: str, sources: tuple[str, ...]) -> bool:
        """Whether the summary just written is not worth publishing: the node has one counted
        already, or its children now hold other results or summaries than it was written from."""
        plan = node.plan()
        now = plan.nodes.get(node_id)
        if now is None or now.summary is not None:
            return True
        return summary_sources([plan.nodes[c] for c in now.children if c in plan.nodes]) != sources
