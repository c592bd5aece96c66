"""The JSON schemas a schema-constrained answer is held to (the openai backend sends them as
``response_format``; :mod:`specswarm.model.parse` reads the answers).

Every string and list is bounded (``maxLength``, ``maxItems``): without bounds a small model
under a grammar filled its whole token budget with one string and the JSON was cut off. The
bounds follow the task's token cap (``model.max_tokens``): the parts a split is likely to have
must fit it with their JSON around them, so a 160-token split gets shorter strings than a
400-token one. (An answer cut off anyway still gives its complete parts: see the parser.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from specswarm.model.base import OutputSchema
from specswarm.spec import Constraint, TreeLimits

SCHEMA_TITLE = 80
"""Most characters of a child's title (the parser's own limit)."""
SCHEMA_DETAIL = 200
"""Most characters of a child's detail, however many tokens a split may take."""
SCHEMA_REASON = 160
"""Most characters of a rating's reason."""
CHARS_PER_TOKEN = 3
"""A cautious count of the characters one token of English holds (4 is usual)."""
PART_OVERHEAD = 16
"""Tokens of one part's JSON besides its strings: keys, quotes, braces, facts, whitespace."""


def string_bounds(max_tokens: int, parts: int) -> tuple[int, int]:
    """(title, detail) lengths in characters for ``parts`` parts to fit ``max_tokens`` tokens."""
    chars = max(max_tokens // max(parts, 1) - PART_OVERHEAD, 8) * CHARS_PER_TOKEN
    title = min(max(chars * 2 // 5, 16), SCHEMA_TITLE)
    return title, min(max(chars - title, 0), SCHEMA_DETAIL)


def split_schema(
    low: int,
    high: int,
    fact_fields: Sequence[str],
    total: int = 10000,
    *,
    title: int = SCHEMA_TITLE,
    detail: int = SCHEMA_DETAIL,
) -> dict[str, Any]:
    """The JSON schema of a split: ``{"parts": [{"title", "detail", <each fact>}, ...]}`` with
    ``low..high`` parts, strings of at most ``title``/``detail`` characters and integer facts
    (0..``total``)."""
    item: dict[str, Any] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": title},
            "detail": {"type": "string", "maxLength": detail},
            **{f: {"type": "integer", "minimum": 0, "maximum": total} for f in fact_fields},
        },
        "required": ["title", "detail", *fact_fields],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"parts": {"type": "array", "items": item, "minItems": low, "maxItems": high}},
        "required": ["parts"],
        "additionalProperties": False,
    }


def score_schema(max_tokens: int = 120) -> dict[str, Any]:
    """The JSON schema of a rating: ``{"score": 0..100, "reason": "..."}``, the reason short
    enough for ``max_tokens``."""
    reason = min(max(max_tokens - PART_OVERHEAD, 8) * CHARS_PER_TOKEN, SCHEMA_REASON)
    return {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 0, "maximum": 100},
            "reason": {"type": "string", "maxLength": reason},
        },
        "required": ["score", "reason"],
        "additionalProperties": False,
    }


def schema_for(
    kind: str,
    tree: TreeLimits,
    fact_fields: Sequence[str],
    constraints: Sequence[Constraint],
    max_tokens: int = 400,
) -> OutputSchema | None:
    """The schema a ``kind`` answer (of at most ``max_tokens`` tokens) is held to: a split for
    decompose and refine (its count limits, the facts each part must state, bounded by the
    largest declared total; strings sized for the count asked for, one more at most), a
    rating for score; None for execute (its answer is prose)."""
    if kind == "score":
        return OutputSchema.of("score", score_schema(max_tokens))
    if kind in ("decompose", "refine"):
        totals = [int(c.total) for c in constraints if c.kind == "sum" and c.total is not None]
        low, high, limit = tree.min_children, tree.max_children, max(totals, default=10000)
        target = max(low, min(high, 4))  # what the prompts ask for (tasks.py: limits.target)
        title, detail = string_bounds(max_tokens, min(high, target + 1))
        schema = split_schema(low, high, fact_fields, limit, title=title, detail=detail)
        return OutputSchema.of("split", schema)
    return None


_CUT_TAIL = re.compile(r"[\s,;:(\[{/-]+$")


def whole_words(text: str, schema: dict[str, Any]) -> str:
    """A schema-held JSON answer with every string that reached its ``maxLength`` cut back to its
    last whole word: a grammar stops a string at its bound mid-word ("at the venue's entr"); a
    string with no space to cut at, and text that is not JSON, are returned as they are."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    trimmed = _trim(data, schema)
    return text if trimmed == data else json.dumps(trimmed, ensure_ascii=False)


def _trim(value: Any, schema: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _trim(v, props.get(k, {})) for k, v in value.items()}
    if isinstance(value, list):
        return [_trim(v, schema.get("items", {})) for v in value]
    bound = schema.get("maxLength")
    if isinstance(value, str) and bound is not None and len(value) >= bound and " " in value.strip():
        cut = value.rstrip()
        if len(cut) >= bound and cut[-1] not in ".!?":
            cut = _CUT_TAIL.sub("", cut.rsplit(" ", 1)[0])
        return cut
    return value
