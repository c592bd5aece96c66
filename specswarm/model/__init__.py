"""The local model layer: one small interface, several backends, prompts and parsing.

Public API (import from here):

* :class:`GenerationRequest`, :class:`Generation`, :class:`Model` -- the interface
* :func:`load_model` -- a backend from a spec's ``model`` section
* :func:`agenerate` -- call a model from trio without blocking gossip
* :class:`ReplayModel`, :class:`RecordingModel`, :class:`ScriptedModel` -- no-model backends
* :func:`render_prompt` -- a template into (system, prompt)
* :class:`Child`, :func:`decompose`, :func:`rate`, :func:`execute` (and the async
  ``adecompose``, ``arate``, ``aexecute``), :data:`STATS` -- what roles call

The gpt4all backend and the asset assembly are imported lazily (they are
heavy), via :func:`load_model` or their modules.
"""

from specswarm.model.base import Generation, GenerationRequest, Model, agenerate, load_model
from specswarm.model.parse import Child, OutputError
from specswarm.model.prompts import render_prompt
from specswarm.model.replay import RecordingModel, ReplayModel, ScriptedModel, scripted_answer
from specswarm.model.tasks import (
    STATS,
    adecompose,
    aexecute,
    arate,
    decompose,
    execute,
    rate,
)

__all__ = [
    "STATS",
    "Child",
    "Generation",
    "GenerationRequest",
    "Model",
    "OutputError",
    "RecordingModel",
    "ReplayModel",
    "ScriptedModel",
    "adecompose",
    "aexecute",
    "agenerate",
    "arate",
    "decompose",
    "execute",
    "load_model",
    "rate",
    "render_prompt",
    "scripted_answer",
]
