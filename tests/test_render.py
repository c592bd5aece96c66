"""Renderers: snapshot tests of every format for the fixture logs, schema checks, injection,
user templates and the ``specswarm render`` command.

The snapshots under ``__snapshots__/test_render/`` are committed: a change to a template
or to the fold shows up as a diff a reviewer can read (``pytest --snapshot-update`` to
accept it). The fixture logs are made by ``tests/make_fixtures.py``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from typer.testing import CliRunner

from specswarm.cli import app
from specswarm.plan.fold import Plan, child_id, fold
from specswarm.protocol.events import read_event_log
from specswarm.render import PlanSchemaError, TemplateError, check_plan_json, render_plan
from specswarm.render.export import export_data
from specswarm.render.filters import bullets, md_inline, md_item, md_quote, md_text, mermaid_label, prose
from specswarm.testing.synth import Swarm, complete_swarm, minimal_spec

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
LOGS = ["japan", "todo", "partial"]


class MarkdownSnapshotExtension(SingleFileSnapshotExtension):
    """One readable ``.md`` file per snapshot."""

    file_extension = "md"
    _write_mode = WriteMode.TEXT


class JSONTextSnapshotExtension(JSONSnapshotExtension):
    """The JSON export stored exactly as rendered (it is already key-sorted and indented)."""

    def serialize(self, data: Any, **kwargs: Any) -> str:
        assert isinstance(data, str)
        return data


@pytest.fixture
def md_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(MarkdownSnapshotExtension)


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONTextSnapshotExtension)


@cache
def load(name: str) -> Plan:
    """The folded fixture log ``name`` (plans are immutable, so one fold per session)."""
    log = read_event_log(FIXTURES / f"{name}-events.jsonl")
    assert log.rejected == []
    return fold(log.events)


# -- snapshots ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LOGS)
def test_markdown(name: str, md_snapshot: SnapshotAssertion) -> None:
    assert render_plan(load(name), "markdown") == md_snapshot


@pytest.mark.parametrize("name", LOGS)
def test_spec(name: str, md_snapshot: SnapshotAssertion) -> None:
    assert render_plan(load(name), "spec") == md_snapshot


@pytest.mark.parametrize("name", LOGS)
def test_json(name: str, json_snapshot: SnapshotAssertion) -> None:
    assert render_plan(load(name), "json") == json_snapshot


def test_fixture_logs_are_reproducible(monkeypatch: pytest.MonkeyPatch) -> None:
    """The committed logs are exactly what tests/make_fixtures.py writes."""
    spec = importlib.util.spec_from_file_location("make_fixtures", HERE / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "make_fixtures", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    for file_name, text in module.build_all().items():
        assert (FIXTURES / file_name).read_text(encoding="utf-8") == text, file_name


def test_fixtures_cover_the_statuses() -> None:
    statuses = {n.status for name in LOGS for n in load(name).walk()}
    assert statuses == {"split", "voting", "open", "done", "claimed", "unclaimed"}
    proposals = {p.status for name in LOGS for n in load(name).walk() for p in n.proposals}
    assert proposals == {"accepted", "rejected", "outvoted", "pending"}


# -- JSON and its schema ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "plan",
    [
        pytest.param(load("japan"), id="japan"),
        pytest.param(load("partial"), id="partial"),
        pytest.param(fold(complete_swarm(seed=3, fanout=2, depth=3).events), id="synthetic-depth-3"),
        pytest.param(fold(Swarm(seed=4).events), id="run-only"),
        pytest.param(fold([]), id="no-events"),
    ],
)
def test_json_export_is_sorted_and_valid(plan: Plan) -> None:
    text = render_plan(plan, "json")
    data = json.loads(text)
    check_plan_json(data)
    assert text == json.dumps(export_data(plan), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    # the export adds the schedule (when there is one) to Plan.to_json() and nothing else
    assert {k: v for k, v in data.items() if k != "schedule"} == plan.to_json()


@pytest.mark.parametrize(
    "mutate, where",
    [
        (
            lambda d: d.update(extra=1),
            "(plan): Additional properties are not allowed ('extra' was unexpected)",
        ),
        (lambda d: d["root"]["children"][0].update(result=None), "root/children/0"),
        (lambda d: d["root"]["children"][0]["children"][0].pop("claim"), "root/children/0/children/0"),
        (lambda d: d["root"]["accepted"]["votes"][0].update(score=101), "root/accepted/votes/0/score"),
        (lambda d: d["root"].update(status="done"), "root/status"),
    ],
)
def test_schema_is_strict(mutate: Any, where: str) -> None:
    data = load("japan").to_json()
    mutate(data)
    with pytest.raises(PlanSchemaError, match="a bug in specswarm") as info:
        check_plan_json(data)
    assert where in str(info.value)


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match=r"^fmt must be one of markdown, json, spec; got 'html'$"):
        render_plan(load("todo"), "html")


# -- model text is data ----------------------------------------------------------------------

HOSTILE = (
    "{{ 7*7 }} {% for x in range(3) %}loop{% endfor %} {# c #}\n"
    "# Injected heading\n</details><script>alert(1)</script>\n"
    '```\nunclosed fence "quoted" [bracket] {brace} (paren); end'
)


def hostile_plan() -> Plan:
    """A converged run in which every text a peer or model wrote is hostile."""
    sw = Swarm(spec=minimal_spec(goal="# {{ goal }}", context=HOSTILE), seed=9)
    dec, scorers, ex = sw.peers["decomposer"][0], sw.peers["scorer"], sw.peers["executor"][0]
    children = [
        {
            "title": HOSTILE.replace("\n", " ")[:200],
            "detail": HOSTILE,
            "leaf": True,
            "facts": {"{{ k }}": "{% v %}"},
        },
        {"title": "1. Plain [title]", "detail": "ok", "leaf": True, "facts": {}},
    ]
    prop = sw.emit(
        dec,
        "proposal",
        {"node": "root", "strategy": "{{ s }}", "children": children, "revises": None, "rationale": HOSTILE},
    )
    for s in scorers:
        sw.emit(
            s,
            "vote",
            {
                "proposal": prop.id,
                "approve": True,
                "score": 90,
                "critique": HOSTILE,
                "checks": [{"name": "{{ n }}", "score": 1, "passed": False, "note": HOSTILE}],
                "model_score": None,
            },
        )
    for i in range(2):
        claim = sw.claim(ex, child_id(prop.id, i))
        sw.result(ex, child_id(prop.id, i), claim, output=HOSTILE)
    return fold(sw.events)


@pytest.mark.parametrize("fmt", ["markdown", "spec"])
def test_template_syntax_in_model_text_renders_literally(fmt: str) -> None:
    text = render_plan(hostile_plan(), fmt)
    assert "{{ 7*7 }}" in text
    assert not re.search(r"(?<![\w…])49(?!\w)", text)
    assert "{% for x in range(3) %}loop{% endfor %}" in text
    assert "looploop" not in text
    assert "{{ goal }}" in text


@pytest.mark.parametrize("fmt", ["markdown", "spec"])
def test_model_text_cannot_break_the_markdown(fmt: str) -> None:
    text = render_plan(hostile_plan(), fmt)
    lines = text.splitlines()
    # No heading, raw tag or code fence comes from model text: the only headings are ours.
    assert not any(line.lstrip("> ").startswith("# Injected") for line in lines)
    assert "<script>" not in text and "</details><" not in text
    assert text.count("<details>") == text.count("</details>")
    # Fences outside block quotes are ours (the Mermaid diagram) and all closed.
    ours = [line for line in lines if line.startswith("```")]
    assert len(ours) % 2 == 0
    assert lines[0].startswith("# ") and lines[0].endswith(" \\# {{ goal }}")
    assert "\n\n\n" not in text


def _diagram(text: str) -> str:
    return text.split("```mermaid\n", 1)[1].split("\n```", 1)[0]


def test_mermaid_labels_are_sanitized() -> None:
    diagram = _diagram(render_plan(hostile_plan(), "markdown"))
    for line in diagram.splitlines()[1:]:
        m = re.fullmatch(r'  (n\d+)(\["|\(\[")(.*?)("\]|"\]\))', line)
        if m is None:
            assert re.fullmatch(r"  n\d+ --> n\d+|  classDef .*|  class [n\d,]+ \w+", line), line
            continue
        label = re.sub(r"#(?:\d+|quot|lt|gt|amp);", "", m.group(3).replace("<br/>", " "))
        assert not re.search(r'["<>#`&]', label), line


@pytest.mark.parametrize(
    "text, expected",
    [
        ('say "hi" [x] {y} <z>\nnext', "say #quot;hi#quot; [x] {y} #lt;z#gt; next"),
        ("a; b # c `d` & e", "a; b #35; c #96;d#96; #amp; e"),
        ("A very long title that goes on and on and on", "A very long title that goes on<br/>and on and on"),
        ("दिल्ली में पुराने किले और जामा मस्जिद की सैर", "दिल्ली में पुराने किले और जामा मस्जिद<br/>की सैर"),
        ("Supercalifragilisticexpialidocious-and-on x", "Supercalifragilisticexpialidocious-and-on<br/>x"),
        ("***", "***"),
        (" \t\n", "(untitled)"),
    ],
)
def test_mermaid_label(text: str, expected: str) -> None:
    assert mermaid_label(text) == expected
    entity = {"quot": '"', "lt": "<", "gt": ">", "amp": "&", "35": "#", "96": "`"}
    shown = re.sub(r"#(\w+);", lambda m: entity[m.group(1)], expected.replace("<br/>", " "))
    assert shown == " ".join(text.split()) or expected == "(untitled)"  # every character kept


def test_markdown_filters() -> None:
    assert md_inline("# title\nmore") == "\\# title more"
    assert md_inline("1. first") == "1\\. first"
    assert md_inline("a <b>bold</b> < c") == "a &lt;b>bold&lt;/b> < c"
    assert md_text("para\n---\n# h\n<div>") == "para\n\\---\n\\# h\n&lt;div>"
    # A closed fence is kept, verbatim inside; an unclosed one is escaped.
    assert md_text("x\n```py\n# comment <a>\n```") == "x\n```py\n# comment <a>\n```"
    assert md_text("x\n```py\n# comment\n```py") == "x\n\\```py\n\\# comment\n\\```py"
    assert md_quote("- a\n  b\nafter\n## h") == "> - a\n>   b\n>\n> after\n> \\## h"
    # a code span is shown as written (an entity in it would show as "&lt;"); a backtick after a
    # backslash opens none, so the tag after it is escaped
    assert md_inline("`<task_id>` and <b>") == "`<task_id>` and &lt;b>"
    assert md_inline("\\`<b>\\` x") == "\\`&lt;b>\\` x"
    assert md_inline("`` a ` <i> `` <i>") == "`` a ` <i> `` &lt;i>"
    assert md_text("use `<id>` not <id>") == "use `<id>` not &lt;id>"


def test_a_code_block_under_a_list_item_stays_a_block_of_that_item() -> None:
    text = (
        "- **Usage**:\n  ```sh\n  todo done <id>\n  # prints Done\n  ```\n  then exit 0\n- **Errors**: exit 2"
    )
    items = bullets(text)
    assert len(items) == 2 and prose(text) == ""
    assert md_item(items[0]) == "**Usage**:\n  ```sh\n  todo done <id>\n  # prints Done\n  ```\n  then exit 0"
    assert md_item(items[1]) == "**Errors**: exit 2"
    # an unclosed fence is text, joined into its item as before (it cannot swallow the rest)
    items = bullets("- **Usage**:\n  ```sh\n  todo done <id>\n- next")
    assert items == ["**Usage**: ```sh todo done <id>", "next"]
    assert md_item(items[0]) == "**Usage**: ```sh todo done &lt;id>"


def test_the_spec_renders_a_leaf_s_code_block_as_code() -> None:
    sw = Swarm(spec=minimal_spec(), seed=5)
    ex = sw.peers["executor"][0]
    prop = sw.accept("root", ["Mark a task done", "Delete a task"], leaf=True, by=0)
    code = "- **Usage**:\n  ```sh\n  todo done <id>\n  ```\n- **Errors**: an unknown id exits 2"
    for i, output in enumerate([code, "- `todo rm <id>` removes it"]):
        claim = sw.claim(ex, child_id(prop.id, i))
        sw.result(ex, child_id(prop.id, i), claim, output=output)
    text = render_plan(fold(sw.events), "spec")
    assert (
        "- [ ] **Usage**:\n  ```sh\n  todo done <id>\n  ```\n- [ ] **Errors**: an unknown id exits 2" in text
    )
    assert "- [ ] `todo rm <id>` removes it" in text


# -- user templates -------------------------------------------------------------------------------


def test_user_template_overrides_the_builtin(tmp_path: Path) -> None:
    tmpl = tmp_path / "mine.md.j2"
    tmpl.write_text(
        '{% import "_macros.md.j2" as m %}{{ plan.goal }}: {{ tasks | length }} tasks, '
        "{{ m.status_line(plan) }}\n",
        encoding="utf-8",
    )
    plan = load("todo")
    expected = (
        "Build a command-line todo app that syncs between machines: 8 tasks, complete, 8 of 8 steps done\n"
    )
    assert render_plan(plan, "markdown", template=tmpl) == expected
    assert render_plan(plan, "spec", template=str(tmpl)) == expected


@pytest.mark.parametrize(
    "source, message",
    [
        ("{% for %}", r"bad\.j2:1: template syntax: "),
        ("{{ no_such_variable }}", r"bad\.j2: cannot render: 'no_such_variable' is undefined"),
        ("{{ ''.__class__.__mro__[1].__subclasses__() }}", r"bad\.j2: cannot render: "),
    ],
)
def test_bad_user_template(tmp_path: Path, source: str, message: str) -> None:
    tmpl = tmp_path / "bad.j2"
    tmpl.write_text(source, encoding="utf-8")
    with pytest.raises(TemplateError, match=message):
        render_plan(load("todo"), "markdown", template=tmpl)


def test_missing_user_template(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match=r"nope\.j2: output template not found$"):
        render_plan(load("todo"), "spec", template=tmp_path / "nope.j2")


# -- the command line -----------------------------------------------------------------------------


def test_cli_render_json() -> None:
    result = CliRunner().invoke(app, ["render", str(FIXTURES / "japan-events.jsonl"), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    check_plan_json(data)
    assert data["complete"] is True
    assert data["run_id"] == load("japan").run_id


def test_cli_render_reports_a_corrupted_line(tmp_path: Path) -> None:
    lines = (FIXTURES / "japan-events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    vote = next(i for i, line in enumerate(lines) if '"kind":"vote"' in line)
    lines[vote] = lines[vote].replace('"score":', '"score":1', 1)  # breaks the signature
    lines.insert(2, "{not json\n")
    log = tmp_path / "corrupt.jsonl"
    log.write_text("".join(lines), encoding="utf-8")
    result = CliRunner().invoke(app, ["render", str(log)])
    assert result.exit_code == 0, result.output
    assert "corrupt.jsonl: dropped 2 invalid event(s); first: line 3: malformed JSON" in result.stderr
    assert result.stdout.startswith("# Plan a two-week trip to Japan\n")


def test_a_fallback_acceptance_is_marked_in_every_view() -> None:
    """A split taken below the quorum (every chain of revisions used up, the best rejected one
    taken) says so in the Markdown, the live tree and the text tree."""
    from rich.console import Console

    from specswarm.render.live import plan_tree
    from specswarm.render.tree import tree_text

    roles = {"decomposer": {"count": 1, "strategies": ["by place"]}, "scorer": {"count": 2}}
    tree = {"max_depth": 1, "min_children": 1, "max_children": 6, "max_revisions": 0, "select": "first"}
    sw = Swarm(spec=minimal_spec(quorum="all", roles={**minimal_spec()["roles"], **roles}, tree=tree), seed=4)
    prop = sw.propose(sw.peers["decomposer"][0], "root", ["Alfama walk", "Belém day"], leaf=True)
    for s in sw.peers["scorer"]:
        sw.vote(s, prop, False, 50)
    sw.finish_leaves()
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted == prop.id
    text = render_plan(plan, "markdown")
    mark = "mean score 50; **accepted as the fallback**: no split reached 2 approving votes"
    assert mark in text
    console = Console(width=200, record=True)
    console.print(plan_tree(plan))
    assert "fallback, no split reached the quorum: 0/2" in console.export_text()
    assert "0/2 approve, fallback: no split reached the quorum]" in tree_text(plan)
