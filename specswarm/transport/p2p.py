"""The libp2p transport: the one module of specswarm that imports py-libp2p.

::

    async with open_libp2p_transport(seed, "/ip4/127.0.0.1/tcp/0", bootstrap=[addr],
                                     mdns=False, topic="specswarm/run/<id>") as t:
        await t.wait_for_mesh(timeout=10)
        await t.publish(b"...")

One host (Ed25519 key from a 32-byte seed, Noise, yamux) runs:

- **GossipSub** with every parameter that bites set explicitly
  (see ``/work/shared/LIBP2P_NOTES.md``; :class:`P2PConfig`), strict signing,
  our validator as the topic validator, and the subscription drained at once
  into a large channel;
- **paced publishing**: a token bucket plus a wait while any peer's 32-entry
  outbound queue is filling up, so a burst is delayed rather than silently lost;
- **request/response** on ``/specswarm/sync/1.0.0``: one length-prefixed request
  frame, one response frame per stream;
- **peer exchange** on ``/specswarm/peers/1.0.0``: each side sends its own
  addresses and those of the peers it is connected to, and a dialer keeps every
  known peer dialled with backoff — so the swarm is a mesh, not a star, and
  losing the first peer partitions nothing. Bootstrap addresses are retried
  until they answer;
- optional **mDNS** discovery (zeroconf), bridged from zeroconf's thread into trio.
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import libp2p
import libp2p.network.connection.swarm_connection as _swarm_connection
import multiaddr
import trio
from libp2p.crypto.ed25519 import create_new_key_pair
from libp2p.custom_types import TProtocol
from libp2p.network.stream.exceptions import StreamEOF
from libp2p.peer.id import ID
from libp2p.peer.peerinfo import PeerInfo
from libp2p.pubsub.gossipsub import PROTOCOL_ID_V11, PROTOCOL_ID_V12, GossipSub
from libp2p.pubsub.pubsub import Pubsub
from libp2p.tools.anyio_service import background_trio_service

from specswarm.errors import TransportError
from specswarm.transport._frames import encode_frame, read_frame
from specswarm.transport._peerbook import PeerBook, split_p2p_addr
from specswarm.transport._util import unwrap_single_group
from specswarm.transport.base import RequestHandler, TransportStats, Validator

SYNC_PROTOCOL = TProtocol("/specswarm/sync/1.0.0")
"""Request/response: one request frame, one response frame, per stream."""
PEERS_PROTOCOL = TProtocol("/specswarm/peers/1.0.0")
"""Peer exchange: JSON ``{"self": [addrs], "peers": [addrs]}`` both ways."""

log = logging.getLogger(__name__)


def quiet_libp2p_logging() -> None:
    """Keep libp2p's log records off the terminal at default verbosity.

    py-libp2p 0.8.1 (a) detaches its ``libp2p`` logger (no handler, no
    propagation) so its warnings reach Python's last-resort stderr handler, and
    (b) logs through the *root* logger from ``swarm_connection`` on the first
    connection, which silently runs ``logging.basicConfig()`` and so disables a
    later ``basicConfig`` of the application. We give ``libp2p`` a null handler
    (unless the user asked for its logs with ``LIBP2P_DEBUG``) and point
    ``swarm_connection``'s ``logging`` name at a proper child logger.
    """
    lib = logging.getLogger("libp2p")
    if not os.environ.get("LIBP2P_DEBUG"):
        lib.handlers[:] = [logging.NullHandler()]
        lib.setLevel(logging.CRITICAL)
        lib.propagate = False
    # The module only calls logging.debug/warning(...): a Logger has the same methods.
    _swarm_connection.logging = logging.getLogger(_swarm_connection.__name__)  # type: ignore[assignment]
    logging.getLogger("zeroconf").setLevel(logging.ERROR)
    logging.getLogger("async_service").setLevel(logging.CRITICAL)


quiet_libp2p_logging()


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
    exchange_interval: float = 5.0
    """Seconds between peer exchanges with every connected peer."""
    watch_interval: float = 0.2
    """How often the dialer looks for new connections and due redials."""
    max_frame: int = 32 * 1024 * 1024
    """Largest request or response, in bytes."""


class Libp2pTransport:
    """A :class:`~specswarm.transport.base.Transport` on one libp2p host.

    Make it with :func:`open_libp2p_transport`; do not construct it directly.
    """

    def __init__(self, host: Any, pubsub: Any, gossipsub: Any, config: P2PConfig) -> None:
        self.local_id: str = host.get_id().to_base58()
        """Our base58 peer id."""
        self.stats = TransportStats()
        """Counters of what this transport did."""
        self.config = config
        """The tuning in force."""
        self._host = host
        self._pubsub = pubsub
        self._gossipsub = gossipsub
        self._topic: str | None = None
        self._validator: Validator | None = None
        self._handler: RequestHandler | None = None
        self._incoming_send, self._incoming = trio.open_memory_channel[tuple[str, bytes]](
            config.incoming_size
        )
        self._outbox_send, self._outbox = trio.open_memory_channel[bytes](config.outbox_size)
        self._book = PeerBook(
            self.local_id,
            min_backoff=config.redial_min,
            max_backoff=config.redial_max,
            sticky_max_backoff=config.bootstrap_redial_max,
            forget_after=config.forget_after,
        )
        self._wake_dialer = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._exchanged: set[str] = set()

    # ----- Transport API ----------------------------------------------------

    async def publish(self, data: bytes) -> None:
        """Queue ``data`` for gossip on our topic; blocks only when the outbox is full."""
        if self._topic is None:
            raise TransportError("cannot publish before subscribing to a topic")
        await self._outbox_send.send(bytes(data))

    def incoming(self) -> trio.MemoryReceiveChannel[tuple[str, bytes]]:
        """Gossip received: ``(originating peer id, data)``; never our own publishes."""
        return self._incoming

    def set_request_handler(self, fn: RequestHandler) -> None:
        """Serve ``/specswarm/sync/1.0.0`` requests with ``fn``."""
        self._handler = fn

    def set_validator(self, fn: Validator) -> None:
        """Run ``fn(origin peer id, data)`` on every gossip message (topic validator)."""
        self._validator = fn

    async def request(self, peer_id: str, data: bytes, timeout: float = 10) -> bytes:
        """One request/response exchange with ``peer_id`` (dialling it if needed)."""
        self.stats.requests_made += 1
        try:
            with trio.fail_after(timeout):
                response = await self._call(peer_id, SYNC_PROTOCOL, bytes(data))
        except trio.TooSlowError:
            self.stats.requests_failed += 1
            raise TransportError(f"request to {peer_id} timed out after {timeout:g} s") from None
        except TransportError:
            self.stats.requests_failed += 1
            raise
        self.stats.bytes_out += len(data)
        self.stats.bytes_in += len(response)
        return response

    def peers(self) -> list[str]:
        """Peer ids with an open connection."""
        return sorted(p.to_base58() for p in self._host.get_connected_peers())

    def addrs(self) -> list[str]:
        """Our listen multiaddrs, each ending in ``/p2p/<local_id>``."""
        return [str(a) for a in self._host.get_addrs()]

    async def subscribe(self, topic: str) -> None:
        """Join ``topic`` (once); later publishes go there."""
        if self._nursery is None:
            raise TransportError("transport is not running")
        if topic in self._pubsub.topic_ids:
            self._topic = topic
            return
        self._pubsub.set_topic_validator(topic, self._validate, False)
        subscription = await self._pubsub.subscribe(topic)
        self._topic = topic
        self._nursery.start_soon(self._drain, subscription)

    async def wait_for_peers(self, n: int, timeout: float) -> None:
        """Return once at least ``n`` peers are connected."""
        await self._wait(lambda: len(self._host.get_connected_peers()) >= n, f"{n} peer(s)", timeout)

    async def wait_for_mesh(self, timeout: float, n: int = 1) -> None:
        """Return once at least ``n`` peers are in our GossipSub mesh for the topic."""
        await self._wait(
            lambda: self._topic is not None and len(self._gossipsub.mesh.get(self._topic, ())) >= n,
            f"{n} mesh peer(s) on our topic",
            timeout,
        )

    async def wait_for_topic_peers(self, n: int, timeout: float) -> None:
        """Return once at least ``n`` connected peers announced our topic."""
        await self._wait(
            lambda: len(self.topic_peers()) >= n, f"{n} peer(s) subscribed to our topic", timeout
        )

    def topic_peers(self) -> list[str]:
        """Connected peers subscribed to our topic."""
        if self._topic is None:
            return []
        return sorted(p.to_base58() for p in self._pubsub.peer_topics.get(self._topic, ()))

    def mesh_peers(self) -> list[str]:
        """Peers in our GossipSub mesh for the topic."""
        if self._topic is None:
            return []
        return sorted(p.to_base58() for p in self._gossipsub.mesh.get(self._topic, ()))

    def add_peer_addr(self, addr: str, *, sticky: bool = True) -> None:
        """Learn a peer address (``.../p2p/<id>``) and dial it soon."""
        try:
            split_p2p_addr(addr)
            multiaddr.Multiaddr(addr)
        except Exception as exc:
            raise TransportError(f"bad peer address {addr!r}: {exc}") from None
        self._book.add(addr, sticky=sticky, now=trio.current_time())
        self._wake_dialer.set()

    # ----- gossip -----------------------------------------------------------

    def _validate(self, forwarder: ID, msg: Any) -> bool:
        origin = ID(msg.from_id).to_base58()
        if origin == self.local_id or self._validator is None:
            # Our own publishes were checked by whoever made them; a rejection
            # here would drop them silently.
            return True
        try:
            ok = bool(self._validator(origin, bytes(msg.data)))
        except Exception:
            log.debug("validator raised on a message from %s", origin, exc_info=True)
            ok = False
        if not ok:
            self.stats.dropped_invalid += 1
        return ok

    async def _drain(self, subscription: Any) -> None:
        while True:
            msg = await subscription.get()
            origin = ID(msg.from_id).to_base58()
            if origin == self.local_id:
                continue
            data = bytes(msg.data)
            try:
                self._incoming_send.send_nowait((origin, data))
            except trio.WouldBlock:
                self.stats.dropped_overflow += 1
                continue
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                return
            self.stats.received += 1
            self.stats.bytes_in += len(data)

    async def _publisher(self) -> None:
        config = self.config
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
            assert self._topic is not None
            await self._pubsub.publish(self._topic, data)
            self.stats.published += 1
            self.stats.bytes_out += len(data)

    async def _wait_for_queues(self) -> None:
        limit = self.config.queue_high_water
        with trio.move_on_after(self.config.queue_wait_max):
            while any(len(q) >= limit for q in list(self._pubsub.peer_queues.values())):
                await trio.sleep(0.002)

    # ----- request/response -------------------------------------------------

    async def _call(self, peer_id: str, protocol: TProtocol, data: bytes) -> bytes:
        try:
            pid = ID.from_base58(peer_id)
        except Exception:
            raise TransportError(f"bad peer id {peer_id!r}") from None
        stream = None
        try:
            self._host.get_network().unblock_peer(pid)
            stream = await self._host.new_stream(pid, [protocol])
            await stream.write(encode_frame(data, self.config.max_frame))
            response = await read_frame(_reader(stream), self.config.max_frame)
        except (trio.Cancelled, KeyboardInterrupt):
            if stream is not None:
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await _quietly(stream.reset())
            raise
        except Exception as exc:
            if stream is not None:
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await _quietly(stream.reset())
            raise TransportError(f"request to {peer_id} failed: {_describe(exc)}") from None
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await _quietly(stream.close())
        return response

    async def _serve_sync(self, stream: Any) -> None:
        peer_id = stream.muxed_conn.peer_id.to_base58()
        try:
            request = await read_frame(_reader(stream), self.config.max_frame)
            if self._handler is None:
                raise TransportError("no request handler is set")
            self.stats.bytes_in += len(request)
            response = await self._handler(peer_id, request)
            await stream.write(encode_frame(response, self.config.max_frame))
            self.stats.requests_served += 1
            self.stats.bytes_out += len(response)
            await stream.close()
        except Exception as exc:
            log.debug("sync request from %s failed: %s", peer_id, _describe(exc))
            await _quietly(stream.reset())

    # ----- peer exchange and dialling ---------------------------------------

    def _exchange_payload(self) -> bytes:
        connected = set(self.peers())
        return json.dumps({"self": self.addrs(), "peers": self._book.addrs_of(connected)[:64]}).encode()

    def _learn(self, payload: bytes, sender: str) -> None:
        try:
            message = json.loads(payload)
            own = [a for a in message.get("self", []) if isinstance(a, str)]
            others = [a for a in message.get("peers", []) if isinstance(a, str)]
        except (ValueError, AttributeError):
            log.debug("unreadable peer exchange from %s", sender)
            return
        now = trio.current_time()
        for addr in own[:16] + others[:64]:
            try:
                multiaddr.Multiaddr(addr)
                if addr in own and split_p2p_addr(addr)[1] != sender:
                    continue  # a peer speaks only for its own addresses in "self"
                self._book.add(addr, now=now)
            except Exception:
                continue
        self._book.succeeded(sender)
        self._wake_dialer.set()

    async def _serve_peers(self, stream: Any) -> None:
        peer_id = stream.muxed_conn.peer_id.to_base58()
        try:
            request = await read_frame(_reader(stream), 1 << 20)
            self._learn(request, peer_id)
            await stream.write(encode_frame(self._exchange_payload()))
            await stream.close()
        except Exception as exc:
            log.debug("peer exchange from %s failed: %s", peer_id, _describe(exc))
            await _quietly(stream.reset())

    async def _exchange_with(self, peer_id: str) -> None:
        try:
            with trio.fail_after(self.config.dial_timeout):
                reply = await self._call(peer_id, PEERS_PROTOCOL, self._exchange_payload())
        except (TransportError, trio.TooSlowError) as exc:
            log.debug("peer exchange with %s failed: %s", peer_id, exc)
            self._exchanged.discard(peer_id)
            return
        self._learn(reply, peer_id)

    async def _dial(self, peer_id: str) -> None:
        known = self._book.peers.get(peer_id)
        if known is None:
            return
        info = PeerInfo(ID.from_base58(peer_id), [multiaddr.Multiaddr(a) for a in known.addrs])
        try:
            self._host.get_network().unblock_peer(info.peer_id)
            with trio.fail_after(self.config.dial_timeout):
                await self._host.connect(info)
        except Exception as exc:
            log.debug("dial %s failed: %s", peer_id, _describe(exc))
            self._book.failed(peer_id, trio.current_time())
            return
        self._book.succeeded(peer_id)
        self._wake_dialer.set()

    async def _dialer(self) -> None:
        """Keep every known peer connected; exchange addresses with new and old peers."""
        assert self._nursery is not None
        next_exchange = trio.current_time() + self.config.exchange_interval
        while True:
            now = trio.current_time()
            connected = set(self.peers())
            self._exchanged &= connected
            for peer_id in connected - self._exchanged:
                self._exchanged.add(peer_id)
                self._book.succeeded(peer_id)
                self._nursery.start_soon(self._exchange_with, peer_id)
            if now >= next_exchange:
                next_exchange = now + self.config.exchange_interval * random.uniform(0.8, 1.2)
                for peer_id in connected:
                    self._nursery.start_soon(self._exchange_with, peer_id)
            for peer_id in self._book.due(connected, now):
                self._book.dialing(peer_id, now, self.config.dial_timeout + 1)
                self._nursery.start_soon(self._dial, peer_id)
            with trio.move_on_after(self.config.watch_interval):
                await self._wake_dialer.wait()
            self._wake_dialer = trio.Event()

    # ----- mDNS -------------------------------------------------------------

    def _on_mdns_peer(self, info: PeerInfo) -> None:
        """Called from zeroconf's thread: hand the peer to trio, never block."""
        token = self._token
        if token is None:
            return
        addrs = [f"{a}/p2p/{info.peer_id.to_base58()}" for a in info.addrs]
        try:
            token.run_sync_soon(self._learn_mdns, addrs)
        except trio.RunFinishedError:
            pass

    def _learn_mdns(self, addrs: list[str]) -> None:
        for addr in addrs:
            try:
                self.add_peer_addr(addr, sticky=True)
            except TransportError:
                continue

    # ----- helpers ----------------------------------------------------------

    async def _wait(self, condition: Any, what: str, timeout: float) -> None:
        with trio.move_on_after(timeout):
            while not condition():
                await trio.sleep(0.02)
            return
        raise TransportError(f"timed out after {timeout:g} s waiting for {what}")


