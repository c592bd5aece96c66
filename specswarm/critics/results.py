"""The board's critics of a leaf result (``review.results``): four lenses, mechanical and
language-independent (character shingles, digits of any script, line counts and lengths;
:mod:`.shingles`; names told by capitals: :mod:`.names`). Pure functions, no model.

============  ==============================================================================
lens          fails when
============  ==============================================================================
concrete      the result is thin: fewer than :data:`MIN_LINES` item lines or
              :data:`MIN_CHARS` characters, or too few lines carry a specific (a digit of
              any script, or :data:`NEW_TOKENS` words its task's own text does not hold)
on_task       the result is closer to another node than to its own leaf: to a sibling, a
              stage beside its branch or a node planned before it (the whole result, or half
              of its lines); or a line names what a node off its path names (:mod:`.names`)
new           an item line says word for word a line above it (its unit label aside), or
              says what a line of another leaf's counted result says (shingle
              Dice >= :data:`NEAR_DUPLICATE`, shingles weighted by how rare they are among the
              other lines; the results written before it, in tree order: the ledger), or
              names a place, thing or component such a line names (:mod:`.names`)
consistent    the result says what the leaf's facts rule out ("Day 3" in a two-day task;
              :func:`~specswarm.critics.numbers.contradicted_facts`)
============  ==============================================================================

Every scorer runs all four, and every check's verdict depends on the result and the tree
before it alone: two scorers of one result write the same critique, whichever voted first.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from specswarm.critics.items import Check, Facts, clamp
from specswarm.critics.names import named_elsewhere, shared_names
from specswarm.critics.numbers import contradicted_facts
from specswarm.critics.shingles import (
    UNIT_LABEL,
    Weights,
    closest,
    cosine,
    has_digit,
    item_lines,
    pair_dice,
    shingles,
    tokens,
    unlabelled,
)

RESULT_CHECKS = ("concrete", "on_task", "new", "consistent")
"""The checks :func:`check_result` returns, in this order."""
MIN_LINES = 5
"""Fewest item lines of a result."""
MIN_CHARS = 200
"""Fewest characters of a result's item lines together (:func:`width`: a wide East Asian
character counts two)."""
CONCRETE_SHARE = 0.6
"""Share of the item lines that must carry a specific."""
NEW_TOKENS = 2
"""Words absent from the task's own text that make a line specific (a word longer than
:data:`LONG_TOKEN` characters, as scripts without spaces write whole phrases, counts once per
that many characters)."""
LONG_TOKEN = 6
NEAR_DUPLICATE = 0.45
"""Shingle Dice (:func:`~specswarm.critics.shingles.pair_dice`: shingles weighted by how
rare they are among the other lines) at or above which two item lines say the same thing."""
DRIFT_MARGIN = 0.05
"""How much closer to another node than to its own a text must be to count as drifted."""
DRIFT_FLOOR = 0.12
"""A line this little like any other node says too little to have drifted anywhere."""
QUOTE = 70
"""Characters of a line quoted in a note."""


@dataclass(frozen=True)
class Written:
    """A counted result of another leaf, as the ledger holds it."""

    title: str
    """The leaf's title."""
    lines: tuple[str, ...]
    """Its item lines (:func:`~specswarm.critics.shingles.item_lines`)."""
    number: str = ""
    """The leaf's outline number ("2.1"), to name it in a note."""


@dataclass(frozen=True)
class ResultTask:
    """What a result is judged against: its leaf and the tree around it."""

    facts: Facts
    """The leaf's facts."""
    task: str
    """Everything the task says: the goal, the context, the leaf's and its ancestors' titles,
    details and facts (words a line repeats from it are no specific), the ancestors' less the
    names another leaf is titled after (:func:`~specswarm.critics.names.unclaimed`)."""
    own: str
    """The leaf's own text: its and its ancestors' (below the root) titles, details, facts."""
    others: Mapping[str, str]
    """Other nodes, named as a note names them -> their text (as ``own``): the leaf's siblings,
    the stages beside its branch, the nodes planned before it."""
    ledger: Sequence[Written] = ()
    """The counted results of the leaves before this one, in tree order."""
    span: tuple[str, int, int] | None = None
    """The leaf's place in the plan's schedule: (field, first, last), e.g. ("days", 6, 7)."""
    rest: Mapping[str, str] = field(default_factory=dict)
    """Every node off the leaf's path, named as a note names it -> its title and detail: a line
    naming what one of them names is planned in the wrong place (:mod:`.names`)."""
    frame: str = ""
    """The titles of the plan's split nodes: its stages name where a leaf is, not what it
    plans ("Kyoto" in a line under another stage is no sight planned twice)."""

    @property
    def known(self) -> str:
        """What the task and the plan's stages already say (:mod:`.names`: no new name)."""
        return f"{self.task} {self.frame}".strip()


