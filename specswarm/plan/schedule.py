"""A schedule computed from the plan's facts: the parts of the plan in order, each with the range
of units it takes (days 1–5, 6–9, …), for every fact the spec's ``sum`` constraints add up.

Pure: a folded :class:`~specswarm.plan.views.Plan` in, frozen values out. The unit is the
constraint's field as the spec names it (``days``, ``weeks``, ``Stunden``); nothing here knows
what it means. For each summed field (first constraint of each field, in the spec's order):

- the root spans ``1..total``; a node's parts, in order, take consecutive ranges of its own
  range, each as long as the part's value of the field (``{"days": 5}``); a part's parts
  subdivide the part's range the same way, however deep the tree;
- a part that states no value (or one that is not a whole number ≥ 0) shares the range of the
  node it belongs to; when some of its siblings do state one, a ``missing`` note says so;
- parts whose values do not add up to their node's are not laid out (no range is made up for
  them): they keep their values, and a ``sum`` note says what they add up to and what was
  expected. Their own parts are not laid out either;
- a field none of the root's parts states gives no schedule, nor does a plan without such a
  constraint, without a spec or without a root.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from specswarm.plan.views import NodeView, Plan
from specswarm.spec.language import plan_language


@dataclass(frozen=True)
class Slot:
    """One node of the tree below the root, in depth-first order, with its range."""

    number: str
    """Outline number: ``1``, ``1.2``."""
    depth: int
    title: str
    leaf: bool
    amount: int | None
    """The node's own value of the field (None: it states none)."""
    start: int | None
    """First unit of its range; None when its range is unknown (parts that do not add up)."""
    end: int | None
    """Last unit of its range (``start - 1`` when ``amount`` is 0); None with ``start``."""
    shared: bool
    """It states no value: its range is that of the node it belongs to."""
    node: str = ""
    """The node's id (not exported: the outline number names it)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "depth": self.depth,
            "title": self.title,
            "leaf": self.leaf,
            "amount": self.amount,
            "start": self.start,
            "end": self.end,
            "shared": self.shared,
        }


@dataclass(frozen=True)
class Note:
    """Why part of the schedule is not laid out as the facts would have it."""

    kind: Literal["sum", "missing"]
    """sum: the parts' values do not add up to their node's; missing: some parts state none."""
    number: str
    """Outline number of the node whose parts are concerned (``""``: the root)."""
    title: str
    got: int | None = None
    """sum: what the parts' values add up to."""
    expected: int | float | None = None
    """sum: the node's own value (the constraint's total for the root)."""
    parts: tuple[str, ...] = ()
    """missing: the outline numbers of the parts that state no value."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "number": self.number, "title": self.title}
        if self.kind == "sum":
            out.update(got=self.got, expected=self.expected)
        else:
            out["parts"] = list(self.parts)
        return out


@dataclass(frozen=True)
class Schedule:
    """The schedule of one summed field."""

    field: str
    """The fact, as the spec names it (the unit the ranges count)."""
    total: int | float
    """The constraint's total: the root's range is ``1..total``."""
    slots: tuple[Slot, ...]
    notes: tuple[Note, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "total": self.total,
            "slots": [s.to_json() for s in self.slots],
            "notes": [n.to_json() for n in self.notes],
        }


def schedules(plan: Plan) -> tuple[Schedule, ...]:
    """One :class:`Schedule` per field the spec's ``sum`` constraints add up (see the module
    docstring); empty when there is nothing to lay out."""
    goal, root = plan.spec, plan.root
    if goal is None or root is None:
        return ()
    out: list[Schedule] = []
    seen: set[str] = set()
    for con in goal.constraints:
        if con.kind != "sum" or con.field is None or con.total is None or con.field in seen:
            continue
        seen.add(con.field)
        parts = [plan.nodes[c] for c in root.children]
        if all(amount(p, con.field) is None for p in parts):
            continue
        total = _number(con.total)
        layout = _Layout(plan, con.field)
        start = 1 if isinstance(total, int) and total >= 0 else None
        layout.parts(root, "", total, start)
        out.append(Schedule(con.field, total, tuple(layout.slots), tuple(layout.notes)))
    return tuple(out)


def schedules_json(plan: Plan) -> list[dict[str, Any]]:
    """:func:`schedules` as the JSON export's ``schedule`` value."""
    return [s.to_json() for s in schedules(plan)]


