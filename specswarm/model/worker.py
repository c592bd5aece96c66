"""The model's own thread, ahead of the peer's networking in the CPU queue.

Peers on one machine take turns on the model (one generation at a time), but every peer's
networking keeps running meanwhile: GossipSub, anti-entropy, status lines. The OS shares a
core fairly between runnable threads, so on a small machine the one thread doing the work
that matters got the same share as each of eight peers' event loops. Measured during a japan
run on 2 cores (9 peers): the generating peer's model thread had used 25 s of CPU in 5 min,
its own event loop 27 s.

:func:`prepare` (called once, before a peer starts its event loop) starts one long-lived model
thread at the process's priority and then, when ``SPECSWARM_NICE=N`` (N > 0) is set, lowers
the calling thread's priority by N (Linux niceness is per thread, and threads inherit their
creator's); :func:`run` runs a model task in that thread. Without :func:`prepare` (tests,
scripts), :func:`run` calls the task in the caller's thread.

The lowering is opt-in: its effect on a whole run is not measured yet, and a peer whose
networking runs below other programs' can fall behind on a machine that is busy with them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

SUGGESTED_NICE = 5
"""A sensible ``SPECSWARM_NICE`` (Linux niceness +5 gives a thread about a third of a contended
core's time next to one at +0)."""

_EXECUTOR: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def prepare(nice: int | None = None) -> bool:
    """Start the model thread, then lower the calling thread's priority (and so that of every
    thread it starts later). Returns whether the priority was lowered."""
    global _EXECUTOR
    with _LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specswarm-model")
            _EXECUTOR.submit(lambda: None).result()  # the thread exists now, at today's priority
    if nice is None:
        try:
            nice = int(os.environ.get("SPECSWARM_NICE", "0").strip() or 0)
        except ValueError:
            nice = 0
    step = nice
    if step <= 0 or not hasattr(os, "setpriority"):
        return False
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + step)
    except OSError:
        return False
    return True


def run(task: Callable[..., T], *args: object) -> T:
    """Run ``task(*args)`` in the model thread (blocking until it returns), or here when
    :func:`prepare` was never called."""
    executor = _EXECUTOR
    if executor is None:
        return task(*args)
    return executor.submit(task, *args).result()
