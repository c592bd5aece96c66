"""Tests of bench/content_metrics.py: each content metric on a small hand-made tree, the figure
worked out by hand in the comments (Latin, Devanagari and Japanese text), then the recorded
japan run through bench/rescore.py.

    python -m pytest -q tests/test_content_metrics.py -p no:cacheprovider
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import content_metrics as cm  # noqa: E402
import quality as q  # noqa: E402
from quality_metrics import Score, from_nested, from_outline, score_table  # noqa: E402

JAPAN_RUN = Path(__file__).resolve().parent / "fixtures" / "japan-real-2c5e150.jsonl"
DAYS = ({"kind": "sum", "field": "days", "total": 3, "applies_to": "root"},)


def test_leaf_characters_count_wide_characters_twice() -> None:
    tree = from_nested(
        (
            "Plan a trip",
            [
                ("Tokyo", "- " + "a" * 150 + "\n\n- " + "b" * 60),  # 150 + 60 = 210
                ("Kyoto", "1. " + "c" * 199),  # 199: one short of 200
                ("Osaka", "- 東京で3日間"),  # 5 wide characters x 2 + one digit = 11
                "Nara",  # no result: 0
                ("Nikko", "- " + "d" * 100 + "\n- " + "e" * 100),  # 200: not under 200
            ],
        )
    )
    assert cm.leaf_chars(tree.nodes["1"]) == 210
    assert cm.leaf_chars(tree.nodes["3"]) == 11
    shortest = cm.leaf_chars_min(tree)
    assert shortest.value == 0 and [o.nodes for o in shortest.items] == [("4",)]
    under = cm.leaves_under(tree)
    assert under.value == 3 and [o.nodes[0] for o in under.items] == ["2", "3", "4"]


def test_concrete_lines_by_the_concrete_lens_rule() -> None:
    tree = from_nested(
        (
            "Plan a trip",
            [
                # a digit; 4 new words (kinkaku, ji, at, dawn); only "of" is new: 2 of 3
                ("Visit Kyoto temples", "- Open at 9\n- Kinkaku-ji at dawn\n- Temples of Kyoto"),
                # a Devanagari digit; a 14-letter run with no space counts 14 // 6 = 2 words;
                # a line that repeats its title: 2 of 3
                ("मंदिर", "- सुबह ७ बजे\n- 清水寺の舞台から京都を眺める日\n- मंदिर"),
                # the leaf's own detail is what it already says: 0 of 1
                {"title": "Walk", "detail": "along the river", "result": "- Walk along the river"},
                ("Rest", "- Tea at Ippodo\n- Dinner in Pontocho\n- Sleep 8 hours"),  # 3 of 3
            ],
        )
    )
    assert cm.concrete_counts(tree) == [2, 2, 0, 3]
    median = cm.concrete_lines_median(tree)
    assert median.value == 2.0  # the median of 0, 2, 2, 3
    assert [o.nodes for o in median.items] == [("3",)]  # the one leaf below it


def test_a_line_two_leaves_share_is_repeated_but_not_one_leaf_repeating_itself() -> None:
    same = "Take the Shinkansen from Tokyo to Kyoto at 9:00"
    hindi = "दिल्ली से आगरा तक ट्रेन लें"
    tree = from_nested(
        (
            "Plan a trip",
            [
                ("Tokyo", f"- {same}\n- Walk through Asakusa and Senso-ji\n- {hindi}"),
                ("Kyoto", f"- {same.lower()}.\n- Rent a bicycle along the Kamo river"),
                ("Osaka", "- Buy a Suica card\n- Buy a Suica card"),  # twice in one leaf
                ("Agra", f"* {hindi}"),
            ],
        )
    )
    repeated = cm.repeated_across_leaves(tree)
    assert repeated.value == 2
    assert sorted(o.nodes for o in repeated.items) == [("1", "2"), ("1", "4")]
    assert "Shinkansen" in str(repeated.items[0]) and "(1.00)" in str(repeated.items[0])


def test_a_name_a_later_leaf_names_again_counts_once_per_leaf() -> None:
    tree = from_nested(
        (
            "Plan a trip to Japan",
            [
                ("Tokyo", "- 07:00 the Sensoji Temple gate\n- Lunch in Asakusa at a soba shop"),
                ("Kyoto", "- 09:00 Kinkakuji pond\n- Evening in Gion, 3,000 JPY dinner"),
                ("Design", "- Sensoji Temple's wooden gate again\n- Kinkakuji and the Sensoji roofs"),
            ],
        )
    )
    again = cm.named_again(tree)
    # Design names Sensoji (first in Tokyo) and Kinkakuji (first in Kyoto), each once; "JPY"
    # is in capitals throughout, "Japan" the goal's own word
    assert again.value == 2
    assert sorted(o.nodes for o in again.items) == [("1", "3"), ("2", "3")]
    assert "'Sensoji Temple', named in 'Tokyo'" in str(again.items[0])


def test_language_share_counts_letters_of_the_goals_script() -> None:
    # Devanagari goal; consonants only, so every character is a letter (vowel signs are marks):
    # titles सफर 3 + नगर 3, result कमल 3 + Tokyo 5 Latin: 9 of 14
    hindi = from_nested(("सफर", [("नगर", "- कमल Tokyo 3")]))
    share = cm.language_share(hindi)
    assert (share.count, share.total) == (9, 14)
    assert "LATIN 5" in str(share.items[0])
    # Latin goal, Latin plan (accents too): 9 + 4 + 11 letters, all of them
    english = from_nested(("Plan a trip", [("Café", "- Visit Zürich")]))
    assert cm.language_share(english).show() == "1.00 (24/24)"
    # Japanese writes Han and kana: one script; a goal without letters has none to keep to
    japanese = from_nested(("日本の旅", [("東京タワー", "- ひるごはん")]))
    assert cm.language_share(japanese).value == 1.0
    assert cm.language_share(english, goal="2024").total == 0


def test_schedule_from_the_trees_facts() -> None:
    fits = from_nested(
        ("Trip", [{"title": "Tokyo", "facts": {"days": 2}}, {"title": "Kyoto", "facts": {"days": 1}}])
    )
    assert cm.has_schedule(fits, DAYS).show() == "1.00 (1/1)" and not cm.has_schedule(fits, DAYS).items
    # days read from titles count as facts (every converter reads them), and parts that do not
    # add up still give a schedule, with a note naming the split
    off = from_nested(("Trip", ["Tokyo (2 days)", ("Kyoto (2 days)", ["Temples (1 day)", "Gion (3 days)"])]))
    score = cm.has_schedule(off, DAYS)
    assert (score.count, score.total) == (1, 1)
    assert [str(o) for o in score.items] == [
        "root: days: the parts of 'Trip' add up to 4, not 3",
        "2: days: the parts of 'Kyoto (2 days)' add up to 4, not 2",
    ]
    none = from_nested(("Trip", ["Tokyo", "Kyoto"]))
    assert cm.has_schedule(none, DAYS).show() == "0.00 (0/1)"
    assert cm.has_schedule(none, ()).show() == "n/a (0/0)"


def test_summarised_split_nodes() -> None:
    tree = from_nested(
        {
            "title": "Trip",
            "summary": "Five days in Tokyo, then Kyoto.",
            "children": [("Tokyo", ["Asakusa", "Shibuya"]), "Kyoto"],
        }
    )
    assert cm.summarised(tree).show() == "0.50 (1/2)"
    # prose under an outline's heading is the node's detail, not a summary
    outline = from_outline(
        "Trip", "## Tokyo\nFive busy days.\n- Asakusa\n  - Senso-ji at 7\n## Kyoto\n- Gion"
    )
    assert outline.nodes["1"].detail == "Five busy days." and cm.summarised(outline).count == 0


def test_every_metric_in_the_table_and_pooled_over_goals() -> None:
    a = from_nested(("Trip", [("Tokyo", "- Senso-ji at 7\n- " + "x" * 250), ("Kyoto", "- Gion")]))
    b = from_nested(("Trip", [("Nara", "- Deer park at 10\n- Todai-ji at 11\n- Kofuku-ji at 12")]))
    scores = cm.evaluate_content(a, DAYS)
    assert list(scores) == list(cm.CONTENT_METRICS)
    # Tokyo: a digit line and a 250-letter word (250 // 6 = 41 new words): 2; Kyoto: "Gion" is
    # one new word: 0; the median of 2 and 0 is 1
    table = score_table([("swarm", scores)], q.LABELS)
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in table.splitlines()[2:])
    assert list(rows) == list(cm.CONTENT_METRICS.values())
    assert rows[cm.CONTENT_METRICS["concrete_lines_median"]] == "1.00"
    # over both goals: leaves 2, 0 and 3 -> 2; the shortest leaf is the least of both
    assert cm.pooled_concrete_median([a, b]).value == 2.0
    assert q._pooled([Score(4), Score(40)], "leaf_chars_min") == Score(4)
    assert math.isnan(cm.pooled_concrete_median([]).value)


def test_the_recorded_japan_run_through_rescore() -> None:
    import rescore

    from specswarm.plan import fold
    from specswarm.protocol.events import read_event_log

    plan = fold(read_event_log(JAPAN_RUN).events)
    lines = rescore.content(plan, details=True)
    assert lines[0] == f"{cm.CONTENT_METRICS['leaf_chars_min']}: 222"
    # "Hike Mount Fuji" was planned in three branches: their results say the same things
    fuji = [line for line in lines if "'Hike Mount Fuji':" in line and "'Hike Mount Fuji (2 days)':" in line]
    assert fuji, "\n".join(lines)
    assert f"{cm.CONTENT_METRICS['summarised']}: 0.00 (0/5)" in lines


@pytest.mark.parametrize(
    ("ch", "script"), [("a", "LATIN"), ("Ａ", "LATIN"), ("क", "DEVANAGARI"), ("ー", "CJK")]
)
def test_letter_script(ch: str, script: str) -> None:
    from specswarm.spec.language import letter_script

    assert letter_script(ch) == script
