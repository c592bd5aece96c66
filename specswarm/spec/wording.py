"""The wording of spec problems: where a value sits in the file, and what a schema error
means in words (``FILE:LINE: field.path: what is wrong (expected ...)``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError

from specswarm import resources
from specswarm.errors import SpecProblem
from specswarm.spec._yaml import BoundError, DocPath, Located

SCHEMA_NAME = "goal.schema.json"

# --------------------------------------------------------------------------- locating problems


@dataclass
class Where:
    """Turns a document path into a SpecProblem with the best line we know."""

    file: str
    located: Located | None = None

    def line(self, path: DocPath, mode: str = "value") -> int:
        """The line of the value at ``path`` (mode "value"), of its key ("key"), or of the
        key that holds the mapping ``path`` ("parent", for a field missing from it).

        Whatever is absent is placed at the key of its nearest present ancestor.
        """
        loc = self.located
        if loc is None:
            return 0
        if mode == "key" and path in loc.key_lines:
            return loc.key_lines[path]
        if path in loc.value_lines and (mode != "parent" or path not in loc.key_lines):
            return loc.value_lines[path]  # (a list item has no key: its own line)
        for end in range(len(path) if mode == "parent" else len(path) - 1, 0, -1):
            if path[:end] in loc.key_lines:
                return loc.key_lines[path[:end]]
        return loc.value_lines.get((), 1)

    def at(self, path: DocPath, message: str, *, mode: str = "value", line: int | None = None) -> SpecProblem:
        return SpecProblem(self.file, self.line(path, mode) if line is None else line, dotted(path), message)


def dotted(path: Sequence[Any]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out or "(root)"


def unique(problems: list[SpecProblem]) -> list[SpecProblem]:
    return list(dict.fromkeys(problems))


def kind_of(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool | int | float):
        return "a number" if not isinstance(value, bool) else "a boolean"
    return f"a {type(value).__name__}"


def whole(label: str, message: str, line: int = 1) -> SpecProblem:
    """A problem with the file as a whole (it cannot be read or parsed)."""
    return SpecProblem(label, line, "(root)", message)


def yaml_problem(label: str, exc: yaml.YAMLError) -> SpecProblem:
    if isinstance(exc, BoundError):
        return SpecProblem(label, exc.line, dotted(exc.path), exc.message)
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        message = f"invalid YAML: {exc.problem}"
        if exc.context and exc.context_mark is not None:
            message += f" ({exc.context}, which starts on line {exc.context_mark.line + 1})"
        return whole(label, message, exc.problem_mark.line + 1)
    return whole(label, f"invalid YAML: {exc}")


# --------------------------------------------------------------------------- schema problems


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(resources.load_schema(SCHEMA_NAME))


def schema_at(*keys: str) -> dict[str, Any]:
    """The schema of the field at ``keys`` (e.g. ``"prompts", "score"``)."""
    node: dict[str, Any] = _validator().schema
    for key in keys:
        node = _deref(node)["properties"][key]
    return node


def schema_problems(data: Any, where: Where) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    for error in _validator().iter_errors(data):
        problems.extend(_explain(error, where))
    return problems


_TYPE_NAMES = {"object": "mapping", "array": "list"}


def _explain(error: ValidationError, where: Where) -> Iterator[SpecProblem]:
    path: DocPath = tuple(error.absolute_path)
    instance, keyword = error.instance, error.validator
    if keyword == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        for key in instance:
            if key not in allowed:
                yield where.at(
                    (*path, key),
                    f"unknown key (expected one of: {', '.join(allowed)}{_did_you_mean(key, allowed)})",
                    mode="key",
                )
        return
    hint = _then_hint(error)
    if keyword == "required":
        for name in error.validator_value:
            if name not in instance:
                suffix = f" ({hint})" if hint else ""
                yield where.at(path, f"missing required field {name!r}{suffix}", mode="parent")
        return
    shown, value = show(instance), error.validator_value
    if keyword == "type":
        types = [value] if isinstance(value, str) else value
        text = f"{shown} is not of type {' or '.join(_TYPE_NAMES.get(t, t) for t in types)}"
    elif keyword == "enum":
        text = f"{shown} is not one of the allowed values"
    elif keyword == "const":
        text = f"{shown} is not supported"
    elif keyword == "minimum":
        text = f"{shown} is less than the minimum {value}"
    elif keyword == "maximum":
        text = f"{shown} is more than the maximum {value}"
    elif keyword == "exclusiveMinimum":
        text = f"{shown} is not more than {value}"
    elif keyword in ("minLength", "minItems"):
        text = f"{shown} is too short"
    elif keyword == "maxLength":
        text = f"{shown} is {len(instance)} characters long"
    elif keyword == "pattern":
        text = f"{shown} does not have the expected form"
    elif keyword in ("anyOf", "oneOf"):
        text = f"{shown} is not valid"
    else:  # pragma: no cover - every keyword the schema uses is handled above
        text = error.message
    expected = (
        f"expected at most {value}" if keyword == "maxLength" else f"expected {_describe(error.schema)}"
    )
    if keyword == "enum":
        expected += _did_you_mean(instance, [str(v) for v in value])
    if hint:
        expected += f"; {hint}"
    yield where.at(path, f"{text} ({expected})")


def _then_hint(error: ValidationError) -> str | None:
    """The ``description`` of an ``if``/``then`` branch the error came through, if any."""
    node: Any = _validator().schema
    hint = None
    for step in error.schema_path:
        if isinstance(node, dict) and step not in node:
            node = _deref(node)  # jsonschema leaves "$ref" out of the path
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return hint
        if step == "then" and isinstance(node, dict):
            hint = node.get("description")
    return hint


def _deref(schema: Any) -> Any:
    """The schema a local ``$ref`` (``#/$defs/x``, ``#/properties/model``) points at."""
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = _validator().schema
        for step in ref.removeprefix("#/").split("/"):
            node = node[step]
        return node
    return schema


def _did_you_mean(word: Any, choices: list[str]) -> str:
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        shown = "[" + ", ".join(show(v) for v in value) + "]"
        return shown if len(shown) <= 40 else f"a list of {len(value)} items"
    return str(value)


def _join_or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _describe(schema: Any) -> str:
    """What a (sub)schema expects, in words: 'an integer >= 1', 'a non-empty string', ..."""
    return _join_or(_alternatives(_deref(schema)))


def _alternatives(schema: dict[str, Any]) -> list[str]:
    if "const" in schema:
        return [show(schema["const"])]
    if "enum" in schema:
        return [show(v) for v in schema["enum"]]
    if "anyOf" in schema:
        return [alt for branch in schema["anyOf"] for alt in _alternatives(_deref(branch))]
    types = schema.get("type", [])
    return [_describe_type(t, schema) for t in ([types] if isinstance(types, str) else types)]


def _describe_type(kind: str, schema: dict[str, Any]) -> str:
    if kind in ("integer", "number"):
        noun = "an integer" if kind == "integer" else "a number"
        low, high = schema.get("minimum"), schema.get("maximum")
        xlow = schema.get("exclusiveMinimum")
        if xlow is not None and high is not None:
            return f"{noun} in ({xlow}, {high}]"
        if low is not None and high is not None:
            return f"{noun} from {low} to {high}"
        if xlow is not None:
            return f"{noun} > {xlow}"
        if low is not None:
            return f"{noun} >= {low}"
        return noun
    if kind == "string":
        if "pattern" in schema:
            return f"a string matching {schema['pattern']}"
        return "a non-empty string" if schema.get("minLength") else "a string"
    if kind == "array":
        items = _deref(schema.get("items", {}))
        noun = {"string": "strings", "object": "mappings"}.get(items.get("type"), "values")
        return f"a {'non-empty ' if schema.get('minItems') else ''}list of {noun}"
    if kind == "object":
        return f"a mapping with fields: {', '.join(schema.get('properties', {}))}"
    if kind == "boolean":
        return "true or false"
    return kind
