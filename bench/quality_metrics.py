"""Plan-quality metrics: pure functions over a plain tree, whoever produced the tree.

The plan-quality benchmark compares three systems on one goal -- the swarm, the same model
asked once for the whole plan ("one-shot"), and a single agent decomposing top-down with the
swarm's prompts -- and scores them all with the code below. So that the benchmark judges
independently of the swarm's own judges, nothing here imports or reuses
``specswarm.critics``, and the metrics import nothing from specswarm at all (a Plan is
read by duck typing; only the command line imports the fold, to read event logs).

Trees
    :class:`QNode` / :class:`QTree`, a neutral tree; :func:`from_plan` (a folded specswarm Plan),
    :func:`from_outline` (one model answer for the whole plan: Markdown headings, nested bullets,
    numbered lists), :func:`from_nested` (hand-built trees, JSON answers). Every converter reads
    duration facts such as ``(3 days)`` out of titles (:func:`title_facts`); declared facts win.

Metrics (each returns a :class:`Score`: a number plus the offending items)
    ==================  =============================================================  ======
    key                 what                                                           better
    ==================  =============================================================  ======
    nodes, leaves,      counts                                                         --
    depth
    near_duplicates     pairs of nodes, not ancestor/descendant, whose titles'          lower
                        distinctive terms mostly coincide
    sibling_overlap     largest Jaccard of distinctive terms between two siblings      lower
                        (tree boilerplate, ancestors' terms and sibling templates out)
    fact_consistency    share of splits of a node with a numeric fact whose children   higher
                        all declare it and add up to it
    constraints         declared constraints met (sum, mention, forbid), met/total     higher
    ancestor_repeats    nodes whose title repeats an ancestor's                        lower
    result_repeats      leaf pairs under one parent with near-identical results        lower
    leaf_specificity    share of result lines with a number or a proper name           higher
    ==================  =============================================================  ======

:func:`evaluate` runs them all; :func:`score_table` prints systems side by side. The content
metrics of the leaves' text, in any language (``bench/content_metrics.py``), do use the swarm's
language-independent text tools and its concrete lens's rule, on purpose: the benchmark scores
every system's text by them alike.

    python bench/quality_metrics.py --system swarm=RUN.jsonl --system one-shot=ANSWER.md
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = "root"
"""Id of the root node in every converter's output (the same id a specswarm Plan uses)."""

# --------------------------------------------------------------------------- thresholds

NEAR_DUP_JACCARD = 2 / 3
"""Two titles are near-duplicates when the Jaccard of their distinctive terms is at least this:
two thirds of all the content words the two titles use are shared. Domain-free: it only counts
words, and by then stopwords, numbers, units and the tree's boilerplate are gone, so "Hike Mount
Fuji" / "Hike Mount Fuji (2 days)" (1.0) and "Book the venue" / "Book a venue for the reception"
(0.67) match, while two different tasks on one subject ("Design the user authentication API" /
"Implement the user authentication API", 0.6) and a refinement ("Hike Mount Fuji" / "Ascend the
summit of Mount Fuji", 0.4) do not."""

ANCESTOR_REPEAT_JACCARD = NEAR_DUP_JACCARD
"""A node repeats an ancestor under the same rule as a near-duplicate: a child that says
mostly what its parent said adds nothing, whatever the domain."""

BOILERPLATE_SHARE = 0.5
"""A term used in more than this share of a tree's node titles is the tree's boilerplate
("trip", "conference", "wedding", "API" in a plan about that), not content: it cannot tell two
nodes apart. Relative to the tree, so no domain word list is needed."""

BOILERPLATE_MIN_NODES = 3
"""...and in at least this many titles: in a tree of two or three nodes a word shared by two of
them is as likely a real repetition as a template."""

SIBLING_TEMPLATE_MIN = 3
"""In a group of at least this many siblings, a term that every sibling uses is the group's
template ("Plan a 3-day trip to X", "Write the X section") and is left out of sibling overlap.
Two siblings sharing a word could be a template or a duplicate; from three on, a word in all of
them is a pattern."""

FACT_SUM_TOLERANCE = 1e-6
"""Children's numeric facts must add up to the parent's within this: rounding noise only
(minutes become hours, weeks become days), never a real shortfall."""

RESULT_SHINGLE = 3
"""Leaf results are compared as sets of word 3-grams: long enough that common phrasing ("in
the", "visit the") rarely matches by chance, short enough that a reworded copy still shares
most 3-grams. Language- and domain-neutral."""

RESULT_DUP_JACCARD = 0.5
"""Two sibling leaves' results are near-identical when half of their distinct 3-grams are
shared: independent texts on two different subjects share almost none."""

OUTLINE_INDENT_STEP = 2
"""An outline list item nests under the item above when indented at least this many columns
deeper (Markdown's own minimum); a 1-column wobble in a model's output is the same level."""

TITLE_HEAD_MIN_TERMS = 2
"""An outline item "Head: the rest" keeps only Head as its title (the rest becomes its detail)
when Head has at least this many content words, or one and a duration fact ("Tokyo (5 days)"),
so that one-shot titles are as short as the swarm's; a bare label keeps the whole line
("Day 1: Arrive in Tokyo", "Morning: keynote", "Phase 2: testing")."""

TITLE_HEAD_MAX_WORDS = 8
"""...and at most this many words (a longer head is a sentence, not a label)."""

