"""Peer processes forked from one preloaded parent: the modules every peer imports, in memory once.

A peer process imports about 1,400 modules (libp2p and what it pulls in: QUIC, Kademlia,
relay, crypto; typer, jinja2, jsonschema), about 80 MiB of Python heap each, before it does
anything. Started by ``exec`` (:func:`trio.lowlevel.open_process`), nine peers hold nine
private copies. Forked from one parent that imported them once (:mod:`multiprocessing`'s
fork server with :data:`PRELOAD`), they share those pages copy-on-write, and the run's total
PSS counts them about once. Measured: nine processes that import what a peer imports, 610 MiB
of PSS exec'd against 104 MiB forked (plus the fork server's own ~90 MiB).

Each peer is still its own OS process (its own session, stdout pipe, stderr log, exit code,
signals; it stops when the fork server, and so the launcher, is gone) and runs the same
``specswarm peer`` (or ``peer-group``) command line, as ``python -m specswarm`` would;
:class:`ForkedProcess` gives the launcher the part of :class:`trio.Process` it uses. Its
command line in ``/proc`` is the fork server's, so the launcher writes each seat's pid to
``SEAT.pid`` beside its log.

On by default on Linux; ``SPECSWARM_FORK=0`` starts every peer by ``exec`` instead (and other
systems always do: forking after importing system frameworks is unsafe on macOS).
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Protocol

import trio

from specswarm.swarm import lifeline

PRELOAD = [
    "specswarm.cli.app",
    "specswarm.swarm.peer",
    "specswarm.swarm.group",
    "specswarm.swarm.observe",
    "specswarm.transport.p2p",
    "specswarm.model.service",
    "specswarm.model.openai_backend",
    "specswarm.model.gpt4all_backend",
    "specswarm.model.cache",
    "specswarm.swarm.launcher.freeze",
]
"""What the fork server imports before it forks a peer: everything a peer imports (gpt4all itself
only when the peer loads a model of its own), then :mod:`~specswarm.swarm.launcher.freeze`."""
FORK_ENV = "SPECSWARM_FORK"

log = logging.getLogger("specswarm.launcher")

_context: ForkServerContext | None = None


class PeerProcess(Protocol):
    """What the launcher uses of a peer's process (a :class:`trio.Process` or a :class:`ForkedProcess`)."""

    @property
    def pid(self) -> int: ...

    @property
    def stdout(self) -> trio.abc.ReceiveStream | None: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: signal.Signals) -> None: ...

    def kill(self) -> None: ...


def enabled() -> bool:
    """Whether peers are forked (:data:`FORK_ENV`; default: on Linux)."""
    value = os.environ.get(FORK_ENV, "").strip()
    if value:
        return value != "0"
    return sys.platform == "linux"


_broken: str | None = None
"""Why the fork server could not be started (then every peer is exec'd); None: it can."""
SOCKET_DIR_MAX = 60
"""Longest temp directory the fork server's socket may live in: a Unix socket's path has at
most 107 bytes, and ``multiprocessing`` puts it two random names below the temp directory."""


def _short_temp_dir() -> str | None:
    """A writable temp directory short enough for the fork server's socket (None: the default is)."""
    if len(tempfile.gettempdir()) <= SOCKET_DIR_MAX:
        return None
    for d in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return d
    return None


def warm_up() -> None:
    """Start the fork server in a background thread, so that it imports :data:`PRELOAD` (about
    1.3 s of CPU) while the launcher still loads the spec and prepares the run; the first
    :func:`open_peer` then waits less. Nothing when peers are not forked, or when the temp
    directory is too long for the server's socket (:func:`_ctx` then changes the temp
    directory for a moment, which must not happen while the launcher makes its own)."""
    if not enabled() or _context is not None or _short_temp_dir() is not None:
        return
    threading.Thread(target=_start_quietly, name="specswarm-fork-server", daemon=True).start()


def _start_quietly() -> None:
    try:
        _ctx()
    except (OSError, EOFError, ValueError) as exc:  # open_peer tries again and says why
        log.debug("fork server not started ahead: %s", exc)


_starting = threading.Lock()
"""Held while :func:`_ctx` starts the server (from :func:`warm_up`'s thread or a peer's start)."""


def _ctx() -> ForkServerContext:
    """The fork server's context, its server started (blocking: the server imports :data:`PRELOAD`)."""
    with _starting:
        return _started()


