"""Which slot a model call takes: the machine's generation slots, or an endpoint's.

* **Generation slots** (:func:`machine_slot`): a model that computes on this machine's cores
  (gpt4all, llama, an OpenAI-compatible server on loopback asked without a bound) runs as many
  generations at once as the cores hold (:func:`machine_slots`), shared by every peer process
  of this user through file locks.
* **Endpoint slots** (:func:`endpoint_slot`): an ``openai`` endpoint serves several requests at
  once, so its calls take one of ``model.concurrency`` slots of that endpoint instead (file
  locks named by its URL, shared by every peer process of this user that asks it): that many
  calls go out at once, machine-wide, whichever peers make them.

``SPECSWARM_MACHINE_LOCK=0`` turns every slot off (each peer still makes one call at a time).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO

import trio

SLOT_POLL = 0.05
"""Seconds between tries for a free slot when there are several."""


def _locks_enabled() -> bool:
    return os.environ.get("SPECSWARM_MACHINE_LOCK", "1") != "0"


def _machine_slot_path(slot: int = 0) -> Path:
    from specswarm.model.assets import cache_dir

    path = cache_dir() / ("generation.lock" if slot == 0 else f"generation.lock.{slot}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _endpoint_slot_path(url: str, slot: int) -> Path:
    from specswarm.model.assets import cache_dir

    name = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    path = cache_dir() / f"endpoint-{name}.lock.{slot}"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def machine_slots(model: object) -> int:
    """How many generations this machine runs at once: its cores divided by the threads one
    generation uses (a model that does not say uses one slot: all of them, as before). Two
    one-thread generations on two cores keep both busy; one generation waiting at llama.cpp's
    barrier for a thread the OS preempted keeps neither (docs/MODELS.md)."""
    threads = getattr(model, "threads", None)
    if not isinstance(threads, int) or threads <= 0:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // threads)


def endpoint_slots(model: object) -> tuple[str, int] | None:
    """``(base_url, concurrency)`` of a model that asks an endpoint with a bound on its calls
    at once (an ``openai`` model of a spec: ``model.concurrency``), looked up through the
    wrappers around it (answer cache, cassette recorder); None for any other model."""
    for _ in range(8):  # wrappers nest a few deep at most
        slots = getattr(model, "endpoint_slots", None)
        if isinstance(slots, tuple):
            return slots
        model = getattr(model, "inner", None)
        if model is None:
            return None
    return None


@asynccontextmanager
async def machine_slot(enabled: bool = True, slots: int = 1) -> AsyncIterator[None]:
    """Hold one of the machine-wide generation slots: file locks shared by every peer process
    of this user, ``slots`` of them (:func:`machine_slots`). On a small machine as many
    generations as the cores hold finish sooner than more of them fighting over the cores.
    Off with SPECSWARM_MACHINE_LOCK=0 (or for instant models, and for the shared model service's
    clients: the service queues and holds these locks itself)."""
    if not enabled or not _locks_enabled():
        yield
        return
    if slots <= 1:
        fh = open(_machine_slot_path(), "a")
        try:
            # waiting happens in a thread; if we are cancelled meanwhile, closing the file
            # below releases the lock the abandoned thread may still obtain
            # (trio-typing's stale stubs, which libp2p installs, do not know abandon_on_cancel)
            await trio.to_thread.run_sync(  # type: ignore[call-arg]
                fcntl.flock, fh, fcntl.LOCK_EX, abandon_on_cancel=True
            )
            yield
        finally:
            fh.close()
        return
    async with _one_of([_machine_slot_path(i) for i in range(slots)]):
        yield


@asynccontextmanager
async def endpoint_slot(url: str, slots: int) -> AsyncIterator[None]:
    """Hold one of the ``slots`` machine-wide slots of the endpoint at ``url`` (file locks shared
    by every peer process of this user that asks it). Off with SPECSWARM_MACHINE_LOCK=0."""
    if not _locks_enabled():
        yield
        return
    async with _one_of([_endpoint_slot_path(url, i) for i in range(max(1, slots))]):
        yield


@asynccontextmanager
async def _one_of(paths: Sequence[Path]) -> AsyncIterator[None]:
    """Hold the lock of one of the files ``paths``: the first free one, tried every
    :data:`SLOT_POLL` seconds (each process starts its round at a different file)."""
    handles: list[IO[str]] = [open(p, "a") for p in paths]  # noqa: SIM115 - closed below
    held = None
    try:
        start = os.getpid() % len(handles)  # peers start their round at different slots
        while held is None:
            for i in range(len(handles)):
                fh = handles[(start + i) % len(handles)]
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                held = fh
                break
            else:
                await trio.sleep(SLOT_POLL)
        yield
    finally:
        for fh in handles:
            fh.close()
