"""The JSON schemas a schema-constrained answer is held to (the openai backend sends them as
``response_format``; :mod:`specswarm.model.parse` reads the answers).

Every string and list is bounded (``maxLength``, ``maxItems``): without bounds a small model
under a grammar filled its whole token budget with one string and the JSON was cut off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from specswarm.model.base import OutputSchema
from specswarm.spec import Constraint, TreeLimits

SCHEMA_TITLE = 80
"""Most characters of a child's title (the parser's own limit)."""
SCHEMA_DETAIL = 200
"""Most characters of a child's detail: six parts of title and detail fit the default token cap
of a split (400); the parser would trim a longer one anyway."""
SCHEMA_REASON = 160
"""Most characters of a rating's reason (the default cap of a rating is 120 tokens)."""


def split_schema(low: int, high: int, fact_fields: Sequence[str], total: int = 10000) -> dict[str, Any]:
    """The JSON schema of a split: ``{"parts": [{"title", "detail", <each fact>}, ...]}`` with
    ``low..high`` parts, bounded strings and integer facts (0..``total``)."""
    item: dict[str, Any] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": SCHEMA_TITLE},
            "detail": {"type": "string", "maxLength": SCHEMA_DETAIL},
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


def score_schema() -> dict[str, Any]:
    """The JSON schema of a rating: ``{"score": 0..100, "reason": "..."}`` (a short reason)."""
    return {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 0, "maximum": 100},
            "reason": {"type": "string", "maxLength": SCHEMA_REASON},
        },
        "required": ["score", "reason"],
        "additionalProperties": False,
    }


def schema_for(
    kind: str, tree: TreeLimits, fact_fields: Sequence[str], constraints: Sequence[Constraint]
) -> OutputSchema | None:
    """The schema a ``kind`` answer is held to: a split for decompose and refine (its count
    limits, the facts each part must state, bounded by the largest declared total), a rating for
    score; None for execute (its answer is prose)."""
    if kind == "score":
        return OutputSchema.of("score", score_schema())
    if kind in ("decompose", "refine"):
        totals = [int(c.total) for c in constraints if c.kind == "sum" and c.total is not None]
        low, high, limit = tree.min_children, tree.max_children, max(totals, default=10000)
        return OutputSchema.of("split", split_schema(low, high, fact_fields, limit))
    return None
