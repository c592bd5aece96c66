"""The launcher's shared model services: one process per distinct local model, started before
the peers, restarted when it dies.

A role whose model is the gpt4all backend with ``model.shared`` (the default) does not load
the model in each of its peers: :func:`plan_services` gives every such role a service (roles
with the same model file and threads share one), :func:`start` runs ``specswarm model serve``
on a free loopback port with the run's token in its environment and waits until it answers,
and every peer of those roles gets ``--model-url``. :func:`keep` watches a service for the
whole launch and, when it dies while the run goes on, starts it again on the same port
(bounded: :data:`BACKOFF`); its peers' requests meanwhile fail and are asked again (the
client's own retries, then the role's back-off). A service that cannot be started again sets
``Seats.fatal``, and the watcher stops the run with its last words.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import trio

from specswarm.errors import RunError
from specswarm.model.runtime import GPT4ALL, service_runtime
from specswarm.model.service import TOKEN_ENV
from specswarm.spec import GoalSpec, ModelSettings
from specswarm.swarm.launcher.heal import Seats
from specswarm.swarm.launcher.procs import free_port
from specswarm.swarm.lifeline import PARENT_ENV

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds before restart 1, 2, 3…of a service that died; its length bounds the restarts."""
READY_TIMEOUT = 600.0
"""Seconds a service may take to load its model (the first run assembles the embedded one)."""
MODEL_ROLES = ("decomposer", "scorer", "executor")


@dataclass
class ServiceProc:
    """One shared model service of a launch."""

    settings: ModelSettings
    roles: list[str]
    port: int
    log: Path
    token: str
    runtime: str = GPT4ALL
    """The engine it runs the model with (:func:`~specswarm.model.runtime.service_runtime`)."""
    proc: trio.Process | None = None
    restarts: int = 0
    deaths: list[int] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)
    """The process id of every start, in order."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def name(self) -> str:
        return f"model service ({', '.join(self.roles)})"

    def command(self) -> list[str]:
        settings = self.settings
        cmd = [
            sys.executable,
            "-m",
            "specswarm",
            "model",
            "serve",
            "--port",
            str(self.port),
            "--exit-with-parent",
        ]
        cmd += ["--backend", settings.backend, "--threads", str(settings.threads)]
        if settings.backend == "gpt4all":  # resolved here: the service's own "auto" may differ
            cmd += ["--engine", self.runtime]
        if settings.file:
            cmd += ["--file", str(settings.file)]
        elif settings.name:
            cmd += ["--name", settings.name]
        if settings.backend == "replay" and settings.cassette:
            cmd += ["--cassette", str(settings.cassette)]
        return cmd


SHARED_BY_DEFAULT = True
"""One model copy per machine by default (gpt4all): measured back to back on japan, the service
with forked peers peaked at 1.90 GiB of PSS against 2.39 GiB with a model per peer, and was
not slower (210 s against 252 s; docs/explanation/benchmarks.md, "One model copy per machine")."""
SERVABLE = ("gpt4all", "llama", "scripted", "replay")
"""The backends a service can run (an openai endpoint is a server already)."""


def shares(settings: ModelSettings) -> bool:
    """Whether a role of ``settings`` asks a shared service: ``model.shared`` (None, the
    default: :data:`SHARED_BY_DEFAULT` for gpt4all, no for the others)."""
    if settings.backend not in SERVABLE:
        return False
    return (
        settings.shared
        if settings.shared is not None
        else SHARED_BY_DEFAULT and settings.backend == "gpt4all"
    )


def plan_services(
    spec: GoalSpec, settings_of: Callable[[str], ModelSettings], workdir: Path
) -> dict[str, ServiceProc]:
    """Role -> the service its peers ask (one per distinct model file and thread count); roles
    that run their model in-process are absent."""
    token = secrets.token_urlsafe(32)
    by_model: dict[tuple[str, str, str, int, str], ServiceProc] = {}
    out: dict[str, ServiceProc] = {}
    for role in MODEL_ROLES:
        settings = settings_of(role)
        if getattr(spec.roles, role).count < 1 or not shares(settings):
            continue
        runtime = service_runtime(settings)
        key = (
            settings.backend,
            str(settings.file or settings.cassette or ""),
            settings.name or "",
            settings.threads,
            runtime,
        )
        service = by_model.get(key)
        if service is None:
            n = len(by_model)
            log = workdir / f"model-service-{n}.log"
            service = ServiceProc(settings, [], free_port(), log, token, runtime)
            by_model[key] = service
        service.roles.append(role)
        out[role] = service
    return out


def _env(s: ServiceProc) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env[TOKEN_ENV] = s.token
    env[PARENT_ENV] = str(os.getpid())  # --exit-with-parent: gone with this launcher
    return env


def peer_env(services: Sequence[ServiceProc]) -> dict[str, str]:
    """What a peer's environment needs to ask the services (the run's token)."""
    return {TOKEN_ENV: services[0].token} if services else {}


async def _spawn(s: ServiceProc) -> trio.Process:
    with open(s.log, "ab" if s.restarts else "wb") as log:
        if s.restarts:
            log.write(f"--- restart {s.restarts} ---\n".encode())
            log.flush()
        proc = await trio.lowlevel.open_process(
            s.command(),
            stdout=subprocess.DEVNULL,
            stderr=log,
            stdin=subprocess.DEVNULL,
            env=_env(s),
            start_new_session=True,
        )
    s.proc = proc
    s.pids.append(proc.pid)
    return proc


def _healthy(s: ServiceProc) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{s.port}/health", timeout=2) as resp:
            return bool(resp.status == 200 and json.loads(resp.read()).get("status") == "ok")
    except (OSError, ValueError):
        return False


_ENGINE_LOG = re.compile(r"^\d+\.\d+\.\d+\.\d+ [DIWE] ")
"""A line of llama.cpp's own log ("0.00.004.530 E srv load_model: ..."), written from its
logging thread, so it may come after the service's own last words."""


