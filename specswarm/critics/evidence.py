"""Evidence that two items are about the same thing: the content terms they share, weighed by
kind (a name 1.0; a weak name or a common word 0.5), by where they are (title or detail), and
halved for endpoints of a movement and for frames (see :func:`evidence`). A run of letters of a
script written without spaces (:mod:`.scripts`) is one term keyed by its character units; two
such runs share a word's worth for every :data:`~.scripts.GRAM` letters their shared units hold."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from specswarm.critics.items import Item, Relative
from specswarm.critics.quantities import numeric
from specswarm.critics.scripts import GRAM, grams, spaced_part, stretches, unspaced_runs, unspaced_units
from specswarm.critics.terms import (
    ACTION_STEMS,
    CLAUSE_SPLIT,
    DASH,
    TOKEN,
    Lexicon,
    Term,
    extract_terms,
    plain,
    stem,
)
from specswarm.critics.titles import drop_aliases
from specswarm.critics.words import ACTIONS

SAME_CONTENT = 1.0
"""Evidence at or above which two items are about the same thing."""
W_NAME, W_WEAK, W_COMMON = 1.0, 0.5, 0.5
"""Weight of a shared name, weak name (acronym, demonym), common term."""
W_TITLE_TITLE, W_TITLE_DETAIL, W_DETAIL_DETAIL = 1.0, 0.75, 0.5
"""Factor for where the two mentions are."""
W_ENDPOINT = 0.5
"""Factor when either mention is an endpoint of a movement (to/from/via)."""
W_FRAME = 0.5
"""Factor for a name both titles share while each also has names of its own."""

_LIST_SPLIT = re.compile(r",|;|&|/|\+|\band\b|\bor\b|\bplus\b", re.IGNORECASE)


def frame_keys(title: str, lex: Lexicon) -> set[str]:
    """Keys of the modifiers in a title's items: every term of a multi-term item but its last
    (the head, in English): "Kyoto temples and gardens" -> {kyoto}; "Sync file layout" ->
    {sync, file}. A child that is nothing but these is the parent's frame, not a part of it."""
    text = re.sub(r"\([^)]*\)", " ", spaced_part(title))
    out: set[str] = set()
    for clause in CLAUSE_SPLIT.split(text):
        for part in _LIST_SPLIT.split(clause):
            terms = extract_terms(part, lex, in_title=True)
            for t in terms[:-1]:
                out |= t.keys
    return out


def topic_keys(title: str, lex: Lexicon) -> set[str]:
    """Keys of the terms that are a whole item of a title's list of topics: "Lists and
    dictionaries" -> {list, dictionary}; "Book the venue and date" -> {venue, date};
    "Decorate the venue" -> {} (the venue is the object of an activity, not a topic)."""
    text = re.sub(r"\([^)]*\)", " ", spaced_part(title))
    out: set[str] = set()
    for clause in CLAUSE_SPLIT.split(text):
        for part in _LIST_SPLIT.split(clause):
            terms = extract_terms(part, lex, in_title=True)
            if len(terms) == 1:
                out |= terms[0].keys
    return out


def fact_text(item: Item) -> str:
    """The string facts of an item, one clause each."""
    return "; ".join(str(v) for v in item.facts.values() if isinstance(v, str) and numeric(v) is None)


def run_terms(text: str, *, in_title: bool) -> list[Term]:
    """A common term for each run of letters of a script written without spaces in ``text``
    (:func:`~.scripts.unspaced_runs`), keyed by its character units (:func:`~.scripts.grams`)."""
    return [
        Term(frozenset(grams(run)), run, "common", in_title, False, unspaced=True)
        for run in unspaced_runs(text)
    ]


def item_terms(item: Item, lex: Lexicon) -> list[Term]:
    """Terms of an item's title (names and common words, and its runs of letters of scripts
    written without spaces, :func:`run_terms`) and detail (names only); string facts (``city:
    "Kyoto"``) count as detail. The words around such runs are read as if the runs were spaces
    (a name in Latin letters inside a Chinese sentence is a name)."""
    topics = topic_keys(item.title, lex)
    titled = [
        Term(t.keys, t.surface, t.kind, t.in_title, t.endpoint, bool(t.keys & topics))
        for t in extract_terms(spaced_part(item.title), lex, in_title=True)
    ]
    return (
        titled
        + run_terms(item.title, in_title=True)
        + extract_terms(spaced_part(item.detail), lex, in_title=False, commons=False)
        + extract_terms(spaced_part(fact_text(item)), lex, in_title=False, commons=False, values=True)
    )


def title_keys(title: str, lex: Lexicon) -> set[str]:
    """Every key of the content terms of a title (the units of its runs of letters of scripts
    written without spaces among them)."""
    text = drop_aliases(title)
    keys: set[str] = unspaced_units(text)
    for t in extract_terms(spaced_part(text), lex, in_title=True):
        keys |= t.keys
    return keys


def context_keys(titles: Iterable[str], lex: Lexicon) -> set[str]:
    """Stems of every word, and units of every run of letters of a script written without
    spaces, of the given titles (a parent's or an ancestor's words are the split's context, not
    evidence of overlap)."""
    out: set[str] = set()
    for title in titles:
        for m in TOKEN.finditer(spaced_part(title or "")):
            for part in DASH.split(plain(m.group(0))):
                if part:
                    out.add(stem(part))
        out |= title_keys(title, lex)
    return out


# -- evidence of same content -------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    weight: float
    shared: tuple[str, ...]
    """Surfaces of the shared terms, strongest first."""