# --------------------------------------------------------------------------- word lists


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    """
    a about above across after again against all almost along also although am among an and any
    are around as at away be because been before being below between both but by can could did do
    does doing down during each either else etc every few for from further had has have having he
    her here hers him his how however i if in including into is it its itself just least less like
    many may me might more most much must my near need new next no nor not now of off often on once
    only onto or other our ours out over own per perhaps plus quite rather really same several she
    should since so some such than that the their theirs them then there these they this those
    though through throughout thus to together too toward towards under until up upon us very via
    was we well were what whatever when where whether which while who whom whose why will with
    within without would yet you your yours yourself vs versus e g ie eg
    """
)
"""English function words: they carry no subject matter in any domain."""

GENERIC_WORDS = _words(
    """
    plan planning organize organise arrange prepare preparation handle manage management do make
    get go take have set choose select decide consider ensure enjoy experience explore visit spend
    include overview general various misc miscellaneous other others thing things item items stuff
    part parts step steps phase stage task tasks detail details option options main key final
    basic important best good great top additional extra
    """
)
"""Meta-words of planning itself (how any plan talks about its parts, in any domain): "plan",
"organize", "step", "phase", "visit", "explore"... Two nodes sharing only these share nothing."""

NUMBER_WORDS: Mapping[str, float] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "eighteen": 18,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
    "hundred": 100,
    "half": 0.5,
    "couple": 2,
}
"""Spelled-out quantities ("two-week", "half a day", "a weekend") read as numbers in titles."""

ORDINAL_WORDS = _words("first second third fourth fifth sixth seventh eighth ninth tenth last several few")
"""Positions, not quantities: removed from distinctive terms like numbers."""

DURATION_UNITS: Mapping[str, tuple[str, float]] = {
    "day": ("days", 1),
    "week": ("days", 7),
    "fortnight": ("days", 14),
    "weekend": ("days", 2),
    "night": ("nights", 1),
    "hour": ("hours", 1),
    "hr": ("hours", 1),
    "minute": ("hours", 1 / 60),
    "min": ("hours", 1 / 60),
    "month": ("months", 1),
    "sprint": ("sprints", 1),
}
"""Units of time that plans in every domain budget (trip days, sprint weeks, session hours,
months to a wedding): unit -> (fact field, factor). Weeks are calendar weeks (7 days) and
minutes become hours, so "(2 hours)" splits into "(30 minutes)" children can add up."""

UNIT_WORDS = frozenset(DURATION_UNITS) | {"year", "time", "am", "pm", "km", "mile", "hrs", "mins"}
"""Units are quantities, not subject matter: removed from distinctive terms with the numbers."""

_NOISE = STOPWORDS | GENERIC_WORDS | frozenset(NUMBER_WORDS) | ORDINAL_WORDS | UNIT_WORDS

# --------------------------------------------------------------------------- the tree

Fact = int | float | str


@dataclass(frozen=True)
class QNode:
    """One node of a plan, whoever made it."""

    id: str
    parent: str | None
    title: str
    detail: str = ""
    depth: int = 0
    leaf: bool = True
    facts: Mapping[str, Fact] = field(default_factory=dict)
    """Declared facts, plus duration facts read from the title where none is declared."""
    children: tuple[str, ...] = ()
    result: str | None = None
    """A leaf's text (the swarm's result output, or the lines under an outline's deepest item)."""
    summary: str = ""
    """A split node's summary of its parts, written from them (a plan node's ``summary``, when
    the plan has one; no outline has one: the prose under an outline's heading is its detail)."""


@dataclass(frozen=True)
class QTree:
    nodes: Mapping[str, QNode]
    root: str = ROOT

    def __post_init__(self) -> None:
        if self.root not in self.nodes:
            raise ValueError(f"root {self.root!r} is not a node")
        for node in self.nodes.values():
            for child in node.children:
                if child not in self.nodes or self.nodes[child].parent != node.id:
                    raise ValueError(f"{node.id}: child {child!r} missing or not pointing back")

    def walk(self) -> Iterator[QNode]:
        """Nodes depth-first from the root, children in order (nodes not reachable are skipped)."""
        stack, seen = [self.root], set()
        while stack:
            node = self.nodes[stack.pop()]
            if node.id in seen:
                continue  # a malformed tree with a cycle is walked once
            seen.add(node.id)
            yield node
            stack.extend(reversed(node.children))

    def kids(self, node: QNode) -> list[QNode]:
        return [self.nodes[c] for c in node.children]

    def ancestors(self, node_id: str) -> list[QNode]:
        """Parent first, root last."""
        out: list[QNode] = []
        parent = self.nodes[node_id].parent
        while parent is not None and parent in self.nodes:
            out.append(self.nodes[parent])
            parent = self.nodes[parent].parent
        return out

    def leaves(self) -> list[QNode]:
        return [n for n in self.walk() if not n.children]


# --------------------------------------------------------------------------- facts from titles

_NUM_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_UNIT = "|".join(sorted(DURATION_UNITS, key=len, reverse=True))
_DURATION = re.compile(
    rf"(?<![\w.])(?P<num>\d+(?:\.\d+)?|{_NUM_WORD})(?:\s*-\s*|\s+)(?:(?:a|an|full|whole)\s+)?"
    rf"(?P<unit>{_UNIT})s?\b",
    re.IGNORECASE,
)
_DAY_RANGE = re.compile(r"\bdays?\s+(\d+)\s*(?:-|–|—|to|through|until)\s*(?:day\s+)?(\d+)\b", re.IGNORECASE)
_DAY_INDEX = re.compile(r"\bday\s+(\d+)\b(?!\s*(?:-|–|—|to\b))", re.IGNORECASE)
_RANGE_BEFORE = re.compile(r"\d\s*(?:-|–|—|to|or)\s*$", re.IGNORECASE)
_PAREN = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 6)


