"""The spec's declared constraints (``sum`` / ``mention`` / ``forbid``, with ``applies_to``), as
one hard check named ``constraints``; also what :mod:`specswarm.model.tasks` reads to ask the
model for facts and to fit sums in code."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from specswarm.critics.items import Check, Item, clamp, label
from specswarm.critics.scripts import is_unspaced
from specswarm.spec import Constraint


def _text(item: Item) -> str:
    return f"{item.title} {item.detail}"


def constraints_for(constraints: Iterable[Constraint], depth: int) -> list[Constraint]:
    """The constraints that apply to a split of a node at ``depth`` (root = 0)."""
    return [c for c in constraints if c.applies_to == "all" or depth == 0]


def _mentions(text: str, term: str) -> bool:
    """Whether ``text`` holds ``term`` as a whole word; an end of the term in a script written
    without spaces needs no word boundary there ("咖啡机" is in "购买咖啡机")."""
    t = term.lower()
    before = "" if t and is_unspaced(t[0]) else r"(?<!\w)"
    after = "" if t and is_unspaced(t[-1]) else r"(?!\w)"
    return re.search(rf"{before}{re.escape(t)}{after}", text.lower()) is not None


def check_constraints(
    parent: Item, children: Sequence[Item], constraints: Iterable[Constraint], depth: int
) -> Check:
    applicable = constraints_for(constraints, depth)
    problems: list[str] = []
    checked = 0
    texts = [_text(c) for c in children]
    for con in applicable:
        kind = con.kind
        if kind == "sum":
            field = str(con.field)
            total = con.total if depth == 0 else parent.facts.get(field)
            if total is None:  # a deeper node that declares no such fact
                continue
            checked += 1
            values = [c.facts.get(field) for c in children]
            lacking = [
                label(i, c)
                for i, (c, v) in enumerate(zip(children, values, strict=True))
                if not isinstance(v, int | float) or isinstance(v, bool)
            ]
            if lacking:
                problems.append(f"{field} missing on {', '.join(lacking)}")
                continue
            got = sum(float(v) for v in values if v is not None)
            if not math.isclose(got, float(total)):
                problems.append(f"{field} add up to {got:g}, expected {float(total):g}")
        elif kind == "mention":
            checked += 1
            joined = " ".join(texts)
            absent = [t for t in con.terms if not _mentions(joined, t)]
            if absent:
                problems.append(f"not mentioned: {', '.join(absent)}")
        elif kind == "forbid":
            checked += 1
            named = sorted({t for t in con.terms for x in texts if _mentions(x, t)})
            if named:
                problems.append(f"forbidden: {', '.join(named)}")
    if not checked:
        return Check("constraints", 100, True, "no constraints apply")
    if problems:
        score = 100 * (1 - len(problems) / checked)
        return Check("constraints", clamp(score), False, "; ".join(problems))
    return Check("constraints", 100, True, f"{checked} constraint(s) met")
