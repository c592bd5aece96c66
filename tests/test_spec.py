"""Goal specs: loading, every problem with its line, the normalized JSON and back."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from specswarm.cli import app
from specswarm.errors import SpecError
from specswarm.spec import DEFAULT_STRATEGIES, GoalSpec, load_spec, spec_from_json

ROOT = Path(__file__).resolve().parent.parent
GOALS = sorted((ROOT / "goals").glob("*.yaml"))
BROKEN = sorted((Path(__file__).parent / "specs").glob("*.yaml"))

ROLES = """\
roles:
  decomposer: {count: 2}
  scorer: {count: 3}
  executor: {count: 1}
"""


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    """Write dedented ``text`` to ``tmp_path/name`` and return its path."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [str(p) for p in info.value.problems]


# --------------------------------------------------------------------------- valid specs


@pytest.mark.parametrize("path", GOALS, ids=lambda p: p.name)
def test_every_example_goal_validates(path: Path) -> None:
    spec = load_spec(path)
    assert spec.name == path.stem
    assert spec.source == path
    assert all(text.strip() for text in spec.to_json()["prompts"].values())


def test_example_goals_are_the_four_documented_ones() -> None:
    assert [p.name for p in GOALS] == ["conference.yaml", "japan.yaml", "tiny.yaml", "todo-cli.yaml"]


def test_japan_spec_says_what_the_issue_asks() -> None:
    spec = load_spec(ROOT / "goals" / "japan.yaml")
    constraints = spec.to_json()["constraints"]
    assert {"kind": "sum", "field": "days", "total": 14, "applies_to": "root"} in constraints
    assert {"kind": "mention", "terms": ["Tokyo", "Kyoto"], "applies_to": "root"} in constraints
    assert spec.roles.decomposer.strategies == ("geography", "activity", "days")
    assert (spec.roles.scorer.count, spec.roles.executor.count, spec.roles.observer.count) == (3, 2, 1)
    assert (spec.quorum, spec.quorum_size(), spec.tree.max_depth) == ("majority", 2, 2)


def test_minimal_spec_gets_every_default(tmp_path: Path) -> None:
    path = write(tmp_path, "goal: Plan a picnic\n" + ROLES, name="picnic.yaml")
    data = load_spec(path).to_json()
    prompts = data.pop("prompts")
    assert set(prompts) == {"decompose", "refine", "score", "execute", "summarize"}
    assert data == {
        "version": 1,
        "name": "picnic",
        "goal": "Plan a picnic",
        "context": "",
        "constraints": [],
        "quorum": "majority",
        "roles": {
            "decomposer": {"count": 2, "strategies": list(DEFAULT_STRATEGIES)},
            "scorer": {"count": 3, "lenses": ["feasibility", "coverage", "specificity"]},
            "executor": {"count": 1},
            "observer": {"count": 1},
        },
        "tree": {
            "max_depth": 2,
            "min_children": 2,
            "max_children": 6,
            "max_revisions": 2,
            "approve_threshold": 60,
            "select": "best",
            "ballot_wait": 600.0,
        },
        "review": {"results": True, "revisions": 1, "rivals": 1, "summaries": True},
        "model": {
            "backend": "gpt4all",
            "file": None,
            "name": None,
            "temperature": 0.0,
            "top_k": 1,
            "seed": 42,
            "repeat_penalty": 1.1,
            "threads": 0,
            "cassette": None,
            "max_tokens": {"decompose": 400, "refine": 400, "score": 120, "execute": 300, "summarize": 200},
            "model_weight": 0.2,
        },
        "network": {"listen": "/ip4/127.0.0.1/tcp/0", "bootstrap": [], "mdns": False, "topic": None},
        "access": {"mode": "launcher", "peers": [], "secret_env": "SPECSWARM_SECRET"},
        "budget": {"seconds": 900, "settle_seconds": 1.0, "claim_timeout": 180},
        "output": {"format": "markdown", "template": None},
    }
    assert list(data) == [
        "version",
        "name",
        "goal",
        "context",
        "constraints",
        "quorum",
        "roles",
        "tree",
        "review",
        "model",
        "network",
        "access",
        "budget",
        "output",
    ]