def peer_id_from_seed(seed: bytes) -> str:
    """The base58 peer id a transport opened with ``seed`` will have."""
    if len(seed) != 32:
        raise ValueError(f"seed must be 32 bytes, got {len(seed)}")
    return ID.from_pubkey(create_new_key_pair(seed).public_key).to_base58()


def _reader(stream: Any) -> Any:
    async def read(n: int) -> bytes:
        try:
            return bytes(await stream.read(n))
        except StreamEOF:
            return b""

    return read


async def _quietly(awaitable: Any) -> None:
    try:
        await awaitable
    except Exception:
        pass


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text} ({cause})"
    return text


def _parse_multiaddr(addr: str, what: str) -> multiaddr.Multiaddr:
    try:
        return multiaddr.Multiaddr(addr)
    except Exception as exc:
        raise TransportError(f"bad {what} {addr!r}: {_describe(exc)}") from None


def _is_teardown_race(exc: BaseException) -> bool:
    """py-libp2p services may still try to spawn a task while they shut down."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_is_teardown_race(e) for e in exc.exceptions)
    return (isinstance(exc, RuntimeError) and "closed to new arrivals" in str(exc)) or (
        type(exc).__name__ == "LifecycleError"
    )


def _check_port_free(listen: str, addr: multiaddr.Multiaddr) -> None:
    """Refuse a fixed port that another process holds.

    py-libp2p listens with SO_REUSEPORT, so a second peer on a taken port would
    *share* it (the kernel then splits incoming connections between them).
    """
    for proto, family in (("ip4", socket.AF_INET), ("ip6", socket.AF_INET6)):
        try:
            host, port = addr.value_for_protocol(proto), int(addr.value_for_protocol("tcp"))
        except Exception:
            continue
        if not port:
            return
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise TransportError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
        return


@asynccontextmanager
async def open_libp2p_transport(
    seed: bytes,
    listen: str = "/ip4/127.0.0.1/tcp/0",
    bootstrap: Sequence[str] = (),
    mdns: bool = False,
    topic: str | None = None,
    config: P2PConfig | None = None,
) -> AsyncIterator[Libp2pTransport]:
    """Run a libp2p peer until the block exits (or is cancelled).

    :param seed: 32-byte Ed25519 seed; the same seed gives the same peer id.
    :param listen: multiaddr to listen on (port 0 picks a free port).
    :param bootstrap: ``/ip4/../tcp/../p2p/<id>`` addresses, retried until they answer.
    :param mdns: discover peers on the LAN with mDNS (binds every interface!).
    :param topic: subscribe to this topic at once (else call ``subscribe`` later).
    :param config: tuning; :class:`P2PConfig` defaults when None.
    """
    if len(seed) != 32:
        raise ValueError(f"seed must be 32 bytes, got {len(seed)}")
    config = config or P2PConfig()
    listen_addr = _parse_multiaddr(listen, "listen address")
    _check_port_free(listen, listen_addr)
    for addr in bootstrap:
        _parse_multiaddr(addr, "bootstrap address")
        try:
            split_p2p_addr(addr)
        except ValueError as exc:
            raise TransportError(f"bad bootstrap address: {exc}") from None

    host = libp2p.new_host(
        key_pair=create_new_key_pair(seed),
        listen_addrs=[listen_addr],
        enable_mDNS=mdns,
    )
    gossipsub = GossipSub(
        protocols=[PROTOCOL_ID_V12, PROTOCOL_ID_V11],
        degree=config.degree,
        degree_low=config.degree_low,
        degree_high=config.degree_high,
        gossip_window=config.gossip_window,
        gossip_history=config.gossip_history,
        heartbeat_initial_delay=0.1,
        heartbeat_interval=config.heartbeat_interval,  # type: ignore[arg-type]
        prune_back_off=config.prune_back_off,
        unsubscribe_back_off=config.prune_back_off,
        do_px=False,
        adaptive_gossip_enabled=False,
        spam_protection_enabled=False,
        eclipse_protection_enabled=False,
    )
    pubsub = Pubsub(host, gossipsub, strict_signing=True)
    transport = Libp2pTransport(host, pubsub, gossipsub, config)
    host.set_stream_handler(SYNC_PROTOCOL, transport._serve_sync)
    host.set_stream_handler(PEERS_PROTOCOL, transport._serve_peers)

    discovery: Any = None
    if mdns:
        from libp2p.discovery.events.peerDiscovery import peerDiscovery as discovery

        discovery.register_peer_discovered_handler(transport._on_mdns_peer)
    started = closing = False
    try:
        async with (
            unwrap_single_group(),
            host.run(listen_addrs=[listen_addr]),
            background_trio_service(pubsub),
            background_trio_service(gossipsub),
            trio.open_nursery() as nursery,
        ):
            await pubsub.wait_until_ready()
            transport._nursery = nursery
            transport._token = trio.lowlevel.current_trio_token()
            for addr in bootstrap:
                transport.add_peer_addr(addr, sticky=True)
            nursery.start_soon(transport._dialer)
            nursery.start_soon(transport._publisher)
            if topic is not None:
                await transport.subscribe(topic)
            started = True
            try:
                yield transport
            finally:
                closing = True
                transport._token = None
                transport._incoming_send.close()
                nursery.cancel_scope.cancel()
    except OSError as exc:
        if started:
            raise
        raise TransportError(f"cannot listen on {listen}: {exc}") from None
    except BaseException as exc:
        if not (closing and _is_teardown_race(exc)):
            raise
        log.debug("ignored a libp2p teardown race: %r", exc)
    finally:
        if discovery is not None:
            discovery.unregister_peer_discovered_handler(transport._on_mdns_peer)
