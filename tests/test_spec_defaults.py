"""Defaults live in one place: the spec dataclasses. The schema's ``default`` keywords (what
editors show) must say the same, for every field that has one."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from specswarm.resources import load_schema
from specswarm.spec import values

SECTIONS: dict[tuple[str, ...], type[Any]] = {
    (): values.GoalSpec,
    ("tree",): values.TreeLimits,
    ("review",): values.Review,
    ("model",): values.ModelSettings,
    ("model", "max_tokens"): values.TokenLimits,
    ("network",): values.NetworkSettings,
    ("access",): values.AccessSettings,
    ("budget",): values.Budget,
    ("output",): values.OutputSettings,
    ("roles", "decomposer"): values.DecomposerRole,
    ("roles", "scorer"): values.ScorerRole,
    ("roles", "executor"): values.Role,
    ("roles", "observer"): values.Role,
}


def _schema_at(path: tuple[str, ...]) -> dict[str, Any]:
    node = load_schema("goal.schema.json")
    for step in path:
        node = node["properties"][step]
    return node


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _as_json(value: Any) -> Any:
    return json.loads(json.dumps(list(value) if isinstance(value, tuple) else value))


def test_every_schema_default_is_the_dataclass_default() -> None:
    checked = 0
    for path, cls in SECTIONS.items():
        section = _schema_at(path)
        props, required = section["properties"], set(section.get("required", ()))
        fields = {f.name: f for f in dataclasses.fields(cls) if f.compare}
        for name, prop in props.items():
            field = fields.get(name)
            default = _default(field) if field else dataclasses.MISSING
            where = ".".join((*path, name))
            if default is dataclasses.MISSING or dataclasses.is_dataclass(default) or name in required:
                assert "default" not in prop, f"{where}: the schema gives a default the dataclass has not"
                continue
            assert "default" in prop, f"{where}: the dataclass default {default!r} is missing from the schema"
            assert prop["default"] == _as_json(default), f"{where}: schema {prop['default']!r} != {default!r}"
            checked += 1
    assert checked >= 30  # every leaf field with a default (a rename must not skip them silently)


def test_no_description_restates_a_default() -> None:
    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if "default" in node:
                assert "Default" not in node.get("description", ""), f"{where}: say it once, in 'default'"
            for key, sub in node.items():
                walk(sub, f"{where}.{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{where}[{i}]")

    walk(load_schema("goal.schema.json"), "schema")
