"""This machine's interface addresses, and a wildcard listen address made dialable.

A host listening on ``/ip4/0.0.0.0/tcp/P`` is reachable at every interface's address, but
py-libp2p reports the wildcard itself, which no other machine can dial. :func:`dialable`
turns such an address into one per interface address (loopback left out, unless it is the
only one), which is what a peer tells others it can be reached at.
"""

from __future__ import annotations

import time

REFRESH = 10.0
"""Seconds the interface addresses are reused before they are read again."""
_WILDCARDS = {"ip4": "0.0.0.0", "ip6": "::"}
_LOOPBACK = {"ip4": "127.0.0.1", "ip6": "::1"}
_read: dict[str, tuple[float, list[str]]] = {}


def interface_hosts(proto: str) -> list[str]:
    """The ``ip4`` or ``ip6`` addresses of this machine's interfaces, loopback and link-local
    addresses left out (read at most every :data:`REFRESH` seconds)."""
    now = time.monotonic()
    held = _read.get(proto)
    if held is None or now - held[0] > REFRESH:
        from multiaddr.utils import get_network_addrs

        held = (now, list(get_network_addrs(4 if proto == "ip4" else 6)))
        _read[proto] = held
    return list(held[1])


def expand(addr: str, hosts: list[str]) -> list[str]:
    """``addr`` (``/PROTO/HOST/...``) with a wildcard HOST replaced by each of ``hosts`` (by
    loopback when there are none); any other address as it is."""
    parts = addr.split("/")
    if len(parts) < 3 or _WILDCARDS.get(parts[1]) != parts[2]:
        return [addr]
    tail = "/".join(parts[3:])
    return [f"/{parts[1]}/{host}/{tail}" for host in hosts or [_LOOPBACK[parts[1]]]]


def dialable(addr: str) -> list[str]:
    """What ``addr`` (one of a host's listen addresses) can be dialled at."""
    parts = addr.split("/")
    if len(parts) < 3 or _WILDCARDS.get(parts[1]) != parts[2]:
        return [addr]
    return expand(addr, interface_hosts(parts[1]))
