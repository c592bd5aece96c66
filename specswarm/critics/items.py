"""What the critics read and write: items (a node or a proposed child), the other nodes of the
tree as :class:`Relative` values, and :data:`Check` (the vote body's
:class:`~specswarm.protocol.bodies.CheckResult`); the small helpers every check's note uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from specswarm.protocol.bodies import CheckResult

Check = CheckResult
"""The outcome of one check (name, score 0..100, passed, note): exactly the ``checks`` items
of a vote body."""

FactValue = int | float | str
Facts = Mapping[str, FactValue]
"""Facts an item states (``{"days": 3}``); a child's :data:`~specswarm.protocol.bodies.Facts` is one."""


class Item(Protocol):
    """A node or a proposed child: what the critics read."""

    @property
    def title(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def facts(self) -> Facts: ...


class TreeItem(Item, Protocol):
    """A node of the plan tree (``NodeView`` is one): an :class:`Item` that knows its parent."""

    @property
    def parent(self) -> str | None: ...


Relation = Literal["ancestor", "sibling", "elsewhere"]
"""Where another tree node stands relative to the node being split:

* ``ancestor``: on the path from the root to the node being split (the parent itself is
  passed separately, as ``parent``);
* ``sibling``: a sibling of the node being split or of one of its ancestors (a stage
  planned beside this branch; at depth 1, a root stage);
* ``elsewhere``: any other node that is neither an ancestor nor a descendant.
"""


@dataclass(frozen=True)
class Relative:
    """Another node of the tree, as the repeats check sees it."""

    title: str
    relation: Relation
    detail: str = ""
    facts: Facts = field(default_factory=dict)
    depth: int = 0
    """Depth of this node (root = 0)."""
    parent_title: str | None = None
    """Title of this node's parent (None for the root), used to say where it is planned."""


@dataclass(frozen=True)
class Part:
    """A plain :class:`Item` (handy in tests and scripts)."""

    title: str
    detail: str = ""
    facts: Facts = field(default_factory=dict)


def label(i: int, item: Item) -> str:
    """How a note names child ``i``: ``#2 "Visit Kyoto (4 days)"``."""
    return f'#{i + 1} "{item.title}"'


def clamp(x: float) -> int:
    """``x`` rounded into 0..100."""
    return max(0, min(100, round(x)))


def join_words(words: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    words = list(words)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def ancestor_titles(parent: Item, relatives: Sequence[Relative]) -> list[str]:
    """The titles of the node being split and of its ancestors."""
    return [parent.title] + [r.title for r in relatives if r.relation == "ancestor"]
