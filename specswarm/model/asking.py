"""How a model task asks: what about (:class:`Ask`), the request of one generation, and what
tasks count.

:class:`Ask` holds one task's typed inputs: a :class:`~specswarm.spec.GoalSpec`, nodes that are
:class:`Subject` (a :class:`~specswarm.plan.views.NodeView` is one) and
:class:`~specswarm.protocol.bodies.Child` values; its :meth:`Ask.context` is the plain data the
task's template sees.

:func:`request` builds the :class:`~specswarm.model.base.GenerationRequest` of one generation
from the role's model settings: greedy as the spec says, or, with ``vary``, sampled and seeded
(a greedy model asked the same prompt gives the same answer, so a question that must be asked
again is asked to sample; :mod:`specswarm.model.tasks` decides when). :class:`TaskCounts` is
what only a task sees (retries, cut loops, fitted sums, bad answers, failures, sampled asks).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from specswarm.critics import Lens
from specswarm.critics.results import Written
from specswarm.critics.shingles import unit_number
from specswarm.model.base import GenerationRequest, OutputSchema
from specswarm.model.parse import Child
from specswarm.model.prompts import plain_critiques
from specswarm.model.splits import split_constraints, split_target
from specswarm.model.subject import Subject
from specswarm.spec import Constraint, GoalSpec, ModelSettings, TokenLimits
from specswarm.spec.language import plan_language
from specswarm.spec.prompt_catalogue import NO_SPAN

Kind = Literal["decompose", "refine", "score", "execute", "summarize"]
"""A model task; each has a prompt template and a token limit in the spec."""


class Retry(TypedDict):
    """How a task is asked again after earlier calls on its node failed (``decompose`` and
    ``execute`` take these keywords)."""

    attempt: int
    """Earlier calls on the node that failed in a row."""
    failure: str
    """What was wrong with the last one's answer ("" when the model itself failed)."""


def node_data(s: Subject) -> dict[str, Any]:
    return {"id": s.id, "title": s.title, "detail": s.detail, "depth": s.depth, "facts": dict(s.facts)}