def _facts_in(text: str) -> dict[str, int | float]:
    m = _DAY_RANGE.search(text)
    if m and int(m.group(2)) >= int(m.group(1)):
        return {"days": int(m.group(2)) - int(m.group(1)) + 1}
    for m in _DURATION.finditer(text):
        if _RANGE_BEFORE.search(text[: m.start()]):
            continue  # "2-3 days": a range states no single number
        raw = m.group("num").lower()
        num = NUMBER_WORDS[raw] if raw in NUMBER_WORDS else float(raw)
        name, factor = DURATION_UNITS[m.group("unit").lower()]
        return {name: _number(num * factor)}
    m = _DAY_INDEX.search(text)
    if m:
        return {"days": 1}
    return {}


def title_facts(title: str) -> dict[str, int | float]:
    """Duration facts a title states: ``"Visit Kyoto (4 days)"`` -> ``{"days": 4}``.

    Reads ``N unit`` / ``N-unit`` / spelled numbers (``"two-week"`` -> 14 days, ``"half-day"``),
    ``Days 3-5`` (3 days) and ``Day 2`` (1 day). A parenthesised duration wins over one in the
    running text; otherwise the first one counts. Ranges such as ``2-3 days`` state nothing.
    """
    for m in _PAREN.finditer(title):
        found = _facts_in(m.group(1) or m.group(2) or "")
        if found:
            return found
    return _facts_in(title)


def _merged_facts(declared: Mapping[str, Any], title: str, read_titles: bool) -> dict[str, Fact]:
    out: dict[str, Fact] = dict(title_facts(title)) if read_titles else {}
    out.update({str(k): v for k, v in declared.items()})
    return out


def numeric(value: Any) -> float | None:
    """A fact's value as a number, or None (bools and words are not numbers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


# --------------------------------------------------------------------------- converters


def summary_text(value: Any) -> str:
    """A node's summary as text: a string, or the ``text`` (else ``output``) of a summary
    record; "" for none."""
    if value is None or isinstance(value, str):
        return value or ""
    text = _get(value, "text") or _get(value, "output")
    return text if isinstance(text, str) else ""


def from_plan(plan: Any, *, read_titles: bool = True) -> QTree:
    """A folded specswarm ``Plan`` as a QTree (duck-typed: ``plan.nodes`` of NodeView-likes; a
    node's ``summary`` is read when it has one)."""
    nodes: dict[str, QNode] = {}
    for node in plan.nodes.values():
        result = getattr(node, "result", None)
        output = getattr(result, "output", result) if result is not None else None
        nodes[node.id] = QNode(
            id=node.id,
            parent=node.parent,
            title=node.title,
            detail=node.detail or "",
            depth=node.depth,
            leaf=bool(node.leaf),
            facts=_merged_facts(node.facts or {}, node.title, read_titles),
            children=tuple(node.children),
            result=output if isinstance(output, str) else None,
            summary=summary_text(getattr(node, "summary", None)),
        )
    root = ROOT if ROOT in nodes else next(n.id for n in nodes.values() if n.parent is None)
    return QTree(nodes, root)


def from_nested(root: Any, *, read_titles: bool = True) -> QTree:
    """A tree from plain data: a node is a title (a leaf), ``(title, [children])``,
    ``(title, "result text")``, or a mapping with ``title`` and any of ``detail``, ``facts``,
    ``children``, ``result``, ``summary``. Ids: ``root``, then ``1``, ``1.2``... by position."""
    nodes: dict[str, QNode] = {}

    def add(raw: Any, node_id: str, parent: str | None, depth: int) -> None:
        if isinstance(raw, str):
            raw = {"title": raw}
        elif isinstance(raw, tuple):
            title, rest = raw
            raw = {"title": title, "result" if isinstance(rest, str) else "children": rest}
        kids = list(raw.get("children") or ())
        ids = [f"{node_id}.{i}" if parent is not None else str(i) for i in range(1, len(kids) + 1)]
        title = str(raw["title"])
        nodes[node_id] = QNode(
            id=node_id,
            parent=parent,
            title=title,
            detail=str(raw.get("detail") or ""),
            depth=depth,
            leaf=not kids,
            facts=_merged_facts(raw.get("facts") or {}, title, read_titles),
            children=tuple(ids),
            result=raw.get("result"),
            summary=summary_text(raw.get("summary")),
        )
        for kid, kid_id in zip(kids, ids, strict=True):
            add(kid, kid_id, node_id, depth + 1)

    add(root, ROOT, None, 0)
    return QTree(nodes, ROOT)


# ---- outline parsing

_FENCE = re.compile(r"^\s*(```|~~~)")
_HRULE = re.compile(r"^\s{0,3}([-*_=])(\s*\1){2,}\s*$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(
    r"^(?P<indent>\s*)(?P<marker>[-*+•◦▪‣●○■□–]|\d+(?:\.\d+)*[.)]|\d+(?:\.\d+)+|\(\d+\)"
    r"|[A-Za-z][.)]|(?:[ivx]{1,4}|[IVX]{1,4})[.)])\s+(?P<text>.*\S)\s*$"
)
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)(?P<title>.+?)\1\s*:?\s*(?P<rest>.*?)\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]+\|[\s:|-]*$")


def _marker_kind(marker: str) -> str:
    """num1 (``1.``), num2 (``1.2``)..., roman (``ii.``), alpha (``a)``), or the bullet itself."""
    body = marker.strip("().")
    if body[:1].isdigit():
        return f"num{body.count('.') + 1}"
    if re.fullmatch(r"[ivx]{2,4}|[IVX]{2,4}", body):
        return "roman"
    if body.isalpha():
        return "alpha"
    return marker


