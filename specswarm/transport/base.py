"""The transport contract: opaque bytes in, opaque bytes out.

A transport gossips byte strings on one topic per run, serves and makes
request/response calls (anti-entropy pulls), and counts what it does. It knows
nothing of events or plans; the only hook into their meaning is the validator,
which the node installs and which every implementation must call on each
gossip message before delivering (and, for libp2p, before forwarding) it.

Two implementations share this contract:

- :mod:`specswarm.transport.memory` — an in-process hub for fast role tests,
  with seeded loss, delay, duplication and partitions;
- :mod:`specswarm.transport.p2p` — the real thing, on py-libp2p.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Protocol, runtime_checkable

import trio

RequestHandler = Callable[[str, bytes], Awaitable[bytes]]
"""Serves one request: ``(requesting peer id, request bytes) -> response bytes``."""

Validator = Callable[[str, bytes], bool]
"""Judges one gossip message: ``(originating peer id, data) -> accept?``."""


@dataclass
class TransportStats:
    """Counters of one transport; they only ever grow."""

    published: int = 0
    """Gossip messages we handed to the network."""
    received: int = 0
    """Gossip messages delivered to :meth:`Transport.incoming` (re-deliveries included)."""
    bytes_out: int = 0
    """Payload bytes published, requested and answered."""
    bytes_in: int = 0
    """Payload bytes received by gossip, in requests we served and in responses."""
    dropped_invalid: int = 0
    """Gossip messages the validator rejected (or crashed on)."""
    dropped_overflow: int = 0
    """Gossip messages dropped because nobody drained :meth:`Transport.incoming`."""
    requests_served: int = 0
    """Requests our handler answered."""
    requests_made: int = 0
    """Requests we sent (successful or not)."""
    requests_failed: int = 0
    """Requests that raised :class:`~specswarm.errors.TransportError`; of them:"""
    requests_timed_out: int = 0
    """...those that ran out of time,"""
    requests_unopened: int = 0
    """...and those that found no way to the peer (no connection could be made, or it would
    not speak the protocol)."""
    broken_closed: int = 0
    """Connections we closed because a request found them broken (the remote had reset them)."""

    def to_json(self) -> dict[str, int]:
        """The counters as a plain dict (for logs and progress lines)."""
        return asdict(self)


@runtime_checkable
class Transport(Protocol):
    """What a node needs from the network. All methods run inside trio."""

    local_id: str
    """Our base58 libp2p peer id."""
    stats: TransportStats
    """Counters of what this transport did."""

    async def publish(self, data: bytes) -> None:
        """Gossip ``data`` on the subscribed topic (best effort; may be paced)."""
        ...

    def incoming(self) -> trio.MemoryReceiveChannel[tuple[str, bytes]]:
        """``(originating peer id, data)`` of gossip received; never our own publishes."""
        ...

    def set_request_handler(self, fn: RequestHandler) -> None:
        """Serve request/response calls with ``fn``."""
        ...

    def set_validator(self, fn: Validator) -> None:
        """Check every gossip message with ``fn`` before delivery; rejections are counted."""
        ...

    async def request(self, peer_id: str, data: bytes, timeout: float = 10) -> bytes:
        """Ask ``peer_id``; raises :class:`~specswarm.errors.TransportError` on failure."""
        ...

    def peers(self) -> list[str]:
        """Peer ids we are connected to now."""
        ...

    def addrs(self) -> list[str]:
        """Our dialable multiaddrs, each ending in ``/p2p/<local_id>``."""
        ...

    async def subscribe(self, topic: str) -> None:
        """Join ``topic``; :meth:`publish` then gossips there."""
        ...

    async def wait_for_peers(self, n: int, timeout: float) -> None:
        """Return once at least ``n`` peers are connected; TransportError after ``timeout``."""
        ...

    async def wait_for_mesh(self, timeout: float, n: int = 1) -> None:
        """Return once ``n`` peers share our topic; TransportError after ``timeout``."""
        ...
