"""Prompt templates: the variable catalogue matches what the tasks really pass, every template
is rendered on its task's samples before anything runs, and a template that fails on real
data at run time raises PromptTemplateError (not a ModelError)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import specswarm.model.prompts as prompts_module
from specswarm.critics import lens_named
from specswarm.errors import ModelError, PromptTemplateError, SpecError, TemplateError
from specswarm.model import Child, ScriptedModel, decompose, execute, rate
from specswarm.model.summary import child_data, summarize
from specswarm.resources import load_schema
from specswarm.spec import LATER_TASKS, TASKS, spec_from_json, spec_from_mapping
from specswarm.spec.prompt_catalogue import TASK_VARIABLES, sample_contexts
from specswarm.spec.prompting import template_problem

ROOT_DIR = Path(__file__).resolve().parent.parent
GOAL = "Plan a two-week trip to Japan"


@dataclass(frozen=True)
class Node:
    id: str
    title: str
    detail: str = ""
    depth: int = 0
    facts: Mapping[str, int | str] = field(default_factory=dict)


ROOT = Node("root", GOAL)
STEP = Node("a" * 16 + ".0", "Kyoto (4 days)", "temples", 1, {"days": 4})
LEAF = Node("b" * 16 + ".0", "Day 1: temples", "Kiyomizu-dera", 2, {"days": 1})
SIBLING = Node("b" * 16 + ".1", "Day 2: Arashiyama", "bamboo grove", 2, {"days": 1})


def spec_with(**prompts: str) -> Any:
    return spec_from_mapping(
        {
            "goal": GOAL,
            "context": "Two adults, spring",
            "roles": {"decomposer": {"count": 1}, "scorer": {"count": 1}, "executor": {"count": 1}},
            "constraints": [
                {"kind": "sum", "field": "days", "total": 14, "applies_to": "root"},
                {"kind": "mention", "terms": ["Tokyo"], "applies_to": "all"},
            ],
            "tree": {"min_children": 2, "max_children": 5},
            "prompts": prompts,
            "model": {"backend": "scripted"},
        }
    )


def shape(value: Any, key: str = "") -> Any:
    """The structure of a context value: mapping keys, list item shapes, scalar kinds."""
    if key == "facts":
        return "facts"  # free-form: whatever facts a node states
    if isinstance(value, Mapping):
        return tuple(sorted((k, shape(v, k)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("list", frozenset(shape(v) for v in value))
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def covers(sample: Any, real: Any) -> bool:
    """``sample``'s shape covers ``real``'s: same keys, and every kind of list item real data has."""
    if isinstance(real, tuple) and real and real[0] == "list":
        return (
            isinstance(sample, tuple)
            and sample[0] == "list"
            and all(any(covers(s, r) for s in sample[1]) for r in real[1])
        )
    if isinstance(real, tuple):
        return (
            isinstance(sample, tuple)
            and [k for k, _ in sample] == [k for k, _ in real]
            and all(covers(s, r) for (_, s), (_, r) in zip(sample, real, strict=True))
        )
    return bool(sample == real)


@dataclass
class Seen:
    built: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Per render: the task and the whole context it built."""
    given: list[dict[str, Any]] = field(default_factory=list)
    """Per render: what the template was given."""


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    out = Seen()
    real_render, real_task = prompts_module.render, prompts_module.render_task_prompt

    def task_prompt(task: str, text: str, context: Mapping[str, Any]) -> tuple[str, str]:
        out.built.append((task, dict(context)))
        return real_task(task, text, context)

    def render(text: str, context: Mapping[str, Any], *, label: str = "prompt template") -> tuple[str, str]:
        out.given.append(dict(context))
        return real_render(text, context, label=label)

    monkeypatch.setattr(prompts_module, "render", render)
    monkeypatch.setattr("specswarm.model.tasks.render_task_prompt", task_prompt)
    return out


def run_every_task(spec: Any) -> None:
    """Each task as the roles call it, with every optional input present."""
    model = ScriptedModel(
        lambda req: "Score: 70\nReason: fine" if "Score" in req.system else "- Alpha one\n- Beta two"
    )
    kids = [Child("Kiyomizu-dera", "early", True, {"days": 1}), Child("Gion", "dusk", False, {"days": 3})]
    decompose(model, spec, STEP, [ROOT], [SIBLING], "by geography", [])
    decompose(model, spec, STEP, [ROOT], [SIBLING], "by geography", ["overlap: too close"], previous=kids)
    rate(model, spec, STEP, kids, ancestors=[ROOT], lens=lens_named("feasibility"))
    same = ScriptedModel(lambda req: "- Kiyomizu-dera at 8:00\n- Lunch in Gion at 12:00\n- Nanzen-ji")
    execute(
        same,
        spec,
        LEAF,
        [ROOT, STEP],
        siblings=[SIBLING],
        sibling_results=["- Kiyomizu-dera at 8:00\n- Lunch in Gion at 12:00\n- Nanzen-ji"],
    )
    prose = ScriptedModel(lambda req: "Kyoto starts at Kiyomizu-dera. Gion follows at dusk.")
    parts = [child_data(c.title, c.detail, c.facts, c.leaf, "- Kiyomizu-dera at 8:00") for c in kids]
    summarize(prose, spec, STEP, [ROOT], parts)


