"""The schedule (specswarm/plan/schedule.py): each part's range of the fact the spec's ``sum``
constraints add up, laid out from the facts in tree order, and how the exports show it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from specswarm.plan.fold import Plan, child_id, fold
from specswarm.plan.schedule import Note, Span, schedules, span_of
from specswarm.protocol.events import read_event_log
from specswarm.render import render_plan
from specswarm.testing.synth import Swarm, minimal_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"

Facts = Sequence[Mapping[str, int | str]]


def sum_of(field: str, total: float, applies_to: str = "root") -> dict[str, Any]:
    return {"kind": "sum", "field": field, "total": total, "applies_to": applies_to}


def swarm(*constraints: dict[str, Any]) -> Swarm:
    tree = {"max_depth": 3, "min_children": 1, "max_children": 6}
    return Swarm(spec=minimal_spec(constraints=list(constraints), tree=tree), seed=7)


def split(sw: Swarm, node: str, parts: Mapping[str, Mapping[str, int | str]], leaf: bool = False) -> str:
    """Accept a split of ``node`` into ``parts`` (title -> facts); the id of its proposal."""
    return sw.accept(node, list(parts), leaf=leaf, facts=list(parts.values())).id


def trip(tokyo: Facts, *, total: float = 9, field: str = "days") -> Plan:
    """Tokyo (5) split into leaves with ``tokyo``'s facts, Kyoto (4) split into 1 + 3, done."""
    sw = swarm(sum_of(field, total))
    root = split(sw, "root", {"Tokyo": {field: 5}, "Kyoto": {field: 4}})
    split(sw, child_id(root, 0), {f"Tokyo part {i + 1}": f for i, f in enumerate(tokyo)}, leaf=True)
    split(sw, child_id(root, 1), {"Gion": {field: 1}, "Arashiyama": {field: 3}}, leaf=True)
    sw.finish_leaves()
    return fold(sw.events)


def ranges(plan: Plan) -> list[tuple[str, int | None, int | None]]:
    (schedule,) = schedules(plan)
    return [(s.number, s.start, s.end) for s in schedule.slots]


def test_parts_take_consecutive_ranges_and_their_parts_subdivide_them() -> None:
    plan = trip([{"days": 2}, {"days": 3}])
    assert ranges(plan) == [
        ("1", 1, 5),
        ("1.1", 1, 2),
        ("1.2", 3, 5),
        ("2", 6, 9),
        ("2.1", 6, 6),
        ("2.2", 7, 9),
    ]
    (schedule,) = schedules(plan)
    assert (schedule.field, schedule.total, schedule.notes) == ("days", 9, ())


def test_three_levels_deep() -> None:
    sw = swarm(sum_of("weeks", 6))
    root = split(sw, "root", {"Build": {"weeks": 4}, "Ship": {"weeks": 2}})
    build = split(sw, child_id(root, 0), {"Core": {"weeks": 3}, "Docs": {"weeks": 1}})
    split(sw, child_id(build, 0), {"Parser": {"weeks": 1}, "Store": {"weeks": 2}}, leaf=True)
    split(sw, child_id(build, 1), {"Guide": {}}, leaf=True)
    split(sw, child_id(root, 1), {"Release": {"weeks": 2}}, leaf=True)
    assert ranges(fold(sw.events)) == [
        ("1", 1, 4),
        ("1.1", 1, 3),
        ("1.1.1", 1, 1),
        ("1.1.2", 2, 3),
        ("1.2", 4, 4),
        ("1.2.1", 4, 4),  # states no weeks: shares its parent's range
        ("2", 5, 6),
        ("2.1", 5, 6),
    ]


def test_parts_without_the_fact_share_the_range_of_their_node() -> None:
    plan = trip([{}, {"city": "Tokyo"}, {}])
    assert ranges(plan)[:4] == [("1", 1, 5), ("1.1", 1, 5), ("1.2", 1, 5), ("1.3", 1, 5)]
    (schedule,) = schedules(plan)
    assert schedule.notes == ()  # none of them states it: nothing is missing
    assert all(s.shared for s in schedule.slots[1:4])


def test_a_leaf_s_span_is_its_range_where_it_has_one_of_its_own() -> None:
    plan = trip([{"days": 2}, {"days": 3}])
    kyoto = plan.nodes[plan.root.children[1]] if plan.root else None
    assert kyoto is not None
    arashiyama = plan.nodes[kyoto.children[1]]
    assert span_of(plan, arashiyama.id) == Span("days", 7, 9, 9)
    assert span_of(plan, kyoto.id) == Span("days", 6, 9, 9)
    assert span_of(plan, "nowhere") is None
    assert Span("days", 7, 9, 9).labels == ["Day 7", "Day 8", "Day 9"]
    assert Span("Stunden", 3, 3, 8).labels == ["Stunden 3"] and Span("weeks", 1, 2, 8).labels[1] == "Week 2"
    assert [Span("days", 1, n, 14).lines for n in (1, 2, 3, 5)] == [6, 3, 2, 2]
    # the plan's language names the units; the prompt's span says nothing more of it
    assert Span("weeks", 2, 3, 8, "第{n}周").labels == ["第2周", "第3周"]
    assert Span("weeks", 2, 3, 8, "第{n}周").to_prompt().keys() == Span("weeks", 2, 3, 8).to_prompt().keys()


