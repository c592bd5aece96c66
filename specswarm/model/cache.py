"""The answer cache: model answers kept on disk across runs, shared by every local peer.

``specswarm plan --cache DIR`` (or ``cache: DIR`` in the spec) wraps whatever backend
:func:`~specswarm.model.load.load_model` builds in a :class:`CachingModel`. Each answer is one
file, ``DIR/<key>.json``, where the key is the sha256 of the canonical JSON of what decides
the answer: the backend, the model (its file, catalogue name or endpoint and model id) and the
whole request (system and user turns, token cap, temperature, top-k, seed, repeat penalty,
stop strings, output schema). What does not change an answer is left out (threads, timeouts,
retries, the peer that asks), so a re-run of an unchanged spec replays every answer, and a
spec whose context changed misses exactly on the prompts that changed.

Peers are separate processes that may write the same key at once: an answer is written to a
temporary file in DIR and moved into place with :func:`os.replace` (atomic on one file
system), so a reader sees a whole file or none. A file that cannot be read or parsed is a
miss (and is overwritten by the fresh answer). A hit costs no model time: its
:class:`~specswarm.model.base.Generation` has ``seconds`` 0.0 and ``cached`` True (a miss:
``cached`` False); the inner model is only asked on a miss, so a run that hits everywhere
never loads the weights.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from specswarm.model.base import Generation, GenerationRequest, Model, accepts_schema
from specswarm.protocol.canonical import canonical_bytes
from specswarm.spec import ModelSettings

log = logging.getLogger("specswarm.model.cache")

FORMAT = "specswarm-answer/1"
"""What a cache file says it is (a file of another format is a miss)."""


def model_identity(settings: ModelSettings, inner: Model) -> dict[str, Any]:
    """Which model answers: everything of ``settings`` that changes an answer but is not in a
    request (the request itself carries the sampling parameters)."""
    return {
        "backend": settings.backend,
        "file": settings.file.name if settings.file else None,
        "name": settings.name,
        "base_url": settings.base_url if settings.backend == "openai" else None,
        # the embedded default model has no file or name in the spec: its file name says which
        "model": inner.name if settings.backend != "openai" else None,
    }


def cache_key(identity: dict[str, Any], req: GenerationRequest) -> str:
    """The file name (without ``.json``) of the answer to ``req`` from the model ``identity``."""
    parts = {
        "model": identity,
        "system": req.system,
        "prompt": req.prompt,
        "params": req.params(),
        "schema": [req.schema.name, req.schema.text] if req.schema is not None else None,
    }
    return hashlib.sha256(canonical_bytes(parts)).hexdigest()


class AnswerCache:
    """A directory of answers, one JSON file per key (safe for many writer processes)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory).expanduser()

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer of ``key``; None when there is none (or it is unreadable)."""
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
            return None
        if not isinstance(data.get("text"), str):
            return None
        return data

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` under ``key``: a temporary file, then one atomic rename."""
        self.directory.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"format": FORMAT, "key": key, **record}, ensure_ascii=False, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(body + "\n")
            os.replace(tmp, self.path(key))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


class CachingModel:
    """Answers from the cache when it holds the request's answer, else from ``inner`` (and
    stores what ``inner`` said). Counts its own hits and misses."""

    def __init__(self, inner: Model, cache: AnswerCache, identity: dict[str, Any]) -> None:
        self.inner = inner
        self.cache = cache
        self.identity = identity
        self.name = inner.name
        self.hits = 0
        self.misses = 0

    @property
    def instant(self) -> bool:
        """As the model it caches (a hit does not wait for the machine's slot only when the
        model never does: which requests hit is known only once they are asked)."""
        return self.inner.instant

    @property
    def accepts_schema(self) -> bool:
        """As the model it caches."""
        return accepts_schema(self.inner)

    @property
    def threads(self) -> int | None:
        """As the model it caches: the machine's generation slots are counted from it
        (:func:`~specswarm.swarm.roles.slots.machine_slots`; without it a cached run had one)."""
        threads = getattr(self.inner, "threads", None)
        return threads if isinstance(threads, int) else None

    def generate(self, req: GenerationRequest) -> Generation:
        key = cache_key(self.identity, req)
        stored = self.cache.get(key)
        if stored is not None:
            self.hits += 1
            return Generation(
                text=stored["text"],
                tokens=int(stored.get("tokens") or 0),
                seconds=0.0,
                model=str(stored.get("model") or self.name),
                structured=bool(stored.get("structured", False)),
                cached=True,
            )
        gen = self.inner.generate(req)
        self.name = self.inner.name  # an endpoint names its model once it has asked
        self.misses += 1
        try:
            self.cache.put(
                key,
                {
                    "text": gen.text,
                    "tokens": gen.tokens,
                    "seconds": round(gen.seconds, 3),
                    "model": gen.model,
                    "structured": gen.structured,
                    "system": req.system,
                    "prompt": req.prompt,
                },
            )
        except OSError as exc:  # a cache that cannot be written is only a slower run
            log.warning("answer cache %s: cannot store an answer: %s", self.cache.directory, exc)
        return Generation(
            text=gen.text,
            tokens=gen.tokens,
            seconds=gen.seconds,
            model=gen.model,
            structured=gen.structured,
            cached=False,
        )
