"""Tests of bench/quality_metrics.py: every metric gives an exact value on a hand-built tree.

Trees come from several domains (trips, software, weddings, conferences, research) so that no
metric passes only on the one goal it was written against. The last tests fold the recorded
real run (``tests/fixtures/japan-real-2c5e150.jsonl``: ``specswarm plan goals/japan.yaml`` with the
embedded model at commit 2c5e150) and pin what the plan-quality
issue describes.

    python -m pytest -q tests/test_quality_metrics.py -p no:cacheprovider
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import quality_metrics as qm  # noqa: E402
from quality_metrics import (  # noqa: E402
    QTree,
    evaluate,
    from_nested,
    from_outline,
    score_table,
    title_facts,
)

JAPAN_RUN = Path(__file__).resolve().parent / "fixtures" / "japan-real-2c5e150.jsonl"

JAPAN_CONSTRAINTS = (
    {"kind": "sum", "field": "days", "total": 14, "applies_to": "root"},
    {"kind": "mention", "terms": ("Tokyo", "Kyoto"), "applies_to": "root"},
    {"kind": "forbid", "terms": ("cruise",), "applies_to": "all"},
)


def pairs(score: qm.Score) -> set[frozenset[str]]:
    return {frozenset(item.nodes) for item in score.items}


def nodes_of(score: qm.Score) -> list[str]:
    return [item.nodes[0] for item in score.items]


def shape(tree: QTree) -> list[tuple[str, str | None, str]]:
    return [(n.id, n.parent, n.title) for n in tree.walk()]


# --------------------------------------------------------------------------- facts in titles


@pytest.mark.parametrize(
    ("title", "facts"),
    [
        ("Visit Kyoto (4 days)", {"days": 4}),
        ("Plan a 3-day trip to Kyoto", {"days": 3}),
        ("Plan a two-week trip to Japan", {"days": 14}),
        ("Half-day in Nara", {"days": 0.5}),
        ("Plan a day trip to Kyoto (3 days)", {"days": 3}),  # the parenthesised duration wins
        ("Kansai (Days 3-5)", {"days": 3}),
        ("Day 4: Hakone", {"days": 1}),
        ("Osaka (2-3 days)", {}),  # a range states no number
        ("Keynote (30 minutes)", {"hours": 0.5}),
        ("Workshop (1.5 hours)", {"hours": 1.5}),
        ("3 nights in Osaka", {"nights": 3}),
        ("Send invitations (2 months)", {"months": 2}),
        ("Backend (two sprints)", {"sprints": 2}),
        ("Visit 5 temples", {}),  # a count of things is not a duration
        ("Week 1", {}),
    ],
)
def test_title_facts(title: str, facts: dict[str, float]) -> None:
    assert title_facts(title) == facts


def test_declared_facts_win_over_the_title() -> None:
    tree = from_nested({"title": "Tokyo (5 days)", "facts": {"days": 4}})
    assert tree.nodes["root"].facts == {"days": 4}
    assert from_nested("Tokyo (5 days)", read_titles=False).nodes["root"].facts == {}


# --------------------------------------------------------------------------- near-duplicates


def test_near_duplicates_across_branches_are_found() -> None:
    tree = from_nested(
        (
            "Plan a 10-day trip to Japan",
            [
                ("Tokyo (4 days)", ["Hike Mount Fuji", "Tsukiji fish market", "Senso-ji temple"]),
                ("Kyoto (3 days)", ["Fushimi Inari shrine", "Hike Mount Fuji (1 day)"]),
                ("Hike Mount Fuji (3 days)", ["Ascend the summit of Mount Fuji", "Return to Tokyo"]),
            ],
        )
    )
    score = qm.near_duplicates(tree)
    assert score.value == 3
    assert pairs(score) == {frozenset(p) for p in [("1.1", "2.2"), ("1.1", "3"), ("2.2", "3")]}
    # "Ascend the summit of Mount Fuji" refines "Hike Mount Fuji": 2 shared of 5 terms
    assert all("3.1" not in p for p in pairs(score))


def test_ancestor_and_descendant_are_not_a_near_duplicate_pair_but_a_repeat() -> None:
    tree = from_nested(
        (
            "Plan a wedding",
            [
                ("Book the venue", ["Book the venue", "Sign the venue contract"]),
                ("Catering", ["Taste menus", "Choose the caterer"]),
            ],
        )
    )
    assert qm.near_duplicates(tree).value == 0
    repeats = qm.ancestor_repeats(tree)
    assert repeats.value == 1
    assert [item.nodes for item in repeats.items] == [("1.1", "1")]


def test_a_part_of_a_parent_is_no_repeat_but_a_restatement_with_an_acronym_is() -> None:
    # from a real todo-cli run: "Error Handling" takes one of its parent's two parts, while
    # "Command Line Interface (CLI) Specification" says its parent again
    tree = from_nested(
        (
            "Write a specification for a todo app",
            [
                ("Error Handling and Logging", ["Error Handling", "Log rotation"]),
                ("Command Line Interface", ["Command Line Interface (CLI) Specification", "Flags"]),
            ],
        )
    )
    repeats = qm.ancestor_repeats(tree)
    assert [item.nodes for item in repeats.items] == [("2.1", "2")]
    assert qm.content_terms("Command Line Interface (CLI)") == qm.content_terms("command line interface")
    assert "nyc" in qm.content_terms("Hotels (NYC)")


def test_boilerplate_is_not_content() -> None:
    # "conference" is in every title: it tells no two nodes apart
    tree = from_nested(
        (
            "Organise the conference",
            [
                ("Conference venue", ["Conference hall booking", "Conference catering"]),
                ("Conference programme", ["Conference keynote speakers", "Conference workshops"]),
            ],
        )
    )
    assert qm.boilerplate(tree) == {"conference"}
    assert qm.near_duplicates(tree).value == 0
    assert qm.sibling_overlap(tree).value == 0.0


def test_two_tasks_on_one_subject_are_not_near_duplicates() -> None:
    tree = from_nested(
        (
            "Build a todo app",
            [
                (
                    "Backend",
                    [
                        "Design the user authentication API",
                        "Implement the user authentication API",
                        "Write database migrations",
                    ],
                ),
                ("Frontend", ["Login screen", "Task list view"]),
            ],
        )
    )
    assert qm.near_duplicates(tree).value == 0  # 3 shared of 5 terms: 0.6 < 2/3
    overlap = qm.sibling_overlap(tree)
    assert overlap.value == pytest.approx(0.6)
    assert pairs(overlap) == {frozenset({"1.1", "1.2"})}


# --------------------------------------------------------------------------- sibling overlap


def test_template_siblings_do_not_overlap() -> None:
    cities = ["Plan a 3-day trip to Tokyo", "Plan a 3-day trip to Kyoto", "Plan a 3-day trip to Osaka"]
    flat = from_nested(("Plan a 9-day trip to Japan", cities))
    assert qm.sibling_overlap(flat).value == 0.0
    assert qm.near_duplicates(flat).value == 0
    # with leaves under each city "trip" is no longer in most titles; still no overlap
    deep = from_nested(
        (
            "Plan a 9-day trip to Japan",
            [(c, [f"Day {d}: sights" for d in range(1, 4)]) for c in cities],
        )
    )
    assert "trip" not in qm.boilerplate(deep)
    assert qm.sibling_overlap(deep).value == 0.0
    assert qm.near_duplicates(deep).value == 0
    # neither the root nor most titles say "trip": the three siblings' shared word is their template
    holiday = from_nested(("Japan holiday", [(c, ["Morning sights", "Evening food"]) for c in cities]))
    assert not {"trip"} & (qm.boilerplate(holiday) | qm.content_terms("Japan holiday"))
    assert qm.sibling_overlap(holiday).value == 0.0


def test_two_siblings_sharing_a_word_overlap() -> None:
    # two siblings cannot show a template: a shared content word counts
    tree = from_nested(("Japan holiday", ["Trip to Tokyo", "Trip to Kyoto"]))
    assert qm.sibling_overlap(tree).value == pytest.approx(1 / 3)


def test_siblings_inherit_their_parents_terms() -> None:
    tree = from_nested(
        (
            "Write a research plan",
            [
                ("Survey study", ["Survey design and sampling", "Survey pilot with students"]),
                ("Interviews", ["Recruit participants", "Transcribe recordings"]),
            ],
        )
    )
    # "survey" is the parent's subject, not an overlap of its children
    assert qm.sibling_overlap(tree).value == 0.0


# --------------------------------------------------------------------------- nested facts


def test_days_not_adding_up_are_found() -> None:
    tree = from_nested(
        (
            "Plan a 10-day trip",
            [
                ("Tokyo (4 days)", ["Asakusa (2 days)", "Shibuya (1 day)"]),  # 3 != 4
                ("Kyoto (3 days)", ["Temples", "Gardens"]),  # children declare no days
                ("Osaka (3 days)", "- Dotonbori at 7 PM"),  # a leaf: no split to check
            ],
        )
    )
    score = qm.fact_consistency(tree)
    assert (score.value, score.count, score.total) == (pytest.approx(1 / 3), 1, 3)
    assert nodes_of(score) == ["1", "2"]
    assert "4 != 2+1 = 3" in score.items[0].note
    assert "2 of 2 children declare none" in score.items[1].note


def test_minutes_add_up_to_hours() -> None:
    tree = from_nested(
        (
            "Run the conference programme",
            [
                ("Morning block (3 hours)", ["Keynote (60 minutes)", "Talks (90 minutes)", "Break (30 min)"]),
                ("Afternoon block (4 hours)", ["Workshops (2 hours)", "Panel (1 hour)", "Closing (1 hour)"]),
            ],
        )
    )
    score = qm.fact_consistency(tree)
    assert (score.value, score.count, score.total, score.items) == (1.0, 2, 2, ())


def test_months_that_overrun() -> None:
    tree = from_nested(
        (
            "Plan a wedding in 6 months",
            ["Venue and date (2 months)", "Guests and invitations (3 months)", "Final details (2 months)"],
        )
    )
    score = qm.fact_consistency(tree)
    assert (score.value, score.count, score.total) == (0.0, 0, 1)
    assert "months 6 != 2+3+2 = 7" in score.items[0].note


def test_a_declared_sum_is_what_the_root_split_divides() -> None:
    # "a one-day conference" prepared over 26 weeks: the title's day is the event, the spec's
    # sum says the split shares 26 weeks (read from a real conference run, where the metric
    # counted a consistent root split as inconsistent)
    tree = from_nested(
        (
            "Organize a one-day technical conference",
            [{"title": "Venue", "facts": {"weeks": 10}}, {"title": "Speakers", "facts": {"weeks": 16}}],
        )
    )
    assert qm.fact_consistency(tree).count == 0  # the title's "one-day" alone: days 1 != ?+?
    weeks = {"kind": "sum", "field": "weeks", "total": 26, "applies_to": "root"}
    assert qm.fact_consistency(tree, [weeks]).show() == "1.00 (1/1)"
    short = {**weeks, "total": 30}
    assert "weeks 30 != 10+16" in qm.fact_consistency(tree, [short]).items[0].note


def test_no_numeric_fact_no_split_to_judge() -> None:
    score = qm.fact_consistency(from_nested(("Write a spec", ["Scope", "Design"])))
    assert score.total == 0
    assert score.show() == "n/a (0/0)"


# --------------------------------------------------------------------------- constraints


def test_declared_constraints() -> None:
    tree = from_nested(
        (
            "Plan a two-week trip to Japan",
            [
                ("Tokyo (7 days)", ["Shibuya", ("Odaiba", "- Take a river cruise at 5 PM")]),
                ("Osaka (7 days)", ["Dotonbori", "Osaka castle"]),
            ],
        )
    )
    score = qm.constraints_met(tree, JAPAN_CONSTRAINTS)
    assert (score.count, score.total) == (1, 3)  # sum holds; Kyoto never named; a cruise in a result
    notes = [str(item) for item in score.items]
    assert notes == ["root: mention: children never name ['Kyoto']", "1.2: forbid: names ['cruise']"]


def test_constraints_as_objects_and_every_split() -> None:
    tree = from_nested(
        (
            "Write a research plan",
            [
                ("Literature review", ["Search databases", "Summarise the method"]),
                ("Experiments", ["Pilot", "Main study"]),
            ],
        )
    )
    every = SimpleNamespace(kind="mention", field=None, total=None, terms=("method",), applies_to="all")
    root_sum = SimpleNamespace(kind="sum", field="weeks", total=12, terms=(), applies_to="root")
    score = qm.constraints_met(tree, [every, root_sum])
    assert (score.count, score.total) == (0, 2)
    assert [item.nodes for item in score.items] == [("root",), ("2",), ("root",)]
    assert qm.constraints_met(tree, []).show() == "n/a (0/0)"


# --------------------------------------------------------------------------- results


def test_sibling_leaves_with_the_same_result() -> None:
    same = "Draft the announcement text and send it to journalists on Monday."
    tree = from_nested(
        (
            "Plan a product launch",
            [
                (
                    "Marketing",
                    [
                        ("Write the press release", same),
                        ("Prepare the press kit", same.replace("Monday", "Tuesday")),
                        ("Social media", "Schedule three posts per channel for launch week."),
                    ],
                ),
                ("Sales", [("Brief the sales team", same), ("Update the price list", "Prices go up 5%.")]),
            ],
        )
    )
    score = qm.result_repeats(tree)
    assert score.value == 1  # the copy under Sales has another parent
    assert pairs(score) == {frozenset({"1.1", "1.2"})}
    assert qm.jaccard(qm.shingles(same), qm.shingles(same.replace("Monday", "Tuesday"))) == 0.8


def test_leaf_specificity() -> None:
    tree = from_nested(
        (
            "Plan the day",
            [
                (
                    "Tokyo",
                    "- Visit Senso-ji at 9 AM\n- Walk around\n- Lunch at Tsukiji\n- Relax and enjoy it",
                ),
                ("Wedding", "- Book Venue And Caterer\n\n- Call the florist\n  ```\n---"),
            ],
        )
    )
    score = qm.leaf_specificity(tree)
    # markup with no word (a code fence's closing line, a rule) is no result line
    assert (score.count, score.total) == (2, 6)
    assert score.value == pytest.approx(1 / 3)
    assert [item.note for item in score.items] == [
        "- Walk around",
        "- Relax and enjoy it",
        "- Book Venue And Caterer",  # Title Case: capitals are no names
        "- Call the florist",
    ]


def test_a_line_opening_with_a_name_the_tree_uses_is_specific() -> None:
    tree = from_nested(
        (
            "Plan an evening in Tokyo",
            [("Dinner", "- Ramen near Shibuya"), ("Night", "- Shibuya at night\n- Karaoke\n- Walk back")],
        )
    )
    assert {"Shibuya", "Tokyo"} <= qm.known_names(tree)
    assert not qm.is_specific("- Shibuya at night")  # a capital opening a line proves nothing...
    assert qm.is_specific("- Shibuya at night", qm.known_names(tree))  # ...unless the tree names it
    score = qm.leaf_specificity(tree)
    assert (score.count, score.total) == (2, 4)
    assert [item.note for item in score.items] == ["- Karaoke", "- Walk back"]


def test_counts() -> None:
    tree = from_nested(("Goal", [("A", ["A1", ("A2", ["A2x", "A2y"])]), "B"]))
    scores = evaluate(tree)
    assert (scores["nodes"].value, scores["leaves"].value, scores["depth"].value) == (7, 4, 3)
    assert evaluate(from_nested("Goal"))["depth"].value == 0


# --------------------------------------------------------------------------- outlines


ONE_SHOT_JAPAN = """\
Sure! Here is a two-week itinerary for your trip:

## Tokyo (5 days)
- Day 1: Arrive at Narita, check in at a hotel in Shinjuku
- Day 2: Senso-ji and Asakusa
- Day 3: Tsukiji Outer Market, teamLab
- Day 4: Day trip to Hakone
- Day 5: Shibuya and Harajuku

## Kyoto (4 days)
Temples and gardens.
1. Fushimi Inari (1 day)
   - Go at 7 AM to avoid crowds
   - Walk to the summit
2. Arashiyama (1 day)
3. Kinkaku-ji and Ryoan-ji (2 days)

## Hike Mount Fuji (2 days)
- Take the bus from Shinjuku to the 5th Station
- Stay in a mountain hut

## Osaka (3 days)
- Dotonbori street food
- Osaka Castle

Enjoy your trip!
"""


def test_outline_headings_and_nested_bullets() -> None:
    tree = from_outline("Plan a two-week trip to Japan", ONE_SHOT_JAPAN)
    assert shape(tree) == [
        ("root", None, "Plan a two-week trip to Japan"),
        ("1", "root", "Tokyo (5 days)"),
        ("1.1", "1", "Day 1: Arrive at Narita, check in at a hotel in Shinjuku"),
        ("1.2", "1", "Day 2: Senso-ji and Asakusa"),
        ("1.3", "1", "Day 3: Tsukiji Outer Market, teamLab"),
        ("1.4", "1", "Day 4: Day trip to Hakone"),
        ("1.5", "1", "Day 5: Shibuya and Harajuku"),
        ("2", "root", "Kyoto (4 days)"),
        ("2.1", "2", "Fushimi Inari (1 day)"),
        ("2.2", "2", "Arashiyama (1 day)"),
        ("2.3", "2", "Kinkaku-ji and Ryoan-ji (2 days)"),
        ("3", "root", "Hike Mount Fuji (2 days)"),
        ("4", "root", "Osaka (3 days)"),
    ]
    nodes = tree.nodes
    assert nodes["root"].detail == "Sure! Here is a two-week itinerary for your trip"
    assert [nodes[i].facts for i in ("root", "1", "1.1", "2", "2.3", "3")] == [
        {"days": 14},
        {"days": 5},
        {"days": 1},
        {"days": 4},
        {"days": 2},
        {"days": 2},
    ]
    assert nodes["2"].detail == "Temples and gardens."
    assert nodes["2.1"].result == "- Go at 7 AM to avoid crowds\n- Walk to the summit"
    assert nodes["2.2"].result is None and nodes["2.2"].leaf
    # bare one-liners under an item without facts are the lines of a leaf
    assert nodes["3"].leaf
    assert nodes["3"].result == "- Take the bus from Shinjuku to the 5th Station\n- Stay in a mountain hut"
    assert nodes["4"].result == "- Dotonbori street food\n- Osaka Castle\nEnjoy your trip!"
    scores = evaluate(tree, JAPAN_CONSTRAINTS)
    assert scores["fact_consistency"].show() == "1.00 (3/3)"
    assert scores["constraints"].show() == "1.00 (3/3)"
    assert scores["near_duplicates"].value == 0


def test_outline_numbered_items_with_unindented_bullets_in_a_fence() -> None:
    text = """```markdown
1. **Tokyo (5 days)**: neon, food and design
- Shibuya Crossing
- Tsukiji Outer Market
2. **Kyoto (4 days)**
- Fushimi Inari
  * go at 6 AM
  * bring water
- Arashiyama
```"""
    tree = from_outline("Japan", text)
    assert shape(tree) == [
        ("root", None, "Japan"),
        ("1", "root", "Tokyo (5 days)"),
        ("2", "root", "Kyoto (4 days)"),
        ("2.1", "2", "Fushimi Inari"),
        ("2.2", "2", "Arashiyama"),
    ]
    assert tree.nodes["1"].detail == "neon, food and design"
    assert tree.nodes["1"].result == "- Shibuya Crossing\n- Tsukiji Outer Market"
    assert tree.nodes["2.1"].result == "- go at 6 AM\n- bring water"


def test_outline_software_spec_deep_headings() -> None:
    text = """# Todo app specification

