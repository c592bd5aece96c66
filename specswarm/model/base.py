"""The model interface every backend implements: a request, an answer, and the protocol.

A backend is anything with a ``name``, an ``instant`` flag and a blocking
``generate(request)``. This module holds the interface only: it imports no
backend (:mod:`specswarm.model.load` builds one from a spec's model settings)
and no scheduling (:mod:`specswarm.model.lock` runs generations one at a time).

Schema-constrained output is optional: a backend that can hold its answer to a JSON schema
says so with a true ``accepts_schema`` attribute (read through :func:`accepts_schema`), and
only then do the tasks put an :class:`OutputSchema` in their requests. A request without one
is exactly the request of before (same fields, same cassette key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class OutputSchema:
    """A JSON schema the answer must follow, named (OpenAI's ``json_schema.name``)."""

    name: str
    """A short identifier: ``split``, ``score``."""
    text: str
    """The schema as canonical JSON text (a string keeps the request hashable)."""

    @classmethod
    def of(cls, name: str, schema: dict[str, Any]) -> OutputSchema:
        return cls(name, json.dumps(schema, sort_keys=True, separators=(",", ":")))

    def value(self) -> dict[str, Any]:
        """The schema as a dict."""
        out: dict[str, Any] = json.loads(self.text)
        return out


@dataclass(frozen=True)
class GenerationRequest:
    """Everything that determines a model's answer (and so a replay cassette key)."""

    prompt: str
    """The user turn."""
    system: str = ""
    """The system turn ("" for none)."""
    max_tokens: int = 256
    """Hard cap on generated tokens (the loop guard of last resort)."""
    temperature: float = 0.0
    """Sampling temperature; greedy decoding comes from ``top_k=1``."""
    top_k: int = 1
    """1 means greedy: the same prompt gives the same text."""
    seed: int = 42
    """Seed for backends that sample (gpt4all does not expose one; recorded anyway)."""
    repeat_penalty: float = 1.1
    """Penalty on recently generated tokens; 1.1 stops small models looping."""
    stop: tuple[str, ...] = field(default_factory=tuple)
    """Generation ends at the first of these strings (which is not returned)."""
    schema: OutputSchema | None = None
    """Hold the answer to this JSON schema (only sent to a model that :func:`accepts_schema`)."""

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be non-negative, got {self.temperature}")
        # Normalise lists given by callers so the request stays hashable.
        object.__setattr__(self, "stop", tuple(self.stop))

    def params(self) -> dict[str, int | float | list[str]]:
        """The sampling parameters as a plain dict (for cassettes and logs)."""
        return {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_k": self.top_k,
            "seed": self.seed,
            "repeat_penalty": self.repeat_penalty,
            "stop": list(self.stop),
        }


@dataclass(frozen=True)
class Generation:
    """One answer from a model."""

    text: str
    """The generated text, cut at the first stop string."""
    tokens: int
    """Number of generated tokens (as the backend counts them)."""
    seconds: float
    """Wall time of the generation (0.0 for replayed/scripted answers)."""
    model: str
    """Name of the model that produced it (e.g. the GGUF file name)."""
    structured: bool = False
    """True when the backend held the text to the request's schema (it is that JSON)."""
    cached: bool | None = None
    """The answer cache (:mod:`specswarm.model.cache`): True when the answer came from it, False
    when it missed (and stored this answer); None when no cache is in use."""


@runtime_checkable
class Model(Protocol):
    """A text generator. ``generate`` blocks; from trio, call it through
    :func:`~specswarm.model.lock.agenerate` (or a task in a worker thread)."""

    name: str
    """What produced the answers (e.g. the GGUF file name); results name it."""

    @property
    def instant(self) -> bool:
        """No machine-wide generation slot needed: True for the scripted and replay backends
        and for an openai endpoint on another machine; False for gpt4all, llama and an openai
        endpoint on this one (its server uses this machine's cores)."""
        ...

    def generate(self, req: GenerationRequest) -> Generation: ...


def accepts_schema(model: object) -> bool:
    """Whether ``model`` can hold an answer to a request's :class:`OutputSchema` (its
    ``accepts_schema`` attribute; absent means no). It may turn False once a backend finds its
    server ignores schemas."""
    return bool(getattr(model, "accepts_schema", False))