def _started() -> ForkServerContext:
    global _context
    if _context is None:
        ctx = multiprocessing.get_context("forkserver")
        assert isinstance(ctx, ForkServerContext)
        ctx.set_forkserver_preload(PRELOAD)
        saved, short = tempfile.tempdir, _short_temp_dir()
        try:
            if short:  # a long TMPDIR (a test's or a benchmark's work directory) fits no socket path
                tempfile.tempdir = short
            multiprocessing.forkserver.ensure_running()  # where multiprocessing makes its socket dir
        finally:
            tempfile.tempdir = saved
        _context = ctx
    return _context


class ForkedProcess:
    """A peer process forked by the fork server, seen as the launcher sees a :class:`trio.Process`."""

    def __init__(self, proc: multiprocessing.process.BaseProcess, stdout: trio.lowlevel.FdStream) -> None:
        self._proc = proc
        self.stdout = stdout
        """Its status lines (the read end of its stdout pipe)."""
        pid = proc.pid
        assert pid is not None
        self._pid = pid

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        """Its exit code (negative: the signal that ended it); None while it runs."""
        return self._proc.exitcode

    async def wait(self) -> int:
        while self._proc.exitcode is None:
            await trio.lowlevel.wait_readable(self._proc.sentinel)
            # the sentinel turns readable when the process ends; its code follows on the same socket
            await trio.to_thread.run_sync(self._proc.join, 1.0)
        return self._proc.exitcode

    def send_signal(self, sig: signal.Signals) -> None:
        if self._proc.exitcode is None:
            try:
                os.kill(self._pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _child(
    argv: Sequence[str], env: Mapping[str, str], log: str, out: multiprocessing.connection.Connection
) -> None:
    """The forked peer: its own session, stdout to the launcher's pipe, stderr to its log, its
    tie to the fork server (:mod:`~specswarm.swarm.lifeline`), then the CLI."""
    server = sys.modules.get(f"{__package__}.freeze")
    parent = getattr(server, "SERVER_PID", None) or os.getppid()
    lifeline.release_fork_server()  # so the server exits with the launcher: the SIGTERM asked for here
    lifeline.die_with_parent()
    os.setsid()
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    os.dup2(out.fileno(), 1)
    out.close()
    sys.stdout = open(1, "w", encoding="utf-8", buffering=1, closefd=False)  # noqa: SIM115 - lives as long as the process
    sys.stderr = open(2, "w", encoding="utf-8", buffering=1, errors="backslashreplace", closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(env)
    os.environ[lifeline.PARENT_ENV] = str(parent)
    sys.argv = ["specswarm", *argv]
    runpy.run_module("specswarm", run_name="__main__", alter_sys=True)  # as `python -m specswarm` does


async def _exec(cmd: Sequence[str], env: Mapping[str, str], log_path: Path) -> PeerProcess:
    env = {**env, lifeline.PARENT_ENV: str(os.getpid())}
    with open(log_path, "ab") as fh:
        return await trio.lowlevel.open_process(
            list(cmd),
            stdout=subprocess.PIPE,
            stderr=fh,
            stdin=subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,
        )


async def open_peer(cmd: Sequence[str], env: Mapping[str, str], log_path: Path) -> PeerProcess:
    """Start ``cmd`` (``python -m specswarm ...``) with status lines on a pipe, stderr appended to
    ``log_path`` and its own session: forked from the fork server when :func:`enabled`, else
    exec'd (also when the fork server cannot be started: said once in the launcher's log)."""
    global _broken
    if not enabled() or list(cmd[:3]) != [sys.executable, "-m", "specswarm"]:
        return await _exec(cmd, env, log_path)
    if _broken is None:
        try:
            ctx = await trio.to_thread.run_sync(_ctx)
        except (OSError, EOFError, ValueError) as exc:
            _broken = f"{type(exc).__name__}: {exc}"
            log.warning("cannot start the fork server (%s); starting peers with exec instead", _broken)
    if _broken is not None:
        return await _exec(cmd, env, log_path)
    reader, writer = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(list(cmd[3:]), dict(env), str(log_path), writer), daemon=False)
    try:
        await trio.to_thread.run_sync(proc.start)
    finally:
        writer.close()
    stdout = trio.lowlevel.FdStream(os.dup(reader.fileno()))
    reader.close()
    return ForkedProcess(proc, stdout)
