"""Numbers (:mod:`specswarm.critics.numbers`): facts that must add up below the root (days,
budgets, months), titles whose quantities agree with their facts, sizing, and the facts a leaf's
result breaks (days, dates further apart than the task's days)."""

from __future__ import annotations

import pytest

from specswarm import critics
from specswarm import critics as cc
from specswarm.critics import Check, Part
from tests.critics.kit import P, verdict


def test_nested_budget_that_does_not_add_up_fails_and_one_that_does_passes() -> None:
    parent = P("Renovate a small kitchen on a EUR 15,000 budget", budget_eur=15000)
    over = [
        P("Cabinets and countertops", budget_eur=7000),
        P("Plumbing and a new sink", budget_eur=2500),
        P("Electrical work and lighting", budget_eur=2500),
        P("Flooring and wall tiles", budget_eur=4000),
    ]
    assert cc.check_facts(parent, over) == Check(
        "facts",
        0,
        False,
        "budget_eur add up to 16000 (7000 + 2500 + 2500 + 4000), not the parent's budget_eur: 15000",
    )
    exact = [*over[:3], P("Flooring and wall tiles", budget_eur=3000)]
    assert cc.check_facts(parent, exact) == Check("facts", 100, True, "budget_eur add up")
    assert not verdict(parent, over)[1]
    assert verdict(parent, exact)[1]


def test_nested_days_missing_with_titles_that_disagree() -> None:
    check = cc.check_facts(
        P("Visit Kyoto (4 days)", days=4),
        [
            P("Temples and gardens (3 days)"),
            P("Kinkakuji (1 day)"),
            P("Fushimi Inari (1 day)"),
            P("Museums (2 days)"),
        ],
    )
    assert check == Check(
        "facts",
        0,
        False,
        'days missing on #1 "Temples and gardens (3 days)" (its title says 3 days: declare days: 3), '
        '#2 "Kinkakuji (1 day)" (its title says 1 day: declare days: 1), '
        '#3 "Fushimi Inari (1 day)" (its title says 1 day: declare days: 1), '
        '#4 "Museums (2 days)" (its title says 2 days: declare days: 2): every child must declare days; '
        "their titles add up to 7 days, not the parent's 4",
    )


def test_nested_months_in_a_research_timeline() -> None:
    parent = P("Run a 6-month study on remote work and sleep quality", months=6)
    bad = [
        P("Literature review", months=1),
        P("Ethics approval", months=2),
        P("Data collection", months=3),
        P("Analysis", months=2),
    ]
    assert (
        cc.check_facts(parent, bad).note == "months add up to 8 (1 + 2 + 3 + 2), not the parent's months: 6"
    )
    good = [
        P("Literature review", months=1),
        P("Ethics approval", months=1),
        P("Data collection", months=3),
        P("Analysis", months=1),
    ]
    assert cc.check_facts(parent, good).passed


def test_a_child_missing_the_fact_fails_even_when_the_rest_add_up() -> None:
    check = cc.check_facts(
        P("Plan a wedding", budget_eur=20000), [P("Venue", budget_eur=12000), P("Catering")]
    )
    assert check.note == 'budget_eur missing on #2 "Catering": every child must declare budget_eur'
    assert not check.passed


def test_intensive_facts_are_not_split() -> None:
    # 80 guests do not split into the workstreams of a wedding; an ordinal "day" is a label
    assert cc.check_facts(P("Plan a wedding for 80 guests", guests=80), [P("Venue"), P("Music")]).passed
    assert cc.check_facts(P("Arrival", day=1), [P("Check in"), P("Dinner")]).passed
    assert cc.check_facts(P("Conference", max_attendees=300, priority=1), [P("Talks"), P("Food")]).passed


def test_parent_title_quantity_bounds_the_children() -> None:
    check = cc.check_facts(P("Visit Kyoto (4 days)"), [P("Temples (3 days)"), P("Gion at night (2 days)")])
    assert (
        check.note
        == 'the children state 5 days (3 days + 2 days), but the parent "Visit Kyoto (4 days)" says 4 days'
    )
    assert not check.passed
    # "two-week" is 14 days
    assert cc.check_facts(P("Plan a two-week trip to Japan"), [P("Tokyo", days=7), P("Kyoto", days=7)]).passed
    assert not cc.check_facts(
        P("Plan a two-week trip to Japan"), [P("Tokyo", days=7), P("Kyoto", days=6)]
    ).passed


