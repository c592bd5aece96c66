"""Quantities (:mod:`specswarm.critics.quantities`): the amounts a text states ("(3 days)",
"EUR 500"), and the unit and additivity of a fact's key."""

from __future__ import annotations

import pytest

from specswarm import critics as cc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Visit Kyoto (4 days)", [(4, 4, "days")]),
        ("Plan a two-week trip", [(2, 2, "weeks")]),
        ("2-3 hours of talks", [(2, 3, "hours")]),
        ("90-minute workshop", [(90, 90, "minutes")]),
        ("Half a day in Nara", [(0.5, 0.5, "days")]),
        ("3 days and 2 nights in Lisbon", [(3, 3, "days"), (2, 2, "nights")]),
        ("Budget €1.5k for catering", [(1500, 1500, "EUR")]),
        ("2,000 USD venue deposit", [(2000, 2000, "USD")]),
        ("Book 3 months ahead", []),
        ("Study 2 hours a day", []),
        ("Day 3: Rome", []),
        ("2h workshop", [(2, 2, "hours")]),
    ],
)
def test_parse_quantities(text: str, expected: list[tuple[float, float, str]]) -> None:
    assert [(q.low, q.high, q.unit) for q in cc.parse_quantities(text)] == expected


@pytest.mark.parametrize(
    ("key", "unit", "additive"),
    [
        ("days", "days", True),
        ("duration_minutes", "minutes", True),
        ("budget_eur", "EUR", True),
        ("cost", "money", True),
        ("hours", "hours", True),
        ("guests", None, False),
        ("max_attendees", None, False),
        ("day", "days", False),
        ("talks", None, True),
    ],
)
def test_fact_units(key: str, unit: str | None, additive: bool) -> None:
    assert cc.fact_unit(key) == unit
    assert cc.is_additive(key) is additive
