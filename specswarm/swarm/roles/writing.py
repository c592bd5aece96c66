"""What an executor writes for a leaf it holds: a result the first claim's holder publishes
unjudged (runs without ``review.results``), or a result for the board.

For the board the executor writes what the fold and the ledger say, and nothing that depends
on timing: the path from the root, the sibling leaves and the leaves of other branches nearest
it (:func:`~specswarm.plan.ledger.elsewhere`: every leaf is written at once when the tree's
shape is final). Writing a rejected result again, once the leaf is in turn: the board's
critique and the checks it failed (every scorer runs the same checks: they are the same
whichever voted first), sampled with a seed of its own per revision. The default template
turns the failed checks into short instructions and quotes nothing: a small model copies what
its prompt quotes (the rejected text, other leaves' lines) into its answer. The result then
waits for the scorers; a rejected one is written again, with ``revises``, until the fold counts
one (the best rejected one, once the revisions are used up). Where rivals write it again too
(``review.rivals``: :mod:`~specswarm.swarm.roles.rivals`), the holder waits for the rivals'
claims and names them in its revision, then keeps the rejected result's good lines; a rival
writes the whole result afresh.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

import trio

from specswarm.critics import repeats_of
from specswarm.plan.ledger import elsewhere, ready_to_write, result_in_turn, result_task
from specswarm.plan.schedule import span_of
from specswarm.plan.views import NodeView, Plan, ResultView
from specswarm.protocol.bodies import ResultBody
from specswarm.swarm.roles.base import ModelRole, ancestors_of, siblings_of
from specswarm.swarm.roles.rivals import (
    RIVAL_ATTEMPTS,
    depths,
    holder_wrote,
    next_target,
    rival_claimed,
)

if TYPE_CHECKING:
    from specswarm.swarm.node import Node

log = logging.getLogger("specswarm.swarm.roles")

MAX_CRITIQUE = 6
"""Lines of the board's critique a revision prompt names, at most."""
CRITIQUE_CHARS = 300
"""Characters of one critique line in a revision prompt, at most."""


def latest_result(leaf: NodeView) -> ResultView | None:
    """The last result written for ``leaf`` (in (lamport, author, id) order)."""
    return max(leaf.results, key=lambda r: (r.lamport, r.author, r.id), default=None)


def holder_work(leaf: NodeView) -> str | None:
    """What ``leaf``'s claim holder has to do, where the board judges results: ``"write"`` (no
    result yet), ``"revise"`` (a rejected result is to be written again, :func:`next_target`,
    and the holder has not yet), or None (a result awaits the board's votes, a rival's
    revision is awaited, or one counts)."""
    if leaf.result is not None:
        return None
    if not leaf.results:
        return "write"
    target = next_target(leaf)
    return "revise" if target is not None and not holder_wrote(leaf, target.id) else None


def writable_now(plan: Plan, leaf: NodeView) -> bool:
    """Whether ``leaf``'s holder writes it now, from what this peer has heard: a first result
    once the tree's shape is final here (:func:`~specswarm.plan.ledger.ready_to_write`),
    a rejected one again once the leaf is in turn here (gossip is not causal: the votes that
    rejected it may arrive before the ones that settled the leaves before it, and the prompt
    must hold what those leaves say, as the board saw it)."""
    work = holder_work(leaf)
    if work == "write":
        return ready_to_write(plan, leaf)
    if work == "revise":
        return in_turn(plan, leaf)
    return False


def in_turn(plan: Plan, leaf: NodeView) -> bool:
    """Whether ``leaf`` is the one the board judges now."""
    turn = result_in_turn(plan)
    return turn is not None and turn.id == leaf.id


def failed_checks(result: ResultView) -> list[str]:
    """The board's checks that a rejecting vote of ``result`` failed, in the order voted."""
    names: list[str] = []
    for v in result.votes:
        names += [c.name for c in v.checks if not v.approve and not c.passed and c.name not in names]
    return names


def critique_lines(result: ResultView) -> list[str]:
    """What the rejecting votes of ``result`` ask to fix, one line per distinct problem (every
    scorer runs the same checks: the same problem is named once)."""
    lines: list[str] = []
    for v in result.votes:
        if v.approve:
            continue
        for c in v.checks:
            line = f"{c.name}: {' '.join(c.note.split())}"[:CRITIQUE_CHARS]
            if not c.passed and line not in lines:
                lines.append(line)
    return lines[:MAX_CRITIQUE]


def _rivals_heard(leaf: NodeView | None, target: str | None) -> tuple[str, ...]:
    """The rival claims to write ``target`` again held so far (live or taken over), named in the
    holder's revision so that no peer counts the round before it holds them."""
    if leaf is None or target is None:
        return ()
    return tuple(sorted(c.id for c in leaf.claims if c.rival == target))[:16]