def check_result(text: str, task: ResultTask) -> list[Check]:
    """The four lenses of :data:`RESULT_CHECKS` on the result ``text``."""
    lines = item_lines(text)
    return [
        check_concrete(lines, task.task),
        check_on_task(lines, task.own, task.others, task.rest, task.known),
        check_new(lines, task.ledger, task.known),
        check_consistent(text, task.facts, task.span),
    ]


def verdict(checks: Sequence[Check]) -> tuple[int, bool]:
    """The score (the checks' mean) and the verdict: approved when every check passed."""
    score = clamp(sum(c.score for c in checks) / len(checks)) if checks else 100
    return score, all(c.passed for c in checks)


def _quote(line: str) -> str:
    return f'"{line if len(line) <= QUOTE else line[: QUOTE - 1] + "…"}"'


def _numbers(idx: Sequence[int]) -> str:
    return ", ".join(str(i + 1) for i in idx)


def _which(idx: Sequence[int]) -> str:
    """ "line 2 is", "lines 2, 4 are"."""
    return f"lines {_numbers(idx)} are" if len(idx) > 1 else f"line {_numbers(idx)} is"


def _new_words(line: str, known: set[str]) -> int:
    return sum(max(1, len(t) // LONG_TOKEN) for t in tokens(line) if t not in known and len(t) >= 2)


def is_concrete(line: str, known: set[str]) -> bool:
    """Whether an item line carries a specific: a digit of any script past its leading unit
    label (:data:`~specswarm.critics.shingles.UNIT_LABEL`), or :data:`NEW_TOKENS` words
    (:func:`~specswarm.critics.shingles.tokens`) not in ``known``, the words of its task."""
    return has_digit(UNIT_LABEL.sub("", line, count=1)) or _new_words(line, known) >= NEW_TOKENS


def width(text: str) -> int:
    """Columns ``text`` takes: a wide character of East Asian scripts (Unicode East Asian Width
    W or F) counts two, as it says about what two narrow ones do."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def check_concrete(lines: Sequence[str], task: str) -> Check:
    """Enough substance: :data:`MIN_LINES` item lines, :data:`MIN_CHARS` characters, and
    :data:`CONCRETE_SHARE` of the lines with a digit or :data:`NEW_TOKENS` words of their own."""
    known = set(tokens(task))
    chars = sum(width(line) for line in lines)
    plain = [i for i, ln in enumerate(lines) if not is_concrete(ln, known)]
    specific = len(lines) - len(plain)
    need = max(1, math.ceil(CONCRETE_SHARE * max(len(lines), MIN_LINES)))
    problems = []
    if len(lines) < MIN_LINES or chars < MIN_CHARS:
        problems.append(
            f"{len(lines)} item lines, {chars} characters: write at least {MIN_LINES} lines and "
            f"{MIN_CHARS} characters"
        )
    if specific < need:
        which = f" (lines {_numbers(plain)} only repeat the task)" if plain and lines else ""
        problems.append(
            f"{specific} lines carry a specific{which}: give at least {need} a time, an amount, a "
            "date or a name the task does not already say"
        )
    ratios = (
        min(1.0, len(lines) / MIN_LINES),
        min(1.0, chars / MIN_CHARS),
        min(1.0, specific / need),
    )
    score = clamp(100 * sum(ratios) / len(ratios))
    if not problems:
        return Check("concrete", score, True, f"{len(lines)} lines, {chars} characters, {specific} specific")
    return Check("concrete", min(score, 59), False, "; ".join(problems))


def drifted_lines(
    lines: Sequence[str], own: str, others: Mapping[str, str]
) -> tuple[dict[str, list[int]], str]:
    """The item lines closer (weighted shingle cosine) to another node's text than to the leaf's
    own (``own``), by the node they drift to; and the node the whole result is closer to than to
    its own, or "" when it is not (see :func:`check_on_task`)."""
    if not lines or not others:
        return {}, ""
    own_set = shingles(own)
    sets = {name: shingles(text) for name, text in others.items()}
    w = Weights([own_set, *sets.values()])
    whole = shingles(" ".join(lines))
    own_sim = cosine(whole, own_set, w)
    near, near_sim = closest(whole, sets, w)
    drifted: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        grams = shingles(line)
        to, sim = closest(grams, sets, w)
        if sim >= DRIFT_FLOOR and sim > cosine(grams, own_set, w) + DRIFT_MARGIN:
            drifted.setdefault(to, []).append(i)
    astray = near_sim > own_sim + DRIFT_MARGIN and near_sim >= DRIFT_FLOOR
    return drifted, near if astray else ""


def check_on_task(
    lines: Sequence[str],
    own: str,
    others: Mapping[str, str],
    rest: Mapping[str, str] | None = None,
    known: str = "",
) -> Check:
    """The result is about its own leaf: the whole of it, and at least half of its lines, are
    closer (weighted shingle cosine) to the leaf's own text than to any other node's; and no line
    names what another node off its path names (``rest``; ``known``: what the task already says,
    :func:`~specswarm.critics.names.named_elsewhere`)."""
    placed = named_elsewhere(lines, rest or {}, known)
    if not lines or not (others or placed):
        return Check("on_task", 100, True, "no other node to drift to")
    drifted, near = drifted_lines(lines, own, others)
    off = {i for idx in drifted.values() for i in idx} | {i for i, _, _ in placed}
    said = "; ".join(f"{_which(idx)} about {name}" for name, idx in sorted(drifted.items()))
    named = "; ".join(f'line {i + 1} names "{n.surface}", which {node} plans' for i, node, n in placed)
    score = clamp(100 * (1 - len(off) / len(lines))) if not near else 0
    n_drifted = sum(len(v) for v in drifted.values())
    if near or n_drifted * 2 > len(lines) or placed:
        head = f"the result is closer to {near} than to its own task" if near else ""
        note = "; ".join(p for p in (head, said, named) if p) + ": write about this task only"
        return Check("on_task", min(score, 49), False, note)
    return Check("on_task", score, True, said or "every line is about this task")


def repeated_lines(
    lines: Sequence[str], ledger: Sequence[Written], bar: float = NEAR_DUPLICATE, known: str | None = None
) -> list[tuple[int, str, Written]]:
    """The item lines that say what a line of an earlier leaf's counted result says (shingle
    Dice >= ``bar``, shingles most other lines share weighing little) and, when ``known`` (what
    the task already says) is given, those that name what such a line names
    (:func:`~specswarm.critics.names.shared_names`): (the line's index, the ledger's line it
    repeats, that line's leaf), in line order."""
    theirs = [(line, w) for w in ledger for line in w.lines]
    if not lines or not theirs:
        return []
    mine = [shingles(line) for line in lines]
    sets = [shingles(line) for line, _ in theirs]
    w = Weights([*mine, *sets])
    out: dict[int, tuple[int, str, Written]] = {}
    for i, grams in enumerate(mine):
        sims = [pair_dice(grams, other, w) for other in sets]
        best = max(range(len(sets)), key=lambda j: (sims[j], -j))
        if sims[best] >= bar:
            out[i] = (i, *theirs[best])
    if known is not None:
        for i, j, _ in shared_names(lines, [line for line, _ in theirs], known):
            out.setdefault(i, (i, *theirs[j]))
    return [out[i] for i in sorted(out)]


def check_new(lines: Sequence[str], ledger: Sequence[Written], known: str = "") -> Check:
    """No item line says what a line of an earlier leaf's counted result says, or names what
    such a line names (:func:`repeated_lines`; ``known``: what the task already says), or says
    word for word a line above it, its unit label aside (:func:`unlabelled`)."""
    first: dict[str, int] = {}
    again: dict[int, str] = {}
    for i, line in enumerate(lines):
        said = first.setdefault(unlabelled(line), i)
        if said != i:
            again[i] = f"line {i + 1} {_quote(line)} says again line {said + 1}"
    repeats = list(again.values())
    if not repeats and (not lines or not any(w.lines for w in ledger)):
        return Check("new", 100, True, "nothing planned before it")
    for i, line, written in repeated_lines(lines, ledger, known=known):
        if i in again:
            continue
        where = f'"{written.title}"' + (f" ({written.number})" if written.number else "")
        repeats.append(f"line {i + 1} {_quote(lines[i])} repeats {_quote(line)} of {where}")
    score = clamp(100 * (1 - len(repeats) / len(lines)))
    if repeats:
        return Check("new", min(score, 49), False, "; ".join(repeats) + ": plan something else there")
    return Check("new", score, True, f"no line repeats the {len(ledger)} results before it")


def check_consistent(text: str, facts: Facts, span: tuple[str, int, int] | None = None) -> Check:
    """The result keeps to the leaf's facts (its days, its budget; its day labels to its own or
    its place in the schedule: :func:`contradicted_facts`)."""
    broken = contradicted_facts(text, facts, span)
    if broken:
        return Check("consistent", 20, False, "; ".join(broken))
    return Check("consistent", 100, True, "keeps to its facts" if facts else "no facts to keep to")
