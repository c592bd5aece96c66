"""The roles. Each looks at the folded plan and publishes what it should.

No role talks to another directly: they only read the plan (which every peer derives from
the same events) and add events. ``act`` does at most one piece of model work per call and
returns, so the node re-folds between steps. The observer publishes nothing and has no role
object (see :mod:`specswarm.render.tree` for what it prints).
"""

from __future__ import annotations

from collections.abc import Callable

from specswarm.model.base import Model
from specswarm.spec import GoalSpec
from specswarm.swarm.roles.base import ModelRole
from specswarm.swarm.roles.decomposer import Decomposer
from specswarm.swarm.roles.executor import Executor
from specswarm.swarm.roles.scorer import Scorer, shared_rating
from specswarm.swarm.roles.slots import machine_slot

SLOW_OWNER_CLAIMS = 4
"""A live decomposer keeps a node it owns for this many ``budget.claim_timeout`` before anyone
takes it over."""


def make_role(
    role: str, spec: GoalSpec, model_factory: Callable[[], Model] | None, strategy: str | None = None
) -> ModelRole | None:
    """The role object of a peer taking ``role`` in a run of ``spec`` (None for an observer).
    ``strategy``: a decomposer's strategy or a scorer's lens (default: the spec's first)."""
    budget = spec.budget
    if role == "decomposer":
        # a live owner that is merely slow (queued behind other generations) keeps its node for
        # several times as long as an executor keeps a claim (a takeover brings in another
        # strategy: more work, and a plan that depends on timing); a disconnected owner loses it
        # at once
        return Decomposer(
            model_factory,
            strategy or spec.strategy_for(0),
            takeover_seconds=SLOW_OWNER_CLAIMS * budget.claim_timeout,
        )
    if role == "scorer":
        return Scorer(model_factory, strategy or spec.lens_for(0))
    if role == "executor":
        return Executor(
            model_factory, settle_seconds=budget.settle_seconds, claim_timeout=budget.claim_timeout
        )
    if role == "observer":
        return None
    raise ValueError(f"unknown role {role!r}")


__all__ = ["Decomposer", "Executor", "ModelRole", "Scorer", "machine_slot", "make_role", "shared_rating"]
