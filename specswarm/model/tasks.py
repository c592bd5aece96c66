"""What the roles ask of the model: decompose a node, rate a split, execute a leaf.

Each task renders the spec's own (inlined) prompt template, calls the model,
parses the untrusted answer and validates it. A bad answer is retried with
feedback that names what was wrong (at most :data:`MAX_RETRIES` times); after
that the task raises :class:`GaveUpError` (a :class:`~specswarm.errors.ModelError`)
-- except :func:`rate`, which returns None, because the model's rating is only
a minor input next to the mechanical critics.

Loop guards: every request carries the spec's token cap for its kind; the
gpt4all backend stops when a line repeats three times in a row, and the
parsers drop later copies of any line seen three or more times.

The tasks block, and each generation takes the process-wide lock (:func:`~specswarm.model.lock.
generate_locked`); a trio peer runs a whole task in a worker thread. Parsing takes microseconds.

Inputs are typed (:class:`~specswarm.model.asking.Ask`); templates see plain data built from
them (:meth:`~specswarm.model.asking.Ask.context`).

The peer counts generations, tokens and seconds around the model; what only a task sees
(retries, cut loops, fitted sums, bad answers and failures by kind, and whether each answer was
schema-constrained JSON or free text) goes into the caller's :class:`TaskCounts`. A model that
:func:`~specswarm.model.base.accepts_schema` gets decompose, refine and score requests with a
JSON schema (:mod:`.schemas`); any other gets the request of before, byte for byte. Requests
use the settings of the role that runs the task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from specswarm.critics import Lens, Relative, concrete_lines, contradicted_facts, repeats_of, restates
from specswarm.critics.wording import concrete_share, keep_on_task, off_task, topic_hits, vague_result
from specswarm.errors import ModelError
from specswarm.model.asking import Ask, Kind, TaskCounts, request, token_cap
from specswarm.model.base import Generation, Model, accepts_schema
from specswarm.model.lock import generate_locked
from specswarm.model.parse import (
    Child,
    OutputError,
    cut_repeats,
    parse_children,
    parse_execution,
)
from specswarm.model.prompts import render_task_prompt
from specswarm.model.schemas import schema_for
from specswarm.model.scores import parse_score
from specswarm.model.splits import fit_sums, repaired, self_check, split_constraints
from specswarm.model.subject import Subject
from specswarm.spec import GoalSpec, Prompts

MAX_RETRIES = 2
"""Retries after the first attempt (so at most three generations per task)."""
T = TypeVar("T")
ROLE_OF = {
    "decompose": "decomposer",
    "refine": "decomposer",
    "score": "scorer",
    "execute": "executor",
    "summarize": "executor",
}
"""The role that runs each task (whose model settings its requests use)."""


class GaveUpError(ModelError):
    """A task got no usable answer after every retry (the model itself worked); ``problem`` is
    what was wrong with the last answer."""

    def __init__(self, message: str, problem: str = "") -> None:
        super().__init__(message)
        self.problem = problem


def _uncut(gen: Generation, cap: int) -> str:
    """The answer without its last line when the token cap cut it off mid-way (the answer used
    every token it was allowed and has lines before it); a schema-held answer as it is."""
    text = gen.text.rstrip()
    if gen.structured or gen.tokens < cap or "\n" not in text:
        return gen.text
    return text[: text.rfind("\n")]


def _template(prompts: Prompts, kind: Kind) -> str:
    return str(getattr(prompts, kind))  # one field per task kind


def _attempts(
    model: Model,
    kind: Kind,
    ask: Ask,
    parse: Callable[[str], T],
    counts: TaskCounts,
    vary: int = 0,
    carried: str = "",
) -> T:
    """Generate, parse; on OutputError retry with feedback; GaveUpError after the last try.

    A retry that would repeat the previous one word for word (the same problem reported
    again) samples instead (``vary``), as does every try when ``vary`` > 0 (the caller's
    earlier calls failed: :func:`decompose`'s ``attempt``). ``carried``: what was wrong with
    the last answer of an earlier call, named by the first try as a retry names its own."""
    system, prompt = render_task_prompt(kind, _template(ask.spec.prompts, kind), ask.context())
    settings = ask.spec.model_for(ROLE_OF[kind])
    problem = carried
    problems: list[str] = []
    for attempt in range(MAX_RETRIES + 1):
        # the same problem twice: asking again would repeat the last prompt word for word
        sample = vary > 0 or problems.count(problem) > 1
        again = vary + attempt if sample else 0
        asked = (
            prompt
            if not problem
            else (
                f"{prompt}\n\nYour previous answer could not be used: {problem}. "
                "Answer again and follow the format exactly."
            )
        )
        wants = accepts_schema(model)  # asked each time: a server may turn out to ignore schemas
        cap = int(token_cap(settings.max_tokens, kind))
        schema = schema_for(kind, ask.spec.tree, ask.fact_fields, ask.constraints, cap) if wants else None
        gen = generate_locked(model, request(settings, kind, system, asked, schema, again))
        counts.varied_requests += 1 if again else 0
        (counts.structured if gen.structured else counts.free)[kind] += 1
        if not gen.structured and cut_repeats(gen.text)[1]:  # JSON repeats its lines by design
            counts.loops_cut += 1
        try:
            return parse(_uncut(gen, cap))
        except OutputError as exc:
            problem = str(exc)
            problems.append(problem)
            counts.bad_outputs[kind] += 1
            if attempt < MAX_RETRIES:
                counts.retries += 1
    counts.failures[kind] += 1
    raise GaveUpError(
        f"{kind}: the model gave no usable answer after {MAX_RETRIES + 1} "
        f"attempts ({problem}) for {ask.node.title!r}",
        problem,
    )


def decompose(
    model: Model,
    spec: GoalSpec,
    node: Subject,
    ancestors: Sequence[Subject],
    siblings: Sequence[Subject],
    strategy: str,
    critiques: Sequence[str],
    *,
    previous: Sequence[Child] | None = None,
    counts: TaskCounts | None = None,
    relatives: Sequence[Relative] | None = None,
    proposed: Sequence[Sequence[Child]] = (),
    rivals: Sequence[Sequence[Child]] = (),
    strategies: Sequence[str] = (),
    attempt: int = 0,
    failure: str = "",
) -> list[Child]:
    """Propose children for ``node`` (the ``refine`` template with ``critiques`` or ``previous``,
    the rejected children; else ``decompose``). Declared sums are fitted in code (:mod:`.splits`).

    With ``relatives`` (the rest of the tree) the split is checked as the scorers will check it:
    overlapping children are merged and repeating ones dropped in code. One that still fails a
    hard check, repeats one of ``proposed`` (this node's splits on the table) or copies half of
    one of ``rivals`` (other decomposers' splits of it), is asked for
    once more another way -- the next of ``strategies``, the self-check's critique in the refine
    prompt (a greedy model given the same prompt gives the same answer) -- and the better of the
    two is returned.

    ``attempt``: how many earlier calls for this node failed in a row (``failure``: what was
    wrong with the last one's answer): the split is then asked by the next of ``strategies``,
    for ``attempt`` parts fewer (at least the tree's minimum), with ``failure`` named in the
    first prompt, and sampled, not greedy, since the same prompt would give the same unusable
    answer again."""
    tally = counts if counts is not None else TaskCounts()
    if attempt and strategy in strategies:
        strategy = strategies[(list(strategies).index(strategy) + attempt) % len(strategies)]
    first = _decompose_once(
        model,
        spec,
        node,
        ancestors,
        siblings,
        strategy,
        critiques,
        previous,
        tally,
        vary=attempt * (MAX_RETRIES + 1),
        fewer=attempt,
        carried=failure,
    )
    if relatives is None:
        return first
    constraints = split_constraints(spec, node)
    first, changed = repaired(spec, node, first, relatives, constraints)
    verdict = self_check(spec, node, first, relatives, proposed, rivals)
    tally.repaired += changed
    if verdict.ok:
        return first
    tally.varied += 1
    others = [s for s in strategies if s != strategy]
    alternative = others[(len(proposed) + len(critiques)) % len(others)] if others else strategy
    feedback = [*critiques, *verdict.problems]
    try:
        second = _decompose_once(model, spec, node, ancestors, siblings, alternative, feedback, first, tally)
    except ModelError:
        return first
    second, changed = repaired(spec, node, second, relatives, constraints)
    tally.repaired += changed
    again = self_check(spec, node, second, relatives, [*proposed, first], rivals)
    return second if again.rank > verdict.rank else first


def _decompose_once(
    model: Model,
    spec: GoalSpec,
    node: Subject,
    ancestors: Sequence[Subject],
    siblings: Sequence[Subject],
    strategy: str,
    critiques: Sequence[str],
    previous: Sequence[Child] | None,
    tally: TaskCounts,
    vary: int = 0,
    fewer: int = 0,
    carried: str = "",
) -> list[Child]:
    ask = Ask(spec, node, ancestors, siblings, strategy, critiques, previous or (), fewer=fewer)
    kind: Kind = "refine" if (critiques or previous) else "decompose"
    constraints, fact_fields, leaves = ask.constraints, ask.fact_fields, ask.is_last_level

    def parse(text: str) -> list[Child]:
        children = parse_children(
            text,
            min_children=spec.tree.min_children,
            max_children=spec.tree.max_children,
            parent_title=node.title,
            goal=spec.goal,
            fact_fields=fact_fields,
            leaves=leaves,
        )
        fitted, changed = fit_sums(node, children, constraints)
        tally.fitted += changed
        return fitted

    return _attempts(model, kind, ask, parse, tally, vary, carried)


def rate(
    model: Model,
    spec: GoalSpec,
    node: Subject,
    children: Sequence[Child],
    *,
    ancestors: Sequence[Subject] = (),
    counts: TaskCounts | None = None,
    lens: Lens | None = None,
) -> int | None:
    """The model's 0..100 opinion of a split (through ``lens``, if given), or None when it gives
    no usable number."""
    ask = Ask(spec, node, ancestors, proposal=children, lens=lens)
    try:
        return _attempts(model, "score", ask, parse_score, counts if counts is not None else TaskCounts())
    except GaveUpError:
        return None


def execute(
    model: Model,
    spec: GoalSpec,
    leaf: Subject,
    ancestors: Sequence[Subject],
    *,
    siblings: Sequence[Subject] = (),
    sibling_results: Sequence[str] = (),
    counts: TaskCounts | None = None,
    attempt: int = 0,
    failure: str = "",
) -> str:
    """Carry out ``leaf``; return the cleaned output text. ``attempt``: earlier calls for it
    that failed in a row (``failure``: what was wrong with the last answer, named in the first
    prompt); the answer is then sampled, not greedy (the same prompt gives the same answer).

    The prompt names the sibling leaves (planned separately) and the leaf's facts. A result
    that mostly repeats one of ``sibling_results``, that its facts rule out ("Day 3" for a
    two-day task: :func:`contradicted_facts`) or whose every item does a sibling's task
    (:func:`~specswarm.critics.wording.off_task`; counted: ``astray``) is written once
    more (:func:`redo`; the first is kept if the second breaks as many rules and says less).
    So is one that is mostly general advice, naming no place, name, number or time
    (:func:`vague_result`); of the two, the more concrete is kept, unless it breaks a rule the
    first kept or names none of its own task's words (:func:`topic_hits`)."""
    tally = counts if counts is not None else TaskCounts()
    ask = Ask(spec, leaf, ancestors, siblings)
    output = _write(model, ask, tally, attempt * (MAX_RETRIES + 1), failure)

    def faults(text: str) -> tuple[list[str], list[str], list[str]]:
        # astray: _write kept a result whose every item does a sibling's task (nothing its own)
        astray = off_task(text, leaf.title, [s.title for s in siblings], _context(ask))
        return contradicted_facts(text, leaf.facts), repeats_of(text, sibling_results), astray

    broken, repeated, astray = faults(output)
    tally.astray += bool(astray)
    if repeated or broken or astray:
        avoid = [*broken, *repeated, *astray]
        again = redo(model, spec, leaf, ancestors, avoid, siblings=siblings, counts=tally)
        # kept if it breaks fewer rules (and says more than its task) or says no less
        fewer = sum(map(len, faults(again))) < len(avoid) and not restates(again, leaf.title, leaf.facts)
        better = fewer or concrete_lines(again) >= concrete_lines(output)
        return again if better else output
    vague = vague_result(output)
    if not vague:
        return output
    tally.sharpened += 1
    again = redo(model, spec, leaf, ancestors, (), siblings=siblings, counts=tally, vague=True)
    kept = not contradicted_facts(again, leaf.facts) and not repeats_of(again, sibling_results)
    on_task = topic_hits(again, leaf.title, spec.goal) > 0 or not topic_hits(output, leaf.title, spec.goal)
    return again if kept and on_task and concrete_share(again) > concrete_share(output) else output


def redo(
    model: Model,
    spec: GoalSpec,
    leaf: Subject,
    ancestors: Sequence[Subject],
    avoid: Sequence[str],
    *,
    siblings: Sequence[Subject] = (),
    counts: TaskCounts | None = None,
    vague: bool = False,
) -> str:
    """Write ``leaf`` once more, naming the lines to ``avoid`` (or, ``vague``, asking for names,
    numbers and times instead of general advice); kept whatever it says (counted)."""
    tally = counts if counts is not None else TaskCounts()
    tally.redone += 1
    ask = Ask(spec, leaf, ancestors, siblings, avoid=list(avoid)[:MAX_AVOID], vague=vague)
    return _write(model, ask, tally)


def _write(model: Model, ask: Ask, tally: TaskCounts, vary: int = 0, carried: str = "") -> str:
    """The leaf's result, without the items that do a sibling leaf's task (counted: ``off_task``)."""
    parse = partial(parse_execution, goal=ask.spec.goal)
    text = _attempts(model, "execute", ask, parse, tally, vary, carried)
    kept, dropped = keep_on_task(text, ask.node.title, [s.title for s in ask.siblings], _context(ask))
    tally.off_task += dropped
    return kept


def _context(ask: Ask) -> list[str]:
    """What every leaf of the group shares: the goal and the leaf's ancestors' titles."""
    return [ask.spec.goal, *(a.title for a in ask.ancestors)]


MAX_AVOID = 8
"""Repeated lines named in a redo prompt, at most."""
