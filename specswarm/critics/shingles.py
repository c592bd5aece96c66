"""Text measures that hold in any language and script: character n-grams (shingles), digits of
any script, the item lines of a result, and similarities weighted by how rare each shingle is.

No word lists, no stemming: a text is case-folded and NFKC-normalized, every character that is
not a letter, mark or digit (Unicode categories L*, M*, N*) becomes a space, digits of any script
become ASCII digits; its shingles are its character trigrams (spaces included, so word edges
count). Shingles every compared text holds (the shared frame: "Visit ... in Kyoto" repeated by
every line) weigh nothing; rare ones (a name two lines share) weigh most (:class:`Weights`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache

N = 3
"""Shingle length in characters."""
BULLETS = "-*•·–—>+"
"""Characters that open a list item, stripped from an item line."""
UNIT_LABEL = re.compile(
    r"^\W*(?:(?:[^\W\d_]|[\u0300-\u036f\u0900-\u0dff])+\s+(\d{1,3})"
    r"|(?:(?![A-Za-z])[^\W\d_]){0,2}(\d{1,3})(?:(?![A-Za-z])[^\W\d_]){1,3})\s*[:：.)、-]"
)
"""A line's leading unit label: it says where, not what. A word and a number ("Day 6:", "Week
2 -", "Tag 3.", "दिन 6:"), or a number inside letters of a script other than Latin ("第6天：",
"6日目:"); never a time ("10:00"). :func:`unit_number` reads it."""


def unit_number(line: str) -> tuple[int, int, int] | None:
    """The number of ``line``'s leading unit label (:data:`UNIT_LABEL`) and where it stands in
    the line (start, end); None without one."""
    m = UNIT_LABEL.match(line)
    if m is None:
        return None
    g = 1 if m.group(1) is not None else 2
    return int(m.group(g)), m.start(g), m.end(g)


def unlabelled(line: str) -> str:
    """What ``line`` says without its leading unit label (:data:`UNIT_LABEL`), :func:`normal`:
    "Day 10: Return to the base camp." and "Day 11: return to the base camp" say the same."""
    m = UNIT_LABEL.match(line)
    return normal(line[m.end() :] if m else line)


@lru_cache(maxsize=4096)
def normal(text: str) -> str:
    """``text`` case-folded, NFKC-normalized, digits of any script as ASCII digits, every other
    character that is not a letter, mark or digit a space, spaces collapsed."""
    out = []
    for ch in unicodedata.normalize("NFKC", text).casefold():
        cat = unicodedata.category(ch)
        if cat == "Nd":
            out.append(str(unicodedata.digit(ch, 0)))
        elif cat[0] in "LMN":
            out.append(ch)
        else:
            out.append(" ")
    return " ".join("".join(out).split())


@lru_cache(maxsize=4096)
def shingles(text: str) -> frozenset[str]:
    """The character trigrams of :func:`normal` ``(text)``, word edges marked by a space."""
    padded = f" {normal(text)} "
    if len(padded) <= 2:
        return frozenset()
    return frozenset(padded[i : i + N] for i in range(max(1, len(padded) - N + 1)))


def has_digit(text: str) -> bool:
    """Whether ``text`` holds a digit of any script (Unicode category Nd)."""
    return any(unicodedata.category(ch) == "Nd" for ch in text)


def tokens(text: str) -> list[str]:
    """The words of :func:`normal` ``(text)`` (runs of letters, marks and digits)."""
    return normal(text).split()


def numbered(head: str) -> bool:
    """Whether ``head``, a line's first word, is a list number ("1.", "12)")."""
    return head[:-1].isdigit() and head[-1:] in ".)"


def item_lines(text: str) -> list[str]:
    """The lines of a result that say something: list markers ("- ", "* ", "1.", "2)"), one
    after a unit label ("Day 3: - Visit" reads "Day 3: Visit") and surrounding spaces stripped;
    blank lines, lines of markup alone and code fences left out."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            continue
        line = line.lstrip(BULLETS).strip()
        head, _, rest = line.partition(" ")
        if rest and numbered(head):
            line = rest.strip()  # "1. ..." or "2) ..."
        label = UNIT_LABEL.match(line)
        after = line[label.end() :].lstrip() if label is not None else ""
        if label is not None and after[:1] in BULLETS and after[1:2] == " ":
            line = f"{line[: label.end()]} {after.lstrip(BULLETS).strip()}"  # "Day 3: - Visit ..."
        if normal(line):
            out.append(" ".join(line.split()))
    return out


class Weights:
    """How much each shingle weighs among a set of texts: log((n + 1) / df), n the texts, df
    those holding it (a shingle every text holds weighs little, never nothing: two texts alike
    in every shingle stay alike; a shingle none holds weighs as the rarest)."""

    def __init__(self, texts: Iterable[frozenset[str]]) -> None:
        sets = list(texts)
        self.n = len(sets)
        self.df: Counter[str] = Counter(g for s in sets for g in s)
        self._cache: dict[str, float] = {}

    def of(self, gram: str) -> float:
        w = self._cache.get(gram)
        if w is None:
            w = self._cache[gram] = math.log((self.n + 1) / max(1, self.df.get(gram, 0)))
        return w

    def mass(self, grams: Iterable[str]) -> float:
        """The sum of the squared weights of ``grams`` (rare shingles count most)."""
        return sum(self.of(g) ** 2 for g in grams)


def dice(a: frozenset[str], b: frozenset[str], w: Weights) -> float:
    """Weighted Dice similarity of two shingle sets, 0..1: 2·m(a∩b) / (m(a) + m(b)), m the
    :meth:`Weights.mass`."""
    both = w.mass(a) + w.mass(b)
    return 2 * w.mass(a & b) / both if both > 0 else 0.0


def pair_dice(a: frozenset[str], b: frozenset[str], w: Weights) -> float:
    """Weighted Dice of two of the texts ``w`` was built from, each shingle weighted by how rare
    it is among the *other* texts (log((n + 1) / (1 + df')) squared, df' the other texts holding
    it): a name only these two share weighs most, a frame most texts share little. (Plain
    weights would count the pair's own shared shingles as common: df 2 in a corpus of three.)"""

    def weight(g: str) -> float:
        others = w.df.get(g, 0) - (g in a) - (g in b)
        return math.log((w.n + 1) / (1 + max(0, others))) ** 2

    both = sum(map(weight, a)) + sum(map(weight, b))
    return 2 * sum(map(weight, a & b)) / both if both > 0 else 0.0


def cosine(a: frozenset[str], b: frozenset[str], w: Weights) -> float:
    """Weighted cosine similarity of two shingle sets, 0..1 (each shingle counted once)."""
    na, nb = w.mass(a), w.mass(b)
    return w.mass(a & b) / math.sqrt(na * nb) if na > 0 and nb > 0 else 0.0


def closest(line: frozenset[str], others: Mapping[str, frozenset[str]], w: Weights) -> tuple[str, float]:
    """The key of the text in ``others`` most like ``line`` (:func:`cosine`), and how alike;
    ties go to the lesser key. ``("", 0.0)`` when there is none."""
    best = ("", 0.0)
    for key in sorted(others):
        sim = cosine(line, others[key], w)
        if sim > best[1]:
            best = (key, sim)
    return best
