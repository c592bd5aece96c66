"""What the critics' tests share: a trip split three ways (good, duplicated, vague), parts and
trees written by hand, the recorded real run's events, and leaf results (general or concrete, on
or off their task). Some of it is shared with tests outside tests/critics/ too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specswarm import critics as cc
from specswarm.critics import CHECK_NAMES, Check, Part, Relative, run_checks
from specswarm.protocol.bodies import Child
from specswarm.protocol.events import Event, read_event_log
from specswarm.spec import Constraint

# -- a trip to Japan split three ways: good, duplicated, vague -------------------------------------


GOAL = "Plan a two-week trip to Japan"
ROOT = Child(GOAL)
CONSTRAINTS = [
    Constraint("sum", field="days", total=14, applies_to="root"),
    Constraint("mention", terms=("Tokyo", "Kyoto"), applies_to="root"),
    Constraint("forbid", terms=("cruise",), applies_to="all"),
]


def child(title: str, detail: str = "", **facts: int) -> Child:
    return Child(title, detail, False, facts)


GOOD = [
    child("Tokyo neighbourhoods and food", "Shinjuku, Asakusa and Tsukiji for the two-week trip", days=5),
    child("Kyoto temples and gardens", "Fushimi Inari, Kinkaku-ji and a tea ceremony", days=4),
    child("Osaka and Nara day trips", "Dotonbori street food; deer park in Nara", days=3),
    child("Hiroshima and Miyajima", "Peace Memorial Museum, ferry to Itsukushima shrine", days=2),
]


DUPLICATED = [
    child("Tokyo neighbourhoods and food", "Shinjuku, Asakusa and Tsukiji", days=5),
    child("Tokyo: neighbourhoods & food!", "Shinjuku and Asakusa again", days=4),
    child("Kyoto temples and gardens", "Fushimi Inari, Kinkaku-ji", days=3),
    child("Osaka and Nara day trips", "Dotonbori street food; deer park", days=2),
]


VAGUE = [
    child("Tokyo stuff", "", days=5),
    child("Kyoto things", "", days=4),
    child("Misc", "", days=3),
    child("Other various activities etc", "", days=2),
]


def checks_of(children: list[Child]) -> dict[str, Check]:
    found = run_checks(ROOT, children, constraints=CONSTRAINTS, min_children=2, max_children=6, depth=0)
    assert [c.name for c in found] == list(CHECK_NAMES)
    assert CHECK_NAMES == (
        "count",
        "overlap",
        "repeats",
        "facts",
        "units",
        "vagueness",
        "coverage",
        "constraints",
        "concreteness",
        "sizing",
    )
    return {c.name: c for c in found}


# -- parts and trees written by hand ---------------------------------------------------------------


def P(title: str, detail: str = "", **facts: int | float | str) -> Part:  # noqa: N802
    return Part(title, detail, facts)


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def verdict(
    parent: Part, children: list[Part], relatives: Sequence[Relative] = (), **kw: Any
) -> tuple[dict[str, Check], bool]:
    checks = cc.run_checks(parent, children, relatives=relatives, **kw)
    return by_name(checks), cc.combine(checks)[1]


@dataclass(frozen=True)
class Node:
    title: str
    parent: str | None = None
    detail: str = ""
    facts: dict[str, int | float | str] = field(default_factory=dict)


PERU = {
    "root": Node("Plan a week in Peru"),
    "lima": Node("Lima food scene (2 days)", "root", facts={"days": 2}),
    "cusco": Node("Cusco and the Sacred Valley (3 days)", "root", facts={"days": 3}),
    "mp": Node("Machu Picchu (2 days)", "root", facts={"days": 2}),
    "lima1": Node("Ceviche in Barranco", "lima"),
}


# -- the recorded real run -------------------------------------------------------------------------


LOG = Path(__file__).parent.parent / "fixtures" / "japan-real-2c5e150.jsonl"
KYOTO = "Visit Kyoto (4 days)"
TOKYO = "Visit Tokyo (5 days)"
GARDENS = "Explore Kyoto's traditional gardens and temples (3 days)"
FUJI = "Hike Mount Fuji (2 days)"


def events() -> list[Event]:
    log = read_event_log(LOG)
    assert log.rejected == []
    return log.events


# -- a decomposer's children -----------------------------------------------------------------------


def kid(title: str, detail: str = "", days: int | None = None) -> Child:
    return Child(title, detail, False, {"days": days} if days is not None else {})


# -- leaf results: on or off their task, general or concrete ---------------------------------------


SIBLINGS = ["Describe how to delete tasks", "Describe how to view tasks with specific tags"]
LIST_ALL = (
    "- List every task: `todo list` prints one line per task, as `3 Buy milk 2026-12-01`.\n"
    "- Delete a task: `todo delete <id>` removes it.\n"
    "- View tasks with a tag: `todo tag work` shows them.\n"
    "- Show completed ones too: `todo list --all`, done ones marked with an x after the 3."
)


GENERAL = (
    "- Book the venue well in advance.\n"
    "- Make sure all attendees have access to food.\n"
    "- Consider dietary restrictions as needed."
)
CONCRETE = (
    "- Book the Kulturbrauerei hall for 200 seats by 1 March.\n"
    "- Order lunch boxes from Dean & David at 12 EUR each.\n"
    "- Ask attendees for dietary needs on the ticket form."
)
