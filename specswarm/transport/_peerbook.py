"""The peers we know how to reach, and when to try each again (pure: no I/O, no clock).

Peers learn each other's addresses three ways — bootstrap addresses, the
peer-exchange protocol, mDNS — and the dialer tries known peers it is not
connected to, with exponential backoff, until it has its target of connections.
Bootstrap and mDNS peers are *sticky* (tried forever, with a short backoff cap:
the peer may start after us); peers learned by exchange are forgotten after
failing for ``forget_after`` seconds, so a dead peer is not redialled forever.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass, field


def split_p2p_addr(addr: str) -> tuple[str, str]:
    """``/ip4/1.2.3.4/tcp/5/p2p/Qm..`` -> (``/ip4/1.2.3.4/tcp/5``, ``Qm..``).

    Raises ValueError when the address names no peer id.
    """
    head, sep, peer_id = addr.rpartition("/p2p/")
    if not sep or not peer_id or "/" in peer_id:
        raise ValueError(f"address {addr!r} does not end in /p2p/<peer id>")
    return head, peer_id


@dataclass
class KnownPeer:
    """What we know about one remote peer."""

    addrs: set[str] = field(default_factory=set)
    """Transport addresses (without the ``/p2p/`` part)."""
    sticky: bool = False
    """Bootstrap or mDNS peer: never forgotten."""
    backoff: float = 0.0
    """Seconds to wait after the next failure."""
    next_try: float = 0.0
    """Earliest time (trio clock) of the next dial."""
    failing_since: float | None = None
    """When the current run of failures began; None while reachable."""


class PeerBook:
    """Known peers with their dial schedule."""

    def __init__(
        self,
        local_id: str,
        *,
        min_backoff: float = 0.25,
        max_backoff: float = 30.0,
        sticky_max_backoff: float = 2.0,
        forget_after: float = 300.0,
    ) -> None:
        self.local_id = local_id
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.sticky_max_backoff = sticky_max_backoff
        self.forget_after = forget_after
        self.peers: dict[str, KnownPeer] = {}

    def add(self, addr: str, *, sticky: bool = False, now: float = 0.0) -> str | None:
        """Learn ``addr`` (with ``/p2p/<id>``); returns the peer id, or None for ourselves."""
        head, peer_id = split_p2p_addr(addr)
        if peer_id == self.local_id:
            return None
        known = self.peers.get(peer_id)
        if known is None:
            known = self.peers[peer_id] = KnownPeer(backoff=self.min_backoff, next_try=now)
        if head:
            known.addrs.add(head)
        known.sticky = known.sticky or sticky
        return peer_id

    def due(self, connected: set[str], now: float, room: int | None = None) -> list[str]:
        """Peers to dial now: known, not connected, backoff elapsed, with an address; at most
        ``room`` of them (None: all), sticky ones first, the rest picked at random so that a
        swarm's peers do not all dial the same few."""
        due = sorted(
            peer_id
            for peer_id, known in self.peers.items()
            if peer_id not in connected and known.addrs and known.next_try <= now
        )
        if room is None or len(due) <= room:
            return due
        sticky = [p for p in due if self.peers[p].sticky]
        rest = [p for p in due if not self.peers[p].sticky]
        picked = sticky + random.sample(rest, min(len(rest), max(0, room - len(sticky))))
        return picked[: max(0, room)]

    def next_due(self, connected: set[str]) -> float | None:
        """The earliest ``next_try`` among peers we are not connected to."""
        times = [k.next_try for p, k in self.peers.items() if p not in connected and k.addrs]
        return min(times, default=None)

    def dialing(self, peer_id: str, now: float, dial_timeout: float) -> None:
        """A dial starts: do not pick this peer again before it can have ended."""
        self.peers[peer_id].next_try = now + dial_timeout

    def succeeded(self, peer_id: str) -> None:
        """A dial (or an inbound connection) worked: reset the backoff."""
        known = self.peers.get(peer_id)
        if known is not None:
            known.backoff = self.min_backoff
            known.failing_since = None

    def failed(self, peer_id: str, now: float) -> None:
        """A dial failed: back off, and forget a non-sticky peer that failed too long."""
        known = self.peers.get(peer_id)
        if known is None:
            return
        if known.failing_since is None:
            known.failing_since = now
        elif not known.sticky and now - known.failing_since >= self.forget_after:
            del self.peers[peer_id]
            return
        known.next_try = now + known.backoff
        cap = self.sticky_max_backoff if known.sticky else self.max_backoff
        known.backoff = min(known.backoff * 2, cap)

    def addr_count(self) -> int:
        """How many (peer, address) pairs are known: grows exactly when something new is learned."""
        return sum(len(k.addrs) for k in self.peers.values())

    def addrs_of(self, peer_ids: Collection[str]) -> list[str]:
        """Full ``/p2p/`` addresses of the given peers, as far as we know them."""
        return sorted(
            f"{addr}/p2p/{peer_id}"
            for peer_id in peer_ids
            if peer_id in self.peers
            for addr in self.peers[peer_id].addrs
        )
