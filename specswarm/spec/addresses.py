"""The spec's network addresses: what a listen address and a peer address may be (no I/O).

``network.listen`` is ``/ip4/ADDRESS/tcp/PORT`` or ``/ip6/ADDRESS/tcp/PORT``
(:func:`parse_listen` gives a :class:`ListenAddr`); each ``network.bootstrap`` entry is a
peer's address, ``/ip4|ip6|dns|dns4|dns6/HOST/tcp/PORT/p2p/PEER_ID``
(:func:`peer_addr_problem`). :func:`network_problems` reports both as located spec problems
when a spec file is loaded; whether the address belongs to this machine is the launcher's
question, at launch.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from specswarm.errors import SpecProblem
from specswarm.spec.wording import Where, show

LISTEN_FORM = "/ip4/ADDRESS/tcp/PORT or /ip6/ADDRESS/tcp/PORT, e.g. /ip4/0.0.0.0/tcp/4001"
PEER_FORM = "/ip4/ADDRESS/tcp/PORT/p2p/PEER_ID (or /ip6, /dns4, /dns6, /dns)"
_BASE58 = re.compile(r"[1-9A-HJ-NP-Za-km-z]+")
_DNS_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")


@dataclass(frozen=True)
class ListenAddr:
    """A parsed listen multiaddr: ``/PROTO/HOST/tcp/PORT``."""

    proto: str
    """``ip4`` or ``ip6``."""
    host: str
    """The address to listen on, as written (``0.0.0.0`` and ``::`` mean every interface)."""
    port: int
    """0: any free port."""

    @property
    def wildcard(self) -> bool:
        """Listens on every interface."""
        return ipaddress.ip_address(self.host).is_unspecified

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.host).is_loopback

    @property
    def local_host(self) -> str:
        """The address peers on this machine dial it at (loopback for a wildcard)."""
        if self.wildcard:
            return "127.0.0.1" if self.proto == "ip4" else "::1"
        return self.host

    def multiaddr(self, port: int, host: str | None = None) -> str:
        """``/PROTO/HOST/tcp/PORT`` with ``port`` (and ``host``, default its own)."""
        return f"/{self.proto}/{host or self.host}/tcp/{port}"


LOOPBACK = ListenAddr("ip4", "127.0.0.1", 0)
"""The default listen address: loopback, any port."""


def parse_listen(text: str) -> ListenAddr:
    """``/ip4/ADDRESS/tcp/PORT`` (or ``/ip6``) as a :class:`ListenAddr`; ValueError saying what
    is wrong otherwise."""
    parts = text.split("/")
    if len(parts) != 5 or parts[0] or parts[1] not in ("ip4", "ip6") or parts[3] != "tcp":
        raise ValueError(f"{show(text)} is not a listen address (expected {LISTEN_FORM})")
    proto, host, port = parts[1], parts[2], parts[4]
    try:
        version: int = ipaddress.ip_address(host).version
    except ValueError:
        version = 0
    if version != int(proto[-1]):
        raise ValueError(f"{host!r} is not an {proto} address (expected {LISTEN_FORM})")
    return ListenAddr(proto, host, _port(port, "a port from 0 (any free port) to 65535"))


def peer_addr_problem(text: str) -> str | None:
    """What is wrong with a peer address (None: nothing)."""
    parts = text.split("/")
    bad = f"{show(text)} is not a peer address (expected {PEER_FORM})"
    if len(parts) != 7 or parts[0] or parts[3] != "tcp" or parts[5] != "p2p":
        return bad
    proto, host = parts[1], parts[2]
    if proto in ("ip4", "ip6"):
        try:
            if ipaddress.ip_address(host).version != int(proto[-1]):
                return bad
        except ValueError:
            return bad
    elif proto not in ("dns", "dns4", "dns6") or not _DNS_NAME.fullmatch(host):
        return bad
    try:
        if _port(parts[4], "") == 0:
            return f"{show(text)}: port 0 cannot be dialled (expected the port the peer listens on)"
    except ValueError:
        return bad
    if not _BASE58.fullmatch(parts[6]):
        return f"{show(text)}: {parts[6]!r} is not a peer id (expected base58, e.g. 12D3KooW...)"
    return None


def _port(text: str, expected: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise ValueError(f"port {text!r} is not a TCP port (expected {expected})")
    return int(text)


def network_problems(data: Mapping[str, Any], where: Where) -> list[SpecProblem]:
    """``network.listen`` and ``network.bootstrap`` entries that are not addresses of their kind."""
    network = data.get("network")
    if not isinstance(network, Mapping):
        return []
    problems: list[SpecProblem] = []
    listen = network.get("listen")
    if isinstance(listen, str) and listen:
        try:
            parse_listen(listen)
        except ValueError as exc:
            problems.append(where.at(("network", "listen"), str(exc)))
    bootstrap = network.get("bootstrap")
    for index, addr in enumerate(bootstrap if isinstance(bootstrap, list) else []):
        problem = peer_addr_problem(addr) if isinstance(addr, str) and addr else None
        if problem:
            problems.append(where.at(("network", "bootstrap", index), problem))
    return problems
