"""Parts numbered alike are one part twice (specswarm/plan/critics: titles.numbered_alike, the
overlap check). Seen on a real todo-cli run: a refined root split "User Flow 1" .. "User Flow 7"
passed every lens at 91-100, because the words every child shares count as boilerplate."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from specswarm.plan.critics.overlap import check_overlap
from specswarm.plan.critics.titles import denumbered, numbered_alike


@dataclass
class Part:
    title: str
    detail: str = ""
    facts: dict[str, object] = field(default_factory=dict)


@pytest.mark.parametrize(
    ("title", "plain"),
    [
        ("User Flow 3", "user flow"),
        ("Phase II", "phase"),
        ("Second step", "step"),
        ("Module #4", "module"),
        ("3rd iteration", "iteration"),
        ("Tokyo", "tokyo"),
    ],
)
def test_denumbered_drops_the_words_that_only_number(title: str, plain: str) -> None:
    assert denumbered(title) == plain


def test_placeholders_numbered_alike_fail_the_overlap_check() -> None:
    check = check_overlap(Part("Specify the todo CLI"), [Part(f"User Flow {i}") for i in range(1, 8)])
    assert not check.passed and check.score == 0
    assert "but for a number" in check.note


def test_numbered_parts_with_their_own_content_pass() -> None:
    days = [
        Part("Day 1", "Arrive in Tokyo, Shinjuku hotel"),
        Part("Day 2", "Kyoto temples by train"),
        Part("Day 3", "Nara deer park"),
    ]
    assert check_overlap(Part("Plan a trip"), days).passed
    assert not numbered_alike("Day 1", "Arrive in Tokyo", "Day 2", "Kyoto temples")
    assert numbered_alike("Phase 1", "", "Phase 2", "")
    assert not numbered_alike("Venue", "", "Venue", ""), "an exact repeat is the other checks' business"
    assert not numbered_alike("Feature X", "", "Feature Y", "")
