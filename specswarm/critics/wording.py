"""Count, vagueness and coverage: the number of children, children with no concrete content,
and how much of what the parent's detail says the children address."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from specswarm.critics.evidence import fact_text
from specswarm.critics.items import Check, Item, clamp, label
from specswarm.critics.scripts import GRAM, cover, has_unspaced, spaced_part, unspaced_runs, unspaced_units
from specswarm.critics.shingles import has_digit
from specswarm.critics.terms import (
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
from specswarm.critics.titles import denumbered, numbered_groups, title_terms, title_words
from specswarm.critics.words import FILLER, STOPWORDS, VAGUE, VERBS

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
    if has_unspaced(child.title):
        return _vague_unspaced(child, lex)
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


def _vague_unspaced(child: Item, lex: Lexicon) -> str | None:
    """:func:`vague_reason` for a title with letters of a script written without spaces: its
    runs of such letters are content (a phrase each; no list of that language's filler), the
    rest of the title is read word by word. A title of nothing but one short run (at most
    :data:`~.scripts.GRAM` letters, one word: "培训") with no other content is concrete only
    with a digit (of any script) in its detail."""
    runs = unspaced_runs(child.title)
    rest = spaced_part(child.title)
    terms = extract_terms(rest, lex, in_title=True)
    vague = sorted({w for w in (plain(m.group(0)).lower() for m in TOKEN.finditer(rest)) if w in VAGUE})
    if vague and len(runs) + len(terms) < 2:
        return f"vague word {vague[0]!r}"
    if not runs and not terms:
        return "no concrete content (only planning words, numbers or dates)"
    short = not terms and len(runs) == 1 and len(runs[0]) <= GRAM
    names = extract_terms(spaced_part(child.detail), lex, in_title=False, commons=False)
    if short and not names and not has_digit(child.detail):
        return "one generic word, and the detail names no place, thing or number"
    return None


def numbered_only(children: Sequence[Item]) -> dict[int, str]:
    """index -> what a child's title says besides its number, for the children whose titles say
    nothing else that a sibling's does not ("User Flow 1", "User Flow 2"; "Phase I", "Phase
    II"): a title that names a part by its number only, whatever its detail."""
    groups = numbered_groups([c.title for c in children])
    plains = [denumbered(c.title) for c in children]
    return {i: plain for i, plain in enumerate(plains) if plain and len(groups[plain]) > 1}


def check_vagueness(children: Sequence[Item], *, lex: Lexicon | None = None) -> Check:
    """Children with no concrete content ("Misc", "Other things", "Next steps", "Day 3"), or
    named only by their number among siblings named alike ("User Flow 3")."""
    numbered = numbered_only(children)
    found = [
        (i, c, r)
        for i, c in enumerate(children)
        if (r := vague_reason(c, lex))
        or (i in numbered and (r := f'named only by its number ("{numbered[i]}" and a number, as siblings)'))
    ]
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
    counted: children refine it ("Italy" -> "Rome", "Florence") and need not repeat it. Text
    in a script written without spaces counts by its letters (:func:`.scripts.cover`), every
    :data:`~.scripts.GRAM` letters as one word."""
    title = _loose_terms(spaced_part(parent.title))
    wanted = {k: v for k, v in _loose_terms(spaced_part(parent.detail)).items() if k not in title}
    texts = [f"{c.title} {c.detail} {fact_text(c)}" for c in children]
    said: set[str] = set()
    for text in texts:
        said |= set(_loose_terms(spaced_part(text)))
    letters, of_letters, gaps = cover(parent.detail, parent.title, set().union(*map(unspaced_units, texts)))
    if not wanted and not of_letters:
        return Check("coverage", 100, True, "the parent's detail names nothing more to cover")
    covered = set(wanted) & said
    share = (len(covered) + letters / GRAM) / (len(wanted) + of_letters / GRAM)
    parts = [f"{len(covered)}/{len(wanted)} key terms"] if wanted else []
    if of_letters:
        parts.append(f"{letters}/{of_letters} letters")
    note = f"{' and '.join(parts)} of the parent's detail covered"
    missing = [wanted[k] for k in wanted if k not in said] + gaps
    if missing and share < COVERAGE_FULL:
        note += f"; not covered: {', '.join(missing[:6])}"
    return Check("coverage", clamp(100 * min(1.0, share / COVERAGE_FULL)), share >= COVERAGE_PASS, note)


CONCRETE_FULL = 3
"""Named things (places, components, works) plus one for a number a child needs for a full
concreteness score; fewer scale it down (a graded signal for the specificity lens)."""


def check_concreteness(parent: Item, children: Sequence[Item], *, lex: Lexicon | None = None) -> Check:
    """How much each child names that its parent does not: distinct names in its title, detail
    and string facts (a place, a component, a work) that are not the parent's own, plus one for
    a number (a digit in its text or a numeric fact). Each child's count is capped at
    :data:`CONCRETE_FULL`; the score is the mean share (soft, always passes: vagueness is the
    check that fails). "Kyoto" under "Visit Kyoto" adds nothing; "Fushimi Inari, Kinkaku-ji,
    2 hours" under it is fully concrete."""
    lex = lex or Lexicon.of([parent.title, parent.detail] + [f"{c.title} {c.detail}" for c in children])
    own: set[str] = set()
    for t in extract_terms(parent.title, lex, in_title=True):
        own |= t.keys
    shares: list[float] = []
    thin: list[str] = []
    for i, c in enumerate(children):
        names: set[frozenset[str]] = set()
        for text, in_title, values in (
            (c.title, True, False),
            (c.detail, False, False),
            (fact_text(c), False, True),
        ):
            for t in extract_terms(text, lex, in_title=in_title, commons=False, values=values):
                if t.kind in ("name", "weak") and not t.keys <= own:
                    names.add(t.keys)
        number = any(ch.isdigit() for ch in f"{c.title} {c.detail}") or any(
            isinstance(v, int | float) and not isinstance(v, bool) for v in c.facts.values()
        )
        count = min(CONCRETE_FULL, len(names) + int(number))
        shares.append(count / CONCRETE_FULL)
        if count < CONCRETE_FULL - 1:
            thin.append(f"{label(i, c)} names {count}")
    score = clamp(100 * sum(shares) / max(1, len(shares)))
    if thin:
        note = (
            f"{'; '.join(thin)} (of {CONCRETE_FULL}: places, components or works its parent does not "
            "name, and a number): name what each part is about"
        )
    else:
        note = "every child names what it is about"
    return Check("concreteness", score, True, note)


CONCRETE_SHARE = 1 / 3
"""A leaf result with fewer of its lines concrete than this (:func:`concrete_line`) is vague."""
_MARKER = re.compile(r"^\s*(?:[-*•]+|\d{1,2}[.)]|#+)\s*")
_OPENS = ".!?:;(\"'“‘*_"


def concrete_line(line: str) -> bool:
    """A line names a number (any digit) or a name: a capitalised word inside a sentence ("walk
    to Shibuya", "book the Hotel Granvia"), not "I" and not the word a sentence opens with. On a
    Title Case line ("Book The Venue") capitals prove nothing, so only a digit counts there."""
    text = _MARKER.sub("", line).strip()
    if any(ch.isdigit() for ch in text):
        return True
    named = False
    for m in TOKEN.finditer(text):
        word = m.group(0)
        if not word[:1].isupper() or word in ("I", "I'm", "I'll"):
            continue
        before = text[: m.start()].rstrip()
        if not before or before[-1] in _OPENS:
            continue  # a sentence's first word is capitalised anyway
        if word.lower() in STOPWORDS:
            return False  # Title Case
        named = True
    return named


def topic_hits(text: str, title: str, goal: str = "") -> int:
    """How many of a leaf title's own words (not the goal's, not planning verbs or filler) a
    result names: an answer asked for names that names none of its task's ("Place: a text
    editor. Company: TodoList Inc." for "Define how tags categorize tasks") is off its task."""
    own = {w for w in title_words(title) if w not in VERBS and w not in FILLER}
    return len(title_terms(" ".join(own)) - title_terms(goal) & title_terms(text))


def _result_lines(text: str) -> list[str]:
    """The lines of a result with a word in them (not a code fence's closing line or a rule)."""
    return [ln.strip() for ln in text.splitlines() if re.search(r"\w", _MARKER.sub("", ln))]


def concrete_share(text: str) -> float:
    """The share of a result's lines that are concrete (:func:`concrete_line`); 0 when empty."""
    lines = _result_lines(text)
    return concrete_lines(text) / len(lines) if lines else 0.0


def restates(text: str, title: str, facts: Mapping[str, object] | None = None) -> bool:
    """A result that says nothing its task does not: no word of it but planning verbs, filler
    and the words of the task's title and facts ("Explore nearby mountains for 1 day." for
    "Explore nearby mountains" with ``days: 1``)."""
    task = f"{title} " + " ".join(f"{k} {v}" for k, v in (facts or {}).items())
    said = " ".join(w for w in title_words(text) if w not in VERBS and w not in FILLER)
    return not title_terms(said) - title_terms(task)


def concrete_lines(text: str) -> int:
    """How many of a result's lines are concrete (:func:`concrete_line`)."""
    return sum(concrete_line(ln) for ln in _result_lines(text))


def vague_result(text: str) -> list[str]:
    """The lines of a leaf's written result that name no number or name, when they are more than
    ``1 - CONCRETE_SHARE`` of its lines (a result that is mostly general advice: "Book the venue
    early", "Make sure all attendees are comfortable"); empty when the result is concrete enough."""
    lines = _result_lines(text)
    vague = [ln for ln in lines if not concrete_line(ln)]
    return vague if len(lines) - len(vague) < CONCRETE_SHARE * len(lines) else []


def _items(text: str) -> list[list[str]]:
    """A result's items: each line with the lines indented under it (its continuation)."""
    items: list[list[str]] = []
    top = None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if items and line.strip() and top is not None and indent > top:
            items[-1].append(line)
            continue
        if line.strip():
            top = indent
        items.append([line])
    return items


def _off_task_items(
    items: list[list[str]], title: str, siblings: Sequence[str], context: Sequence[str]
) -> list[bool]:
    """For each item of a result (:func:`_items`), whether it does a sibling's task (:func:`off_task`)."""
    known: set[str] = set().union(*(title_terms(c) for c in context))
    groups = [title_terms(t) - known for t in (title, *siblings)]
    counts = Counter(term for terms in groups for term in terms)
    own = {t for t in groups[0] if counts[t] == 1}
    others = {t for g in groups[1:] for t in g if counts[t] == 1}
    flags = []
    for item in items:
        said = title_terms(" ".join(item))
        flags.append(bool(said & others) and not said & own)
    return flags


def off_task(text: str, title: str, siblings: Sequence[str], context: Sequence[str] = ()) -> list[str]:
    """The items of a leaf's result that do a sibling's task instead of its own: they name a word
    of a sibling's title that no other title of the group has, and none of the leaf's own
    ("Delete a task: todo delete <id>" in the result of "List all tasks", beside "Delete tasks").
    Words the group shares ("task" in every title) and the context's (its ancestors', the goal)
    tell nothing apart. An item naming both is kept: it may join the two."""
    items = _items(text)
    flags = _off_task_items(items, title, siblings, context)
    return ["\n".join(item) for item, off in zip(items, flags, strict=True) if off]


def keep_on_task(
    text: str, title: str, siblings: Sequence[str], context: Sequence[str] = ()
) -> tuple[str, int]:
    """``text`` without its :func:`off_task` items, and how many were left out; ``text`` as it
    was when that would leave no item with a word in it (a result all about a sibling's task is
    a repeat, judged elsewhere)."""
    items = _items(text)
    flags = _off_task_items(items, title, siblings, context)
    kept = ["\n".join(item) for item, off in zip(items, flags, strict=True) if not off]
    if len(kept) == len(items) or not any(re.search(r"\w", k) for k in kept):
        return text, 0
    return "\n".join(kept).strip(), len(items) - len(kept)
