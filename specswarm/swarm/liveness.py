"""Whether a peer looks gone: when each peer was last heard from, however it reached us.

In a swarm larger than the mesh degree most peers are *not* directly connected to us, so a
missing connection says nothing. What counts is what we have heard: an announcement or an
event the peer signed, relayed to us through the gossip mesh; a request it made of us; an
answer it gave us. A direct connection counts too. Times are trio's clock
(:func:`trio.current_time`), so a simulation under a virtual clock ages peers in its own time.
"""

from __future__ import annotations

import trio

from specswarm.transport.base import Transport


class Liveness:
    """Last contact with each peer: announcements and events relayed through the mesh, requests
    served, answers received, and direct connections."""

    def __init__(self, peer_id: str, transport: Transport) -> None:
        self.peer_id = peer_id
        self.transport = transport
        self.last_heard: dict[str, float] = {}
        """Peer id -> :func:`trio.current_time` of our last contact with it."""

    def heard(self, peer: str, now: float | None = None) -> None:
        """``peer`` spoke (an announcement, an event it signed, a request, an answer) at ``now``
        (default: the current time)."""
        self.last_heard[peer] = trio.current_time() if now is None else now

    def see_connected(self, now: float) -> None:
        """Every peer connected to us now is alive at ``now``."""
        for peer in self.transport.peers():
            self.last_heard[peer] = now

    def peer_gone(self, peer: str, since: float, grace: float) -> bool:
        """Whether ``peer`` looks gone: not connected to us, and not heard from for ``grace``
        seconds, counting from ``since`` at most. Not being connected is no evidence: in a large
        swarm most live peers reach us only through the mesh."""
        if peer == self.peer_id:
            return False
        now = trio.current_time()
        if peer in self.transport.peers():
            self.last_heard[peer] = now
            return False
        return now - max(self.last_heard.get(peer, since), since) > grace
