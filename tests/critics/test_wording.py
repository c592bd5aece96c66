"""Wording (:mod:`specswarm.critics.wording`): a split's count, vagueness, coverage of the
parent's detail and concreteness; and a leaf's result: which lines are concrete, whether it only
restates its task, and which items do a sibling leaf's task."""

from __future__ import annotations

import pytest

from specswarm import critics
from specswarm import critics as cc
from specswarm.critics import Check, check_count, check_coverage, check_vagueness
from specswarm.critics.wording import concrete_line, keep_on_task, off_task, vague_result
from specswarm.protocol.bodies import Child
from tests.critics.kit import CONCRETE, GENERAL, GOOD, LIST_ALL, SIBLINGS, P, by_name, child, verdict


def test_count_fails_alone() -> None:
    assert check_count(GOOD, 2, 3) == Check("count", 0, False, "4 children (allowed 2..3)")
    assert check_count(GOOD, 4, 4).passed


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


def test_count() -> None:
    assert cc.check_count([P("Only child")], 2, 6) == Check("count", 0, False, "1 children (allowed 2..6)")
    assert cc.check_count([P("A b"), P("C d")], 2, 6).passed


def test_vague_children_in_a_wedding() -> None:
    check = cc.check_vagueness([P("Venue"), P("Other stuff"), P("Misc tasks"), P("Plan the next steps")])
    assert check == Check(
        "vagueness",
        25,
        False,
        "#2 \"Other stuff\": vague word 'other'; #3 \"Misc tasks\": vague word 'misc'; "
        '#4 "Plan the next steps": no concrete content (only planning words, numbers or dates): '
        "name what each child is about",
    )
    checks, ok = verdict(
        P("Plan a wedding for 80 guests", guests=80), [P("Venue"), P("Other stuff"), P("Misc tasks")]
    )
    assert not ok  # vagueness below its floor vetoes


def test_one_word_titles_need_a_concrete_detail_unless_they_are_names() -> None:
    assert cc.check_vagueness(
        [
            P("Catering", "Green Fork, vegetarian menu for 200"),
            P("Photography", "Anna Berg, 8 hours"),
            P("Tokyo"),
        ]
    ).passed
    # a capitalised word never written in lower case may be a name: the benefit of the doubt
    assert cc.check_vagueness([P("Athens", "Hot springs."), P("Santorini")]).passed
    parent = P("Mount Fuji and Hakone", "a ryokan with an onsen, hiking on the old Tokaido road")
    check = by_name(
        cc.run_checks(parent, [P("Onsen", "Hot springs."), P("Hiking", "Walk in nature."), P("Tokyo")])
    )["vagueness"]
    assert check.note == (
        '#1 "Onsen": one generic word, and the detail names no place, thing or number; '
        '#2 "Hiking": one generic word, and the detail names no place, thing or number: '
        "name what each child is about"
    )


def test_coverage_reads_the_parents_detail() -> None:
    parent = P("Kyoto (4 days)", "Fushimi Inari, Kinkaku-ji, a tea ceremony and Nishiki market")
    good = [
        P("Fushimi Inari at dawn"),
        P("Kinkaku-ji and Ryoan-ji"),
        P("Tea ceremony in Gion"),
        P("Nishiki market lunch"),
    ]
    assert cc.check_coverage(parent, good).passed
    bad = cc.check_coverage(parent, [P("Osaka castle"), P("Nara deer park")])
    assert not bad.passed
    assert bad.note.startswith("0/")
    # a parent with no detail has nothing more to cover (its title is what the children refine)
    assert cc.check_coverage(P("Plan a trip to Italy"), [P("Rome"), P("Venice")]).passed


def test_concreteness_counts_what_a_child_names_beyond_its_parent() -> None:
    parent = critics.Part("Visit Kyoto (4 days)", "temples and gardens", {"days": 4})
    named = [
        critics.Part(
            "Fushimi Inari and Kiyomizu-dera", "Gion at dusk, 2 hours in Nishiki Market", {"days": 2}
        ),
        critics.Part("Arashiyama and Kinkaku-ji", "the bamboo grove, then Ryoan-ji", {"days": 2}),
    ]
    themes = [
        critics.Part("Explore Kyoto's temples", "see the temples of Kyoto"),
        critics.Part("Enjoy the gardens", "relax in the gardens"),
    ]
    full, thin = critics.check_concreteness(parent, named), critics.check_concreteness(parent, themes)
    assert full.score == 100 and full.passed
    assert thin.score == 0 and thin.passed  # soft: vagueness is the check that fails
    assert "#1" in thin.note and "#2" in thin.note


def test_a_result_that_restates_its_task_says_nothing() -> None:
    from specswarm.critics import restates

    assert restates("- Explore nearby mountains for 1 day.", "Explore nearby mountains", {"days": 1})
    assert restates("- Tags are used to categorize tasks.", "Define how tags are used to categorize tasks")
    assert not restates("- Mount Takao: 599 m, 50 min from Shinjuku", "Explore nearby mountains", {"days": 1})
    assert not restates("- Explore nearby mountains for 2 days", "Explore nearby mountains", {"days": 1})