def strip_terms(terms: Iterable[Term], drop: set[str]) -> list[Term]:
    out = []
    for t in terms:
        keys = t.keys - drop
        if keys:
            out.append(Term(frozenset(keys), t.surface, t.kind, t.in_title, t.endpoint, t.topic, t.unspaced))
    return out


def action_of(title: str) -> str | None:
    """The process verb a title begins with ("Download ...", "Cleaning ..."), stemmed; None."""
    m = TOKEN.search(CLAUSE_SPLIT.split(title or "", maxsplit=1)[0])
    if not m:
        return None
    w = plain(m.group(0)).lower()
    if w in ACTIONS or (w.endswith("ing") and stem(w) in ACTION_STEMS):
        return stem(w)
    return None


def _own(xs: Sequence[frozenset[str]], ys: Sequence[frozenset[str]]) -> bool:
    """Some name of ``xs`` shares no key with any name of ``ys``."""
    return any(not any(x & y for y in ys) for x in xs)


def evidence(
    a: Sequence[Term],
    b: Sequence[Term],
    actions: tuple[str | None, str | None] = (None, None),
    anchors: tuple[Sequence[frozenset[str]], Sequence[frozenset[str]]] | None = None,
) -> Evidence:
    """How strongly two items' terms say they are about the same thing (see the module doc).

    ``actions``: the process verbs the two titles begin with (:func:`action_of`).
    ``anchors``: the names each item is anchored in, its own and its ancestors' (default:
    the names of its own title); two items anchored in different names share common words
    only as a frame ("temples" under Tokyo and under Kyoto are not the same temples), while a
    shared name is the same thing wherever it is planned ("Mount Fuji")."""
    a_names = [t.keys for t in a if t.kind == "name" and t.in_title]
    b_names = [t.keys for t in b if t.kind == "name" and t.in_title]
    # each title names things of its own that the other does not, or each does something
    # different to what they share: what they share is a frame ("Day 1: Rome - Colosseum" /
    # "Day 2: Rome - Vatican"; "Download X" / "Clean X")
    acted = actions[0] is not None and actions[1] is not None and actions[0] != actions[1]
    name_frame = (_own(a_names, b_names) and _own(b_names, a_names)) or acted
    anc_a, anc_b = anchors if anchors is not None else (a_names, b_names)
    common_frame = name_frame or (_own(anc_a, anc_b) and _own(anc_b, anc_a))
    pairs: list[tuple[float, Term, Term]] = []
    for x in a:
        for y in b:
            if not (x.keys & y.keys) or x.unspaced != y.unspaced:
                continue
            kinds = {x.kind, y.kind}
            if kinds == {"name"} or (x.topic and y.topic):
                w = W_NAME  # the same name, or the same topic listed in both titles
            else:
                w = W_WEAK if "common" not in kinds else W_COMMON
            if x.in_title and y.in_title:
                w *= W_TITLE_TITLE
            elif x.in_title or y.in_title:
                w *= W_TITLE_DETAIL
            else:
                w *= W_DETAIL_DETAIL
            if x.endpoint or y.endpoint:
                w *= W_ENDPOINT
            if x.in_title and y.in_title and (name_frame if kinds == {"name"} else common_frame):
                w *= W_FRAME
            pairs.append((w * _words_shared(x, y, x.keys & y.keys), x, y))
    pairs.sort(key=lambda p: -p[0])
    used_a: set[str] = set()
    used_b: set[str] = set()
    total = 0.0
    shared: list[str] = []
    for w, x, y in pairs:
        if x.unspaced:
            # two runs: each shared unit counts once, the rest of either run stays free
            units = (x.keys & y.keys) - used_a - used_b
            if not units:
                continue
            used_a |= units
            used_b |= units
            total += w * _words_shared(x, y, units) / _words_shared(x, y, x.keys & y.keys)
            surfaces = stretches(x.surface, units)
        else:
            if x.keys & used_a or y.keys & used_b:
                continue
            used_a |= x.keys
            used_b |= y.keys
            total += w
            surfaces = [x.surface if x.kind != "common" or y.kind == "common" else y.surface]
        for surface in surfaces:
            if surface not in shared:
                shared.append(surface)
    return Evidence(total, tuple(shared))


def _words_shared(x: Term, y: Term, units: set[str] | frozenset[str]) -> float:
    """Words' worth two terms share: 1 for words; for two runs of letters of a script written
    without spaces, the letters ``units`` hold in the run where they hold fewer, a word per
    :data:`~.scripts.GRAM` letters."""
    if not x.unspaced:
        return 1.0
    held = min(sum(map(len, stretches(run, units))) for run in (x.surface, y.surface))
    return held / GRAM


def same_terms(a: Sequence[Term], b: Sequence[Term], *, within: bool = False) -> bool:
    """The two titles name exactly the same content (and some); ``within``: or all of one
    title's content is in the other's ("Catering menu" and "Menu selection" under
    "Catering": the menu twice)."""
    ka = set().union(*(t.keys for t in a if t.in_title)) if a else set()
    kb = set().union(*(t.keys for t in b if t.in_title)) if b else set()
    if within:
        return bool(ka) and bool(kb) and (ka <= kb or kb <= ka)
    return bool(ka) and ka == kb


def lexicon_of(parent: Item, children: Sequence[Item], relatives: Sequence[Relative | Item] = ()) -> Lexicon:
    """The :class:`~.terms.Lexicon` of the titles and details of a split and its relatives, the
    letters of scripts written without spaces read as spaces (:func:`~.scripts.spaced_part`)."""
    texts: list[str] = [parent.title, parent.detail]
    for it in [*children, *relatives]:
        texts += [it.title, it.detail]
    return Lexicon.of(map(spaced_part, texts))
