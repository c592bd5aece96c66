"""Numbers that add up and titles that agree with facts: the parent's additive facts (days,
budget, hours) split among its children; a title's "(3 days)" matches the child's ``days``."""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Sequence

from specswarm.critics.items import Check, Facts, Item, Part, clamp, label
from specswarm.critics.quantities import convert, fact_unit, fmt, is_additive, numeric, parse_quantities
from specswarm.critics.scripts import word_count


def _stated(item: Item, unit: str) -> tuple[float, str] | None:
    """The quantity of ``unit`` a child states: its fact if it has one of that unit, else its
    title's (summed when a title states several). (value, how it was stated)."""
    for key, value in item.facts.items():
        v = numeric(value)
        fu = fact_unit(key)
        if v is not None and fu is not None and is_additive(key):
            c = convert(v, fu, unit)
            if c is not None:
                return c, f"{key}: {fmt(v)}"
    qs = [q for q in parse_quantities(item.title) if convert(q.low, q.unit, unit) is not None]
    if qs:
        values = [convert(q.low, q.unit, unit) or 0.0 for q in qs]
        if all(math.isclose(v, values[0]) for v in values):  # "Four weeks (4 weeks)": said twice
            return values[0], qs[0].text
        return sum(values), " + ".join(q.text for q in qs)
    return None


TIME_UNITS = frozenset({"minutes", "hours", "days", "nights", "weeks", "months"})
"""Units of a schedule: a part given none of it is no part (an amount of money may be 0)."""


def check_facts(
    parent: Item, children: Sequence[Item], declared: Sequence[str] = (), *, min_parts: int = 2
) -> Check:
    """Numbers that add up: every additive numeric fact of the parent (``days: 4``,
    ``budget_eur: 2000``) must be declared by every child, and the children's values must add
    up to the parent's. A parent with no such fact but a quantity in its title ("Visit Kyoto
    (4 days)") is checked against what the children state, when they all state it -- unless
    the spec declares a ``sum`` for a fact of that unit at this level (``declared``: the
    fields): then the constraint says what the parts add up to, and the title's quantity is
    something else ("a one-day conference" prepared over 26 weeks).

    A part of a schedule that gets none of its time fails, unless the time is too short to
    give each part of the smallest split allowed (``min_parts``: ``tree.min_children``) a
    whole unit: then no split could pass, and the parts share it."""
    problems: list[str] = []
    checked: list[str] = []
    for key, value in parent.facts.items():
        total = numeric(value)
        if total is None or not is_additive(key):
            continue
        checked.append(key)
        unit = fact_unit(key)
        vals = [numeric(c.facts.get(key)) for c in children]
        missing = [i for i, v in enumerate(vals) if v is None]
        if missing:
            parts = []
            for i in missing:
                said = _stated(Part(children[i].title), unit) if unit else None
                hint = f" (its title says {said[1]}: declare {key}: {fmt(said[0])})" if said else ""
                parts.append(f"{label(i, children[i])}{hint}")
            msg = f"{key} missing on {', '.join(parts)}: every child must declare {key}"
            if unit:
                said_all = [_stated(Part(c.title), unit) for c in children]
                if all(s is not None for s in said_all):
                    s = sum(x[0] for x in said_all if x)
                    if not math.isclose(s, total):
                        msg += f"; their titles add up to {fmt(s)} {unit}, not the parent's {fmt(total)}"
            problems.append(msg)
            continue
        got = sum(v for v in vals if v is not None)
        if not math.isclose(got, total, rel_tol=1e-9, abs_tol=1e-9):
            each = " + ".join(fmt(v) for v in vals if v is not None)
            problems.append(f"{key} add up to {fmt(got)} ({each}), not the parent's {key}: {fmt(total)}")
        empty = [i for i, v in enumerate(vals) if v is not None and v <= 0]
        if unit in TIME_UNITS and total >= max(1, min_parts) and empty:
            # a stage of a schedule that takes no time is not a stage ("Visit Osaka (0 days)"),
            # unless the total is too small to give every part of a smallest split a whole
            # unit: the steps of a one-week task share its week (facts are whole numbers)
            who = ", ".join(label(i, children[i]) for i in empty)
            problems.append(
                f"{who} {'gets' if len(empty) == 1 else 'get'} {key}: 0: give each part "
                f"some of the {fmt(total)} {key}, or plan it inside a sibling"
            )
    if not checked:
        # no declared fact: a quantity in the parent's title still bounds what children state
        summed = {u for u in (fact_unit(f) for f in declared) if u is not None}
        for q in parse_quantities(parent.title):
            if q.low != q.high:
                continue
            if any(convert(1.0, q.unit, u) is not None for u in summed):
                continue  # a declared sum of this dimension decides (check_constraints)
            stated = [x for x in (_stated(c, q.unit) for c in children) if x is not None]
            if not stated:
                continue
            checked.append(f'{q.unit} (the parent says "{q.text}")')
            got = sum(x[0] for x in stated)
            if len(stated) == len(children) and not math.isclose(got, q.low):
                problems.append(
                    f"the children state {fmt(got)} {q.unit} ({' + '.join(x[1] for x in stated)}), "
                    f'but the parent "{parent.title}" says {q.text}'
                )
            elif len(stated) < len(children) and got > q.low + 1e-9:
                problems.append(
                    f"the children already state {fmt(got)} {q.unit}, more than the parent's {q.text}"
                )
    if problems:
        return Check(
            "facts", clamp(100 * (1 - len(problems) / max(1, len(checked)))), False, "; ".join(problems)
        )
    if not checked:
        return Check("facts", 100, True, "the parent has no numeric fact to split")
    return Check("facts", 100, True, f"{', '.join(checked)} add up")


