"""The language of a new run whose spec names none and whose goal is written in Latin letters
beyond English (é, ñ, ß...): asked of the decomposers' model once, before the run event is
made, so every peer reads it from the run's spec (:mod:`specswarm.model.language`).

A goal in another script needs no question (its letters name the language), nor one in plain
ASCII letters (read as English, as before). The answer sets the run's ``language``, and with it
the prompts, headings and day labels (a language without headings, by its name: the prompts
only); no usable answer leaves the spec as it is, with a note saying so.
"""

from __future__ import annotations

import dataclasses
import logging

from specswarm.errors import SpecSwarmError
from specswarm.spec import GoalSpec
from specswarm.spec.language import plan_language

log = logging.getLogger("specswarm.swarm")


def needs_language(spec: GoalSpec) -> bool:
    """Whether a run of ``spec`` asks the model for the goal's language: no ``language`` field,
    and Latin letters English does not write in the goal or context."""
    return not spec.language and plan_language(spec.goal, spec.context).foreign


def goal_language(spec: GoalSpec) -> tuple[GoalSpec, str | None]:
    """``spec`` with the ``language`` the decomposers' model names for its goal (when
    :func:`needs_language`), and a note for the user (None: nothing to say)."""
    if not needs_language(spec):
        return spec, None
    from specswarm.model.language import ask_language
    from specswarm.model.load import load_model
    from specswarm.swarm.peer import model_settings

    found = None
    try:
        model = load_model(model_settings(spec, "decomposer"))
        try:
            found = ask_language(model, spec.goal, spec.context)
        finally:
            close = getattr(model, "close", None)
            if callable(close):
                close()
    except SpecSwarmError as exc:  # a model that cannot load fails the run later, with its own error
        log.info("no model to ask the goal's language: %s", exc)
    if found is None or found.name is None:
        return spec, (
            "the model named no language the plan is written for: the prompts ask for the goal's "
            "own language, while headings and day labels stay English; set `language:` (a code "
            "such as es, or a name) to choose"
        )
    value = found.code or found.name
    note = (
        f"the model reads the goal as {found.name}, so the plan is written in it"
        + ("" if found.code else " (its headings and day labels stay English: none are written for it)")
        + f"; `language: {value}` in the spec skips this question, another value chooses another"
    )
    return dataclasses.replace(spec, language=value), note