class LeafWriter(ModelRole):
    """The writing half of an executor (:class:`~specswarm.swarm.roles.executor.Executor`
    claims the leaves)."""

    claim_timeout: float = 180.0
    executed: int = 0

    def holder_gone(self, node: Node, holder: str, claim_id: str) -> bool:
        raise NotImplementedError

    async def _write_judged(
        self, node: Node, plan: Plan, leaf: NodeView, claim_id: str, seat: int | None = None
    ) -> None:
        """Write ``leaf`` for the board (see the module docstring); a rejected result again, as
        its holder or (``seat``: a rival's place, from 0) as a rival under ``claim_id``."""
        from specswarm.model import judged

        spec = plan.spec
        assert spec is not None
        if seat is None:
            work = holder_work(leaf)
            if work is None or not writable_now(plan, leaf):
                return
            rejected = next_target(leaf) if work == "revise" else None
            if rejected is not None and not await self._rival_ready(node, leaf.id, rejected.id):
                return
        else:
            rejected = next_target(leaf)
            if rejected is None or not in_turn(plan, leaf):
                return
        planned = elsewhere(plan, leaf)
        critique = critique_lines(rejected) if rejected is not None else []
        failed = failed_checks(rejected) if rejected is not None else []
        ancestors, siblings = ancestors_of(plan, leaf), siblings_of(plan, leaf)
        placed = span_of(plan, leaf.id)
        span = placed.to_prompt() if placed is not None else None
        # a first result is mended against the tree's shape alone (the ledger grows with timing),
        # a revision against what the board judged the rejected one on (the leaf is in turn)
        task = result_task(plan, leaf)
        task = task if rejected is not None else replace(task, ledger=())
        retry = self.retry(leaf.id)  # after failed calls: the last problem named, sampled
        # the n-th revision samples with a seed of its own, the same whoever writes it; a
        # rival's seat samples another way
        if rejected is not None:
            rival = 0 if seat is None else RIVAL_ATTEMPTS * (seat + 1)
            retry["attempt"] += depths(leaf)[rejected.id] + 1 + rival
        output = await self.think(
            node,
            leaf.id,
            lambda model: judged.write_judged(
                model,
                spec,
                leaf,
                ancestors,
                task,
                siblings=siblings,
                planned=planned,
                critique=critique,
                failed=failed,
                previous=rejected.output if rejected is not None else "",
                afresh=seat is not None,
                span=span,
                counts=node.counters.tasks,
                **retry,
            ),
        )
        target = rejected.id if rejected is not None else None
        if output is None or self._outrun(node, leaf.id, claim_id, target, rival=seat is not None):
            return
        model_name = self._model.name if self._model is not None else "?"
        heard = _rivals_heard(node.plan().nodes.get(leaf.id), target) if seat is None else ()
        body = ResultBody(leaf.id, claim_id, output[:19000], model_name[:190], target, heard)
        await node.publish(body)
        self.executed += 1

    async def _rival_ready(self, node: Node, leaf_id: str, target: str) -> bool:
        """Whether the holder writes its revision of ``target`` now: once every rival seat has
        claimed the round (:mod:`~specswarm.swarm.roles.rivals`), or none will
        (``review.rivals`` 0, no other executor live), or after a quarter of the claim timeout.
        False if the round no longer needs the holder's revision meanwhile, or an older claim
        heard of meanwhile makes another executor the holder (this one may then hold the
        rival's seat itself, and would wait here for its own claim)."""
        with trio.move_on_after(self.claim_timeout / 4):
            while True:
                plan = node.plan()
                leaf = plan.nodes.get(leaf_id)
                if leaf is None or holder_work(leaf) != "revise" or leaf.claim_holder != node.peer_id:
                    return False  # written meanwhile, or an older claim heard of: not the holder
                seats = self.rival_seats(node, plan, leaf)
                if not seats or rival_claimed(leaf, target, seats):
                    return True
                await node.wait_changed(1.0)
        return True

    def rival_seats(self, node: Node, plan: Plan, leaf: NodeView) -> list[str]:
        """The executors that write ``leaf``'s next round beside its holder (``review.rivals``
        of them, live; :func:`~specswarm.swarm.roles.rivals.rival_seats`)."""
        raise NotImplementedError

    async def _execute(self, node: Node, plan: Plan, leaf: NodeView, claim_id: str) -> None:
        from specswarm.model import tasks

        spec = plan.spec
        assert spec is not None
        if spec.review.results:
            await self._write_judged(node, plan, leaf, claim_id)
            return
        ancestors, siblings = ancestors_of(plan, leaf), siblings_of(plan, leaf)
        retry = self.retry(leaf.id)  # after failed calls: the last problem named, sampled
        output = await self.think(
            node,
            leaf.id,
            lambda model: tasks.execute(
                model, spec, leaf, ancestors, siblings=siblings, counts=node.counters.tasks, **retry
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
        if self._outrun(node, leaf.id, claim_id):
            return
        model_name = self._model.name if self._model is not None else "?"
        await node.publish(
            ResultBody(leaf=leaf.id, claim=claim_id, output=output[:19000], model=model_name[:190])
        )
        self.executed += 1

    def _outrun(
        self, node: Node, leaf_id: str, claim_id: str, target: str | None = None, rival: bool = False
    ) -> bool:
        """Whether the result just written for ``leaf_id`` under ``claim_id`` is not worth
        publishing: the leaf has a result already, or an older claim we heard of while writing
        holds it (its holder alive: it publishes), or (results the board judges) its round
        got the same writer's result meanwhile (``target``: the result it writes again, None
        for a first result; a rival's under its own claim, the holder's under any claim not a
        rival's). Counted (``results_withheld``): a result not sent is one event fewer for
        every peer to fetch and hold."""
        leaf = node.plan().nodes.get(leaf_id)
        if leaf is None:
            return False
        holder = leaf.claim_holder
        if rival:
            written = any(r.revises == target and r.claim == claim_id for r in leaf.results)
        else:
            written = holder_wrote(leaf, target) if target is not None else bool(leaf.results)
        outrun = (
            leaf.result is not None
            or written
            or (
                not rival
                and leaf.claim is not None
                and leaf.claim != claim_id
                and holder is not None
                and not self.holder_gone(node, holder, leaf.claim)
            )
        )
        if outrun:
            node.counters.results_withheld += 1
            log.info("executor: %s was written by another or an older claim holds it; not sent", leaf_id)
        return outrun

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
