"""The docs site's generated reference pages (docs/gen_reference.py) name every CLI option and
argument of the typer app, every field of schemas/goal.schema.json and every event kind.

The pages are generated into a temporary directory; what each must hold is read here from the
app and the schemas directly, not from the generator, so a generator that skips something fails.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command

from specswarm.cli.app import app

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" / "gen_reference.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = tmp_path_factory.mktemp("site")
    gen.write(out)
    return {p.stem: p.read_text(encoding="utf-8") for p in (out / "reference").glob("*.md")}


def visible_commands() -> Iterator[tuple[str, Any]]:
    """(full name, command) of every command `--help` lists, subcommands included."""
    root = get_command(app)
    ctx_cls = type(typer.Context(root))

    def walk(group: Any, prefix: str) -> Iterator[tuple[str, Any]]:
        for name in group.list_commands(ctx_cls(group)):
            cmd = group.commands[name]
            if cmd.hidden:
                continue
            yield f"{prefix} {name}", cmd
            if hasattr(cmd, "commands"):
                yield from walk(cmd, f"{prefix} {name}")

    yield from walk(root, "specswarm")


COMMANDS = list(visible_commands())


def section(page: str, heading: str) -> str:
    """The text under '## `heading`' up to the next '## ' heading."""
    match = re.search(rf"^## `{re.escape(heading)}`\n(.*?)(?=^## |\Z)", page, re.M | re.S)
    assert match, f"no '## `{heading}`' section"
    return match.group(1)


@pytest.mark.parametrize(("full", "cmd"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_cli_option_and_argument_is_documented(pages: dict[str, str], full: str, cmd: Any) -> None:
    text = section(pages["cli"], full)
    for param in cmd.params:
        if param.hidden:
            continue
        names = [param.name.upper()] if param.param_type_name == "argument" else param.opts
        for name in names:
            assert f"`{name}`" in text, f"{full}: {name} is not on the CLI page"


def test_hidden_commands_stay_off_the_page(pages: dict[str, str]) -> None:
    root: Any = get_command(app)
    hidden = [n for n, c in root.commands.items() if c.hidden]
    assert hidden, "the app has a hidden command (peer-group); this test checks it stays internal"
    for name in hidden:
        assert f"`specswarm {name}`" not in pages["cli"]


def schema_paths(schema: dict[str, Any]) -> Iterator[str]:
    """Every property path of a schema; a list of objects as 'name[].field'."""

    def walk(node: dict[str, Any], path: str) -> Iterator[str]:
        for key, sub in node.get("properties", {}).items():
            here = f"{path}.{key}" if path else key
            yield here
            yield from walk(sub, here)
            ref = sub.get("items", {}).get("$ref", "") if isinstance(sub.get("items"), dict) else ""
            if ref.startswith("#/$defs/"):
                yield from walk(schema["$defs"][ref.rsplit("/", 1)[1]], here + "[]")

    yield from walk(schema, "")


GOAL = json.loads((ROOT / "schemas" / "goal.schema.json").read_text(encoding="utf-8"))
EVENT = json.loads((ROOT / "schemas" / "event.schema.json").read_text(encoding="utf-8"))


def test_the_walk_sees_nested_fields() -> None:
    paths = set(schema_paths(GOAL))
    assert {"goal", "roles.scorer.lenses", "model.max_tokens.execute", "constraints[].applies_to"} <= paths


@pytest.mark.parametrize("path", list(schema_paths(GOAL)))
def test_every_spec_field_is_documented(pages: dict[str, str], path: str) -> None:
    assert f"| `{path}` |" in pages["spec"], f"{path} has no row on the spec fields page"


@pytest.mark.parametrize("kind", EVENT["properties"]["kind"]["enum"])
def test_every_event_kind_and_body_field_is_documented(pages: dict[str, str], kind: str) -> None:
    text = section(pages["events"], kind)
    for field in EVENT["$defs"][kind]["properties"]:
        assert f"| `{field}` |" in text, f"{kind}.{field} is not on the events page"
