"""One peer process: ``specswarm peer`` / ``specswarm observe`` (and what ``specswarm plan`` spawns).

Builds the identity, the libp2p transport, the node and its role; stops cleanly
on SIGINT/SIGTERM (exit 0, no traceback, the event log flushed line by line). A peer
restarted with ``--preload`` of its own ``--events`` log resumes from it: it holds what it
published before (no second join, vote or claim) and appends only events new to the log.
An error that would stop it again on a restart (one whose ``exit_code`` is
:data:`DETERMINISTIC_EXIT`, such as a prompt template that fails on a task's data) ends the
process with that code and its message as the last line of stderr; the launcher reads both.
:func:`run_peer_cli` turns the command line into a :class:`PeerConfig` and runs
:func:`_main` with it; it raises the project's errors (the CLI turns them into exit
codes and text): TransportError when the network fails or no peer tells the run,
InterruptedRunError (with no message) when Ctrl-C stops a peer run by hand.

Environment overrides (for tests, benchmarks and demos, never needed otherwise):
``SPECSWARM_MODEL_BACKEND`` (gpt4all | replay | scripted | llama | openai) and
``SPECSWARM_MODEL_CASSETTE`` replace the model backend and cassette (of every role);
``SPECSWARM_MODEL_SHARED`` (0 or 1) replaces ``model.shared``. A peer given ``--model-url``
asks that model service (token in ``SPECSWARM_MODEL_TOKEN``) instead of loading a model.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import trio

from specswarm.errors import InterruptedRunError, SpecSwarmError, TransportError
from specswarm.model import worker
from specswarm.protocol.bodies import RunBody
from specswarm.protocol.events import Event, check_event, make_run_event, read_event_log
from specswarm.protocol.identity import Identity, short_id
from specswarm.spec import AccessSettings, GoalSpec, ModelSettings
from specswarm.swarm.node import Node
from specswarm.swarm.roles.base import ModelRole
from specswarm.transport.base import Transport

log = logging.getLogger("specswarm.peer")

NO_RUN = "no peer answered with the run's spec (is --join right?)"
DETERMINISTIC_EXIT = 2
"""The exit code of a peer stopped by an error a restart would meet again (a spec or template
problem; every error whose class states this ``exit_code``): the launcher restarts a peer that
died of anything else, but stops the run when one exits with this."""


@dataclass(frozen=True)
class PeerConfig:
    """Everything one peer process runs with (built by :func:`run_peer_cli`)."""

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
    return settings


def role_factory(role: str, strategy: str | None, model_url: str | None = None) -> Callable[..., Any]:
    """What the node calls with the run's spec once it knows the run: the role object."""

    def build(spec: GoalSpec) -> ModelRole | None:
        from specswarm.model import load_model
        from specswarm.swarm.roles import make_role

        settings = model_settings(spec, role)
        if model_url:
            from specswarm.model.service import service_client

            return make_role(role, spec, lambda: service_client(settings, model_url), strategy)
        return make_role(role, spec, lambda: load_model(settings), strategy)

    return build


def run_peer_cli(
    *,
    role: str,
    spec: Path | None,
    join: list[str],
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
    model_url: str | None = None,
) -> None:
    """Run one peer until it is stopped (observers started by ``observe`` stop once converged)."""
    logging.basicConfig(
        level=os.environ.get("SPECSWARM_LOG", "WARNING"),
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        force=True,
    )
    identity = Identity.load_or_create(key) if key else Identity.generate()
    run_event: Event | None = None
    admission_key: Identity | None = None
    if run_file is not None:
        run_event = _load_run_file(run_file)
    elif spec is not None:
        run_event, admission_key = _run_from_spec(spec, identity)
    elif not join and not mdns:
        raise SpecSwarmError("a peer needs --spec SPEC (start a run) or --join MULTIADDR / --mdns (join one)")
    if admission is None and admission_key is None:
        admission_key = _admission_key_from_env(_run_spec(run_event) if run_event else None)
    config = PeerConfig(
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
        model_url=model_url,
    )
    _run(config)


def _read_preload(paths: Sequence[Path]) -> tuple[Event, ...]:
    """The events of every ``--preload`` log, each once (a restarted peer's own log repeats the
    resumed run's preload it started from)."""
    events: dict[str, Event] = {}
    for path in paths:
        for event in read_event_log(path).events:
            events.setdefault(event.id, event)
    return tuple(events.values())


def _run(config: PeerConfig) -> None:
    """Run :func:`_main` under trio and raise what stopped it as one of the project's errors."""
    worker.prepare()  # the model's thread first in the CPU queue, every peer's networking after it
    try:
        trio.run(_main, config)
    except KeyboardInterrupt:  # pragma: no cover - signal arrived before trio installed handlers
        raise InterruptedRunError() from None
    except BaseExceptionGroup as group:  # trio's nurseries wrap what the node and transport raise
        error = _sole(group)
        if isinstance(error, trio.TooSlowError):  # the node's learn_run timed out
            raise TransportError(NO_RUN) from None
        if isinstance(error, KeyboardInterrupt):  # pragma: no cover - as above
            raise InterruptedRunError() from None
        if isinstance(error, SpecSwarmError):
            raise error from None
        raise


