"""Overlap and repeats: two siblings about the same place, named thing, activity or component;
a child that repeats its parent, an ancestor, a stage planned beside its branch, or a node
planned elsewhere in the tree."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from specswarm.critics.evidence import (
    SAME_CONTENT,
    Evidence,
    action_of,
    context_keys,
    evidence,
    frame_keys,
    item_terms,
    lexicon_of,
    same_terms,
    strip_terms,
    title_keys,
    topic_keys,
)
from specswarm.critics.items import (
    Check,
    Item,
    Relative,
    ancestor_titles,
    clamp,
    join_words,
    label,
)
from specswarm.critics.scripts import stretches
from specswarm.critics.terms import Lexicon, extract_terms, stem
from specswarm.critics.titles import contains_title, denumbered, numbered_alike, same_title
from specswarm.critics.words import RESTATING

_RESTATING = frozenset(stem(w) for w in RESTATING)


def split_boilerplate(children: Sequence[Item], lex: Lexicon) -> set[str]:
    """Keys every child of a split of three or more mentions (title, detail or string facts):
    the split's theme, not overlap. With two children nothing is boilerplate: two children
    that name the same place are about the same place (shared phrasing such as "Plan a 3-day
    trip to ..." is filler and numbers, never content, anyway)."""
    if len(children) < 3:
        return set()
    per = [set().union(set(), *(t.keys for t in item_terms(c, lex))) for c in children]
    return set.intersection(*per)


def sibling_pairs(
    parent: Item, children: Sequence[Item], relatives: Sequence[Relative] = (), *, lex: Lexicon | None = None
) -> list[tuple[int, int, Evidence, bool]]:
    """(i, j, evidence, same) for every pair of children: what they share once the context
    (the ancestors' words, the split's boilerplate) is dropped, and whether that makes them
    about the same thing. :func:`overlap_groups` and :func:`closest_pair` read it."""
    lex = lex or lexicon_of(parent, children, relatives)
    drop = context_keys(ancestor_titles(parent, relatives), lex) | split_boilerplate(children, lex)
    terms = [strip_terms(item_terms(c, lex), drop) for c in children]
    acts = [action_of(c.title) for c in children]
    out = []
    for i in range(len(children)):
        for j in range(i + 1, len(children)):
            ev = evidence(terms[i], terms[j], (acts[i], acts[j]))
            # two noun-phrase titles, one's content all in the other's ("Catering menu", "Menu
            # selection"): the same thing twice; a verb makes it an activity on a shared object
            # ("Book the venue", "Decorate the venue"), weighed by the evidence alone
            nouns = acts[i] is None and acts[j] is None
            same = ev.weight >= SAME_CONTENT or same_terms(terms[i], terms[j], within=nouns)
            a, b = children[i], children[j]
            if not same and numbered_alike(a.title, a.detail, b.title, b.detail):
                # "User Flow 1", "User Flow 2": what they share is every child's boilerplate,
                # so it was dropped above; numbered alike, they are placeholders of one part
                ev, same = Evidence(SAME_CONTENT, (f'"{denumbered(a.title)}" but for a number',)), True
            out.append((i, j, ev, same))
    return out


def overlap_groups(
    parent: Item,
    children: Sequence[Item],
    relatives: Sequence[Relative] = (),
    *,
    lex: Lexicon | None = None,
    pairs: Sequence[tuple[int, int, Evidence, bool]] | None = None,
) -> list[tuple[tuple[str, ...], list[int]]]:
    """The groups of siblings that are about the same thing: (what they share, their indices),
    in the order found. Empty when no two children overlap (what :func:`check_overlap` reports,
    and what a decomposer merges before it proposes). ``pairs``: :func:`sibling_pairs`, if
    already computed."""
    if pairs is None:
        pairs = sibling_pairs(parent, children, relatives, lex=lex)
    groups: dict[tuple[str, ...], list[int]] = {}  # what is shared -> the children sharing it
    for i, j, ev, same in pairs:
        if same:
            members = groups.setdefault(ev.shared, [])
            members += [k for k in (i, j) if k not in members]
    return list(groups.items())


def check_overlap(
    parent: Item, children: Sequence[Item], relatives: Sequence[Relative] = (), *, lex: Lexicon | None = None
) -> Check:
    """Siblings that are about the same place, named thing, activity or component."""
    lex = lex or lexicon_of(parent, children, relatives)
    pairs = sibling_pairs(parent, children, relatives, lex=lex)
    groups = overlap_groups(parent, children, relatives, lex=lex, pairs=pairs)
    bad = {k for _, members in groups for k in members}
    problems = []
    for shared, members in groups:
        labels = [label(k, children[k]) for k in sorted(members)]
        verb = "both plan" if len(labels) == 2 else "all plan"
        problems.append(f"{join_words(labels)} {verb} {join_words(shared)}")
    if problems:
        note = "; ".join(problems) + ": give each place, activity or component to one child"
        return Check("overlap", clamp(100 * (1 - len(bad) / max(1, len(children)))), False, note)
    every = split_boilerplate(children, lex) - context_keys([parent.title], lex)
    theme: list[str] = []
    for t in item_terms(children[0], lex) if children else []:
        if not t.keys & every:
            continue
        # of a run of letters of a script written without spaces, only the letters shared
        for surface in stretches(t.surface, t.keys & every) if t.unspaced else [t.surface]:
            if surface not in theme:
                theme.append(surface)
    note = "no two children plan the same place, activity or component"
    if theme:
        note += f" (shared by every child, not counted: {', '.join(theme[:5])})"
    closest, pair = closest_pair(pairs)
    if closest > 0 and pair is not None:
        i, j = pair[0]
        note += (
            f"; closest: {label(i, children[i])} and {label(j, children[j])} share "
            f"{join_words(pair[1])} ({closest:.2f} of {SAME_CONTENT:.2f})"
        )
    # passing, but graded: a split whose parts touch (the general "temples" and the named
    # "Kinkaku-ji Temple") scores below one whose parts are apart, so a ranked ballot can
    # tell two passing rivals apart
    return Check("overlap", clamp(100 - PARTIAL_PENALTY * min(1.0, closest / SAME_CONTENT)), True, note)


PARTIAL_PENALTY = 30
"""Points a passing split loses when its closest two children are just below the evidence
that they are about the same thing (proportionally less for a weaker shared term)."""


def closest_pair(
    pairs: Sequence[tuple[int, int, Evidence, bool]],
) -> tuple[float, tuple[tuple[int, int], tuple[str, ...]] | None]:
    """The strongest evidence two siblings share among :func:`sibling_pairs`, with the pair and
    what they share; (0.0, None) when no two share a content term."""
    best: tuple[float, tuple[tuple[int, int], tuple[str, ...]] | None] = (0.0, None)
    for i, j, ev, _ in pairs:
        if ev.weight > best[0] + 1e-12:
            best = (ev.weight, ((i, j), ev.shared))
    return best


def _name_keys(titles: Iterable[str], lex: Lexicon) -> list[frozenset[str]]:
    return [t.keys for title in titles for t in extract_terms(title, lex, in_title=True) if t.kind == "name"]


def _surfaces(title: str, keys: set[str], lex: Lexicon) -> str:
    """The words of ``title`` whose keys are among ``keys``, as written."""
    return join_words([t.surface for t in extract_terms(title, lex, in_title=True) if t.keys & keys])


def _where(r: Relative, parent_depth: int) -> str:
    if r.relation == "ancestor":
        return f'the root goal "{r.title}"' if r.depth == 0 else f'the ancestor "{r.title}"'
    if r.relation == "sibling":
        if r.depth == 1:
            return f'the root stage "{r.title}"'
        return f'"{r.title}", a stage under "{r.parent_title}"'
    return f'"{r.title}", planned under "{r.parent_title}"' if r.parent_title else f'"{r.title}"'


def check_repeats(
    parent: Item,
    children: Sequence[Item],
    relatives: Sequence[Relative] = (),
    *,
    parent_depth: int | None = None,
    lex: Lexicon | None = None,
) -> Check:
    """Children that repeat their parent, an ancestor or another node (:func:`repeating`)."""
    hits = repeating(parent, children, relatives, parent_depth=parent_depth, lex=lex)
    if hits:
        problems = [f"{label(i, children[i])} {hit}" for i, hit in hits]
        note = "; ".join(problems) + ": plan each thing in one place only"
        return Check("repeats", clamp(100 * (1 - len(problems) / max(1, len(children)))), False, note)
    others = sum(1 for r in relatives if r.relation != "ancestor")
    return Check(
        "repeats",
        100,
        True,
        f"no child repeats its parent, an ancestor or any of {others} other node(s)",
    )


def repeating(
    parent: Item,
    children: Sequence[Item],
    relatives: Sequence[Relative] = (),
    *,
    parent_depth: int | None = None,
    lex: Lexicon | None = None,
) -> list[tuple[int, str]]:
    """(index, what it repeats) for every child that repeats its parent or an ancestor (it adds
    nothing to it), a stage planned beside this branch, or a node planned elsewhere in the
    tree (same content, see :func:`evidence`). The words of the child's own ancestors are
    context: "Kyoto's old town" under "Kyoto" does not repeat another Kyoto stage; "Hike
    Mount Fuji" under "Tokyo" does repeat the root stage "Hike Mount Fuji"."""
    lex = lex or lexicon_of(parent, children, relatives)
    ancestors = [r for r in relatives if r.relation == "ancestor"]
    depth = parent_depth if parent_depth is not None else len(ancestors)
    chain = [Relative(parent.title, "ancestor", parent.detail, parent.facts, depth, None), *ancestors]
    drop = context_keys([a.title for a in chain], lex)
    others = [r for r in relatives if r.relation != "ancestor"]
    other_terms = [strip_terms(item_terms(r, lex), drop) for r in others]
    inherited = _name_keys([a.title for a in chain], lex)
    other_anchors = [_name_keys([r.title, r.parent_title or ""], lex) for r in others]
    other_actions = [action_of(r.title) for r in others]
    # what each ancestor is: its content terms, its names, and its frame (the modifiers of its
    # title's items, minus its topics)
    shapes = []
    for a in chain:
        anames = set().union(
            set(), *(t.keys for t in extract_terms(a.title, lex, in_title=True) if t.kind == "name")
        )
        shapes.append(
            (a, title_keys(a.title, lex), anames, frame_keys(a.title, lex) - topic_keys(a.title, lex))
        )
    problems: list[tuple[int, str]] = []
    for i, child in enumerate(children):
        ckeys = title_keys(child.title, lex)
        hit: str | None = None
        for a, akeys, anames, frame in shapes:
            # the same content as the ancestor, nothing but all of the ancestor's names, or
            # nothing but its frame ("Kyoto" under "Kyoto temples and gardens"); a child that
            # takes one of its topics narrows it ("Tokyo" under "Tokyo and Nikko", "Flights"
            # under "Flights and hotels", "Temples" under "Kyoto temples and gardens")
            if ckeys and (
                ckeys == akeys or (anames and anames <= ckeys <= akeys) or (frame and ckeys <= frame)
            ):
                where = "its parent" if a is chain[0] else _where(a, depth)
                where = f'{where} "{a.title}"' if a is chain[0] else where
                hit = f"repeats {where}: it adds nothing to it"
                break
            if a is chain[0] and akeys and akeys < ckeys and ckeys - akeys <= _RESTATING:
                # all of the parent's words and a generic head: "Conflict Resolution Mechanism"
                # under "Conflict Resolution", "Task Storage Overview" under "Task Storage"
                extra = join_words(sorted(ckeys - akeys))
                hit = f'restates its parent "{a.title}" (only {extra!r} added): name a part of it'
                break
            topic = akeys - _RESTATING
            if a is chain[0] and topic and ckeys - akeys and ckeys - _RESTATING == topic:
                # the parent's words with its generic head swapped for another: "Conflict
                # Resolution Strategy" under "Conflict Resolution Specification"
                gone = _surfaces(a.title, akeys - ckeys, lex)
                added = _surfaces(child.title, ckeys - akeys, lex)
                hit = (
                    f'restates its parent "{a.title}" (only "{gone}" changed to "{added}"): name a part of it'
                )
                break
        if hit is None:
            cterms = strip_terms(item_terms(child, lex), drop)
            anchor = inherited + _name_keys([child.title], lex)
            act = action_of(child.title)
            best: tuple[float, int, Evidence] | None = None
            for k, (r, rterms) in enumerate(zip(others, other_terms, strict=True)):
                ev = evidence(cterms, rterms, (act, other_actions[k]), (anchor, other_anchors[k]))
                same = ev.weight >= SAME_CONTENT or same_terms(cterms, rterms)
                if same:
                    rank = (0 if r.relation == "sibling" else 1, -ev.weight)
                    if best is None or rank < (0 if others[best[1]].relation == "sibling" else 1, -best[0]):
                        best = (ev.weight, k, ev)
            if best is not None:
                r = others[best[1]]
                hit = f"repeats {_where(r, depth)} (same {join_words(best[2].shared)})"
        if hit is None:
            # the very title of a node planned elsewhere (a root stage planned again under
            # another stage: "Syncing Tasks" under "Conflict Resolution"), whatever the words
            # the tree's context shares
            twin = next((r for r in others if same_title(r.title, child.title)), None)
            if twin is not None:
                hit = f"repeats {_where(twin, depth)} (the same title)"
            # or the whole of it inside a longer title: "Command Line Interface Documentation"
            # under "Error Handling" plans again the root stage "Command Line Interface"
            whole = next((r for r in others if contains_title(child.title, r.title)), None)
            if twin is None and whole is not None:
                hit = f'repeats {_where(whole, depth)} (its whole title "{whole.title}")'
        if hit:
            problems.append((i, hit))
    return problems
