"""The scorers' critics as a whole: a good split beats a duplicated and a vague one; each check
fails alone; the failure modes of the word-level critics they replaced are gone; the spec's
constraints stay one hard check; combine and critique. (The content checks in detail:
tests/test_critics_content.py; the labelled cases: tests/test_critics_cases.py; the recorded run:
tests/test_critics_recorded_run.py.)"""

from __future__ import annotations

import pytest

from specswarm import critics
from specswarm.critics import (
    CHECK_NAMES,
    Check,
    check_constraints,
    check_count,
    check_coverage,
    check_overlap,
    check_repeats,
    check_split,
    check_vagueness,
    combine,
    critique,
    near_duplicate,
    relatives_in_tree,
    run_checks,
    stem,
)
from specswarm.critics.titles import title_terms
from specswarm.protocol.bodies import Child
from specswarm.spec import Constraint, spec_from_json
from specswarm.testing.synth import minimal_spec

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


def test_good_split_passes_every_check() -> None:
    checks = checks_of(GOOD)
    assert {n: c.passed for n, c in checks.items()} == dict.fromkeys(checks, True)
    score, approve = combine(list(checks.values()), None, 0.2)
    assert score >= 85
    assert approve is True


def test_duplicated_split_fails_overlap_and_scores_lower() -> None:
    checks = checks_of(DUPLICATED)
    failed = sorted(n for n, c in checks.items() if not c.passed)
    assert failed == ["overlap"]
    assert checks["overlap"].note.startswith(
        '#1 "Tokyo neighbourhoods and food" and #2 "Tokyo: neighbourhoods & food!" both plan food, Tokyo'
    )
    dup_score, dup_approve = combine(list(checks.values()), 90, 0.2)
    good_score, _ = combine(list(checks_of(GOOD).values()), 90, 0.2)
    assert dup_approve is False  # a hard check failed, whatever the model says
    assert good_score > dup_score


def test_vague_split_fails_vagueness_and_is_vetoed() -> None:
    checks = checks_of(VAGUE)
    failed = sorted(n for n, c in checks.items() if not c.passed)
    # the root has no detail, so there is nothing more for coverage to ask (it failed here
    # before, when coverage counted the parent's title: children refine a title, not repeat it)
    assert failed == ["vagueness"]
    assert checks["vagueness"].score == 0
    assert "#3 \"Misc\": vague word 'misc'" in checks["vagueness"].note
    vague_score, vague_approve = combine(list(checks.values()), 90, 0.2)
    good_score, _ = combine(list(checks_of(GOOD).values()), 90, 0.2)
    assert good_score - vague_score >= 10
    assert vague_approve is False  # vagueness 0 is below its veto floor


def test_count_fails_alone() -> None:
    assert check_count(GOOD, 2, 3) == Check("count", 0, False, "4 children (allowed 2..3)")
    assert check_count(GOOD, 4, 4).passed


def test_repeats_catches_a_child_that_repeats_the_parent() -> None:
    c = check_repeats(ROOT, [child("Plan a two week trip to Japan!"), *GOOD[:2]])
    assert not c.passed
    assert c.note == (
        '#1 "Plan a two week trip to Japan!" repeats its parent "Plan a two-week trip to Japan": '
        "it adds nothing to it: plan each thing in one place only"
    )


def test_overlap_fails_alone() -> None:
    overlapping = [
        child("Book Kyoto hotel rooms", "Compare Kyoto hotel rooms near Gion and book"),
        child("Reserve Kyoto hotel rooms", "Compare Kyoto hotel rooms near Gion, then reserve"),
        child("Tokyo museum passes", "Buy Grutto pass for Ueno museums"),
    ]
    c = check_overlap(ROOT, overlapping)
    assert not c.passed
    assert c.note.startswith('#1 "Book Kyoto hotel rooms" and #2 "Reserve Kyoto hotel rooms" both plan Kyoto')
    assert check_overlap(ROOT, GOOD).passed


def test_vagueness_reasons() -> None:
    assert check_vagueness([child("Try sushi, ramen and other Japanese dishes")]).passed
    c = check_vagueness([child("Sightseeing"), child("Tokyo food tour"), child("do it all")])
    assert not c.passed
    assert c.note == (
        '#1 "Sightseeing": one generic word, and the detail names no place, thing or number; '
        '#3 "do it all": no concrete content (only planning words, numbers or dates): '
        "name what each child is about"
    )
    assert c.score == 33


def test_coverage_fails_alone() -> None:
    parent = Child("Organize a 200-person technical conference", "venue, speakers, catering")
    off_topic = [child("Knit winter scarves", "wool"), child("Repaint garden fence", "green")]
    c = check_coverage(parent, off_topic)
    assert not c.passed
    assert c.score == 0
    assert c.note == "0/3 key terms of the parent's detail covered; not covered: venue, speakers, catering"
    on_topic = [
        child("Venue for 200 people", "technical conference hall"),
        child("Speakers and catering", "invite speakers, order catering"),
    ]
    assert check_coverage(parent, on_topic).passed