@dataclass(frozen=True)
class Span:
    """Where one node stands in a schedule: units ``start``..``end`` of ``total``."""

    field: str
    start: int
    end: int
    total: int | float
    label: str = ""
    """How the plan's language names unit ``{n}`` ("第{n}天"); "" builds the label from the
    field's name."""

    @property
    def labels(self) -> list[str]:
        """How a line names each of its units: "Day 6", "Day 7" for days 6-7 (a field named in
        the plural with a trailing "s" loses it; any other name is used as it is), or as
        :attr:`label` says in the plan's language ("第6天", "Día 6")."""
        if self.label:
            return [self.label.format(n=n) for n in range(self.start, self.end + 1)]
        unit = self.field[:-1] if len(self.field) > 2 and self.field.endswith("s") else self.field
        unit = unit[:1].upper() + unit[1:]
        return [f"{unit} {n}" for n in range(self.start, self.end + 1)]

    @property
    def lines(self) -> int:
        """Lines to ask for each unit: six in all for one unit, at least two each for more."""
        return max(2, math.ceil(6 / max(1, self.end - self.start + 1)))

    def to_prompt(self) -> dict[str, Any]:
        """The ``span`` an execute prompt template is given."""
        said = {k: v for k, v in dataclasses.asdict(self).items() if k != "label"}
        return {**said, "labels": self.labels, "lines": self.lines}


def span_of(plan: Plan, node_id: str) -> Span | None:
    """The range the first schedule that lays ``node_id`` out gives it (a node that states its
    own value and whose siblings add up); None when no schedule does."""
    for sched in schedules(plan):
        for slot in sched.slots:
            if slot.start is None or slot.end is None or slot.shared or slot.end < slot.start:
                continue
            if slot.node == node_id:
                spec = plan.spec
                said = plan_language(spec.goal, spec.context, spec.language) if spec else None
                label = said.unit_label(sched.field) if said is not None else None
                return Span(sched.field, slot.start, slot.end, sched.total, label or "")
    return None


def amount(node: NodeView, field: str) -> int | None:
    """The node's value of ``field`` when it is a whole number ≥ 0, else None."""
    value = node.facts.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _number(value: float) -> int | float:
    """A total as the reader expects it: 14, not 14.0."""
    return int(value) if float(value).is_integer() else value


class _Layout:
    """Walks the tree once for one field, collecting slots in depth-first order and notes."""

    def __init__(self, plan: Plan, field: str) -> None:
        self.plan = plan
        self.field = field
        self.slots: list[Slot] = []
        self.notes: list[Note] = []

    def parts(self, node: NodeView, number: str, expected: int | float, start: int | None) -> None:
        """Lay out ``node``'s parts in the range ``start..start+expected-1`` (start None: the
        node's range is unknown, so its parts get none)."""
        kids: Sequence[NodeView] = [self.plan.nodes[c] for c in node.children]
        if not kids:
            return
        numbers = [f"{number}.{i}" if number else str(i) for i in range(1, len(kids) + 1)]
        values = [amount(k, self.field) for k in kids]
        stated = [v for v in values if v is not None]
        lacking = tuple(n for n, v in zip(numbers, values, strict=True) if v is None)
        if stated and lacking:
            self.notes.append(Note("missing", number, node.title, parts=lacking))
        fits = not stated or math.isclose(sum(stated), expected)
        if not fits:
            self.notes.append(Note("sum", number, node.title, got=sum(stated), expected=expected))
        end = None if start is None else start + int(expected) - 1
        cursor = start if fits else None
        for kid, kid_number, value in zip(kids, numbers, values, strict=True):
            if value is None:  # shares the node's range, and lays its parts out in it
                slot = Slot(kid_number, kid.depth, kid.title, kid.leaf, None, start, end, True, kid.id)
                self.slots.append(slot)
                self.parts(kid, kid_number, expected, start)
                continue
            if cursor is None:
                self.slots.append(
                    Slot(kid_number, kid.depth, kid.title, kid.leaf, value, None, None, False, kid.id)
                )
                self.parts(kid, kid_number, value, None)
                continue
            slot = Slot(
                kid_number, kid.depth, kid.title, kid.leaf, value, cursor, cursor + value - 1, False, kid.id
            )
            self.slots.append(slot)
            self.parts(kid, kid_number, value, cursor)
            cursor += value


__all__ = ["Note", "Schedule", "Slot", "Span", "amount", "schedules", "schedules_json", "span_of"]
