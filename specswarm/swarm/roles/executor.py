"""The executor: claims an unclaimed leaf, waits the settle window, executes it only if its
claim is still the oldest, publishes the result; supersedes the claim of an executor that is
gone, and finishes what it holds after a restart.

Not every executor that sees a leaf unclaimed claims it, or claims would grow with the
executors rather than with the leaves. The claimable leaves, in tree order, fall to the free
executors (those holding no open leaf, and not gone) one each: a leaf to the one ranked first
for it by a hash of (leaf, peer) among those still without one (:func:`assign_leaves`). Every
executor computes the same assignment from the same plan and claims its own leaf at once. A
leaf is not claimed before its earlier siblings are (a result is compared with theirs), as
when every executor took the first unclaimed leaf. Whatever stays claimable (its executor busy,
gone, or unaware of the leaf) is claimed by the free executor ranked ``r`` for it
(:func:`claim_rank`) once it has been claimable for ``max(1, r)`` settle windows (at least a
round of the swarm each, in a swarm of more than ANNOUNCERS peers), so nothing stalls. Peers
whose views differ (one has not heard a join or a claim yet) may both claim; the oldest claim
wins, as always: a claimant waits the same window before it runs the leaf (a rival's claim
reaches it meanwhile), and a result written while an older live claim or a result arrived is
not sent (``counters.results_withheld``).

Where the board rejects the result of the leaf in turn, the executors with a rival's seat for
it (``review.rivals``: :mod:`~specswarm.swarm.roles.rivals`) claim it as rivals and write it
again beside its holder, before they claim anything else. With nothing to claim, an executor
writes the summary of a split node whose children are done (``review.summaries``:
:mod:`~specswarm.swarm.roles.summarizing`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import trio

from specswarm.model.base import Model
from specswarm.plan.ledger import ready_to_write, result_in_turn
from specswarm.plan.views import NodeView, Plan
from specswarm.protocol.bodies import ClaimBody
from specswarm.protocol.identity import short_id
from specswarm.swarm.roles.base import spread, tree_orders
from specswarm.swarm.roles.rivals import next_target, rival_seats
from specswarm.swarm.roles.summarizing import SummaryWriter
from specswarm.swarm.roles.writing import LeafWriter, holder_work, latest_result, writable_now

if TYPE_CHECKING:
    from specswarm.swarm.node import Node

log = logging.getLogger("specswarm.swarm.roles")

CLAIM_WINDOWS = 4
"""A rank's wait and a claimant's settle window are at most claim_timeout / CLAIM_WINDOWS."""
SETTLE_SHARE = 0.05
"""A claimant's settle window is at most this share of what its latest model task took."""
SETTLE_FLOOR = 0.2
"""...and at least this many seconds: gossip between the peers of a small swarm arrives well
within it."""