def test_an_item_doing_a_siblings_task_is_off_task() -> None:
    title = "Describe how to list all tasks, including completed ones"
    # "task" and "describe" are in every title: they tell nothing apart
    assert off_task(LIST_ALL, title, SIBLINGS) == [
        "- Delete a task: `todo delete <id>` removes it.",
        "- View tasks with a tag: `todo tag work` shows them.",
    ]
    # naming its own task's word too ("list"), an item is kept: it may join the two
    both = "- Delete from the list: `todo delete <id>`"
    assert off_task(both, title, SIBLINGS) == []
    kept, dropped = keep_on_task(LIST_ALL, title, SIBLINGS)
    assert dropped == 2
    assert kept.splitlines() == [LIST_ALL.splitlines()[0], LIST_ALL.splitlines()[3]]


def test_an_item_naming_its_own_task_too_is_kept_and_context_words_do_not_count() -> None:
    title = "Visit Fushimi Inari"
    siblings = ["Explore Gion at night"]
    text = "- Fushimi Inari at 7:00, then walk to Gion for lunch\n- Dinner in Gion at 19:00"
    assert off_task(text, title, siblings) == ["- Dinner in Gion at 19:00"]
    # a word the leaf's ancestors or the goal hold ("Kyoto") belongs to every leaf
    text = "- Take the JR Nara line from Kyoto station\n- Gion in the evening"
    assert off_task(text, title, ["Explore Gion and Kyoto"], context=["Two days in Kyoto"]) == [
        "- Gion in the evening"
    ]


def test_continuation_lines_go_with_their_item_and_a_result_all_off_task_is_kept_whole() -> None:
    title = "Book the venue"
    text = "- Venue: Kulturbrauerei, 200 seats\n- Catering: lunch boxes\n  - 12 EUR each, from Dean & David"
    kept, dropped = keep_on_task(text, title, ["Order the catering"])
    assert (kept, dropped) == ("- Venue: Kulturbrauerei, 200 seats", 1)
    # nothing of its own task left: kept as it was (a repeat of a sibling is judged elsewhere)
    whole = "- Catering: lunch boxes from Dean & David"
    assert keep_on_task(whole, title, ["Order the catering"]) == (whole, 0)
    assert keep_on_task(whole, title, []) == (whole, 0)


@pytest.mark.parametrize(
    ("line", "concrete"),
    [
        ("- Walk to Shibuya Crossing at night", True),  # a name inside the sentence
        ("- Budget 12 EUR per person", True),  # a digit
        ("- Arrive early. Kinkaku-ji opens first", False),  # a sentence opens with its capital
        ("- Order food for everyone", False),
        ("- Book The Venue And Catering", False),  # Title Case: capitals prove nothing
        ("- Meet at Room 3 of The Hub", True),  # a digit still counts on a Title Case line
        ("- I will ask the caterer", False),  # "I" is no name
    ],
)
def test_a_line_is_concrete_with_a_number_or_a_name_inside_a_sentence(line: str, concrete: bool) -> None:
    assert concrete_line(line) is concrete


def test_a_result_is_vague_when_fewer_than_a_third_of_its_lines_are_concrete() -> None:
    assert vague_result(GENERAL) == [ln for ln in GENERAL.splitlines()]
    assert vague_result(CONCRETE) == []
    # one concrete line of three is enough; none of four is not
    assert vague_result("- Visit Nara Park\n- Feed the deer\n- Eat lunch") == []
    # a code fence's lines with no word are no lines of the result: one of three, not of five
    assert vague_result("- Sync every 5 minutes:\n  ```\n  todo sync\n  ```\n- Wait") == []
    assert vague_result("- Eat\n- Sleep\n- Walk\n- Read") != []
    assert vague_result("") == []


def test_a_chinese_title_is_a_phrase_not_one_word() -> None:
    # old: each title one token, "one generic word" -> vagueness 0, a veto
    split = [child("设计和装修：", weeks=3), child("装备采购：", weeks=3), child("员工培训：", weeks=2)]
    assert check_vagueness(split).passed
    c = check_vagueness([child("培训"), child("购买咖啡机：预算为10万元人民币")])
    assert c.note.startswith('#1 "培训": one generic word')  # one two-letter word is still thin


def test_coverage_of_a_chinese_detail_counts_its_letters() -> None:
    detail = "预算三十万元人民币，包括租金押金、装修、设备和开业前的员工培训。"
    parent = Child("在八周内开一家小咖啡馆", detail)
    on_topic = [
        child("装修和设备", "租金押金和装修，预算二十万元"),
        child("员工培训", "开业前两周培训员工"),
    ]
    c = check_coverage(parent, on_topic)
    assert c.passed and c.score == 100  # old: 0/3 key terms, each clause one "word"
    off_topic = [child("营销推广", "在社交媒体上发布广告"), child("菜单设计", "选择咖啡豆和甜点")]
    c = check_coverage(parent, off_topic)
    assert not c.passed
    assert "not covered: 预算三十万元人民币, 包括租金押金" in c.note
