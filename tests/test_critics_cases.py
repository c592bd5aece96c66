"""The critics on 47 hand-labelled splits in ten domains (tests/critics_cases.py): every verdict
is the human's, every bad split is caught by the check meant to catch it (naming the item), and
the failure modes of the word-level critics they replaced are gone."""

from __future__ import annotations

import pytest

from specswarm import critics
from specswarm.critics import Part, Relative

from .critics_cases import ALL, DEV, HELDOUT, Case, accuracy, new_verdict, right_reason


def test_the_cases_cover_ten_domains_both_ways() -> None:
    assert (len(DEV), len(HELDOUT), len(ALL)) == (33, 14, 47)
    domains = {c.domain for c in ALL}
    assert domains == {
        "trip",
        "software",
        "event",
        "research",
        "renovation",
        "wedding",
        "course",
        "launch",
        "fitness",
        "moving",
    }
    assert {c.good for c in ALL} == {True, False}
    assert len({c.name for c in ALL}) == len(ALL)
    assert all(c.expect is not None for c in ALL if not c.good)


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_every_case_is_judged_as_a_human_would(case: Case) -> None:
    approved, checks = new_verdict(case)
    failed = {c.name: c.note for c in checks if not c.passed}
    assert approved is case.good, f"{case.why}; failed: {failed}"


# The one held-out case caught for another reason than the intended one (a known weakness:
# "Acropolis" starts a title and is never seen mid-clause, so it is not recognised as a name;
# the split is rejected because "Plaka" is both a Naxos beach and an Athens district).
WRONG_REASON = {"ho-greece-repeat-elsewhere"}


@pytest.mark.parametrize("case", [c for c in ALL if not c.good], ids=[c.name for c in ALL if not c.good])
def test_every_bad_case_is_caught_by_the_check_meant_to_catch_it(case: Case) -> None:
    approved, checks = new_verdict(case)
    assert case.expect is not None
    name, word = case.expect
    assert right_reason(case, approved, checks) is (case.name not in WRONG_REASON), (
        f"expected {name} naming {word!r}; got {[(c.name, c.note) for c in checks if not c.passed]}"
    )


def test_accuracy_figures() -> None:
    # (right, total, bad approved, good rejected, right for the right reason)
    assert accuracy(DEV, new_verdict) == (33, 33, 0, 0, 33)
    assert accuracy(HELDOUT, new_verdict) == (14, 14, 0, 0, 13)


def P(title: str, detail: str = "", **facts: int) -> Part:  # noqa: N802
    return Part(title, detail, facts)


def verdict(parent: Part, children: list[Part], relatives: list[Relative] | None = None) -> tuple[bool, dict]:
    checks = critics.run_checks(parent, children, relatives=relatives or ())
    return critics.combine(checks)[1], {c.name: c for c in checks}


def test_the_failure_modes_of_the_word_level_critics_are_gone() -> None:
    """What the word-level critics got wrong (the plan-quality issue), each now right."""
    # 1. boilerplate rejected: shared phrasing is not shared content
    ok, checks = verdict(
        P("Plan a 9-day trip to Italy", days=9),
        [
            P("Plan a 3-day trip to Rome", days=3),
            P("Plan a 3-day trip to Florence", days=3),
            P("Plan a 3-day trip to Venice", days=3),
        ],
    )
    assert ok and checks["overlap"].passed
    # 2. the same city in three of four stages passed, each title worded differently
    ok, checks = verdict(
        P("Plan a 10-day trip to Portugal", days=10),
        [
            P("Visit Lisbon (3 days)", days=3),
            P("Lisbon food and fado night (2 days)", days=2),
            P("Porto and the Douro valley (3 days)", days=3),
            P("Day trip to Lisbon's Belém district (2 days)", days=2),
        ],
    )
    assert not ok and "all plan Lisbon" in checks["overlap"].note
    # 3. a stage planned again in another branch (Mount Fuji under Tokyo as well as at the root)
    tree = {
        "root": _Node("Plan a two-week trip to Japan", None),
        "t": _Node("Visit Tokyo (5 days)", "root", days=5),
        "f": _Node("Hike Mount Fuji (2 days)", "root", days=2),
    }
    ok, checks = verdict(
        P("Visit Tokyo (5 days)", days=5),
        [P("Asakusa and Ueno (3 days)", days=3), P("Hike Mount Fuji (2 days)", days=2)],
        critics.relatives_in_tree(tree, "t"),
    )
    assert not ok and '"Hike Mount Fuji (2 days)" repeats the root stage' in checks["repeats"].note
    # 4. numbers below the root that do not add up (no sum constraint applies there)
    ok, checks = verdict(
        P("Visit Kyoto (4 days)", days=4),
        [P("Temples and gardens (3 days)", days=3), P("Fushimi Inari (1 day)", days=1), P("Museums", days=2)],
    )
    assert not ok and checks["facts"].note == "days add up to 6 (3 + 1 + 2), not the parent's days: 4"
    # 5. a title that contradicts its facts
    ok, checks = verdict(
        P("Scotland (3 days)", days=3), [P("Edinburgh old town (3 days)", days=1), P("Skye (2 days)", days=2)]
    )
    assert not ok and not checks["units"].passed


class _Node:
    def __init__(self, title: str, parent: str | None, **facts: int) -> None:
        self.title, self.parent, self.detail = title, parent, ""
        self.facts = facts
