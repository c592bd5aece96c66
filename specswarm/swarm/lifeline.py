"""A launched process leaves with its launcher: a peer, a peer group or a model service whose
parent is gone stops cleanly instead of running on, orphaned.

The launcher names the parent each process it starts should have in :data:`PARENT_ENV`: its
own pid for a process it execs, the fork server's for a forked one (the fork server exits
as soon as the launcher is gone: :func:`release_fork_server`). The child compares
``os.getppid()`` with it: when they differ the parent has exited and the child was
re-parented. Two ways notice it:

* **polling** (every system): :func:`run_stoppable` checks every :data:`POLL` seconds, and at
  once on start (a parent that died before the child ran);
* **the kernel** (Linux): :func:`die_with_parent` asks for SIGTERM when the parent exits
  (``prctl(PR_SET_PDEATHSIG)``). The kernel sends it when the *thread* that forked the child
  ends, so only the fork server's children ask for it (it forks from its one thread); the
  launcher execs from trio's worker threads, which end when idle.

Either way the process stops as on SIGTERM (hosts closed, event logs flushed, no traceback)
but exits 1 with one line saying why (:class:`ParentGoneError`): a launcher that is still
there (its fork server was killed) restarts the peer, as it restarts any peer that died. One
that has not stopped :data:`GRACE` seconds later (a model call holds it) exits at once.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable

import trio

from specswarm.errors import InterruptedRunError, SpecSwarmError

PARENT_ENV = "SPECSWARM_PARENT_PID"
"""The pid a launched process's parent has while the launcher lives (set by the launcher)."""
POLL = 0.5
"""Seconds between two looks at the parent."""
GRACE = 5.0
"""Seconds an orphaned process has to stop cleanly before it leaves at once (a model call in a
thread cannot be cancelled: a generation, or retries against a model service that is gone
too, may hold it for a minute; no launcher is left to kill it). Its event log loses nothing:
every event is flushed as it is written."""
PR_SET_PDEATHSIG = 1


class ParentGoneError(SpecSwarmError):
    """The process that started this one is gone: it stopped cleanly (exit 1)."""


def expected_parent() -> int | None:
    """The parent the launcher said this process has (:data:`PARENT_ENV`); None: not launched."""
    value = os.environ.get(PARENT_ENV, "").strip()
    return int(value) if value.isdigit() else None


def orphaned(parent: int | None) -> bool:
    """Whether ``parent`` (from :func:`expected_parent`) is no longer this process's parent."""
    return parent is not None and os.getppid() != parent


def gone_error(parent: int | None) -> ParentGoneError:
    return ParentGoneError(f"stopped: the launcher is gone (parent process {parent} exited)")


def leave_after(grace: float, parent: int | None) -> threading.Timer:
    """Exit (code 1) from a daemon thread ``grace`` seconds from now, unless the timer returned
    is cancelled first."""

    def leave() -> None:
        print(f"{gone_error(parent)}; a model call was still running after {grace:g} s", file=sys.stderr)
        sys.stderr.flush()
        os._exit(1)

    timer = threading.Timer(grace, leave)
    timer.daemon = True
    timer.start()
    return timer


def die_with_parent(sig: signal.Signals = signal.SIGTERM) -> bool:
    """Linux: have the kernel send ``sig`` to this process when the thread that forked it ends
    (call it in the child, right after the fork). False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def release_fork_server() -> None:
    """In a child of :mod:`multiprocessing`'s fork server: close the two pipes every such child
    inherits to start processes of its own (none do). The fork server exits when its 'alive'
    pipe has no writer left, and the resource tracker when its pipe has none: while children
    held them, both outlived a launcher killed outright."""
    from multiprocessing import forkserver, resource_tracker

    server = getattr(forkserver, "_forkserver", None)
    tracker = getattr(resource_tracker, "_resource_tracker", None)
    for owner, name in ((server, "_forkserver_alive_fd"), (tracker, "_fd")):
        fd = getattr(owner, name, None)
        if isinstance(fd, int):
            try:
                os.close(fd)
            except OSError:
                pass
            setattr(owner, name, None)


async def run_stoppable(body: Callable[[], Awaitable[None]], *, by_hand: bool) -> None:
    """Run ``body()`` until it returns, a SIGINT or SIGTERM arrives, or the parent the launcher
    named is gone; cancelled either way (so it closes what it holds). Raises
    InterruptedRunError (no message) for a SIGINT when ``by_hand`` (a person ran it), and
    ParentGoneError when the parent is gone; a SIGTERM otherwise ends it quietly."""
    parent = expected_parent()
    why: str | None = None
    timers: list[threading.Timer] = []
    try:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:

                async def stop_on_signal() -> None:
                    nonlocal why
                    async for signum in signals:
                        if orphaned(parent):  # the kernel's SIGTERM when the parent died
                            why = "gone"
                            timers.append(leave_after(GRACE, parent))
                        elif signum == signal.SIGINT and by_hand:
                            why = "interrupted"
                        nursery.cancel_scope.cancel()
                        return

                async def stop_when_orphaned() -> None:
                    nonlocal why
                    if parent is None:
                        return
                    while not orphaned(parent):
                        await trio.sleep(POLL)
                    why = "gone"
                    timers.append(leave_after(GRACE, parent))
                    nursery.cancel_scope.cancel()

                nursery.start_soon(stop_on_signal)
                nursery.start_soon(stop_when_orphaned)
                await body()
                nursery.cancel_scope.cancel()
    finally:
        for timer in timers:  # stopped in time
            timer.cancel()
    if why == "gone":
        raise gone_error(parent)
    if why == "interrupted":
        raise InterruptedRunError()


def watch_parent(parent: int, on_gone: Callable[[], None]) -> None:
    """For a process without a trio loop: call ``on_gone()`` from a daemon thread once
    ``parent`` is no longer this process's parent (checked every :data:`POLL` seconds)."""

    def watch() -> None:
        while not orphaned(parent):
            time.sleep(POLL)
        on_gone()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
