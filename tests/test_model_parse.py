"""Tolerant parsing of untrusted model output, with the rules enforced in code."""

from __future__ import annotations

import textwrap

import pytest

from specswarm.model.parse import (
    Child,
    OutputError,
    cut_repeats,
    extract_facts,
    parse_children,
    parse_execution,
    strip_markdown,
    trim_words,
)
from specswarm.model.scores import parse_score
from specswarm.model.titles import bare_title

GOAL = "Plan a two-week trip to Japan"


def parse(text: str, **kw) -> list[Child]:
    args = {"min_children": 2, "max_children": 6, "parent_title": GOAL, "goal": GOAL}
    args.update(kw)
    return parse_children(textwrap.dedent(text), **args)


def titles(children: list[Child]) -> list[str]:
    return [c.title for c in children]


def test_plain_bullets_with_title_detail_split() -> None:
    got = parse("""\
        - Tokyo: Shinjuku, Asakusa and Tsukiji
        - Kyoto — temples and gardens
        - Osaka - street food in Dotonbori
        - Travel to Nara for 2 days; feed the deer
        """)
    assert got == [
        Child("Tokyo", "Shinjuku, Asakusa and Tsukiji"),
        Child("Kyoto", "temples and gardens"),
        Child("Osaka", "street food in Dotonbori"),
        Child("Travel to Nara for 2 days", "feed the deer"),
    ]


def test_prose_around_a_numbered_bold_list_with_continuations() -> None:
    got = parse(
        """\
        Sure! Here is a plan for your trip:

        1. **Tokyo** (days: 4): Explore Shinjuku and the museums.
        2. **Kyoto** — temples and gardens (days: 5)
           Visit Fushimi Inari early.

        3) Osaka: street food in Dotonbori (days: 3)

        These suggestions should help you have a great trip!
        """,
        fact_fields=["days"],
    )
    assert got == [
        Child("Tokyo", "Explore Shinjuku and the museums.", facts={"days": 4}),
        Child("Kyoto", "temples and gardens. Visit Fushimi Inari early.", facts={"days": 5}),
        Child("Osaka", "street food in Dotonbori", facts={"days": 3}),
    ]


def test_fenced_json_array_of_objects() -> None:
    got = parse(
        """\
        Here you go:
        ```json
        [
          {"title": "Tokyo sights", "description": "Senso-ji, Meiji shrine", "days": 5},
          {"title": "Kyoto temples", "description": "Kinkaku-ji", "days": 4}
        ]
        ```
        """,
        fact_fields=["days"],
    )
    assert got == [
        Child("Tokyo sights", "Senso-ji, Meiji shrine", facts={"days": 5}),
        Child("Kyoto temples", "Kinkaku-ji", facts={"days": 4}),
    ]


def test_json_object_wrapping_a_list_of_strings() -> None:
    got = parse('{"subgoals": ["Book flights to Tokyo", "Get a JR Pass", "Reserve ryokan"]}')
    assert titles(got) == ["Book flights to Tokyo", "Get a JR Pass", "Reserve ryokan"]


def test_step_labels_star_bullets_and_markdown_headings() -> None:
    got = parse("""\
        * Step 1: Book flights - compare fares to Narita
        * Step 2: Rail pass: order the JR Pass online
        """)
    assert got == [
        Child("Book flights", "compare fares to Narita"),
        Child("Rail pass", "order the JR Pass online"),
    ]
    got = parse("""\
        ### 1. Flights
        Compare fares to Narita.
        ### 2. Rail pass
        Order the JR Pass online.
        """)
    assert got == [
        Child("Flights", "Compare fares to Narita."),
        Child("Rail pass", "Order the JR Pass online."),
    ]


def test_duplicates_and_the_goal_itself_are_dropped() -> None:
    got = parse("""\
        - Plan a two-week trip to Japan
        - Visit Kyoto temples
        - visit kyoto temples!
        - **Visit Kyoto Temples**: again
        - Eat in Osaka
        """)
    assert titles(got) == ["Visit Kyoto temples", "Eat in Osaka"]