def test_paths_are_resolved_against_the_spec_and_templates_inlined(tmp_path: Path) -> None:
    write(tmp_path, "mine: {{ goal }}\n", name="sub/p/decompose.j2")
    write(tmp_path, "{}\n", name="sub/rec/cassette.jsonl")
    write(tmp_path, "# {{ plan.goal }}\n", name="sub/out.md.j2")
    path = write(
        tmp_path,
        textwrap.dedent("""\
        goal: Plan a picnic
        prompts: {decompose: p/decompose.j2}
        model: {backend: replay, cassette: rec/cassette.jsonl}
        output: {template: out.md.j2}
        """)
        + ROLES,
        name="sub/spec.yaml",
    )
    spec = load_spec(path)
    assert spec.prompts.decompose == "mine: {{ goal }}\n"
    assert spec.model.cassette == tmp_path / "sub" / "rec" / "cassette.jsonl"
    assert spec.output.template == tmp_path / "sub" / "out.md.j2"
    assert spec.to_json()["model"]["cassette"] == str(tmp_path / "sub" / "rec" / "cassette.jsonl")


@pytest.mark.parametrize("path", GOALS, ids=lambda p: p.name)
def test_to_json_round_trips_through_spec_from_json(path: Path) -> None:
    spec = load_spec(path)
    wire = json.loads(json.dumps(spec.to_json()))  # as it travels in the run event
    again = spec_from_json(wire)
    assert again == spec
    assert again.source is None
    assert again.to_json() == spec.to_json()


@pytest.mark.parametrize(
    ("quorum", "scorers", "size"),
    [
        ("majority", 3, 2),
        ("majority", 4, 3),
        ("majority", 1, 1),
        ("all", 5, 5),
        (2, 3, 2),
        (3, 3, 3),
        (0.5, 4, 2),
        (0.66, 4, 3),
        (0.7, 10, 7),
        (1.0, 3, 3),
        (0.1, 3, 1),
    ],
)
def test_quorum_size(tmp_path: Path, quorum: object, scorers: int, size: int) -> None:
    path = write(
        tmp_path,
        f"""\
        goal: Plan a picnic
        quorum: {quorum}
        roles:
          decomposer: {{count: 1}}
          scorer: {{count: {scorers}}}
          executor: {{count: 1}}
        """,
    )
    spec = load_spec(path)
    assert spec.quorum == quorum
    assert spec.quorum_size() == size


def test_strategies_repeat_and_default(tmp_path: Path) -> None:
    declared = load_spec(
        write(
            tmp_path,
            """\
        goal: Plan a picnic
        roles:
          decomposer: {count: 3, strategies: [food, place]}
          scorer: {count: 1}
          executor: {count: 1}
        """,
        )
    )
    assert [declared.strategy_for(i) for i in range(3)] == ["food", "place", "food"]
    default = load_spec(write(tmp_path, "goal: Plan a picnic\n" + ROLES, name="d.yaml"))
    assert [default.strategy_for(i) for i in range(4)] == [*DEFAULT_STRATEGIES, "by parts"]


def test_spec_is_frozen_and_hashable(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, "goal: Plan a picnic\n" + ROLES))
    with pytest.raises(AttributeError):
        spec.goal = "other"  # type: ignore[misc]
    assert isinstance(hash(spec), int)
    assert isinstance(spec, GoalSpec)


# --------------------------------------------------------------------------- problems


def test_three_problems_each_with_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        goal: Plan a trip
        roles:
          decomposer:
            count: 2
          scorer:
            count: three
        tree:
          max_dept: 3
        """,
    )
    assert problems_of(path) == [
        f"{path}:2: roles: missing required field 'executor'",
        f"{path}:6: roles.scorer.count: 'three' is not of type integer (expected an integer >= 1)",
        f"{path}:8: tree.max_dept: unknown key (expected one of: max_depth, min_children, "
        "max_children, max_revisions, approve_threshold, select, ballot_wait; did you mean max_depth?)",
    ]


def test_error_text_is_one_line_per_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "goal: ''\nquorum: none\n" + ROLES)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert str(info.value).splitlines() == [
        f"{path}:1: goal: '' is too short (expected a non-empty string)",
        f"{path}:2: quorum: 'none' is not valid "
        "(expected 'majority', 'all', an integer >= 1 or a number in (0, 1])",
    ]


def test_non_finite_numbers_are_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, "goal: Plan a trip\nmodel: {temperature: .nan}\nbudget: {seconds: .inf}\n" + ROLES)
    assert problems_of(path) == [
        f"{path}:2: model.temperature: nan is not allowed (expected a finite number)",
        f"{path}:3: budget.seconds: inf is not allowed (expected a finite number)",
    ]


def test_children_limits_against_a_default(tmp_path: Path) -> None:
    path = write(tmp_path, "goal: Plan a trip\ntree: {max_children: 1}\n" + ROLES)
    assert problems_of(path) == [
        f"{path}:2: tree.max_children: max_children 1 is smaller than the default "
        "min_children 2 (expected at least 2)",
    ]


def test_missing_goal_points_at_the_document(tmp_path: Path) -> None:
    path = write(tmp_path, "# a comment\n" + ROLES)
    assert problems_of(path) == [f"{path}:2: (root): missing required field 'goal'"]


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    assert problems_of(path) == [
        f"{path}:1: (root): the file is empty (expected a mapping with at least 'goal' and 'roles')"
    ]


def test_unreadable_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert problems_of(missing) == [
        f"{missing}:1: (root): cannot read the spec file: No such file or directory"
    ]


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"goal: Plan a trip\ncontext: caf\xe9\n")
    assert problems_of(path) == [f"{path}:2: (root): byte 0xe9 is not UTF-8 (expected a UTF-8 text file)"]


def test_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        goal: Plan a trip
        roles:
          decomposer: &one {count: 1}
          scorer:
            <<: *one
            count: 3
          executor: *one
        """,
    )
    assert load_spec(path).roles.scorer.count == 3


