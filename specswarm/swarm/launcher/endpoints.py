"""The OpenAI-compatible endpoints a run's peers ask, watched from the launcher.

A peer sees its endpoint fail only when a call of its own fails: a server that hangs keeps each
call waiting for ``model.timeout`` (300 s by default), ``retries`` + 1 times. So the launcher
asks every endpoint for its model list (``GET /models``, the preflight's question) every
:data:`PROBE_EVERY` seconds, without retries and with a short timeout; a server generating for a
minute still answers it at once. An endpoint that gave no answer (refused, reset, timed out) or
a 5xx to every probe for :data:`~specswarm.model.openai_backend.DEAD_AFTER` seconds is dead: the
run ends (exit 2) naming the spec's field, ``model.base_url`` (or a role's own section's).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import trio

from specswarm.model._http import Endpoint, Unreachable
from specswarm.model.openai_backend import DEAD_AFTER
from specswarm.spec import GoalSpec, ModelSettings

PROBE_EVERY = 10.0
"""Seconds between two probes of an endpoint."""
PROBE_TIMEOUT = 10.0
"""Seconds a probe waits for its answer."""
MODEL_ROLES = ("decomposer", "scorer", "executor")


@dataclass
class Watched:
    """One endpoint, the spec field that names it, and since when its probes fail."""

    field: str
    """``model.base_url`` or ``roles.ROLE.model.base_url``."""
    endpoint: Endpoint
    failing_since: float | None = None
    """When the first of a row of failed probes started (trio time); None while it answers."""

    def probe(self) -> str | None:
        """Ask once (blocking): None when the endpoint answers below 500, else why not."""
        try:
            reply = self.endpoint.request("GET", "/models", retry_unreachable=False)
        except Unreachable as exc:
            return str(exc)
        return None if reply.status < 500 else f"HTTP {reply.status}: {reply.message}"


def watched(spec: GoalSpec, settings_of: Callable[[str], ModelSettings]) -> list[Watched]:
    """The distinct openai endpoints the spec's model roles ask (``settings_of(role)``: the
    settings its peers run)."""
    found: dict[str, Watched] = {}
    for role in MODEL_ROLES:
        settings = settings_of(role)
        url = settings.base_url
        if getattr(spec.roles, role).count < 1 or settings.backend != "openai" or not url or url in found:
            continue
        key = os.environ.get(settings.api_key_env) or None
        endpoint = Endpoint(url, api_key=key, timeout=PROBE_TIMEOUT, retries=0)
        found[url] = Watched(spec.model_path(role, "base_url"), endpoint)
    return list(found.values())


async def watch(endpoints: list[Watched], dead: list[str]) -> None:
    """Probe each endpoint every :data:`PROBE_EVERY` seconds; append to ``dead`` (and return)
    the first one that failed every probe for ``DEAD_AFTER`` seconds."""
    while endpoints:
        for w in endpoints:
            started = trio.current_time()
            # (trio-typing's stale stubs, which libp2p installs, do not know abandon_on_cancel)
            why = await trio.to_thread.run_sync(w.probe, abandon_on_cancel=True)  # type: ignore[call-arg]
            if why is None:
                w.failing_since = None
                continue
            w.failing_since = started if w.failing_since is None else w.failing_since
            span = trio.current_time() - w.failing_since
            if span >= DEAD_AFTER:
                dead.append(f"{w.field}: {w.endpoint.base_url} stopped answering ({why}) for {span:.0f} s")
                return
        await trio.sleep(PROBE_EVERY)