def check_units(children: Sequence[Item]) -> Check:
    """A title's quantities agree with the child's facts of that unit: "(3 days)" with
    ``days: 1`` fails; "two-week" with ``days: 14`` and "90 minutes" with ``hours: 1.5`` pass."""
    problems: list[str] = []
    for i, child in enumerate(children):
        qs = parse_quantities(child.title)
        if not qs:
            continue
        for key, value in child.facts.items():
            v = numeric(value)
            fu = fact_unit(key)
            if v is None or fu is None or not is_additive(key):
                continue
            mine = [q for q in qs if convert(q.low, q.unit, fu) is not None]
            if not mine:
                continue
            ok = any(
                (convert(q.low, q.unit, fu) or 0) - 1e-9 <= v <= (convert(q.high, q.unit, fu) or 0) + 1e-9
                for q in mine
            )
            total = sum(convert(q.low, q.unit, fu) or 0.0 for q in mine)
            if not ok and not math.isclose(total, v):
                said = " and ".join(q.text for q in mine)
                problems.append(f"{label(i, child)} says {said} but its facts say {key}: {fmt(v)}")
    if problems:
        return Check(
            "units",
            clamp(100 * (1 - len(problems) / max(1, len(children)))),
            False,
            "; ".join(problems) + ": make the title and the facts agree",
        )
    return Check("units", 100, True, "every quantity in a title agrees with the facts")


