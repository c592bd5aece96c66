"""A decomposer's own split, repaired and self-checked before it is proposed
(critics/repair.py, model/splits.py, the ``relatives``/``proposed`` path of decompose)."""

from __future__ import annotations

import pytest

from specswarm.critics import Part, Relative, check_facts, check_overlap, check_repeats, check_units
from specswarm.critics.repair import merge_children, repair_split
from specswarm.model import Child, GenerationRequest, ScriptedModel, TaskCounts, decompose
from tests.test_model_tasks import GOAL, ROOT, spec_of

TRIP = Part(GOAL, "", {})


def kid(title: str, detail: str = "", days: int | None = None) -> Child:
    return Child(title, detail, False, {"days": days} if days is not None else {})


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


class Recorder:
    """A scripted model that answers from a queue and keeps every request."""

    def __init__(self, *texts: str) -> None:
        self.queue = list(texts)
        self.requests: list[GenerationRequest] = []
        self.model = ScriptedModel(self._answer)

    def _answer(self, req: GenerationRequest) -> str:
        self.requests.append(req)
        return self.queue.pop(0)


GOOD = (
    "- Tokyo: Asakusa and Ueno (days: 6)\n- Kyoto: Gion and Arashiyama (days: 5)\n"
    "- Osaka: Dotonbori (days: 3)"
)
OTHER = (
    "- Hokkaido: Sapporo and Otaru (days: 5)\n- Hiroshima: Peace Park (days: 5)\n"
    "- Nagano: Jigokudani (days: 4)"
)


def test_a_split_that_passes_its_self_check_costs_one_generation() -> None:
    rec = Recorder(GOOD)
    counts = TaskCounts()
    kids = decompose(rec.model, spec_of(), ROOT, [], [], "geography", [], counts=counts, relatives=[])
    assert [c.title for c in kids] == ["Tokyo", "Kyoto", "Osaka"]
    assert len(rec.requests) == 1 and counts.varied == 0 and counts.repaired == 0


def test_a_split_already_on_the_table_is_asked_for_again_another_way() -> None:
    rec = Recorder(GOOD, OTHER)
    counts = TaskCounts()
    on_table = [[kid("Tokyo", "", 6), kid("Kyoto", "", 5), kid("Osaka", "", 3)]]
    kids = decompose(
        rec.model,
        spec_of(),
        ROOT,
        [],
        [],
        "geography",
        [],
        counts=counts,
        relatives=[],
        proposed=on_table,
        strategies=("geography", "activity", "days"),
    )
    assert [c.title for c in kids] == ["Hokkaido", "Hiroshima", "Nagano"]
    assert counts.varied == 1 and len(rec.requests) == 2
    again = rec.requests[1].prompt
    # the second request is the refine prompt: another strategy, the first answer, the reason
    assert "by geography" not in again and ("by activity" in again or "by days" in again)
    assert "A previous split of it was rejected" in again and "proposed before" in again


@pytest.mark.parametrize(
    ("table", "asked_again"),
    [
        # two of the three parts a rival already has: a near copy, asked for another way
        (["Tokyo", "Kyoto", "Hokkaido", "Nara"], True),
        # the rival's parts in other words are still the same parts
        (["Tokyo (Tokyo)", "The Kyoto", "Sapporo"], True),
        # one shared city of three is a rival, not a copy
        (["Tokyo", "Hiroshima", "Nagano"], False),
    ],
)
def test_a_near_copy_of_a_rival_split_is_asked_for_again(table: list[str], asked_again: bool) -> None:
    rec = Recorder(GOOD, OTHER)
    counts = TaskCounts()
    kids = decompose(
        rec.model,
        spec_of(),
        ROOT,
        [],
        [],
        "geography",
        [],
        counts=counts,
        relatives=[],
        proposed=[[kid(t, "", 3) for t in table]],
        rivals=[[kid(t, "", 3) for t in table]],
        strategies=("geography", "activity", "days"),
    )
    assert counts.varied == int(asked_again) and len(rec.requests) == 1 + int(asked_again)
    assert [c.title for c in kids] == (
        ["Hokkaido", "Hiroshima", "Nagano"] if asked_again else ["Tokyo", "Kyoto", "Osaka"]
    )
    if asked_again:
        assert "proposed before: split it another way" in rec.requests[1].prompt


