"""Repairs a decomposer makes to its own split before it proposes it (pure, no model).

A greedy model asked again gives the same answer, and the small model rarely follows a
critique ("#1 and #4 both plan Tokyo") when it revises. What the critics find by content
can often be fixed in code without losing what the model wrote:

- siblings that plan the same thing (:func:`~.overlap.overlap_groups`) become one child:
  the first one's title, every detail, additive facts summed ("Tokyo" 5 days and "Design
  tours in Tokyo" 2 days become "Tokyo", 7 days);
- a child that repeats its parent, an ancestor or a node planned elsewhere in the tree
  (:func:`~.overlap.repeating`) is dropped: that content is planned already;
- a title whose quantity its own facts contradict ("Visit Osaka (0 days)" with ``days: 1``)
  loses the quantity: the facts are what the sums are checked on (and fitted to);
- a child given none of a schedule (``days: 0`` of the parent's ``days: 2``: "Return to Tokyo
  by train") joins the sibling before it;
- a title that opens a bracket it never closes ("Hike Mount Fuji (Start your hike from the")
  ends before it, the rest going to the detail.

Neither repair takes a split below ``min_children``: the split is then left as it is, for
the scorers to reject and the decomposer to attack differently. Sums the repair changes
(days of a dropped child) are fitted again by the caller, who knows the totals.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from specswarm.critics.evidence import lexicon_of
from specswarm.critics.items import Item, Relative
from specswarm.critics.numbers import TIME_UNITS, check_units
from specswarm.critics.overlap import overlap_groups, repeating
from specswarm.critics.quantities import fact_unit, is_additive, numeric
from specswarm.protocol.bodies import Child


@dataclass
class Repairs:
    """What :func:`repair_split` changed (for the decomposer's counters and its rationale)."""

    merged: int = 0
    """Children folded into a sibling that planned the same thing."""
    dropped: int = 0
    """Children dropped because they repeat a node planned elsewhere."""
    retitled: int = 0
    """Titles cut: a quantity its facts contradict, or a bracket left open."""
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.merged or self.dropped or self.retitled)


def repair_split(
    parent: Item,
    children: Sequence[Child],
    relatives: Sequence[Relative] = (),
    *,
    min_children: int = 2,
    depth: int | None = None,
) -> tuple[list[Child], Repairs]:
    """``children`` with overlapping siblings merged and repeating children dropped, while at
    least ``min_children`` remain; and what was changed."""
    done = Repairs()
    children = _merge_empty(parent, [_tidy_title(c, done) for c in children], min_children, done)
    slots: list[Child | None] = list(children)
    lex = lexicon_of(parent, children, relatives)
    for shared, members in overlap_groups(parent, children, relatives, lex=lex):
        live = [(k, c) for k in members if (c := slots[k]) is not None]
        alive = sum(1 for c in slots if c is not None)
        if len(live) < 2 or alive - (len(live) - 1) < min_children:
            continue
        merged = merge_children([c for _, c in live])
        slots[live[0][0]] = merged
        for k, _ in live[1:]:
            slots[k] = None
        done.merged += len(live) - 1
        what = ", ".join(shared)
        done.notes.append(f'merged {len(live)} children that all plan {what} into "{merged.title}"')
    kept = [c for c in slots if c is not None]
    hits = repeating(parent, kept, relatives, parent_depth=depth, lex=lexicon_of(parent, kept, relatives))
    drop = {i: why for i, why in hits[: max(0, len(kept) - min_children)]}
    for i, why in drop.items():
        done.notes.append(f'dropped "{kept[i].title}": it {why}')
    done.dropped = len(drop)
    return [c for i, c in enumerate(kept) if i not in drop], done


def merge_children(parts: Sequence[Child]) -> Child:
    """One child for several that plan the same thing: the first title, every distinct detail,
    additive numeric facts summed (other facts: the first one's). A quantity in the title that
    no longer agrees with the summed facts ("(5 days)") is taken out of the title."""
    first = parts[0]
    details: list[str] = []
    for p in parts:
        d = p.detail.strip().rstrip(".")
        if d and d not in details:
            details.append(d)
    facts: dict[str, int | str] = {}
    for p in parts:
        for key, value in p.facts.items():
            if key not in facts:
                facts[key] = value
                continue
            had = facts[key]
            if is_additive(key) and isinstance(had, int) and isinstance(value, int):
                facts[key] = had + value
    title = first.title
    candidate = Child(title, "; ".join(details), all(p.leaf for p in parts), facts)
    if not check_units([candidate]).passed:
        title = _strip_quantities(title) or title
    return Child(title, candidate.detail, candidate.leaf, facts)


_QUANTITY = re.compile(r"\s*[(\[][^)\]]*\d[^)\]]*[)\]]|\s*[,:–-]\s*\d+(?:[.,]\d+)?\s*-?\s*[A-Za-z]+\s*$")


def _strip_quantities(title: str) -> str:
    """``title`` without its bracketed quantities ("Visit Kyoto (4 days)" -> "Visit Kyoto")."""
    return " ".join(_QUANTITY.sub("", title).split())


def _tidy_title(child: Child, done: Repairs) -> Child:
    """``child`` with a bracket its title leaves open moved to the detail, and a title quantity
    its facts contradict taken out (counted and noted in ``done``)."""
    title, detail = child.title, child.detail
    cut = _open_bracket(title)
    if cut is not None:
        rest = title[cut:].lstrip("([ ").strip()
        title = title[:cut].rstrip(" -:,")
        detail = f"{rest}; {detail}" if detail and rest else (rest or detail)
    if not check_units([Child(title, detail, child.leaf, child.facts)]).passed:
        title = _strip_quantities(title) or title
    if title == child.title:
        return child
    done.retitled += 1
    done.notes.append(f'retitled "{child.title}" as "{title}"')
    return Child(title, detail, child.leaf, child.facts)


def _open_bracket(title: str) -> int | None:
    """Where the last bracket ``title`` opens and never closes starts (None: all closed, or
    the bracket is the whole title)."""
    depth, start = 0, None
    for i, ch in enumerate(title):
        if ch in "([":
            if depth == 0:
                start = i
            depth += 1
        elif ch in ")]" and depth:
            depth -= 1
            if depth == 0:
                start = None
    return start if depth and start else None


def _merge_empty(parent: Item, children: list[Child], min_children: int, done: Repairs) -> list[Child]:
    """``children`` with each one that gets 0 of a time fact the parent splits (``days: 0``)
    merged into the sibling before it (the first into the one after), while more than
    ``min_children`` remain."""
    keys = [
        k
        for k, v in parent.facts.items()
        if is_additive(k) and fact_unit(k) in TIME_UNITS and (numeric(v) or 0) > 0
    ]
    out = list(children)
    for key in keys:
        i = 0
        while i < len(out) and len(out) > min_children:
            v = numeric(out[i].facts.get(key))
            if v is None or v > 0:
                i += 1
                continue
            into = i - 1 if i else 1
            first, second = sorted((i, into))
            merged = merge_children([out[first], out[second]])
            done.merged += 1
            done.notes.append(f'merged "{out[i].title}" ({key}: 0) into "{out[into].title}"')
            out[first] = replace(merged, title=out[into].title)
            del out[second]
            i = first
    return out
