"""Scorer lenses: each scorer of the editorial board reviews a split through its own lens.

A lens changes three things, never the hard checks (a repeated stage or facts that do not add
up are rejected through every lens):

* the weight of each mechanical check in the scorer's score (multiplied into
  :data:`~specswarm.critics.WEIGHTS`): each built-in lens weighs heavily one graded
  check the others ignore (feasibility: ``sizing``; coverage: ``coverage``; specificity:
  ``concreteness``), so three reviewers of one split see three different things;
* extra veto floors for the soft checks (a specificity reviewer rejects a split whose children
  are a quarter vague; a coverage reviewer one that ignores most of its parent's detail);
* the question the model is asked when it rates the split (``score`` template, ``lens``).

A lens named in a spec but not built in keeps the default weights and puts its own name in the
model's question: ``lenses: [feasibility, budget]`` gives the second scorer a "budget" review.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Lens:
    """How one scorer weighs a split."""

    name: str
    question: str
    """What the model is asked to judge (one sentence)."""
    weights: Mapping[str, float] = field(default_factory=dict)
    """Multipliers of the checks' base weights (missing: 1.0)."""
    veto_below: Mapping[str, int] = field(default_factory=dict)
    """Soft-check floors added to the base ones (the stricter floor counts)."""


LENSES: dict[str, Lens] = {
    "feasibility": Lens(
        "feasibility",
        "Can each part be carried out as written, with the time, money and order it states, "
        "and do the numbers look realistic?",
        weights={
            "facts": 2.0,
            "units": 2.0,
            "constraints": 2.0,
            "sizing": 8.0,
            "vagueness": 0.5,
            "coverage": 0.5,
            "concreteness": 0.0,
        },
    ),
    "coverage": Lens(
        "coverage",
        "Do the parts together cover everything the goal asks for, with no important side "
        "missing and nothing outside the goal?",
        weights={
            "coverage": 6.0,
            "count": 1.5,
            "vagueness": 0.5,
            "units": 0.5,
            "concreteness": 0.0,
            "sizing": 0.0,
        },
        veto_below={"coverage": 40},
    ),
    "specificity": Lens(
        "specificity",
        "Is every part concrete (a named place, task or component someone could act on) "
        "rather than a vague theme, and is each part distinct from the others?",
        weights={
            "vagueness": 3.0,
            "concreteness": 8.0,
            "overlap": 1.5,
            "repeats": 1.5,
            "coverage": 0.5,
            "sizing": 0.0,
        },
        veto_below={"vagueness": 75},
    ),
}
"""The built-in lenses (``roles.scorer.lenses`` defaults to all three)."""


def lens_named(name: str) -> Lens:
    """The built-in lens of that name, or a lens that only asks the model about ``name``."""
    known = LENSES.get(name)
    if known is not None:
        return known
    return Lens(name, f"Judge the split above all for its {name}.")