def test_too_many_children_are_truncated() -> None:
    got = parse("\n".join(f"- Tokyo district number {i}" for i in range(1, 10)), max_children=3)
    assert titles(got) == ["Tokyo district number 1", "Tokyo district number 2", "Tokyo district number 3"]


def test_too_few_children_is_an_error_that_says_why() -> None:
    with pytest.raises(OutputError) as info:
        parse("- Visit Kyoto temples\n- Plan a two-week trip to Japan", min_children=3)
    assert str(info.value) == (
        "only 1 usable part(s), need 3 to 6 ('Plan a two-week trip to Japan' only repeats the goal)"
    )


@pytest.mark.parametrize("text", ["", "   \n\n", "I cannot help with that request."])
def test_empty_or_listless_answers_are_errors(text: str) -> None:
    with pytest.raises(OutputError, match=r"the answer was empty|no list found"):
        parse(text)


def test_a_looping_answer_is_cut() -> None:
    looping = "- Visit Kyoto temples\n- Eat in Osaka\n" + "- Visit Tokyo tower\n" * 40
    got = parse(looping)
    assert titles(got) == ["Visit Kyoto temples", "Eat in Osaka", "Visit Tokyo tower"]
    text, looped = cut_repeats("a\nb\nb\nb\nc")
    assert (text, looped) == ("a\nb\nc", True)
    assert cut_repeats("a\nb\nb\nc") == ("a\nb\nb\nc", False)


def test_pretty_printed_json_keeps_all_its_parts() -> None:
    # a json_schema answer from llama.cpp's server: braces and repeated facts on lines of their
    # own; cutting "repeated lines" out of it left one usable part (a real run's failure)
    parts = [("Tokyo: Landmarks", 5), ("Kyoto: Temples", 4), ("Nara: Deer Park", 1), ("Osaka: Food", 4)]
    body = ",\n".join(
        f'    {{\n      "days": {d if i < 2 else 1},\n'
        f'      "detail": "see {t}",\n      "title": "{t}"\n    }}'
        for i, (t, d) in enumerate(parts)
    )
    got = parse('{"parts": [\n' + body + "\n  ]}", fact_fields=["days"])
    assert titles(got) == [t for t, _ in parts]
    assert [c.facts["days"] for c in got] == [5, 4, 1, 1]
    assert cut_repeats("{\n  a\n},\n{\n  b\n},\n{\n  c\n}") == (
        "{\n  a\n},\n{\n  b\n},\n{\n  c\n}",
        False,
    )


def test_long_titles_and_details_are_trimmed_at_word_boundaries() -> None:
    long_title = " ".join(["Kyoto"] + ["temple"] * 30)
    got = parse(f"- {long_title}\n- Osaka: " + "food " * 200)
    assert len(got[0].title) <= 80
    assert got[0].title.endswith("temple")
    assert len(got[1].detail) <= 400
    assert got[1].detail.endswith("food")
    assert trim_words("alpha beta gamma", 12) == "alpha beta"


def test_leaves_flag_is_set_when_asked() -> None:
    got = parse("- Book Kyoto ryokan\n- Buy JR Pass", leaves=True)
    assert all(c.leaf for c in got)
    assert got[0].to_json() == {"title": "Book Kyoto ryokan", "detail": "", "leaf": True, "facts": {}}


def test_fact_extraction_forms() -> None:
    assert extract_facts("Tokyo (days: 4)", ["days"]) == ("Tokyo", {"days": 4})
    assert extract_facts("Tokyo; days = 3", ["days"]) == ("Tokyo", {"days": 3})
    assert extract_facts("Tokyo (days: 2); Nikko (days: 1)", ["days"]) == ("Tokyo; Nikko", {"days": 3})
    assert extract_facts("Spend 3 days in Kyoto", ["days"]) == ("Spend 3 days in Kyoto", {"days": 3})
    # two bare numbers are ambiguous: no fact
    assert extract_facts("3 days or 4 days", ["days"]) == ("3 days or 4 days", {})
    # unrelated "x: 5" stays in the text
    assert extract_facts("Room: 5 people", ["days"]) == ("Room: 5 people", {})