## Backend (6 weeks)
### API (4 weeks)
- Authentication (2 weeks)
- Tasks CRUD (2 weeks)
### Storage (2 weeks)
Use PostgreSQL 16 with nightly backups.

## Frontend (4 weeks)
1. Login screen
2. Task list
"""
    tree = from_outline("Build a todo app", text)
    assert shape(tree) == [
        ("root", None, "Build a todo app"),
        ("1", "root", "Backend (6 weeks)"),
        ("1.1", "1", "API (4 weeks)"),
        ("1.1.1", "1.1", "Authentication (2 weeks)"),
        ("1.1.2", "1.1", "Tasks CRUD (2 weeks)"),
        ("1.2", "1", "Storage (2 weeks)"),
        ("2", "root", "Frontend (4 weeks)"),
    ]
    assert tree.nodes["1.2"].result == "Use PostgreSQL 16 with nightly backups."
    assert tree.nodes["2"].result == "- Login screen\n- Task list"
    assert dict(tree.nodes["1"].facts) == {"days": 42}
    score = qm.fact_consistency(tree)
    assert (score.count, score.total) == (2, 2)
    assert qm.depth(tree).value == 3


def test_outline_margin_labels_and_sloppy_indentation() -> None:
    text = """Here is the plan:
Day 1: Venue
- Visit three halls
  - ask about parking
   - ask about the date
