"""Words of scripts written without spaces between words (Han, kana, Thai, Lao, Khmer,
Myanmar), for the split critics whose rules count words: no dictionary, no segmenter.

A run of such letters is a phrase, not a word ("设计和装修" is "design and renovation"): it is
read as its overlapping character bigrams, the units a search index uses for these scripts
(about one bigram per word of two characters). The letters of other scripts keep their words;
:func:`spaced_part` hands them to the word rules of :mod:`.terms` unchanged, so a text with no
letter of these scripts is judged exactly as before.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from specswarm.critics.shingles import normal
from specswarm.spec.language import letter_script

UNSPACED_SCRIPTS = frozenset({"CJK", "THAI", "LAO", "KHMER", "MYANMAR"})
"""Scripts (:func:`~specswarm.spec.language.letter_script`) that do not put spaces between words."""
GRAM = 2
"""Characters in one unit of an unspaced run."""


@lru_cache(maxsize=1 << 14)
def is_unspaced(ch: str) -> bool:
    """Whether ``ch`` is a letter, or a combining mark (a Thai vowel sign), of a script written
    without spaces."""
    if unicodedata.category(ch)[0] == "M":
        return unicodedata.name(ch, "").split(" ", 1)[0] in UNSPACED_SCRIPTS
    return letter_script(ch) in UNSPACED_SCRIPTS


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds a letter of a script written without spaces."""
    return any(is_unspaced(ch) for ch in text or "")


def unspaced_runs(text: str) -> list[str]:
    """The runs of unspaced-script letters of :func:`~specswarm.critics.shingles.normal` ``(text)``
    (case-folded, NFKC; digits, punctuation and letters of other scripts end a run)."""
    runs: list[str] = []
    cur: list[str] = []
    for ch in normal(text or ""):
        if is_unspaced(ch):
            cur.append(ch)
        elif cur:
            runs.append("".join(cur))
            cur = []
    if cur:
        runs.append("".join(cur))
    return runs


def grams(run: str) -> list[str]:
    """The overlapping :data:`GRAM`-character units of one run, in order (a shorter run is one)."""
    if len(run) <= GRAM:
        return [run]
    return [run[i : i + GRAM] for i in range(len(run) - GRAM + 1)]


def unspaced_units(text: str) -> set[str]:
    """The distinct units (:func:`grams`) of every unspaced run of ``text``."""
    return {g for run in unspaced_runs(text) for g in grams(run)}


def spaced_part(text: str) -> str:
    """``text`` with the letters of unspaced scripts replaced by spaces (what the word rules read)."""
    if not has_unspaced(text):
        return text or ""
    return "".join(" " if is_unspaced(ch) else ch for ch in text)


def word_count(text: str) -> int:
    """Words of ``text``: its space-separated words outside unspaced runs, plus one per
    :data:`GRAM` letters of each unspaced run (at least one a run)."""
    spaced = len(spaced_part(text).split())
    return spaced + sum(max(1, len(run) // GRAM) for run in unspaced_runs(text))


def cover(detail: str, title: str, said: set[str]) -> tuple[int, int, list[str]]:
    """How much of the unspaced text of ``detail`` the units ``said`` mention: (letters covered,
    letters wanted, the stretches of two or more letters not covered, in order). A letter is
    wanted unless a unit holding it is also in ``title`` (what the title says needs no
    covering), and covered when a unit holding it is in ``said``."""
    title_units = unspaced_units(title)
    covered = wanted = 0
    missing: list[str] = []
    for run in unspaced_runs(detail):
        known, hit = _marked(run, title_units), _marked(run, said)
        for k, h in zip(known, hit, strict=True):
            if not k:
                wanted += 1
                covered += h
        free = [not (k or h) for k, h in zip(known, hit, strict=True)]
        missing += [stretch for stretch in _stretches_of(run, free) if len(stretch) >= 2]
    return covered, wanted, missing


def stretches(run: str, units: set[str] | frozenset[str]) -> list[str]:
    """The stretches of ``run`` whose letters some unit of ``units`` holds (a unit of the run
    that is in ``units`` marks its letters), in order: ("咖啡机采购", {"咖啡", "啡机"}) ->
    ["咖啡机"]."""
    return _stretches_of(run, _marked(run, units))


def _marked(run: str, units: set[str] | frozenset[str]) -> list[bool]:
    """Per letter of ``run``: whether a unit of the run that is in ``units`` holds it."""
    marks = [False] * len(run)
    for i, g in enumerate(grams(run)):
        if g in units:
            for k in range(i, i + len(g)):
                marks[k] = True
    return marks


def _stretches_of(run: str, marks: list[bool]) -> list[str]:
    """The maximal stretches of ``run`` whose letters are marked, in order."""
    out: list[str] = []
    stretch = ""
    for ch, marked in zip(run, marks, strict=True):
        if marked:
            stretch += ch
        elif stretch:
            out.append(stretch)
            stretch = ""
    if stretch:
        out.append(stretch)
    return out