def test_when_the_second_way_is_no_better_the_first_split_is_kept() -> None:
    rec = Recorder(GOOD, GOOD)
    on_table = [[kid("Tokyo", "", 6), kid("Kyoto", "", 5), kid("Osaka", "", 3)]]
    kids = decompose(
        rec.model,
        spec_of(),
        ROOT,
        [],
        [],
        "geography",
        [],
        relatives=[],
        proposed=on_table,
        strategies=("geography",),
    )
    assert [c.title for c in kids] == ["Tokyo", "Kyoto", "Osaka"] and len(rec.requests) == 2


OVERLAPPING = (
    "- Tokyo: temples and museums (days: 5)\n- Kyoto: Fushimi Inari (days: 5)\n"
    "- Design tours in Tokyo: a design museum (days: 4)"
)
TREE = {"max_depth": 2, "min_children": 2, "max_children": 5, "max_revisions": 2, "approve_threshold": 60}


def test_an_overlapping_answer_is_merged_in_code_without_asking_again() -> None:
    rec = Recorder(OVERLAPPING)
    counts = TaskCounts()
    kids = decompose(
        rec.model, spec_of(tree=TREE), ROOT, [], [], "geography", [], counts=counts, relatives=[]
    )
    assert [c.title for c in kids] == ["Tokyo", "Kyoto"] and kids[0].facts["days"] == 9
    assert counts.repaired == 1 and counts.varied == 0 and len(rec.requests) == 1


def test_an_overlap_that_cannot_be_merged_is_asked_for_again() -> None:
    rec = Recorder(OVERLAPPING, GOOD)
    counts = TaskCounts()
    # min_children is 3 here: merging the two Tokyo children would leave 2
    kids = decompose(rec.model, spec_of(), ROOT, [], [], "geography", [], counts=counts, relatives=[])
    assert [c.title for c in kids] == ["Tokyo", "Kyoto", "Osaka"]
    assert counts.repaired == 0 and counts.varied == 1 and "covered the same thing" in rec.requests[1].prompt


def test_a_result_its_facts_rule_out_is_named() -> None:
    from specswarm.critics import contradicted_facts

    said = contradicted_facts("- Day 1: Fushimi Inari\n- Day 3: Arashiyama\n- 3 days in Gion", {"days": 2})
    assert said == ["it says '3 days' but the task has days: 2", "it plans 'Day 3' but the task has days: 2"]
    assert contradicted_facts("- EUR 900 at Hotel Granvia", {"budget_eur": 300})
    # parts of the whole, other units, other currencies and non-additive facts pass
    assert not contradicted_facts("- 2 hours at Kinkaku-ji\n- Day 1: Gion", {"days": 1})
    assert not contradicted_facts("- lunch 2,000 JPY", {"budget_eur": 300})
    assert not contradicted_facts("- Day 9 of the trip", {"guests": 2})


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


def test_an_executed_leaf_that_breaks_its_facts_is_written_once_more() -> None:
    from specswarm.model import execute
    from tests.test_model_tasks import Node

    rec = Recorder("- Day 1: Gion\n- Day 2: Arashiyama\n- Day 3: Nara", "- Day 1: Gion\n- Day 2: Arashiyama")
    counts = TaskCounts()
    leaf = Node("k1", "Kyoto temples", "Gion and Arashiyama", depth=2, facts={"days": 2})
    out = execute(rec.model, spec_of(), leaf, [ROOT], counts=counts)
    assert out == "- Day 1: Gion\n- Day 2: Arashiyama" and counts.redone == 1
    assert "broke this task's facts" in rec.requests[1].prompt and "'Day 3'" in rec.requests[1].prompt
    # a result that keeps to its facts is written once
    rec = Recorder("- Day 1: Gion\n- Day 2: Arashiyama")
    execute(rec.model, spec_of(), leaf, [ROOT], counts=TaskCounts())
    assert len(rec.requests) == 1