def _clean(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links, images
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])[*_](?!\s)(.+?)(?<!\s)[*_](?![\w*])", r"\1", text)
    text = text.replace("`", "").replace("**", "")
    text = re.sub(r"^\[[ xX]\]\s+", "", text)  # task-list boxes
    return re.sub(r"\s+", " ", text).strip().rstrip(":").strip()


@dataclass
class _Draft:
    kind: str  # root | heading | bold | item
    title: str
    level: int = 0
    indent: int = -1
    rank: int = 0
    pos: int = 0
    """Where the draft's own line is in the answer (keeps text in reading order)."""
    lines: list[tuple[int, str]] = field(default_factory=list)
    """Text lines under the draft, with their positions."""
    children: list[_Draft] = field(default_factory=list)

    @property
    def bare(self) -> bool:
        return self.kind == "item" and not self.children and not self.lines


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for raw in text.expandtabs(4).splitlines():
        if _FENCE.match(raw):
            continue  # a fenced answer is parsed like any other (models fence whole answers)
        if not raw.strip():
            out.append(("blank", None))
            continue
        if _HRULE.match(raw) or _TABLE_RULE.match(raw):
            continue
        if m := _HEADING.match(raw):
            out.append(("heading", (len(m.group(1)), m.group(2))))
        elif m := _ITEM.match(raw):
            indent = len(m.group("indent"))
            out.append(("item", (indent, _marker_kind(m.group("marker")), m.group("text"))))
        elif (m := _BOLD_LINE.match(raw)) and len(raw) - len(raw.lstrip()) < OUTLINE_INDENT_STEP:
            out.append(("bold", (m.group("title"), m.group("rest"))))
        else:
            out.append(("text", (len(raw) - len(raw.lstrip()), raw.strip())))
    # plain lines at the margin that each introduce a list ("Day 1: Tokyo" then bullets) are
    # headings when there are two or more of them (one alone is a preamble: "Here is the plan:")
    nonblank = [i for i, t in enumerate(out) if t[0] != "blank"]
    candidates = [
        i
        for k, i in enumerate(nonblank[:-1])
        if out[i][0] == "text" and out[i][1][0] < OUTLINE_INDENT_STEP and out[nonblank[k + 1]][0] == "item"
    ]
    if len(candidates) >= 2:
        for i in candidates:
            out[i] = ("bold", (out[i][1][1], ""))
    return out


def _parse(text: str) -> _Draft:
    root = _Draft("root", "")
    stack: list[_Draft] = [root]
    ranks: dict[int, dict[str, int]] = {}
    blank_before = False

    def pop_while(cond: Callable[[_Draft], bool]) -> None:
        while len(stack) > 1 and cond(stack[-1]):
            stack.pop()

    def push(draft: _Draft) -> None:
        stack[-1].children.append(draft)
        stack.append(draft)

    for pos, (kind, value) in enumerate(_tokens(text)):
        if kind == "blank":
            blank_before = True
            continue
        if kind == "heading":
            level, title = value

            def closes(d: _Draft, level: int = level) -> bool:
                return d.kind in ("item", "bold") or (d.kind == "heading" and d.level >= level)

            pop_while(closes)
            push(_Draft("heading", title, level=level, pos=pos))
            ranks = {}
        elif kind == "bold":
            title, rest = value
            pop_while(lambda d: d.kind in ("item", "bold"))
            push(_Draft("bold", title, level=7, pos=pos, lines=[(pos, rest)] if rest else []))
            ranks = {}
        elif kind == "item":
            indent, marker, title = value
            seen = ranks.setdefault(indent, {})  # marker kinds in order of first use at this indent
            rank = seen.setdefault(marker, len(seen))
            new = _Draft("item", title, indent=indent, rank=rank, pos=pos)

            def not_parent(d: _Draft, new: _Draft = new) -> bool:
                if d.kind != "item":
                    return False
                deeper = new.indent >= d.indent + OUTLINE_INDENT_STEP or (
                    new.indent == d.indent and new.rank > d.rank
                )
                return not deeper

            pop_while(not_parent)
            push(new)
        else:
            indent, line = value
            if blank_before and indent < OUTLINE_INDENT_STEP:
                pop_while(lambda d: d.kind == "item")  # a paragraph at the margin ends the list
            stack[-1].lines.append((pos, line))
        blank_before = False
    # "# My Japan itinerary" on top of everything: the one top node is the goal restated
    while (
        len(root.children) == 1 and root.children[0].kind in ("heading", "bold") and root.children[0].children
    ):
        only = root.children[0]
        root.lines.extend(only.lines)
        root.children = only.children
    if not root.children and len(root.lines) > 1:  # no structure at all: one line, one item
        root.children = [_Draft("item", line, pos=pos) for pos, line in root.lines]
        root.lines = []
    return root


def _split_title(text: str) -> tuple[str, str]:
    m = re.search(r":\s+|\s+[—–-]\s+", text)
    if not m:
        return text, ""
    head, tail = text[: m.start()].strip(), text[m.end() :].strip()
    if not tail or len(head.split()) > TITLE_HEAD_MAX_WORDS:
        return text, ""
    terms = len(content_terms(head))
    if terms >= TITLE_HEAD_MIN_TERMS or (terms and title_facts(head)):
        return head, tail
    return text, ""


