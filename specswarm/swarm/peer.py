"""One peer process: ``specswarm peer`` / ``specswarm observe`` (and what ``specswarm plan`` spawns).

Builds the identity, the libp2p transport, the node and its role; stops cleanly
on SIGINT/SIGTERM (exit 0, no traceback, the event log flushed line by line), and when the
launcher that started it is gone (exit 1: :mod:`specswarm.swarm.lifeline`). A peer
restarted with ``--preload`` of its own ``--events`` log resumes from it: it holds what it
published before (no second join, vote or claim) and appends only events new to the log.
An error that would stop it again on a restart (one whose ``exit_code`` is
:data:`DETERMINISTIC_EXIT`, such as a prompt template that fails on a task's data) ends the
process with that code and its message as the last line of stderr; the launcher reads both.
:func:`peer_config` turns the command line into a :class:`PeerConfig`; :func:`run_peer_cli` runs
:func:`_main` with it; it raises the project's errors (the CLI turns them into exit
codes and text): TransportError when the network fails or no peer tells the run,
InterruptedRunError (with no message) when Ctrl-C stops a peer run by hand.

Environment overrides (for tests, benchmarks and demos, never needed otherwise):
``SPECSWARM_MODEL_BACKEND`` (gpt4all | replay | scripted | llama | openai) and
``SPECSWARM_MODEL_CASSETTE`` replace the model backend and cassette (of every role);
``SPECSWARM_MODEL_SHARED`` (0 or 1) replaces ``model.shared``, ``SPECSWARM_MODEL_RUNTIME``
(auto, llama.cpp or gpt4all) ``model.runtime``. A peer given ``--model-url``
asks that model service (token in ``SPECSWARM_MODEL_TOKEN``) instead of loading a model.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar, cast

import trio

from specswarm.errors import InterruptedRunError, SpecSwarmError, TransportError
from specswarm.model import worker
from specswarm.protocol.bodies import RunBody
from specswarm.protocol.events import Event, check_event, make_run_event, read_event_log
from specswarm.protocol.identity import Identity, short_id
from specswarm.spec import AccessSettings, GoalSpec, ModelSettings
from specswarm.spec.addresses import parse_listen
from specswarm.spec.model_values import RUNTIMES
from specswarm.swarm.lifeline import run_stoppable
from specswarm.swarm.node import Node
from specswarm.swarm.peerio import EventLogFile as EventLogFile
from specswarm.swarm.peerio import StatusPrinter
from specswarm.swarm.roles.base import ModelRole
from specswarm.transport.base import Transport

log = logging.getLogger("specswarm.peer")
T = TypeVar("T")

NO_RUN = "no peer answered with the run's spec (is --join right?)"
DETERMINISTIC_EXIT = 2
"""The exit code of a peer stopped by an error a restart would meet again (a spec or template
problem; every error whose class states this ``exit_code``): the launcher restarts a peer that
died of anything else, but stops the run when one exits with this."""


@dataclass(frozen=True)
class PeerConfig:
    """Everything one peer process runs with (built by :func:`peer_config`)."""

    role: str
    """decomposer | scorer | executor | observer."""
    identity: Identity
    """This peer's key (from ``--key``, or new)."""
    run_event: Event | None
    """The run to take part in (``--run-file`` or ``--spec``); None: learn it from a peer joined."""
    admission: str | None
    """The admission signature of this peer's join, as the launcher signed it (``--admission``)."""
    admission_key: Identity | None
    """A key to sign its own admission with (a secret-mode run); None when it has none."""
    strategy: str | None
    """A decomposer's strategy or a scorer's lens (``--strategy``/``--lens``); None: the spec's first."""
    join: tuple[str, ...]
    """Multiaddrs of peers to bootstrap from (``--join``)."""
    mdns: bool
    """Find peers on the LAN with mDNS."""
    listen: str
    """The listen multiaddr."""
    events: Path | None
    """Append every event held here, one JSON line each (``--events``)."""
    fmt: str
    """What a human-run observer renders the converged plan as."""
    out: Path | None
    """Where it writes it (None: stdout)."""
    preload: tuple[Event, ...]
    """Events to start from (``--preload``: a resumed run, and a restarted peer's own log)."""
    json_status: bool
    """Status lines as JSON on stdout for the launcher (and no human lines, no rendering)."""
    cache: Path | None = None
    """The answer cache directory (``--cache``, else a ``--spec``'s ``cache:``); None: none."""
    model_url: str | None = None
    """The shared model service to ask (``--model-url``); None: load the role's model here."""

    @property
    def renders(self) -> bool:
        """A human-run observer: prints the tree as it grows and renders the plan at the end."""
        return self.role == "observer" and not self.json_status


