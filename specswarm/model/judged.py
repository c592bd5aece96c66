"""Writing a leaf result for the board (``review.results``): one answer, then the executor's
own pass over it (:func:`~specswarm.critics.mend.mend_result`). The lines the board's lenses
would hold against it are left out and, when that leaves the result short, the model is asked
for that many more lines, shown the lines that stay: one call that writes the missing lines,
not a whole new result that repeats the old one's faults. An answer with no line worth keeping
is asked for once more, as lines only about the leaf; when that gives nothing either, the
first answer goes to the board as written. A first result still thinner than the board accepts
is written once more, sampled, and the fuller of the two goes to the board: a thin first result
would otherwise cost a round of revisions once its leaf is in turn.

Writing a rejected result again, the same pass runs on the rejected text against what the board
judged it on (the ledger included): its good lines stay and the model writes the rest. A
rejected result with nothing left to keep, or nothing the pass can point at (the result as a
whole drifts), is written afresh with the board's critique, then passed over as a first answer;
so is one whose kept lines, completed, say again what it said (the lines the board rejected put
back because the model gave too few others).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from specswarm.critics.mend import Mended, added_lines, enough, fullness, mend_result, refilled
from specswarm.critics.results import ResultTask, Written
from specswarm.critics.shingles import item_lines, unlabelled
from specswarm.errors import ModelError
from specswarm.model.asking import Ask, TaskCounts
from specswarm.model.base import Model
from specswarm.model.parse import parse_execution
from specswarm.model.subject import Subject
from specswarm.model.tasks import MAX_RETRIES, _attempts
from specswarm.spec import GoalSpec

log = logging.getLogger("specswarm.model")


def write_judged(
    model: Model,
    spec: GoalSpec,
    leaf: Subject,
    ancestors: Sequence[Subject],
    task: ResultTask,
    *,
    siblings: Sequence[Subject] = (),
    planned: Sequence[Written] = (),
    critique: Sequence[str] = (),
    failed: Sequence[str] = (),
    previous: str = "",
    afresh: bool = False,
    span: Mapping[str, Any] | None = None,
    counts: TaskCounts | None = None,
    attempt: int = 0,
    failure: str = "",
) -> str:
    """The result to publish for ``leaf`` (see the module docstring). Its prompt names the path
    from the root (every ancestor's title, detail and facts), the sibling leaves, what the rest
    of the tree holds (``planned``) and, writing a
    rejected result afresh, its text (``previous``), what the board asked to fix
    (``critique``) and which of its checks it failed (``failed``); ``span``: where the leaf
    stands in the plan's schedule, so its lines number days as the plan does. A revision keeps
    the good lines of ``previous`` and asks for the rest; ``afresh`` (a rival's revision) writes
    it all again, told what failed, so the board has two different revisions to choose from.
    ``task`` is what
    the pass judges it against (a first result: the tree's shape alone, no ledger, so the same
    whoever writes it and whenever; a revision: what the board judged the rejected one on). An
    answer is asked again only when it cannot be parsed. ``attempt``: earlier calls on the leaf
    that failed (sampled with a seed of their own); ``failure``: what was wrong with the last
    one's answer."""
    tally = counts if counts is not None else TaskCounts()
    tally.revised += 1 if previous else 0
    whole = Ask(
        spec,
        leaf,
        ancestors,
        siblings,
        judged=True,
        planned=planned,
        critique=critique,
        failed=failed,
        previous=previous,
        span=span,
    )
    lines = replace(whole, critique=(), failed=(), previous="")  # asks for lines, not a result
    if previous and not afresh:
        kept = mend_result(previous, task)
        if kept.kept and (kept.dropped or kept.wanted):
            revised = _completed(model, lines, task, kept, tally, attempt).text()
            if not says_again(revised, previous):
                return revised
            # the lines put back are the ones the board rejected: the same result again would
            # be rejected again, so it is written afresh, told what failed
            log.info("%r: the kept lines say what the rejected result said; writing it afresh", leaf.title)
    parse = partial(parse_execution, goal=spec.goal)
    text = _attempts(model, "execute", whole, parse, tally, attempt * (MAX_RETRIES + 1), failure)
    first, mended = _passed(model, lines, task, text, tally, attempt)
    if previous or enough(mended):
        return first
    # a first result the board would find thin: one more answer to the same prompt, sampled,
    # and the fuller of the two goes to the board (the first on a tie)
    tally.rewritten += 1
    try:
        again = _attempts(model, "execute", whole, parse, tally, (attempt + AGAIN) * (MAX_RETRIES + 1))
    except ModelError as exc:
        log.info("%r: writing it once more failed: %s", leaf.title, exc)
        return first
    second, remended = _passed(model, lines, task, again, tally, attempt + AGAIN)
    keep_second = fullness(remended) > fullness(mended)  # the first on a tie
    log.info("%r: written once more, kept the %s answer", leaf.title, "second" if keep_second else "first")
    return second if keep_second else first


def says_again(text: str, previous: str) -> bool:
    """Whether ``text`` says the lines ``previous`` said, in any order and under any unit label."""
    return {unlabelled(line) for line in item_lines(text)} == {
        unlabelled(line) for line in item_lines(previous)
    }


def _passed(
    model: Model, ask: Ask, task: ResultTask, text: str, tally: TaskCounts, attempt: int
) -> tuple[str, Mended]:
    """``text`` after the executor's own pass: as written when the pass finds nothing to leave
    out or add, else its good lines completed (:func:`_completed`); as written, too, when no
    line of it is worth keeping (the board judges it). With what the pass makes of the text."""
    mended = mend_result(text, task)
    if not mended.dropped and not mended.wanted:
        return text, mended  # all good: the board judges it as written
    done = _completed(model, ask, task, mended, tally, attempt)
    completed = done.text()
    return (completed, done) if item_lines(completed) else (text, mended)


def _completed(
    model: Model, ask: Ask, task: ResultTask, mended: Mended, tally: TaskCounts, attempt: int
) -> Mended:
    """``mended``'s lines, and as many more as it wants from further answers to ``ask`` with the
    lines that stay shown: a second answer (:data:`ROUNDS`) only while the lines are fewer or
    shorter than the board accepts and the last answer added some; the lines so far when the
    model fails. A result still too short then gets back the lines left out only for naming
    what another part plans (:func:`~specswarm.critics.mend.refilled`)."""
    tally.mended += len(mended.dropped)
    done = mended
    for _ in range(ROUNDS):
        if not done.wanted:
            break
        asked = replace(ask, kept=done.kept, wanted=done.wanted)
        parse = partial(parse_execution, goal=ask.spec.goal)
        tally.completed += 1
        try:
            answer = _attempts(model, "execute", asked, parse, tally, attempt * (MAX_RETRIES + 1))
        except ModelError as exc:
            log.info("%r: kept %d lines; asking for more failed: %s", ask.node.title, len(done.kept), exc)
            break
        before, done = done, added_lines(answer, done, task)
        log.info(
            "%r: kept %d lines, left out %s; asked for %d more, added %d",
            ask.node.title,
            len(before.kept),
            [lens for _, lens in before.dropped],
            before.wanted,
            len(done.kept) - len(before.kept),
        )
        if enough(done) or len(done.kept) == len(before.kept):
            break
    if not enough(done) and done.spare:
        before, done = done, refilled(done, task.span)
        log.info(
            "%r: put back %d lines naming what another part plans",
            ask.node.title,
            len(done.kept) - len(before.kept),
        )
    return done


ROUNDS = 2
"""Answers asked for the lines a mended result lacks, at most."""
AGAIN = 8
"""A first result written once more samples as the calls after this many failed ones would:
another answer to the same prompt, unlike a revision's (whose seeds count the revisions)."""
