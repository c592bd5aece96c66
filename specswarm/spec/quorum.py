"""Quorum rules: how many approving scorers a quorum as written (``majority``, ``all``, a count,
a fraction) needs."""

from __future__ import annotations

import math
from typing import Any

Quorum = str | int | float
"""A quorum as a spec writes it: ``majority``, ``all``, a count, or a fraction of the scorers."""


def quorum_size(quorum: Quorum, scorers: int) -> int:
    """Approvals needed: majority = n//2+1, all = n, an int k, a fraction f = ceil(f*n)."""
    if quorum == "majority":
        return scorers // 2 + 1
    if quorum == "all":
        return scorers
    if isinstance(quorum, bool):
        raise ValueError(f"bad quorum {quorum!r}")
    if isinstance(quorum, int):
        return quorum
    if isinstance(quorum, float) and 0 < quorum <= 1:
        return max(1, math.ceil(quorum * scorers - 1e-9))
    raise ValueError(f"bad quorum {quorum!r}")


def normal_quorum(quorum: Any) -> Any:
    """A float quorum above 1 can only be a whole count (the schema saw to that)."""
    return int(quorum) if isinstance(quorum, float) and quorum > 1 and quorum.is_integer() else quorum
