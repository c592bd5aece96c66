"""Gossip on our one topic over py-libp2p's GossipSub.

:class:`Gossip` installs our validator as the topic validator, drains the
library's small subscription buffer at once into a large channel, and paces
publishing: a token bucket plus a wait while any peer's 32-entry outbound queue
is filling up, so a burst is delayed rather than silently lost (see
``docs/LIBP2P.md``).
"""

from __future__ import annotations

import trio
from libp2p.abc import ISubscriptionAPI
from libp2p.peer.id import ID
from libp2p.pubsub.gossipsub import GossipSub
from libp2p.pubsub.pb import rpc_pb2
from libp2p.pubsub.pubsub import Pubsub

from specswarm.errors import TransportError
from specswarm.transport._config import P2PConfig
from specswarm.transport._libp2p import log
from specswarm.transport.base import TransportStats, Validator


class Gossip:
    """Our topic on one host's Pubsub/GossipSub: validation, delivery and the paced publisher."""

    def __init__(
        self, local_id: str, pubsub: Pubsub, gossipsub: GossipSub, config: P2PConfig, stats: TransportStats
    ) -> None:
        self.topic: str | None = None
        """The topic we joined; None before :meth:`subscribe`."""
        self.validator: Validator | None = None
        """The node's check of every gossip message from another peer."""
        self._local_id = local_id
        self._pubsub = pubsub
        self._gossipsub = gossipsub
        self._config = config
        self._stats = stats
        self._incoming_send, self.incoming = trio.open_memory_channel[tuple[str, bytes]](config.incoming_size)
        self._outbox_send, self._outbox = trio.open_memory_channel[bytes](config.outbox_size)

    async def publish(self, data: bytes) -> None:
        """Queue ``data`` for the paced publisher; blocks only when the outbox is full."""
        if self.topic is None:
            raise TransportError("cannot publish before subscribing to a topic")
        await self._outbox_send.send(bytes(data))

    async def subscribe(self, topic: str, nursery: trio.Nursery) -> None:
        """Join ``topic`` (once) and drain its subscription in ``nursery``."""
        if topic in self._pubsub.topic_ids:
            self.topic = topic
            return
        self._pubsub.set_topic_validator(topic, self._validate, False)
        subscription = await self._pubsub.subscribe(topic)
        self.topic = topic
        nursery.start_soon(self._drain, subscription)

    def close_incoming(self) -> None:
        """End :attr:`incoming` for its reader (the transport is closing)."""
        self._incoming_send.close()

    def mesh_size(self) -> int:
        """How many peers are in our GossipSub mesh for the topic."""
        if self.topic is None:
            return 0
        return len(self._gossipsub.mesh.get(self.topic, ()))

    def mesh_peers(self) -> list[str]:
        """Peers in our GossipSub mesh for the topic."""
        if self.topic is None:
            return []
        return sorted(p.to_base58() for p in self._gossipsub.mesh.get(self.topic, ()))

    def topic_peers(self) -> list[str]:
        """Connected peers subscribed to our topic."""
        if self.topic is None:
            return []
        return sorted(p.to_base58() for p in self._pubsub.peer_topics.get(self.topic, ()))

    async def run_publisher(self) -> None:
        """Publish the outbox, paced by a token bucket and the peers' outbound queues."""
        config = self._config
        tokens = float(config.publish_burst)
        last = trio.current_time()
        async for data in self._outbox:
            now = trio.current_time()
            tokens = min(config.publish_burst, tokens + (now - last) * config.publish_rate)
            last = now
            if tokens < 1:
                await trio.sleep((1 - tokens) / config.publish_rate)
                tokens, last = 1.0, trio.current_time()
            tokens -= 1
            await self._wait_for_queues()
            assert self.topic is not None
            await self._pubsub.publish(self.topic, data)
            self._stats.published += 1
            self._stats.bytes_out += len(data)

    async def _wait_for_queues(self) -> None:
        limit = self._config.queue_high_water
        with trio.move_on_after(self._config.queue_wait_max):
            while any(len(q) >= limit for q in list(self._pubsub.peer_queues.values())):
                await trio.sleep(0.002)

    def _validate(self, forwarder: ID, msg: rpc_pb2.Message) -> bool:
        origin = ID(msg.from_id).to_base58()
        if origin == self._local_id or self.validator is None:
            # Our own publishes were checked by whoever made them; a rejection
            # here would drop them silently.
            return True
        try:
            ok = bool(self.validator(origin, bytes(msg.data)))
        except Exception:
            log.debug("validator raised on a message from %s", origin, exc_info=True)
            ok = False
        if not ok:
            self._stats.dropped_invalid += 1
        return ok

    async def _drain(self, subscription: ISubscriptionAPI) -> None:
        while True:
            msg = await subscription.get()
            origin = ID(msg.from_id).to_base58()
            if origin == self._local_id:
                continue  # the library delivers our own publishes to our subscription too
            data = bytes(msg.data)
            try:
                self._incoming_send.send_nowait((origin, data))
            except trio.WouldBlock:
                self._stats.dropped_overflow += 1
                continue
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                return
            self._stats.received += 1
            self._stats.bytes_in += len(data)
