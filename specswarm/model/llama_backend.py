"""Optional backend: llama-cpp-python (``pip install specswarm[llama]``, a source build).

Reads the same GGUF files as gpt4all (and newer architectures gpt4all cannot).
Note (docs/MODELS.md): the two runtimes do not give identical text for the same
prompt, so cassettes recorded with one do not replay the other's answers.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from specswarm.errors import ModelError
from specswarm.model._common import N_BATCH, N_CTX, cut_at_stop, model_threads
from specswarm.model.base import Generation, GenerationRequest
from specswarm.spec import ModelSettings

_LOADED: dict[tuple[str, int], Any] = {}
_LOAD_LOCK = threading.Lock()


class LlamaModel:
    """A :class:`~specswarm.model.base.Model` backed by llama-cpp-python (chat completion API)."""

    instant = False
    """A real model: generations take the machine-wide slot."""

    def __init__(self, path: Path, *, threads: int = 2) -> None:
        self.path = path
        self.threads = threads
        self.name = path.name

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> LlamaModel:
        """Pick the file from a spec's model settings: ``file``, else embedded."""
        threads = model_threads(settings.threads)
        if settings.name:
            raise ModelError(
                "model.name (a gpt4all catalogue name) needs backend gpt4all; "
                "give the llama backend a model.file"
            )
        if settings.file:
            path = settings.file.expanduser()
            if not path.is_file():
                raise ModelError(f"model.file {str(path)!r} does not exist")
            return cls(path, threads=threads)
        from specswarm.model.assets import ensure_default_model

        return cls(ensure_default_model(), threads=threads)

    def _llm(self) -> Any:
        key = (str(self.path), self.threads)
        with _LOAD_LOCK:
            if key not in _LOADED:
                try:
                    from llama_cpp import Llama
                except ImportError:
                    raise ModelError(
                        "model.backend 'llama' needs llama-cpp-python: pip install 'specswarm[llama]'"
                    ) from None
                _LOADED[key] = Llama(
                    model_path=str(self.path),
                    n_ctx=N_CTX,
                    n_batch=N_BATCH,
                    n_threads=self.threads,
                    verbose=False,
                )
            return _LOADED[key]

    def generate(self, req: GenerationRequest) -> Generation:
        llm = self._llm()
        messages = [{"role": "system", "content": req.system}] if req.system else []
        messages.append({"role": "user", "content": req.prompt})
        started = time.perf_counter()
        out = llm.create_chat_completion(
            messages=messages,
            max_tokens=req.max_tokens,
            temperature=req.temperature,
            top_k=req.top_k,
            seed=req.seed,
            repeat_penalty=req.repeat_penalty,
            stop=list(req.stop) or None,
        )
        text, _ = cut_at_stop(out["choices"][0]["message"]["content"] or "", req.stop)
        tokens = int(out.get("usage", {}).get("completion_tokens", 0))
        return Generation(
            text=text.strip(), tokens=tokens, seconds=time.perf_counter() - started, model=self.name
        )
