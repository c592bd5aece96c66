"""Helpers for swarm tests: a normalized spec for the scripted model, sized as asked."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

from specswarm.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent


@cache
def _base() -> dict[str, Any]:
    return load_spec(ROOT / "goals" / "tiny.yaml").to_json()


def swarm_spec(decomposers: int = 3, scorers: int = 3, executors: int = 2, observers: int = 1,
               max_depth: int = 2, quorum: Any = "majority", **budget: float) -> dict[str, Any]:
    spec = copy.deepcopy(_base())
    spec["name"] = "swarm-test"
    spec["roles"] = {"decomposer": {"count": decomposers, "strategies": ["by place", "by day", "by theme"]},
                     "scorer": {"count": scorers}, "executor": {"count": executors},
                     "observer": {"count": observers}}
    spec["quorum"] = quorum
    spec["tree"].update(max_depth=max_depth, min_children=2, max_children=3)
    spec["model"].update(backend="scripted")
    spec["budget"].update({"settle_seconds": 0.3, "claim_timeout": 30.0, "seconds": 60.0, **budget})
    return spec
