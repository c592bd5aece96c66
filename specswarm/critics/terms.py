"""Content terms of a text, found with no dictionary and no model (the same rules for every
domain): clauses, a light stemmer, names (runs of capitalised words never written in lower case
in the texts compared), weak names (acronyms, demonyms) and common words; planning filler,
numbers, units, times of day and dates are never content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from specswarm.critics.words import (
    ACTIONS,
    CALENDAR,
    CONNECTORS,
    DEMONYMS,
    ENDPOINT_PREP,
    FILLER,
    MOVEMENT,
    NAME_HEADS,
    NUMBER_WORDS,
    STOPWORDS,
    TARGET_PREP,
    UNIT_WORDS,
    VAGUE,
    VERBS,
)

CLAUSE_SPLIT = re.compile(r"(?<!\b[a-z])(?<!\d)[.!?](?=\s|$)|[:;|•\n]|\s[-–—]+\s|\s[–—]|[–—]\s")
DASH = re.compile(r"[-–]")
"""Splits a hyphenated word into its parts ("Kiyomizu-ji", "3-day")."""
TOKEN = re.compile(r"`[^`]+`|[^\W_](?:[\w]|[-'’.&](?=[^\W_]))*", re.UNICODE)


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light, consistent stemmer: booking/booked/book, temples/temple, hiking/hike,
    organization/organize, deletion/delete, cities/city all meet."""
    w = word.lower()
    for poss in ("'s", "’s"):
        if w.endswith(poss):
            w = w[:-2]
    w = w.strip("'’")
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses") or w.endswith(("ches", "shes", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ations", "ation", "ings", "ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) >= 2 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]
            break
    else:  # no suffix above: a noun of an action meets its verb
        if w.endswith(("tion", "sion")) and len(w) >= 7:
            w = w[:-3]  # deletion/delete, completion/complete, revision/revise
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


_VERB_STEMS = frozenset(stem(v) for v in VERBS)
_HEAD_STEMS = frozenset(stem(h) for h in NAME_HEADS)


def is_head(word: str) -> bool:
    """A head of place and institution names ("Temple", "Museums", "Mount")."""
    return word.lower() in NAME_HEADS or stem(word) in _HEAD_STEMS


ACTION_STEMS = frozenset(stem(v) for v in ACTIONS)


@lru_cache(maxsize=1 << 16)
def plain(token: str) -> str:
    t = token.strip("`")
    for poss in ("'s", "’s"):
        if t.endswith(poss):
            t = t[:-2]
    return t.strip("'’")


@lru_cache(maxsize=1 << 16)
def is_number_like(lower: str) -> bool:
    if any(ch.isdigit() for ch in lower):
        return True
    parts = DASH.split(lower)
    return all(p in NUMBER_WORDS or p in UNIT_WORDS or p in FILLER for p in parts if p)


def never_content(lower: str) -> bool:
    return lower in STOPWORDS or lower in FILLER or lower in CALENDAR or lower in VAGUE


def is_verb(lower: str) -> bool:
    """A planning verb in its base or -ing form ("book", "booking"; not "books", a noun)."""
    return lower in VERBS or (lower.endswith("ing") and stem(lower) in _VERB_STEMS)


def _imperative(lowers: Sequence[str]) -> list[bool]:
    """Which words stand where a planning verb is an instruction, not a noun: the clause's first
    word, after "to", or after and/or/then/& that follows such a verb ("Plan and book")."""
    out = [False] * len(lowers)
    for k in range(len(lowers)):
        prev = lowers[k - 1] if k > 0 else ""
        after_verb = k >= 2 and out[k - 2] and is_verb(lowers[k - 2])
        out[k] = k == 0 or prev in ("to", "how") or (prev in ("and", "or", "then", "&") and after_verb)
    return out


@dataclass(frozen=True, eq=False)
class Lexicon:
    """How each stemmed word is written across the texts compared: capitalised mid-clause
    (a name) or in lower case mid-clause (a common word, even if Title Case elsewhere).
    Frozen and hashed by identity, so the terms of a text under one lexicon (one split being
    judged) are computed once."""

    capital: frozenset[str] = frozenset()
    lower: frozenset[str] = frozenset()

    @classmethod
    def of(cls, texts: Iterable[str]) -> Lexicon:
        capital: set[str] = set()
        lower: set[str] = set()
        for text in texts:
            for clause in CLAUSE_SPLIT.split(text or ""):
                for k, m in enumerate(TOKEN.finditer(clause)):
                    tok = plain(m.group(0))
                    if not tok or m.group(0).startswith("`"):
                        continue
                    for part in DASH.split(tok):
                        if not part:
                            continue
                        s = stem(part)
                        if part[0].isupper():
                            if k > 0:
                                capital.add(s)
                        elif part[0].isalpha():
                            # lower case after the first word, or anywhere in a
                            # lower-case clause: a common word
                            lower.add(s)
        return cls(frozenset(capital), frozenset(lower))


Kind = Literal["name", "weak", "common"]


@dataclass(frozen=True)
class Term:
    """One content term of a text: a name (maybe several words) or a common word."""

    keys: frozenset[str]
    """Stems that identify it (a name's words minus heads such as "Mount")."""
    surface: str
    """As written: "Mount Fuji", "hiking"."""
    kind: Kind
    in_title: bool
    endpoint: bool
    """The end of a movement ("to Tokyo" after "return"), not the subject."""
    topic: bool = False
    """A whole item of its title's list of topics ("dictionaries" in "Lists and dictionaries")."""
    unspaced: bool = False
    """A run of letters of a script written without spaces (:mod:`.scripts`): ``surface`` is the
    run, ``keys`` its character units; two such terms share as many words as the letters their
    shared units hold, a word per :data:`~.scripts.GRAM` letters."""


