"""Mechanical critics for a proposed split: pure functions, no model, no I/O.

A tiny local model cannot tell a good split from a bad one (docs/MODELS.md), so
a scorer's verdict rests on these deterministic checks, with the model's
rating as one minor input (:func:`combine`).

Checks (each gives a :class:`Check` with a 0..100 score):

=============  ====  ==========================================================
name           hard  fails when
=============  ====  ==========================================================
count          yes   the number of children is outside the tree limits
duplicates     yes   two titles are (near-)identical, or a child repeats the parent
overlap        no    two siblings share too many content words (Jaccard)
vagueness      no    a child is vague ("misc", "various", "etc", one-word title...)
coverage       no    the children ignore most key terms of the parent
constraints    yes   a declared sum / mention / forbid constraint is violated
=============  ====  ==========================================================

Children are :class:`~specswarm.protocol.bodies.Child` values and parents are plan nodes:
anything with ``title``, ``detail`` and ``facts`` (:class:`Part`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from specswarm.protocol.bodies import CheckResult, Facts
from specswarm.spec import Constraint, GoalSpec

HARD_CHECKS = frozenset({"count", "duplicates", "constraints"})
"""A failed hard check vetoes approval whatever the score."""

WEIGHTS = {
    "count": 1.0,
    "duplicates": 1.5,
    "overlap": 1.0,
    "vagueness": 2.0,
    "coverage": 1.0,
    "constraints": 1.5,
}
"""Weight of each check in the mechanical score."""

VETO_BELOW = {"overlap": 25, "vagueness": 25}
"""A soft check scoring below its floor also blocks approval: a split whose
children are mostly vague (or near-copies of each other) must not pass just
because the other checks and an over-generous model rating lift the mean."""

NEAR_DUPLICATE = 0.75
"""Title token Jaccard at or above which two titles count as the same."""
OVERLAP_LIMIT = 0.45
"""Title+detail token Jaccard at or above which two siblings overlap too much."""
COVERAGE_FULL = 0.5
"""Share of the parent's key terms the children must mention for a full coverage score."""


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _wordset("""
a about above after again all also an and any are as at be been before being below between both
but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not of off on once
only or other our out over own same she should so some such than that the their them then there
these they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours via per within without must may might shall
""")
"""Words that carry no topic (removed before comparing texts)."""

GENERIC_TERMS = _wordset("""
plan planning goal goals task tasks make create step steps part parts phase overall thing
one two three four five six seven eight nine ten eleven twelve
""")
"""Planning filler: ignored when measuring coverage of the parent."""

VAGUE_WORDS = _wordset("""
misc miscellaneous other others various etc stuff general things thing sundry assorted
everything something anything
""")
"""Words that signal a child with no real content."""

