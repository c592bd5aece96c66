"""The libp2p transport at run time: :class:`Libp2pTransport`, composed of small helpers.

- :class:`~specswarm.transport._pubsub.Gossip` — our topic on GossipSub, paced publishing;
- :class:`~specswarm.transport._reqresp.RequestResponse` — ``/specswarm/sync/1.0.0``;
- :class:`~specswarm.transport._discovery.PeerExchange` — ``/specswarm/peers/1.0.0`` and the dialer;
- :class:`~specswarm.transport._discovery.MdnsBridge` — mDNS callbacks into trio.

:func:`specswarm.transport.p2p.open_libp2p_transport` builds the host and runs it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import trio
from libp2p.abc import IHost
from libp2p.peer.peerinfo import PeerInfo
from libp2p.pubsub.gossipsub import GossipSub
from libp2p.pubsub.pubsub import Pubsub

from specswarm.errors import TransportError
from specswarm.transport._config import P2PConfig
from specswarm.transport._discovery import PEERS_PROTOCOL, MdnsBridge, PeerExchange
from specswarm.transport._libp2p import connected_peers, own_addrs
from specswarm.transport._pubsub import Gossip
from specswarm.transport._reqresp import SYNC_PROTOCOL, RequestResponse
from specswarm.transport.base import RequestHandler, TransportStats, Validator


class Libp2pTransport:
    """A :class:`~specswarm.transport.base.Transport` on one libp2p host.

    Make it with :func:`~specswarm.transport.p2p.open_libp2p_transport`; do not
    construct it directly. Constructing it registers its two stream handlers on
    ``host``.
    """

    def __init__(self, host: IHost, pubsub: Pubsub, gossipsub: GossipSub, config: P2PConfig) -> None:
        self.local_id: str = host.get_id().to_base58()
        """Our base58 peer id."""
        self.stats = TransportStats()
        """Counters of what this transport did."""
        self.config = config
        """The tuning in force."""
        self._host = host
        self._nursery: trio.Nursery | None = None
        self._gossip = Gossip(self.local_id, pubsub, gossipsub, config, self.stats)
        self._calls = RequestResponse(host, config, self.stats)
        self._exchange = PeerExchange(self.local_id, host, config, self._calls)
        self._calls.known_addrs = self._exchange.dial_addrs
        self._mdns = MdnsBridge(self._exchange)
        self._on_mdns_peer: Callable[[PeerInfo], None] = self._mdns.on_peer
        """What open_libp2p_transport registers (and unregisters) for mDNS discoveries."""
        host.set_stream_handler(SYNC_PROTOCOL, self._calls.serve_sync)
        host.set_stream_handler(PEERS_PROTOCOL, self._exchange.serve)

    # ----- Transport API ----------------------------------------------------

    async def publish(self, data: bytes) -> None:
        """Queue ``data`` for gossip on our topic; blocks only when the outbox is full."""
        await self._gossip.publish(data)

    def incoming(self) -> trio.MemoryReceiveChannel[tuple[str, bytes]]:
        """Gossip received: ``(originating peer id, data)``; never our own publishes."""
        return self._gossip.incoming

    def set_request_handler(self, fn: RequestHandler) -> None:
        """Serve ``/specswarm/sync/1.0.0`` requests with ``fn``."""
        self._calls.handler = fn

    def set_validator(self, fn: Validator) -> None:
        """Run ``fn(origin peer id, data)`` on every gossip message (topic validator)."""
        self._gossip.validator = fn

    async def request(self, peer_id: str, data: bytes, timeout: float = 10) -> bytes:
        """One request/response exchange with ``peer_id`` (dialling it if needed)."""
        return await self._calls.request(peer_id, data, timeout)

    def peers(self) -> list[str]:
        """Peer ids with an open connection."""
        return connected_peers(self._host)

    def addrs(self) -> list[str]:
        """Our listen multiaddrs, each ending in ``/p2p/<local_id>``."""
        return own_addrs(self._host)

    async def subscribe(self, topic: str) -> None:
        """Join ``topic`` (once); later publishes go there."""
        if self._nursery is None:
            raise TransportError("transport is not running")
        await self._gossip.subscribe(topic, self._nursery)

    async def wait_for_peers(self, n: int, timeout: float) -> None:
        """Return once at least ``n`` peers are connected."""
        await self._wait(lambda: len(self._host.get_connected_peers()) >= n, f"{n} peer(s)", timeout)

    async def wait_for_mesh(self, timeout: float, n: int = 1) -> None:
        """Return once at least ``n`` peers are in our GossipSub mesh for the topic."""
        await self._wait(lambda: self._gossip.mesh_size() >= n, f"{n} mesh peer(s) on our topic", timeout)

    async def wait_for_topic_peers(self, n: int, timeout: float) -> None:
        """Return once at least ``n`` connected peers announced our topic."""
        await self._wait(
            lambda: len(self.topic_peers()) >= n, f"{n} peer(s) subscribed to our topic", timeout
        )

    def topic_peers(self) -> list[str]:
        """Connected peers subscribed to our topic."""
        return self._gossip.topic_peers()

    def mesh_peers(self) -> list[str]:
        """Peers in our GossipSub mesh for the topic."""
        return self._gossip.mesh_peers()

    def add_peer_addr(self, addr: str, *, sticky: bool = True) -> None:
        """Learn a peer address (``.../p2p/<id>``) and dial it soon."""
        self._exchange.add_peer_addr(addr, sticky=sticky)

    # ----- life cycle (driven by open_libp2p_transport) ---------------------

    async def _start(self, nursery: trio.Nursery, bootstrap: Sequence[str], topic: str | None) -> None:
        """Run the dialer and the publisher in ``nursery``; dial ``bootstrap``; join ``topic``."""
        self._nursery = nursery
        self._mdns.token = trio.lowlevel.current_trio_token()
        for addr in bootstrap:
            self.add_peer_addr(addr, sticky=True)
        nursery.start_soon(self._exchange.run_dialer, nursery)
        nursery.start_soon(self._gossip.run_publisher)
        if topic is not None:
            await self.subscribe(topic)

    def _stop(self) -> None:
        """Ignore further mDNS callbacks and end :meth:`incoming` (the nursery is cancelled next)."""
        self._mdns.token = None
        self._gossip.close_incoming()

    async def _wait(self, condition: Callable[[], bool], what: str, timeout: float) -> None:
        with trio.move_on_after(timeout):
            while not condition():
                await trio.sleep(0.02)
            return
        raise TransportError(f"timed out after {timeout:g} s waiting for {what}")
