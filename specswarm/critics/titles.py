"""Word-level sameness of two titles, for the model's output parser
(:mod:`specswarm.model.parse` drops a proposed child whose title is a near-copy of the goal, its
parent or another child before a split is ever proposed). The scorers' critics judge content
instead (:mod:`specswarm.critics.overlap`); this stays as it was so that parsing, and the
cassettes recorded through it, do not change. The same sameness, line by line, tells an executor
that its result repeats a sibling's (:func:`repeats_of`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from specswarm.critics.shingles import normal, shingles

NEAR_DUPLICATE = 0.75
"""Title token Jaccard at or above which two titles count as the same."""


def _ws(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _ws("""
a about above after again all also an and any are as at be been before being below between both
but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not of off on once
only or other our out over own same she should so some such than that the their them then there
these they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours via per within without must may might shall
""")
"""Words that carry no topic (the parser's list, unchanged)."""

_WORD = re.compile(r"[a-z0-9]+")
_ORDINAL = re.compile(r"\d+(st|nd|rd|th)")


def _stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            return base
    return word


_PARENS = re.compile(r"\([^)]*\)")
_ABBREVIATION = re.compile(r"\(\s*([A-Za-z][A-Za-z0-9&.]{1,9})\s*\)")
_ANY_WORD = re.compile(r"[A-Za-z0-9]+")


def _initials(words: Sequence[str]) -> str:
    return "".join(w[0].lower() for w in words)


def drop_aliases(text: str) -> str:
    """``text`` without a parenthesized abbreviation of the words just before it, which says
    nothing they do not: "Command Line Interface (CLI) Specification" is "Command Line Interface
    Specification", "Department of Motor Vehicles (DMV)" its words; "Tokyo (5 days)" and "Hotels
    (Kyoto)" keep theirs."""

    def replace(m: re.Match[str]) -> str:
        short = m.group(1)
        if short.endswith("s") and short[:-1].isupper():
            short = short[:-1]  # "APIs"
        letters = "".join(c for c in short.lower() if c.isalpha())
        before = _ANY_WORD.findall(text[: m.start()])
        content = [w for w in before if w.lower() not in _STOPWORDS]
        n = len(letters)
        if n >= 2 and any(len(ws) >= n and _initials(ws[-n:]) == letters for ws in (before, content)):
            return " "
        return m.group(0)

    return _ABBREVIATION.sub(replace, text)


def title_words(text: str) -> list[str]:
    """Lower-case alphanumeric words of ``text``."""
    return _WORD.findall(text.lower())


def title_terms(text: str) -> set[str]:
    """Suffix-stripped words of ``text``, stopwords removed ('The Booking of hotels' -> book, hotel)."""
    return {_stem(w) for w in title_words(text) if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())}


def normalize_title(text: str) -> str:
    """Case- and punctuation-insensitive form of a title (for exact-duplicate checks)."""
    return " ".join(title_words(text))


_NUMBERING = frozenset(
    [
        "i",
        "ii",
        "iii",
        "iv",
        "v",
        "vi",
        "vii",
        "viii",
        "ix",
        "x",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "next",
        "last",
        "final",
    ]
)
"""Words that only number a part ("Flow 2", "Phase II", "Second step")."""


def denumbered(text: str) -> str:
    """:func:`normalize_title` without the words that only number ("User Flow 3" -> "user flow",
    "Phase II" -> "phase"): two parts equal in this form differ by their number alone."""
    return " ".join(
        w for w in title_words(text) if not w.isdigit() and w not in _NUMBERING and not _ORDINAL.fullmatch(w)
    )


def numbered_groups(titles: Sequence[str]) -> dict[str, set[str]]:
    """:func:`denumbered` form -> the distinct titles (:func:`normalize_title`) that have it; a
    form held by two or more titles names parts that differ only by their number."""
    groups: dict[str, set[str]] = {}
    for title in titles:
        groups.setdefault(denumbered(title), set()).add(normalize_title(title))
    return groups


def numbered_alike(a_title: str, a_detail: str, b_title: str, b_detail: str) -> bool:
    """Two parts whose titles differ only by a number and whose details add nothing to tell them
    apart (both empty, or equal once numbers are dropped): placeholders ("User Flow 1", "User
    Flow 2"), the same part twice. "Day 1" and "Day 2" with different details are two days."""
    plain = denumbered(a_title)
    return (
        bool(plain)
        and len(numbered_groups([a_title, b_title]).get(plain, ())) == 2
        and denumbered(a_detail) == denumbered(b_detail)
    )


def same_title(a: str, b: str) -> bool:
    """The same title, case and punctuation aside (:func:`normalize_title`); two titles with no
    Latin letter or digit compare by all their letters (:func:`~.shingles.normal`), so two
    different Chinese titles are not "the same" for having no Latin word."""
    na, nb = normalize_title(a), normalize_title(b)
    if na or nb:
        return na == nb
    return bool(normal(a)) and normal(a) == normal(b)


def contains_title(title: str, other: str) -> bool:
    """True when ``title`` holds the whole of ``other`` as a phrase of two or more content words,
    parenthesized parts aside: "Command Line Interface Documentation" holds the stage "Command
    Line Interface (CLI)", "Hike Mount Fuji at dawn" holds "Hike Mount Fuji"; "Tokyo" (one word)
    is a place a title may name, not a whole stage."""
    phrase = normalize_title(_PARENS.sub(" ", other))
    if len([w for w in phrase.split() if w not in _STOPWORDS]) < 2:
        return False
    return f" {phrase} " in f" {normalize_title(_PARENS.sub(' ', title))} "


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def near_duplicate(a: str, b: str) -> bool:
    """True when two titles say the same thing (same words, or nearly the same content words).
    Titles with no Latin letter or digit (Chinese, Hindi, ...) have no words here: their
    character trigrams are compared instead (Dice, the same threshold)."""
    na, nb = normalize_title(a), normalize_title(b)
    if na and na == nb:
        return True
    ta, tb = title_terms(a), title_terms(b)
    if ta and tb:
        return jaccard(ta, tb) >= NEAR_DUPLICATE
    if na or nb:
        return False
    sa, sb = shingles(a), shingles(b)
    return bool(sa and sb) and 2 * len(sa & sb) / (len(sa) + len(sb)) >= NEAR_DUPLICATE


def _lines(text: str) -> list[str]:
    """A result's lines that say something: not blank, not markup with no word ("---"), not a
    code fence ("```sh": every block has one, the same in every result)."""
    out = []
    for line in text.splitlines():
        said = line.strip().lstrip("-*• ").strip()
        if re.search(r"\w", said) and not said.startswith(("```", "~~~")):
            out.append(said)
    return out


def repeated_lines(output: str, others: Sequence[str]) -> list[str]:
    """The lines of ``output`` that say what a line of one of ``others`` says (same words, or
    nearly the same content words)."""
    theirs = [line for other in others for line in _lines(other)]
    return [line for line in _lines(output) if any(near_duplicate(line, t) for t in theirs)]


def repeats_of(output: str, others: Sequence[str]) -> list[str]:
    """The lines of ``output`` that repeat ``others`` (:func:`repeated_lines`) when they make up
    at least half of it (a result that shares a line or two is not a repeat); else none."""
    repeated = repeated_lines(output, others)
    return repeated if len(repeated) * 2 >= len(_lines(output)) else []
