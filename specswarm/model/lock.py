"""One generation at a time per process, and the way to call a model from trio.

A second concurrent generation would only halve the speed of both and double
the memory for the context, so every generation of a process takes one lock (except a
model whose ``concurrent`` attribute is true: an endpoint that serves several requests at
once, whose calls the endpoint's slots bound instead, ``swarm/roles/slots.py``).
Peers are trio programs: :func:`agenerate` runs the blocking call in a worker
thread, so gossip keeps flowing while the model thinks. The model tasks
(:mod:`specswarm.model.tasks`) block and call :func:`generate_locked`; callers
run them in a worker thread themselves.

Across processes, the peers of a machine take turns through file locks, one per machine
slot (:func:`machine_lock_path`; ``swarm/roles/base.py`` takes one from trio); each worker of
the shared model service (:mod:`specswarm.model.service`) holds its slot's lock around each of
its generations with :func:`hold_machine_lock`, so it takes turns with any peer that runs its
own model.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trio

from specswarm.model.base import Generation, GenerationRequest, Model

# Two locks: the threading lock makes "one generation at a time" true for the
# whole process (even across several trio runs or plain threads); the trio lock
# queues trio tasks fairly and keeps them cancellable while they wait.
_THREAD_LOCK = threading.Lock()
_TRIO_LOCK = trio.Lock()


def generate_locked(model: Model, req: GenerationRequest) -> Generation:
    """Blocking ``model.generate(req)`` under the process-wide generation lock; without it for
    a model whose calls may overlap (``concurrent``: an endpoint that serves several requests
    at once, its calls bounded by its machine-wide slots instead)."""
    if getattr(model, "concurrent", False):
        return model.generate(req)
    with _THREAD_LOCK:
        return model.generate(req)


async def agenerate(model: Model, req: GenerationRequest) -> Generation:
    """Run ``model.generate(req)`` in a worker thread, one generation at a time per process.

    The awaiting task can be cancelled while it waits its turn; once the worker
    thread runs, cancellation takes effect when the generation returns (a
    half-finished generation would keep the model busy anyway).
    """
    if getattr(model, "concurrent", False):
        return await trio.to_thread.run_sync(model.generate, req)
    async with _TRIO_LOCK:
        return await trio.to_thread.run_sync(generate_locked, model, req)


def machine_lock_enabled() -> bool:
    """The machine-wide lock is on unless ``SPECSWARM_MACHINE_LOCK=0``."""
    return os.environ.get("SPECSWARM_MACHINE_LOCK", "1") != "0"


def machine_lock_path(slot: int = 0) -> Path:
    """The file every model process of this user locks while it generates in machine slot
    ``slot`` (the same files as ``swarm/roles/base.py``'s slots)."""
    from specswarm.model.assets import cache_dir

    path = cache_dir() / ("generation.lock" if slot == 0 else f"generation.lock.{slot}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def hold_machine_lock(slot: int = 0) -> Iterator[None]:
    """Hold machine slot ``slot``'s generation lock (blocking) for the duration of the block."""
    if not machine_lock_enabled():
        yield
        return
    with open(machine_lock_path(slot), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