def test_strip_markdown() -> None:
    assert strip_markdown("**Tokyo** and __Kyoto__ with `code` and *it*") == (
        "Tokyo and Kyoto with code and it"
    )


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Score: 72\nReason: fine", 72),
        ("Score: 8/10\nReason: good", 80),
        ("I would rate this 7 out of 10.", 70),
        ("**Score**: 85/100", 85),
        ("90", 90),
    ],
)
def test_scores(text: str, score: int) -> None:
    assert parse_score(text) == score


def test_score_errors() -> None:
    with pytest.raises(OutputError, match=r"no score found"):
        parse_score("It is a good split.")
    with pytest.raises(OutputError, match=r"outside 0\.\.100"):
        parse_score("Score: 450")


def test_execution_output() -> None:
    assert parse_execution("```\n- Book room\n- Pay deposit\n```") == "- Book room\n- Pay deposit"
    assert parse_execution("- a\n" * 50 + "- b") == "- a\n- b"
    with pytest.raises(OutputError, match="the answer was empty"):
        parse_execution("  ```\n```  ")
    assert len(parse_execution("- word\n" + "- other line\n- x\n" * 1000, max_chars=100)) <= 100


def test_an_executor_answer_that_echoes_the_prompts_breadcrumb_keeps_only_its_content() -> None:
    """The execute prompt says "Part of: <goal> > <stage>"; a small model often starts its lines
    with that path (seen in a real japan run: a leaf whose whole result was the path)."""
    goal = "Organize a 200-person technical conference"
    answer = (
        f"- {goal} > Venue > Book the hall - Reserve Hall B at the Messe for 12 May (EUR 4,000)\n"
        f"- {goal} > Venue\n"
        "- Order 220 chairs from the rental firm"
    )
    assert parse_execution(answer, goal=goal) == (
        "- Reserve Hall B at the Messe for 12 May (EUR 4,000)\n- Order 220 chairs from the rental firm"
    )
    with pytest.raises(OutputError, match="empty"):
        parse_execution(f"{goal} > Venue > Book the hall", goal=goal)
    # a code block inside the answer keeps both fences (seen in a todo-cli run: the closing
    # fences were dropped as lines without a word, and the spec's code ran into the next items)
    code = "- **Usage**:\n  ```sh\n  todo mark <id> done\n  ```\n- **Errors**: an unknown id exits 2"
    assert parse_execution(code, goal=goal) == code
    # and so does every block of a longer answer: a fence repeated once per block is no loop
    blocks = "\n".join(f"- **{c}**:\n  ```sh\n  todo {c} 1\n  ```" for c in ("add", "done", "rm", "edit"))
    assert parse_execution(blocks, goal=goal) == blocks
    # a line that merely names the goal, without the path, stays
    assert parse_execution(f"- {goal}: keep the budget sheet current", goal=goal).endswith("current")


def test_the_answer_formats_placeholder_is_no_part() -> None:
    # seen with the embedded model: the format line "- Short title: one sentence of concrete
    # detail" written back as parts beside real ones
    text = "- Short title: one sentence of concrete detail\n- Concrete detail\n"
    text += "- Sync engine: merge\n- Storage: file"
    with pytest.raises(OutputError, match="echoes the answer format"):
        parse_children(text, min_children=3, max_children=5)
    assert [c.title for c in parse_children(text, min_children=2, max_children=5)] == [
        "Sync engine",
        "Storage",
    ]


