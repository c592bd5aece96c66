"""``specswarm init``: every kind writes a spec that validates, the goal survives any quoting, an
existing file is kept unless --force, the goal is asked for on a terminal; and every spec in
goals/ (and every one init writes) starts with the yaml-language-server schema line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from specswarm.cli import app
from specswarm.cli import init as init_module
from specswarm.cli.init import KINDS, SCHEMA_LINE, place_names, schema_ref, slug, trip_days, yaml_scalar
from specswarm.resources import schema_path
from specswarm.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
GOALS = sorted((ROOT / "goals").glob("*.yaml"))
TRICKY = [
    'Plan: a "quiet" week in Lisbon & Porto #2',
    "it's a {trip}, [really]: yes",
    "- 2024",
    "yes",
    "Zürich ☕ → Genève, 3 days",
    "%TAG ! @home * &anchor",
]


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_writes_a_spec_that_validates(kind: str, tmp_path: Path) -> None:
    target = tmp_path / f"{kind}.yaml"
    goal = "Plan a ten-day trip to Lisbon and Porto"
    code, out, err = invoke("init", str(target), "--kind", kind, "--goal", goal)
    assert code == 0, err
    assert out == f"{target}: ok ({kind}: {goal!r})\n"  # the validate line, from load_spec
    text = target.read_text(encoding="utf-8")
    assert text.startswith(SCHEMA_LINE)
    assert "{{" not in text and "{%" not in text
    spec = load_spec(target)
    assert spec.goal == goal and spec.name == kind
    code, out, err = invoke("validate", str(target))
    assert code == 0, err
    assert out.startswith(f"{target}: ok")


def test_the_kinds_differ_where_they_should(tmp_path: Path) -> None:
    specs = {}
    for kind in KINDS:
        target = tmp_path / f"{kind}.yaml"
        assert invoke("init", str(target), "-k", kind, "-g", "Plan a week in Rome and Florence")[0] == 0
        specs[kind] = load_spec(target)
    trip = specs["trip"]
    assert [(c.kind, c.field, c.total) for c in trip.constraints if c.kind == "sum"] == [("sum", "days", 7)]
    assert [c.terms for c in trip.constraints if c.kind == "mention"] == [("Rome", "Florence")]
    assert specs["software"].output.format == "spec"
    assert specs["software"].quorum == 2
    assert specs["event"].tree.max_depth == 2
    assert specs["event"].roles.scorer.count == 4
    assert not specs["blank"].constraints


def test_a_goal_with_colons_quotes_and_hashes_reads_back_as_typed(tmp_path: Path) -> None:
    for i, goal in enumerate(TRICKY):
        target = tmp_path / f"g{i}.yaml"
        code, _, err = invoke("init", str(target), "--kind", "trip", "--goal", goal)
        assert code == 0, err
        assert load_spec(target).goal == goal


@pytest.mark.parametrize("text", [*TRICKY, "x\u2028y", "tab\there", "null", "~", "'", '"', "1e3", "a: b"])
def test_yaml_scalar_loads_back(text: str) -> None:
    scalar = yaml_scalar(text)
    assert "\n" not in scalar
    assert yaml.safe_load(f"goal: {scalar}  # a comment\n") == {"goal": text}


def test_a_goal_over_several_lines_becomes_one_line(tmp_path: Path) -> None:
    target = tmp_path / "spec.yaml"
    assert invoke("init", str(target), "--goal", "Plan a party\n  for   twenty friends ")[0] == 0
    assert load_spec(target).goal == "Plan a party for twenty friends"


def test_an_existing_file_is_kept_without_force(tmp_path: Path) -> None:
    target = tmp_path / "spec.yaml"
    target.write_text("mine\n", encoding="utf-8")
    code, out, err = invoke("init", str(target), "--goal", "Plan a party")
    assert code == 2
    assert out == ""
    assert err == f"{target} exists; pass --force to overwrite it\n"
    assert target.read_text(encoding="utf-8") == "mine\n"
    code, _, err = invoke("init", str(target), "--goal", "Plan a party", "--force")
    assert code == 0, err
    assert load_spec(target).goal == "Plan a party"


def test_the_default_file_is_named_after_the_goal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("init", "--kind", "trip", "--goal", "Plan a two-week trip to Japan")
    assert code == 0, err
    assert out.startswith("two-week-trip-japan.yaml: ok (two-week-trip-japan: ")
    assert load_spec(tmp_path / "two-week-trip-japan.yaml").constraints[0].total == 14
    code, _, err = invoke("init", "--goal", "Plan a two-week trip to Japan")
    assert code == 2
    assert "two-week-trip-japan.yaml exists; pass --force" in err


def test_interactive_run_asks_for_the_goal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(init_module, "stdin_is_terminal", lambda: True)
    target = tmp_path / "event.yaml"
    code, out, err = invoke("init", str(target), "--kind", "event", input="Organize a meetup: 80 people\n")
    assert code == 0, err
    assert "Goal (one sentence)" in out
    assert out.endswith(f"{target}: ok (event: 'Organize a meetup: 80 people')\n")
    assert load_spec(target).goal == "Organize a meetup: 80 people"


def test_no_goal_and_no_terminal_is_a_usage_error(tmp_path: Path) -> None:
    code, out, err = invoke("init", str(tmp_path / "x.yaml"))
    assert code == 2
    assert err == "no goal: pass --goal TEXT (on a terminal, init asks for it)\n"
    assert not (tmp_path / "x.yaml").exists()
    code, _, err = invoke("init", str(tmp_path / "x.yaml"), "--goal", "  \n ")
    assert code == 2 and "the goal is empty" in err


def test_schema_line_is_relative_inside_the_checkout_else_absolute(tmp_path: Path) -> None:
    assert schema_ref(ROOT / "goals" / "new.yaml") == "../schemas/goal.schema.json"
    assert schema_ref(ROOT / "new.yaml") == "schemas/goal.schema.json"
    assert schema_ref(tmp_path / "new.yaml") == schema_path("goal.schema.json").resolve().as_posix()
    target = tmp_path / "s.yaml"
    assert (
        invoke("init", str(target), "-g", "Plan it", "--schema", "https://example.org/goal.schema.json")[0]
        == 0
    )
    assert target.read_text(encoding="utf-8").startswith(
        f"{SCHEMA_LINE}https://example.org/goal.schema.json\n"
    )


def test_every_example_goal_starts_with_the_schema_line() -> None:
    assert GOALS
    for path in GOALS:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first == f"{SCHEMA_LINE}../schemas/goal.schema.json", f"{path.name}: first line is {first!r}"
        ref = first.removeprefix(SCHEMA_LINE)
        assert (path.parent / ref).resolve() == schema_path("goal.schema.json").resolve()
        load_spec(path)  # the comment line is only a comment


@pytest.mark.parametrize(
    ("goal", "days"),
    [
        ("Plan a two-week trip to Japan", 14),
        ("Plan a 10-day trip to Peru", 10),
        ("Plan 3 weeks in Chile", 21),
        ("Plan a week in Rome", 7),
        ("Plan a long weekend in Berlin", 3),
        ("Plan a weekend in Paris", 2),
        ("Plan a fortnight in Crete", 14),
        ("Plan a trip to Japan", None),
    ],
)
def test_trip_days(goal: str, days: int | None) -> None:
    assert trip_days(goal) == days


def test_place_names_and_slug() -> None:
    assert place_names("Plan a week in New York and Boston in April") == ["New York", "Boston"]
    assert place_names("Plan A Trip To Japan") == []  # Title Case says nothing
    assert place_names("Visit Japan's temples") == ["Japan"]
    assert place_names("Rome in a week") == []  # the first word is never taken for a name
    assert slug("Plan a two-week trip to Japan!") == "two-week-trip-japan"
    assert slug("Café crème: a day") == "cafe-creme-day"
    assert slug("???") == "goal"