def test_the_execute_prompt_asks_for_the_schedule_s_day_labels() -> None:
    from specswarm.model.prompts import render_task_prompt
    from specswarm.resources import template_dir
    from specswarm.spec.prompt_catalogue import sample_contexts

    template = (template_dir() / "prompts" / "execute.j2").read_text()
    rich, sparse = sample_contexts("execute")
    rich["span"] = Span("days", 6, 7, 14).to_prompt()
    _, prompt = render_task_prompt("execute", template, rich)
    assert (
        'days 6 to 7 of 14: write 3 lines for each of its days, each starting with "- Day 6:" or "- Day 7:"'
        in prompt
    )
    _, prompt = render_task_prompt("execute", template, sparse)
    assert "schedule" not in prompt
    shared = trip([{}, {"city": "Tokyo"}, {}])  # states no days: no range of its own
    tokyo = shared.nodes[shared.root.children[0]] if shared.root else None
    assert tokyo is not None and span_of(shared, tokyo.children[0]) is None
    uneven = trip([{"days": 2}, {"days": 2}, {"days": 2}])  # do not add up: no range
    tokyo = uneven.nodes[uneven.root.children[0]] if uneven.root else None
    assert tokyo is not None and span_of(uneven, tokyo.children[0]) is None


def test_the_form_lays_out_the_lines_to_write_unit_by_unit() -> None:
    from specswarm.model.asking import FORM_LINES, form_of

    two = Span("days", 6, 7, 14).to_prompt()
    assert form_of(two) == ["Day 6"] * 3 + ["Day 7"] * 3
    five = form_of(Span("days", 1, 5, 14).to_prompt())  # two each would be 10: shared out in 8
    assert len(five) == FORM_LINES and set(five) == {f"Day {n}" for n in range(1, 6)} and five == sorted(five)
    assert form_of(Span("days", 1, 10, 14).to_prompt()) == [f"Day {n}" for n in range(1, 11)]  # one a unit
    # more lines beside the kept ones go to the units with the fewest ("Day 1" is not "Day 10")
    ten = Span("days", 1, 10, 10).to_prompt()
    assert form_of(two, ["Day 6: Kiyomizu-dera", "Day 6: Gion"], 3) == ["Day 6", "Day 7", "Day 7"]
    assert form_of(ten, [f"Day {n}: x" for n in range(2, 11)], 2) == ["Day 1", "Day 1"]
    assert form_of(None) == form_of(None, ["a"], 3) == []


def test_the_execute_prompt_shows_the_form_of_its_lines() -> None:
    from specswarm.model.asking import form_of
    from specswarm.model.prompts import render_task_prompt
    from specswarm.resources import template_dir
    from specswarm.spec.prompt_catalogue import sample_contexts

    template = (template_dir() / "prompts" / "execute.j2").read_text()
    rich, sparse = sample_contexts("execute")
    span = Span("days", 6, 7, 14).to_prompt()
    whole = {**rich, "span": span, "kept": [], "wanted": 0, "previous": "", "form": form_of(span)}
    _, prompt = render_task_prompt("execute", template, whole)
    rows = "\n".join(["- Day 6: ..."] * 3 + ["- Day 7: ..."] * 3)
    assert f"6 lines, each completed with one concrete item:\n{rows}\n" in prompt
    more = {**whole, "kept": ["Day 6: Kiyomizu-dera"], "wanted": 2, "form": form_of(span, ["Day 6: x"], 2)}
    _, prompt = render_task_prompt("execute", template, more)
    assert "in exactly this form:\n- Day 6: ...\n- Day 7: ...\n" in prompt and "6 lines" not in prompt
    _, prompt = render_task_prompt("execute", template, sparse)
    assert "this form" not in prompt


def test_a_part_that_alone_lacks_the_fact_is_noted() -> None:
    plan = trip([{"days": 5}, {}, {"days": "five"}])
    assert ranges(plan)[:4] == [("1", 1, 5), ("1.1", 1, 5), ("1.2", 1, 5), ("1.3", 1, 5)]
    (schedule,) = schedules(plan)
    assert schedule.notes == (Note("missing", "1", "Tokyo", parts=("1.2", "1.3")),)
    assert "- _1.2, 1.3: no days stated; shown with the range of 1. Tokyo._" in render_plan(plan, "markdown")


def test_parts_that_do_not_add_up_get_no_range() -> None:
    plan = trip([{"days": 2}, {"days": 2}, {"days": 2}])
    (schedule,) = schedules(plan)
    assert schedule.notes == (Note("sum", "1", "Tokyo", got=6, expected=5),)
    assert ranges(plan) == [
        ("1", 1, 5),
        ("1.1", None, None),
        ("1.2", None, None),
        ("1.3", None, None),
        ("2", 6, 9),  # the next stage is laid out as its facts say
        ("2.1", 6, 6),
        ("2.2", 7, 9),
    ]
    assert [s.amount for s in schedule.slots[1:4]] == [2, 2, 2]
    text = render_plan(plan, "markdown")
    assert "| – | 1.1 Tokyo part 1 · _days: 2_ |" in text
    assert "- _The days of the parts of 1. Tokyo add up to 6, not 5; they have no range here._" in text


