"""What the model's tasks read of a plan node: :class:`Subject`.

Both the tasks (:mod:`.tasks`) and the split checks they run before proposing (:mod:`.splits`)
take nodes of this shape, so it lives below both of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


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
