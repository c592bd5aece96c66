"""The model interface every backend implements, and the one way roles call it.

A backend is anything with a ``name`` and a blocking ``generate(request)``.
Peers are trio programs, so they call :func:`agenerate`, which runs the
blocking call in a worker thread (gossip keeps flowing while the model
thinks) and holds a process-wide lock: one generation at a time per process,
because a second concurrent generation would only halve the speed of both and
double the memory for the context.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import trio

from specswarm.errors import ModelError


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

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be non-negative, got {self.temperature}")
        # Normalise lists given by callers so the request stays hashable.
        object.__setattr__(self, "stop", tuple(self.stop))

    def params(self) -> dict[str, Any]:
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


@runtime_checkable
class Model(Protocol):
    """A text generator. ``generate`` blocks; call it through :func:`agenerate` from trio."""

    name: str

    def generate(self, req: GenerationRequest) -> Generation: ...


# Two locks: the threading lock makes "one generation at a time" true for the
# whole process (even across several trio runs or plain threads); the trio lock
# queues trio tasks fairly and keeps them cancellable while they wait.
_THREAD_LOCK = threading.Lock()
_TRIO_LOCK = trio.Lock()


def generate_locked(model: Model, req: GenerationRequest) -> Generation:
    """Blocking ``model.generate(req)`` under the process-wide generation lock."""
    with _THREAD_LOCK:
        return model.generate(req)


async def agenerate(model: Model, req: GenerationRequest) -> Generation:
    """Run ``model.generate(req)`` in a worker thread, one generation at a time per process.

    The awaiting task can be cancelled while it waits its turn; once the worker
    thread runs, cancellation takes effect when the generation returns (a
    half-finished generation would keep the model busy anyway).
    """
    async with _TRIO_LOCK:
        return await trio.to_thread.run_sync(generate_locked, model, req)


def load_model(settings: dict[str, Any]) -> Model:
    """Build the model a spec's ``model`` section asks for.

    ``backend`` selects: ``gpt4all`` (default; the embedded model unless
    ``file`` or ``name`` says otherwise), ``replay`` (needs ``cassette``),
    ``scripted`` (deterministic, no model at all) and ``llama``
    (llama-cpp-python, an optional extra). With ``gpt4all``/``llama`` and a
    ``cassette`` set, real outputs are recorded into it.
    """
    backend = settings.get("backend") or "gpt4all"
    cassette = settings.get("cassette")
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