_DAY_LABEL = re.compile(r"\bday\s+(\d{1,2})\b", re.I)
_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = re.compile(
    rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b|\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b", re.I
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def date_span(text: str) -> tuple[str, str, int] | None:
    """The first and last calendar dates a text names ("April 10th", "12 May") and how many days
    they span, first to last, both counted; None when it names fewer than two different dates.
    No year is read: a span is taken within one year, in calendar order."""
    found: dict[int, str] = {}
    for m in _DATE.finditer(text):
        month = (m.group(1) or m.group(4)).lower()[:3]
        day = int(m.group(2) or m.group(3))
        if month == "may" and "May" not in m.group(0):
            continue  # "you may 3 ..." is not a date
        try:
            ordinal = datetime.date(2024, _MONTHS.index(month) + 1, day).toordinal()
        except ValueError:
            continue  # "February 31"
        found.setdefault(ordinal, m.group(0))
    if len(found) < 2:
        return None
    first, last = min(found), max(found)
    return found[first], found[last], last - first + 1


def contradicted_facts(text: str, facts: Facts, span: tuple[str, int, int] | None = None) -> list[str]:
    """What a leaf's written result says that its facts rule out: a duration or an amount larger
    than the leaf's own ("3 days" or "Day 3" for a task with ``days: 2``; "EUR 900" for one with
    ``budget_eur: 300``), or calendar dates further apart than its days ("April 10" and "April
    18" for a task with ``days: 1``: :func:`date_span`). Smaller amounts are parts of the whole
    and pass. ``span`` (field, first, last): the leaf's place in the plan's schedule; a day
    label counts either from the task's start (Day 1, Day 2) or as the plan does (Day 6, Day 7
    for days 6-7)."""
    problems: list[str] = []
    for key, value in facts.items():
        v, fu = numeric(value), fact_unit(key)
        if v is None or v <= 0 or fu is None or not is_additive(key):
            continue
        for q in parse_quantities(text):
            amount = convert(q.low, q.unit, fu)
            if amount is not None and amount > v + 1e-9:
                problems.append(f"it says {q.text!r} but the task has {key}: {fmt(v)}")
        if fu == "days":
            plan_days = range(span[1], span[2] + 1) if span is not None and span[0] == key else range(0)
            where = f" ({key} {plan_days[0]}-{plan_days[-1]} of the plan)" if plan_days else ""
            for m in _DAY_LABEL.finditer(text):
                label = int(m.group(1))
                if label > v and label not in plan_days:
                    problems.append(f"it plans {m.group(0)!r} but the task has {key}: {fmt(v)}{where}")
            dates = date_span(text)
            if dates is not None and dates[2] > v:
                first, last, days = dates
                problems.append(
                    f"it plans {first!r} to {last!r} ({days} days) but the task has {key}: {fmt(v)}"
                )
    return list(dict.fromkeys(problems))


DETAIL_WORDS = 5
"""A child whose detail has fewer words says too little to act on (the sizing check)."""


def check_sizing(parent: Item, children: Sequence[Item]) -> Check:
    """Whether the parts are sized to be carried out (a graded signal for the feasibility lens;
    soft, always passes): the share of children that give an amount (a positive numeric fact:
    days, hours, budget), the share with a detail of at least :data:`DETAIL_WORDS` words, and
    the balance of each additive fact the children share (one part holding more than its fair
    share, at least half or twice ``1/n``, of the total is penalised)."""
    n = max(1, len(children))
    sized = [
        i
        for i, c in enumerate(children)
        if any(
            (v := numeric(val)) is not None and v > 0 and fact_unit(k) is not None
            for k, val in c.facts.items()
        )
    ]
    described = [i for i, c in enumerate(children) if word_count(c.detail) >= DETAIL_WORDS]
    keys = [k for k in (children[0].facts if children else {}) if is_additive(k)]
    balance, lopsided = 1.0, []
    for key in keys:
        vals = [numeric(c.facts.get(key)) for c in children]
        if any(v is None or v < 0 for v in vals):
            continue
        total = sum(v for v in vals if v is not None)
        if total <= 0 or len(vals) < 3:
            continue
        top = max(range(len(vals)), key=lambda j: vals[j] or 0.0)
        share, fair = (vals[top] or 0.0) / total, max(0.5, 2 / len(vals))
        if share > fair:
            balance = min(balance, 1 - (share - fair) / (1 - fair))
            lopsided.append(f"{label(top, children[top])} holds {round(100 * share)} % of the {key}")
    score = clamp(100 * (0.4 * len(sized) / n + 0.3 * len(described) / n + 0.3 * balance))
    problems = []
    if len(sized) < len(children):
        problems.append(
            f"{len(children) - len(sized)} of {len(children)} children give no amount (days, hours, budget)"
        )
    if len(described) < len(children):
        problems.append(f"{len(children) - len(described)} say in their detail too little to act on")
    problems += lopsided
    return Check(
        "sizing", score, True, "; ".join(problems) if problems else "every part is sized and described"
    )