- Sign the contract
Day 2: Catering
- Taste menus
"""
    tree = from_outline("Plan a wedding", text)
    assert shape(tree) == [
        ("root", None, "Plan a wedding"),
        ("1", "root", "Day 1: Venue"),
        ("1.1", "1", "Visit three halls"),
        ("1.2", "1", "Sign the contract"),
        ("2", "root", "Day 2: Catering"),
    ]
    assert tree.nodes["root"].detail == "Here is the plan"  # one margin line alone: a preamble
    # indented 2 then 3: a wobble, the same level
    assert tree.nodes["1.1"].result == "- ask about parking\n- ask about the date"
    assert tree.nodes["1.2"].result is None
    assert tree.nodes["2"].result == "- Taste menus"


def test_outline_without_structure_gives_one_item_a_line() -> None:
    tree = from_outline(
        "Research plan", "Month 1: literature review\nMonth 2: pilot study\nMonth 3: write-up"
    )
    assert [n.title for n in tree.kids(tree.nodes["root"])] == [
        "Month 1: literature review",
        "Month 2: pilot study",
        "Month 3: write-up",
    ]
    assert from_outline("Goal", "").nodes.keys() == {"root"}


# --------------------------------------------------------------------------- table, independence


def test_score_table_side_by_side() -> None:
    swarm = from_nested(("Plan a wedding", [("Venue", ["Book the venue", "Visit halls"]), "Book the venue"]))
    one_shot = from_outline("Plan a wedding", "- Venue\n  - book it\n- Catering\n  - taste menus\n")
    table = score_table(
        [
            ("swarm", evaluate(swarm)),
            ("one-shot", evaluate(one_shot)),
            ("single agent", {"nodes": 1, "x": 0.5}),
        ]
    )
    lines = table.splitlines()
    assert lines[0].split() == ["metric", "swarm", "one-shot", "single", "agent"]
    rows = {line[: len(qm.METRICS["near_duplicates"])]: line for line in lines[2:]}
    assert rows[qm.METRICS["near_duplicates"]].split()[-3:] == ["1", "0", "-"]
    assert lines[2].split() == ["nodes", "5", "3", "1"]
    assert lines[-1].split() == ["x", "-", "-", "0.50"]


def test_metrics_do_not_use_the_swarms_critics() -> None:
    source = Path(qm.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert not any("critics" in name for name in imported)
    # only the command line folds event logs; the metrics need nothing from specswarm
    top = [n for n in ast.parse(source).body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert not any("specswarm" in (getattr(n, "module", None) or "") for n in top)


# --------------------------------------------------------------------------- the recorded run


@pytest.fixture(scope="module")
def japan() -> tuple[QTree, tuple[object, ...]]:
    from specswarm.plan import fold
    from specswarm.protocol.events import read_event_log

    log = read_event_log(JAPAN_RUN)
    assert not log.rejected
    plan = fold(log.events)
    assert plan.spec is not None
    return qm.from_plan(plan), tuple(plan.spec.constraints)


def test_recorded_japan_run(japan: tuple[QTree, tuple[object, ...]]) -> None:
    tree, constraints = japan
    scores = evaluate(tree, constraints)
    print()
    print(score_table([("swarm (recorded)", scores)]))
    print(qm.offences({k: scores[k] for k in ("near_duplicates", "fact_consistency", "sibling_overlap")}))

    assert (scores["nodes"].value, scores["leaves"].value, scores["depth"].value) == (21, 16, 2)

    # "Hike Mount Fuji" in three branches: every pair of the three is a near-duplicate
    fuji = [n.id for n in tree.walk() if n.title.startswith("Hike Mount Fuji")]
    assert len(fuji) == 3 and len({tree.nodes[i].parent for i in fuji}) == 3
    dups = scores["near_duplicates"]
    assert dups.value >= 2
    assert {frozenset({a, b}) for a in fuji for b in fuji if a < b} <= pairs(dups)
    assert dups.value == 4  # + "Plan a day trip to Kyoto's traditional gardens and temples" twice

    # the root's days add up (5+4+2+3 = 14); every split below the root does not
    facts = scores["fact_consistency"]
    root_kids = list(tree.nodes["root"].children)
    assert (facts.count, facts.total) == (1, 5)
    assert sorted(nodes_of(facts)) == sorted(root_kids)
    notes = {item.nodes[0]: item.note for item in facts.items}
    kyoto = next(i for i in root_kids if tree.nodes[i].title == "Visit Kyoto (4 days)")
    assert "days 4 != 3+1+1+2 = 7" in notes[kyoto]

    assert scores["constraints"].show() == "1.00 (3/3)"  # the root split meets all three
    assert scores["sibling_overlap"].value == pytest.approx(0.4)
    assert scores["ancestor_repeats"].value == 0
    assert scores["result_repeats"].value == 0
    assert (scores["leaf_specificity"].count, scores["leaf_specificity"].total) == (56, 81)


def test_recorded_run_beside_a_one_shot_outline(japan: tuple[QTree, tuple[object, ...]]) -> None:
    swarm, constraints = japan
    one_shot = from_outline("Plan a two-week trip to Japan", ONE_SHOT_JAPAN)
    table = score_table(
        [("swarm", evaluate(swarm, constraints)), ("one-shot", evaluate(one_shot, constraints))]
    )
    print()
    print(table)
    near = next(line for line in table.splitlines() if line.startswith(qm.METRICS["near_duplicates"]))
    assert near.split()[-2:] == ["4", "0"]


def test_the_same_title_repeated_among_siblings_is_a_duplicate_not_boilerplate() -> None:
    """A one-shot answer listed "Define the scope" three times under one parent: "scope" was in
    most titles, so it was taken for the tree's boilerplate and the three copies scored 0 overlap
    and 0 near-duplicates. Siblings with the same title count once towards boilerplate, and
    copies of one title are no template."""
    tree = from_nested(
        ("Write a software specification", ["Write the specification", *["Define the scope"] * 3])
    )
    assert "scope" not in qm.boilerplate(tree)
    assert qm.near_duplicates(tree).value == 3
    assert qm.sibling_overlap(tree).value == 1.0
    only = from_nested(("Write a software specification", ["Define the scope"] * 3))
    assert qm.sibling_overlap(only).value == 1.0
