"""A decomposer's repairs before it proposes a split (:mod:`specswarm.critics.repair`):
children that plan the same thing merged with their facts summed, repeats of nodes planned
elsewhere dropped, title quantities their facts contradict cut; never below the minimum."""

from __future__ import annotations

from specswarm.critics import Part, Relative, check_facts, check_overlap, check_repeats, check_units
from specswarm.critics.repair import merge_children, repair_split
from tests.critics.kit import kid
from tests.test_model_tasks import GOAL

TRIP = Part(GOAL, "", {})


def test_siblings_that_plan_the_same_place_become_one_child_with_summed_facts() -> None:
    kids = [
        kid("Tokyo", "Temples, museums and cherry blossom viewing", 5),
        kid("Kyoto", "Temples like Fushimi Inari Shrine", 4),
        kid("Hiking in the Japanese Alps", "A day of hiking near Kamikochi", 3),
        kid("Design tours in Tokyo", "Japanese design at a museum or a workshop", 2),
    ]
    assert not check_overlap(TRIP, kids).passed
    fixed, done = repair_split(TRIP, kids, min_children=2)
    assert [c.title for c in fixed] == ["Tokyo", "Kyoto", "Hiking in the Japanese Alps"]
    assert fixed[0].facts["days"] == 7 and "workshop" in fixed[0].detail and "cherry" in fixed[0].detail
    assert done.merged == 1 and done.dropped == 0 and "Tokyo" in done.notes[0]
    assert check_overlap(TRIP, fixed).passed


def test_a_split_without_overlap_or_repeats_is_left_alone() -> None:
    kids = [
        kid("Tokyo", "Asakusa and Ueno", 6),
        kid("Kyoto", "Gion and Arashiyama", 5),
        kid("Osaka", "Dotonbori", 3),
    ]
    fixed, done = repair_split(TRIP, kids, min_children=2)
    assert fixed == kids and not done


def test_a_repair_never_takes_a_split_below_the_minimum() -> None:
    kids = [
        kid("Visit Kyoto temples", "Kiyomizu-dera", 7),
        kid("Kyoto temple tour", "Kiyomizu-dera and Ginkaku-ji", 7),
    ]
    assert not check_overlap(TRIP, kids).passed
    fixed, done = repair_split(TRIP, kids, min_children=2)
    assert fixed == kids and not done


def test_a_child_that_repeats_a_stage_planned_elsewhere_is_dropped() -> None:
    tokyo = Part("Tokyo", "five days in the capital", {"days": 5})
    tree = [
        Relative(GOAL, "ancestor", "", {}, 0, None),
        Relative(
            "Hike Mount Fuji", "sibling", "a two-day climb from the Yoshida trail", {"days": 2}, 1, GOAL
        ),
        Relative("Kyoto", "sibling", "temples", {"days": 7}, 1, GOAL),
    ]
    kids = [
        kid("Asakusa and Senso-ji", "the old town", 2),
        kid("Shibuya and Harajuku", "fashion and crossings", 2),
        kid("Hike Mount Fuji", "climb the Yoshida trail", 1),
    ]
    assert not check_repeats(tokyo, kids, tree, parent_depth=1).passed
    fixed, done = repair_split(tokyo, kids, tree, min_children=2, depth=1)
    assert [c.title for c in fixed] == ["Asakusa and Senso-ji", "Shibuya and Harajuku"]
    assert done.dropped == 1 and "Hike Mount Fuji" in done.notes[0]
    assert check_repeats(tokyo, fixed, tree, parent_depth=1).passed


def test_a_merged_title_loses_a_quantity_its_summed_facts_contradict() -> None:
    merged = merge_children(
        [kid("Visit Kyoto (4 days)", "Gion", 4), kid("Kyoto gardens (3 days)", "Ryoan-ji", 3)]
    )
    assert merged.title == "Visit Kyoto" and merged.facts == {"days": 7}
    assert check_units([merged]).passed


def test_a_title_quantity_its_facts_contradict_and_an_open_bracket_are_cut() -> None:
    kids = [
        kid("Hike Mount Fuji (1 day) (Start your hike from the base camp", "Climb overnight", 1),
        kid("Visit Osaka (0 days)", "Umeda and Osaka Castle", 1),
        kid("Tokyo (5 days)", "Asakusa", 5),
    ]
    assert not check_units(kids).passed
    fixed, done = repair_split(TRIP, kids, min_children=2)
    assert [c.title for c in fixed] == ["Hike Mount Fuji (1 day)", "Visit Osaka", "Tokyo (5 days)"]
    assert fixed[0].detail == "Start your hike from the base camp; Climb overnight"
    assert [c.facts for c in fixed] == [c.facts for c in kids]  # the facts are what sums check
    assert done.retitled == 2 and done.merged == 0 and done.dropped == 0
    assert check_units(fixed).passed


def test_a_child_given_no_days_joins_the_sibling_before_it() -> None:
    fuji = Part("Hike Mount Fuji", "a two-day climb", {"days": 2})
    kids = [
        kid("Climb to the eighth station", "Yoshida trail, night in a hut", 1),
        kid("Summit at sunrise", "then descend", 1),
        kid("Return to Tokyo", "train from Kawaguchiko", 0),
    ]
    assert not check_facts(fuji, kids).passed  # a stage that takes no time is no stage
    fixed, done = repair_split(fuji, kids, min_children=2)
    assert [c.title for c in fixed] == ["Climb to the eighth station", "Summit at sunrise"]
    assert fixed[1].facts["days"] == 1 and "Kawaguchiko" in fixed[1].detail
    assert done.merged == 1 and check_facts(fuji, fixed).passed
    two = [kid("Climb", "up", 2), kid("Return", "down", 0)]
    assert repair_split(fuji, two, min_children=2)[0] == two  # never below the minimum
