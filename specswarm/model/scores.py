"""A scorer's rating out of untrusted model text: a JSON ``{"score": N}`` answer, or the forms a
small model writes in prose ("Score: 72", "8/10", "7 out of 10", a bare number line). A rating
that cannot be found or lies outside 0..100 raises :class:`~specswarm.model.parse.OutputError`,
its message written for the model's retry prompt."""

from __future__ import annotations

import json
import re

from specswarm.model.parse import OutputError, unfence

_SCORE_PATTERNS = (
    re.compile(r"\bscore\b\W{0,3}(\d{1,3}(?:\.\d+)?)\s*(?:/\s*(\d{1,3}))?", re.I),
    re.compile(r"\b(\d{1,3}(?:\.\d+)?)\s*/\s*(10|100)\b"),
    re.compile(r"\b(\d{1,3}(?:\.\d+)?)\s*(?:out of)\s*(10|100)\b", re.I),
    re.compile(r"^\W*(\d{1,3}(?:\.\d+)?)\W*$", re.M),
)


def _json_score(text: str) -> int | None:
    """The ``score`` of a JSON object answer (``{"score": 72, "reason": ...}``), if there is one."""
    body = unfence(text).strip()
    if not body.startswith("{"):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    value = data.get("score") if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 <= value <= 100:
        raise OutputError(f"the score {value} is outside 0..100")
    return round(value)


def parse_score(text: str) -> int:
    """A 0..100 rating from a JSON ``{"score": N}`` answer, 'Score: 72', '8/10', '7 out of 10' or a
    bare number line."""
    from_json = _json_score(text)
    if from_json is not None:
        return from_json
    for pattern in _SCORE_PATTERNS:
        m = pattern.search(text)
        if not m:
            continue
        value = float(m.group(1))
        scale = m.group(2) if m.lastindex and m.lastindex >= 2 else None
        if scale:
            value = value * 100 / float(scale)
        elif value <= 10 and pattern is _SCORE_PATTERNS[0] and "/10" in text.replace(" ", ""):
            value *= 10
        if 0 <= value <= 100:
            return round(value)
        raise OutputError(f"the score {m.group(0).strip()!r} is outside 0..100")
    raise OutputError('no score found: answer with a line "Score: N" where N is 0 to 100')