class Executor(LeafWriter, SummaryWriter):
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
        self.waited = 0
        """Times a claimable leaf was left to a better-ranked executor (for a while)."""
        self._claimable: dict[str, float] = {}
        """leaf id -> when this executor first saw it claimable (unclaimed, or its holder gone)."""
        self._ranking = RankCache()

    def holder_gone(self, node: Node, holder: str, claim_id: str, since: str = "") -> bool:
        """Whether ``holder`` of ``claim_id`` is gone: unheard for long, or silent past the claim
        timeout, counted from when this executor first saw the claim (with ``since``, a result
        written under it: a holder whose result the board rejected gets its time to revise)."""
        if holder == node.peer_id:
            return False
        first = self.seen(f"{claim_id}{since}")
        # the holder settles for a window (_claim_and_run) before it starts: the timeout
        # counts from then, or every claim in a large swarm timed out while settling
        if trio.current_time() - first > self.claim_timeout + self._window(node):
            return True
        return node.peer_gone(holder, since=first, grace=self.gone_seconds)

    async def act(self, node: Node, plan: Plan) -> None:
        if plan.spec is None:
            return
        judged = plan.spec.review.results
        # open: without a counted result; where the board judges results, one whose holder has
        # work to do (a result awaiting the board's votes holds nobody up)
        open_leaves = [n for n in plan.leaves() if n.result is None and (not judged or holder_work(n))]
        # 1. finish what I hold (e.g. after a restart or a resume)
        for leaf in open_leaves:
            if leaf.claim and leaf.claim_holder == node.peer_id and not self.backing_off(leaf.id):
                if judged and not writable_now(plan, leaf):
                    continue  # what its prompt holds is not all here yet
                await self._execute(node, plan, leaf, leaf.claim)
                return
        # 2. as a rival (review.rivals), write the rejected result of the leaf in turn again
        if judged and await self._rival_turn(node, plan):
            return
        # 3. claim something unclaimed, or take over a dead holder's claim: in tree order, so
        # the earlier siblings a result is compared with (_execute) are under way already
        now = trio.current_time()
        claimable, busy, turn = self._turns(node, plan, open_leaves, now)
        for leaf, gone in claimable:
            if self.backing_off(leaf.id):
                continue
            if turn.get(leaf.id) != node.peer_id:  # not mine: only once it has waited its turn
                since, window = self._claimable[leaf.id], self._window(node)
                turns = int((now - since) / window) if window > 0 else len(plan.roles)
                if turns < 1 or claim_rank(node, plan, leaf.id, busy, self._ranking, since, turns) > turns:
                    self.waited += 1
                    continue
            if gone:
                holder = short_id(leaf.claim_holder or "?")
                log.info("executor: %s holds %s but is gone; superseding", holder, leaf.id)
            await self._claim_and_run(node, leaf.id, leaf.claim if gone else None)
            return
        # 4. nothing to claim now: summarize a split node whose children are done
        await self.summarize_next(node, plan)

    def rival_seats(self, node: Node, plan: Plan, leaf: NodeView) -> list[str]:
        spec = plan.spec
        seats = spec.review.rivals if spec is not None else 0
        since = self.seen(f"rivals/{leaf.id}")
        ranked = self._ranking.order(plan, leaf.id)
        me = node.peer_id
        return rival_seats(leaf, ranked, seats, lambda p: p != me and node.peer_gone(p, since=since))

    async def _rival_turn(self, node: Node, plan: Plan) -> bool:
        """Write the rejected result of the leaf in turn again as one of its rivals, under a
        rival's claim (made now, or taking over one whose author is gone), when this executor
        has a seat (:meth:`rival_seats`) and has not written in the round yet."""
        leaf = result_in_turn(plan)
        target = next_target(leaf) if leaf is not None and leaf.claim is not None else None
        if leaf is None or target is None or self.backing_off(leaf.id):
            return False
        seats = self.rival_seats(node, plan, leaf)
        if node.peer_id not in seats:
            return False
        round_claims = [c for c in leaf.claims if c.live and c.rival == target.id]
        written = {r.claim for r in leaf.results if r.revises == target.id}
        mine = next((c.id for c in round_claims if c.author == node.peer_id), None)
        if mine in written:
            return False
        if mine is None:
            # a rival claim whose author lost its seat (gone) and wrote nothing is taken over
            stale = next((c.id for c in round_claims if c.author not in seats and c.id not in written), None)
            mine = (await node.publish(ClaimBody(leaf.id, stale, rival=target.id))).id
            log.info("executor: writing %s again as a rival", leaf.id)
        await self._write_judged(node, node.plan(), leaf, mine, seat=seats.index(node.peer_id))
        return True

    def _window(self, node: Node) -> float:
        """Seconds a leaf left to a better-ranked executor waits per rank before this one claims
        it: the settle window, or, where the swarm's round (:meth:`AntiEntropy.period`) is
        stretched beyond one announcement interval (more than ANNOUNCERS peers), at least that
        round. Gossip takes longer to reach every peer there: at 32 peers on 2 cores (settle
        0.3 s) every executor claimed and ran the same leaf within 3 s, 75 results for 9 leaves.
        At most ``claim_timeout / CLAIM_WINDOWS``: a claimant waits this long before it runs the
        leaf, and a window past the claim timeout let every claim be superseded first."""
        period = node.sync.period()
        if period <= node.sync.announce_interval():
            return self.settle
        # bounded well below the claim timeout: a round grows with the swarm (125 s at 1,000
        # peers), and a claimant settling longer than claim_timeout was superseded before it ran
        return max(self.settle, min(period, self.claim_timeout / CLAIM_WINDOWS))

    def _settle(self, node: Node) -> float:
        """Seconds a claimant waits before it runs the leaf it claimed: a window
        (:meth:`_window`), shortened in a small swarm, once this executor's model has answered,
        to :data:`SETTLE_SHARE` of what its latest task took (at least :data:`SETTLE_FLOOR`),
        and from the first claim on to :data:`SETTLE_FLOOR` when its model is no real one (a
        scripted or replayed model: ``instant``). The window guards against running a leaf
        another executor runs too, which costs what running it costs: a second spent per leaf
        guarding a model that answers in a tenth of one costs more than the duplicates it
        avoids, while a model that takes half a minute a leaf keeps the whole window."""
        window = self._window(node)
        if window > self.settle:
            return window
        if self.task_seconds is None:
            instant = self._model is not None and self._model.instant
            return min(window, SETTLE_FLOOR) if instant else window
        return min(window, max(SETTLE_FLOOR, SETTLE_SHARE * self.task_seconds))

    def _turns(
        self, node: Node, plan: Plan, open_leaves: list[NodeView], now: float
    ) -> tuple[list[tuple[NodeView, bool]], set[str], dict[str, str]]:
        """The claimable leaves to claim now, in tree order (the first claimable child of each
        node; with whether its holder is gone), the busy executors, and which free executor each
        of those leaves falls to (:func:`assign_leaves`)."""
        orders = tree_orders(plan)
        busy = {n.claim_holder for n in open_leaves if n.claim_holder}
        judged = plan.spec is not None and plan.spec.review.results
        claimable: list[tuple[NodeView, bool]] = []
        for leaf in sorted(open_leaves, key=lambda n: (orders.get(n.id, (0, ())), n.id)):
            holder, last = leaf.claim_holder, latest_result(leaf) if judged else None
            since = f"/{last.id}" if last is not None else ""
            gone = bool(holder and leaf.claim and self.holder_gone(node, holder, leaf.claim, since))
            # where the board judges results, a leaf is written once the tree before it is
            # settled (what it is told of the rest of the tree is then the same in every run)
            if (leaf.claim is not None and not gone) or (judged and not ready_to_write(plan, leaf)):
                self._claimable.pop(leaf.id, None)
                continue
            claimable.append((leaf, gone))
        # a leaf waits until its earlier siblings are claimed: a result is compared with theirs
        # (_earlier_results), which must be under way when it is written. Its turns count from
        # then: counted from when it appeared, every executor's turn had come by the time it was
        # ready, and all claimed it at once (at 32 peers, 7 to 10 claims per leaf)
        parents = {leaf.parent for leaf, _ in claimable}
        ready = []
        for leaf, gone in claimable:
            if leaf.parent in parents or leaf.parent is None:
                parents.discard(leaf.parent)
                ready.append((leaf, gone))
                self._claimable.setdefault(leaf.id, now)
            else:
                self._claimable.pop(leaf.id, None)
        ids = [leaf.id for leaf, _ in ready]
        return ready, busy, assign_leaves(node, plan, ids, busy, self._ranking, self._claimable)

    async def _claim_and_run(self, node: Node, leaf_id: str, supersedes: str | None) -> None:
        claim = await node.publish(ClaimBody(leaf=leaf_id, supersedes=supersedes))
        # The settle window: an older claim we have not heard of yet may still arrive. In a
        # large swarm as long as a rank's wait (_window): a rival's claim takes that long to reach
        # us. The model is loaded meanwhile (its kind decides the first window: _settle)
        started = trio.current_time()
        if self._model is None and self._model_factory is not None:
            await self.model()
        await trio.sleep_until(started + self._settle(node))
        plan = node.plan()
        leaf = plan.nodes.get(leaf_id)
        if leaf is None or leaf.result is not None:
            return
        if leaf.claim != claim.id:
            self.lost_races += 1
            log.info("executor: lost the race for %s; moving on", leaf_id)
            return
        await self._execute(node, plan, leaf, claim.id)


