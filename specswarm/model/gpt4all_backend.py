"""The default backend: a GGUF file run by gpt4all (llama.cpp inside), on the CPU.

* The ChatML turns are built here, not by gpt4all: the system turn is fed as
  the chat session's system prompt (special tokens on), the user turn through
  a ``<|im_start|>user ... <|im_start|>assistant`` template. The user text is
  tokenized with special tokens off, so text inside a prompt cannot forge a
  turn boundary.
* Greedy decoding is ``top_k=1`` (temperature 0 misbehaves in some gpt4all
  versions); ``n_batch`` is :data:`~specswarm.model._common.N_BATCH` (the
  default 8 makes prompt reading slow). See docs/MODELS.md.
* Stop strings and a repeated-line guard are enforced in the token callback,
  so a looping model is cut short instead of burning its whole token budget.
* The weights load lazily, once per process (a 1 GiB model takes ~1 s to map
  and 1.2 GB of RAM); every :class:`Gpt4AllModel` with the same file shares them.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from specswarm.errors import ModelError
from specswarm.model._common import N_BATCH, N_CTX, cut_at_stop, model_threads
from specswarm.model.base import Generation, GenerationRequest
from specswarm.spec import ModelSettings

CHATML_SYSTEM = "<|im_start|>system\n{0}<|im_end|>\n"
CHATML_USER = "<|im_start|>user\n{0}<|im_end|>\n<|im_start|>assistant\n"
_END_MARKERS = ("<|im_end|>", "<|endoftext|>", "<|im_start|>")
# gpt4all probes its CUDA backends at load and prints one line per library it
# cannot open; on a CPU-only machine that is expected and harmless.
_HARMLESS_STDERR = re.compile(r"^Failed to load libllamamodel-mainline-(cuda|kompute)")
REPEAT_LIMIT = 3
"""A non-empty line that occurs this many times in a row ends the generation."""

_LOADED: dict[tuple[str, str, int], Any] = {}
_LOAD_LOCK = threading.Lock()


@contextmanager
def _filtered_stderr(harmless: re.Pattern[str]) -> Iterator[None]:
    """Capture file descriptor 2 (C code writes there) and replay all but harmless lines."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode("utf-8", errors="replace")
            kept = [ln for ln in text.splitlines(keepends=True) if not harmless.match(ln)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def _load(directory: Path, filename: str, threads: int, allow_download: bool) -> Any:
    key = (str(directory), filename, threads)
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                with _filtered_stderr(_HARMLESS_STDERR):
                    from gpt4all import GPT4All

                    _LOADED[key] = GPT4All(
                        model_name=filename,
                        model_path=str(directory),
                        allow_download=allow_download,
                        device="cpu",
                        n_threads=threads,
                        n_ctx=N_CTX,
                    )
            except (RuntimeError, ValueError, OSError) as exc:
                raise ModelError(f"gpt4all could not load {directory / filename}: {exc}") from exc
        return _LOADED[key]


def is_looping(text: str, limit: int = REPEAT_LIMIT) -> bool:
    """True when the last ``limit`` complete lines are the same non-empty line."""
    lines = text.split("\n")[:-1]  # the last piece is still being written
    if len(lines) < limit:
        return False
    tail = [ln.strip() for ln in lines[-limit:]]
    return bool(tail[0]) and all(ln == tail[0] for ln in tail)


class Gpt4AllModel:
    """A :class:`~specswarm.model.base.Model` backed by gpt4all; the weights load on first use."""

    instant = False
    """A real model: generations take the machine-wide slot."""

    def __init__(self, path: Path, *, threads: int = 2, allow_download: bool = False) -> None:
        self.path = path
        self.threads = threads
        self.allow_download = allow_download
        self.name = path.name

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> Gpt4AllModel:
        """Pick the file from a spec's model settings: ``file``, else ``name``, else embedded."""
        threads = model_threads(settings.threads)
        if settings.file:
            path = settings.file.expanduser()
            if not path.is_file():
                raise ModelError(f"model.file {str(path)!r} does not exist")
            return cls(path, threads=threads)
        if settings.name:
            from specswarm.model.assets import model_dir

            # A gpt4all catalogue name: downloaded on first use (needs internet).
            return cls(model_dir() / settings.name, threads=threads, allow_download=True)
        from specswarm.model.assets import ensure_default_model

        return cls(ensure_default_model(), threads=threads)

    def _gpt(self) -> Any:
        return _load(self.path.parent, self.path.name, self.threads, self.allow_download)

    def generate(self, req: GenerationRequest) -> Generation:
        """Generate one answer (blocking; see :func:`~specswarm.model.lock.agenerate`)."""
        gpt = self._gpt()
        stops = tuple(req.stop) + _END_MARKERS
        pieces: list[str] = []
        tokens = 0

        def on_token(_token_id: int, piece: str) -> bool:
            nonlocal tokens
            tokens += 1
            pieces.append(piece)
            text = "".join(pieces)
            stopped = cut_at_stop(text, stops)[1]
            return not (stopped or ("\n" in piece and is_looping(text)))

        started = time.perf_counter()
        try:
            with gpt.chat_session(
                system_prompt=CHATML_SYSTEM.format(req.system) if req.system else "",
                prompt_template=CHATML_USER,
            ):
                gpt.generate(
                    req.prompt,
                    max_tokens=req.max_tokens,
                    temp=req.temperature,
                    top_k=req.top_k,
                    repeat_penalty=req.repeat_penalty,
                    n_batch=N_BATCH,
                    callback=on_token,
                )
        except (RuntimeError, ValueError) as exc:
            raise ModelError(f"gpt4all generation failed: {exc}") from exc
        seconds = time.perf_counter() - started
        text, _ = cut_at_stop("".join(pieces), stops)
        return Generation(text=text.strip(), tokens=tokens, seconds=seconds, model=self.name)
