"""Content metrics: what a reader reads in a plan's leaf results, whoever wrote the tree.

:mod:`quality_metrics` scores a tree's structure (with English word lists where it reads
words); the metrics here score the text of its leaves and hold in any language and script. They
use the swarm's own language-independent tools on purpose, the same for every system: the item
lines, character trigrams, rarity weights and digits of any script of
:mod:`specswarm.critics.shingles`, the names of :mod:`specswarm.critics.names` (in cased
scripts), the rule of the board's ``concrete`` lens
(:func:`specswarm.critics.results.is_concrete`), the script of a letter
(:mod:`specswarm.spec.language`) and the schedule of :mod:`specswarm.plan.schedule`. No word
lists.

A leaf's *item lines* are :func:`~specswarm.critics.shingles.item_lines` of its result (list
markers stripped, blank and markup-only lines left out); a leaf without a result has none.

=====================  ==========================================================  ======
key                    what                                                        better
=====================  ==========================================================  ======
leaf_chars_min         the fewest characters of one leaf's item lines (a wide       higher
                       East Asian character counts two: ``critics.results.width``)
leaves_under_200       leaves whose item lines hold fewer than 200 such characters  lower
concrete_lines_median  the median over leaves of the item lines that name          higher
                       something specific: a digit of any script, or two words its
                       leaf's own title and detail do not hold (the concrete lens)
repeated_across_leaves pairs of item lines of two different leaves that say the     lower
                       same thing (the ``new`` lens's weighted trigram Dice)
named_again            names (a place, a thing, a component: :mod:`specswarm.      lower
                       critics.names`, told by capitals) a leaf names that a leaf
                       before it in tree order names already
language_share         share of the letters of every title and result written in   higher
                       the goal's own script
schedule               summed fields (the spec's ``sum`` constraints) the tree's    higher
                       facts lay out as a schedule, of those declared
summarised             share of split nodes that carry a summary of their parts    higher
=====================  ==========================================================  ======

:func:`evaluate_content` runs them all (labels in :data:`CONTENT_METRICS`).
"""

from __future__ import annotations

import math
import statistics
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from quality_metrics import Offence, QNode, QTree, Score  # noqa: E402

from specswarm.critics.names import Lexicon, names, same_name  # noqa: E402
from specswarm.critics.results import MIN_CHARS, NEAR_DUPLICATE, is_concrete, width  # noqa: E402
from specswarm.critics.shingles import Weights, item_lines, pair_dice, shingles, tokens  # noqa: E402
from specswarm.plan.schedule import schedules  # noqa: E402
from specswarm.spec.language import letter_script, main_script  # noqa: E402

SHORT_LEAF = MIN_CHARS
"""A leaf whose item lines hold fewer characters than this is short (the concrete lens's own
minimum: 200)."""
QUOTE = 70
"""Characters of a line quoted in an item."""

CONTENT_METRICS: Mapping[str, str] = {
    "leaf_chars_min": "shortest leaf result, chars (higher better)",
    "leaves_under_200": f"leaf results under {SHORT_LEAF} chars (lower better)",
    "concrete_lines_median": "concrete lines per leaf, median (higher better)",
    "repeated_across_leaves": "line pairs repeated across leaves (lower better)",
    "named_again": "names planned again in a later leaf (lower better)",
    "language_share": "letters in the goal's script (higher better)",
    "schedule": "summed fields with a schedule (higher better)",
    "summarised": "split nodes with a summary (higher better)",
}
"""Metric key -> row label, in table order."""


def _share(good: int, total: int, items: Sequence[Offence]) -> Score:
    return Score(good / total if total else math.nan, tuple(items), good, total)


def _field(constraint: Any, name: str) -> Any:
    """A constraint's field, from a specswarm ``Constraint`` or a mapping."""
    if isinstance(constraint, Mapping):
        return constraint.get(name)
    return getattr(constraint, name, None)


def _quote(line: str) -> str:
    return repr(line if len(line) <= QUOTE else line[: QUOTE - 1] + "…")


def leaf_lines(leaf: QNode) -> list[str]:
    """The item lines of a leaf's result (none without a result)."""
    return item_lines(leaf.result or "")


def leaf_chars(leaf: QNode) -> int:
    """Columns of a leaf's item lines together (a wide East Asian character counts two)."""
    return sum(width(line) for line in leaf_lines(leaf))


