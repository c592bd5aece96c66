"""Thin typed access to a py-libp2p host and its streams, shared by the runtime helpers."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import cast

from libp2p.abc import IHost, INetStream
from libp2p.network.stream.exceptions import StreamEOF
from libp2p.network.swarm import Swarm
from libp2p.peer.id import ID

from specswarm.transport.addrs import dialable

log = logging.getLogger("specswarm.transport.p2p")
"""One logger for the whole libp2p transport, named after its public module."""


def connected_peers(host: IHost) -> list[str]:
    """Base58 ids of the peers with an open connection, sorted."""
    return sorted(p.to_base58() for p in host.get_connected_peers())


def own_addrs(host: IHost) -> list[str]:
    """The host's listen multiaddrs, each ending in ``/p2p/<its id>``; one listening on every
    interface (``0.0.0.0``) as one address per interface (what other machines can dial)."""
    return [a for addr in host.get_addrs() for a in dialable(str(addr))]


def unblock_peer(host: IHost, peer: ID) -> None:
    """Evict ``peer`` from py-libp2p's negative dial cache: our own retry schedule decides."""
    cast(Swarm, host.get_network()).unblock_peer(peer)


def remote_peer(stream: INetStream) -> str:
    """Base58 id of the peer at the other end of ``stream``."""
    return stream.muxed_conn.peer_id.to_base58()


def stream_reader(stream: INetStream) -> Callable[[int], Awaitable[bytes]]:
    """``read(n)`` for :func:`~specswarm.transport._frames.read_frame`: b"" at end of stream."""

    async def read(n: int) -> bytes:
        try:
            return bytes(await stream.read(n))
        except StreamEOF:
            return b""

    return read