@dataclass(frozen=True)
class Ask:
    """One task's typed inputs; :meth:`context` is the data its template sees."""

    spec: GoalSpec
    node: Subject
    ancestors: Sequence[Subject] = ()
    siblings: Sequence[Subject] = ()
    strategy: str = ""
    critiques: Sequence[str] = ()
    proposal: Sequence[Child] = ()
    lens: Lens | None = None
    avoid: Sequence[str] = ()
    vague: bool = False
    """(execute) the previous answer was general advice: ask for names, numbers and times."""
    fewer: int = 0
    """(decompose) parts fewer than the strategy's target to ask for (at least the tree's
    minimum): earlier calls for the node gave up, so the next one asks for a smaller split."""
    judged: bool = False
    """(execute) the board judges the result (``review.results``): the prompt says what it
    accepts, what the rest of the tree holds and, for a revision, what it rejected."""
    planned: Sequence[Written] = ()
    """(execute) what the counted results of other leaves plan (the ledger, compacted)."""
    critique: Sequence[str] = ()
    """(execute) what the board asked to fix in ``previous``, one line per problem."""
    failed: Sequence[str] = ()
    """(execute) the board's checks ``previous`` failed (concrete, on_task, new, consistent)."""
    previous: str = ""
    """(execute) the rejected result this one writes again."""
    span: Mapping[str, Any] | None = None
    """(execute, judged) the leaf's place in the plan's schedule: field, start, end, total, the
    labels of its units and the lines to ask for each (:meth:`~specswarm.plan.schedule.Span.to_prompt`)."""
    kept: Sequence[str] = ()
    """(execute, judged) lines of this leaf's result that stay (the executor's own pass left out
    the rest): the answer is :attr:`wanted` more lines, not a whole result."""
    wanted: int = 0
    """(execute, judged) how many lines to write: more beside :attr:`kept`, or all of them again
    when the pass kept none of an answer; 0 asks for a whole result."""
    children: Sequence[Mapping[str, Any]] = ()
    """(summarize) the node's children: title, detail, facts, leaf, and text (a leaf's counted
    result, a split child's summary)."""

    @property
    def constraints(self) -> list[Constraint]:
        """The constraints a split of this node must meet (:func:`split_constraints`)."""
        return split_constraints(self.spec, self.node)

    @property
    def fact_fields(self) -> list[str]:
        """The facts every child must state: the fields of the applicable sum constraints."""
        return [c.field for c in self.constraints if c.kind == "sum" and c.field is not None]

    @property
    def is_last_level(self) -> bool:
        """True when this node's children are leaves."""
        return self.node.depth + 1 >= self.spec.tree.max_depth

    def context(self) -> dict[str, Any]:
        tree = self.spec.tree
        low, high = tree.min_children, tree.max_children
        target = split_target(self.strategy, self.spec.roles.decomposer.strategies, low, high)
        node = node_data(self.node)
        if " ".join(node["detail"].split()) == " ".join((self.spec.context or "").split()):
            node["detail"] = ""  # the root's detail: the context, in the prompt already
        return {
            "goal": self.spec.goal,
            "context": self.spec.context,
            "language": plan_language(self.spec.goal, self.spec.context, self.spec.language).instruction,
            "node": node,
            "ancestors": [node_data(a) for a in self.ancestors],
            "siblings": [node_data(s) for s in self.siblings],
            "strategy": self.strategy.removeprefix("by ").strip() or self.strategy,  # "by {{ }}"
            "critiques": plain_critiques(self.critiques, self.node.title),
            "constraints": [c.to_json() for c in self.constraints],
            # The 1.5B model ignores "3 to 5 items" but mostly follows "4 parts (at least 3, ...)".
            "limits": {
                "min_children": low,
                "max_children": high,
                "target": max(low, target - self.fewer),
            },
            "is_last_level": self.is_last_level,
            "fact_fields": self.fact_fields,
            "proposal": [c.to_json() for c in self.proposal],
            "lens": {"name": self.lens.name, "question": self.lens.question} if self.lens else None,
            "avoid": list(self.avoid),
            "vague": self.vague,
            "leaf": node,
            "judged": self.judged,
            "planned": [{"title": w.title, "lines": list(w.lines)} for w in self.planned],
            "critique": list(self.critique),
            "failed": list(self.failed),
            "previous": self.previous,
            "children": [dict(c) for c in self.children],
            "kept": list(self.kept),
            "wanted": self.wanted,
            "span": dict(self.span) if self.span else dict(NO_SPAN),
            "form": form_of(self.span, self.kept, self.wanted),
        }


FORM_LINES = 8
"""Most lines a whole result's :func:`form_of` lays out (the prompt asks for 5 to 8)."""


