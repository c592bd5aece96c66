"""The board's lenses on a leaf result (critics/results.py) and the text measures they rest on
(critics/shingles.py): in any language and script, without word lists."""

from __future__ import annotations

from specswarm.critics.results import (
    MIN_CHARS,
    MIN_LINES,
    ResultTask,
    Written,
    check_concrete,
    check_consistent,
    check_new,
    check_on_task,
    check_result,
    verdict,
)
from specswarm.critics.shingles import has_digit, item_lines, normal, shingles

KYOTO = "Kyoto temples: Kiyomizu-dera, Ginkaku-ji and the Philosopher's Path (days 2)"
TOKYO = "Tokyo museums: the National Museum in Ueno and the Mori Art Museum (days 1)"
GOOD = """- 07:30 Kiyomizu-dera before the tour buses, 500 JPY entry
- 09:30 walk down Sannenzaka and Ninenzaka to Kodai-ji
- 12:00 lunch of yudofu at Okutan near Nanzen-ji, about 3,000 JPY
- 14:00 Ginkaku-ji, the silver pavilion and its sand garden, 500 JPY
- 15:30 the Philosopher's Path south to Eikan-do
- 18:00 dinner in Gion, Hanamikoji street"""


def task(
    own: str = KYOTO, others: dict[str, str] | None = None, ledger: tuple[Written, ...] = ()
) -> ResultTask:
    others = {'"Tokyo museums" (1.1)': TOKYO} if others is None else others
    return ResultTask({"days": 2}, "Plan a trip to Japan " + own, own, others, ledger)


def test_a_specific_result_of_its_own_task_passes_every_lens() -> None:
    checks = check_result(GOOD, task())
    assert [c.name for c in checks] == ["concrete", "on_task", "new", "consistent"]
    assert all(c.passed for c in checks), checks
    assert verdict(checks) == (100, True)


def test_a_thin_result_is_told_how_many_lines_and_characters_it_lacks() -> None:
    check = check_concrete(
        item_lines("- Visit Fushimi Inari Shrine on April 15th and 16th"), "Visit Fushimi Inari"
    )
    assert not check.passed
    assert check.note.startswith(
        f"1 item lines, 49 characters: write at least {MIN_LINES} lines and {MIN_CHARS}"
    )


def test_lines_that_only_repeat_the_task_carry_no_specific() -> None:
    lines = [f"Explore the temples of Kyoto, part {w}" for w in ("one", "two", "three", "four", "five")]
    check = check_concrete(lines, "Explore the temples of Kyoto, part one two three four five")
    assert not check.passed and "lines 1, 2, 3, 4, 5 only repeat the task" in check.note


def test_digits_of_any_script_are_specifics() -> None:
    assert all(has_digit(t) for t in ("٣ أيام", "३ दिन", "３日", "3 days"))
    assert not has_digit("three days")
    assert normal("Ｋｙｏｔｏ　３日") == "kyoto 3日" and normal("٣") == "3"


def test_a_result_in_another_script_is_judged_the_same_way() -> None:
    own = "京都の寺院: 清水寺と銀閣寺"
    result = "\n".join(
        [
            "- ７時３０分 清水寺、観光バスの前に本堂へ、拝観料５００円",
            "- ９時 産寧坂と二年坂を歩いて高台寺まで",
            "- １２時 南禅寺の近くの奥丹で湯豆腐の昼食、約３０００円",
            "- １４時 銀閣寺の銀沙灘と庭園、拝観料５００円",
            "- １８時 祇園の花見小路で京料理の夕食、二人で８０００円",
        ]
    )
    checks = check_result(
        result, ResultTask({}, own, own, {'"東京の博物館" (1.1)': "東京国立博物館と森美術館"})
    )
    assert all(c.passed for c in checks), checks
    earlier = Written("清水寺", ("８時 清水寺、観光バスの前に本堂へ",), "2.1")
    repeated = check_new(item_lines(result), [earlier])
    assert not repeated.passed
    assert 'repeats "８時 清水寺、観光バスの前に本堂へ" of "清水寺" (2.1)' in repeated.note


def test_a_result_about_another_node_names_the_node_it_drifted_to() -> None:
    museums = """- 09:30 Tokyo National Museum in Ueno, 1,000 JPY
- 12:00 lunch in Ueno park
- 14:00 Mori Art Museum in Roppongi Hills, 2,000 JPY
- 16:00 the National Museum of Modern Art
- 18:00 dinner in Roppongi"""
    check = check_on_task(item_lines(museums), KYOTO, {'"Tokyo museums" (1.1)': TOKYO})
    assert not check.passed
    assert check.note.startswith('the result is closer to "Tokyo museums" (1.1) than to its own task')


def test_a_line_planned_by_an_earlier_leaf_is_named_with_its_leaf() -> None:
    earlier = Written(
        "Explore Tokyo's temples", ("Spend time at the Kiyomizu-ji Temple", "Meiji Shrine at 9:00"), "1.1"
    )
    check = check_new(["Explore Kiyomizu-ji Temple", "Nishiki market at 11:00"], [earlier])
    assert not check.passed
    assert check.note == (
        'line 1 "Explore Kiyomizu-ji Temple" repeats "Spend time at the Kiyomizu-ji Temple" of '
        '"Explore Tokyo\'s temples" (1.1): plan something else there'
    )
    assert check_new(["Nishiki market at 11:00", "Fushimi Inari at dawn"], [earlier]).passed


def test_a_shared_frame_is_no_repeat_but_a_shared_name_is() -> None:
    mine = ["Plan a day trip to Nara deer park", "Plan a day trip to the Miho Museum"]
    theirs = [Written("Tokyo", ("Plan a day trip to Kamakura", "Plan a day trip to Nikko"), "1")]
    assert check_new(mine, theirs).passed
    theirs = [Written("Tokyo", ("Plan a day trip to Kamakura", "Feed the deer at Nara deer park"), "1")]
    assert not check_new(mine, theirs).passed


def test_a_result_that_breaks_its_facts_is_inconsistent() -> None:
    check = check_consistent("- Day 1: Kiyomizu-dera\n- Day 3: Ginkaku-ji", {"days": 2})
    assert not check.passed and "'Day 3'" in check.note


def test_item_lines_strip_markers_and_numbering_and_skip_markup() -> None:
    text = "```\n- one: 1\n* two\n3. three\n4) four\n---\n\n•  five  and   six\n```"
    assert item_lines(text) == ["one: 1", "two", "three", "four", "five and six"]
    # a marker after a unit label goes too; a time, a dash inside a line and a label's dash stay
    labelled = (
        "- Day 12: - Walk past Todaiji\n- 第3天： * 东京\n- 10:00 - lunch\n- Day 4 - Kyoto\n- Day 5: e-mail"
    )
    assert item_lines(labelled) == [
        "Day 12: Walk past Todaiji",
        "第3天： 东京",
        "10:00 - lunch",
        "Day 4 - Kyoto",
        "Day 5: e-mail",
    ]


def test_shingles_ignore_case_punctuation_and_width() -> None:
    assert shingles("Kyoto, KYOTO!") == shingles("kyoto kyoto") == shingles("ｋｙｏｔｏ ｋｙｏｔｏ")
    assert shingles("") == frozenset()