def test_each_task_gives_its_template_the_catalogued_names_with_the_samples_shapes(seen: Seen) -> None:
    run_every_task(spec_with())
    built = [task for task, _ in seen.built]
    assert built == ["decompose", "refine", "score", "execute", "execute", "summarize"]
    every = set().union(*map(set, TASK_VARIABLES.values()))
    for (task, built), given in zip(seen.built, seen.given, strict=True):
        assert set(built) == every, f"{task}: a context variable missing from TASK_VARIABLES"
        assert list(given) == list(TASK_VARIABLES[task])
        for sample in sample_contexts(task):
            assert list(sample) == list(TASK_VARIABLES[task])
        rich = sample_contexts(task)[0]
        for name, value in given.items():
            assert covers(shape(rich[name], name), shape(value, name)), (task, name, value)
    assert seen.given[-2]["avoid"] and seen.given[2]["lens"] == {
        "name": "feasibility",
        "question": lens_named("feasibility").question,
    }


def test_the_sparse_sample_has_the_same_shapes_where_not_empty() -> None:
    for task in TASKS:
        rich, sparse = sample_contexts(task)
        assert list(rich) == list(sparse)
        for name in rich:
            assert covers(shape(rich[name], name), shape(sparse[name], name)), (task, name)


def test_samples_cannot_be_changed_by_a_template() -> None:
    assert template_problem("{{ ancestors.append(1) }}{{ ancestors | length }}", "decompose", "t") is None
    assert len(sample_contexts("decompose")[0]["ancestors"]) == 2


@pytest.mark.parametrize("task", TASKS)
def test_the_default_templates_and_the_recorded_real_run_templates_pass(task: str) -> None:
    default = (ROOT_DIR / "templates" / "prompts" / f"{task}.j2").read_text(encoding="utf-8")
    assert template_problem(default, task, f"templates/prompts/{task}.j2") is None
    with (ROOT_DIR / "tests" / "fixtures" / "japan-real-2c5e150.jsonl").open(encoding="utf-8") as log:
        run = next(e for e in map(json.loads, log) if e["kind"] == "run")
    recorded = run["body"]["spec"]["prompts"]
    if task not in recorded:  # a task added since that run (LATER_TASKS): its run never asks it
        assert task in LATER_TASKS
        return
    assert template_problem(recorded[task], task, f"prompts.{task}") is None


AVAILABLE = (
    "available: goal, context, language, node, ancestors, siblings, strategy, limits, "
    "constraints, fact_fields"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a\n{{ travellers.count }}", f"'travellers' is undefined in T:2 ({AVAILABLE}, is_last_level)"),
        (
            "{% if node.depth > 9 %}\n\n{{ nope }}{% endif %}",
            f"'nope' is undefined in T:3 ({AVAILABLE}, is_last_level)",
        ),
        (
            "{{ lens.name }}",
            f"'lens' is undefined in T:1 (a variable of score, not of decompose; {AVAILABLE}, is_last_level)",
        ),
        ("{% if travellers is defined %}{{ travellers }}{% endif %}", None),
        (
            "{{ node.titel }}",
            "'node' has no attribute 'titel' in T:1 (node has: id, title, detail, depth, facts)",
        ),
        (
            "{% for c in constraints %}\n{{ c.terms | join(', ') }}{% endfor %}",
            "'c' has no attribute 'terms' in T:2 (c has: kind, field, total, applies_to)",
        ),
        (
            "{% if false %}{{ goal | uper }}{% endif %}",
            "no filter named 'uper' in T:1 (expected a Jinja2 filter such",
        ),
        (
            "{% if goal is frobbed %}{% endif %}",
            "no test named 'frobbed' in T:1 (expected a Jinja2 test such as",
        ),
        ("x\n{{ limits.target | join(', ') }}", "cannot render T:2: 'int' object is not iterable"),
        (
            "{{ goal.__class__ }}",
            "cannot render T:1: access to attribute '__class__' of 'str' object is unsafe",
        ),
        (
            "{% block sytem %}S{% endblock %}",
            "unknown block 'sytem' in T:1 (expected system and prompt; did you",
        ),
        (
            "\n{% block system %}S{% endblock %}",
            "missing block 'prompt' in T:2 (a template with a 'system' block",
        ),
        (
            "{% block system %}\n{{ zz }}{% endblock %}{% block prompt %}P{% endblock %}",
            "'zz' is undefined in T:2",
        ),
        (
            "{{ ancestors[-1].title }}",
            "cannot render T:1: list object has no element -1 (on the sparse sample, where",
        ),
        ("{% for i in range(2) %}{{ loop.index }}{% endfor %}{% set y = 1 %}{{ y }}", None),
        ("{% if %}", "Jinja2 syntax error in T:1: Expected an expression, got 'end of statement block'"),
    ],
)
def test_what_a_decompose_template_is_told(text: str, message: str | None) -> None:
    problem = template_problem(text, "decompose", "T")
    assert problem == message if message is None else (problem or "").startswith(message), problem