@pytest.mark.parametrize(
    ("children", "note"),
    [
        ([child("Tokyo food", days=7), child("Kyoto temples", days=6)], "days add up to 13, expected 14"),
        ([child("Tokyo food", days=7), child("Kyoto temples")], 'days missing on #2 "Kyoto temples"'),
        ([child("Tokyo food", days=7), child("Nara deer", days=7)], "not mentioned: Kyoto"),
        ([child("Tokyo food", days=7), child("Kyoto river cruise", days=7)], "forbidden: cruise"),
    ],
)
def test_constraints_fail_alone(children: list[Child], note: str) -> None:
    c = check_constraints(ROOT, children, CONSTRAINTS, depth=0)
    assert not c.passed
    assert c.note == note
    # the spec's constraints are one hard check, whatever the content checks say
    assert combine(run_checks(ROOT, children, constraints=CONSTRAINTS, depth=0), 100, 0.2)[1] is False


def test_root_constraints_do_not_apply_deeper_but_all_does() -> None:
    kids = [child("Tokyo food"), child("Harbour cruise")]
    c = check_constraints(Child("Tokyo"), kids, CONSTRAINTS, depth=1)
    assert c.note == "forbidden: cruise"
    deeper_sum = [Constraint("sum", field="days", total=14, applies_to="all")]
    parent = Child("Tokyo", facts={"days": 5})
    ok = check_constraints(parent, [child("A b", days=2), child("C d", days=3)], deeper_sum, 1)
    assert ok.passed


def test_combine_weights_and_thresholds() -> None:
    # coverage weighs 0.5 (a soft, bag-of-words check): (100 * 1.0 + 0 * 0.5) / 1.5 = 67
    checks = [Check("count", 100, True, ""), Check("coverage", 0, False, "")]
    assert combine(checks, None, 0.2) == (67, True)
    assert combine(checks, None, 0.2, approve_threshold=70) == (67, False)
    assert combine(checks, 100, 0.5, approve_threshold=83) == (83, True)
    # overlap is hard now: one failed pair vetoes, whatever the score
    vetoed = [Check("count", 100, True, ""), Check("overlap", 20, False, "")]
    assert combine(vetoed, 100, 0.5, approve_threshold=10) == (76, False)
    assert combine([Check("vagueness", 40, False, "")], None, 0.0, approve_threshold=10) == (40, False)
    with pytest.raises(ValueError, match=r"model_weight must be within \[0, 1\], got 1.5"):
        combine(checks, 50, 1.5)
    assert critique(vetoed) == "overlap: "
    assert critique([Check("facts", 0, False, "days\nmissing")]) == "facts: days missing"  # one line each


def test_text_helpers() -> None:
    assert stem("bookings") == "book"
    assert stem("cities") == "city"
    assert title_terms("The Booking of hotels in Kyoto") == {"book", "hotel", "kyoto"}
    assert near_duplicate("Visit **Kyoto** temples", "visit kyoto temples.")
    assert not near_duplicate("Kyoto temples", "Osaka street food")


def test_a_child_repeating_another_branch_fails_repeats() -> None:
    spec = spec_from_json(minimal_spec())
    nodes = {
        "root": _Node("Plan a two-week trip to Japan", None),
        "t": _Node("Visit Tokyo (5 days)", "root"),
        "k": _Node("Visit Kyoto (4 days)", "root"),
        "f": _Node("Hike Mount Fuji (2 days)", "root"),
    }
    children = [
        Child("Fushimi Inari Shrine at dawn", leaf=True),
        Child("Hike Mount Fuji (2 days)", leaf=True),
        Child("Kiyomizu-dera and Gion walk", leaf=True),
    ]
    checks = {
        c.name: c for c in check_split(spec, nodes["k"], children, 1, relatives=relatives_in_tree(nodes, "k"))
    }
    assert not checks["repeats"].passed and checks["repeats"].score == 67
    assert checks["repeats"].note == (
        '#2 "Hike Mount Fuji (2 days)" repeats the root stage "Hike Mount Fuji (2 days)" '
        "(same Mount Fuji and Hike): plan each thing in one place only"
    )
    alone = {c.name: c for c in check_split(spec, nodes["k"], children, 1)}
    assert alone["repeats"].passed and alone["repeats"].score == 100


def test_a_fractional_threshold_is_not_truncated() -> None:
    # approve_threshold is a number: 60.5 must not approve a score of 60 (it once became int(60.5))
    checks = [Check("count", 60, True, "")]
    assert combine(checks, None, 0.0, approve_threshold=60.5) == (60, False)
    assert combine(checks, None, 0.0, approve_threshold=60.0) == (60, True)


def test_check_is_the_vote_bodys_check_result() -> None:
    from specswarm.protocol.bodies import CheckResult

    assert Check is CheckResult
    assert all(isinstance(c, CheckResult) for c in run_checks(ROOT, GOOD))
    assert {"count", "overlap", "repeats", "facts", "units", "constraints"} == critics.HARD_CHECKS


class _Node:
    def __init__(self, title: str, parent: str | None, detail: str = "") -> None:
        self.title, self.parent, self.detail = title, parent, detail
        self.facts: dict[str, int | str] = {}
