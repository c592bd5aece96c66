"""The scorer: votes once on every pending proposal, from the mechanical critics plus the
model's rating as a minor input (the small model cannot judge a split on its own), asked only
when it can change the vote (:func:`~specswarm.critics.rating_decides`).

Each scorer reviews through its own lens (:mod:`specswarm.critics.lenses`): its own
weighting of the checks, its own soft floors, its own question to the model. A model rating is
reused only from a scorer of the same lens (same prompt, greedy model: the same number) and
the same model; a vote with a model rating names the model that gave it (``VoteBody.model``).

Under ``tree.select: best`` a scorer also casts one ranked ballot per node once a split of it
is approved, the node's rival decomposers have had their say and every live scorer has voted
on every approved split (or ``tree.ballot_wait`` has passed): the best split wins, not the
first past the threshold (:mod:`specswarm.plan.rules`). The ballot ranks the splits by the
whole board's votes (the most approving lenses, then the highest mean score, then content), so
the ballots of a complete board agree, and which of them happen to arrive first does not
change the winner.

The critics judge a split against the whole folded tree: the node's ancestors, the stages
planned beside its branch (siblings of it and of its ancestors) and every other node that is
not below it (:func:`~specswarm.critics.relatives_in_tree`), so a child that re-plans a
stage another branch holds is caught. Nodes are judged in turn, in breadth-first order
(:func:`~specswarm.swarm.roles.base.node_in_turn`): a split is voted on once every node before
its node is settled, so the tree it is judged against is the same in every run.

Where the board judges leaf results (``review.results``), a scorer also votes once on each
result of the leaf in turn (:func:`~specswarm.plan.ledger.result_in_turn`: leaves are judged in
tree order, each against the results before it) through the board's four checks
(:func:`result_vote`: no model call); that comes first, splits wait for their node's turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import trio

from specswarm import critics
from specswarm.critics.results import check_result, verdict
from specswarm.model.base import Model
from specswarm.plan.ledger import result_in_turn, result_task
from specswarm.plan.rules import chain_ended, content_key
from specswarm.plan.views import NodeView, Plan, ProposalView, ResultView, VoteView
from specswarm.protocol.bodies import BallotBody, CheckResult, VoteBody
from specswarm.spec import GoalSpec
from specswarm.swarm.roles.base import UNHEARD, ModelRole, node_in_turn, owner_slots, owners_of

if TYPE_CHECKING:
    from specswarm.swarm.node import Node


NOTE_CHARS = 490
"""A check's note is cut to this many characters in the vote body."""
CRITIQUE_CHARS = 3900
"""The critique (one line per failed check, notes in full) is cut to this many characters."""


class Scorer(ModelRole):
    name = "scorer"

    def __init__(self, model_factory: Callable[[], Model] | None, lens: str) -> None:
        super().__init__(model_factory)
        self.lens = critics.lens_named(lens)
        self.balloted: dict[str, frozenset[str]] = {}
        """node id -> the splits this scorer's last ballot for it ranked (a restarted scorer
        may ballot again: only a scorer's first decisive ballot counts)."""

    async def act(self, node: Node, plan: Plan) -> None:
        spec = plan.spec
        if spec is None:
            return
        self.seen("run")
        if spec.review.results and await self._judge_result(node, plan):
            return
        n = node_in_turn(plan)
        if n is None:
            return
        for p in n.proposals:
            # an approved split still gets this scorer's vote: the ballot ranks by the whole
            # board's
            if p.status not in ("pending", "approved") or any(v.author == node.peer_id for v in p.votes):
                continue
            if self.backing_off(p.id):
                continue
            await self._vote(node, plan, n, p, spec)
            return
        if spec.tree.select == "best" and self._ballot_due(node, plan, n, spec):
            await self._ballot(node, n)

    def _ballot_due(self, node: Node, plan: Plan, n: NodeView, spec: GoalSpec) -> bool:
        """Cast a ballot for ``n`` once a split of it is approved and either every live owner
        of the node has settled (an approved split, or its revisions used up) and every live
        scorer has voted on every approved split, or ``tree.ballot_wait`` seconds have passed
        since this scorer saw the first approval."""
        approved = {p.id for p in n.proposals if p.status == "approved"}
        if not approved or approved & self.balloted.get(n.id, frozenset()):
            return False  # nothing to rank, or this scorer's decisive ballot is cast
        first = self.seen(f"approved:{n.id}")
        if any(p.status == "pending" for p in n.proposals):
            return False  # vote first: a pending rival may be the best
        if trio.current_time() - first >= spec.tree.ballot_wait:
            return True
        settled = set()
        for author in {p.author for p in n.proposals}:
            mine = sorted((p for p in n.proposals if p.author == author), key=lambda p: p.lamport)
            # approved, or its last word said (a chain that repeats itself ends too: waiting
            # for it held a conference run's root for the whole ballot_wait)
            if any(p.status == "approved" for p in mine) or chain_ended(mine, spec.tree.max_revisions):
                settled.add(author)
        slots = owner_slots(plan, n.id)
        owners = owners_of(plan, n.id, slots)
        expected = len(slots)
        # gone: unheard for the grace period, counted from when this scorer started at most
        # (nodes are judged in turn: a dead peer is not waited for again at every node)
        since = self.seen("run")
        if len(owners) < expected and not node.peer_gone(UNHEARD, since=since):
            return False  # a declared rival has not joined (as far as this scorer has heard)
        waiting = [o for o in owners if o not in settled and not node.peer_gone(o, since=since)]
        if waiting:
            return False
        board = [peer for peer, role in plan.roles.items() if role == "scorer"]
        return all(
            any(v.author == scorer for v in p.votes) or node.peer_gone(scorer, since=since)
            for p in n.proposals
            if p.status == "approved"
            for scorer in board
        )

    async def _ballot(self, node: Node, n: NodeView) -> None:
        """Rank the node's approved splits by the board's votes, best first (:func:`board_rank`)."""
        ranking = sorted((p for p in n.proposals if p.status == "approved"), key=board_rank)
        self.balloted[n.id] = frozenset(p.id for p in ranking)
        await node.publish(BallotBody(node=n.id, ranking=tuple(p.id for p in ranking)))

    async def _judge_result(self, node: Node, plan: Plan) -> bool:
        """Vote on a result of the leaf in turn (:func:`~specswarm.plan.ledger.result_in_turn`)
        that awaits this scorer's vote; whether one was cast."""
        leaf = result_in_turn(plan)
        for r in leaf.results if leaf is not None else ():
            if r.status == "pending" and all(v.author != node.peer_id for v in r.votes):
                assert leaf is not None
                await node.publish(result_vote(plan, leaf, r, self.lens.name))
                return True
        return False

    async def _vote(self, node: Node, plan: Plan, n: NodeView, p: ProposalView, spec: GoalSpec) -> None:
        from specswarm.model import tasks

        children, lens = p.children, self.lens
        checks = critics.check_split(
            spec, n, children, n.depth, relatives=critics.relatives_in_tree(plan.nodes, n.id)
        )
        weight = spec.model_for("scorer").model_weight
        model_score: int | None = None
        reused: list[VoteView] = []

        def reuse() -> int | None:
            # think() has loaded this scorer's model by now: reuse only what the same model said
            mine = self._model.name if self._model is not None else None
            vote = shared_vote(node, p.node, p.id, lens.name, mine)
            if vote is not None:
                reused.append(vote)
            return vote.model_score if vote is not None else None

        # a generation is spent only when its answer can change the vote: not on a failed hard
        # check (rejected whatever the model says), nor on a split the checks approve or reject
        # whatever the rating (counted: ratings_skipped)
        decides = critics.rating_decides(checks, weight, spec.tree.approve_threshold, lens)
        if weight > 0 and not critics.vetoed(checks, lens) and not decides:
            node.counters.ratings_skipped += 1
        if decides:
            model_score = await self.think(
                node,
                p.id,
                lambda model: tasks.rate(model, spec, n, children, counts=node.counters.tasks, lens=lens),
                reuse=reuse,
            )
        rated_by = None
        if model_score is not None:
            rated_by = reused[0].model if reused else self._model.name if self._model is not None else None
        score, approve = critics.combine(
            checks,
            model_score,
            weight if model_score is not None else 0.0,
            spec.tree.approve_threshold,
            lens=lens,
        )
        await node.publish(
            VoteBody(
                proposal=p.id,
                approve=approve,
                score=score,
                critique=critique_of(checks),
                checks=trimmed(checks),
                model_score=model_score,
                lens=lens.name,
                model=rated_by[:190] if rated_by else None,
            )
        )


