"""Tasks: render -> generate -> parse -> validate -> retry with feedback; prompts rendering."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from specswarm.errors import ModelError, ReplayMissError
from specswarm.model import (
    STATS,
    Child,
    GenerationRequest,
    ReplayModel,
    ScriptedModel,
    adecompose,
    aexecute,
    arate,
    decompose,
    execute,
    rate,
    render_prompt,
)
from specswarm.plan.critics import check_split, combine

ROOT_DIR = Path(__file__).resolve().parent.parent
PROMPTS = {
    k: (ROOT_DIR / "templates" / "prompts" / f"{k}.j2").read_text(encoding="utf-8")
    for k in ("decompose", "refine", "score", "execute")
}
GOAL = "Plan a two-week trip to Japan"


def make_spec(**over: object) -> dict:
    spec = {
        "goal": GOAL,
        "context": "Two adults, first visit, spring, mid-range budget",
        "constraints": [
            {"kind": "sum", "field": "days", "total": 14, "applies_to": "root"},
            {"kind": "mention", "terms": ["Tokyo", "Kyoto"], "applies_to": "root"},
        ],
        "prompts": PROMPTS,
        "tree": {
            "max_depth": 2,
            "min_children": 3,
            "max_children": 5,
            "max_revisions": 2,
            "approve_threshold": 60,
        },
        "model": {
            "backend": "scripted",
            "temperature": 0.0,
            "top_k": 1,
            "seed": 42,
            "repeat_penalty": 1.1,
            "threads": 2,
            "cassette": None,
            "max_tokens": {"decompose": 400, "refine": 400, "score": 120, "execute": 300},
            "model_weight": 0.2,
        },
    }
    spec.update(over)
    return spec


ROOT = {"id": "root", "title": GOAL, "detail": "", "depth": 0}


@pytest.fixture(autouse=True)
def _fresh_stats() -> None:
    STATS.reset()


def answers(*texts: str) -> ScriptedModel:
    queue = list(texts)
    return ScriptedModel(lambda req: queue.pop(0))


def test_scripted_swarm_answers_pass_the_critics() -> None:
    spec = make_spec()
    model = ScriptedModel()
    for strategy in ("geography", "activity", "days"):
        children = decompose(model, spec, ROOT, [], [], strategy, [])
        assert 3 <= len(children) <= 5
        assert sum(int(c.facts["days"]) for c in children) == 14
        checks = check_split(spec, ROOT, [c.to_json() for c in children])
        assert [c.name for c in checks if not c.passed] == []
        score, approve = combine(checks, rate(model, spec, ROOT, children), 0.2)
        assert approve and score >= 80
    out = execute(model, spec, {"id": "x", "title": "Tokyo essentials", "depth": 1}, [ROOT])
    assert out.startswith("- Decide the scope of Tokyo essentials")
    assert STATS.snapshot()["failures"] == {}


def test_prompt_carries_the_node_limits_and_constraints() -> None:
    model = ScriptedModel()
    decompose(model, make_spec(), ROOT, [], [], "geography", [])
    req = model.calls[0]
    assert req.system.startswith("You are a planner.")
    assert f"Goal to split: {GOAL}" in req.prompt
    assert "Split it by geography into 4 parts (at least 3, at most 5)." in req.prompt
    assert "End every line with (days: N); the numbers must add up to 14." in req.prompt
    assert "Together the parts must mention: Tokyo, Kyoto." in req.prompt
    assert (req.max_tokens, req.top_k, req.repeat_penalty) == (400, 1, 1.1)


def test_retry_feedback_names_the_problem_then_succeeds() -> None:
    model = answers(
        "Sure, I can help with planning!",
        "- Tokyo sights (days: 7)\n- Kyoto temples (days: 4)\n- Osaka food (days: 3)",
    )
    got = decompose(model, make_spec(), ROOT, [], [], "geography", [])
    assert [c.title for c in got] == ["Tokyo sights", "Kyoto temples", "Osaka food"]
    assert "Your previous answer could not be used: no list found" in model.calls[1].prompt
    assert STATS.snapshot()["retries"] == 1
    assert STATS.snapshot()["bad_outputs"] == {"decompose": 1}


def test_gives_up_with_a_clear_model_error_after_two_retries() -> None:
    model = answers("- Tokyo", "- Tokyo\n- tokyo!", "nothing useful")
    with pytest.raises(ModelError) as info:
        decompose(model, make_spec(), ROOT, [], [], "geography", [])
    assert str(info.value) == (
        "decompose: the model gave no usable answer after 3 attempts (no list found: write one "
        f"part per line, starting with \"- \") for '{GOAL}'"
    )
    assert len(model.calls) == 3
    assert STATS.snapshot()["failures"] == {"decompose": 1}


def test_sum_mismatch_is_fitted_in_code_without_asking_again() -> None:
    wrong = "- Tokyo sights for 7 days (days: 7)\n- Kyoto temples (days: 4)\n- Osaka food (days: 1)"
    model = answers(wrong)
    STATS.reset()
    got = decompose(model, make_spec(), ROOT, [], [], "geography", [])
    # 12 days rescaled to 14 by largest remainder, proportions kept, text rewritten to match
    assert [c.facts["days"] for c in got] == [7, 5, 2]
    assert got[0].title == "Tokyo sights for 7 days"
    assert len(model.calls) == 1
    assert STATS.snapshot()["fitted"] == 1


def test_fit_sum_rewrites_day_counts_and_keeps_at_least_one_each() -> None:
    from specswarm.model.tasks import fit_sum

    kids = [
        Child("Tokyo for 8 days", "Spend 8 days in Tokyo.", facts={"days": 8}),
        Child("Kyoto for 6 days", "", facts={"days": 6}),
        Child("Nara day trip", "", facts={}),
    ]
    got = fit_sum(kids, "days", 14)
    assert sum(c.facts["days"] for c in got) == 14
    assert all(c.facts["days"] >= 1 for c in got)
    assert [c.facts["days"] for c in got] == [7, 5, 2]
    assert got[0].title == "Tokyo for 7 days" and got[0].detail == "Spend 7 days in Tokyo."
    assert got[2].title == "Nara day trip"


def test_refine_uses_previous_children_and_critiques() -> None:
    model = ScriptedModel()
    previous = [Child("Tokyo stuff", "", facts={"days": 7}), Child("Misc", "")]
    decompose(
        model,
        make_spec(),
        ROOT,
        [],
        [],
        "geography",
        ["vagueness: #2 'Misc': vague word 'misc'"],
        previous=previous,
    )
    prompt = model.calls[0].prompt
    assert "Previous split:\n- Tokyo stuff\n- Misc\nReviewers said:\n- vagueness: #2" in prompt
    assert model.calls[0].system.startswith("You are a planner. You improve a split")


def test_rate_parses_and_returns_none_when_hopeless() -> None:
    kids = [Child("Tokyo sights"), Child("Kyoto temples")]
    assert rate(answers("Score: 9/10\nReason: ok"), make_spec(), ROOT, kids) == 90
    assert rate(answers("great", "very good", "love it"), make_spec(), ROOT, kids) is None
    assert STATS.snapshot()["failures"] == {"score": 1}


def test_execute_cleans_loops() -> None:
    model = answers("- Book ryokan\n" + "- Pay deposit\n" * 30)
    out = execute(model, make_spec(), {"id": "a", "title": "Kyoto stay", "depth": 2}, [ROOT])
    assert out == "- Book ryokan\n- Pay deposit"
    assert STATS.snapshot()["loops_cut"] == 1


def test_replay_miss_propagates_instead_of_being_swallowed(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ReplayMissError):
        rate(ReplayModel(empty), make_spec(), ROOT, [Child("A b"), Child("C d")])


def test_missing_template_is_a_model_error() -> None:
    spec = make_spec(prompts={"decompose": PROMPTS["decompose"]})
    with pytest.raises(ModelError, match=r"the spec has no prompt template for 'execute'"):
        execute(ScriptedModel(), spec, {"title": "x"}, [])


def test_async_variants() -> None:
    spec = make_spec()
    model = ScriptedModel()

    async def main() -> tuple[list[Child], int | None, str]:
        kids = await adecompose(model, spec, ROOT, [], [], "activity", [])
        score = await arate(model, spec, ROOT, kids)
        out = await aexecute(model, spec, {"title": kids[0].title, "depth": 1}, [ROOT])
        return kids, score, out

    kids, score, out = trio.run(main)
    assert len(kids) == 4 and score == 80 and kids[0].title in out


def test_render_prompt_blocks_plain_and_errors() -> None:
    assert render_prompt(
        "{% block system %}S {{ x }}{% endblock %}{% block prompt %}P {{ x }}{% endblock %}", x=1
    ) == ("S 1", "P 1")
    assert render_prompt("Just {{ x }}\n\n\n\nuser", x="a") == ("", "Just a\n\nuser")
    with pytest.raises(ModelError, match="prompt template: 'y' is undefined"):
        render_prompt("{{ y }}")
    with pytest.raises(ModelError, match="needs a prompt block too"):
        render_prompt("{% block system %}S{% endblock %} rest")
    with pytest.raises(ModelError, match="prompt template line 1: "):
        render_prompt("{% if %}")
    with pytest.raises(ModelError, match="prompt template: "):
        render_prompt("{{ x.__class__.__mro__ }}", x=1)  # the sandbox refuses


def test_model_output_in_context_is_data_not_template_source() -> None:
    system, prompt = render_prompt(
        PROMPTS["score"],
        goal=GOAL,
        node={"title": "{{ 7*7 }}", "detail": ""},
        proposal=[{"title": "{% raw %}x", "detail": ""}],
    )
    assert "{{ 7*7 }}" in prompt and "{% raw %}x" in prompt and "49" not in prompt


def test_generation_request_from_spec_caps() -> None:
    model = ScriptedModel(lambda req: "Score: 50")
    spec = make_spec()
    spec["model"]["max_tokens"]["score"] = 33
    rate(model, spec, ROOT, [Child("A b"), Child("C d")])
    assert model.calls[0].max_tokens == 33
    assert isinstance(model.calls[0], GenerationRequest)
