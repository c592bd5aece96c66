"""The ``summarize`` task: a short summary of a split node, from what its children hold.

An executor asks it once a split node's children are done (``review.summaries``): the prompt
names the node, the path from the root and each child's title with its counted result (a leaf)
or summary (a split child), each cut to :data:`CHILD_CHARS`. The answer is untrusted text:
:func:`parse_summary` keeps 2 to 4 sentences of prose and refuses an empty answer, a list, a
heading or code, one too long or too short, and one that names a number the parts do not (a new
fact); a refused answer is asked again with the problem named (:func:`~specswarm.model.tasks.
_attempts`), and after the last try the task raises :class:`~specswarm.model.tasks.GaveUpError`.
:func:`fallback_summary` is the text a writer publishes then, made without the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from specswarm.model.asking import Ask, TaskCounts
from specswarm.model.base import Model
from specswarm.model.parse import OutputError, strip_markdown
from specswarm.model.subject import Subject
from specswarm.model.tasks import MAX_RETRIES, _attempts
from specswarm.spec import GoalSpec

CHILD_CHARS = 500
"""Characters of a child's result or summary a summary prompt holds, at most (whole lines)."""
MAX_SUMMARY_CHARS = 700
"""The longest summary kept (about four long sentences)."""
MIN_SUMMARY_CHARS = 20
MAX_SENTENCES = 5
"""Sentences a summary may have (the prompt asks for 2 to 4; one more is tolerated)."""
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+")
_SENTENCE_END = re.compile(r"[.!?。！？।](?=\s|$)")
_LABEL = re.compile(r"^\s*(?:\*\*)?summary(?:\*\*)?\s*:\s*", re.I)
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def child_data(title: str, detail: str, facts: Mapping[str, Any], leaf: bool, text: str) -> dict[str, Any]:
    """What the ``children`` variable of a summary prompt holds of one child: ``text`` (its result
    or summary) cut to :data:`CHILD_CHARS` at a line's end."""
    cut = text.strip()
    if len(cut) > CHILD_CHARS:
        head = cut[:CHILD_CHARS]
        cut = head[: head.rfind("\n")] if "\n" in head else head
    return {"title": title, "detail": detail, "facts": dict(facts), "leaf": leaf, "text": cut.strip()}


def parse_summary(text: str, *, known: str = "") -> str:
    """The summary in ``text`` as one paragraph, or OutputError naming what is wrong: empty, a
    list, code, JSON or headings rather than prose, too long or too short, or a number that
    ``known`` (what the prompt said of the node and its parts) does not hold."""
    text = text.strip()
    if "```" in text or text.startswith(("{", "[")):
        raise OutputError("the answer was code or JSON, not 2 to 4 sentences of prose")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if sum(1 for ln in lines if _BULLET.match(ln)) > 1:
        raise OutputError("the answer was a list; write 2 to 4 sentences of prose, no list")
    if any(ln.lstrip().startswith("#") for ln in lines):
        raise OutputError("the answer had headings; write 2 to 4 sentences of prose only")
    prose = strip_markdown(" ".join(_BULLET.sub("", ln).strip() for ln in lines))
    prose = " ".join(_LABEL.sub("", prose).split())
    if not re.search(r"\w", prose):
        raise OutputError("the answer was empty")
    if len(prose) > MAX_SUMMARY_CHARS or len(_SENTENCE_END.findall(prose)) > MAX_SENTENCES:
        raise OutputError(f"the answer was too long ({len(prose)} characters); write 2 to 4 short sentences")
    if len(prose) < MIN_SUMMARY_CHARS:
        raise OutputError("the answer was too short; write 2 to 4 sentences")
    if known:
        new = [n for n in _NUMBER.findall(prose) if n not in known]
        if new:
            raise OutputError(f"the summary names {', '.join(new[:3])}, which no part says; add no new facts")
    return prose


def summarize(
    model: Model,
    spec: GoalSpec,
    node: Subject,
    ancestors: Sequence[Subject],
    children: Sequence[Mapping[str, Any]],
    *,
    counts: TaskCounts | None = None,
    attempt: int = 0,
    failure: str = "",
) -> str:
    """Summarize split ``node`` from its ``children`` (:func:`child_data` each); the summary text.
    ``attempt`` and ``failure`` as for :func:`~specswarm.model.tasks.execute`."""
    ask = Ask(spec, node, ancestors, children=children)
    known = "\n".join(
        [node.title, node.detail, *map(str, node.facts.values())]
        + [
            f"{c['title']}\n{c['detail']}\n{c['text']}\n{' '.join(map(str, c['facts'].values()))}"
            for c in children
        ]
    )
    tally = counts if counts is not None else TaskCounts()
    parse = partial(parse_summary, known=known)
    return _attempts(model, "summarize", ask, parse, tally, attempt * (MAX_RETRIES + 1), failure)


def fallback_summary(title: str, child_titles: Sequence[str]) -> str:
    """The summary a split node gets when the model gives no usable one: its title and its
    children's titles, in the plan's own words (no language of its own)."""
    parts = "; ".join(" ".join(t.split()) for t in child_titles)
    return f"{' '.join(title.split())}: {parts}."[:MAX_SUMMARY_CHARS]
