"""The local model layer: one small interface, several backends, prompts and parsing.

Public API (import from here):

* :class:`GenerationRequest`, :class:`Generation`, :class:`Model` -- the interface (``base``)
* :func:`load_model` -- a backend from a spec's :class:`~specswarm.spec.ModelSettings` (``load``)
* :func:`agenerate` -- call a model from trio without blocking gossip (``lock``)
* :class:`ReplayModel`, :class:`RecordingModel`, :class:`ScriptedModel` -- no-model backends
* :func:`render_prompt` -- a template into (system, prompt)
* :func:`decompose`, :func:`rate`, :func:`execute` -- what roles call (blocking: run them
  in a worker thread), with :class:`Subject` (what they read of a node),
  :class:`TaskCounts` (what they count) and :class:`Child` (what a split is made of)

The real backends (``gpt4all_backend``, ``llama_backend``, ``openai_backend``) and the
asset assembly (``assets``) are imported lazily, via :func:`load_model` or their modules;
:func:`~specswarm.model.load.preflight` checks a spec's endpoints before any peer starts.
"""

from specswarm.model.asking import TaskCounts
from specswarm.model.base import Generation, GenerationRequest, Model
from specswarm.model.load import load_model
from specswarm.model.lock import agenerate
from specswarm.model.parse import Child, OutputError
from specswarm.model.prompts import render_prompt
from specswarm.model.replay import RecordingModel, ReplayModel, ScriptedModel, scripted_answer
from specswarm.model.subject import Subject
from specswarm.model.tasks import GaveUpError, decompose, execute, rate

__all__ = [
    "Child",
    "GaveUpError",
    "Generation",
    "GenerationRequest",
    "Model",
    "OutputError",
    "RecordingModel",
    "ReplayModel",
    "ScriptedModel",
    "Subject",
    "TaskCounts",
    "agenerate",
    "decompose",
    "execute",
    "load_model",
    "rate",
    "render_prompt",
    "scripted_answer",
]
