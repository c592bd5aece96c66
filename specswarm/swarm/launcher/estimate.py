"""How much of a run is left: the model calls its open work still needs, and their seconds.

The work still open, in model calls (:func:`calls_left`): every leaf without a result needs one
execution; every node still to be split needs its split (proposals by its rival decomposers,
a rating by every scorer of each) and then its children's work, down to ``tree.max_depth``;
with ``review.summaries`` every split node without its summary needs one call more.
What a split costs and how many children it gets are measured on the splits accepted so
far (before the first one: the spec's rivals and scorers, the middle of its child limits).
The seconds per call (:func:`seconds_per_call`) are the model's own measured seconds per call
when it takes time (a local model generates one answer at a time on this machine, so
generations add up); for an instant model (scripted, cached, remote) the run's own pace.
"""

from __future__ import annotations

from statistics import mean

from specswarm.plan import Plan
from specswarm.plan.views import NodeView
from specswarm.spec import GoalSpec
from specswarm.swarm.roles.base import RIVALS, ROOT_RIVALS


def _spent(n: NodeView) -> int:
    """Model calls already made on ``n``'s split: one per proposal, one per vote."""
    return len(n.proposals) + sum(len(p.votes) for p in n.proposals)


def calls_left(plan: Plan, spec: GoalSpec) -> float:
    """The model calls the plan's open work still needs (an estimate; 0 when complete)."""
    if plan.root is None:
        return 0.0
    scorers, decs = spec.roles.scorer.count, spec.roles.decomposer.count
    limits = spec.tree
    split = [n for n in plan.walk() if n.accepted and n.parent is not None]
    split_cost = mean(_spent(n) for n in split) if split else min(RIVALS, decs) * (1 + scorers)
    done = [n for n in plan.walk() if n.accepted]
    fanout = mean(len(n.children) for n in done) if done else (limits.min_children + limits.max_children) / 2
    summary = 1.0 if spec.review.summaries else 0.0  # each split node's summary: one call

    def below(depth: int) -> float:
        """The work under a node at ``depth`` once it is split: its children's."""
        if depth + 1 >= limits.max_depth:
            return fanout  # leaves: one execution each
        return fanout * (split_cost + summary + below(depth + 1))

    root_cost = max(1, min(decs, ROOT_RIVALS)) * (1 + scorers)  # up to ROOT_RIVALS at the root
    left = 0.0
    for n in plan.walk():
        if n.leaf:
            left += 0 if n.result is not None else 1
        elif not n.accepted:
            cost = root_cost if n.parent is None else split_cost
            left += max(1.0, cost - _spent(n)) + summary + below(n.depth)
        elif n.summary is None:
            left += summary
    return left


def seconds_per_call(elapsed: float, calls: int, generation_seconds: float) -> float | None:
    """What one more model call costs, in wall seconds (None before the first call)."""
    if calls <= 0:
        return None
    if generation_seconds > 0.05 * elapsed:  # the model is what takes the time
        return generation_seconds / calls
    return elapsed / calls


def seconds_left(
    plan: Plan, spec: GoalSpec, elapsed: float, calls: int, generation_seconds: float
) -> float | None:
    """The estimate of the time left (None: nothing measured yet)."""
    if plan.complete:
        return 0.0
    per_call = seconds_per_call(elapsed, calls, generation_seconds)
    return None if per_call is None else calls_left(plan, spec) * per_call