def test_stages_that_miss_the_total_are_not_laid_out() -> None:
    plan = trip([{"days": 2}, {"days": 3}], total=10)
    (schedule,) = schedules(plan)
    assert schedule.notes == (Note("sum", "", "Plan a weekend in Lisbon", got=9, expected=10),)
    assert all(s.start is None for s in schedule.slots)
    text = render_plan(plan, "markdown")
    assert "- _The days of the parts of the goal add up to 9, not 10; they have no range here._" in text
    assert "| **–** | **1. Tokyo** · _days: 5_ |" in text
    json.loads(render_plan(plan, "json"))  # both kinds of note match the schema


def test_no_sum_constraint_no_schedule() -> None:
    sw = swarm({"kind": "mention", "terms": ["Tokyo"], "applies_to": "root"})
    split(sw, "root", {"Tokyo": {"days": 5}, "Kyoto": {"days": 4}}, leaf=True)
    sw.finish_leaves()
    plan = fold(sw.events)
    assert schedules(plan) == ()
    assert "## Schedule" not in render_plan(plan, "markdown")
    assert "Milestones" not in render_plan(plan, "spec")
    assert "schedule" not in json.loads(render_plan(plan, "json"))


def test_no_schedule_when_no_stage_states_the_fact_or_nothing_is_split() -> None:
    sw = swarm(sum_of("days", 9))
    assert schedules(fold(sw.events)) == ()
    split(sw, "root", {"Tokyo": {}, "Kyoto": {}}, leaf=True)
    assert schedules(fold(sw.events)) == ()


def test_one_schedule_per_summed_field_in_the_spec_s_order() -> None:
    sw = swarm(sum_of("Tage", 9), sum_of("budget", 900), sum_of("Tage", 9, "all"))
    split(sw, "root", {"Tokyo": {"Tage": 5, "budget": 600}, "Kyoto": {"Tage": 4, "budget": 300}}, leaf=True)
    sw.finish_leaves()
    plan = fold(sw.events)
    assert [(s.field, [(x.start, x.end) for x in s.slots]) for s in schedules(plan)] == [
        ("Tage", [(1, 5), (6, 9)]),
        ("budget", [(1, 600), (601, 900)]),
    ]
    text = render_plan(plan, "markdown")
    schedule = text.split("## Schedule\n\n", 1)[1].split("\n## ", 1)[0]
    assert schedule == (
        "| Tage | Part |\n|---:|---|\n| **1–5** | **1. Tokyo** |\n| **6–9** | **2. Kyoto** |\n\n"
        "| budget | Part |\n|---:|---|\n| **1–600** | **1. Tokyo** |\n| **601–900** | **2. Kyoto** |\n"
    )


def test_the_spec_s_milestones_name_requirements_and_tasks() -> None:
    text = render_plan(trip([{"days": 2}, {"days": 3}]), "spec")
    assert (
        "| days | Milestone | Tasks |\n|---:|---|---|\n"
        "| 1–5 | R1. Tokyo | T1 (1–2), T2 (3–5) |\n"
        "| 6–9 | R2. Kyoto | T3 (6), T4 (7–9) |\n"
    ) in text


def test_the_schedule_is_an_addition_of_the_export_and_of_no_digest() -> None:
    plan = trip([{"days": 2}, {"days": 3}])
    data = json.loads(render_plan(plan, "json"))
    assert data["schedule"] == [s.to_json() for s in schedules(plan)]
    assert "schedule" not in plan.to_json()
    assert (data["digest"], data["content_digest"]) == (plan.digest, plan.content_digest)


@pytest.mark.parametrize("fmt", ["markdown", "spec", "json"])
def test_content_only_exports_keep_the_schedule(fmt: str) -> None:
    plan = trip([{"days": 2}, {"days": 3}])
    full, content = render_plan(plan, fmt), render_plan(plan, fmt, content_only=True)
    if fmt == "json":
        assert json.loads(content)["schedule"] == json.loads(full)["schedule"]
    else:
        assert "| 1–5 |" in full.replace("**", "") and "| 1–5 |" in content.replace("**", "")


def test_the_recorded_example_reads_day_by_day() -> None:
    log = read_event_log(EXAMPLES / "japan-events.jsonl")
    plan = fold(log.events)
    stages = [(s.title, s.start, s.end) for s in schedules(plan)[0].slots if s.depth == 1]
    assert stages == [
        ("Tokyo", 1, 5),
        ("Kyoto", 6, 9),
        ("Hiking in Japan", 10, 12),
        ("Design and Architecture Tour", 13, 14),
    ]
    page = (EXAMPLES / "japan.md").read_text(encoding="utf-8")
    assert page.index("## Schedule") < page.index("## Overview")
    assert "| **1–5** | **1. Tokyo** |\n| 1–2 | 1.1 Explore Tokyo's temples |\n| 3–4 |" in page
