"""How a model task asks: the request of one generation, and what tasks count.

:func:`request` builds the :class:`~specswarm.model.base.GenerationRequest` of one generation
from the role's model settings: greedy as the spec says, or, with ``vary``, sampled and seeded
(a greedy model asked the same prompt gives the same answer, so a question that must be asked
again is asked to sample; :mod:`specswarm.model.tasks` decides when). :class:`TaskCounts` is
what only a task sees (retries, cut loops, fitted sums, bad answers, failures, sampled asks).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from specswarm.model.base import GenerationRequest, OutputSchema
from specswarm.spec import ModelSettings, TokenLimits

Kind = Literal["decompose", "refine", "score", "execute"]
"""A model task; each has a prompt template and a token limit in the spec."""


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
    (:func:`~specswarm.plan.critics.keep_on_task`)."""
    repaired: int = 0
    """Splits repaired in code before proposing: overlapping children merged, repeating ones
    dropped (:func:`~specswarm.plan.critics.repair.repair_split`)."""
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
