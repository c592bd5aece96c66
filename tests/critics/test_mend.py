"""An executor's own pass over a leaf result (critics/mend.py): what it leaves out and why, what
it asks for, and how the lines asked for are added."""

from __future__ import annotations

from dataclasses import replace

from specswarm.critics.mend import (
    Mended,
    added_lines,
    enough,
    in_unit_order,
    listed,
    mend_result,
    refilled,
    relabelled,
    untagged,
)
from specswarm.critics.results import ResultTask, Written, check_result
from specswarm.critics.shingles import unit_number

TASK = ResultTask(
    facts={"days": 2},
    task="Plan a two-week trip to Japan Kyoto temples Visit Fushimi Inari Shrine days 2",
    own="Kyoto Visit Fushimi Inari Shrine days 2",
    others={
        '"Tokyo museums" (1.2)': "Tokyo museums Tokyo National Museum Ueno Park art galleries",
        '"Mount Fuji hike" (3.1)': "Mount Fuji hike Kawaguchiko lake trail fifth station",
    },
    ledger=(Written("Kyoto food", ("Day 5: Nishiki Market food stalls, 2,000 JPY",), "2.1"),),
    span=("days", 6, 7),
)

RESULT = "\n".join(
    [
        "- Day 6: 07:00 Fushimi Inari Shrine, walk the torii gates to Mount Inari's summit",
        "- Day 7: Kinkaku-ji, the Golden Pavilion, on a 3-day Kansai pass",  # 3 days in a 2-day task
        "- Day 7: Nishiki Market food stalls, 2,000 JPY",  # another leaf's line
        "- Day 7: Visit Fushimi Inari Shrine",  # says nothing the task does not
        "- Day 7: Mount Fuji fifth station trail from Kawaguchiko lake",  # another branch's
        "- Day 6: 12:30 kitsune udon at Nishimura near the shrine gate, 800 JPY",
    ]
)


def test_the_pass_leaves_out_what_the_board_would_hold_against_it() -> None:
    mended = mend_result(RESULT, TASK)
    assert dict(mended.dropped) == {1: "consistent", 2: "new", 3: "concrete", 4: "on_task"}
    # the Fuji line, with the two others, makes the lines as a whole closer to the Fuji hike
    # than to their own task: the on_task lens would fail, so it goes
    assert mended.kept == (
        "Day 6: 07:00 Fushimi Inari Shrine, walk the torii gates to Mount Inari's summit",
        "Day 6: 12:30 kitsune udon at Nishimura near the shrine gate, 800 JPY",
    )
    assert mended.wanted == 4 and not enough(mended)
    # what is kept, the board's four lenses pass but the concrete one (too few lines)
    failed = [c.name for c in check_result(mended.text(), TASK) if not c.passed]
    assert failed == ["concrete"]


def test_lines_about_other_nodes_go_when_most_lines_are() -> None:
    fuji = [
        "- Day 7: Mount Fuji fifth station trail from Kawaguchiko lake",
        "- Day 7: Kawaguchiko lake boat at 14:00, Mount Fuji view",
        "- Day 6: Tokyo National Museum in Ueno Park, 1,000 JPY",
        "- Day 6: 07:00 Fushimi Inari Shrine, walk the torii gates to Mount Inari's summit",
    ]
    mended = mend_result("\n".join(fuji), TASK)
    assert dict(mended.dropped) == {0: "on_task", 1: "on_task", 2: "on_task"}
    assert len(mended.kept) == 1


def test_a_line_said_twice_is_kept_once() -> None:
    line = "- Day 6: 07:00 Fushimi Inari Shrine, walk the torii gates to the summit"
    assert mend_result(f"{line}\n{line.upper()}", TASK).dropped == ((1, "new"),)
    # under another day's label it is still the same line; another sight is another line
    again = f"{line}\n- Day 7: 07:00 Fushimi Inari Shrine, walk the torii gates to the summit."
    assert mend_result(again, TASK).dropped == ((1, "new"),)
    other = f"{line}\n- Day 7: 07:00 Kiyomizu-dera, walk the torii gates to the summit"
    assert mend_result(other, TASK).dropped == ()
    # the board's new lens says so too, naming the line said again
    check = next(c for c in check_result(again, TASK) if c.name == "new")
    assert not check.passed and "line 2" in check.note and "says again line 1" in check.note
    assert next(c for c in check_result(other, TASK) if c.name == "new").passed


