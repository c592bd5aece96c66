"""One worker of the shared model service that runs the model file with llama.cpp.

:class:`LlamaCppWorker` is a :class:`~specswarm.model.base.Model`: it starts llama.cpp's own
server (the ``xllamacpp`` wheel) inside the service's process, on a private loopback port with
a random key, one slot and ``threads`` threads, and answers a request through it. What that
buys over gpt4all (measured: docs/MODELS.md):

* **a prompt is read once**: the slot keeps the latest prompt evaluated, and the states of
  earlier prompts are saved in memory (``saved_prompts_mib``); a request that begins as an
  earlier one did (the same system turn, goal, context and plan so far) reads only the rest;
* **full prompt batches** (gpt4all caps its batch at 128 tokens);
* **one slot per worker, each its own cache** (``kv_unified`` off), repacked weights and flash
  attention off, and a prompt read before read whole again: an answer then depends on its
  request only, not on what the worker read before; with greedy decoding the same request gets
  the same text whichever worker answers it. (One case is left: a prompt whose length is one
  more than a multiple of the batch, 512 tokens, has its last token computed alone when it is
  read whole.)

The service runs as many workers as the machine has generation slots (cores ÷ threads), as it
does with gpt4all, so two one-thread workers use two cores without waiting for each other at
llama.cpp's spinning barrier.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from specswarm.errors import ModelError
from specswarm.model._common import cut_at_stop
from specswarm.model._http import Endpoint, Unreachable
from specswarm.model.base import Generation, GenerationRequest
from specswarm.model.llamacpp_server import (
    LlamaServerSettings,
    loopback_port,
    start_llama_server,
    wait_healthy,
)

SLOT_CONTEXT = 4096
"""Context tokens of a worker's one slot (the longest prompt plus its answer)."""
SAVED_PROMPTS_MIB = 256
"""Memory per worker for earlier prompts' states."""


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class LlamaCppWorker:
    """A model file served by an in-process llama.cpp server with one slot."""

    instant = False
    """A real model: generations take the machine-wide slot."""
    accepts_schema = False
    """Free text, as gpt4all answers: the same parsing on either engine."""

    def __init__(self, path: Path, *, threads: int = 1, copy: int = 0) -> None:
        self.path = path
        self.threads = threads
        self.copy = copy
        self.name = path.name
        self._server: Any = None
        self._endpoint: Endpoint | None = None
        self.last_prompt_seconds = 0.0
        """Of the latest call: seconds spent reading the prompt."""
        self.prompt_tokens = 0
        """Prompt tokens read so far (those not found evaluated already)."""
        self.reused_tokens = 0
        """Prompt tokens found evaluated already (the slot's latest prompt or a saved state)."""
        self.prefix_hits = 0
        """Calls that found part of their prompt evaluated already."""
        self._asked: set[int] = set()
        """Hashes of the (system, prompt) pairs this worker has read: asked again, such a prompt
        is read whole."""

    def load(self) -> None:
        """Start the server and wait until its model is loaded."""
        if self._server is not None:
            return
        port, key = loopback_port(), secrets.token_urlsafe(24)
        settings = LlamaServerSettings(
            model=self.path,
            port=port,
            ctx=SLOT_CONTEXT,
            threads=self.threads,
            parallel=1,
            api_key=key,
            saved_prompts_mib=SAVED_PROMPTS_MIB,
            row_wise=True,
        )
        self._server = start_llama_server(settings)
        wait_healthy(port)
        self._endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", api_key=key, timeout=3600, retries=0)

    def generate(self, req: GenerationRequest) -> Generation:
        """Generate one answer (blocking)."""
        self.load()
        messages = ([{"role": "system", "content": req.system}] if req.system else []) + [
            {"role": "user", "content": req.prompt}
        ]
        body = {
            "messages": messages,
            "max_tokens": req.max_tokens,
            "temperature": req.temperature,
            "top_k": req.top_k,
            "seed": req.seed,
            "repeat_penalty": req.repeat_penalty,
            # A prompt read before is read whole: found whole in the cache, llama.cpp would read
            # only its last token, in a batch of one, and one token alone is computed otherwise
            # than in a batch (the text could differ from the first answer's).
            "cache_prompt": hash((req.system, req.prompt)) not in self._asked,
        }
        self._asked.add(hash((req.system, req.prompt)))
        if req.stop:
            body["stop"] = list(req.stop)
        started = time.perf_counter()
        data = self._post(body)
        seconds = time.perf_counter() - started
        try:
            text = str(data["choices"][0]["message"]["content"] or "")
        except (KeyError, IndexError, TypeError):
            raise ModelError(f"llama.cpp answered without a message: {str(data)[:200]}") from None
        timings = _mapping(data.get("timings"))
        usage = _mapping(data.get("usage"))
        read = int(timings.get("prompt_n") or 0)
        reused = int(timings.get("cache_n") or 0)
        self.prompt_tokens += read
        self.reused_tokens += reused
        self.prefix_hits += reused > 0
        self.last_prompt_seconds = float(timings.get("prompt_ms") or 0.0) / 1000
        tokens = int(usage.get("completion_tokens") or timings.get("predicted_n") or 0)
        text, _ = cut_at_stop(text, tuple(req.stop))
        return Generation(text=text.strip(), tokens=tokens, seconds=seconds, model=self.name)

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        assert self._endpoint is not None  # load() made it
        try:
            reply = self._endpoint.request("POST", "/chat/completions", body)
        except Unreachable as exc:
            raise ModelError(f"llama.cpp's server failed: {exc}") from None
        if reply.status != 200:
            raise ModelError(f"llama.cpp's server answered HTTP {reply.status}: {reply.message}")
        if not isinstance(reply.data, dict):
            raise ModelError("llama.cpp's server answered something other than a JSON object")
        return reply.data
