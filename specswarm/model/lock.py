"""One generation at a time per process, and the way to call a model from trio.

A second concurrent generation would only halve the speed of both and double
the memory for the context, so every generation of a process takes one lock.
Peers are trio programs: :func:`agenerate` runs the blocking call in a worker
thread, so gossip keeps flowing while the model thinks. The model tasks
(:mod:`specswarm.model.tasks`) block and call :func:`generate_locked`; callers
run them in a worker thread themselves.
"""

from __future__ import annotations

import threading

import trio

from specswarm.model.base import Generation, GenerationRequest, Model

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