def test_a_result_that_is_not_a_plain_list_is_kept_whole() -> None:
    text = "Day 6: the shrine\n```\nnot a list\n```"
    assert not listed(text) and listed("1. one\n2) two\n- three")
    mended = mend_result(text, TASK)
    assert mended.dropped == () and mended.wanted == 0


def test_a_long_enough_list_wants_nothing_more() -> None:
    lines = [
        f"- Day {6 + i % 2}: {9 + i}:00 Kyoto, Fushimi Inari Shrine gate {i}, "
        f"the Kitsune {i} tea house, {300 + i} JPY"
        for i in range(6)
    ]
    mended = mend_result("\n".join(lines), TASK)
    assert mended.dropped == () and mended.wanted == 0 and enough(mended)
    # one line about another branch among six: the on_task lens lets it pass, and so does the pass
    fuji = "- Day 7: 15:00 Mount Fuji fifth station"
    assert mend_result("\n".join([*lines, fuji]), TASK).dropped == ()


def test_the_lines_asked_for_are_added_once_in_day_order() -> None:
    mended = Mended(("Day 7: 09:00 Tofuku-ji's Tsutenkyo bridge, 600 JPY",), (), 2)
    answer = "\n".join(
        [
            "- Day 7: 09:00 Tofuku-ji's Tsutenkyo bridge, 600 JPY",  # the kept line, echoed
            "- Day 6: 18:00 dinner at Pontocho alley, kaiseki for 6,000 JPY",
            "- Day 9: Nara deer park",  # outside the task's days
            "- Day 6: 15:00 Sanjusangen-do's 1,001 statues, 600 JPY",
            "- Day 7: 20:00 Gion Corner show, 3,150 JPY",  # one more than wanted: there is room
        ]
    )
    out = added_lines(answer, mended, TASK)
    assert out.kept == (
        "Day 6: 18:00 dinner at Pontocho alley, kaiseki for 6,000 JPY",
        "Day 6: 15:00 Sanjusangen-do's 1,001 statues, 600 JPY",
        "Day 7: 09:00 Tofuku-ji's Tsutenkyo bridge, 600 JPY",
        "Day 7: 20:00 Gion Corner show, 3,150 JPY",
    )
    assert out.wanted == 2  # still short of six lines
    # asked for one, an answer with more good lines adds them, up to eight lines in all
    assert len(added_lines(answer, Mended(mended.kept, (), 1), TASK).kept) == 4
    full = Mended(
        tuple(f"Day 6: {h}:00 stop {h} at the Kitsune {h} gate, {h}00 JPY" for h in range(10, 17)), (), 1
    )
    assert len(added_lines(answer, full, TASK).kept) == 8


def test_unit_order_only_reads_labels_of_the_task_units() -> None:
    lines = ["Day 7: a", "Dinner 19:00 at b", "Day 6: c", "Day 2: d"]
    # "Dinner 19" is no label of days 6-7; "Day 2" counts from the task's start (its second day)
    assert in_unit_order(lines, ("days", 6, 7)) == ["Day 2: d", "Day 6: c", "Day 7: a", "Dinner 19:00 at b"]
    assert in_unit_order(lines, None) == lines