_WORD = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """A light suffix stripper: enough to match 'booking'/'bookings'/'booked' with 'book'."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            return base
    return word


def words(text: str) -> list[str]:
    """Lower-case alphanumeric words of ``text``."""
    return _WORD.findall(text.lower())


def terms(text: str) -> set[str]:
    """Stemmed content words of ``text`` (stopwords removed)."""
    return {stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def normalize_title(text: str) -> str:
    """Case- and punctuation-insensitive form of a title (for exact-duplicate checks)."""
    return " ".join(words(text))


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def near_duplicate(a: str, b: str) -> bool:
    """True when two titles say the same thing (same words, or nearly the same content words)."""
    if normalize_title(a) == normalize_title(b):
        return True
    ta, tb = terms(a), terms(b)
    return bool(ta and tb) and jaccard(ta, tb) >= NEAR_DUPLICATE


Check = CheckResult
"""The outcome of one mechanical check: exactly the ``checks`` items of a vote body."""


class Part(Protocol):
    """What the critics read of a node or a proposed child (NodeView and Child both are)."""

    @property
    def title(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def facts(self) -> Facts: ...


def _text(item: Part) -> str:
    return f"{item.title} {item.detail}"


def _clamp(x: float) -> int:
    return max(0, min(100, round(x)))


def _label(i: int, child: Part) -> str:
    return f"#{i + 1} {child.title!r}"


def check_count(children: Sequence[Part], min_children: int, max_children: int) -> Check:
    n = len(children)
    ok = min_children <= n <= max_children
    note = f"{n} children (allowed {min_children}..{max_children})"
    return Check("count", 100 if ok else 0, ok, note)


def check_duplicates(parent: Part, children: Sequence[Part]) -> Check:
    """Children that repeat each other or the parent."""
    found: list[str] = []
    bad: set[int] = set()
    ptitle = parent.title
    for i, child in enumerate(children):
        title = child.title
        if ptitle and near_duplicate(title, ptitle):
            found.append(f"{_label(i, child)} repeats the parent")
            bad.add(i)

        for j in range(i + 1, len(children)):
            if near_duplicate(title, children[j].title):
                found.append(f"{_label(i, child)} and {_label(j, children[j])} are the same")
                bad.add(j)
    if not found:
        return Check("duplicates", 100, True, "no duplicate titles")
    score = 100 * (1 - len(bad) / max(1, len(children)))
    return Check("duplicates", _clamp(score), False, "; ".join(found))


def check_scope(children: Sequence[Part], elsewhere: Sequence[str]) -> Check:
    """Children that repeat a part planned in another branch (``elsewhere``: the titles of the
    parent's siblings, read off the plan by the scorer). Soft: it lowers the score, so a split
    that stays inside its own branch wins over one that re-plans the whole goal."""
    found = []
    for i, child in enumerate(children):
        title = child.title
        other = next((o for o in elsewhere if o and near_duplicate(title, o)), None)
        if other is not None:
            found.append(f"{_label(i, child)} repeats {other!r}, planned in another branch")
    if not found:
        return Check("scope", 100, True, "stays within its branch")
    return Check("scope", _clamp(100 * (1 - len(found) / max(1, len(children)))), False, "; ".join(found))


def check_overlap(children: Sequence[Part]) -> Check:
    sets = [terms(_text(c)) for c in children]
    worst, pair = 0.0, (0, 0)
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            j_ = jaccard(sets[i], sets[j])
            if j_ > worst:
                worst, pair = j_, (i, j)
    # 0.1 shared vocabulary is normal for siblings; the score falls to 0 at 0.6.
    score = 100 * (1 - max(0.0, worst - 0.1) / 0.5)
    if worst >= OVERLAP_LIMIT:
        i, j = pair
        note = (
            f"{_label(i, children[i])} and {_label(j, children[j])} overlap "
            f"({worst:.2f} of their words shared)"
        )
        return Check("overlap", _clamp(score), False, note)
    return Check("overlap", _clamp(score), True, f"largest sibling overlap {worst:.2f}")


def vague_reason(child: Part) -> str | None:
    """Why a child is vague, or None when it looks concrete."""
    title = child.title
    title_words = words(title)
    content = [w for w in title_words if w not in STOPWORDS]
    hits = sorted(set(title_words) & VAGUE_WORDS)
    # "Other activities" is vague; "Try sushi, ramen and other Japanese dishes" is not.
    if hits and len([w for w in content if w not in VAGUE_WORDS]) < 3:
        return f"vague word {hits[0]!r}"
    if len(content) < 2:
        return "title too short"
    text = _text(child)
    has_number = any(ch.isdigit() for ch in text)
    # A capitalised word after the first one of the title: a place, a product, a name.
    has_name = any(w[:1].isupper() for w in title.split()[1:])
    has_long_word = any(len(w) >= 5 and w not in GENERIC_TERMS for w in content)
    if not (has_number or has_name or has_long_word):
        return "no concrete noun, name or number"
    return None


def check_vagueness(children: Sequence[Part]) -> Check:
    reasons = [(i, c, r) for i, c in enumerate(children) if (r := vague_reason(c))]
    score = 100 * (1 - len(reasons) / max(1, len(children)))
    if reasons:
        note = "; ".join(f"{_label(i, c)}: {r}" for i, c, r in reasons)
        return Check("vagueness", _clamp(score), False, note)
    return Check("vagueness", 100, True, "every child is concrete")


def key_terms(parent: Part, goal: str = "") -> set[str]:
    """Terms of the parent (title, detail) and the goal that a split should address."""
    return {t for t in terms(f"{_text(parent)} {goal}") if t not in GENERIC_TERMS}


def check_coverage(parent: Part, children: Sequence[Part], goal: str = "") -> Check:
    wanted = key_terms(parent, goal)
    if not wanted:
        return Check("coverage", 100, True, "the parent has no key terms to cover")
    said: set[str] = set()
    for c in children:
        said |= terms(_text(c))
    covered = wanted & said
    share = len(covered) / len(wanted)
    score = 100 * min(1.0, share / COVERAGE_FULL)
    missing = sorted(wanted - said)
    note = f"{len(covered)}/{len(wanted)} key terms covered"
    if missing:
        note += f"; missing: {', '.join(missing[:6])}"
    return Check("coverage", _clamp(score), share >= COVERAGE_FULL / 2, note)


def constraints_for(constraints: Iterable[Constraint], depth: int) -> list[Constraint]:
    """The constraints that apply to a split of a node at ``depth`` (root = 0)."""
    return [c for c in constraints if c.applies_to == "all" or depth == 0]


def _mentions(text: str, term: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(term.lower())}(?!\w)", text.lower()) is not None


def check_constraints(
    parent: Part, children: Sequence[Part], constraints: Iterable[Constraint], depth: int
) -> Check:
    applicable = constraints_for(constraints, depth)
    problems: list[str] = []
    checked = 0
    texts = [_text(c) for c in children]
    for con in applicable:
        kind = con.kind
        if kind == "sum":
            field = str(con.field)
            total = con.total if depth == 0 else parent.facts.get(field)
            if total is None:  # a deeper node that declares no such fact
                continue
            checked += 1
            values = [c.facts.get(field) for c in children]
            lacking = [
                _label(i, c)
                for i, (c, v) in enumerate(zip(children, values, strict=True))
                if not isinstance(v, int | float) or isinstance(v, bool)
            ]
            if lacking:
                problems.append(f"{field} missing on {', '.join(lacking)}")
                continue
            got = sum(float(v) for v in values if v is not None)
            if not math.isclose(got, float(total)):
                problems.append(f"{field} add up to {got:g}, expected {float(total):g}")
        elif kind == "mention":
            checked += 1
            joined = " ".join(texts)
            absent = [t for t in con.terms if not _mentions(joined, t)]
            if absent:
                problems.append(f"not mentioned: {', '.join(absent)}")
        elif kind == "forbid":
            checked += 1
            named = sorted({t for t in con.terms for x in texts if _mentions(x, t)})
            if named:
                problems.append(f"forbidden: {', '.join(named)}")
    if not checked:
        return Check("constraints", 100, True, "no constraints apply")
    if problems:
        score = 100 * (1 - len(problems) / checked)
        return Check("constraints", _clamp(score), False, "; ".join(problems))
    return Check("constraints", 100, True, f"{checked} constraint(s) met")


def run_checks(
    parent: Part,
    children: Sequence[Part],
    *,
    goal: str = "",
    constraints: Iterable[Constraint] = (),
    min_children: int = 2,
    max_children: int = 6,
    depth: int | None = None,
    elsewhere: Sequence[str] = (),
) -> list[Check]:
    """Every mechanical check of a proposed split, in a fixed order."""
    level = 0 if depth is None else depth
    return [
        check_count(children, min_children, max_children),
        check_duplicates(parent, children),
        check_overlap(children),
        check_vagueness(children),
        check_coverage(parent, children, goal),
        check_constraints(parent, children, list(constraints), level),
        check_scope(children, elsewhere),
    ]


def check_split(
    spec: GoalSpec, parent: Part, children: Sequence[Part], depth: int, elsewhere: Sequence[str] = ()
) -> list[Check]:
    """:func:`run_checks` with the goal, constraints and limits of ``spec``, for a split of a
    node at ``depth``."""
    return run_checks(
        parent,
        children,
        goal=spec.goal,
        constraints=spec.constraints,
        min_children=spec.tree.min_children,
        max_children=spec.tree.max_children,
        depth=depth,
        elsewhere=elsewhere,
    )


def combine(
    checks: Sequence[Check], model_score: int | None, model_weight: float, approve_threshold: float = 60.0
) -> tuple[int, bool]:
    """Blend the checks (weighted mean) with the model's 0..100 rating; decide approval.

    ``model_weight`` in [0, 1] is the model's share of the score (ignored when
    ``model_score`` is None). Approval needs ``score >= approve_threshold``, no
    failed hard check (count, duplicates, constraints) and no soft check below
    its :data:`VETO_BELOW` floor.
    """
    if not 0.0 <= model_weight <= 1.0:
        raise ValueError(f"model_weight must be within [0, 1], got {model_weight}")
    total_w = sum(WEIGHTS.get(c.name, 1.0) for c in checks)
    mechanical = sum(WEIGHTS.get(c.name, 1.0) * c.score for c in checks) / total_w if total_w else 100.0
    score = (
        mechanical
        if model_score is None
        else ((1 - model_weight) * mechanical + model_weight * max(0, min(100, model_score)))
    )
    final = _clamp(score)
    vetoed = any(
        (c.name in HARD_CHECKS and not c.passed) or c.score < VETO_BELOW.get(c.name, 0) for c in checks
    )
    return final, final >= approve_threshold and not vetoed


def critique(checks: Sequence[Check]) -> str:
    """One line per failed check: what a decomposer should fix."""
    return "\n".join(f"{c.name}: {c.note}" for c in checks if not c.passed)
