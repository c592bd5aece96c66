"""A claim's settle window, ended early once every other executor holds the claim.

A claimant waits a settle window before it runs its leaf, so that an older rival claim it has
not heard of yet can reach it. Where every executor the spec declares has joined and there are
few of them (at most :data:`ACK_PEERS` others), the window ends as soon as each other executor
that is not gone is seen to hold the claim: its inventory (``inv``) lists the claim, and every
event that inventory lists and we lack is fetched first. A claim that executor made before it
held ours is then here (a peer adds its own events to its set before it sends them), and the
fold's rule (the least (lamport, author) claim wins) decides; a claim it makes later comes from
a plan that holds ours, on a leaf that plan shows claimed, with a later Lamport time, so it
cannot win. With an instant model, the window was most of a leaf's time: on 2 cores, japan's
11 leaves took about 1.05 s each, the settle window 1.0 s of it.

Otherwise (an executor not heard yet, a large swarm, an executor that does not answer) the
window runs out as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from specswarm.protocol.events import Event

if TYPE_CHECKING:
    from specswarm.swarm.node import Node

ACK_PEERS = 8
"""At most this many other executors are asked; a larger swarm waits the whole window."""
ACK_RETRY = 0.05
"""Seconds between two rounds of asking the executors that do not hold the claim yet."""


def executors_to_ask(node: Node, since: float) -> set[str] | None:
    """The other executors that must hold a claim before its window may end early: those of the
    roster that are not gone (unheard since ``since``, as :meth:`Node.peer_gone` judges). None
    when the window must run out: fewer executors joined than the spec declares (one not heard
    yet may claim), or more than :data:`ACK_PEERS` others."""
    plan = node.plan()
    executors = [p for p, role in plan.roles.items() if role == "executor"]
    if plan.spec is None or len(executors) < plan.spec.roles.executor.count:
        return None
    others = {p for p in executors if p != node.peer_id and not node.peer_gone(p, since=since)}
    return others if len(others) <= ACK_PEERS else None


async def settle(node: Node, claim: Event, window: float, since: float) -> bool:
    """Wait until every executor of :func:`executors_to_ask` (gone: unheard since ``since``)
    holds ``claim``, having fetched what each of them held, or ``window`` seconds; whether the
    window ended early."""
    with trio.move_on_after(window):
        pending = executors_to_ask(node, since)
        if pending is None:
            await trio.sleep_forever()
        while pending:
            for peer in sorted(pending):
                if await node.sync.holds(peer, claim.id):
                    pending.discard(peer)
            if pending:
                await trio.sleep(ACK_RETRY)
        return True
    return False
