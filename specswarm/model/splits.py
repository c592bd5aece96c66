"""A decomposer's split, made to hold before it is proposed (no model here).

- :func:`fit_sum` / :func:`fit_sums`: facts that must add up (days to 14) are rescaled in code;
- :func:`repaired`: overlapping children merged and repeating ones dropped
  (:func:`~specswarm.critics.repair.repair_split`), sums fitted again;
- :func:`self_check`: the scorers' hard checks, and whether the split repeats one already
  proposed for the node -- then :func:`~specswarm.model.tasks.decompose` asks once more
  another way;
- :func:`split_target`: how many parts a split by each strategy is asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from specswarm.critics import (
    HARD_CHECKS,
    Relative,
    check_constraints,
    check_split,
    combine,
    constraints_for,
    critique,
    is_additive,
    near_duplicate,
    normalize_title,
    vetoed,
)
from specswarm.critics.repair import repair_split
from specswarm.model.parse import Child
from specswarm.model.subject import Subject
from specswarm.spec import Constraint, GoalSpec


def fit_sum(children: Sequence[Child], field: str, total: int) -> list[Child]:
    """Make the children's ``field`` facts add up to ``total``, in code.

    The small model rarely gets arithmetic right (docs/MODELS.md; a recorded Japan split gave
    7+6+2+1 = 16 days for a 14-day trip), and asking again made its answers worse. So the
    proportions it chose are kept and rescaled (largest remainder, at least 1 each when
    possible); a missing fact counts as 1. "N days" in a title or detail is rewritten to
    match, so text and facts agree.
    """
    raw = []
    for c in children:
        v = c.facts.get(field)
        raw.append(float(v) if isinstance(v, int | float) and not isinstance(v, bool) and v > 0 else 1.0)
    floor_each = 1 if total >= len(children) else 0
    spare = total - floor_each * len(children)
    weights = sum(raw) or 1.0
    shares = [spare * w / weights for w in raw]
    alloc = [floor_each + int(x) for x in shares]
    order = sorted(range(len(children)), key=lambda i: (-(shares[i] - int(shares[i])), i))
    for i in order[: total - sum(alloc)]:
        alloc[i] += 1
    out = []
    singular = field[:-1] if field.endswith("s") else field
    for c, old, new in zip(children, raw, alloc, strict=True):
        facts = {**c.facts, field: new}
        title, detail = c.title, c.detail
        if old != new and old == int(old):
            pattern = re.compile(rf"\b{int(old)}(\s*-?\s*)({re.escape(field)}|{re.escape(singular)})\b", re.I)
            unit = field if new != 1 else singular

            def swap(m: re.Match[str], new: int = new, unit: str = unit) -> str:
                return f"{new}{m.group(1)}{unit}"

            title, detail = pattern.sub(swap, title), pattern.sub(swap, detail)
        out.append(Child(title=title, detail=detail, leaf=c.leaf, facts=facts))
    return out


def fit_sums(
    node: Subject, children: list[Child], constraints: Sequence[Constraint]
) -> tuple[list[Child], bool]:
    """Children whose facts meet every applicable sum constraint, rescaled by :func:`fit_sum`
    where they do not. Below the root, the total is the node's own fact."""
    fitted = False
    for con in constraints:
        if con.kind != "sum" or con.field is None:
            continue
        total = con.total if node.depth == 0 else node.facts.get(con.field)
        if not isinstance(total, int | float) or isinstance(total, bool) or total <= 0:
            continue  # e.g. a deeper node that states no such fact
        if not check_constraints(node, children, [con], node.depth).passed:
            fitted = True
            children = fit_sum(children, con.field, int(total))
    return children, fitted


def repaired(
    spec: GoalSpec,
    node: Subject,
    children: list[Child],
    relatives: Sequence[Relative],
    constraints: Sequence[Constraint],
) -> tuple[list[Child], bool]:
    """``children`` repaired in code (:func:`repair_split`), sums fitted again; and whether
    anything changed."""
    fixed, repairs = repair_split(
        node, children, relatives, min_children=spec.tree.min_children, depth=node.depth
    )
    if not repairs:
        return children, False
    return fit_sums(node, fixed, constraints)[0], True


