"""Whether a peer looks gone: when each peer was last connected to us or heard from."""

from __future__ import annotations

import time

from specswarm.transport.base import Transport


class Liveness:
    """Last contact with each peer: a direct connection, or its announcements (relayed through
    the mesh count too)."""

    def __init__(self, peer_id: str, transport: Transport) -> None:
        self.peer_id = peer_id
        self.transport = transport
        self.last_connected: dict[str, float] = {}
        """Peer id -> :func:`time.monotonic` of our last contact with it."""

    def heard(self, peer: str, now: float) -> None:
        """``peer`` spoke to us (an announcement) at ``now``."""
        self.last_connected[peer] = now

    def see_connected(self, now: float) -> None:
        """Every peer connected to us now is alive at ``now``."""
        for peer in self.transport.peers():
            self.last_connected[peer] = now

    def peer_gone(self, peer: str, since: float, grace: float) -> bool:
        """Whether ``peer`` looks gone: not connected to us, and not heard from for ``grace``
        seconds, counting from ``since`` at most. A peer we are not directly connected to in a
        large swarm is not gone."""
        if peer == self.peer_id:
            return False
        now = time.monotonic()
        if peer in self.transport.peers():
            self.last_connected[peer] = now
            return False
        return now - max(self.last_connected.get(peer, since), since) > grace
