"""The names a result plans, told by how the texts write them, not by what the words are: no
word list, no dictionary, the same rule for every language written in a cased script (Latin,
Cyrillic, Greek, Armenian ...). Pure functions, no model.

A *name* is a run of words written with a capital letter where a sentence does not begin
("visit the **Fushimi Inari Shrine** at dawn"), or at a sentence's start when the texts compared
capitalise that word mid-sentence too. Of a name's words only the *distinctive* ones identify
it: a word in capitals throughout is an abbreviation (a currency, a unit, a format, a body:
"JPY", "JSON", "UNESCO") that lines planning different things share; a word the texts
compared ever write in lower case is a common word however it is written
here ("Temple" beside "nearby temples"), and a word the task already says (the goal, the
context, the leaf's path, the plan's stages) tells where the leaf is, not what it plans
("Tokyo" under "Tokyo"). Two lines name the same thing when a name of one has more than half
of its distinctive words among those of a name of the other.

Words are compared case-folded, and as one word when they differ only in a short ending
(:func:`same_word`: "temple"/"temples", "japan"/"japanese"), so no stemmer of one language is
needed. Scripts without case (Han, Kana, Hangul, Devanagari, Arabic, Thai ...) give no such
evidence: their lines name nothing here, and only the line-level comparison of
:func:`~specswarm.critics.results.repeated_lines` judges them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os.path import commonprefix
from typing import TypeVar

from specswarm.critics.shingles import UNIT_LABEL

WORD = re.compile(r"[^\W\d_](?:[^\W_]|-(?=[^\W_]))*")
"""A word: letters and digits, inner hyphens ("Kiyomizu-dera"); an apostrophe ends it
("IBM's": "IBM", "s")."""
BREAK = re.compile(r"[.!?;:。！？；：]+(?:\s|$)|[()\[\]\"“”«»]|\s[-–—]\s")
"""Where a sentence or a clause begins: its first word is capitalised by grammar, not as a
name."""
STEM_ROOM = 3
"""Letters the longer of two forms of one word may have past what they share ("japanese")."""
MIN_PREFIX = 4
"""Fewest letters two forms of one word share from their start."""
MIN_WORD = 3
"""Fewest letters of a distinctive word ("AM", "PM" and initials identify nothing)."""
K = TypeVar("K")


def same_word(a: str, b: str) -> bool:
    """Whether two case-folded words are one word in two forms: equal, or alike in all but the
    last letter of the shorter, at least :data:`MIN_PREFIX` letters, the longer at most
    :data:`STEM_ROOM` letters past what they share ("japan"/"japanese", "shrine"/"shrines",
    "italy"/"italian"; not "tokyo"/"tower", not "kanabe"/"kanaro")."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    shared = len(commonprefix((short, long_)))
    return shared >= MIN_PREFIX and len(long_) - shared <= STEM_ROOM and len(short) - shared <= 1


class Vocabulary:
    """A set of case-folded words, looked up by :func:`same_word`."""

    def __init__(self, words: Iterable[str] = ()) -> None:
        self._by_head: dict[str, set[str]] = {}
        for w in words:
            self.add(w)

    def add(self, word: str) -> None:
        self._by_head.setdefault(word[:MIN_PREFIX], set()).add(word)

    def has(self, word: str) -> bool:
        """Whether a form of ``word`` is in it."""
        return any(same_word(word, w) for w in self._by_head.get(word[:MIN_PREFIX], ()))


def _capital(word: str) -> bool:
    return unicodedata.category(word[0]) in ("Lu", "Lt")


def _cased(word: str) -> bool:
    ch = word[0]
    return ch.lower() != ch.upper()


@dataclass(frozen=True)
class _Word:
    text: str
    opens: bool
    """No letter or digit comes before it in its clause: grammar capitalises it."""
    follows: bool
    """Only spaces part it from the word before it: it may continue that word's name."""


def _clauses(line: str) -> list[list[_Word]]:
    """The clauses of ``line`` (its leading unit label left out), each as its words."""
    out = []
    for part in BREAK.split(UNIT_LABEL.sub("", line, count=1)):
        words, end = [], None
        for m in WORD.finditer(part):
            before = part[: m.start()]
            opens = not any(ch.isalnum() for ch in before)
            follows = end is not None and not part[end : m.start()].strip()
            words.append(_Word(m.group(0), opens, follows))
            end = m.end()
        if words:
            out.append(words)
    return out