def _word_kind(tok: str, initial: bool, lex: Lexicon, imperative: bool = False) -> Kind | None:
    """Whether one token is a name, weak name or common word (None: not content)."""
    raw = tok
    if raw.startswith("`"):
        return "name"
    t = plain(raw)
    if not t:
        return None
    lower = t.lower()
    if never_content(lower) or is_number_like(lower) or (imperative and is_verb(lower)):
        return None
    if re.search(r"\w[._]\w", t) and not t[0].isupper():
        return "name"  # a code identifier: tasks.json, sync_state
    s = stem(t)
    if t[0].isupper():
        if len(t) >= 2 and t.isupper():
            return "weak"  # an acronym: CLI, JSON, API
        if any(ch.isupper() for ch in t[1:]) and not t.isupper():
            return "name"  # GitHub, iPhone
        if s in lex.lower and not is_head(lower):
            return "common"  # Title Case of a common word
        if initial and s not in lex.capital:
            return "common"
        if lower in DEMONYMS or re.search(r"(ese|ian|ish)$", lower) and len(lower) >= 6:
            return "weak"
        return "name"
    return "common"


def extract_terms(
    text: str, lex: Lexicon, *, in_title: bool, commons: bool = True, values: bool = False
) -> list[Term]:
    """Content terms of one text (``commons=False``: names only; ``values=True``: the text is a
    list of values, not sentences, so a capitalised first word is a name: ``city: "Kyoto"``)."""
    return list(_terms_of(text, lex, in_title, commons, values))


@lru_cache(maxsize=1 << 12)
def _terms_of(text: str, lex: Lexicon, in_title: bool, commons: bool, values: bool) -> tuple[Term, ...]:
    out: list[Term] = []
    for clause in CLAUSE_SPLIT.split(text or ""):
        matches = list(TOKEN.finditer(clause))
        toks = [m.group(0) for m in matches]
        lowers = [plain(t).lower() for t in toks]
        # a name never runs across punctuation ("Kiyomizu-ji Temple, the Fushimi Inari Shrine")
        glued = [
            k > 0 and not clause[matches[k - 1].end() : matches[k].start()].strip() for k in range(len(toks))
        ]
        imp = _imperative(lowers)
        between = False
        i = 0
        while i < len(toks):
            kind = _word_kind(toks[i], i == 0 and not values, lex, imp[i])
            if kind in ("name", "weak") or (
                kind is None and i > 0 and plain(toks[i])[:1].isupper() and is_head(lowers[i])
            ):
                # a name: this and the following capitalised words (joined by connectors)
                j = i + 1
                while j < len(toks) and glued[j]:
                    if (
                        plain(toks[j])[:1].isupper()
                        and not never_content(lowers[j])
                        or (is_head(lowers[j]) and plain(toks[j])[:1].isupper())
                    ):
                        j += 1
                        continue
                    k = j
                    while k < len(toks) and glued[k] and lowers[k] in CONNECTORS and k - j < 2:
                        k += 1
                    if (
                        k > j
                        and k < len(toks)
                        and glued[k]
                        and plain(toks[k])[:1].isupper()
                        and not never_content(lowers[k])
                    ):
                        j = k
                        continue
                    break
                words = [plain(t) for t in toks[i:j]]
                kinds = [kind] + [
                    _word_kind(t, False, lex, imp[i + n]) for n, t in enumerate(toks[i + 1 : j], 1)
                ]
                strong = {
                    stem(w)
                    for w, k_ in zip(words, kinds, strict=True)
                    if k_ == "name" and not is_head(w) and w.lower() not in CONNECTORS
                }
                weak = {stem(w) for w, k_ in zip(words, kinds, strict=True) if k_ == "weak"}
                common_in = {
                    (stem(w), w)
                    for w, k_ in zip(words, kinds, strict=True)
                    if k_ == "common" and not is_head(w)
                }
                endpoint = _is_endpoint(lowers, i, between)
                if strong:
                    out.append(Term(frozenset(strong), " ".join(words), "name", in_title, endpoint))
                elif weak:
                    out.append(Term(frozenset(weak), " ".join(words), "weak", in_title, endpoint))
                elif kind is None and len(words) > 1 and all(is_head(w) for w in words):
                    out.append(
                        Term(
                            frozenset({" ".join(w.lower() for w in words)}),
                            " ".join(words),
                            "name",
                            in_title,
                            endpoint,
                        )
                    )
                if commons and in_title:
                    for c, surface in sorted(common_in):
                        out.append(Term(frozenset({c}), surface, "common", in_title, endpoint))
                i = j
                continue
            if lowers[i] == "between":
                between = True
            if kind == "common" and commons and in_title:
                for part in DASH.split(plain(toks[i])):
                    pl = part.lower()
                    if len(pl) < 3 or never_content(pl) or is_number_like(pl) or (imp[i] and is_verb(pl)):
                        continue
                    out.append(
                        Term(
                            frozenset({stem(pl)}), part, "common", in_title, _is_endpoint(lowers, i, between)
                        )
                    )
            i += 1
    return tuple(out)


def _is_endpoint(lowers: Sequence[str], i: int, between: bool) -> bool:
    """Whether the word at ``i`` ends a movement: after from/via/between, "and" in
    "between X and Y", or to/into/in/at after a movement word ("return to", "arrive in")."""
    j = i - 1
    while j >= 0 and lowers[j] in ("the", "a", "an"):
        j -= 1
    if j < 0:
        return False
    prev = lowers[j]
    if prev in ENDPOINT_PREP or (between and prev == "and"):
        return True
    if prev in TARGET_PREP:
        return any(w in MOVEMENT for w in lowers[max(0, j - 3) : j])
    return False
