"""The scorers' critics: mechanical judges of a proposed split. Pure functions, no model, no I/O.

A tiny local model cannot tell a good split from a bad one (docs/MODELS.md), so a scorer's
verdict rests on these checks, with the model's rating as one minor input (:func:`combine`).
They judge a split's *content* (the places, named things, activities and components each
child is about), not its *wording*: "Plan a 3-day trip to Rome" / "... to Florence" share
boilerplate and are fine; a split that plans the same city in three of its four stages, or
re-plans a stage that another branch of the tree already holds, is not.

============  ====  ===========================================================
name          hard  fails when
============  ====  ===========================================================
count         yes   the number of children is outside the tree's limits
overlap       yes   two siblings are about the same place / named thing /
                    component (shared content terms, after removing what every
                    sibling shares and what the parent and ancestors already say)
repeats       yes   a child repeats its parent or an ancestor, a stage planned
                    beside its branch (e.g. a root stage), or a node elsewhere
facts         yes   the parent has an additive numeric fact (days, budget_eur,
                    hours...) and the children do not all declare it, or their
                    values do not add up to the parent's
units         yes   a child's title states a quantity ("(3 days)", "90 minutes",
                    "EUR 500") that its facts contradict
constraints   yes   a declared sum / mention / forbid constraint is violated
vagueness     no*   a child has no concrete content ("Misc", "Other things",
                    "Next steps"); *vetoes when half the children are vague
coverage      no    the children ignore most of what the parent's *detail* says
concreteness  no    graded: how many names (places, components) and numbers
                    each child adds to its parent's (never fails; the
                    specificity lens weighs it)
sizing        no    graded: children that give an amount and a detail to act
                    on, and no part holding most of a shared total (never
                    fails; the feasibility lens weighs it)
============  ====  ===========================================================

Modules: :mod:`.words` (word lists), :mod:`.quantities` (units and amounts), :mod:`.terms`
(stemming, names, content terms), :mod:`.scripts` (scripts written without spaces, read by
their letters), :mod:`.evidence` (how strongly two items are about the same
thing), :mod:`.overlap`, :mod:`.numbers`, :mod:`.wording` and :mod:`.constraints` (the checks),
:mod:`.tree` (the other nodes of the tree, as :class:`Relative` values), :mod:`.titles` (the
word-level near-duplicate test the model's parser uses).

Inputs are anything with ``title``, ``detail`` and ``facts`` (:class:`Item`: a
:class:`~specswarm.plan.views.NodeView`, a :class:`~specswarm.protocol.bodies.Child`, a
:class:`Part`). Every check returns a :data:`Check`, the vote body's
:class:`~specswarm.protocol.bodies.CheckResult`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from specswarm.critics.constraints import check_constraints, constraints_for
from specswarm.critics.evidence import (
    Evidence,
    action_of,
    evidence,
    frame_keys,
    item_terms,
    lexicon_of,
    topic_keys,
)
from specswarm.critics.items import Check, Facts, Item, Part, Relation, Relative, TreeItem, clamp
from specswarm.critics.lenses import LENSES, Lens, lens_named
from specswarm.critics.numbers import check_facts, check_sizing, check_units, contradicted_facts
from specswarm.critics.overlap import check_overlap, check_repeats, split_boilerplate
from specswarm.critics.quantities import Quantity, fact_unit, is_additive, numeric, parse_quantities
from specswarm.critics.terms import Lexicon, Term, extract_terms, stem
from specswarm.critics.titles import (
    contains_title,
    drop_aliases,
    near_duplicate,
    normalize_title,
    repeated_lines,
    repeats_of,
)
from specswarm.critics.tree import relatives_in_tree
from specswarm.critics.wording import (
    check_concreteness,
    check_count,
    check_coverage,
    check_vagueness,
    concrete_lines,
    restates,
    vague_reason,
)
from specswarm.spec import Constraint, GoalSpec

__all__ = [
    "CHECK_NAMES",
    "HARD_CHECKS",
    "LENSES",
    "VETO_BELOW",
    "WEIGHTS",
    "Check",
    "Evidence",
    "Facts",
    "Item",
    "Lens",
    "Lexicon",
    "Part",
    "Quantity",
    "Relation",
    "Relative",
    "Term",
    "TreeItem",
    "action_of",
    "check_concreteness",
    "check_constraints",
    "check_count",
    "check_coverage",
    "check_facts",
    "check_overlap",
    "check_repeats",
    "check_sizing",
    "check_split",
    "check_units",
    "check_vagueness",
    "combine",
    "concrete_lines",
    "constraints_for",
    "contradicted_facts",
    "critique",
    "evidence",
    "extract_terms",
    "fact_unit",
    "frame_keys",
    "is_additive",
    "item_terms",
    "lens_named",
    "contains_title",
    "drop_aliases",
    "near_duplicate",
    "repeated_lines",
    "repeats_of",
    "normalize_title",
    "numeric",
    "parse_quantities",
    "rating_decides",
    "relatives_in_tree",
    "restates",
    "run_checks",
    "split_boilerplate",
    "stem",
    "topic_keys",
    "vague_reason",
    "vetoed",
]

HARD_CHECKS = frozenset({"count", "overlap", "repeats", "facts", "units", "constraints"})
"""A failed hard check vetoes approval whatever the score."""

VETO_BELOW = {"vagueness": 50}
"""A soft check below its floor also vetoes (half the children vague)."""

WEIGHTS = {
    "count": 1.0,
    "overlap": 1.5,
    "repeats": 1.5,
    "facts": 1.5,
    "units": 1.0,
    "constraints": 1.5,
    "vagueness": 1.5,
    "coverage": 0.5,
    "concreteness": 0.5,
    "sizing": 0.5,
}
"""Weight of each check in the mean score (a check of another name weighs 1.0)."""

CHECK_NAMES = (
    "count",
    "overlap",
    "repeats",
    "facts",
    "units",
    "vagueness",
    "coverage",
    "constraints",
    "concreteness",
    "sizing",
)
"""The checks :func:`run_checks` returns, in this order."""


def run_checks(
    parent: Item,
    children: Sequence[Item],
    *,
    relatives: Sequence[Relative] = (),
    constraints: Iterable[Constraint] = (),
    min_children: int = 2,
    max_children: int = 6,
    depth: int | None = None,
) -> list[Check]:
    """Every check of a proposed split of ``parent`` into ``children``, in the order of
    :data:`CHECK_NAMES`. ``relatives``: the rest of the tree as seen from ``parent``
    (:func:`relatives_in_tree`); ``depth``: the parent's depth (root = 0; by default the
    number of ancestors among ``relatives``), which decides which constraints apply."""
    lex = lexicon_of(parent, children, relatives)
    level = depth if depth is not None else sum(1 for r in relatives if r.relation == "ancestor")
    constraints = list(constraints)
    summed = [str(c.field) for c in constraints_for(constraints, level) if c.kind == "sum" and c.field]
    return [
        check_count(children, min_children, max_children),
        check_overlap(parent, children, relatives, lex=lex),
        check_repeats(parent, children, relatives, parent_depth=level, lex=lex),
        check_facts(parent, children, summed, min_parts=min_children),
        check_units(children),
        check_vagueness(children, lex=lex),
        check_coverage(parent, children),
        check_constraints(parent, children, constraints, level),
        check_concreteness(parent, children, lex=lex),
        check_sizing(parent, children),
    ]


def check_split(
    spec: GoalSpec,
    parent: Item,
    children: Sequence[Item],
    depth: int,
    relatives: Sequence[Relative] = (),
) -> list[Check]:
    """:func:`run_checks` with the constraints and limits of ``spec``, for a split of a node at
    ``depth`` whose tree is ``relatives``."""
    return run_checks(
        parent,
        children,
        relatives=relatives,
        constraints=spec.constraints,
        min_children=spec.tree.min_children,
        max_children=spec.tree.max_children,
        depth=depth,
    )


def combine(
    checks: Sequence[Check],
    model_score: int | None = None,
    model_weight: float = 0.0,
    approve_threshold: float = 60.0,
    lens: Lens | None = None,
) -> tuple[int, bool]:
    """Blend the checks (weighted mean, :data:`WEIGHTS`) with the model's 0..100 rating; decide.

    ``model_weight`` in [0, 1] is the model's share of the score (ignored when ``model_score``
    is None). Approval needs ``score >= approve_threshold``, no failed hard check
    (:data:`HARD_CHECKS`) and no soft check below its :data:`VETO_BELOW` floor. A ``lens``
    (:mod:`.lenses`) reweighs the checks and may raise the soft floors; hard checks stay hard.
    """
    if not 0.0 <= model_weight <= 1.0:
        raise ValueError(f"model_weight must be within [0, 1], got {model_weight}")
    factors = lens.weights if lens is not None else {}

    def weight(name: str) -> float:
        return WEIGHTS.get(name, 1.0) * factors.get(name, 1.0)

    total_w = sum(weight(c.name) for c in checks)
    mech = sum(weight(c.name) * c.score for c in checks) / total_w if total_w else 100.0
    score = (
        mech
        if model_score is None
        else (1 - model_weight) * mech + model_weight * max(0, min(100, model_score))
    )
    final = clamp(score)
    return final, final >= approve_threshold and not vetoed(checks, lens)


def rating_decides(
    checks: Sequence[Check], model_weight: float, approve_threshold: float = 60.0, lens: Lens | None = None
) -> bool:
    """Whether a model rating could change the verdict of these checks: False when a hard check
    or a floor vetoes anyway, or when the mechanical score approves even with a rating of 0 or
    rejects even with 100. A scorer spends a generation only when it can (at the default weight,
    0.2, only on a split near the threshold)."""
    if model_weight <= 0 or vetoed(checks, lens):
        return False
    low = combine(checks, 0, model_weight, approve_threshold, lens)[1]
    high = combine(checks, 100, model_weight, approve_threshold, lens)[1]
    return low != high


def vetoed(checks: Sequence[Check], lens: Lens | None = None) -> bool:
    """True when a failed hard check, or a soft check below its floor (the lens's, if stricter),
    rejects the split whatever its score."""
    floors = dict(VETO_BELOW)
    for name, floor in (lens.veto_below if lens is not None else {}).items():
        floors[name] = max(floors.get(name, 0), floor)
    return any((c.name in HARD_CHECKS and not c.passed) or c.score < floors.get(c.name, 0) for c in checks)


def critique(checks: Sequence[Check]) -> str:
    """One line per failed check: what a decomposer should fix."""
    return "\n".join(f"{c.name}: {' '.join(c.note.split())}" for c in checks if not c.passed)
