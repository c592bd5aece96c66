"""The model's settings in a goal spec: which backend and model, how it samples, its token
limits per task. Part of :mod:`specswarm.spec.values` (re-exported there), whose rules hold:
these dataclasses' defaults are the only defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

RUNTIMES = ("auto", "llama.cpp", "gpt4all")
"""The values of ``model.runtime``."""
OMITTED = {"omitted": True}
"""Field metadata: left out of the normalized spec at its default (older specs normalize as before)."""


@dataclass(frozen=True)
class TokenLimits:
    """Most tokens the model may generate, per task."""

    decompose: int = 400
    """Per split."""
    refine: int = 400
    """Per revised split."""
    score: int = 120
    """Per rating."""
    execute: int = 300
    """Per leaf."""
    summarize: int = 200
    """Per summary of a split node."""


@dataclass(frozen=True)
class ModelSettings:
    """The model every peer runs (or the one a role's ``model`` section gives its peers)."""

    backend: Literal["gpt4all", "replay", "scripted", "llama", "openai"] = "gpt4all"
    """gpt4all (the embedded model), replay, scripted, llama, openai (an OpenAI-compatible API)."""
    file: Path | None = None
    """A GGUF file (absolute); None for the embedded default model."""
    name: str | None = None
    """gpt4all: a catalogue name, used when ``file`` is None. openai: the model id the endpoint
    serves (None: the only one it lists)."""
    base_url: str | None = field(default=None, metadata=OMITTED)
    """openai: the endpoint's API root, e.g. ``http://localhost:11434/v1``."""
    api_key_env: str = field(default="OPENAI_API_KEY", metadata=OMITTED)
    """openai: the environment variable holding the API key (may be unset for a loopback URL)."""
    timeout: float = field(default=300.0, metadata=OMITTED)
    """openai: seconds one HTTP request may take before it counts as failed."""
    retries: int = field(default=3, metadata=OMITTED)
    """openai: how often a request is sent again after a 429, a 5xx or a dropped connection."""
    concurrency: int | None = field(default=None, metadata=OMITTED)
    """openai: how many requests the peers of one machine send the endpoint at once (None: 4,
    :data:`~specswarm.model.openai_backend.DEFAULT_CONCURRENCY`). The other backends take the
    machine's generation slots instead."""
    shared: bool | None = field(default=None, metadata=OMITTED)
    """One model service for all peers (``plan``): True; False: a copy in each peer; None (the
    default): True for gpt4all, False for the others."""
    runtime: Literal["auto", "llama.cpp", "gpt4all"] = field(default="auto", metadata=OMITTED)
    """gpt4all: which engine the shared model service runs the model file with. auto (the
    default): llama.cpp (the ``xllamacpp`` wheel) when it is installed, else gpt4all; see
    :func:`specswarm.model.runtime.service_runtime`."""
    temperature: float = 0.0
    """Sampling temperature."""
    top_k: int = 1
    """Top-k sampling; 1 is greedy."""
    seed: int = 42
    """Random seed."""
    repeat_penalty: float = 1.1
    """Penalty on repeated tokens (stops small models from looping)."""
    threads: int = 0
    """CPU threads per model process; 0 (the default): one less than this machine's cores, at
    least 1 (the swarm's own peers need the rest; see docs/MODELS.md)."""
    cassette: Path | None = None
    """Recorded outputs (absolute): replayed by ``replay``, recorded into by real backends."""
    max_tokens: TokenLimits = TokenLimits()
    """Generation limits per task."""
    model_weight: float = 0.2
    """Weight (0..1) of the model's rating in a scorer's score; the rest is mechanical."""