def test_unit_words_that_contradict_facts_fail() -> None:
    check = cc.check_units([P("Edinburgh old town (3 days)", days=1), P("Isle of Skye (2 days)", days=2)])
    assert check == Check(
        "units",
        50,
        False,
        '#1 "Edinburgh old town (3 days)" says 3 days but its facts say days: 1: '
        "make the title and the facts agree",
    )
    checks, ok = verdict(
        P("Scotland (3 days)", days=3), [P("Edinburgh old town (3 days)", days=1), P("Skye (2 days)", days=2)]
    )
    assert not checks["units"].passed and not ok


@pytest.mark.parametrize(
    ("title", "facts", "agrees"),
    [
        ("Sprint planning (two weeks)", {"days": 14}, True),  # weeks -> days
        ("Lab session (90 minutes)", {"hours": 1.5}, True),  # minutes -> hours
        ("Lab session (90-minute)", {"duration_minutes": 60}, False),
        ("Hotel in Rome (3 nights)", {"nights": 3}, True),
        ("Hotel in Rome (3 nights)", {"nights": 2}, False),
        ("Hotel in Rome (3 nights)", {"days": 4}, True),  # nights and days do not convert
        ("One day in Nara", {"days": 1}, True),  # singular
        ("Nara (1 day)", {"days": 2}, False),
        ("Workshop (2-3 hours)", {"hours": 2.5}, True),  # a range
        ("Book the hotel 3 months ahead", {"months": 1}, True),  # a lead time, not a size
        ("Catering (EUR 4,000)", {"budget_eur": 4000}, True),
        ("Catering (€4k)", {"budget_eur": 5000}, False),
        ("Catering ($4,000)", {"budget_eur": 5000}, True),  # different currencies do not compare
        ("Catering (EUR 4,000)", {"cost": 3000}, False),  # a money fact of no currency
        ("Day 3: Rome", {"days": 1}, True),  # a label, not a duration
    ],
)
def test_units_agreement(title: str, facts: dict[str, int | float], agrees: bool) -> None:
    assert cc.check_units([Part(title, "", facts)]).passed is agrees


def test_a_declared_sum_decides_over_a_quantity_in_the_parents_title() -> None:
    # "a one-day conference" prepared over 26 weeks: the weeks are the spec's sum, not the day
    root = P("Organize a one-day technical conference for 200 people")
    kids = [
        cc.Part("Venue", facts={"weeks": 3}),
        cc.Part("Speakers", facts={"weeks": 8}),
        cc.Part("Sponsors", facts={"weeks": 15}),
    ]
    assert not cc.check_facts(root, kids).passed  # no constraint: the title bounds the parts
    assert cc.check_facts(root, kids, ["weeks"]).passed
    assert cc.check_facts(root, kids, ["budget_eur"]).passed is False  # another dimension
    # a title quantity of a dimension no constraint sums still bounds: "(4 days)" with hours
    kyoto = P("Visit Kyoto (4 days)")
    parts = [cc.Part("Temples", facts={"days": 3}), cc.Part("Gardens", facts={"days": 3})]
    assert not cc.check_facts(kyoto, parts, ["budget_eur"]).passed


def test_a_time_total_too_small_for_whole_parts_may_leave_parts_at_zero() -> None:
    """Parts of a schedule each get some of it, unless the total cannot give every part a
    whole unit: the steps of a one-week task share its week."""
    parent = P("Negotiate sponsor contracts", weeks=1)
    shared = [P("Draft the contract terms", weeks=1), P("Sign with the first sponsor", weeks=0)]
    assert cc.check_facts(parent, shared).passed
    trip = P("Visit Kyoto", days=4)
    lazy = [P("Temples", days=4), P("Gion at night", days=0)]
    check = cc.check_facts(trip, lazy)
    assert not check.passed and "gets days: 0" in check.note
    # two days can give each of two parts one: a third part at 0 days still fails, unless the
    # smallest split allowed has three parts
    fuji = [P("Climb", days=1), P("Summit", days=1), P("Return", days=0)]
    assert not cc.check_facts(P("Hike Fuji", days=2), fuji).passed
    assert cc.check_facts(P("Hike Fuji", days=2), fuji, min_parts=3).passed