def test_inline_templates_in_code_are_rendered_but_a_run_event_only_parsed() -> None:
    with pytest.raises(SpecError) as info:
        spec_with(score="Rate {{ proposal | length }} parts of {{ node.title }} via {{ strategy }}")
    assert str(info.value) == (
        "<mapping>:0: prompts.score: 'strategy' is undefined in prompts.score:1 (a variable of decompose "
        "and refine, not of score; available: goal, context, language, node, ancestors, proposal, lens, "
        "limits, constraints, fact_fields, is_last_level)"
    )
    data = spec_with().to_json()
    data["prompts"]["score"] = "{{ strategy }}"  # an older version's run event: it still folds
    assert spec_from_json(data).prompts.score == "{{ strategy }}"


def test_a_template_that_fails_on_real_data_raises_prompt_template_error() -> None:
    spec = spec_with(
        decompose="Split {{ node.title }}\n{% if node.title == 'Boom' %}{{ node.facts.zzz }}{% endif %}"
    )
    model = ScriptedModel(lambda req: "- Alpha one\n- Beta two")
    assert decompose(model, spec, ROOT, [], [], "by place", [])  # the samples and the root are fine
    with pytest.raises(PromptTemplateError) as info:
        decompose(model, spec, Node("c" * 16 + ".0", "Boom", depth=1, facts={"days": 3}), [ROOT], [], "x", [])
    error = info.value
    assert str(error) == "'node.facts' has no attribute 'zzz' in prompts.decompose:2 (node.facts has: days)"
    assert (error.label, error.line, error.exit_code) == ("prompts.decompose", 2, 2)
    assert isinstance(error, TemplateError) and not isinstance(error, ModelError)


def test_a_score_template_failing_at_run_time_is_not_swallowed_as_no_rating() -> None:
    spec = spec_with(score="{% if proposal | length > 2 %}{{ proposal[5].title }}{% endif %}")
    assert rate(ScriptedModel(lambda req: "Score: 70"), spec, ROOT, [Child("A b"), Child("C d")]) == 70
    with pytest.raises(
        PromptTemplateError, match=r"^cannot render prompts\.score:1: list object has no element 5$"
    ):
        rate(ScriptedModel(), spec, ROOT, [Child("A b"), Child("C d"), Child("E f")])


# --------------------------------------------------------------------------- the documentation


def _listed(text: str) -> list[str]:
    """The variable names of a 'Variables: a, b (x, y), c' text, in order."""
    names = re.sub(r"\([^)]*\)", "", text.split("Variables:", 1)[1]).split(".")[0]
    return [n.strip(" `") for n in names.split(",")]


@pytest.mark.parametrize("task", TASKS)
def test_the_schema_names_each_tasks_variables(task: str) -> None:
    described = load_schema("goal.schema.json")["properties"]["prompts"]["properties"][task]["description"]
    assert _listed(described) == list(TASK_VARIABLES[task])


@pytest.mark.parametrize("task", TASKS)
def test_the_docs_name_each_tasks_variables(task: str) -> None:
    page = (ROOT_DIR / "docs" / "how-to" / "prompt-templates.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| `{task}` \| (.+) \|$", page, re.M)
    assert row, f"docs/how-to/prompt-templates.md: no '| `{task}` | ... |' row in the variables table"
    assert [n.strip(" `") for n in re.sub(r"\([^)]*\)", "", row.group(1)).split(",")] == list(
        TASK_VARIABLES[task]
    )
