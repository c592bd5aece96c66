"""Quantities in titles and facts: "(3 days)", "two-week", "2-3 hours", "EUR 500"; the unit a
fact's name implies (``days``, ``budget_eur``); whether a fact splits among children."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from specswarm.critics.words import (
    CURRENCY_WORDS,
    INTENSIVE,
    MONEY_WORDS,
    NUMBER_WORDS,
    ORDINAL_KEYS,
    UNIT_WORDS,
)

_TO_BASE = {
    "minutes": ("time", 1.0),
    "hours": ("time", 60.0),
    "days": ("days", 1.0),
    "weeks": ("days", 7.0),
    "months": ("months", 1.0),
    "years": ("months", 12.0),
    "nights": ("nights", 1.0),
}
"""unit -> (dimension, size in the dimension's base unit). Days and hours do not convert
(a day of a trip is not 24 hours); nor do days and nights."""


_RELATIONAL_AFTER = re.compile(
    r"\s*(?:before|ahead|after|prior|earlier|later|ago|beforehand|in\s+advance|out|away|notice|"
    r"per|a|an|each|every|of\s+notice|from|until|left|remaining)\b",
    re.IGNORECASE,
)
"""A quantity followed by one of these is a lead time or a rate ("book 3 months ahead",
"2 hours a day"), not the child's own size."""

_NUM = r"(\d+(?:[.,]\d+)?|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT_RE = "|".join(sorted((re.escape(u) for u in UNIT_WORDS), key=len, reverse=True))
_QTY = re.compile(
    rf"(?<![\w.]){_NUM}(?:\s*(?:-|–|to)\s*{_NUM})?(?:\s*-\s*|\s+|(?<=\d))(?:and\s+a\s+half\s+)?({_UNIT_RE})s?\b",
    re.IGNORECASE,
)
_HALF = re.compile(r"\bhalf(?:\s+an?\s+|-|\s+)(day|hour|week|month|year)\b", re.IGNORECASE)
_MONEY_PRE = re.compile(r"([€$£¥]|\b(?:EUR|USD|GBP|JPY|CHF))\s?(\d[\d,]*(?:\.\d+)?)\s*([kK])?\b")
_MONEY_POST = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s*([kK])?\s*(eur|euros?|usd|dollars?|gbp|jpy|yen|chf|€)(?!\w)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """A number with a unit stated in a text: ``low..high`` (equal unless a range)."""

    low: float
    high: float
    unit: str
    """minutes | hours | days | nights | weeks | months | years | a currency code (EUR...)."""
    text: str
    """The words as written, e.g. "3 days"."""


def _number(word: str) -> float:
    """A number word or numeral: "three", "1.5", "1,5" (decimal comma), "2,000" (thousands)."""
    w = word.lower()
    if w in NUMBER_WORDS:
        return float(NUMBER_WORDS[w])
    w = re.sub(r",(?=\d{3}\b)", "", w).replace(",", ".")
    return float(w)


def parse_quantities(text: str) -> list[Quantity]:
    """Durations and amounts of money stated in ``text``: "(3 days)", "two-week", "2-3 hours",
    "90-minute", "half a day", "EUR 500", "€1.5k", "2,000 USD". Lead times and rates
    ("book 3 months ahead", "2 hours a day") and labels ("Day 3") are not quantities."""
    found: list[tuple[int, Quantity]] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    for m in _QTY.finditer(text):
        if _RELATIONAL_AFTER.match(text, m.end()) and not text[m.end() :].lstrip().startswith(")"):
            continue
        low = _number(m.group(1))
        high = _number(m.group(2)) if m.group(2) else low
        unit = UNIT_WORDS[m.group(3).lower()]
        if m.group(3).lower() == "h" and not re.match(r"\d", m.group(0)):
            continue  # "two h..." is not a quantity
        found.append((m.start(), Quantity(min(low, high), max(low, high), unit, m.group(0).strip())))
        taken.append((m.start(), m.end()))
    for m in _HALF.finditer(text):
        if free(m.start(), m.end()):
            unit = UNIT_WORDS[m.group(1).lower()]
            found.append((m.start(), Quantity(0.5, 0.5, unit, m.group(0))))
            taken.append((m.start(), m.end()))
    for rx, num_g, k_g, cur_g in ((_MONEY_PRE, 2, 3, 1), (_MONEY_POST, 1, 2, 3)):
        for m in rx.finditer(text):
            if not free(m.start(), m.end()):
                continue
            value = float(m.group(num_g).replace(",", "")) * (1000 if m.group(k_g) else 1)
            cur = CURRENCY_WORDS[m.group(cur_g).lower()]
            found.append((m.start(), Quantity(value, value, cur, m.group(0).strip())))
            taken.append((m.start(), m.end()))
    return [q for _, q in sorted(found, key=lambda x: x[0])]


def _key_words(key: str) -> list[str]:
    return [w for w in re.split(r"[^a-z€$£¥]+", key.lower()) if w]


def fact_unit(key: str) -> str | None:
    """The unit a fact's name implies: ``days`` -> days, ``duration_minutes`` -> minutes,
    ``budget_eur`` -> EUR, ``cost`` -> money (any currency); None when it names none."""
    ws = _key_words(key)
    for w in ws:
        if w in CURRENCY_WORDS:
            return CURRENCY_WORDS[w]
    for w in ws:
        if w in UNIT_WORDS and len(w) > 1:
            return UNIT_WORDS[w]
    if any(w in MONEY_WORDS for w in ws):
        return "money"
    return None


def is_additive(key: str) -> bool:
    """Whether a numeric fact splits among children (durations, money, counts of work) rather
    than describing the whole (guests, capacity, priority, a date, an ordinal ``day``)."""
    ws = _key_words(key)
    if key.strip().lower() in ORDINAL_KEYS:
        return False
    return not any(w in INTENSIVE for w in ws)


def numeric(value: object) -> float | None:
    """A fact value as a number (ints, floats, numeric strings such as "3" or "3 days")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        m = re.match(r"\s*(-?\d+(?:\.\d+)?)\b", value)
        return float(m.group(1)) if m else None
    return None


def convert(value: float, unit: str, to: str) -> float | None:
    """``value`` in ``unit`` expressed in ``to``; None when they do not convert."""
    if unit == to:
        return value
    if to == "money" and unit in CURRENCY_WORDS.values():
        return value
    if unit == "money" and to in CURRENCY_WORDS.values():
        return value
    a, b = _TO_BASE.get(unit), _TO_BASE.get(to)
    if a and b and a[0] == b[0]:
        return value * a[1] / b[1]
    return None


def fmt(x: float) -> str:
    return f"{x:g}"
