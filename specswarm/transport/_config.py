"""Tuning of the libp2p transport: :class:`P2PConfig` (no libp2p import here).

Why each GossipSub default is overridden is in ``docs/LIBP2P.md``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class P2PConfig:
    """Tuning of the libp2p transport. Defaults were measured on 2-core loopback."""

    heartbeat_interval: float = 1.0
    """GossipSub heartbeat (library default 120 s: meshes would form after minutes)."""
    degree: int = 6
    """GossipSub D: mesh peers per topic."""
    degree_low: int = 4
    """GossipSub D_low: graft below this."""
    degree_high: int = 12
    """GossipSub D_high: prune above this."""
    gossip_window: int = 3
    """Heartbeats of message ids advertised in IHAVE."""
    gossip_history: int = 5
    """Heartbeats of messages kept for IWANT."""
    prune_back_off: int = 5
    """Seconds before re-grafting a peer that pruned us (library default 60)."""
    publish_rate: float = 100.0
    """Token bucket: sustained publishes per second."""
    publish_burst: int = 10
    """Token bucket: publishes allowed back to back."""
    queue_high_water: int = 8
    """Hold publishes while any peer's outbound queue (32 entries) holds this many."""
    queue_wait_max: float = 2.0
    """Longest we hold one publish for a full queue before sending anyway."""
    outbox_size: int = 10_000
    """Publishes waiting for pacing before :meth:`Libp2pTransport.publish` blocks."""
    incoming_size: int = 10_000
    """Received messages held for the reader before new ones are dropped (counted)."""
    dial_timeout: float = 5.0
    """Seconds for one dial attempt."""
    redial_min: float = 0.25
    """First backoff after a failed dial."""
    redial_max: float = 30.0
    """Backoff cap for peers learned by exchange."""
    bootstrap_redial_max: float = 1.0
    """Backoff cap for bootstrap and mDNS peers (retried forever)."""
    forget_after: float = 300.0
    """Forget an exchanged peer that has failed to answer for this long."""
    dial_target: int = 10
    """Connections the dialer makes up to, not one to every known peer: GossipSub needs only
    ``degree`` mesh peers, and every connection costs both ends per message (peer records, IHAVE
    gossip, window updates). Peers keep accepting inbound connections past it, and a request to a
    peer we are not connected to still dials it. 0: dial every known peer."""
    exchange_interval: float = 5.0
    """Seconds between peer exchanges with every connected peer."""
    watch_interval: float = 0.2
    """How often the dialer looks for new connections and due redials."""
    max_frame: int = 32 * 1024 * 1024
    """Largest request or response, in bytes."""
