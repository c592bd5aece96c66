"""Tasks: render -> generate -> parse -> validate -> retry with feedback; prompts rendering."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from specswarm.critics import check_split, combine
from specswarm.errors import ModelError, PromptTemplateError, ReplayMissError
from specswarm.model import (
    Child,
    GenerationRequest,
    ReplayModel,
    ScriptedModel,
    TaskCounts,
    decompose,
    execute,
    rate,
    render_prompt,
)
from specswarm.model.prompts import plain_critiques
from specswarm.spec import GoalSpec, spec_from_mapping

ROOT_DIR = Path(__file__).resolve().parent.parent
PROMPTS = {
    k: (ROOT_DIR / "templates" / "prompts" / f"{k}.j2").read_text(encoding="utf-8")
    for k in ("decompose", "refine", "score", "execute")
}
GOAL = "Plan a two-week trip to Japan"


def make_spec(**over: object) -> dict[str, Any]:
    """The Japan spec as a YAML-like mapping (change it, then build it with :func:`spec_of`)."""
    spec: dict[str, Any] = {
        "goal": GOAL,
        "roles": {"decomposer": {"count": 2}, "scorer": {"count": 3}, "executor": {"count": 2}},
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


def spec_of(**over: object) -> GoalSpec:
    return spec_from_mapping(make_spec(**over))


@dataclass(frozen=True)
class Node:
    """A plan node as tasks read it (a :class:`~specswarm.model.subject.Subject`)."""

    id: str
    title: str
    detail: str = ""
    depth: int = 0
    facts: Mapping[str, int | str] = field(default_factory=dict)


ROOT = Node("root", GOAL)


def answers(*texts: str) -> ScriptedModel:
    queue = list(texts)
    return ScriptedModel(lambda req: queue.pop(0))


def test_scripted_swarm_answers_pass_the_critics() -> None:
    spec = spec_of()
    model = ScriptedModel()
    counts = TaskCounts()
    for strategy in ("geography", "activity", "days"):
        children = decompose(model, spec, ROOT, [], [], strategy, [], counts=counts)
        assert 3 <= len(children) <= 5
        assert sum(int(c.facts["days"]) for c in children) == 14
        checks = check_split(spec, ROOT, children, 0)
        assert [c.name for c in checks if not c.passed] == []
        score, approve = combine(checks, rate(model, spec, ROOT, children, counts=counts), 0.2)
        assert approve and score >= 80
    out = execute(model, spec, Node("x", "Tokyo essentials", depth=1), [ROOT], counts=counts)
    assert out.startswith("- Decide the scope of Tokyo essentials")
    assert counts.failures == {}


def test_prompt_carries_the_node_limits_and_constraints() -> None:
    model = ScriptedModel()
    decompose(model, spec_of(), ROOT, [], [], "geography", [])
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
    counts = TaskCounts()
    got = decompose(model, spec_of(), ROOT, [], [], "geography", [], counts=counts)
    assert [c.title for c in got] == ["Tokyo sights", "Kyoto temples", "Osaka food"]
    assert "Your previous answer could not be used: no list found" in model.calls[1].prompt
    assert counts.retries == 1
    assert counts.bad_outputs == {"decompose": 1}


def test_gives_up_with_a_clear_model_error_after_two_retries() -> None:
    model = answers("- Tokyo", "- Tokyo\n- tokyo!", "nothing useful")
    counts = TaskCounts()
    with pytest.raises(ModelError) as info:
        decompose(model, spec_of(), ROOT, [], [], "geography", [], counts=counts)
    assert str(info.value) == (
        "decompose: the model gave no usable answer after 3 attempts (no list found: write one "
        f"part per line, starting with \"- \") for '{GOAL}'"
    )
    assert len(model.calls) == 3
    assert counts.failures == {"decompose": 1}
    assert (counts.retries, counts.bad_outputs) == (2, {"decompose": 3})


def test_sum_mismatch_is_fitted_in_code_without_asking_again() -> None:
    wrong = "- Tokyo sights for 7 days (days: 7)\n- Kyoto temples (days: 4)\n- Osaka food (days: 1)"
    model = answers(wrong)
    counts = TaskCounts()
    got = decompose(model, spec_of(), ROOT, [], [], "geography", [], counts=counts)
    # 12 days rescaled to 14 by largest remainder, proportions kept, text rewritten to match
    assert [c.facts["days"] for c in got] == [7, 5, 2]
    assert got[0].title == "Tokyo sights for 7 days"
    assert len(model.calls) == 1
    assert counts.fitted == 1


def test_below_the_root_the_node_fact_is_the_total() -> None:
    spec = spec_of(constraints=[{"kind": "sum", "field": "days", "total": 14, "applies_to": "all"}])
    tokyo = Node("p.0", "Tokyo stay", "Five days in Tokyo", depth=1, facts={"days": 5})
    model = answers("- Shinjuku walk (days: 3)\n- Asakusa temples (days: 1)\n- Odaiba bay (days: 4)")
    counts = TaskCounts()
    got = decompose(model, spec, tokyo, [ROOT], [], "geography", [], counts=counts)
    assert [c.facts["days"] for c in got] == [2, 1, 2]
    assert [c.leaf for c in got] == [True, True, True]  # max_depth 2: its children are leaves
    assert counts.fitted == 1
    assert "End every line with (days: N); the numbers must add up to 14." in model.calls[0].prompt


def test_fit_sum_rewrites_day_counts_and_keeps_at_least_one_each() -> None:
    from specswarm.model.splits import fit_sum

    kids = [
        Child("Tokyo for 8 days", "Spend 8 days in Tokyo.", facts={"days": 8}),
        Child("Kyoto for 6 days", "", facts={"days": 6}),
        Child("Nara day trip", "", facts={}),
    ]
    got = fit_sum(kids, "days", 14)
    assert sum(int(c.facts["days"]) for c in got) == 14
    assert all(int(c.facts["days"]) >= 1 for c in got)
    assert [c.facts["days"] for c in got] == [7, 5, 2]
    assert got[0].title == "Tokyo for 7 days" and got[0].detail == "Spend 7 days in Tokyo."
    assert got[2].title == "Nara day trip"


def test_refine_uses_previous_children_and_critiques() -> None:
    model = ScriptedModel()
    previous = [Child("Tokyo stuff", "", facts={"days": 7}), Child("Misc", "")]
    decompose(
        model,
        spec_of(),
        ROOT,
        [],
        [],
        "geography",
        ["vagueness: #2 'Misc': vague word 'misc'"],
        previous=previous,
    )
    prompt = model.calls[0].prompt
    # what to fix, in plain words; no title of the rejected split (the model would copy it)
    assert "A previous split of it was rejected:\n- some parts named nothing concrete" in prompt
    assert "Tokyo stuff" not in prompt and "Misc" not in prompt


def test_plain_critiques_name_no_part() -> None:
    lines = [
        'repeats: #1 "Conflict Resolution Mechanism" repeats the root stage "Conflict Resolution"',
        'overlap: #1 "Tokyo" and #3 "Tokyo food" plan the same place',
        "coverage: 1/8 key terms of the parent's detail covered; not covered: devices, folder",
        'facts: days add up to 16, expected 14; #2 "Visit Kyoto (3 days)" says 3 days, its facts 1',
        "repeats: this split was already proposed; split the goal another way",
        'repeats: #2 "Hike Fuji" repeats the stage "Fuji"',
    ]
    said = plain_critiques(lines, "Syncing")
    assert said == [
        'some parts planned again what is planned elsewhere in the tree, or restated "Syncing" itself: '
        'every part must be one piece of "Syncing" only',
        "two or more parts covered the same thing: give every part a subject of its own",
        "together the parts must also cover: devices, folder",
        "days add up to 16, expected 14; a part says 3 days, its facts 1",
        "this split, or most of it, was proposed before: split it another way",
    ]


def test_rate_parses_and_returns_none_when_hopeless() -> None:
    kids = [Child("Tokyo sights"), Child("Kyoto temples")]
    counts = TaskCounts()
    assert rate(answers("Score: 9/10\nReason: ok"), spec_of(), ROOT, kids, counts=counts) == 90
    assert rate(answers("great", "very good", "love it"), spec_of(), ROOT, kids, counts=counts) is None
    assert counts.failures == {"score": 1}


def test_execute_cleans_loops() -> None:
    model = answers("- Book the Hiiragiya ryokan\n" + "- Pay the deposit by 1 March\n" * 30)
    counts = TaskCounts()
    out = execute(model, spec_of(), Node("a", "Kyoto stay", depth=2), [ROOT], counts=counts)
    assert out == "- Book the Hiiragiya ryokan\n- Pay the deposit by 1 March"
    assert counts.loops_cut == 1


def test_replay_miss_propagates_instead_of_being_swallowed(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ReplayMissError):
        rate(ReplayModel(empty), spec_of(), ROOT, [Child("A b"), Child("C d")])


def test_each_task_renders_its_own_template_from_the_spec() -> None:
    prompts = {
        "decompose": "D {{ node.title }} {{ limits.target }}",
        "refine": "R {{ proposal | map(attribute='title') | join(',') }} {{ critiques | join(',') }}",
        "score": "S {{ proposal | length }}",
        "execute": "E {{ leaf.title }} < {{ ancestors | map(attribute='id') | join(',') }}",
    }
    spec = spec_of(prompts=prompts)
    # concrete answers (names inside a sentence): a general one would be asked again
    model = ScriptedModel(lambda req: "- Visit Alpha\n- Visit Beta\n- Visit Gamma\nScore: 70")
    kids = decompose(model, spec, ROOT, [], [], "x", [])
    decompose(model, spec, ROOT, [], [], "x", ["too vague"], previous=kids[:2])
    rate(model, spec, ROOT, kids)
    execute(model, spec, Node("leaf", "Visit Gamma", depth=1), [ROOT])
    assert [(c.system, c.prompt) for c in model.calls] == [
        ("", f"D {GOAL} 4"),
        ("", "R Visit Alpha,Visit Beta too vague"),
        ("", "S 3"),
        ("", "E Visit Gamma < root"),
    ]
    assert [c.max_tokens for c in model.calls] == [400, 400, 120, 300]


def test_counts_are_the_callers_own_and_optional() -> None:
    spec = spec_of(tree={"min_children": 2})
    assert decompose(answers("nope", "- Alpha\n- Beta"), spec, ROOT, [], [], "x", [])  # no counts
    counts = TaskCounts()
    decompose(answers("nope", "- Gamma\n- Delta"), spec, ROOT, [], [], "x", [], counts=counts)
    # one retry after one bad answer; the days were missing, so the split was fitted to 14
    assert counts.to_json() == {
        "retries": 1,
        "loops_cut": 0,
        "fitted": 1,
        "redone": 0,
        "revised": 0,
        "sharpened": 0,
        "astray": 0,
        "off_task": 0,
        "mended": 0,
        "completed": 0,
        "rewritten": 0,
        "repaired": 0,
        "varied": 0,
        "varied_requests": 0,
        "failures": {},
        "bad_outputs": {"decompose": 1},
        "structured": {},
        "free": {"decompose": 2},  # a scripted model holds nothing to a schema
    }
    assert TaskCounts().to_json() == {
        "retries": 0,
        "loops_cut": 0,
        "fitted": 0,
        "redone": 0,
        "revised": 0,
        "sharpened": 0,
        "astray": 0,
        "off_task": 0,
        "mended": 0,
        "completed": 0,
        "rewritten": 0,
        "repaired": 0,
        "varied": 0,
        "varied_requests": 0,
        "failures": {},
        "bad_outputs": {},
        "structured": {},
        "free": {},
    }


def test_render_prompt_blocks_plain_and_errors() -> None:
    assert render_prompt(
        "{% block system %}S {{ x }}{% endblock %}{% block prompt %}P {{ x }}{% endblock %}", x=1
    ) == ("S 1", "P 1")
    assert render_prompt("Just {{ x }}\n\n\n\nuser", x="a") == ("", "Just a\n\nuser")
    with pytest.raises(PromptTemplateError, match=r"^'y' is undefined in prompt template:1 \(available: x\)"):
        render_prompt("{{ y }}", x=1)
    with pytest.raises(PromptTemplateError, match=r"^missing block 'prompt' in prompt template \("):
        render_prompt("{% block system %}S{% endblock %} rest")
    with pytest.raises(PromptTemplateError, match=r"^Jinja2 syntax error in prompt template:1: "):
        render_prompt("{% if %}")
    with pytest.raises(PromptTemplateError, match=r"^cannot render prompt template:1: access to attribute"):
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
    raw = make_spec()
    raw["model"]["max_tokens"]["score"] = 33
    rate(model, spec_from_mapping(raw), ROOT, [Child("A b"), Child("C d")])
    assert model.calls[0].max_tokens == 33
    assert isinstance(model.calls[0], GenerationRequest)


def test_execute_names_the_siblings_and_facts_and_redoes_a_repeat() -> None:
    parent = Node("p", "Visit Kyoto (4 days)", depth=1, facts={"days": 4})
    leaf = Node("p.1", "Temples of Higashiyama", depth=2, facts={"days": 2})
    sibling = Node("p.0", "Arashiyama bamboo grove", depth=2, facts={"days": 2})
    written = "- Walk the bamboo grove at dawn\n- Ride the Sagano scenic railway\n- Visit Tenryu-ji temple"
    answers = iter([written, "- Kiyomizu-dera at opening time\n- Walk Sannenzaka and Ninenzaka"])
    model = ScriptedModel(lambda req: next(answers))
    counts = TaskCounts()
    out = execute(
        model,
        spec_from_mapping(make_spec()),
        leaf,
        [ROOT, parent],
        siblings=[sibling],
        sibling_results=[written],
        counts=counts,
    )
    assert out.startswith("- Kiyomizu-dera") and counts.redone == 1
    first, second = (c.prompt for c in model.calls)
    assert "- Arashiyama bamboo grove" in first and "days = 2" in first and "days = 4" in first
    assert "Do not write the following again" not in first
    assert "Do not write the following again" in second and "- Ride the Sagano scenic railway" in second


def test_execute_keeps_a_result_that_shares_a_line_or_two() -> None:
    leaf = Node("p.1", "Temples of Higashiyama", depth=2)
    model = ScriptedModel(lambda req: "- Kiyomizu-dera at opening time\n- Buy an ICOCA card\n- Eat yudofu")
    counts = TaskCounts()
    out = execute(
        model,
        spec_from_mapping(make_spec()),
        leaf,
        [ROOT],
        sibling_results=["- Buy an ICOCA card"],
        counts=counts,
    )
    assert "Eat yudofu" in out and counts.redone == 0 and len(model.calls) == 1


def test_results_that_share_only_their_code_fences_are_no_repeats() -> None:
    from specswarm.critics import repeats_of

    def usage(command: str, effect: str) -> str:
        return f"- Usage:\n  ```sh\n  {command}\n  ```\n---\n- {effect}"

    # one line of three is shared ("Usage:"); the rest they share is markup: "```sh", "```", "---"
    add = usage("todo add 'Buy milk' --due 2026-05-01", "Adds a task due on 1 May")
    assert repeats_of(add, [usage("todo rm 12", "Removes task 12 for good")]) == []
    # the same command twice is a repeat, fences or not
    rm = usage("todo rm 12", "Removes task 12 for good")
    assert repeats_of(rm, [rm]) == ["Usage:", "todo rm 12", "Removes task 12 for good"]


ECHO = "- Short title: one sentence of concrete detail\n" * 4
GOOD = "\n".join(
    f"- {t}: {d} (days: {n})"
    for t, d, n in [
        ("Tokyo food and design", "Tsukiji, Ginza and the design museums", 5),
        ("Kyoto temples", "Kinkaku-ji, Fushimi Inari and Gion", 4),
        ("Hakone hiking", "Two days on the Hakone trails with a ryokan night", 2),
        ("Osaka and Nara", "Dotonbori street food and the deer park of Nara", 3),
    ]
)


def greedy_echoes(req: GenerationRequest) -> str:
    """A greedy model that echoes the format line as every part (seen with the embedded model);
    asked to sample, it answers."""
    return ECHO if req.top_k == 1 else GOOD


def test_a_retry_that_would_repeat_its_prompt_samples_instead() -> None:
    # the same unusable answer twice: the third try would ask the same prompt again
    model = ScriptedModel(greedy_echoes)
    counts = TaskCounts()
    children = decompose(model, spec_of(), ROOT, [], [], "geography", [], counts=counts)
    assert [c.title for c in children][0] == "Tokyo food and design"
    assert [r.top_k for r in model.calls] == [1, 1, 40]
    assert model.calls[2].temperature > 0 and model.calls[2].prompt == model.calls[1].prompt
    assert counts.varied_requests == 1 and counts.bad_outputs["decompose"] == 2


def test_a_node_whose_split_gave_up_is_asked_another_way() -> None:
    # attempt 1 (one earlier call gave up): the next strategy, sampled from the first try
    model = ScriptedModel(greedy_echoes)
    strategies = ["geography", "activity", "days"]
    children = decompose(model, spec_of(), ROOT, [], [], "geography", [], strategies=strategies, attempt=1)
    assert len(children) == 4
    first = model.calls[0]
    assert "Split it by activity" in first.prompt and first.top_k == 40 and first.seed != 42
    with pytest.raises(ModelError):  # greedy, every try the same echo but the sampled last one
        decompose(ScriptedModel(lambda req: ECHO), spec_of(), ROOT, [], [], "geography", [], attempt=0)


def test_a_line_the_token_cap_cut_off_is_left_out() -> None:
    from specswarm.model.base import Generation
    from specswarm.model.tasks import _uncut

    text = "- Day 3: Tokyo National Museum, 1,000 JPY.\n- Day 3: After lunch, visit the Tokyo Nat"
    assert _uncut(Generation(text, 60, 1.0, "m"), 60) == "- Day 3: Tokyo National Museum, 1,000 JPY."
    assert _uncut(Generation(text, 59, 1.0, "m"), 60) == text  # it stopped on its own
    assert _uncut(Generation("- one long line", 60, 1.0, "m"), 60) == "- one long line"  # all there is
    assert _uncut(Generation(text, 60, 1.0, "m", structured=True), 60) == text  # JSON held whole
