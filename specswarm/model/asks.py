"""What a model task asks: its typed inputs (:class:`Ask`) and the plain data its prompt
template sees (:meth:`Ask.context`, the names ``specswarm.spec.prompting.TASK_VARIABLES`` lists).

Inputs are typed: a :class:`~specswarm.spec.GoalSpec`, nodes that are :class:`Subject` (a
:class:`~specswarm.plan.views.NodeView` is one) and :class:`~specswarm.protocol.bodies.Child`
values; the context is made of plain dicts, lists and strings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from specswarm.model.parse import Child
from specswarm.model.prompts import plain_critiques
from specswarm.model.splits import split_constraints, split_target
from specswarm.plan.critics import Lens
from specswarm.plan.critics.results import Written
from specswarm.spec import Constraint, GoalSpec


class Subject(Protocol):
    """What a task reads of a plan node (:class:`~specswarm.plan.views.NodeView` is one)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def depth(self) -> int: ...
    @property
    def facts(self) -> Mapping[str, int | str]: ...


def _node(s: Subject) -> dict[str, Any]:
    return {"id": s.id, "title": s.title, "detail": s.detail, "depth": s.depth, "facts": dict(s.facts)}


@dataclass(frozen=True)
class Ask:
    """One task's typed inputs; :meth:`context` is the data its template sees."""

    spec: GoalSpec
    node: Subject
    ancestors: Sequence[Subject] = ()
    siblings: Sequence[Subject] = ()
    strategy: str = ""
    critiques: Sequence[str] = ()
    proposal: Sequence[Child] = ()
    lens: Lens | None = None
    avoid: Sequence[str] = ()
    vague: bool = False
    """(execute) the previous answer was general advice: ask for names, numbers and times."""
    judged: bool = False
    """(execute) the board judges the result (``review.results``): the prompt says what it
    accepts, what the rest of the tree holds and, for a revision, what it rejected."""
    planned: Sequence[Written] = ()
    """(execute) what the counted results of other leaves plan (the ledger, compacted)."""
    critique: Sequence[str] = ()
    """(execute) what the board asked to fix in ``previous``, one line per problem."""
    previous: str = ""
    """(execute) the rejected result this one writes again."""

    @property
    def constraints(self) -> list[Constraint]:
        """The constraints a split of this node must meet (:func:`split_constraints`)."""
        return split_constraints(self.spec, self.node)

    @property
    def fact_fields(self) -> list[str]:
        """The facts every child must state: the fields of the applicable sum constraints."""
        return [c.field for c in self.constraints if c.kind == "sum" and c.field is not None]

    @property
    def is_last_level(self) -> bool:
        """True when this node's children are leaves."""
        return self.node.depth + 1 >= self.spec.tree.max_depth

    def context(self) -> dict[str, Any]:
        tree = self.spec.tree
        low, high = tree.min_children, tree.max_children
        node = _node(self.node)
        if " ".join(node["detail"].split()) == " ".join((self.spec.context or "").split()):
            node["detail"] = ""  # the root's detail: the context, in the prompt already
        return {
            "goal": self.spec.goal,
            "context": self.spec.context,
            "node": node,
            "ancestors": [_node(a) for a in self.ancestors],
            "siblings": [_node(s) for s in self.siblings],
            "strategy": self.strategy.removeprefix("by ").strip() or self.strategy,  # "by {{ }}"
            "critiques": plain_critiques(self.critiques, self.node.title),
            "constraints": [c.to_json() for c in self.constraints],
            # The 1.5B model ignores "3 to 5 items" but mostly follows "4 parts (at least 3, ...)".
            "limits": {
                "min_children": low,
                "max_children": high,
                "target": split_target(self.strategy, self.spec.roles.decomposer.strategies, low, high),
            },
            "is_last_level": self.is_last_level,
            "fact_fields": self.fact_fields,
            "proposal": [c.to_json() for c in self.proposal],
            "lens": {"name": self.lens.name, "question": self.lens.question} if self.lens else None,
            "avoid": list(self.avoid),
            "vague": self.vague,
            "leaf": node,
            "judged": self.judged,
            "planned": [{"title": w.title, "lines": list(w.lines)} for w in self.planned],
            "critique": list(self.critique),
            "previous": self.previous,
        }
