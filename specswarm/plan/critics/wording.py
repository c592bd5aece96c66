"""Count, vagueness and coverage: the number of children, children with no concrete content,
and how much of what the parent's detail says the children address."""

from __future__ import annotations

from collections.abc import Sequence

from specswarm.plan.critics.evidence import fact_text
from specswarm.plan.critics.items import Check, Item, clamp, label
from specswarm.plan.critics.terms import (
    DASH,
    TOKEN,
    Lexicon,
    extract_terms,
    is_number_like,
    is_verb,
    never_content,
    plain,
    stem,
)
from specswarm.plan.critics.words import VAGUE

COVERAGE_FULL = 0.5
"""Share of the parent's key terms the children must mention for a full coverage score."""
COVERAGE_PASS = 0.25
"""Below this share of the parent's key terms, coverage fails (soft)."""


def check_count(children: Sequence[Item], min_children: int = 2, max_children: int = 6) -> Check:
    """The number of children is within the tree's limits."""
    n = len(children)
    ok = min_children <= n <= max_children
    return Check("count", 100 if ok else 0, ok, f"{n} children (allowed {min_children}..{max_children})")


def vague_reason(child: Item, lex: Lexicon | None = None) -> str | None:
    """Why a child has no concrete content, or None."""
    lex = lex or Lexicon.of([child.title, child.detail])
    words = [plain(m.group(0)).lower() for m in TOKEN.finditer(child.title)]
    terms = extract_terms(child.title, lex, in_title=True)
    vague = sorted({w for w in words if w in VAGUE})
    content = [t for t in terms if not (t.keys & {stem(v) for v in VAGUE})]
    if vague and len(content) < 2:
        return f"vague word {vague[0]!r}"
    if not content:
        return "no concrete content (only planning words, numbers or dates)"
    only = content[0] if len(content) == 1 and content[0].kind == "common" else None
    if only is not None and len(only.surface.split()) == 1:
        # one word known to be common (written in lower case somewhere in the tree, or an -ing
        # form: "Hiking") is concrete only with a detail that names a place, a thing or a
        # number; a capitalised word never seen in lower case may be a name ("Athens")
        word = only.surface
        known_common = word[:1].islower() or stem(word) in lex.lower or word.lower().endswith("ing")
        names = extract_terms(child.detail, lex, in_title=False, commons=False)
        if known_common and not names and not any(ch.isdigit() for ch in child.detail):
            return "one generic word, and the detail names no place, thing or number"
    return None


def check_vagueness(children: Sequence[Item], *, lex: Lexicon | None = None) -> Check:
    """Children with no concrete content ("Misc", "Other things", "Next steps", "Day 3")."""
    found = [(i, c, r) for i, c in enumerate(children) if (r := vague_reason(c, lex))]
    if found:
        note = "; ".join(f"{label(i, c)}: {r}" for i, c, r in found) + ": name what each child is about"
        return Check("vagueness", clamp(100 * (1 - len(found) / max(1, len(children)))), False, note)
    return Check("vagueness", 100, True, "every child is concrete")


def _loose_terms(text: str) -> dict[str, str]:
    """stem -> first surface of every content-looking word (planning verbs and filler dropped)."""
    out: dict[str, str] = {}
    for m in TOKEN.finditer(text or ""):
        for part in DASH.split(plain(m.group(0))):
            pl = part.lower()
            if len(pl) >= 3 and not never_content(pl) and not is_number_like(pl) and not is_verb(pl):
                out.setdefault(stem(pl), pl)
    return out


def check_coverage(parent: Item, children: Sequence[Item]) -> Check:
    """The children address what the parent's detail says it covers: the share of the
    detail's content words that some child mentions (soft). The parent's title is not
    counted: children refine it ("Italy" -> "Rome", "Florence") and need not repeat it."""
    title = _loose_terms(parent.title)
    wanted = {k: v for k, v in _loose_terms(parent.detail).items() if k not in title}
    if not wanted:
        return Check("coverage", 100, True, "the parent's detail names nothing more to cover")
    said: set[str] = set()
    for c in children:
        said |= set(_loose_terms(f"{c.title} {c.detail} {fact_text(c)}"))
    covered = set(wanted) & said
    share = len(covered) / len(wanted)
    note = f"{len(covered)}/{len(wanted)} key terms of the parent's detail covered"
    missing = [wanted[k] for k in wanted if k not in said]
    if missing and share < COVERAGE_FULL:
        note += f"; not covered: {', '.join(missing[:6])}"
    return Check("coverage", clamp(100 * min(1.0, share / COVERAGE_FULL)), share >= COVERAGE_PASS, note)
