"""The goal's language asked of the model (a goal in Latin letters beyond English, no
``language`` field): the answer read, the run's spec set, a resumed run left as it began. The
real embedded model's answers are in the slow test at the end."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from specswarm.model.base import GenerationRequest
from specswarm.model.language import ask_language, parse_language
from specswarm.model.replay import ScriptedModel
from specswarm.spec import spec_from_mapping
from specswarm.swarm.launcher import language as launcher_language
from specswarm.swarm.launcher.language import goal_language, needs_language
from specswarm.testing.synth import minimal_spec

SPANISH = "Planificar un viaje de seis días a Oporto"


def answering(text: str) -> ScriptedModel:
    return ScriptedModel(lambda req: text)


def test_the_answer_names_a_language_the_plan_is_written_for_or_none() -> None:
    assert (parse_language("Spanish") or None) is not None
    assert getattr(parse_language("The text is written in Portuguese."), "code", None) == "pt"
    assert getattr(parse_language("german"), "code", None) == "de"
    assert parse_language("English") is None  # the prompts' default
    assert parse_language("Klingon") is None and parse_language("") is None
    assert parse_language("es") is None  # a name, not a code, is asked for
    # a language without headings, by the platform's locale table, as the whole answer only
    assert getattr(parse_language("Polish."), "name", None) == "Polish"
    assert getattr(parse_language("Polish"), "code", "?") is None  # the prompts only
    assert getattr(parse_language("Deutsch"), "code", None) == "de"
    assert parse_language("The text is about Japan") is None  # a country the table names
    assert parse_language("Posix") is None and parse_language("American") is None


def test_the_question_shows_the_goal_and_a_model_failure_is_no_answer() -> None:
    asked: list[GenerationRequest] = []

    def spanish(req: GenerationRequest) -> str:
        asked.append(req)
        return "Spanish"

    found = ask_language(ScriptedModel(spanish), SPANISH, "Dos adultos")
    assert found is not None and found.code == "es"
    assert SPANISH in asked[0].prompt and "Dos adultos" in asked[0].prompt and asked[0].top_k == 1

    def broken(req: GenerationRequest) -> str:
        from specswarm.errors import ModelError

        raise ModelError("down")

    assert ask_language(ScriptedModel(broken), SPANISH) is None


def test_a_new_run_gets_the_language_the_model_names(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_from_mapping(minimal_spec(goal=SPANISH))
    assert needs_language(spec)
    assert not needs_language(dataclasses.replace(spec, language="es"))  # named: not asked
    assert not needs_language(spec_from_mapping(minimal_spec(goal="Plan a trip to Porto")))
    monkeypatch.setattr("specswarm.model.load.load_model", lambda settings: answering("Spanish"))
    named, note = goal_language(spec)
    assert named.language == "es" and note is not None and "Spanish" in note
    monkeypatch.setattr("specswarm.model.load.load_model", lambda settings: answering("- a list"))
    same, note = goal_language(spec)
    assert same is spec and note is not None and "set `language:`" in note
    assert launcher_language.goal_language(named)[0] is named  # named: nothing asked
    monkeypatch.setattr("specswarm.model.load.load_model", lambda settings: answering("Polish"))
    polish, note = goal_language(spec)
    assert polish.language == "Polish" and note is not None and "stay English" in note


def test_a_resumed_run_keeps_the_language_its_run_began_with(tmp_path: Path) -> None:
    from specswarm.protocol.events import write_event_log
    from specswarm.swarm.launcher.prepare import prepare_run, start_of

    spec = spec_from_mapping(minimal_spec(goal=SPANISH))
    named = dataclasses.replace(spec, language="es")  # as goal_language made it
    run = prepare_run(start_of(named, resume=None), events_path=tmp_path / "events.jsonl")
    run.keys.save(run.keys_file)
    with open(run.events_path, "w") as fh:
        write_event_log([run.run_event], fh)
    again = start_of(spec, resume=run.events_path)  # the file still names no language
    assert again.edits == () and again.spec.language == "es"


GOALS = {
    "Planificar un viaje de seis días a Oporto": "es",
    "Organiser un week-end à Lyon pour deux personnes": "fr",
    "Eine Woche Urlaub in München planen": "de",
    "Planejar uma viagem de cinco dias a Lisboa com orçamento médio": "pt",
    "Open a small café in Leeds within six months": None,  # English that names a café
    # languages without headings: by name, from the platform's locale table
    "Zaplanuj tygodniową podróż do Krakowa i Zakopanego": "Polish",
    "Plan een reis van één week naar Amsterdam en Utrecht": "Dutch",
    "İstanbul ve Kapadokya'ya bir haftalık gezi planla": "Turkish",
}


@pytest.mark.slow
@pytest.mark.model
def test_the_embedded_model_names_the_language_of_latin_script_goals() -> None:
    from specswarm.model import load_model
    from specswarm.model.assets import ensure_default_model
    from specswarm.spec import ModelSettings

    ensure_default_model()
    model = load_model(ModelSettings(backend="gpt4all", threads=2))
    try:
        found = {goal: ask_language(model, goal) for goal in GOALS}
        named = {goal: f.code or f.name if f is not None else None for goal, f in found.items()}
    finally:
        model.close()  # type: ignore[attr-defined]
    assert named == GOALS