def _sole(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception nested in ``group`` (the group itself when it holds several)."""
    inner: BaseException = group
    while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
        inner = inner.exceptions[0]
    return group if isinstance(inner, BaseExceptionGroup) else inner


async def _main(config: PeerConfig) -> None:
    """Run the peer of ``config`` until a signal (or, for a human-run observer, convergence)."""
    from specswarm.transport.p2p import open_libp2p_transport

    sink = EventLogFile.open(config.events) if config.events else None
    interrupted = False
    try:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:

                async def stop_on_signal() -> None:
                    nonlocal interrupted
                    async for signum in signals:
                        interrupted = signum == signal.SIGINT and not config.json_status
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(stop_on_signal)
                transport_cm = open_libp2p_transport(
                    config.identity.seed, config.listen, bootstrap=list(config.join), mdns=config.mdns
                )
                async with transport_cm as transport:
                    node = _node(config, transport, sink)
                    if not config.json_status:
                        for addr in transport.addrs():
                            print(
                                f"{config.role} {short_id(config.identity.peer_id)} listening on {addr}",
                                file=sys.stderr,
                            )
                    await nursery.start(node.run)
                    if config.renders:
                        await _observe_until_complete(node, config.fmt, config.out)
                        nursery.cancel_scope.cancel()
                    else:
                        await trio.sleep_forever()
    finally:
        if sink is not None:
            sink.close()
    if interrupted:
        raise InterruptedRunError()


def _node(config: PeerConfig, transport: Transport, sink: IO[str] | None) -> Node:
    return Node(
        transport,
        config.identity,
        None,
        role_name=config.role,
        run_event=config.run_event,
        admission=config.admission,
        admission_key=config.admission_key,
        role_factory=role_factory(config.role, config.strategy, config.model_url),
        strategy=config.strategy,
        preload=config.preload,
        sink=sink,
        on_status=_StatusPrinter(config.role, config.json_status),
    )


async def _observe_until_complete(node: Node, fmt: str, out: Path | None) -> None:
    from specswarm.render import render_plan, write_output
    from specswarm.render.tree import tree_text

    last = None
    while True:
        plan = node.plan()
        if plan.digest != last:
            last = plan.digest
            print(tree_text(plan), file=sys.stderr, flush=True)
        if plan.complete:
            write_output(render_plan(plan, fmt), out)
            if out:
                print(f"wrote {out}", file=sys.stderr)
            return
        await node.wait_changed(2.0)


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


def _run_from_spec(spec_path: Path, identity: Identity) -> tuple[Event, Identity | None]:
    """A new run of the spec at ``spec_path``, started by this (standalone) peer."""
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
    return run, key


class EventLogFile(io.TextIOWrapper):
    """A peer's ``--events`` log, opened to append: a line it already holds is not written again
    (a restarted peer preloads its own log, and the store writes every event it applies)."""

    held: set[str]

    @classmethod
    def open(cls, path: Path) -> EventLogFile:
        held: set[str] = set()
        if path.exists():
            data = path.read_bytes()
            end = data.rfind(b"\n") + 1
            if end < len(data):  # a line cut short by a kill mid-write was never sent: drop it
                with open(path, "r+b") as fh:
                    fh.truncate(end)
            held = {line.decode("utf-8", "replace") for line in data[:end].splitlines()}
        log = cls(open(path, "ab"), encoding="utf-8")
        log.held = held
        return log

    def write(self, text: str) -> int:
        if self.held and text.rstrip("\n") in self.held:
            return 0
        return super().write(text)


class _StatusPrinter:
    """Status lines: JSON for the launcher (``--json-status``), a short human line otherwise."""

    def __init__(self, role: str, json_status: bool) -> None:
        self.role = role
        self.json = json_status
        self.last_human = 0.0

    def __call__(self, status: Mapping[str, Any]) -> None:
        if self.json:
            sys.stdout.write(json.dumps(status, separators=(",", ":")) + "\n")
            sys.stdout.flush()
            return
        now = time.monotonic()
        if self.role == "observer" or now - self.last_human < 2:
            return
        self.last_human = now
        p = status["progress"]
        print(
            f"[{self.role} {short_id(status['peer'])}] peers {status['peers']} events {status['events']} "
            f"nodes {p['nodes']} leaves {p['done']}/{p['leaves']} done"
            + (" — plan complete" if status["complete"] else ""),
            file=sys.stderr,
            flush=True,
        )