def leaf_chars_min(tree: QTree) -> Score:
    """The fewest characters (:func:`leaf_chars`) of one leaf. Items: the shortest leaf."""
    sizes = [(leaf_chars(leaf), leaf) for leaf in tree.leaves()]
    fewest = min(size for size, _ in sizes)
    items = [Offence((leaf.id,), f"{leaf.title!r}: {size} chars") for size, leaf in sizes if size == fewest]
    return Score(fewest, tuple(items))


def leaves_under(tree: QTree, limit: int = SHORT_LEAF) -> Score:
    """Leaves whose item lines hold fewer than ``limit`` characters. Items: those leaves."""
    items = []
    for leaf in tree.leaves():
        size = leaf_chars(leaf)
        if size < limit:
            items.append(Offence((leaf.id,), f"{leaf.title!r}: {size} chars"))
    return Score(len(items), tuple(items))


def concrete_counts(tree: QTree) -> list[int]:
    """Per leaf, in tree order: its item lines that name something specific, by the concrete
    lens's rule (:func:`~specswarm.critics.results.is_concrete`) with the words of the leaf's
    own title and detail as what it already says."""
    out = []
    for leaf in tree.leaves():
        known = set(tokens(f"{leaf.title}\n{leaf.detail}"))
        out.append(sum(is_concrete(line, known) for line in leaf_lines(leaf)))
    return out


def concrete_lines_median(tree: QTree) -> Score:
    """The median of :func:`concrete_counts`. Items: each leaf below the median, with its
    concrete lines of all its lines."""
    counts = concrete_counts(tree)
    middle = float(statistics.median(counts))
    items = [
        Offence((leaf.id,), f"{leaf.title!r}: {k} of {len(leaf_lines(leaf))} lines concrete")
        for leaf, k in zip(tree.leaves(), counts, strict=True)
        if k < middle
    ]
    return Score(middle, tuple(items))


def repeated_across_leaves(tree: QTree) -> Score:
    """Pairs of item lines of two different leaves that say the same thing: the ``new`` lens's
    :func:`~specswarm.critics.shingles.pair_dice` at or above
    :data:`~specswarm.critics.results.NEAR_DUPLICATE`, each trigram weighted by how rare it is
    among all the leaves' item lines. Items: each pair, both lines quoted."""
    entries = [(leaf, line) for leaf in tree.leaves() for line in leaf_lines(leaf)]
    grams = [shingles(line) for _, line in entries]
    weights = Weights(grams)
    items = []
    for i, (leaf_a, line_a) in enumerate(entries):
        for j in range(i + 1, len(entries)):
            leaf_b, line_b = entries[j]
            if leaf_a.id == leaf_b.id or not grams[i] & grams[j]:
                continue
            sim = pair_dice(grams[i], grams[j], weights)
            if sim >= NEAR_DUPLICATE:
                note = f"{leaf_a.title!r}: {_quote(line_a)} ~ {leaf_b.title!r}: {_quote(line_b)} ({sim:.2f})"
                items.append(Offence((leaf_a.id, leaf_b.id), note))
    return Score(len(items), tuple(items))


def named_again(tree: QTree) -> Score:
    """Names (:func:`~specswarm.critics.names.names`) of a leaf's item lines that a leaf before
    it in tree order names already, once per leaf and name; what the goal, the root's detail and
    the split nodes' titles say names nothing (they say where, not what). Items: each such
    name, with the leaf that named it first."""
    leaves = tree.leaves()
    root = tree.nodes[tree.root]
    known = " ".join([root.title, root.detail, *(n.title for n in tree.walk() if n.children)])
    lex = Lexicon.of([line for leaf in leaves for line in leaf_lines(leaf)], known)
    seen: list[tuple[frozenset[str], QNode]] = []
    items = []
    for leaf in leaves:
        mine = [n for line in leaf_lines(leaf) for n in names(line, lex)]
        said: list[frozenset[str]] = []
        for n in mine:
            first = next((q for keys, q in seen if same_name(n.keys, keys)), None)
            if first is not None and not any(same_name(n.keys, k) for k in said):
                items.append(
                    Offence((first.id, leaf.id), f"{leaf.title!r}: {n.surface!r}, named in {first.title!r}")
                )
                said.append(n.keys)
        seen.extend((n.keys, leaf) for n in mine if not any(same_name(n.keys, k) for k, _ in seen))
    return Score(len(items), tuple(items))


