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
* ``keep_prefix`` (the shared model service, :mod:`specswarm.model.service`): the system turn
  stays evaluated between calls. gpt4all's public API reads it again in every chat session;
  here the call that follows one with the same system turn rewinds the context to just after
  it (``n_past``, as gpt4all's own chat rewinds to regenerate) and reads only the user turn.
  Both paths make the same calls with the same parameters (those ``GPT4All.generate`` passes
  in a chat session), so the tokens, the context and the answer are the same.
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
_PREFIX: dict[int, tuple[str, int]] = {}
"""id of a loaded GPT4All -> (the system text its context holds first, ``n_past`` right after it)."""
_CHAT_DEFAULTS = {"top_p": 0.4, "min_p": 0.0, "repeat_last_n": 64}
"""What ``GPT4All.generate`` (2.8) passes for the sampling fields it is not given."""
_SHIFT_ZONE = 0.75
"""A context filled past this share of ``N_CTX`` may have been shifted (its start erased): the
prefix is then read again."""


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


def _key(directory: Path, filename: str, threads: int, copy: int = 0) -> tuple[str, str, int]:
    return (str(directory), filename if copy == 0 else f"{filename}#{copy}", threads)


def _load(directory: Path, filename: str, threads: int, allow_download: bool, copy: int = 0) -> Any:
    key = _key(directory, filename, threads, copy)
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


def file_name(settings: ModelSettings) -> str:
    """The name a gpt4all model of ``settings`` goes by (its file's name), without loading it."""
    if settings.file:
        return settings.file.expanduser().name
    if settings.name:
        return settings.name
    from specswarm.model.assets import MODEL_FILE

    return MODEL_FILE


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

    def __init__(
        self,
        path: Path,
        *,
        threads: int = 2,
        allow_download: bool = False,
        keep_prefix: bool = False,
        copy: int = 0,
    ) -> None:
        self.path = path
        self.threads = threads
        self.allow_download = allow_download
        self.name = path.name
        self.keep_prefix = keep_prefix
        self.copy = copy
        """Which context of the file this is: the service runs one per worker (the weights are
        mapped from the same file, so they are shared; each context has its own cache)."""
        """Keep the system turn evaluated between calls (one caller at a time: the service)."""
        self.prefix_hits = 0
        """Calls that found their system turn already evaluated (``keep_prefix`` only)."""
        self.last_prompt_seconds = 0.0
        """Of the latest call: seconds until the first generated token (reading the prompt)."""

    @classmethod
    def from_settings(cls, settings: ModelSettings, *, keep_prefix: bool = False) -> Gpt4AllModel:
        """Pick the file from a spec's model settings: ``file``, else ``name``, else embedded."""
        threads = model_threads(settings.threads)
        if settings.file:
            path = settings.file.expanduser()
            if not path.is_file():
                raise ModelError(f"model.file {str(path)!r} does not exist")
            return cls(path, threads=threads, keep_prefix=keep_prefix)
        if settings.name:
            from specswarm.model.assets import model_dir

            # A gpt4all catalogue name: downloaded on first use (needs internet).
            return cls(
                model_dir() / settings.name, threads=threads, allow_download=True, keep_prefix=keep_prefix
            )
        from specswarm.model.assets import ensure_default_model

        return cls(ensure_default_model(), threads=threads, keep_prefix=keep_prefix)

    def load(self) -> None:
        """Load the weights now (they load on first use otherwise)."""
        self._gpt()

    def _gpt(self) -> Any:
        return _load(self.path.parent, self.path.name, self.threads, self.allow_download, self.copy)

    def close(self) -> None:
        """Unload the weights, if loaded (a later call loads them again)."""
        with _LOAD_LOCK:
            gpt = _LOADED.pop(_key(self.path.parent, self.path.name, self.threads, self.copy), None)
        if gpt is not None:
            _PREFIX.pop(id(gpt), None)
            gpt.close()

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
        first: list[float] = []

        def timed(token_id: int, piece: str) -> bool:
            if not first:
                first.append(time.perf_counter())
            return on_token(token_id, piece)

        try:
            if self.keep_prefix:
                self._generate_keeping_prefix(gpt, req, timed)
            else:
                _PREFIX.pop(id(gpt), None)  # a chat session resets the context
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
                        callback=timed,
                    )
        except (RuntimeError, ValueError) as exc:
            _PREFIX.pop(id(gpt), None)
            raise ModelError(f"gpt4all generation failed: {exc}") from exc
        self.last_prompt_seconds = (first[0] if first else time.perf_counter()) - started
        seconds = time.perf_counter() - started
        text, _ = cut_at_stop("".join(pieces), stops)
        return Generation(text=text.strip(), tokens=tokens, seconds=seconds, model=self.name)

    def _generate_keeping_prefix(self, gpt: Any, req: GenerationRequest, callback: Any) -> None:
        """What ``chat_session`` + ``generate`` do, but a system turn the context already holds
        first is not read again: the context is rewound to just after it."""
        llm = gpt.model
        system = CHATML_SYSTEM.format(req.system) if req.system else ""
        held = _PREFIX.pop(id(gpt), None)
        ctx = llm.context
        if held is not None and held[0] == system and ctx is not None and ctx.n_past >= held[1]:
            ctx.n_past = held[1]
            self.prefix_hits += 1
        else:
            from gpt4all._pyllmodel import empty_response_callback

            # as GPT4All.generate ingests a chat session's system prompt ("%1%2": no whitespace)
            llm.prompt_model(
                system,
                "%1%2",
                empty_response_callback,
                n_batch=N_BATCH,
                n_predict=0,
                reset_context=True,
                special=True,
            )
        after_system = int(llm.context.n_past)
        llm.prompt_model(
            req.prompt,
            CHATML_USER.format("%1", "%2"),
            callback,
            temp=req.temperature,
            top_k=req.top_k,
            repeat_penalty=req.repeat_penalty,
            n_batch=N_BATCH,
            n_predict=req.max_tokens,
            **_CHAT_DEFAULTS,
        )
        if llm.context.n_past <= N_CTX * _SHIFT_ZONE:
            _PREFIX[id(gpt)] = (system, after_system)