def test_default_prompt_templates_exist() -> None:
    from specswarm.resources import template_dir

    for task in ("decompose", "refine", "score", "execute", "summarize"):
        assert (template_dir() / "prompts" / f"{task}.j2").is_file()


def _expectation(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.fullmatch(r"# expect: (\d+: .+)", first)
    assert match, f"{path.name}: the first line must be '# expect: LINE: path: message'"
    return match.group(1).replace("{folder}", str(path.resolve().parent))  # no machine's path in a case


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_spec_corpus(path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert f"{path}:{_expectation(path)}" in str(info.value)


def test_the_corpus_covers_the_documented_kinds_of_breakage() -> None:
    names = {p.stem for p in BROKEN}
    assert names >= {
        "bad-yaml-syntax",
        "wrong-type",
        "unknown-key",
        "quorum-too-large",
        "missing-template",
        "jinja-syntax-error",
        "empty",
        "top-level-list",
        "duplicate-key",
        "negative-count",
        "fraction-too-large",
        "replay-without-cassette",
        "template-undefined-name",
        "template-undefined-attribute",
        "template-bad-filter",
        "template-block-syntax-error",
        "template-missing-block",
        "template-unknown-task",
    }


# --------------------------------------------------------------------------- spec_from_json


def test_spec_from_json_validates_too() -> None:
    data = load_spec(ROOT / "goals" / "tiny.yaml").to_json()
    data["roles"]["scorer"]["count"] = 0
    data["prompts"]["score"] = "{{ proposal }"
    del data["prompts"]["refine"]
    del data["name"]
    data["colour"] = "red"
    with pytest.raises(SpecError) as info:
        spec_from_json(data, source="run 0123")
    assert str(info.value).splitlines() == [
        "run 0123:0: (root): missing required field 'name'",
        "run 0123:0: colour: unknown key (expected one of: version, name, goal, context, language, "
        "constraints, quorum, roles, prompts, tree, review, model, network, access, budget, output, cache)",
        "run 0123:0: prompts: missing required field 'refine' (expected the template text)",
        "run 0123:0: prompts.score: Jinja2 syntax error in prompts.score:1: unexpected '}'",
        "run 0123:0: roles.scorer.count: 0 is less than the minimum 1 (expected an integer >= 1)",
    ]


def test_spec_from_json_rejects_a_non_mapping() -> None:
    with pytest.raises(SpecError, match=r"^<run event>:0: \(root\): the spec is a list"):
        spec_from_json([1, 2])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- CLI


def test_cli_validate_accepts_every_example_goal() -> None:
    result = CliRunner().invoke(app, ["validate", *map(str, GOALS)])
    assert result.exit_code == 0, result.output
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == list(map(str, GOALS))


def test_cli_validate_reports_every_problem_on_stderr_and_exits_2(tmp_path: Path) -> None:
    bad = ROOT / "tests" / "specs" / "wrong-type.yaml"
    good = ROOT / "goals" / "tiny.yaml"
    result = CliRunner().invoke(app, ["validate", str(good), str(bad)])
    assert result.exit_code == 2
    assert result.stdout == f"{good}: ok (tiny: 'Plan a relaxed Saturday afternoon in a city park')\n"
    assert result.stderr == f"{bad}:{_expectation(bad)}\n"
