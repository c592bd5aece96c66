"""llama.cpp's own OpenAI-compatible HTTP server, from the ``xllamacpp`` wheel, on a GGUF file.

``specswarm model serve --runtime llama.cpp`` runs it on the embedded model (or ``--file``), on
127.0.0.1 only, so that a spec with ``model: {backend: openai, base_url: http://127.0.0.1:PORT/v1}``
has an endpoint with nothing else to install than ``pip install 'specswarm[llamacpp]'``. It serves
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

INSTALL_HINT = "pip install 'specswarm[llamacpp]'"
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
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.threads
    if settings.api_key:
        params.api_keys = [settings.api_key]
    return xllamacpp.Server(params)


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