def model_settings(spec: GoalSpec, role: str | None = None) -> ModelSettings:
    """The model settings ``role``'s peers run (its own model section, else the spec's), with
    the environment overrides applied."""
    settings = spec.model_for(role) if role else spec.model
    backend = os.environ.get("SPECSWARM_MODEL_BACKEND")
    if backend:  # an unknown name is refused by load_model, as one in a spec would be
        settings = dataclasses.replace(settings, backend=cast(Any, backend))
    cassette = os.environ.get("SPECSWARM_MODEL_CASSETTE")
    if cassette:
        settings = dataclasses.replace(settings, cassette=Path(cassette))
    shared = os.environ.get("SPECSWARM_MODEL_SHARED")
    if shared in ("0", "1"):
        settings = dataclasses.replace(settings, shared=shared == "1")
    runtime = os.environ.get("SPECSWARM_MODEL_RUNTIME")
    if runtime in RUNTIMES:
        settings = dataclasses.replace(settings, runtime=cast(Any, runtime))
    return settings


def role_factory(
    role: str, strategy: str | None, cache: Path | None = None, model_url: str | None = None
) -> Callable[[GoalSpec], ModelRole | None]:
    """What the node calls with the run's spec once it knows the run: the role object (its
    model behind the answer cache in ``cache``, when given; ``model_url``: a client of that
    shared model service instead of a model loaded here)."""

    def build(spec: GoalSpec) -> ModelRole | None:
        from specswarm.model import load_model
        from specswarm.swarm.roles import make_role

        settings = model_settings(spec, role)
        if model_url:
            from specswarm.model.load import with_cache
            from specswarm.model.service import service_client

            url = model_url
            return make_role(
                role, spec, lambda: with_cache(service_client(settings, url), settings, cache), strategy
            )
        return make_role(role, spec, lambda: load_model(settings, cache), strategy)

    return build


def run_peer_cli(config: PeerConfig) -> None:
    """Run one peer (``config``: :func:`peer_config` of its command line) until it is stopped
    (observers started by ``observe`` stop once converged)."""
    setup_logging()
    run_configs(_main, config)


def setup_logging() -> None:
    logging.basicConfig(
        level=os.environ.get("SPECSWARM_LOG", "WARNING"),
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        force=True,
    )


def peer_config(
    *,
    role: str,
    spec: Path | None,
    join: Sequence[str],
    mdns: bool,
    listen: str,
    key: Path | None,
    strategy: str | None,
    events: Path | None,
    fmt: str = "markdown",
    out: Path | None = None,
    run_file: Path | None = None,
    admission: str | None = None,
    preload: Sequence[Path] = (),
    json_status: bool = False,
    cache: Path | None = None,
    model_url: str | None = None,
) -> PeerConfig:
    """The :class:`PeerConfig` of a ``specswarm peer`` command line."""
    identity = Identity.load_or_create(key) if key else Identity.generate()
    run_event: Event | None = None
    admission_key: Identity | None = None
    if run_file is not None:
        run_event = _load_run_file(run_file)
    elif spec is not None:
        run_event, admission_key, spec_cache = _run_from_spec(spec, identity)
        cache = cache or spec_cache
    elif not join and not mdns and not _fixed_port(listen):
        raise SpecSwarmError(
            "a peer needs --spec SPEC (start a run), --join MULTIADDR / --mdns (join one) "
            "or --listen on a fixed port (wait to be reached: a run's network.bootstrap names it)"
        )
    if admission is None and admission_key is None:
        admission_key = _admission_key_from_env(_run_spec(run_event) if run_event else None)
    return PeerConfig(
        role=role,
        identity=identity,
        run_event=run_event,
        admission=admission,
        admission_key=admission_key,
        strategy=strategy,
        join=tuple(join),
        mdns=mdns,
        listen=listen,
        events=events,
        fmt=fmt,
        out=out,
        preload=_read_preload(preload),
        json_status=json_status,
        cache=cache,
        model_url=model_url,
    )


def _fixed_port(listen: str) -> bool:
    try:
        return parse_listen(listen).port != 0
    except ValueError:
        return False


def _read_preload(paths: Sequence[Path]) -> tuple[Event, ...]:
    """The events of every ``--preload`` log, each once (a restarted peer's own log repeats the
    resumed run's preload it started from)."""
    events: dict[str, Event] = {}
    for path in paths:
        for event in read_event_log(path).events:
            events.setdefault(event.id, event)
    return tuple(events.values())