def test_parts_written_as_labelled_fields_are_read_as_parts() -> None:
    # seen with the embedded model on a conference spec: the format line's words used as the
    # labels of each part's fields, one line per field; read as "the model gave no usable
    # answer" (every title "Short title") three times over for one node
    text = (
        "- Short title: Confirm speaker attendance for all invited speakers\n"
        "- Sentence of concrete detail: Review the list of invited speakers.\n"
        "- Weeks: 1; This task is directly related to the overall goal.\n\n"
        "- Short title: Review speaker availability\n"
        "- Sentence of concrete detail: Check each speaker's dates by email.\n"
        "- Weeks: 2\n\n"
        "- Short title: Book speaker travel\n"
        "- Concrete detail: Flights and two hotel nights per speaker.\n"
        "- Sentence of concrete detail: Economy class.\n"
        "- Weeks: 1; Travel is booked once the dates are confirmed.\n\n"
        "- Short title:\n"
    )
    children = parse_children(
        text, min_children=2, max_children=5, parent_title="Confirm speaker attendance", fact_fields=["weeks"]
    )
    assert [(c.title, c.detail, c.facts) for c in children] == [
        ("Review speaker availability", "Check each speaker's dates by email.", {"weeks": 2}),
        ("Book speaker travel", "Flights and two hotel nights per speaker.", {"weeks": 1}),
    ]
    # without a labelled title, a line stating a fact stays what it was
    plain = "- Venue: book the hall (weeks: 2)\n- Catering: order lunch (weeks: 1)"
    facts = [c.facts for c in parse_children(plain, min_children=2, max_children=5, fact_fields=["weeks"])]
    assert facts == [{"weeks": 2}, {"weeks": 1}]


def test_a_numbered_task_label_gives_way_to_its_text() -> None:
    text = "- **Task 1:** Identify the devices that sync.\n- **Task 2:** Pick the folder sync tool."
    titles = [c.title for c in parse_children(text, min_children=2, max_children=5)]
    assert titles == ["Identify the devices that sync", "Pick the folder sync tool"]


def test_a_note_to_the_writer_in_front_of_a_title_goes() -> None:
    # seen with the embedded model on a software spec: siblings "Describe how to list all
    # tasks" / "Describe how to view tasks with specific tags" / "Provide instructions on how
    # to delete tasks" -- the heading of each part is what follows "how to"
    text = """\
        - Describe how to list all tasks: with or without completed ones
        - Provide instructions on how to delete tasks
        - Specify how a user can mark a task as complete
        - Describe the data model: fields of a task
        - Explain how to
        """
    assert titles(parse(text, parent_title="CLI", goal="Write a spec")) == [
        "List all tasks",
        "Delete tasks",
        "Mark a task as complete",
        "Describe the data model",
        "Explain how to",
    ]
    assert parse(text, parent_title="CLI", goal="Write a spec")[0].detail == "with or without completed ones"


@pytest.mark.parametrize(
    "title",
    ["Visit Kyoto", "How to pack for Hokkaido", "Explain pricing", "Show times in Osaka", "Describe"],
)
def test_titles_without_a_note_to_the_writer_are_kept(title: str) -> None:
    assert bare_title(title) == title


def test_a_title_written_as_a_path_from_the_goal_is_its_last_step() -> None:
    path = "Train for a first half marathon in twelve weeks > Weekly long runs (3 weeks)"
    assert bare_title(path) == "Weekly long runs (3 weeks)"
    assert bare_title("Tokyo > Describe how to ride the metro") == "Ride the metro"
    assert bare_title("Compare A>B pricing") == "Compare A>B pricing"


def test_a_full_width_colon_ends_the_title() -> None:
    got = parse(
        """\
        - 第一天：东京，浅草寺和上野公园
        - 第二天：京都。
          参观金阁寺。
        - 装备采购；根据预算购买咖啡机
        - 設計と改装：
        """,
        parent_title="日本旅行",
        goal="日本旅行",
    )
    assert got == [
        Child("第一天", "东京，浅草寺和上野公园"),
        Child("第二天", "京都。 参观金阁寺。"),
        Child("装备采购", "根据预算购买咖啡机"),
        Child("設計と改装"),
    ]


def test_a_doubled_list_marker_is_written_once() -> None:
    answer = (
        "- - As you ascend, stop at Tsumami Falls\n  * - Lunch in Fujiyoshida, 1,200 JPY\n"
        "- **Usage**: todo add"
    )
    assert parse_execution(answer) == (
        "- As you ascend, stop at Tsumami Falls\n  - Lunch in Fujiyoshida, 1,200 JPY\n- **Usage**: todo add"
    )