@dataclass(frozen=True)
class Verdict:
    """How a decomposer's own split fares against the scorers' checks."""

    ok: bool
    """No hard check fails and the split does not copy one already proposed (half its parts
    or more: :func:`copied_parts`)."""
    rank: tuple[int, int, int]
    """(not a repeat, no veto, mechanical score): higher is better."""
    problems: list[str]
    """What to fix, as critique lines."""


def self_check(
    spec: GoalSpec,
    node: Subject,
    children: Sequence[Child],
    relatives: Sequence[Relative],
    proposed: Sequence[Sequence[Child]],
    rivals: Sequence[Sequence[Child]] = (),
) -> Verdict:
    """Check a split as the scorers will: hard checks, whether it repeats one of ``proposed``
    (the splits of this node already on the table) word for word, and whether it copies half
    of one of ``rivals`` (the splits other decomposers proposed for it: :func:`copied_parts`;
    a revision may keep most of its own earlier parts)."""
    checks = check_split(spec, node, children, node.depth, relatives=relatives)
    score, _ = combine(checks, approve_threshold=spec.tree.approve_threshold)
    mine = sorted(normalize_title(c.title) for c in children)
    exact = any(sorted(normalize_title(c.title) for c in p) == mine for p in proposed)
    copied = max((copied_parts(children, p) for p in rivals), key=len, default=[])
    near = len(copied) * 2 >= len(children) and len(copied) >= min(2, len(children))
    repeat = exact or near
    veto = vetoed(checks)
    # the critique of the failed hard checks, read from the checks (not re-parsed from text)
    problems = critique([c for c in checks if c.name in HARD_CHECKS]).splitlines()
    if exact:
        problems.append("repeats: this split was already proposed; split the goal another way")
    elif near:
        shown = "; ".join(f'"{t}"' for t in copied[:4])
        problems.append(
            f"repeats: {len(copied)} of these {len(children)} parts are already proposed for this "
            f"goal by a rival ({shown}): split it another way, by a different criterion"
        )
    return Verdict(not veto and not repeat, (int(not repeat), int(not veto), score), problems)


def copied_parts(children: Sequence[Child], other: Sequence[Child]) -> list[str]:
    """The titles of ``children`` that a child of ``other`` (a rival split of the same node)
    already has, word for word or nearly (:func:`~specswarm.critics.near_duplicate`).
    A split with half its parts copied is no rival: a ranked ballot between the two compares
    nothing (the greedy model, given two strategies, often writes the same parts)."""
    return [c.title for c in children if any(near_duplicate(c.title, o.title) for o in other)]


def split_constraints(spec: GoalSpec, node: Subject) -> list[Constraint]:
    """The declared constraints that apply to a split of ``node``, plus, below the root, a
    ``sum`` for every additive numeric fact of the node that none of them covers (the scorers'
    ``facts`` check asks every child to declare it and the values to add up)."""
    declared = constraints_for(spec.constraints, node.depth)
    if node.depth == 0:
        return declared
    covered = {c.field for c in declared if c.kind == "sum"}
    derived = [
        Constraint("sum", field=key, total=int(value), applies_to="all")
        for key, value in node.facts.items()
        if key not in covered
        and isinstance(value, int)
        and not isinstance(value, bool)
        and value > 0
        and is_additive(key)
    ]
    return [*declared, *derived]


TARGET_CHILDREN = 4
"""The parts a split is asked for by the first declared strategy (and any undeclared one)."""
TARGET_STEPS = (0, -1, 1)
"""What the second, third... declared strategy adds to :data:`TARGET_CHILDREN` (cycling)."""


def split_target(strategy: str, strategies: Sequence[str], low: int, high: int) -> int:
    """How many parts a split by ``strategy`` is asked for: rival decomposers ask for different
    numbers (4, 3, 5 by the declared order of ``strategies``), within ``low..high``.

    A greedy small model given two prompts that differ only in the strategy's name often
    writes the same split twice (measured on the japan run: "Hiking in Japan" by activity and
    by geography, word for word), so the scorers had one split to judge, not two. Asked for a
    different number of parts, the rivals differ at least in how finely they cut the node:
    the editorial board chooses between a coarser and a finer split. The same strategy always
    asks the same number, so the plan stays a function of the spec and the model."""
    try:
        step = TARGET_STEPS[list(strategies).index(strategy) % len(TARGET_STEPS)]
    except ValueError:
        step = 0
    return max(low, min(high, TARGET_CHILDREN + step))