def last_words(s: ServiceProc) -> str:
    """The service log's last line of its own (llama.cpp's log lines only when there is none)."""
    try:
        lines = [ln.strip() for ln in s.log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    own = [ln for ln in lines if not _ENGINE_LOG.match(ln)]
    return (own or lines or [""])[-1][:300]


async def _until_ready(s: ServiceProc, proc: trio.Process, timeout: float) -> None:
    """Wait until ``s`` answers /health; RunError if it exits first or takes too long."""
    deadline = time.monotonic() + timeout
    while not await trio.to_thread.run_sync(_healthy, s):
        if proc.returncode is not None:
            said = last_words(s) or "?"
            raise RunError(
                f"the {s.name} exited {proc.returncode} before it was ready: {said} (log: {s.log})"
            )
        if time.monotonic() > deadline:
            raise RunError(f"the {s.name} was not ready within {timeout:g} s (log: {s.log})")
        await trio.sleep(0.2)


async def start(s: ServiceProc, timeout: float = READY_TIMEOUT) -> None:
    """Start ``s`` and wait until it serves (its model loaded)."""
    proc = await _spawn(s)
    try:
        await _until_ready(s, proc, timeout)
    except BaseException:
        with trio.CancelScope(shield=True):
            await _stop(proc)
        raise


async def _stop(proc: trio.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
        with trio.move_on_after(5.0):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def keep(s: ServiceProc, seats: Seats) -> None:
    """Watch the started service ``s`` until the launch ends (then stop it), restarting it when
    it dies; when it cannot be restarted, set ``seats.fatal``."""
    try:
        while True:
            assert s.proc is not None
            code = await s.proc.wait()
            s.deaths.append(code)
            if seats.over:
                return
            if s.restarts >= len(BACKOFF):
                seats.fatal = (
                    f"the {s.name} died {len(s.deaths)} times (last exit {code}): {last_words(s) or '?'} "
                    f"(log: {s.log})"
                )
                seats.note(f"{s.name} exited {code}; not restarted: restarts used up")
                return
            delay = BACKOFF[s.restarts]
            s.restarts += 1
            seats.note(f"{s.name} exited {code}; restarting ({s.restarts}/{len(BACKOFF)}) in {delay:g} s")
            await trio.sleep(delay)
            try:
                await start(s)
            except RunError as exc:  # it died (or hung) while loading: one more death
                seats.note(str(exc))
    finally:
        if s.proc is not None:
            with trio.CancelScope(shield=True):
                await _stop(s.proc)