def from_outline(goal: str, outline_text: str, *, read_titles: bool = True) -> QTree:
    """Parse one model answer that gives the whole plan into a QTree rooted at ``goal``.

    Structure comes from Markdown headings (``#``..``######``), whole-line bold labels
    (``**Kyoto (4 days)**``), bullet and numbered items (``-``, ``*``, ``1.``, ``1.2``, ``a)``),
    nested by indentation (or by marker kind when a model forgets to indent: ``1.`` items with
    ``-`` items under them), and margin lines that each introduce a list (``Day 1: Tokyo``).
    Other lines are text of the item above them; a leaf's text is its result. Items whose
    children are all bare one-liners without facts keep those lines as their result (the lines
    under the deepest items are the leaf's text). Code fences, rules and table rules are dropped;
    a lone top heading restating the goal is unwrapped; a preamble goes to the root's detail.
    Item titles "Label: the rest" keep the label (see :data:`TITLE_HEAD_MIN_TERMS`).
    """
    root = _parse(outline_text)
    nodes: dict[str, QNode] = {}

    def add(draft: _Draft, node_id: str, parent: str | None, depth: int) -> None:
        if draft.kind == "root":
            title, detail, facts = goal.strip(), "", _merged_facts({}, goal, read_titles)
        else:
            full = _clean(draft.title)
            title, detail = _split_title(full)
            facts = _merged_facts({}, title, read_titles) or _merged_facts({}, full, read_titles)
        kids = draft.children
        bare = parent is not None and kids and all(k.bare for k in kids)
        if bare and not any(title_facts(_clean(k.title)) for k in kids):
            draft.lines.extend((k.pos, f"- {_clean(k.title)}") for k in kids)
            kids = []
        lines = [line for line in (_clean(text) for _, text in sorted(draft.lines)) if line]
        ids = [f"{node_id}.{i}" if parent is not None else str(i) for i in range(1, len(kids) + 1)]
        if kids:
            detail = " ".join([detail, *lines]).strip()
            result = None
        else:
            result = "\n".join(lines) or None
        nodes[node_id] = QNode(
            id=node_id,
            parent=parent,
            title=title,
            detail=detail,
            depth=depth,
            leaf=not kids,
            facts=facts,
            children=tuple(ids),
            result=result,
        )
        for kid, kid_id in zip(kids, ids, strict=True):
            add(kid, kid_id, node_id, depth + 1)

    add(root, ROOT, None, 0)
    return QTree(nodes, ROOT)


# --------------------------------------------------------------------------- terms


_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_ACRONYM = re.compile(r"\(([A-Z]{2,8})s?\)")


def _expanded(text: str) -> str:
    """``text`` without an acronym in parentheses that spells the initials of the words right
    before it ("Command Line Interface (CLI)"): an alias, not more content."""

    def drop(m: re.Match[str]) -> str:
        letters = m.group(1).lower()
        words = [w for w in re.split(r"[^\w]+", text[: m.start()]) if w][-len(letters) :]
        return "" if "".join(w[0].lower() for w in words) == letters else m.group(0)

    return _ACRONYM.sub(drop, text)


def content_terms(text: str) -> frozenset[str]:
    """Lower-cased, lightly stemmed words of ``text`` minus stopwords, planning meta-words,
    numbers, units and spelled-out acronyms (no tree context: see :func:`distinctive_terms`)."""
    out: set[str] = set()
    for raw in _WORD.findall(_expanded(text).lower()):
        word = raw.replace("’", "'")
        if word.endswith("'s"):
            word = word[:-2]
        word = word.strip("'")
        stem = _stem(word)
        if len(stem) < 2 or word in _NOISE or stem in _NOISE:
            continue
        out.add(stem)
    return frozenset(out)


def _title_key(title: str) -> str:
    """A title's words, lower case: two titles with the same key are the same title."""
    return " ".join(re.findall(r"\w+", title.lower()))


def boilerplate(tree: QTree) -> frozenset[str]:
    """Terms in more than :data:`BOILERPLATE_SHARE` of the tree's titles (and in at least
    :data:`BOILERPLATE_MIN_NODES`). Siblings with the same title count once: a word repeated
    because a title is ("Define the scope" three times under one parent) is a duplicate, not a
    template."""
    distinct = {(n.parent, _title_key(n.title)): n.title for n in tree.walk()}
    titles = [content_terms(title) for title in distinct.values()]
    df = Counter(t for terms in titles for t in terms)
    return frozenset(
        t for t, k in df.items() if k >= BOILERPLATE_MIN_NODES and k > BOILERPLATE_SHARE * len(titles)
    )


def distinctive_terms(tree: QTree) -> dict[str, frozenset[str]]:
    """Each node's title terms without the tree's boilerplate."""
    common = boilerplate(tree)
    return {n.id: content_terms(n.title) - common for n in tree.walk()}


def jaccard(a: Iterable[Any], b: Iterable[Any]) -> float:
    a, b = set(a), set(b)
    union = a | b
    return len(a & b) / len(union) if union else 0.0


# --------------------------------------------------------------------------- scores


@dataclass(frozen=True)
class Offence:
    """One offending item: the nodes involved and what is wrong."""

    nodes: tuple[str, ...]
    note: str

    def __str__(self) -> str:
        return f"{', '.join(self.nodes)}: {self.note}"


@dataclass(frozen=True)
class Score:
    """A metric's value and the offending items behind it."""

    value: float
    items: tuple[Offence, ...] = ()
    count: int | None = None
    """The numerator, when ``value`` is a share (``value = count / total``)."""
    total: int | None = None
    """The denominator, when ``value`` is a share; 0 means there was nothing to judge."""

    def show(self) -> str:
        if self.total is not None:
            return "n/a (0/0)" if self.total == 0 else f"{self.value:.2f} ({self.count}/{self.total})"
        if isinstance(self.value, int):
            return str(self.value)
        return f"{self.value:.2f}"


