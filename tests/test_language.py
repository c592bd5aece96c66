"""The plan's language: the spec's `language` field, else the goal's script; the headings follow."""

from __future__ import annotations

import pytest

from specswarm.plan.fold import fold
from specswarm.render import render_plan
from specswarm.spec import spec_from_mapping
from specswarm.spec.language import plan_language, script_language
from specswarm.testing.synth import Swarm, minimal_spec


@pytest.mark.parametrize(
    "text, code",
    [
        ("दिल्ली और आगरा में पाँच दिन की यात्रा की योजना बनाएं", "hi"),
        ("京都で三日間の旅行を計画する", "ja"),  # kana among Han: Japanese
        ("规划一次为期五天的北京之旅", "zh"),
        ("서울에서 3일 여행 계획", "ko"),
        ("Спланировать поездку в Санкт-Петербург", "ru"),
        ("Plan a two-week trip to Japan", None),  # Latin letters name no language
        ("Planifier un voyage à Lisbonne", None),
        ("12345 !!", None),
    ],
)
def test_the_script_of_the_goal_names_its_language(text: str, code: str | None) -> None:
    assert script_language(text) == code


def test_a_declared_language_wins_and_unknown_ones_are_kept_for_prompts() -> None:
    assert plan_language("Plan a trip", "", "es").headings["overview"] == "Resumen"
    assert plan_language("Plan a trip", "", "Hindi").code == "hi"
    swahili = plan_language("Plan a trip", "", "Swahili")
    assert swahili.instruction == "Write in Swahili, the language of the goal."
    assert swahili.headings["overview"] == "Overview"
    assert plan_language("Plan a trip").instruction == ""  # ASCII letters: the prompts say nothing
    # Latin letters English does not write: ask for the goal's own language, by no name
    for goal in ("Planifier un voyage à Lisbonne", "Viaje de diez días a Oporto", "Eine Woche in Köln"):
        assert plan_language(goal).instruction == "Write in the language the goal is written in."
        assert plan_language(goal).code is None and plan_language(goal).headings["overview"] == "Overview"
    assert plan_language("Plan a trip", "Two adults").instruction == ""
    assert plan_language("Zaplanuj tydzień", "we Wrocławiu").instruction != ""  # the context counts
    assert plan_language("दिल्ली की यात्रा").instruction == "Write in Hindi, the language of the goal."


def test_the_language_field_travels_only_when_given() -> None:
    roles = {"decomposer": {"count": 1}, "scorer": {"count": 1}, "executor": {"count": 1}}
    plain = spec_from_mapping({"goal": "g", "roles": roles})
    assert "language" not in plain.to_json()  # older run events read the same
    given = spec_from_mapping({"goal": "g", "roles": roles, "language": "hi"})
    assert given.language == "hi" and given.to_json()["language"] == "hi"


def test_headings_follow_the_goal_s_language() -> None:
    sw = Swarm(spec=minimal_spec(goal="दिल्ली और आगरा में पाँच दिन", context="दो लोग"), seed=2)
    sw.accept("root", ["दिल्ली", "आगरा"], leaf=True)
    sw.finish_leaves()
    text = render_plan(fold(sw.events), "markdown")
    assert "## सारांश" in text and "## स्रोत" in text and "- **स्थिति:**" in text
    assert "## Overview" not in text


def test_schedule_labels_follow_a_language_the_headings_are_written_for() -> None:
    assert plan_language("在八周内开一家小咖啡馆").unit_label("weeks") == "第{n}周"
    assert plan_language("Oporto", declared="es").unit_label("days") == "Día {n}"
    assert plan_language("दिल्ली और आगरा में पाँच दिन").unit_label("Days") == "दिन {n}"
    # English, a language not known, another field: the label comes from the field's name
    assert plan_language("Plan a trip").unit_label("days") is None
    assert plan_language("Viaje a Oporto en seis días").unit_label("days") is None
    assert plan_language("在八周内开一家小咖啡馆").unit_label("budget_eur") is None


def test_a_goal_in_latin_letters_beyond_english_with_no_language_gets_a_hint() -> None:
    from specswarm.spec.language import language_hint

    spanish = "Planificar un viaje de seis días a Oporto"
    hint = language_hint(spanish, "")
    assert hint is not None and "set `language:`" in hint
    assert language_hint(spanish, "", "es") is None  # named: nothing to say
    assert language_hint("Plan a two-week trip to Japan", "") is None  # plain ASCII
    assert language_hint("दिल्ली और आगरा की पाँच दिन की यात्रा", "") is None  # the script names Hindi