@dataclass(frozen=True)
class Lexicon:
    """How the texts compared write their words: ever in lower case (a common word), capitalised
    where no sentence begins (a name's word), and the words the task already says."""

    lower: Vocabulary
    capital: Vocabulary
    known: Vocabulary

    @classmethod
    def of(cls, texts: Iterable[str], known: str = "") -> Lexicon:
        """The lexicon of ``texts`` and of ``known``, what the task already says (its words
        count as lower case where they are, never as capitalised: it runs titles together)."""
        lower, capital = Vocabulary(), Vocabulary()
        for text, said in [*((t, False) for t in texts), (known, True)]:
            for line in text.splitlines():
                for clause in _clauses(line):
                    for word in clause:
                        if not _cased(word.text):
                            continue
                        if not _capital(word.text):
                            lower.add(word.text.casefold())
                        elif not word.opens and not said:
                            capital.add(word.text.casefold())
        return cls(lower, capital, Vocabulary(w.casefold() for w in WORD.findall(known)))


@dataclass(frozen=True)
class Name:
    """A name as a line writes it, and the words that identify it."""

    surface: str
    keys: frozenset[str]


def names(line: str, lex: Lexicon) -> list[Name]:
    """The names ``line`` holds (see the module docstring), in order; a name with no distinctive
    word is left out."""
    out: list[Name] = []

    def close(run: list[str]) -> None:
        keys = frozenset(
            f
            for f in (w.casefold() for w in run if not w.isupper())
            if len(f) >= MIN_WORD and not lex.lower.has(f) and not lex.known.has(f)
        )
        if keys:
            out.append(Name(" ".join(run), keys))

    for clause in _clauses(line):
        run: list[str] = []
        for word in clause:
            folded = word.text.casefold()
            if run and not word.follows:
                close(run)
                run = []
            if _capital(word.text) and (not word.opens or lex.capital.has(folded)):
                run.append(word.text)
            elif run:
                close(run)
                run = []
        close(run)
    return out


def same_name(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two names are one: the one with fewer distinctive words has more than half of
    them among the other's (compared by :func:`same_word`): "Fushimi" is "Fushimi Inari Shrine",
    "Meiji Shrine" is not "Fushimi Inari Shrine"."""
    small, big = sorted((a, b), key=len)
    shared = sum(1 for w in small if any(same_word(w, v) for v in big))
    return 2 * shared > len(small)


def _first_named(
    lines: Sequence[str], theirs: Sequence[tuple[K, str]], known: str
) -> list[tuple[int, K, Name]]:
    """For each of ``lines`` that names what a text of ``theirs`` names: (its index, the key of
    the first such text, the name as the line writes it), the line's first such name."""
    if not lines or not theirs:
        return []
    lex = Lexicon.of([*lines, *(text for _, text in theirs)], known)
    their_names = [(key, names(text, lex)) for key, text in theirs]
    out = []
    for i, line in enumerate(lines):
        for mine in names(line, lex):
            key = next((k for k, ns in their_names if any(same_name(mine.keys, n.keys) for n in ns)), None)
            if key is not None:
                out.append((i, key, mine))
                break
    return out


def unclaimed(text: str, titles: Iterable[str], own: str) -> str:
    """``text`` without the distinctive words of the names in ``titles`` (the titles of leaves
    off a leaf's path: a leaf's title names what that leaf plans), except words ``own`` (the
    leaf's own title and detail) says too. An ancestor's detail that names what another leaf is
    titled after ("Kyoto: temples such as Fushimi Inari Shrine" above "Visit Fushimi Inari
    Shrine") hands that name to that leaf: it stays something the leaf beside it must not plan."""
    titles = list(titles)
    lex = Lexicon.of(titles, own)  # ``own`` as what the task says: its words identify no name
    claimed = Vocabulary(k for t in titles for n in names(t, lex) for k in n.keys)
    return WORD.sub(lambda m: "" if claimed.has(m.group(0).casefold()) else m.group(0), text)


def shared_names(lines: Sequence[str], theirs: Sequence[str], known: str) -> list[tuple[int, int, Name]]:
    """The lines of ``lines`` that name what a line of ``theirs`` names: (index in ``lines``,
    index in ``theirs``, the name as ``lines`` writes it), the first such name of each line.
    ``known``: what the task already says (its words name nothing new)."""
    return _first_named(lines, list(enumerate(theirs)), known)


def named_elsewhere(lines: Sequence[str], rest: Mapping[str, str], known: str) -> list[tuple[int, str, Name]]:
    """The lines of ``lines`` that name what another node's own text names: (index in ``lines``,
    the node, the name as the line writes it), the first such name of each line. ``rest``: every
    node off the leaf's path, named as a note names it -> its title and detail; ``known``: what
    the task already says (a name the leaf's own path says is the leaf's to plan too)."""
    return _first_named(lines, sorted(rest.items()), known)