def _share(good: int, total: int, items: Iterable[Offence]) -> Score:
    return Score(good / total if total else math.nan, tuple(items), good, total)


def node_count(tree: QTree) -> Score:
    return Score(sum(1 for _ in tree.walk()))


def leaf_count(tree: QTree) -> Score:
    return Score(len(tree.leaves()))


def depth(tree: QTree) -> Score:
    """Edges on the longest root-to-leaf path (a lone root is depth 0)."""
    best = 0
    stack = [(tree.root, 0)]
    while stack:
        node_id, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in tree.nodes[node_id].children)
    return Score(best)


def near_duplicates(tree: QTree) -> Score:
    """Pairs of nodes, neither an ancestor of the other, whose distinctive title terms have a
    Jaccard of at least :data:`NEAR_DUP_JACCARD`. Value: the number of pairs."""
    terms = distinctive_terms(tree)
    order = [n.id for n in tree.walk()]
    lineage = {i: {a.id for a in tree.ancestors(i)} for i in order}
    items: list[Offence] = []
    for k, a in enumerate(order):
        for b in order[k + 1 :]:
            if a in lineage[b] or b in lineage[a] or not terms[a] or not terms[b]:
                continue
            j = jaccard(terms[a], terms[b])
            if j >= NEAR_DUP_JACCARD:
                ta, tb = tree.nodes[a].title, tree.nodes[b].title
                items.append(Offence((a, b), f"{ta!r} ~ {tb!r} ({j:.2f})"))
    return Score(len(items), tuple(items))


def sibling_overlap(tree: QTree) -> Score:
    """The largest Jaccard of distinctive terms between two siblings (0..1). Besides the tree's
    boilerplate, the terms of the siblings' ancestors (the context they inherit) and, in groups of
    :data:`SIBLING_TEMPLATE_MIN` or more, the terms every sibling shares are left out. Items: the
    pair(s) reaching the maximum (when above 0)."""
    common = boilerplate(tree)
    best, items = 0.0, []
    for parent in tree.walk():
        kids = tree.kids(parent)
        if len(kids) < 2:
            continue
        context = set(common)
        for anc in [parent, *tree.ancestors(parent.id)]:
            context |= content_terms(anc.title)
        terms = [content_terms(k.title) - context for k in kids]
        if len({_title_key(k.title) for k in kids}) >= SIBLING_TEMPLATE_MIN:  # a pattern of distinct titles
            template = frozenset.intersection(*terms)
            terms = [t - template for t in terms]
        for i in range(len(kids)):
            for j in range(i + 1, len(kids)):
                value = jaccard(terms[i], terms[j])
                if value <= 0:
                    continue
                shared = sorted(terms[i] & terms[j])
                pair = Offence(
                    (kids[i].id, kids[j].id),
                    f"{kids[i].title!r} / {kids[j].title!r} share {shared} ({value:.2f})",
                )
                if value > best + 1e-12:
                    best, items = value, [pair]
                elif abs(value - best) <= 1e-12:
                    items.append(pair)
    return Score(round(best, 6), tuple(items))


def fact_consistency(tree: QTree, constraints: Sequence[Any] = ()) -> Score:
    """Share of splits of a node carrying a numeric fact whose children all declare that fact and
    add up to it (every numeric fact of the node). Where the spec declares a ``sum`` for a split,
    that sum is what the split divides: "Organize a one-day conference" with ``sum weeks: 26``
    divides 26 weeks of preparation, not the one day its title reads as. Items: the inconsistent
    splits."""
    sums = [c for c in constraints if _get(c, "kind") == "sum" and numeric(_get(c, "total")) is not None]
    good, total, items = 0, 0, []
    for node in tree.walk():
        kids = tree.kids(node)
        own = {k: v for k, v in ((k, numeric(v)) for k, v in node.facts.items()) if v is not None}
        declared_here = [c for c in sums if _get(c, "applies_to", "root") == "all" or node.id == tree.root]
        if kids and declared_here:
            own = {str(_get(c, "field")): float(numeric(_get(c, "total")) or 0) for c in declared_here}
        if not kids or not own:
            continue
        total += 1
        problems = []
        for name, want in sorted(own.items()):
            values = [numeric(k.facts.get(name)) for k in kids]
            declared = [v for v in values if v is not None]
            shown = "+".join("?" if v is None else f"{_number(v)}" for v in values)
            if len(declared) < len(values):
                problems.append(
                    f"{name} {_number(want)}: {len(values) - len(declared)} of {len(values)} children "
                    f"declare none ({shown})"
                )
            elif abs(sum(declared) - want) > FACT_SUM_TOLERANCE:
                problems.append(f"{name} {_number(want)} != {shown} = {_number(sum(declared))}")
        if problems:
            items.append(Offence((node.id,), f"{node.title!r}: " + "; ".join(problems)))
        else:
            good += 1
    return _share(good, total, items)


def _get(constraint: Any, name: str, default: Any = None) -> Any:
    if isinstance(constraint, Mapping):
        return constraint.get(name, default)
    return getattr(constraint, name, default)


def _names(term: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE) is not None


def _text(node: QNode, with_result: bool) -> str:
    parts = [node.title, node.detail]
    if with_result and node.result:
        parts.append(node.result)
    return "\n".join(parts)


