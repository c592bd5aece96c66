"""Build the model a spec's ``model`` settings ask for.

The backends are imported only when chosen: the real ones load heavy native
libraries, and llama-cpp-python is an optional extra.
"""

from __future__ import annotations

from specswarm.errors import ModelError
from specswarm.model.base import Model
from specswarm.spec import ModelSettings


def load_model(settings: ModelSettings) -> Model:
    """The backend ``settings.backend`` names.

    ``gpt4all`` runs the embedded model unless ``file`` or ``name`` says
    otherwise; ``replay`` answers from ``cassette``; ``scripted`` is
    deterministic, with no model at all; ``llama`` is llama-cpp-python (an
    optional extra). With ``gpt4all``/``llama`` and a ``cassette`` set, real
    outputs are recorded into it.
    """
    backend = settings.backend
    cassette = settings.cassette
    inner: Model
    if backend == "scripted":
        from specswarm.model.replay import ScriptedModel

        return ScriptedModel()
    if backend == "replay":
        from specswarm.model.replay import ReplayModel

        if not cassette:
            raise ModelError("model.backend 'replay' needs model.cassette (a .jsonl file)")
        return ReplayModel(cassette)
    if backend == "gpt4all":
        from specswarm.model.gpt4all_backend import Gpt4AllModel

        inner = Gpt4AllModel.from_settings(settings)
    elif backend == "llama":
        from specswarm.model.llama_backend import LlamaModel

        inner = LlamaModel.from_settings(settings)
    else:
        raise ModelError(f"model.backend must be one of gpt4all, replay, scripted, llama; got {backend!r}")
    if cassette:
        from specswarm.model.replay import RecordingModel

        return RecordingModel(inner, cassette)
    return inner
