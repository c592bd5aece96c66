"""Which engine the shared model service's workers run a local model file with.

``model.runtime`` (gpt4all backend) picks it: ``llama.cpp`` (llama.cpp's own server, from the
``xllamacpp`` wheel: :mod:`specswarm.model.llamacpp_worker`), ``gpt4all``, or ``auto`` (the
default): llama.cpp when the wheel imports, else gpt4all. Both run the same GGUF file;
llama.cpp reads prompts in full batches and keeps earlier prompts evaluated, so a call that
begins as an earlier one did reads only the rest. docs/MODELS.md gives the measured figures.
"""

from __future__ import annotations

import importlib.util
from functools import cache

from specswarm.spec import ModelSettings

LLAMACPP = "llama.cpp"
GPT4ALL = "gpt4all"


@cache
def llamacpp_installed() -> bool:
    """Whether the ``xllamacpp`` wheel can be imported."""
    return importlib.util.find_spec("xllamacpp") is not None


def service_runtime(settings: ModelSettings) -> str:
    """The engine of the service that runs ``settings``' model: :data:`LLAMACPP` or
    :data:`GPT4ALL` (only the gpt4all backend has a choice)."""
    if settings.backend != "gpt4all":
        return settings.backend
    if settings.runtime == "auto":
        # a catalogue name (no file) is gpt4all's to find or download
        named_only = settings.name is not None and settings.file is None
        return LLAMACPP if llamacpp_installed() and not named_only else GPT4ALL
    return settings.runtime