def constraints_met(tree: QTree, constraints: Sequence[Any]) -> Score:
    """Declared constraints that hold, met/total. A constraint (a specswarm ``Constraint`` or a
    mapping with the same fields) holds when it holds at every split it applies to
    (``applies_to``: ``root`` = the root's split, ``all`` = every split):

    * ``sum``: every child declares the numeric fact ``field`` and they add up to ``total``;
    * ``mention``: the children's titles and details name every term (whole words, any case);
    * ``forbid``: no node below the split names a term, results included (a forbidden thing
      written into a leaf's text is in the plan all the same).
    """
    root = tree.nodes[tree.root]
    met, items = 0, []
    for constraint in constraints:
        kind = _get(constraint, "kind")
        scope = _get(constraint, "applies_to", "root")
        splits = [root] if scope == "root" else [n for n in tree.walk() if n.children]
        problems = []
        if kind == "forbid":
            below = tree.kids(root) if scope == "root" else [n for n in tree.walk() if n.id != tree.root]
            for node in below:
                hits = [t for t in _get(constraint, "terms", ()) if _names(t, _text(node, True))]
                if hits:
                    problems.append(Offence((node.id,), f"forbid: names {hits}"))
        else:
            for split in splits:
                kids = tree.kids(split)
                if kind == "sum":
                    name, want = _get(constraint, "field"), numeric(_get(constraint, "total"))
                    values = [numeric(k.facts.get(name)) for k in kids]
                    declared = [v for v in values if v is not None]
                    if not values or len(declared) < len(values) or want is None:
                        ok = False
                    else:
                        ok = abs(sum(declared) - want) <= FACT_SUM_TOLERANCE
                    if not ok:
                        shown = "+".join("?" if v is None else f"{_number(v)}" for v in values)
                        problems.append(
                            Offence((split.id,), f"sum {name} = {want}: {shown or 'no children'}")
                        )
                elif kind == "mention":
                    text = "\n".join(_text(k, False) for k in kids)
                    missing = [t for t in _get(constraint, "terms", ()) if not _names(t, text)]
                    if missing:
                        problems.append(Offence((split.id,), f"mention: children never name {missing}"))
                else:
                    problems.append(Offence((split.id,), f"unknown constraint kind {kind!r}"))
        if problems:
            items.extend(problems)
        else:
            met += 1
    return _share(met, len(constraints), items)


def ancestor_repeats(tree: QTree) -> Score:
    """Nodes whose distinctive title terms match an ancestor's (Jaccard at least
    :data:`ANCESTOR_REPEAT_JACCARD`), unless they are a strict subset of them: "Error Handling"
    under "Error Handling and Logging" takes one of its parts, while "Command Line Interface
    Specification" under "Command Line Interface" says it again. Value: the number of such nodes."""
    terms = distinctive_terms(tree)
    items = []
    for node in tree.walk():
        for anc in tree.ancestors(node.id):
            if terms[node.id] and terms[anc.id] and not terms[node.id] < terms[anc.id]:
                j = jaccard(terms[node.id], terms[anc.id])
                if j >= ANCESTOR_REPEAT_JACCARD:
                    items.append(
                        Offence((node.id, anc.id), f"{node.title!r} repeats {anc.title!r} ({j:.2f})")
                    )
                    break
    return Score(len(items), tuple(items))


def shingles(text: str, k: int = RESULT_SHINGLE) -> frozenset[tuple[str, ...]]:
    """Word k-grams of ``text`` (lower case, punctuation and list markers gone)."""
    words = re.findall(r"\w+", text.lower())
    if len(words) < k:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(tuple(words[i : i + k]) for i in range(len(words) - k + 1))


def result_repeats(tree: QTree) -> Score:
    """Pairs of leaves under one parent whose results' word-shingle Jaccard is at least
    :data:`RESULT_DUP_JACCARD`. Value: the number of pairs."""
    items = []
    for parent in tree.walk():
        leaves = [k for k in tree.kids(parent) if not k.children and k.result and k.result.strip()]
        grams = [shingles(k.result or "") for k in leaves]
        for i in range(len(leaves)):
            for j in range(i + 1, len(leaves)):
                value = jaccard(grams[i], grams[j])
                if value >= RESULT_DUP_JACCARD:
                    items.append(
                        Offence(
                            (leaves[i].id, leaves[j].id),
                            f"results of {leaves[i].title!r} and {leaves[j].title!r} ({value:.2f})",
                        )
                    )
    return Score(len(items), tuple(items))


_LINE_MARKER = re.compile(r"^\s*(?:[-*+•◦▪‣●○■□–]|\d+(?:\.\d+)*[.)]|[A-Za-z][.)])\s+")
_TOKEN = re.compile(r"[^\W\d_][\w'’.-]*")


def _capitals(line: str) -> tuple[list[str], list[str]] | None:
    """The capitalised words of a line: (those opening the line or a sentence, those inside a
    sentence), or None when the line is Title Case (a capitalised function word such as "And" or
    "The" inside it): there capitals prove nothing."""
    text = _LINE_MARKER.sub("", line).strip()
    opening: list[str] = []
    inner: list[str] = []
    for m in _TOKEN.finditer(text):
        word = re.sub(r"['’]s$", "", m.group().rstrip(".-'’"))
        if not word[:1].isupper() or re.fullmatch(r"I(?:['’](?:m|ll|ve|d))?", word):
            continue
        before = text[: m.start()].rstrip(" \"'“‘([*_")
        if not before or before[-1] in ".!?:;":
            opening.append(word)
        elif word.lower() in STOPWORDS:
            return None
        else:
            inner.append(word)
    return opening, inner


