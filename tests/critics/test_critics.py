"""The critics as a whole (:mod:`specswarm.critics`: run_checks, check_split, combine,
critique): a good split beats a duplicated and a vague one; combine's weights and thresholds;
the 47 hand-labelled splits in ten domains (tests/critics/cases.py): every verdict is the
human's, every bad split is caught by the check meant to catch it (naming the item), and the
failure modes of the word-level critics they replaced are gone; and the recorded real run
(tests/fixtures/japan-real-2c5e150.jsonl: ``specswarm plan goals/japan.yaml`` with the embedded
model, every event signed) re-scored with the current critics (bench/rescore.py): all five
splits its scorers accepted are rejected, for the reasons a careful reader gives (Mount Fuji
planned in three branches; Kyoto's days not adding up; Kyoto twice at the root)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from specswarm import critics
from specswarm import critics as cc
from specswarm.critics import Check, Part, Relative, combine, critique
from tests.critics.cases import ALL, DEV, HELDOUT, Case, accuracy, new_verdict, right_reason
from tests.critics.kit import (
    DUPLICATED,
    FUJI,
    GARDENS,
    GOAL,
    GOOD,
    KYOTO,
    LOG,
    TOKYO,
    VAGUE,
    checks_of,
    events,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

import rescore as rs  # noqa: E402


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


def test_a_fractional_threshold_is_not_truncated() -> None:
    # approve_threshold is a number: 60.5 must not approve a score of 60 (it once became int(60.5))
    checks = [Check("count", 60, True, "")]
    assert combine(checks, None, 0.0, approve_threshold=60.5) == (60, False)
    assert combine(checks, None, 0.0, approve_threshold=60.0) == (60, True)


def test_combine_vetoes_a_failed_hard_check_whatever_the_score() -> None:
    checks = [
        Check("count", 100, True, ""),
        Check("overlap", 50, False, "x"),
        Check("coverage", 100, True, ""),
    ]
    score, ok = cc.combine(checks)
    assert score >= 60 and not ok
    # (100 * 1.0 + 10 * 0.5) / 1.5 = 70: a soft check lowers the score but does not veto
    assert cc.combine([Check("count", 100, True, ""), Check("coverage", 10, False, "")]) == (70, True)
    assert cc.critique(checks) == "overlap: x"
    with pytest.raises(ValueError):
        cc.combine(checks, 50, 1.5)


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


@pytest.fixture(scope="module", params=["at-vote", "final"])
def accepted(request: pytest.FixtureRequest) -> dict[str, rs.Rescored]:
    results = rs.rescore(events(), request.param)
    assert len(results) == 7
    acc = {r.node.title: r for r in results if r.old_status == "accepted"}
    assert set(acc) == {GOAL, KYOTO, TOKYO, GARDENS, FUJI}
    # the old scorers approved every one of them, unanimously
    assert all(r.old_approvals == 3 and r.old_rejections == 0 for r in acc.values())
    # and the two rival root splits are rejected too (Kyoto twice; Tokyo twice)
    rivals = [r for r in results if r.old_status != "accepted"]
    assert [r.new_approve for r in rivals] == [False, False]
    assert all(r.check("overlap").passed is False for r in rivals)
    return acc


def test_all_five_accepted_splits_are_now_rejected(accepted: dict[str, rs.Rescored]) -> None:
    assert [t for t, r in accepted.items() if r.new_approve] == []
    reasons = Counter(name for r in accepted.values() for name in r.hard_failures)
    assert reasons == {"facts": 4, "repeats": 3, "overlap": 2}
    assert {t: sorted(r.hard_failures) for t, r in accepted.items()} == {
        GOAL: ["overlap"],
        KYOTO: ["facts", "overlap", "repeats"],
        TOKYO: ["facts", "repeats"],
        GARDENS: ["facts", "repeats"],
        FUJI: ["facts"],
    }


def test_mount_fuji_planned_in_three_branches_is_caught_below_the_root(accepted: dict[str, Any]) -> None:
    # the root stage is the original; its two copies under Tokyo and under the gardens stage repeat it
    tokyo = accepted[TOKYO].check("repeats").note
    assert tokyo == (
        '#4 "Hike Mount Fuji" repeats the root stage "Hike Mount Fuji (2 days)" (same Mount Fuji and Hike): '
        "plan each thing in one place only"
    )
    gardens = accepted[GARDENS].check("repeats").note
    assert gardens.startswith(
        '#3 "Hike Mount Fuji (2 days)" repeats the root stage "Hike Mount Fuji (2 days)"'
    )
    assert accepted[FUJI].check("repeats").passed  # splitting the stage itself is no repeat


def test_kyotos_days_not_adding_up_is_caught(accepted: dict[str, Any]) -> None:
    kyoto = accepted[KYOTO].check("facts")
    assert kyoto.note.startswith(
        'days missing on #1 "Plan a day trip to Kyoto\'s traditional gardens and temples (3 days)" '
        "(its title says 3 days: declare days: 3)"
    )
    assert kyoto.note.endswith(
        "every child must declare days; their titles add up to 7 days, not the parent's 4"
    )
    gardens = accepted[GARDENS].check("facts")
    assert gardens.note.endswith("their titles add up to 4 days, not the parent's 3")
    # the Fuji stage's five preparation steps declare no days at all (2 days to split)
    assert accepted[FUJI].check("facts").note.endswith("every child must declare days")
    assert accepted[FUJI].check("facts").score == 0


def test_kyoto_twice_at_the_root_and_inside_the_kyoto_stage(accepted: dict[str, Any]) -> None:
    assert (
        accepted[GOAL]
        .check("overlap")
        .note.startswith(
            '#2 "Visit Kyoto (4 days)" and #4 "Explore Kyoto\'s traditional gardens and temples (3 days)" '
            "both plan Kyoto"
        )
    )
    repeats = accepted[KYOTO].check("repeats").note
    assert repeats.startswith(
        '#1 "Plan a day trip to Kyoto\'s traditional gardens and temples (3 days)" repeats the root stage '
        '"Explore Kyoto\'s traditional gardens and temples (3 days)"'
    )
    assert accepted[KYOTO].check("overlap").note.startswith('#1 "Plan a day trip to Kyoto')


def test_the_rescore_script_prints_old_and_new_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    assert rs.main([str(LOG), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "accepted proposals the current critics reject: 5 of 5" in out
    assert "failed hard checks among them: facts x4, overlap x2, repeats x3" in out
    assert "old status -> new verdict: accepted -> reject: 5, outvoted -> reject: 2" in out