def test_a_rewrite_that_echoes_its_problem_does_not_replace_the_answer() -> None:
    from specswarm.model import execute
    from tests.test_model_tasks import Node

    # a real japan run (embedded model): a one-day leaf planned five museums over nine days; asked
    # again, told "it plans 'April 10th' to 'April 18th' (9 days) but the task has days: 1", it
    # wrote that problem back as its one line
    first = (
        "- Plan a visit to Tokyo's museums on April 10th.\n"
        "- Visit the Tokyo Metropolitan Museum of Modern Art (Tate Modern) on April 12th.\n"
        "- Visit the National Museum of Japanese History (NHK Museum) on April 14th.\n"
        "- Visit the Tokyo National Museum of Science and Technology (NIST Museum) on April 16th.\n"
        "- Visit the Tokyo National Museum of Fine Arts (TNMA Museum) on April 18th."
    )
    echo = "- Visit Tokyo's museums from April 10th to April 18th, keeping to the specified days."
    leaf = Node("t2", "Visit Tokyo's museums", "", depth=2, facts={"days": 1})
    rec = Recorder(first, echo)
    counts = TaskCounts()
    assert execute(rec.model, spec_of(), leaf, [ROOT], counts=counts) == first
    assert counts.redone == 1 and "'April 10th' to 'April 18th' (9 days)" in rec.requests[1].prompt
    # a rewrite that keeps to the facts replaces it, however short
    rec = Recorder(first, "- Tokyo National Museum, 9:30 to 17:00")
    assert execute(rec.model, spec_of(), leaf, [ROOT], counts=TaskCounts()).startswith("- Tokyo National")
    # nor one that only restates its task (its title and its fact), whatever it breaks: the one
    # line that was left of a real run's "Explore nearby mountains" once its sibling leaves'
    # items were left out, here as a rewrite of a dated first answer
    hike = Node("h2", "Explore nearby mountains", "", depth=2, facts={"days": 1})
    dated = "- Start at Mount Fuji on April 2nd.\n- Hike from April 3rd to April 4th.\n- Summit on April 5th."
    rec = Recorder(dated, "- Explore nearby mountains for 1 day.")
    assert execute(rec.model, spec_of(), hike, [ROOT], counts=TaskCounts()) == dated


def test_a_result_that_restates_its_task_says_nothing() -> None:
    from specswarm.critics import restates

    assert restates("- Explore nearby mountains for 1 day.", "Explore nearby mountains", {"days": 1})
    assert restates("- Tags are used to categorize tasks.", "Define how tags are used to categorize tasks")
    assert not restates("- Mount Takao: 599 m, 50 min from Shinjuku", "Explore nearby mountains", {"days": 1})
    assert not restates("- Explore nearby mountains for 2 days", "Explore nearby mountains", {"days": 1})


def test_a_revision_names_each_problem_once_hard_checks_first() -> None:
    from types import SimpleNamespace

    from specswarm.swarm.roles.decomposer import review_lines

    overlap = 'overlap: #1 "Tokyo" and #4 "Design tours in Tokyo" both plan Tokyo'
    coverage = "coverage: 4/18 key terms of the parent's detail covered"
    votes = [
        SimpleNamespace(approve=False, critique=f"{coverage}\n{overlap}"),
        SimpleNamespace(approve=False, critique=f"{overlap}\n{coverage}"),
        SimpleNamespace(approve=False, critique="no problems found"),
        SimpleNamespace(approve=True, critique="units: #2 says 3 days"),
    ]
    assert review_lines(SimpleNamespace(votes=votes)) == [overlap, coverage]  # type: ignore[arg-type]


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