def known_names(tree: QTree) -> frozenset[str]:
    """Words the tree itself writes capitalised inside a sentence, anywhere (titles, details,
    results): a line that opens with one of them ("Shibuya Crossing at night" when some other
    line says "walk to Shibuya") opens with a name, not just with a capital."""
    names: set[str] = set()
    for node in tree.walk():
        for text in (node.title, node.detail, node.result or ""):
            for line in text.splitlines():
                caps = _capitals(line)
                if caps:
                    names.update(w for w in caps[1] if w.lower() not in _NOISE)
    return frozenset(names)


def is_specific(line: str, names: Iterable[str] = ()) -> bool:
    """A line names a number (any digit) or a proper name: a capitalised word inside a sentence
    (not "I"), or a word of ``names`` (:func:`known_names`) opening it. The first word of a line
    or sentence is capitalised anyway, and on a Title Case line capitals prove nothing: only
    digits count there. Spelled-out numbers do not count ("one of the cafes", "a few hours")."""
    if re.search(r"\d", line):
        return True
    caps = _capitals(line)
    if caps is None:
        return False
    opening, inner = caps
    known = set(names)
    return bool(inner) or any(w in known for w in opening)


def leaf_specificity(tree: QTree) -> Score:
    """Share of leaf result lines with a number or a proper name (:func:`is_specific`, names
    opening a line learnt from the whole tree). Items: the lines without either."""
    names = known_names(tree)
    good, total, items = 0, 0, []
    for leaf in tree.leaves():
        for line in (leaf.result or "").splitlines():
            if not re.search(r"\w", _LINE_MARKER.sub("", line)):
                continue  # empty, or markup with no word (a code fence's closing line, a rule)
            total += 1
            if is_specific(line, names):
                good += 1
            else:
                items.append(Offence((leaf.id,), line.strip()))
    return _share(good, total, items)


# --------------------------------------------------------------------------- all of them

METRICS: Mapping[str, str] = {
    "nodes": "nodes",
    "leaves": "leaves",
    "depth": "depth",
    "near_duplicates": "near-duplicate node pairs (lower better)",
    "sibling_overlap": "max sibling overlap 0..1 (lower better)",
    "fact_consistency": "nested facts add up (higher better)",
    "constraints": "declared constraints met (higher better)",
    "ancestor_repeats": "children repeating an ancestor (lower better)",
    "result_repeats": "sibling leaves, same result (lower better)",
    "leaf_specificity": "specific result lines (higher better)",
}
"""Metric key -> row label, in table order."""


def evaluate(tree: QTree, constraints: Sequence[Any] = ()) -> dict[str, Score]:
    """Every metric of ``tree``, keyed as in :data:`METRICS`."""
    return {
        "nodes": node_count(tree),
        "leaves": leaf_count(tree),
        "depth": depth(tree),
        "near_duplicates": near_duplicates(tree),
        "sibling_overlap": sibling_overlap(tree),
        "fact_consistency": fact_consistency(tree, constraints),
        "constraints": constraints_met(tree, constraints),
        "ancestor_repeats": ancestor_repeats(tree),
        "result_repeats": result_repeats(tree),
        "leaf_specificity": leaf_specificity(tree),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Score):
        return value.show()
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def score_table(rows: list[tuple[str, dict[str, Any]]], labels: Mapping[str, str] = METRICS) -> str:
    """Systems side by side: one column per ``(system, metrics)`` row, one line per metric
    (known metrics in ``labels`` order and label, then any other keys as given)."""
    keys = [k for k in labels if any(k in m for _, m in rows)]
    keys += [k for _, m in rows for k in m if k not in keys and k not in labels]
    keys = list(dict.fromkeys(keys))
    header = ["metric", *(name for name, _ in rows)]
    body = [[labels.get(k, k), *(_cell(m.get(k)) for _, m in rows)] for k in keys]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first, *rest = cells
        return "  ".join(
            [first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))]
        )

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in body)]).rstrip()


def offences(scores: Mapping[str, Score]) -> str:
    """Every offending item, metric by metric (for a report under the table)."""
    out = []
    for key, score in scores.items():
        for item in score.items:
            out.append(f"[{key}] {item}")
    return "\n".join(out)


# --------------------------------------------------------------------------- command line


def _load(path: Path, goal: str | None) -> tuple[QTree, Sequence[Any], str | None]:
    if path.suffix == ".jsonl":
        from specswarm.plan import fold
        from specswarm.protocol.events import read_event_log

        plan = fold(read_event_log(path).events)
        spec = plan.spec
        return from_plan(plan), tuple(spec.constraints) if spec else (), spec.goal if spec else None
    if goal is None:
        raise SystemExit(f"{path}: an outline needs --goal (or an event log given first)")
    return from_outline(goal, path.read_text(encoding="utf-8")), (), goal


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--system",
        action="append",
        required=True,
        metavar="NAME=PATH",
        help="an event log (.jsonl, folded) or a model's outline answer (any other file); repeat",
    )
    ap.add_argument("--goal", help="root title for outlines (default: the first event log's goal)")
    ap.add_argument("--details", action="store_true", help="list the offending items")
    args = ap.parse_args(argv)
    goal, constraints, rows = args.goal, None, []
    for item in args.system:
        name, _, raw = item.partition("=")
        tree, declared, found_goal = _load(Path(raw), goal)
        goal = goal or found_goal
        constraints = declared if constraints is None and declared else constraints
        rows.append((name, tree))
    scored = [(name, evaluate(tree, constraints or ())) for name, tree in rows]
    print(score_table(scored))
    if args.details:
        for name, scores in scored:
            print(f"\n== {name}\n{offences(scores)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