def form_of(span: Mapping[str, Any] | None, kept: Sequence[str] = (), wanted: int = 0) -> list[str]:
    """The unit label each line to write starts with ("Day 6", "Day 6", "Day 7", ...), one per
    line, in the schedule's order; empty without a span. For a whole result (``wanted`` 0): the
    span's ``lines`` per unit, at most :data:`FORM_LINES` in all (at least one per unit), shared
    evenly; for ``wanted`` more lines beside ``kept``, each goes to the unit with the fewest
    lines so far (the earliest on a tie; a kept line's unit read by its leading label,
    :func:`~specswarm.critics.shingles.unit_number`). A small model fills in a form it is shown
    line for line where it stops short of "write 6 lines"."""
    labels = [str(label) for label in (span or {}).get("labels") or ()]
    if not labels:
        return []
    if not wanted:
        per = int((span or {}).get("lines") or 1)
        rows = max(len(labels), min(FORM_LINES, per * len(labels)))
        return [labels[i * len(labels) // rows] for i in range(rows)]
    start = int((span or {}).get("start") or 0)
    have = [0] * len(labels)
    for line in kept:
        label = unit_number(line)
        if label is not None and 0 <= label[0] - start < len(labels):
            have[label[0] - start] += 1
    picked: list[int] = []
    for _ in range(wanted):
        unit = min(range(len(labels)), key=lambda u: (have[u], u))
        have[unit] += 1
        picked.append(unit)
    return [labels[u] for u in sorted(picked)]


@dataclass
class TaskCounts:
    """What happened inside tasks that a peer's own counters cannot see.

    Mutable and unlocked: give each caller its own, or share one only between
    tasks that run one at a time."""

    retries: int = 0
    """Generations asked again after an unusable answer."""
    loops_cut: int = 0
    """Answers in which a looping line was cut."""
    fitted: int = 0
    """Splits whose sum facts (e.g. days) were rescaled in code to meet a declared total."""
    redone: int = 0
    """Leaf results written again: they repeated a sibling leaf's result, broke the leaf's facts,
    did only sibling leaves' tasks (``astray``) or were general advice (``sharpened``)."""
    revised: int = 0
    """Leaf results written again after the board rejected them (``review.results``), with the
    board's critique in the prompt."""
    sharpened: int = 0
    """Of ``redone``: results asked again for names, numbers and times (mostly general advice)."""
    astray: int = 0
    """Of ``redone``: results whose every item did a sibling leaf's task, none their own
    (siblings' results are written in parallel, so such a result is often not yet a repeat)."""
    off_task: int = 0
    """Items of leaf results left out because they did a sibling leaf's task instead of their own
    (:func:`~specswarm.critics.keep_on_task`)."""
    mended: int = 0
    """Lines of leaf results for the board that the executor's own pass left out
    (:func:`~specswarm.critics.mend.mend_result`): they broke the leaf's facts, drifted to
    another node, repeated a line or carried no specific."""
    completed: int = 0
    """Answers asked for the lines a mended leaf result still lacked (at most
    :data:`~specswarm.model.judged.ROUNDS` per result)."""
    rewritten: int = 0
    """First leaf results for the board written once more, sampled (at most once per result):
    the first answer, completed, was still shorter than the board accepts."""
    repaired: int = 0
    """Splits repaired in code before proposing: overlapping children merged, repeating ones
    dropped (:func:`~specswarm.critics.repair.repair_split`)."""
    varied: int = 0
    """Splits asked again another way (another strategy, the self-check's critique in the
    prompt) because the first failed a hard check or repeated a split already proposed."""
    varied_requests: int = 0
    """Generations asked to sample instead of greedy decoding: a retry that would have repeated
    its prompt word for word, or a node's split asked again after failed calls."""
    bad_outputs: Counter[str] = field(default_factory=Counter)
    """Answers that could not be used (each one triggers a retry or a failure), by task kind."""
    failures: Counter[str] = field(default_factory=Counter)
    """Tasks that gave up (a :class:`GaveUpError`, or a None rating), by task kind."""
    structured: Counter[str] = field(default_factory=Counter)
    """Generations whose answer the backend held to the task's JSON schema, by task kind."""
    free: Counter[str] = field(default_factory=Counter)
    """Generations answered in free text (no schema asked, or the server does not support it)."""

    def to_json(self) -> dict[str, int | dict[str, int]]:
        return {
            "retries": self.retries,
            "loops_cut": self.loops_cut,
            "fitted": self.fitted,
            "redone": self.redone,
            "revised": self.revised,
            "sharpened": self.sharpened,
            "astray": self.astray,
            "off_task": self.off_task,
            "mended": self.mended,
            "completed": self.completed,
            "rewritten": self.rewritten,
            "repaired": self.repaired,
            "varied": self.varied,
            "varied_requests": self.varied_requests,
            "failures": dict(self.failures),
            "bad_outputs": dict(self.bad_outputs),
            "structured": dict(self.structured),
            "free": dict(self.free),
        }


def token_cap(limits: TokenLimits, kind: Kind) -> int:
    return int(getattr(limits, kind))  # one field per task kind


VARIED_TEMPERATURE = 0.7
"""Sampling temperature of a varied request (:func:`request`'s ``vary``)."""
VARIED_TOP_K = 40


def request(
    settings: ModelSettings,
    kind: Kind,
    system: str,
    prompt: str,
    schema: OutputSchema | None = None,
    vary: int = 0,
) -> GenerationRequest:
    """The request for one generation. ``vary`` > 0: the same question asked to sample (a
    greedy model asked the same prompt gives the same unusable answer), seeded by ``vary``."""
    # float()/int() as ever: the cassette key hashes these values, and 0 is not 0.0 there.
    return GenerationRequest(
        prompt=prompt,
        system=system,
        max_tokens=int(token_cap(settings.max_tokens, kind)),
        temperature=float(max(settings.temperature, VARIED_TEMPERATURE) if vary else settings.temperature),
        top_k=int(max(settings.top_k, VARIED_TOP_K) if vary else settings.top_k),
        seed=int(settings.seed) + vary,
        repeat_penalty=float(settings.repeat_penalty),
        schema=schema,
    )