def test_sizing_wants_amounts_details_and_no_part_holding_most_of_the_total() -> None:
    parent = critics.Part("Plan a week", facts={"days": 7})
    even = [
        critics.Part(f"Stage {k}", "what happens there, day by day, and why", {"days": d})
        for k, d in (("A", 2), ("B", 3), ("C", 2))
    ]
    lopsided = [
        critics.Part(f"Stage {k}", "what happens there, day by day, and why", {"days": d})
        for k, d in (("A", 5), ("B", 1), ("C", 1))
    ]
    bare = [critics.Part("Stage A"), critics.Part("Stage B"), critics.Part("Stage C")]
    scores = [critics.check_sizing(parent, c).score for c in (even, lopsided, bare)]
    assert scores[0] == 100
    assert 70 < scores[1] < 100 and "holds 71 %" in critics.check_sizing(parent, lopsided).note
    assert scores[2] == 30  # no amount, no detail; balance has nothing to judge


def test_a_result_its_facts_rule_out_is_named() -> None:
    from specswarm.critics import contradicted_facts

    said = contradicted_facts("- Day 1: Fushimi Inari\n- Day 3: Arashiyama\n- 3 days in Gion", {"days": 2})
    assert said == ["it says '3 days' but the task has days: 2", "it plans 'Day 3' but the task has days: 2"]
    assert contradicted_facts("- EUR 900 at Hotel Granvia", {"budget_eur": 300})
    # parts of the whole, other units, other currencies and non-additive facts pass
    assert not contradicted_facts("- 2 hours at Kinkaku-ji\n- Day 1: Gion", {"days": 1})
    assert not contradicted_facts("- lunch 2,000 JPY", {"budget_eur": 300})
    assert not contradicted_facts("- Day 9 of the trip", {"guests": 2})


def test_day_labels_may_count_as_the_schedule_does() -> None:
    from specswarm.critics import contradicted_facts

    text = "- Day 6: Fushimi Inari at 7 am\n- Day 7: Arashiyama bamboo grove"
    assert contradicted_facts(text, {"days": 2}) == [
        "it plans 'Day 6' but the task has days: 2",
        "it plans 'Day 7' but the task has days: 2",
    ]
    assert not contradicted_facts(text, {"days": 2}, ("days", 6, 7))  # its days 6-7 of the plan
    assert not contradicted_facts("- Day 1: Gion\n- Day 2: Nara", {"days": 2}, ("days", 6, 7))
    assert contradicted_facts("- Day 5: Gion\n- Day 6: Nara", {"days": 2}, ("days", 6, 7)) == [
        "it plans 'Day 5' but the task has days: 2 (days 6-7 of the plan)"
    ]
    assert contradicted_facts(text, {"days": 2}, ("weeks", 6, 7))  # another field's schedule


@pytest.mark.parametrize(
    ("text", "days", "said"),
    [
        # museum visits nine days apart for a one-day task (as in every recorded japan run)
        (
            "- Museum A on April 10th\n- Museum B on April 12th\n- Museum C on April 18th",
            1,
            "'April 10th' to 'April 18th' (9 days)",
        ),
        ("- Arrive 30 March\n- Leave on the 2nd of April", 3, "'30 March' to '2nd of April' (4 days)"),
        ("- Gion on April 1\n- Arashiyama on April 2", 2, None),  # two days, two dates
        ("- Shrine on April 1st\n- Garden on april 1", 1, None),  # one date, said twice
        ("- Blossoms in early April\n- you may 3 times stop", 1, None),  # no dates: "may 3" is no May
        ("- Book 3 nights\n- February 30 and February 28", 1, None),  # no such date
    ],
)
def test_dates_further_apart_than_the_task_s_days_are_named(text: str, days: int, said: str | None) -> None:
    from specswarm.critics import contradicted_facts

    problems = contradicted_facts(text, {"days": days})
    if said is None:
        assert problems == []
    else:
        assert problems == [f"it plans {said} but the task has days: {days}"]
    assert contradicted_facts(text, {"guests": 1}) == []  # a fact that is no time


def test_sizing_reads_a_chinese_detail_by_its_letters() -> None:
    # old: a detail with no space was one word, "too little to act on"
    parent = critics.Part("装修", facts={"weeks": 3})
    split = [
        critics.Part("设计内部布局", "开始设计咖啡馆的内部布局，包括座位安排和照明", {"weeks": 2}),
        critics.Part("装修空间", "根据设计进行装修，包括墙面涂料和地板铺设", {"weeks": 1}),
    ]
    assert critics.check_sizing(parent, split).note == "every part is sized and described"
