"""schemas/goal.schema.json documents every field: a description, and examples that its own
schema accepts (editors show both while a spec is typed; see the schema line of goals/*.yaml)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from specswarm.resources import load_schema

SCHEMA = load_schema("goal.schema.json")


def fields(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(dotted path, subschema) of every property, nested ones and those of $defs included."""

    def walk(node: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for key, sub in node.get("properties", {}).items():
            here = f"{path}.{key}" if path else key
            yield here, sub
            yield from walk(sub, here)

    yield from walk(schema, "")
    for name, sub in schema.get("$defs", {}).items():
        yield from walk(sub, f"$defs.{name}")


FIELDS = list(fields(SCHEMA))


def test_the_walk_sees_the_fields() -> None:
    paths = {p for p, _ in FIELDS}
    assert {"goal", "roles.scorer.count", "model.max_tokens.execute", "$defs.constraint.terms"} <= paths


@pytest.mark.parametrize(("path", "sub"), FIELDS, ids=[p for p, _ in FIELDS])
def test_every_field_has_a_description_and_valid_examples(path: str, sub: dict[str, Any]) -> None:
    assert sub.get("description"), f"{path}: no description"
    examples = sub.get("examples")
    assert isinstance(examples, list) and examples, f"{path}: no examples"
    validator = Draft202012Validator(SCHEMA).evolve(schema=sub)  # $refs resolve against the whole schema
    for example in examples:
        errors = [e.message for e in validator.iter_errors(example)]
        assert not errors, f"{path}: example {example!r}: {errors}"
