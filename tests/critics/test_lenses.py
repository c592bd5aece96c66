"""Scorer lenses in the critics (:mod:`specswarm.critics.lenses`): the same checks weighed
through each lens (its weights, its soft veto floors), and when the model's rating can still
change a vote."""

from __future__ import annotations

import pytest

from specswarm import critics
from specswarm.protocol.bodies import CheckResult


def checks(**scores: int) -> list[CheckResult]:
    """Every check passing at 100, except those given (soft ones pass whatever their score)."""
    out = []
    for name in critics.CHECK_NAMES:
        score = scores.get(name, 100)
        hard = name in critics.HARD_CHECKS
        out.append(CheckResult(name, score, not hard or score == 100, f"{name} at {score}"))
    return out


def verdicts(cs: list[CheckResult]) -> dict[str, tuple[int, bool]]:
    return {name: critics.combine(cs, lens=critics.lens_named(name)) for name in critics.LENSES}


def test_the_same_split_through_three_lenses_gets_three_verdicts() -> None:
    # a fifth of the children vague (soft: 70), the parent's detail half covered (soft: 45)
    seen = verdicts(checks(vagueness=70, coverage=45))
    assert seen["feasibility"][1] is True
    assert seen["coverage"][1] is True
    assert seen["specificity"][1] is False  # its floor: a quarter vague vetoes
    assert len({score for score, _ in seen.values()}) == 3
    # coverage below its lens floor: only the coverage reviewer vetoes
    seen = verdicts(checks(coverage=35))
    assert {n: ok for n, (_, ok) in seen.items()} == {
        "feasibility": True,
        "coverage": False,
        "specificity": True,
    }
    # without a lens, the base weights and floors (as before lenses)
    assert critics.combine(checks(vagueness=70, coverage=45)) == critics.combine(
        checks(vagueness=70, coverage=45), lens=critics.lens_named("budget")
    )


@pytest.mark.parametrize("hard", sorted(critics.HARD_CHECKS))
def test_a_failed_hard_check_rejects_through_every_lens(hard: str) -> None:
    cs = checks(**{hard: 90})
    for name in (*critics.LENSES, "budget"):
        assert critics.combine(cs, lens=critics.lens_named(name))[1] is False, name


def test_an_unvetoed_split_is_rated_by_the_model() -> None:
    cs = checks(vagueness=70)
    assert not critics.vetoed(cs, critics.lens_named("feasibility"))
    assert critics.vetoed(cs, critics.lens_named("specificity"))  # its floor is 75
    assert critics.vetoed(checks(overlap=90))


def test_each_lens_weighs_its_own_graded_check() -> None:
    # the same split, one graded signal low at a time: only the lens that owns it moves much
    base = verdicts(checks())
    for signal, owner in (
        ("concreteness", "specificity"),
        ("sizing", "feasibility"),
        ("coverage", "coverage"),
    ):
        seen = verdicts(checks(**{signal: 40}))
        drop = {name: base[name][0] - seen[name][0] for name in critics.LENSES}
        assert drop[owner] >= 10, (signal, drop)
        assert all(drop[other] <= 3 for other in critics.LENSES if other != owner), (signal, drop)


def test_a_rating_is_asked_only_when_it_can_change_the_vote() -> None:
    feas = critics.lens_named("feasibility")
    # every check at 100: approved even with a rating of 0 (0.8 * 100 >= 60)
    assert not critics.rating_decides(checks(), 0.2, 60, feas)
    # a vetoed split: rejected whatever the model says
    assert not critics.rating_decides(checks(overlap=90), 0.2, 60, feas)
    # mechanically near the threshold: the rating decides
    low = checks(**{name: 66 for name in ("vagueness", "coverage", "sizing", "concreteness")})
    mech = critics.combine(low, lens=feas)[0]
    assert critics.combine(low, 0, 0.2, 90, feas)[1] is False
    assert critics.rating_decides(low, 0.2, mech - 5, feas)
    # the weight decides how often: at 0 never, at 1 always (unless vetoed)
    assert not critics.rating_decides(low, 0.0, mech - 5, feas)
    assert critics.rating_decides(checks(), 1.0, 60, feas)