class RankCache:
    """Per leaf, the executors this peer knows, best-ranked first; kept while the roles stay."""

    def __init__(self) -> None:
        self.roles: object = None
        self.orders: dict[str, list[str]] = {}

    def order(self, plan: Plan, leaf_id: str) -> list[str]:
        if plan.roles is not self.roles:
            self.roles, self.orders = plan.roles, {}
        order = self.orders.get(leaf_id)
        if order is None:
            executors = [p for p, r in plan.roles.items() if r == "executor"]
            order = self.orders[leaf_id] = sorted(executors, key=lambda p: (spread(leaf_id, p), p))
        return order


def assign_leaves(
    node: Node, plan: Plan, leaves: list[str], busy: set[str], cache: RankCache, since: dict[str, float]
) -> dict[str, str]:
    """leaf id -> the free executor it falls to: ``leaves`` in order, each to the executor
    ranked first for it among the free ones (not in ``busy``, not gone since the leaf became
    claimable, as :meth:`Node.peer_gone` judges) that have none yet."""
    taken = set(busy)
    out: dict[str, str] = {}
    for leaf in leaves:
        for peer in cache.order(plan, leaf):
            if not _free(node, peer, taken, since[leaf]):
                continue
            out[leaf] = peer
            taken.add(peer)
            break
    return out


def claim_rank(
    node: Node, plan: Plan, leaf_id: str, busy: set[str], cache: RankCache, since: float, limit: int
) -> int:
    """This executor's place, from 0, among the free executors it knows for ``leaf_id``: those
    ranked before it by a hash of (leaf, peer) that hold no open leaf (``busy``) and are not
    gone (unheard since ``since``, as :meth:`Node.peer_gone` judges). Counting stops past
    ``limit`` (the caller only asks whether the rank is at most ``limit``)."""
    rank = 0
    for peer in cache.order(plan, leaf_id):
        if peer == node.peer_id or rank > limit:
            break
        if _free(node, peer, busy, since):
            rank += 1
    return rank


def _free(node: Node, peer: str, busy: set[str], since: float) -> bool:
    """``peer`` may take a leaf: it holds none (not in ``busy``) and is not gone (unheard since
    ``since``, as :meth:`Node.peer_gone` judges; this executor itself never is)."""
    return peer not in busy and (peer == node.peer_id or not node.peer_gone(peer, since=since))
