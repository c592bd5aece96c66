"""One peer process: ``specswarm peer`` / ``specswarm observe`` (and what ``specswarm plan`` spawns).

Builds the identity, the libp2p transport, the node and its role; stops cleanly
on SIGINT/SIGTERM (exit 0, no traceback, the event log flushed line by line).

Environment overrides (for tests, benchmarks and demos, never needed otherwise):
``SPECSWARM_MODEL_BACKEND`` (gpt4all | replay | scripted | llama) and
``SPECSWARM_MODEL_CASSETTE`` replace the spec's model backend and cassette.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import trio

from specswarm.errors import SpecSwarmError, TransportError
from specswarm.protocol.events import Event, check_event, make_run_event, read_event_log
from specswarm.protocol.identity import Identity

log = logging.getLogger("specswarm.peer")


def model_settings(spec: dict[str, Any]) -> dict[str, Any]:
    settings = dict(spec.get("model", {}))
    if os.environ.get("SPECSWARM_MODEL_BACKEND"):
        settings["backend"] = os.environ["SPECSWARM_MODEL_BACKEND"]
    if os.environ.get("SPECSWARM_MODEL_CASSETTE"):
        settings["cassette"] = os.environ["SPECSWARM_MODEL_CASSETTE"]
    return settings


def role_factory(role: str, strategy: str | None):  # type: ignore[no-untyped-def]
    def build(spec: dict[str, Any]) -> Any:
        from specswarm.model.base import load_model
        from specswarm.swarm.roles import make_role

        settings = model_settings(spec)
        return make_role(role, spec, lambda: load_model(settings), strategy)

    return build


def _admission_key_from_env(spec: dict[str, Any] | None) -> Identity | None:
    env = (spec or {}).get("access", {}).get("secret_env") or "SPECSWARM_SECRET"
    secret = os.environ.get(env) or os.environ.get("SPECSWARM_SECRET")
    return Identity.from_secret(secret, "admission") if secret else None


def _load_run_file(path: Path) -> Event:
    event, reason = check_event(path.read_text(encoding="utf-8"))
    if event is None or event.kind != "run":
        raise SpecSwarmError(f"{path}: not a valid run event ({reason or 'wrong kind'})")
    return event


def _run_from_spec(spec_path: Path, identity: Identity) -> tuple[Event, Identity | None]:
    from specswarm.spec import load_spec

    spec = load_spec(spec_path).to_json()
    mode = spec.get("access", {}).get("mode", "launcher")
    key = None
    if mode == "secret":
        key = _admission_key_from_env(spec)
        if key is None:
            raise SpecSwarmError(
                f"{spec_path}: access.mode is 'secret' but ${spec['access']['secret_env']} is not set"
            )
    elif mode == "launcher":
        spec["access"] = {**spec["access"], "mode": "open"}
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
    fmt: str | None = None,
    out: Path | None = None,
    run_file: Path | None = None,
    admission: str | None = None,
    preload: Path | None = None,
    json_status: bool = False,
) -> int:
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
        admission_key = _admission_key_from_env(run_event.body["spec"] if run_event else None)
    preloaded: list[Event] = []
    if preload is not None:
        preloaded = read_event_log(preload).events
    try:
        return trio.run(
            _main,
            role,
            identity,
            run_event,
            admission,
            admission_key,
            strategy,
            join,
            mdns,
            listen,
            events,
            fmt,
            out,
            preloaded,
            json_status,
        )
    except KeyboardInterrupt:  # pragma: no cover - signal arrived before trio installed handlers
        return 130


async def _main(
    role: str,
    identity: Identity,
    run_event: Event | None,
    admission: str | None,
    admission_key: Identity | None,
    strategy: str | None,
    join: list[str],
    mdns: bool,
    listen: str,
    events: Path | None,
    fmt: str | None,
    out: Path | None,
    preloaded: list[Event],
    json_status: bool,
) -> int:
    from specswarm.swarm.node import Node
    from specswarm.transport.p2p import open_libp2p_transport

    sink = open(events, "a", encoding="utf-8") if events else None
    exit_code = 0
    printer = _StatusPrinter(role, json_status)
    try:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:

                async def stop_on_signal() -> None:
                    nonlocal exit_code
                    async for signum in signals:
                        exit_code = 130 if signum == signal.SIGINT and not json_status else 0
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(stop_on_signal)
                transport_cm = open_libp2p_transport(identity.seed, listen, bootstrap=join, mdns=mdns)
                async with transport_cm as transport:
                    node = Node(
                        transport,
                        identity,
                        None,
                        role_name=role,
                        run_event=run_event,
                        admission=admission,
                        admission_key=admission_key,
                        role_factory=role_factory(role, strategy),
                        strategy=strategy,
                        preload=preloaded,
                        sink=sink,
                        on_status=printer,
                    )
                    printer.node = node
                    if not json_status:
                        for addr in transport.addrs():
                            print(f"{role} {identity.peer_id[-8:]} listening on {addr}", file=sys.stderr)
                    await nursery.start(node.run)
                    if role == "observer" and not json_status:
                        await _observe_until_complete(node, fmt or "markdown", out)
                        nursery.cancel_scope.cancel()
                    else:
                        await trio.sleep_forever()
    except TransportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except trio.TooSlowError:
        print("error: no peer answered with the run's spec (is --join right?)", file=sys.stderr)
        return 1
    finally:
        if sink is not None:
            sink.close()
    return exit_code


async def _observe_until_complete(node: Any, fmt: str, out: Path | None) -> None:
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


class _StatusPrinter:
    """Status lines: JSON for the launcher (``--json-status``), a short human line otherwise."""

    def __init__(self, role: str, json_status: bool) -> None:
        self.role = role
        self.json = json_status
        self.node: Any = None
        self.last_human = 0.0

    def __call__(self, status: dict[str, Any]) -> None:
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
            f"[{self.role} {status['peer'][-8:]}] peers {status['peers']} events {status['events']} "
            f"nodes {p['nodes']} leaves {p['done']}/{p['leaves']} done"
            + (" — plan complete" if status["complete"] else ""),
            file=sys.stderr,
            flush=True,
        )