def run_configs(main: Callable[[T], Awaitable[None]], arg: T) -> None:
    """Run ``main(arg)`` (one peer, or a group) under trio and raise what stopped it as one of the
    project's errors (or the OSError of a file it could not read or write)."""
    worker.prepare()  # the model's thread first in the CPU queue, every peer's networking after it
    try:
        trio.run(main, arg)
    except KeyboardInterrupt:  # pragma: no cover - signal arrived before trio installed handlers
        raise InterruptedRunError() from None
    except BaseExceptionGroup as group:  # trio's nurseries wrap what the node and transport raise
        error = _sole(group)
        if isinstance(error, trio.TooSlowError):  # the node's learn_run timed out
            raise TransportError(NO_RUN) from None
        if isinstance(error, KeyboardInterrupt):  # pragma: no cover - as above
            raise InterruptedRunError() from None
        if isinstance(error, SpecSwarmError | OSError):  # the CLI says either in one line
            raise error from None
        raise


def _sole(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception nested in ``group`` (the group itself when it holds several)."""
    inner: BaseException = group
    while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
        inner = inner.exceptions[0]
    return group if isinstance(inner, BaseExceptionGroup) else inner


async def _main(config: PeerConfig) -> None:
    """Run the peer of ``config`` until a signal, its launcher gone (:mod:`.lifeline`) or, for a
    human-run observer, convergence."""
    await run_stoppable(lambda: serve(config), by_hand=not config.json_status)


async def serve(config: PeerConfig) -> None:
    """Run the peer of ``config`` with its own libp2p host until cancelled (a human-run
    observer: until the plan is complete). Signals are the caller's."""
    from specswarm.transport.p2p import open_libp2p_transport

    sink = EventLogFile.open(config.events) if config.events else None
    try:
        transport_cm = open_libp2p_transport(
            config.identity.seed, config.listen, bootstrap=list(config.join), mdns=config.mdns
        )
        async with transport_cm as transport, trio.open_nursery() as nursery:
            node = _node(config, transport, sink)
            if not config.json_status:
                for addr in transport.addrs():
                    print(
                        f"{config.role} {short_id(config.identity.peer_id)} listening on {addr}",
                        file=sys.stderr,
                    )
            # a peer with no --join or --mdns waits until a run's peers dial it (their bootstrap)
            waits = config.run_event is None and not config.join and not config.mdns
            await nursery.start(functools.partial(node.run, learn_timeout=math.inf if waits else 60))
            if config.renders:
                from specswarm.swarm.observe import observe_until_complete

                await observe_until_complete(node, config.fmt, config.out)
            else:
                await trio.sleep_forever()
            nursery.cancel_scope.cancel()
    finally:
        if sink is not None:
            sink.close()


def _node(config: PeerConfig, transport: Transport, sink: IO[str] | None) -> Node:
    return Node(
        transport,
        config.identity,
        None,
        role_name=config.role,
        run_event=config.run_event,
        admission=config.admission,
        admission_key=config.admission_key,
        role_factory=role_factory(config.role, config.strategy, config.cache, config.model_url),
        strategy=config.strategy,
        preload=config.preload,
        sink=sink,
        on_status=StatusPrinter(config.role, config.json_status),
    )


def _run_spec(run_event: Event) -> GoalSpec:
    assert isinstance(run_event.body, RunBody)
    return run_event.body.spec


def _admission_key_from_env(spec: GoalSpec | None) -> Identity | None:
    """The admission key derived from the run's secret (its ``access.secret_env``, else the
    default variable), if one is set."""
    default = AccessSettings().secret_env
    env = spec.access.secret_env if spec else default
    secret = os.environ.get(env) or os.environ.get(default)
    return Identity.from_secret(secret, "admission") if secret else None


def _load_run_file(path: Path) -> Event:
    event, reason = check_event(path.read_text(encoding="utf-8"))
    if event is None or event.kind != "run":
        raise SpecSwarmError(f"{path}: not a valid run event ({reason or 'wrong kind'})")
    return event


def _run_from_spec(spec_path: Path, identity: Identity) -> tuple[Event, Identity | None, Path | None]:
    """A new run of the spec at ``spec_path``, started by this (standalone) peer: its run event,
    its admission key, and the spec's answer cache (a local setting, not in the run event)."""
    from specswarm.spec import load_spec

    spec = load_spec(spec_path)
    key = None
    if spec.access.mode == "secret":
        key = _admission_key_from_env(spec)
        if key is None:
            raise SpecSwarmError(
                f"{spec_path}: access.mode is 'secret' but ${spec.access.secret_env} is not set"
            )
    elif spec.access.mode == "launcher":
        spec = dataclasses.replace(spec, access=dataclasses.replace(spec.access, mode="open"))
        print(
            "note: a standalone peer has no launcher: this swarm is open to any peer that joins "
            "(use access.mode secret or allowlist to restrict it)",
            file=sys.stderr,
        )
    run = make_run_event(
        identity,
        spec,
        admission=key.public_key.hex() if key else None,
        nonce=f"{identity.peer_id}-{time.time_ns()}",
    )
    return run, key, spec.cache