def test_lines_left_out_for_a_name_alone_come_back_when_the_model_gives_too_few() -> None:
    ledger = (Written("Tokyo temples", ("Day 1: 07:00 Sensoji Temple before the crowds, free",), "1.1"),)
    task = ResultTask(
        facts={"days": 1},
        task="Plan a two-week trip to Japan Tokyo cherry blossom viewing days 1",
        own="Tokyo cherry blossom viewing days 1",
        others={},
        ledger=ledger,
        span=("days", 5, 5),
    )
    text = "\n".join(
        [
            "- Day 5: 09:00 Ueno Park's 800 cherry trees along the main avenue",
            "- Day 5: 11:00 Shinobazu Pond by rowing boat, 700 JPY for 30 minutes",
            "- Day 5: 13:00 Sensoji Temple and the blossoms over its pagoda",
            "- Day 5: 16:00 Sumida Park riverside walk under the trees, 2 km",
        ]
    )
    mended = mend_result(text, task)
    assert dict(mended.dropped) == {2: "new"} and mended.spare == (text.splitlines()[2][2:],)
    assert mended.wanted == 3 and not enough(mended)
    # the model gave nothing new: the Sensoji line comes back, after the lines of its day
    back = refilled(added_lines("- Day 5: 13:00 Sensoji Temple again", mended, task), task.span)
    rows = [line[2:] for line in text.splitlines()]
    assert back.kept == (rows[0], rows[1], rows[3], rows[2]) and back.wanted == 2  # 4 lines: still short
    assert back.spare == ()
    # enough already: nothing is put back
    full = Mended(
        tuple(f"Day 5: {h}:00 line {h} of the day at the Kitanomaru park gate" for h in range(8, 14))
    )
    assert refilled(replace(full, spare=("Day 5: Sensoji",)), task.span).kept == full.kept


def test_a_day_label_past_the_leaf_s_days_is_moved_to_its_last_day() -> None:
    assert relabelled("Day 8: Kinkaku-ji, the Golden Pavilion, 500 JPY entry", TASK) == (
        "Day 7: Kinkaku-ji, the Golden Pavilion, 500 JPY entry"
    )
    assert relabelled("Day 6: 07:00 Fushimi Inari Shrine", TASK) == "Day 6: 07:00 Fushimi Inari Shrine"
    # a label is all that is moved: a line its facts rule out for another reason stays as it is
    ruled_out = "Day 8: a 3-day Kansai rail pass"
    assert relabelled(ruled_out, TASK) == ruled_out
    mended = mend_result("- Day 6: 07:00 Fushimi Inari Shrine torii walk\n- Day 9: 18:00 Gion at dusk", TASK)
    assert mended.kept[-1] == "Day 7: 18:00 Gion at dusk" and not mended.dropped


def test_unit_labels_in_other_scripts_are_read_and_times_are_not() -> None:
    lines = ["第6天：参观伏见稻荷大社", "दिन 6: क़ुतुब मीनार", "6日目：清水寺", "Día 6: la Ribeira"]
    assert [unit_number(line) for line in lines] == [(6, 1, 2), (6, 4, 5), (6, 0, 1), (6, 4, 5)]
    assert unit_number("10:00 Kiyomizu-dera") is None and unit_number("Morning, 9:00 tea") is None
    assert in_unit_order(["第7天：晚餐", "第6天：早餐"], ("days", 6, 7)) == ["第6天：早餐", "第7天：晚餐"]


def test_the_prompts_format_for_facts_is_taken_out_of_a_line() -> None:
    assert untagged("Day 6: Explore Kinkakuji Temple in Kyoto (hours = 2).") == (
        "Day 6: Explore Kinkakuji Temple in Kyoto."
    )
    walk = "Day 7: a walk (distance = 5 km, days = 1) along the Kamo"
    assert untagged(walk) == "Day 7: a walk along the Kamo"
    # a bracket of other words, a call in code and a price stay
    for line in ["Nishiki Market (about 2 hours)", "call parse(x = 1)", "Lunch (EUR 20)"]:
        assert untagged(line) == line
    mended = mend_result("- Day 6: 07:00 Fushimi Inari Shrine torii walk (hours = 3)\n- (days = 1)", TASK)
    assert mended.kept == ("Day 6: 07:00 Fushimi Inari Shrine torii walk",)