def critique_of(checks: Sequence[CheckResult]) -> str:
    """A vote's critique: the failed checks' notes, cut to :data:`CRITIQUE_CHARS`."""
    return critics.critique(checks)[:CRITIQUE_CHARS] or "no problems found"


def trimmed(checks: Sequence[CheckResult]) -> tuple[CheckResult, ...]:
    """A vote's checks, each note cut to :data:`NOTE_CHARS`."""
    return tuple(replace(c, note=c.note[:NOTE_CHARS]) for c in checks)


def result_vote(plan: Plan, leaf: NodeView, result: ResultView, lens: str) -> VoteBody:
    """A scorer's vote on a leaf's result: the board's four checks
    (:mod:`specswarm.critics.results`) against the tree before the leaf; approved when
    every check passes. No model call: the checks are the same for every scorer."""
    checks = check_result(result.output, result_task(plan, leaf))
    score, approve = verdict(checks)
    return VoteBody(
        proposal=result.id,
        approve=approve,
        score=score,
        critique=critique_of(checks),
        checks=trimmed(checks),
        model_score=None,
        lens=lens,
    )


def board_rank(p: ProposalView) -> tuple[int, float, str, int, str, str]:
    """How the board ranks an approved split (least first): the most approving votes (lenses
    that found no fault), then the highest mean score of all votes cast on it, then what it says
    (:func:`~specswarm.plan.rules.content_key`), then (lamport, author, id)."""
    mean = sum(v.score for v in p.votes) / len(p.votes) if p.votes else 0.0
    return (-p.approvals, -mean, content_key(p.children), p.lamport, p.author, p.id)


def shared_rating(node: Node, node_id: str, proposal_id: str, lens: str) -> int | None:
    """A model rating another scorer of the same ``lens`` already published for this proposal.
    Ratings are greedy (top_k 1, fixed seed) on the same prompt, so it would compute the same
    number; a scorer of another lens was asked another question."""
    vote = shared_vote(node, node_id, proposal_id, lens)
    return vote.model_score if vote is not None else None


def shared_vote(
    node: Node, node_id: str, proposal_id: str, lens: str, model: str | None = None
) -> VoteView | None:
    """The vote whose rating :func:`shared_rating` reuses; with ``model``, only one that model
    gave (or one that does not say which model gave it: a vote made before votes named it)."""
    n = node.plan().nodes.get(node_id)
    prop = next((q for q in n.proposals if q.id == proposal_id), None) if n else None
    if prop is None:
        return None
    return next(
        (
            v
            for v in prop.votes
            if v.model_score is not None and v.lens == lens and (model is None or v.model in (None, model))
        ),
        None,
    )
