"""The spec's ``network`` and ``access`` settings, as a launched run applies them.

- ``network.listen`` (``/ip4/HOST/tcp/PORT``): every launched peer listens on HOST, on a port
  of its own. PORT 0 gives each a free port; a fixed PORT is the first of as many consecutive
  ports as there are peers (PORT to PORT+n-1: one firewall rule opens them all). A wildcard
  HOST (``0.0.0.0``, ``::``) listens on every interface: the launched peers dial each other on
  loopback and tell other peers their interface addresses.
- ``network.bootstrap``: every launched peer also dials these peers (retried until they
  answer), so the run joins peers started before it.
- ``network.mdns``: every launched peer also finds peers on the LAN with mDNS.
- ``access.mode`` decides whose events count besides the launched peers' (the run event says
  it): ``launcher`` (nobody else: an outside peer can still watch), ``open`` (anybody: the run
  event has no admission key), ``secret`` (peers holding the secret in ``access.secret_env``:
  the launcher's admission key is derived from it, as theirs is) and ``allowlist`` (the peer
  ids of ``access.peers``; the launcher adds its own peers' ids to the run event's list).

:func:`check_network` refuses, before any peer starts, a listen address this machine does not
have, fixed ports that are taken, and a secret run without its secret; :func:`start_lines` are
what ``plan`` prints so that a peer elsewhere can observe or join the run.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Mapping

from specswarm.errors import SpecError
from specswarm.ports import free_port as free_port
from specswarm.protocol.identity import Identity
from specswarm.spec import GoalSpec
from specswarm.spec.addresses import ListenAddr, parse_listen

FAMILIES = {"ip4": socket.AF_INET, "ip6": socket.AF_INET6}


def listen_of(spec: GoalSpec) -> ListenAddr:
    """The spec's ``network.listen``, parsed (a SpecError naming the field if it is not one)."""
    try:
        return parse_listen(spec.network.listen)
    except ValueError as exc:
        raise SpecError([spec.problem("network.listen", str(exc))]) from None


def listen_ports(listen: ListenAddr, n: int) -> list[int]:
    """One port per peer: free ones for port 0, else ``port`` .. ``port + n - 1``."""
    if listen.port == 0:
        return [free_port(listen.host) for _ in range(n)]
    return list(range(listen.port, listen.port + n))


def _bind_problem(listen: ListenAddr, port: int) -> str | None:
    """Why ``listen.host``:``port`` cannot be listened on now (None: it can). SO_REUSEADDR, as the
    peers' listeners have: a port left in TIME_WAIT counts as free."""
    with socket.socket(FAMILIES[listen.proto], socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((listen.host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def network_problems(spec: GoalSpec, peers: int) -> list[tuple[str, str]]:
    """(field, problem) for each of the spec's network and access settings that a launch of
    ``peers`` peers cannot use on this machine, now."""
    listen = listen_of(spec)
    problems: list[tuple[str, str]] = []
    why = _bind_problem(listen, 0)
    if why is not None:
        problems.append(
            (
                "network.listen",
                f"cannot listen on {listen.host} here: {why} (expected an address of this "
                "machine, 0.0.0.0 for every interface, or 127.0.0.1)",
            )
        )
    elif listen.port:
        problem = _ports_problem(listen, peers)
        if problem:
            problems.append(("network.listen", problem))
    if spec.access.mode == "secret" and not os.environ.get(spec.access.secret_env):
        problems.append(
            (
                "access.mode",
                f"'secret' needs the run's secret in ${spec.access.secret_env}, which is not set "
                "(expected the shared secret in the environment of `plan`)",
            )
        )
    return problems


def _ports_problem(listen: ListenAddr, peers: int) -> str | None:
    """What keeps ``peers`` consecutive ports from ``listen.port`` from being listened on."""
    last = listen.port + peers - 1
    span = f"ports {listen.port}-{last} (one per peer, {peers} peers)"
    if last > 65535:
        return f"{span} go past 65535 (expected a port up to {65536 - peers})"
    for port in range(listen.port, last + 1):
        why = _bind_problem(listen, port)
        if why is not None:
            return (
                f"{span}: {port} is taken: {why} (expected {peers} free ports from {listen.port}, or port 0)"
            )
    return None


def check_network(spec: GoalSpec, peers: int) -> None:
    """Before any peer starts: the listen address is this machine's, fixed ports are free, a
    secret run has its secret. A SpecError, one located line per problem (exit 2)."""
    problems = [spec.problem(at, message) for at, message in network_problems(spec, peers)]
    if problems:
        raise SpecError(problems)


# --------------------------------------------------------------------------- admission


def admission_key(spec: GoalSpec, env: Mapping[str, str] | None = None) -> Identity:
    """The key that signs the launched peers' admissions: derived from the secret in a secret
    run (so that a peer holding it derives the same), else a new one."""
    env = os.environ if env is None else env
    if spec.access.mode == "secret":
        return Identity.from_secret(env[spec.access.secret_env], "admission")
    return Identity.generate()


def admission_field(spec: GoalSpec, key: Identity) -> str | None:
    """The run event's admission key (hex); None in an open run: every join counts."""
    return None if spec.access.mode == "open" else key.public_key.hex()


def seat_keys(spec: GoalSpec) -> dict[str, Identity]:
    """The launched peers' keys, made before the run event when it must list them (allowlist)."""
    if spec.access.mode != "allowlist":
        return {}
    return {seat.name: Identity.generate() for seat in spec.roster()}


def listed(spec: GoalSpec, seats: Mapping[str, Identity]) -> GoalSpec:
    """``spec`` as the run event holds it: in an allowlist run, its ``access.peers`` followed by
    the launched peers' ids (sorted) that it does not list."""
    if spec.access.mode != "allowlist":
        return spec
    own = sorted({i.peer_id for i in seats.values()} - set(spec.access.peers))
    access = dataclasses.replace(spec.access, peers=(*spec.access.peers, *own))
    return dataclasses.replace(spec, access=access)


# --------------------------------------------------------------------------- what plan prints


def reachable_hosts(listen: ListenAddr) -> list[str]:
    """The addresses a peer elsewhere reaches the launched peers at: the listen address, or for
    a wildcard this machine's interface addresses (loopback when it has no other)."""
    if not listen.wildcard:
        return [listen.host]
    from specswarm.transport.addrs import interface_hosts

    return interface_hosts(listen.proto) or [listen.local_host]


def start_lines(spec: GoalSpec, listen: ListenAddr, port: int, peer_id: str) -> list[str]:
    """How to observe the run, and (when ``access.mode`` lets outside peers take part) to join
    it, through the peer listening on ``port`` (``peer_id``)."""
    addrs = [f"{listen.multiaddr(port, host)}/p2p/{peer_id}" for host in reachable_hosts(listen)]
    lines = [f"observe with: specswarm observe --join {addrs[0]}"]
    join = f"specswarm peer --role ROLE --join {addrs[0]}"
    mode = spec.access.mode
    if mode == "open":
        lines.append(f"join with: {join}")
    elif mode == "secret":
        lines.append(f"join with: SPECSWARM_SECRET=<the run's secret> {join}")
    elif mode == "allowlist":
        lines.append(f"join with: {join} --key KEY (a peer id listed in access.peers)")
    else:
        lines.append("only the launched peers take part (access.mode launcher); others may observe")
    if len(addrs) > 1:
        lines.append("also reachable at: " + ", ".join(a.rsplit("/p2p/", 1)[0] for a in addrs[1:]))
    return lines
