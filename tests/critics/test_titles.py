"""Titles word by word (:mod:`specswarm.critics.titles`): stems, near-duplicates, aliases; and
parts numbered alike, which are one part twice (titles.numbered_alike, the overlap check). Seen
on a real todo-cli run: a refined root split "User Flow 1" .. "User Flow 7" passed every lens at
91-100, because the words every child shares count as boilerplate."""

from __future__ import annotations

import pytest

from specswarm import critics as cc
from specswarm.critics import near_duplicate, stem
from specswarm.critics.overlap import check_overlap
from specswarm.critics.titles import denumbered, numbered_alike, title_terms
from specswarm.protocol.bodies import Child as Part


def test_text_helpers() -> None:
    assert stem("bookings") == "book"
    assert stem("cities") == "city"
    assert title_terms("The Booking of hotels in Kyoto") == {"book", "hotel", "kyoto"}
    assert near_duplicate("Visit **Kyoto** temples", "visit kyoto temples.")
    assert not near_duplicate("Kyoto temples", "Osaka street food")


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Command Line Interface (CLI) Specification", "Command Line Interface Specification"),
        ("command-line interface (CLI)", "command-line interface"),
        ("Department of Motor Vehicles (DMV) forms", "Department of Motor Vehicles forms"),
        ("Application Programming Interfaces (APIs)", "Application Programming Interfaces"),
        ("Tokyo (5 days)", "Tokyo (5 days)"),
        ("Hotels (Kyoto)", "Hotels (Kyoto)"),
        ("Visit the city (NYC)", "Visit the city (NYC)"),
    ],
)
def test_drop_aliases(title: str, expected: str) -> None:
    assert " ".join(cc.drop_aliases(title).split()) == expected


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


def test_parts_named_only_by_their_number_are_vague_whatever_their_details() -> None:
    """The real todo-cli root split: seven "User Flow N" with a sentence each (which the overlap
    check rightly does not call one part twice); its headings name nothing."""
    from specswarm.critics.wording import check_vagueness, numbered_only

    details = [
        "Adding tasks with due dates",
        "Syncing two laptops with Syncthing",
        "Conflict resolution offline",
    ]
    flows = [Part(f"User Flow {i}", d) for i, d in enumerate(details, 1)]
    assert numbered_only(flows) == {0: "user flow", 1: "user flow", 2: "user flow"}
    check = check_vagueness(flows)
    assert not check.passed and check.score == 0 and "named only by its number" in check.note
    assert check_vagueness([Part("Visit Tokyo"), Part("Explore Kyoto"), Part("Hike Mount Fuji")]).passed
    assert check_vagueness([Part("Tokyo (days 1-5)"), Part("Kyoto (days 6-9)")]).passed
    assert numbered_only([Part("Venue"), Part("Venue 2"), Part("Catering")]) == {0: "venue", 1: "venue"}


def test_titles_without_latin_words_are_compared_by_their_letters() -> None:
    goal = "在八周内开一家小咖啡馆"
    part = "设计和装修：在八周内完成咖啡馆的内部设计，包括空间布局、家具选择和装饰风格"
    assert not near_duplicate(part, goal)  # shares a few words with the goal, says more
    assert near_duplicate("在八周内开一家小咖啡馆。", goal)
    assert not near_duplicate("तीन दिन दिल्ली में", "दो दिन आगरा में")
    assert near_duplicate("तीन दिन दिल्ली में", "तीन दिन दिल्ली में।")
    assert not near_duplicate("Tokyo", "東京")  # one side has words: the word rule decides