def language_share(tree: QTree, goal: str | None = None) -> Score:
    """Share of the letters of every node's title and every leaf's result written in the
    goal's script (:func:`~specswarm.spec.language.main_script` of ``goal``, by default the
    root's title). Items: the nodes with letters of another script, and which."""
    script = main_script(goal if goal is not None else tree.nodes[tree.root].title)
    if script is None:
        return _share(0, 0, ())  # a goal without letters has no script to keep to
    good, total, items = 0, 0, []
    for node in tree.walk():
        scripts = Counter(s for s in map(letter_script, f"{node.title}\n{node.result or ''}") if s)
        other = {s: k for s, k in scripts.items() if s != script}
        total += sum(scripts.values())
        good += scripts[script]
        if other:
            shown = ", ".join(f"{s} {k}" for s, k in sorted(other.items()))
            items.append(Offence((node.id,), f"{node.title!r}: {shown} letters"))
    return _share(good, total, items)


def outline_numbers(tree: QTree) -> dict[str, str]:
    """Node id -> outline number as the schedule writes it (``""`` the root, ``1``, ``1.2``)."""
    out = {tree.root: ""}
    for node in tree.walk():
        for i, kid in enumerate(node.children, 1):
            out[kid] = f"{out[node.id]}.{i}" if out[node.id] else str(i)
    return out


class _Node(SimpleNamespace):
    """A QNode as :func:`~specswarm.plan.schedule.schedules` reads a plan node."""


def has_schedule(tree: QTree, constraints: Sequence[Any] = ()) -> Score:
    """Summed fields (first ``sum`` constraint of each field) for which
    :func:`~specswarm.plan.schedule.schedules` lays out a schedule from the tree's facts, of
    those declared; a field none of the root's parts states has none. Items: the fields without
    one, and each schedule's notes (parts that do not add up, parts stating no value)."""
    fields: dict[str, Any] = {}
    for c in constraints:
        name, total = _field(c, "field"), _field(c, "total")
        if _field(c, "kind") == "sum" and name and total is not None:
            fields.setdefault(str(name), SimpleNamespace(kind="sum", field=str(name), total=total))
    nodes = {
        n.id: _Node(
            id=n.id, title=n.title, depth=n.depth, leaf=not n.children, children=n.children, facts=n.facts
        )
        for n in tree.walk()
    }
    plan = SimpleNamespace(
        spec=SimpleNamespace(constraints=list(fields.values())), root=nodes[tree.root], nodes=nodes
    )
    found = {s.field: s for s in schedules(cast(Any, plan))}
    ids = {number: node_id for node_id, number in outline_numbers(tree).items()}
    items = [Offence((tree.root,), f"{name}: no schedule") for name in fields if name not in found]
    for s in found.values():
        for note in s.notes:
            where = (ids.get(note.number, tree.root),)
            if note.kind == "sum":
                said = f"{s.field}: the parts of {note.title!r} add up to {note.got}, not {note.expected}"
            else:
                said = f"{s.field}: parts {', '.join(note.parts)} of {note.title!r} state none"
            items.append(Offence(where, said))
    return _share(len(found), len(fields), items)


def summarised(tree: QTree) -> Score:
    """Share of the split nodes (nodes with children) whose ``summary`` is not empty. Items:
    the split nodes without one."""
    splits = [n for n in tree.walk() if n.children]
    items = [Offence((n.id,), f"{n.title!r}: no summary") for n in splits if not n.summary.strip()]
    return _share(len(splits) - len(items), len(splits), items)


def evaluate_content(
    tree: QTree, constraints: Sequence[Any] = (), goal: str | None = None
) -> dict[str, Score]:
    """Every content metric of ``tree``, keyed as in :data:`CONTENT_METRICS` (``goal``: the
    text whose script is the plan's own; by default the root's title)."""
    return {
        "leaf_chars_min": leaf_chars_min(tree),
        "leaves_under_200": leaves_under(tree),
        "concrete_lines_median": concrete_lines_median(tree),
        "repeated_across_leaves": repeated_across_leaves(tree),
        "named_again": named_again(tree),
        "language_share": language_share(tree, goal),
        "schedule": has_schedule(tree, constraints),
        "summarised": summarised(tree),
    }


def pooled_concrete_median(trees: Sequence[QTree]) -> Score:
    """:func:`concrete_lines_median` over the leaves of several trees together."""
    counts = [k for tree in trees for k in concrete_counts(tree)]
    return Score(float(statistics.median(counts)) if counts else float("nan"))
