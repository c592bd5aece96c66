"""Build the model a spec's ``model`` settings ask for, and check its endpoints first.

The backends are imported only when chosen: the real ones load heavy native
libraries, and llama-cpp-python is an optional extra. :func:`preflight` is what
``specswarm plan`` (and ``specswarm model try``) run before any peer starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from specswarm.errors import EndpointError, ModelError, SpecError, SpecProblem
from specswarm.model.base import Model
from specswarm.spec import GoalSpec, ModelSettings

MODEL_ROLES = ("decomposer", "scorer", "executor")
"""The roles whose peers run a model."""
BACKENDS = ("gpt4all", "replay", "scripted", "llama", "openai")


def load_model(settings: ModelSettings, cache: Path | None = None) -> Model:
    """The backend ``settings.backend`` names; with ``cache`` (a directory), wrapped in the
    answer cache (:mod:`specswarm.model.cache`), whichever backend it is.

    ``gpt4all`` runs the embedded model unless ``file`` or ``name`` says
    otherwise; ``replay`` answers from ``cassette``; ``scripted`` is
    deterministic, with no model at all; ``llama`` is llama-cpp-python (an
    optional extra); ``openai`` asks an OpenAI-compatible endpoint (``base_url``). With
    ``gpt4all``/``llama``/``openai`` and a ``cassette`` set, real outputs are recorded into it.
    """
    return with_cache(_backend(settings), settings, cache)


def with_cache(model: Model, settings: ModelSettings, cache: Path | None) -> Model:
    """``model`` (of ``settings``) behind the answer cache in ``cache``; as it is if None (a
    peer that asks the shared model service keeps its cache on its side of the service too)."""
    if cache is None:
        return model
    from specswarm.model.cache import AnswerCache, CachingModel, model_identity

    return CachingModel(model, AnswerCache(cache), model_identity(settings, model))


def _backend(settings: ModelSettings) -> Model:
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
    elif backend == "openai":
        from specswarm.model.openai_backend import OpenAIModel

        inner = OpenAIModel.from_settings(settings)
    else:
        raise ModelError(f"model.backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if cassette:
        from specswarm.model.replay import RecordingModel

        return RecordingModel(inner, cassette)
    return inner


def preflight(
    spec: GoalSpec,
    settings_of: Callable[[str], ModelSettings] | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Check, before any peer starts, every endpoint the roles of ``spec`` will ask (the
    openai backend: it answers, takes the key, serves the model named). ``settings_of(role)``
    gives the settings a role's peers run (default :meth:`GoalSpec.model_for`; the launcher
    applies its environment overrides). Raise SpecError with one ``FILE:LINE: field: problem``
    line per problem, naming the field of the model section to fix (exit 2)."""
    from specswarm.model.openai_backend import preflight as check_endpoint

    of = settings_of or spec.model_for
    problems: list[SpecProblem] = []
    checked: set[ModelSettings] = set()
    for role in MODEL_ROLES:
        settings = of(role)
        if getattr(spec.roles, role).count < 1 or settings.backend != "openai" or settings in checked:
            continue
        checked.add(settings)
        try:
            check_endpoint(settings, env)
        except EndpointError as exc:
            problems.append(spec.problem(spec.model_path(role, exc.field), exc.detail))
    if problems:
        raise SpecError(problems)
