"""``specswarm diff OLD.json NEW.json``: content changes node by node, matched by title then by
place; run ids, peer ids, digests, votes and ids never count; exit 0 same, 1 different, 2 unreadable."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from specswarm.cli import app
from specswarm.plan.fold import fold
from specswarm.protocol.events import read_event_log
from specswarm.render import render_plan
from specswarm.render.diff import (
    MAX_LINES,
    ContentNode,
    diff_plans,
    format_changes,
    match_children,
    parse_plan,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
JAPAN = "Plan a two-week trip to Japan"


def exported(log: str) -> dict[str, Any]:
    text = render_plan(fold(read_event_log(FIXTURES / f"{log}-events.jsonl").events), "json")
    data: dict[str, Any] = json.loads(text)
    return data


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def child(node: dict[str, Any], title: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in node["children"] if c["title"] == title)
    return found


def scrub_identities(data: dict[str, Any]) -> dict[str, Any]:
    """Another run of the same content: every id, peer, digest, vote and tally changed."""
    other = copy.deepcopy(data)
    other["run_id"] = "f" * 32
    other["digest"] = "e" * 64
    other["participants"] = []
    other["event_counts"] = {"vote": 999}

    def walk(node: dict[str, Any], n: int) -> None:
        node["id"] = f"{n:016x}.0" if node["id"] != "root" else "root"
        node["proposed_by"] = None
        node["alternatives"] = []
        if node["accepted"]:
            node["accepted"]["votes"] = []
            node["accepted"]["tally"]["mean_score"] = 1
        if node.get("result"):
            node["result"]["id"] = "d" * 64
            node["result"]["author"] = "someone else"
            node["result"]["model"] = "another model"
            node["claim"] = "c" * 64
        for i, c in enumerate(node["children"]):
            walk(c, n * 10 + i + 1)

    walk(other["root"], 0)
    return other


def test_the_same_plan_is_no_change(tmp_path: Path) -> None:
    data = exported("japan")
    old, new = write(tmp_path / "old.json", data), write(tmp_path / "new.json", scrub_identities(data))
    code, out, err = invoke("diff", str(old), str(new))
    assert (code, err) == (0, "")
    assert out == f"--- {old}\n+++ {new}\nno content changes\n"


def test_a_hand_edited_plan_shows_each_change(tmp_path: Path) -> None:
    data = exported("japan")
    edited = copy.deepcopy(data)
    root = edited["root"]
    tokyo = child(root, "Tokyo")
    tokyo["title"] = "Tokyo and Yokohama"  # rewritten in place: matched by position
    tokyo["facts"] = {"days": 5}
    nikko = child(tokyo, "Day trip to Nikko")
    nikko["result"]["output"] = nikko["result"]["output"].replace("Nikko day trip", "Kamakura day trip")
    kyoto = child(root, "Kyoto")
    kyoto["children"] = [c for c in kyoto["children"] if c["title"] != "Arashiyama and Kinkaku-ji"]
    nara = child(root, "Nara and Osaka")
    extra = copy.deepcopy(nara["children"][0])
    extra["title"], extra["detail"] = "Kobe for an evening", "Beef and the harbour."
    nara["children"].append(extra)
    child(root, "Mount Fuji and Hakone")["detail"] = "Two days by the mountain."

    old, new = write(tmp_path / "old.json", data), write(tmp_path / "new.json", edited)
    code, out, err = invoke("diff", str(old), str(new))
    assert code == 1, err
    lines = out.splitlines()
    assert lines[:2] == [f"--- {old}", f"+++ {new}"]
    tk = f"{JAPAN} > Tokyo and Yokohama"
    assert lines[2:9] == [
        f"~ {tk}: title rewritten",
        "    - Tokyo",
        "    + Tokyo and Yokohama",
        f"~ {tk}: facts rewritten",
        "    - days: 4",
        "    + days: 5",
        f"~ {tk} > Day trip to Nikko: result rewritten",
    ]
    assert "    - Day 4: Nikko day trip." in lines and "    + Day 4: Kamakura day trip." in lines
    assert f"~ {JAPAN} > Mount Fuji and Hakone: detail rewritten" in lines
    assert f"- {JAPAN} > Kyoto > Arashiyama and Kinkaku-ji" in lines
    assert f"+ {JAPAN} > Nara and Osaka > Kobe for an evening" in lines
    assert lines[-1] == "6 change(s): 1 node(s) added, 1 removed, 4 rewritten"


def test_children_are_matched_by_title_before_place() -> None:
    def node(title: str) -> ContentNode:
        return ContentNode(title, "", (), True, None, ())

    old = [node("A"), node("B"), node("C")]
    new = [node("c"), node("A"), node("X"), node("D")]  # C moved (case ignored), B became X, D is new
    pairs, removed, added = match_children(old, new)
    assert pairs == [(0, 1), (1, 2), (2, 0)]
    assert (removed, added) == ([], [3])
    changes = diff_plans(
        ContentNode("R", "", (), False, None, tuple(old)), ContentNode("R", "", (), False, None, tuple(new))
    )
    assert [(c.kind, c.path, c.field) for c in changes] == [
        ("reordered", ("R",), "children"),
        ("rewritten", ("R", "c"), "title"),
        ("rewritten", ("R", "X"), "title"),
        ("added", ("R", "D"), None),
    ]
    assert changes[0].old == "A; B; C" and changes[0].new == "c; A; X; D"


def test_a_removed_subtree_lists_every_node(tmp_path: Path) -> None:
    data = exported("todo")
    edited = copy.deepcopy(data)
    edited["root"]["children"] = [
        c for c in edited["root"]["children"] if c["title"] != "Command-line interface"
    ]
    changes = diff_plans(parse_plan(json.dumps(data)), parse_plan(json.dumps(edited)))
    goal = data["root"]["title"]
    assert [(c.kind, c.path[1:]) for c in changes] == [
        ("removed", ("Command-line interface",)),
        ("removed", ("Command-line interface", "Core commands: add, list, done, edit, rm")),
        ("removed", ("Command-line interface", "Filters and output formats")),
    ]
    assert all(c.path[0] == goal for c in changes)


def test_a_partial_plan_against_its_completion(tmp_path: Path) -> None:
    partial = exported("partial")
    done = copy.deepcopy(partial)
    leaf = child(child(done["root"], "Venue and logistics"), "Wi-Fi and power")
    leaf["result"] = {
        "id": "a" * 64,
        "author": "x",
        "output": "- Two 1 Gbit lines\n- 40 power strips",
        "model": "m",
    }
    text = format_changes(diff_plans(parse_plan(json.dumps(partial)), parse_plan(json.dumps(done))), "a", "b")
    assert text.splitlines()[2:] == [
        f"~ {partial['root']['title']} > Venue and logistics > Wi-Fi and power: result added",
        "    + - Two 1 Gbit lines",
        "    + - 40 power strips",
        "1 change(s): 0 node(s) added, 0 removed, 1 rewritten",
    ]


def test_a_long_rewrite_is_cut(tmp_path: Path) -> None:
    old = ContentNode("R", "\n".join(f"line {i}" for i in range(100)), (), True, None, ())
    new = ContentNode("R", "", (), True, None, ())
    lines = format_changes(diff_plans(old, new), "a", "b").splitlines()
    assert lines[2] == "~ R: detail removed"
    assert lines[3 + MAX_LINES] == f"    ... {100 - MAX_LINES} more line(s)"


def test_plans_without_a_root() -> None:
    data = exported("japan")
    empty = {**data, "root": None}
    root = parse_plan(json.dumps(data))
    assert diff_plans(None, None) == []
    added = diff_plans(parse_plan(json.dumps(empty)), root)
    assert {c.kind for c in added} == {"added"} and len(added) == data["progress"]["nodes"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the plan: No such file or directory"),
        ("{not json", "line 1: not JSON: Expecting property name enclosed in double quotes"),
        (
            '{"format": "something/2"}',
            "not a plan export (expected a JSON object with format 'specswarm-plan/1'",
        ),
        ("[1, 2]", "not a plan export"),
        ('{"format": "specswarm-plan/1"}', "root: missing"),
        ('{"format": "specswarm-plan/1", "root": {"title": 3}}', "root.title: expected a str"),
        (b"\xff\xfe", "cannot read the plan: not UTF-8 text"),
    ],
)
def test_unreadable_input_is_one_line_and_exit_2(
    tmp_path: Path, content: str | bytes | None, message: str
) -> None:
    good = write(tmp_path / "good.json", exported("todo"))
    bad = tmp_path / "bad.json"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    elif content is not None:
        bad.write_text(content, encoding="utf-8")
    for args in ((bad, good), (good, bad)):
        code, out, err = invoke("diff", *map(str, args))
        assert code == 2
        assert out == ""
        assert err.startswith(f"{bad}: {message}"), err
        assert err.count("\n") == 1


def test_a_deep_field_error_names_its_place(tmp_path: Path) -> None:
    data = exported("japan")
    data["root"]["children"][2]["children"][0]["facts"] = {"days": [1]}
    with pytest.raises(ValueError, match=r"^root\.children\[2\]\.children\[0\]\.facts\.days: expected"):
        parse_plan(json.dumps(data))
