"""An executor's own pass over a leaf result before it goes to the board: the item lines the
board's lenses (:mod:`.results`) would hold against it are left out, and what it still lacks
to be accepted is counted, so the executor asks the model for that many more lines instead of
writing the whole result again. Pure functions, no model.

A line whose leading unit label is past the leaf's units ("Day 10:" in a task of days 8-9) is
moved to the nearest one when that is all that is wrong with it (:func:`relabelled`); the
prompt's own format for facts, copied into a line ("(hours = 2)"), is taken out of it
(:func:`untagged`). A line is left out when it

* says what the task's facts rule out ("Day 5" in a task of days 1-2: ``consistent``);
* is closer to another node than to its own leaf, when more than half of the lines are, or
  names what a node off the leaf's path names (``on_task``);
* repeats a line of an earlier leaf's counted result, names what such a line names, or
  says word for word a line above it, its unit label aside ("Day 11: Return to the base camp"
  after "Day 10: Return to the base camp": ``new``);
* carries no specific: no digit and too few words its task does not already say
  (``concrete``).

The same lenses judge the mended result on the board; a line kept here can still fail there
(the ledger may have grown, or the result as a whole may drift). A line left out only for a
name another leaf plans is put back when the model gives too few others (:func:`refilled`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from specswarm.critics.names import named_elsewhere, shared_names
from specswarm.critics.numbers import contradicted_facts
from specswarm.critics.results import (
    MIN_CHARS,
    MIN_LINES,
    ResultTask,
    Written,
    check_on_task,
    drifted_lines,
    is_concrete,
    repeated_lines,
    width,
)
from specswarm.critics.shingles import item_lines, numbered, tokens, unit_number, unlabelled

MAX_LINES = 8
"""Most item lines a result gets from the lines asked for (the prompt asks for 5 to 8)."""
ECHO = 0.65
"""Shingle Dice at or above which a line the model was asked for only says again a line kept
already (the lines of one task share more wording than lines of two tasks do, so the bar is
higher than the ``new`` lens's)."""
TARGET_LINES = 6
"""Item lines a mended result asks for: one more than the concrete lens's
:data:`~specswarm.critics.results.MIN_LINES`, so one line the board holds against it still
leaves enough."""
MARKERS = ("- ", "* ", "• ")


@dataclass(frozen=True)
class Mended:
    """A result after the executor's pass."""

    kept: tuple[str, ...]
    """Its item lines the lenses hold nothing against, in order."""
    dropped: tuple[tuple[int, str], ...] = ()
    """(index among the item lines, the lens that holds it) of each line left out."""
    wanted: int = 0
    """More lines to ask for: up to :data:`TARGET_LINES`, and at least one while the kept lines
    are under :data:`~specswarm.critics.results.MIN_CHARS` characters."""
    spare: tuple[str, ...] = ()
    """Lines left out only for naming what another leaf plans (:mod:`.names`): put back, in
    order, when the model gives too few others to make the result long enough
    (:func:`refilled`). A result that repeats a name fails one lens; a thin one fails the reader."""

    def text(self) -> str:
        """The kept lines as a list ("- " each)."""
        return "\n".join(f"- {line}" for line in self.kept)


def listed(text: str) -> bool:
    """Whether ``text`` is a plain list: every non-blank line a list item, no code block (only
    such a result is mended line by line; any other is left as it is)."""
    rows = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return bool(rows) and all(r.startswith(MARKERS) or numbered(r.partition(" ")[0]) for r in rows)


def mend_result(text: str, task: ResultTask) -> Mended:
    """``text``'s item lines without those the board's lenses hold against it (see the module
    docstring), and how many more to ask for. A result that is not a plain list
    (:func:`listed`) is kept whole, wanting nothing."""
    lines = item_lines(text)
    if not listed(text):
        return Mended(tuple(lines))
    lines = _cleaned(lines, task)
    held, by_name = _held(lines, task, 0)
    kept: list[str] = []
    seen: set[str] = set()
    for i, line in enumerate(lines):
        if i in held:
            continue
        said = unlabelled(line)
        if said in seen:
            held[i] = "new"
        else:
            kept.append(line)
            seen.add(said)
    spare = tuple(lines[i] for i in sorted(by_name))
    return Mended(tuple(kept), tuple(sorted(held.items())), _wanted(kept), spare)


def _held(
    lines: Sequence[str], task: ResultTask, settled: int = 0, drift: bool = True
) -> tuple[dict[int, str], set[int]]:
    """Index -> the lens that holds it, of the lines past the first ``settled`` (lines kept
    already), and which of them are held only for a name (planned by an earlier leaf: ``new``;
    by a node off the leaf's path: ``on_task``). ``drift``: drifted lines are held too, but only
    when the on_task lens would fail for them (more than half of the lines drift, or the lines
    as a whole): a line the size of one sentence often shares more with a neighbour's title
    than with its own, and the board lets a few such lines pass."""
    known = set(tokens(task.task))
    fresh = range(settled, len(lines))
    held = {i: "consistent" for i in fresh if contradicted_facts(lines[i], task.facts, task.span)}
    for i, _, _ in repeated_lines(lines, task.ledger):
        if i >= settled:
            held.setdefault(i, "new")
    held |= {i: "concrete" for i in fresh if i not in held and not is_concrete(lines[i], known)}
    planned = [line for w in task.ledger for line in w.lines]
    named = [(i, "new") for i, _, _ in shared_names(lines, planned, task.known)]
    named += [(i, "on_task") for i, _, _ in named_elsewhere(lines, task.rest, task.known)]
    by_name = {i for i, lens in named if i >= settled and i not in held}
    for i, lens in named:
        if i in by_name:
            held.setdefault(i, lens)
    if not drift:
        return held, by_name
    rest = [i for i in range(len(lines)) if i not in held]
    drifted, near = drifted_lines([lines[i] for i in rest], task.own, task.others)
    astray = [rest[j] for idx in drifted.values() for j in idx]
    if near or 2 * len(astray) > len(rest):
        held.update((i, "on_task") for i in astray if i >= settled)
    return held, by_name


def _on_task(lines: Sequence[str], task: ResultTask) -> bool:
    return check_on_task(lines, task.own, task.others).passed


def _chars(lines: Sequence[str]) -> int:
    return sum(width(line) for line in lines)


def _wanted(kept: Sequence[str]) -> int:
    short = max(0, TARGET_LINES - len(kept))
    return short or (1 if _chars(kept) < MIN_CHARS else 0)


def added_lines(answer: str, mended: Mended, task: ResultTask) -> Mended:
    """``mended`` with the lines of ``answer`` (the model asked for ``mended.wanted`` more) that
    pass the same pass against the task and are no echo of a line kept already (:data:`ECHO`),
    added one at a time while the on_task lens passes on the lines so far: at most ``wanted``
    of them, or as many as fit in :data:`MAX_LINES`, all in the order of their leading unit
    labels ("Day 6: ..." before "Day 7: ...")."""
    new = _cleaned(item_lines(answer), task)
    echoes = {i for i, _, _ in repeated_lines(new, [Written("", mended.kept)], ECHO)}
    new = [line for i, line in enumerate(new) if i not in echoes]
    lines = [*mended.kept, *new]
    held, by_name = _held(lines, task, len(mended.kept), drift=False)
    room = max(mended.wanted, MAX_LINES - len(mended.kept))
    chosen = list(mended.kept)
    seen = {unlabelled(line) for line in chosen}
    for i, line in enumerate(new, len(mended.kept)):
        said = unlabelled(line)
        if len(chosen) - len(mended.kept) >= room or i in held or said in seen:
            continue
        # one at a time, as long as the lines stay on task (or were not on task before it)
        if _on_task([*chosen, line], task) or not _on_task(chosen, task) and _on_task([line], task):
            chosen.append(line)
            seen.add(said)
    kept = in_unit_order(chosen, task.span)
    # the new lens weighs shingles by how rare they are among the lines judged: with the new
    # lines in, a line near the bar may cross it
    while repeats := {kept[i] for i, _, _ in repeated_lines(kept, task.ledger, known=task.known)}:
        kept = [line for line in kept if line not in repeats]
    spare = (*mended.spare, *(lines[i] for i in sorted(by_name)))
    return Mended(tuple(kept), mended.dropped, _wanted(kept), spare)


def refilled(mended: Mended, span: tuple[str, int, int] | None = None) -> Mended:
    """``mended`` with its :attr:`~Mended.spare` lines put back, in order, until it is long
    enough for the concrete lens (:func:`enough`) or none is left; in the order of the leaf's
    units (``span``: :func:`in_unit_order`)."""
    kept = list(mended.kept)
    seen = {unlabelled(line) for line in kept}
    for line in mended.spare:
        if enough(Mended(tuple(kept))):
            break
        said = unlabelled(line)
        if said not in seen:
            kept.append(line)
            seen.add(said)
    kept = in_unit_order(kept, span)
    return Mended(tuple(kept), mended.dropped, _wanted(kept))


FACT_TAG = re.compile(r"(?:^|\s+)\((?:\s*[^\W\d]\w{0,30}\s*=\s*[^(),=]{1,40}?\s*,?)+\)")
"""The format the prompts give facts in, "(days = 5)" or "(days = 2, budget_eur = 300)": a
small model copies it into its lines ("Explore Kinkakuji Temple (hours = 2)")."""


def _cleaned(lines: Sequence[str], task: ResultTask) -> list[str]:
    """``lines`` relabelled (:func:`relabelled`) and untagged (:func:`untagged`), empty ones
    left out."""
    return [line for line in (untagged(relabelled(line, task)) for line in lines) if line]


def untagged(line: str) -> str:
    """``line`` without the prompt's format for facts (:data:`FACT_TAG`) copied into it."""
    return " ".join(FACT_TAG.sub("", line).split())


def relabelled(line: str, task: ResultTask) -> str:
    """``line`` with a leading unit label past the leaf's units in the schedule moved to the
    nearest of them ("Day 10:" -> "Day 9:" in a task of days 8-9), when that is all its facts
    hold against it; else ``line`` as it is. A small model asked for two days' lines often
    numbers on; what it plans is the leaf's all the same."""
    label = unit_number(line)
    span = task.span
    if label is None or span is None or not contradicted_facts(line, task.facts, span):
        return line
    n, start, end = label
    if span[1] <= n <= span[2]:
        return line
    moved = f"{line[:start]}{min(max(n, span[1]), span[2])}{line[end:]}"
    return line if contradicted_facts(moved, task.facts, span) else moved


def in_unit_order(lines: Sequence[str], span: tuple[str, int, int] | None) -> list[str]:
    """``lines`` stably sorted by their leading label ("Day 6:", "Week 2 -") when its number is
    one of the leaf's units in ``span`` (its place in the schedule); a line without one goes with
    the line above it (the first lines with the first unit). Without a span the order is kept."""
    if span is None:
        return list(lines)
    units = set(range(span[1], span[2] + 1)) | set(range(1, span[2] - span[1] + 2))
    keyed = []
    key = span[1]
    for line in lines:
        label = unit_number(line)
        key = label[0] if label is not None and label[0] in units else key
        keyed.append((key, line))
    return [line for _, line in sorted(keyed, key=lambda kv: kv[0])]


def enough(mended: Mended) -> bool:
    """Whether the kept lines are as many and as long as the concrete lens asks."""
    return len(mended.kept) >= MIN_LINES and _chars(mended.kept) >= MIN_CHARS


def fullness(mended: Mended) -> tuple[bool, int, int]:
    """How near the kept lines come to what the concrete lens asks, to rank two answers: enough
    of them (:func:`enough`), then how many, then their characters."""
    return enough(mended), len(mended.kept), _chars(mended.kept)
