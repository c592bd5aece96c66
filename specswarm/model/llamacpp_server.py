"""llama.cpp's own OpenAI-compatible HTTP server, from the ``xllamacpp`` wheel, on a GGUF file.

``specswarm model serve --runtime llama.cpp`` runs it on the embedded model (or ``--file``), on
127.0.0.1 only, so that a spec with ``model: {backend: openai, base_url: http://127.0.0.1:PORT/v1}``
has an endpoint with nothing else to install (``xllamacpp`` is a dependency). It serves
``/v1/chat/completions``, ``/v1/models`` and ``/health``; several requests at once share its
``parallel`` slots, each with its own prompt cache.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specswarm.errors import ModelError, UsageError
from specswarm.ports import free_port

INSTALL_HINT = "pip install xllamacpp"
"""What installs the ``xllamacpp`` wheel."""


@dataclass(frozen=True)
class LlamaServerSettings:
    """How to run the server."""

    model: Path
    """The GGUF file."""
    port: int
    """TCP port on 127.0.0.1 (0 is not accepted by llama.cpp: pick a free one first)."""
    ctx: int = 4096
    """Context tokens, shared by the slots."""
    threads: int = 2
    parallel: int = 1
    """Slots: requests served at once."""
    api_key: str | None = None
    """Bearer token the server requires (None: none)."""
    saved_prompts_mib: int = 256
    """Memory for earlier prompts' states, restored when a request begins as one did (0: none)."""
    row_wise: bool = False
    """Multiply each prompt token's row on its own (no repacked weights): an answer then does
    not depend on how its prompt was cut into batches, so a prompt read in part from the cache
    gets the text a prompt read whole gets."""


def loopback_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (llama.cpp takes no port 0)."""
    return free_port("127.0.0.1")


def start_llama_server(settings: LlamaServerSettings) -> Any:
    """Start the server (returns the ``xllamacpp.Server``; it serves until dropped). Raise
    ModelError when xllamacpp is not installed, UsageError (exit 2) when the model file is
    missing."""
    try:
        import xllamacpp
    except ImportError:
        raise ModelError(f"llama.cpp's server needs the xllamacpp wheel: {INSTALL_HINT}") from None
    if not settings.model.is_file():
        raise UsageError(f"{settings.model}: no such model file (expected a GGUF file)")
    params = xllamacpp.CommonParams()
    params.model.path = str(settings.model)
    params.hostnames = ["127.0.0.1"]
    params.port = settings.port
    params.n_ctx = settings.ctx
    params.n_parallel = settings.parallel
    params.model_alias = {settings.model.name}  # what /v1/models lists and answers name
    params.kv_unified = False  # each slot its own cache: an answer does not depend on the others
    params.cache_prompt = True
    params.cache_ram_mib = settings.saved_prompts_mib
    if settings.row_wise:
        params.no_extra_bufts = True
        params.flash_attn_type = 0  # off: the same attention kernel for one token and for many
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.threads
    if settings.api_key:
        params.api_keys = [settings.api_key]
    try:
        return xllamacpp.Server(params)
    except RuntimeError as exc:  # a file it cannot read, a port taken: its log says which
        raise ModelError(f"llama.cpp could not serve {settings.model.name}: {exc}") from None


def wait_healthy(port: int, timeout: float = 300.0) -> None:
    """Return once ``/health`` answers 200 (the model is loaded); raise ModelError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        if time.monotonic() > deadline:
            raise ModelError(f"llama.cpp's server on port {port} did not load its model in {timeout:g} s")
        time.sleep(0.5)
