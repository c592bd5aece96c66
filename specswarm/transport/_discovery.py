"""Finding and keeping peers: peer exchange, the dialer, and the mDNS bridge.

py-libp2p has no peer exchange and gives up on a bootstrap peer that starts
late (see ``docs/LIBP2P.md``), so :class:`PeerExchange` does both itself: on
``/specswarm/peers/1.0.0`` each side sends its own addresses and those of the
peers it is connected to, and a dialer keeps up to ``dial_target`` known peers
(:class:`~specswarm.transport._peerbook.PeerBook`) dialled with backoff — the
swarm becomes a mesh, not a star, and losing the first peer partitions nothing.
:class:`MdnsBridge` hands peers that zeroconf's thread discovers to trio.
"""

from __future__ import annotations

import json
import random

import multiaddr
import trio
from libp2p.abc import IHost, INetStream
from libp2p.custom_types import TProtocol
from libp2p.peer.id import ID
from libp2p.peer.peerinfo import PeerInfo

from specswarm.errors import TransportError
from specswarm.transport._config import P2PConfig
from specswarm.transport._frames import encode_frame, read_frame
from specswarm.transport._libp2p import (
    connected_peers,
    log,
    own_addrs,
    remote_peer,
    stream_reader,
    unblock_peer,
)
from specswarm.transport._peerbook import PeerBook, split_p2p_addr
from specswarm.transport._reqresp import RequestResponse
from specswarm.transport._util import describe, quietly

PEERS_PROTOCOL = TProtocol("/specswarm/peers/1.0.0")
"""Peer exchange: JSON ``{"self": [addrs], "peers": [addrs]}`` both ways."""

ANNOUNCE_DELAY = 0.5
"""Seconds between learning a new address and passing it on (new peers arriving together: one round)."""
QUIET_BACKOFF_MAX = 8
"""A periodic exchange round that taught nothing doubles the wait for the next, up to this many
times ``exchange_interval``: new peers are exchanged with on connect, and new addresses are
passed on within :data:`ANNOUNCE_DELAY`, so in a settled swarm the rounds are only a fallback,
and each one costs every peer a stream per connection."""


ROUND_FANOUT = 4
"""Connected peers a periodic exchange round asks (a random few, not all): what one knows spreads
through the others' rounds like gossip. Asking every connected peer made the rounds grow with the
swarm: at 32 peers on 2 cores each peer opened ~6 exchange streams a second, 8 % of its CPU (a
py-spy profile), and their 10 s timeouts held back anti-entropy. New connections and newly
learned addresses are still exchanged with every connected peer at once."""
PAYLOAD_REUSE = 1.0
"""Seconds our exchange payload is reused (reading our own addresses parses every multiaddr), as
long as the peers we are connected to and the addresses we know are unchanged: a hub that answered
its last spokes with a payload made before they arrived left them unknown to each other, and
killing the hub then partitioned the swarm (the chaos test ``kill_first_peer`` caught it)."""


def round_factor(factor: int, *, learned: bool) -> int:
    """The next periodic exchange round's interval, in units of ``exchange_interval``: back to 1
    after a round (or a change of connections) that taught something, else doubled up to
    :data:`QUIET_BACKOFF_MAX`."""
    return 1 if learned else min(QUIET_BACKOFF_MAX, factor * 2)


class PeerExchange:
    """The peers one host knows, the exchange protocol that spreads them, and the dialer."""

    def __init__(self, local_id: str, host: IHost, config: P2PConfig, calls: RequestResponse) -> None:
        self._host = host
        self._config = config
        self._calls = calls
        self._book = PeerBook(
            local_id,
            min_backoff=config.redial_min,
            max_backoff=config.redial_max,
            sticky_max_backoff=config.bootstrap_redial_max,
            forget_after=config.forget_after,
        )
        self._wake_dialer = trio.Event()
        self._exchanged: set[str] = set()
        self._dialing: set[str] = set()
        """Peers a dial is in flight to (they count towards ``dial_target``)."""
        self._exchanging: set[str] = set()
        """Peers an exchange is in flight with: one at a time per peer."""
        self._retry_exchange: dict[str, float] = {}
        """Peers whose first exchange failed -> when to try again (backing off)."""
        self._exchange_failures: dict[str, int] = {}
        self._announce_at: float | None = None
        """When to pass newly learned peers on to every connected peer (None: nothing new)."""
        self._quiet_factor = 1
        """The periodic round's interval in units of ``exchange_interval`` (:data:`QUIET_BACKOFF_MAX`)."""
        self._learned = False
        """Whether an exchange taught a new address since the last periodic round."""
        self._made: tuple[float, tuple[frozenset[str], int], bytes] | None = None
        """(when, (connected peers, known addresses), our exchange payload): see :data:`PAYLOAD_REUSE`."""

    def dial_addrs(self, peer_id: str) -> list[multiaddr.Multiaddr]:
        """The transport addresses (no ``/p2p/`` part) we know for ``peer_id``: the dialer's, and
        what a request to a peer we are not connected to dials (every one was parsed when learned)."""
        known = self._book.peers.get(peer_id)
        return [multiaddr.Multiaddr(a) for a in sorted(known.addrs)] if known is not None else []

    def add_peer_addr(self, addr: str, *, sticky: bool) -> None:
        """Learn a peer address (``.../p2p/<id>``) and wake the dialer."""
        try:
            split_p2p_addr(addr)
            multiaddr.Multiaddr(addr)
        except Exception as exc:
            raise TransportError(f"bad peer address {addr!r}: {exc}") from None
        self._book.add(addr, sticky=sticky, now=trio.current_time())
        self._wake_dialer.set()

    async def serve(self, stream: INetStream) -> None:
        """Stream handler of :data:`PEERS_PROTOCOL`: learn the caller's list, answer with ours."""
        peer_id = remote_peer(stream)
        try:
            request = await read_frame(stream_reader(stream), 1 << 20)
            self._learn(request, peer_id)
            await stream.write(encode_frame(self._payload()))
            await stream.close()
        except Exception as exc:
            log.debug("peer exchange from %s failed: %s", peer_id, describe(exc))
            await quietly(stream.reset())

    async def run_dialer(self, nursery: trio.Nursery) -> None:
        """Keep ``dial_target`` known peers connected (every one when it is 0); exchange addresses
        with new and old peers."""
        config = self._config
        next_exchange = trio.current_time() + config.exchange_interval
        last_connected: set[str] = set()
        while True:
            now = trio.current_time()
            connected = set(connected_peers(self._host))
            if connected != last_connected:
                self._learned, last_connected = True, connected  # the swarm changed: look around
            self._exchanged &= connected
            for peer_id in connected - self._exchanged:
                if self._retry_exchange.get(peer_id, 0.0) > now:
                    continue  # its last exchange failed: wait before asking again
                self._exchanged.add(peer_id)
                self._book.succeeded(peer_id)
                self._start_exchange(nursery, peer_id)
            announce = self._announce_at is not None and now >= self._announce_at
            if now >= next_exchange or announce:
                # a peer we just learned of is passed on at once, not at the next round: a hub
                # killed right after its spokes reached it must not leave one spoke unknown
                self._announce_at = None
                self._quiet_factor = round_factor(self._quiet_factor, learned=self._learned)
                self._learned = False
                wait = config.exchange_interval * self._quiet_factor
                next_exchange = now + wait * random.uniform(0.8, 1.2)
                ask = (
                    sorted(connected)
                    if announce
                    else random.sample(sorted(connected), min(ROUND_FANOUT, len(connected)))
                )
                for peer_id in ask:
                    self._start_exchange(nursery, peer_id)
            target = config.dial_target
            room = target - len(connected) - len(self._dialing) if target else None
            for peer_id in self._book.due(connected, now, room):
                self._book.dialing(peer_id, now, config.dial_timeout + 1)
                self._dialing.add(peer_id)
                nursery.start_soon(self._dial, peer_id)
            with trio.move_on_after(config.watch_interval):
                await self._wake_dialer.wait()
            self._wake_dialer = trio.Event()

    def _payload(self) -> bytes:
        now = trio.current_time()
        connected = frozenset(connected_peers(self._host))
        key = (connected, self._book.addr_count())
        if self._made is not None and self._made[1] == key and now - self._made[0] < PAYLOAD_REUSE:
            return self._made[2]
        message = {"self": own_addrs(self._host), "peers": self._book.addrs_of(connected)[:64]}
        self._made = (now, key, json.dumps(message).encode())
        return self._made[2]

    def _learn(self, payload: bytes, sender: str) -> None:
        try:
            message = json.loads(payload)
            own = [a for a in message.get("self", []) if isinstance(a, str)]
            others = [a for a in message.get("peers", []) if isinstance(a, str)]
        except (ValueError, AttributeError):
            log.debug("unreadable peer exchange from %s", sender)
            return
        now = trio.current_time()
        before = self._book.addr_count()
        for addr in own[:16] + others[:64]:
            try:
                multiaddr.Multiaddr(addr)
                if addr in own and split_p2p_addr(addr)[1] != sender:
                    continue  # a peer speaks only for its own addresses in "self"
                self._book.add(addr, now=now)
            except Exception:
                continue
        self._book.succeeded(sender)
        if self._book.addr_count() > before:
            self._learned = True
            if self._announce_at is None:
                self._announce_at = now + ANNOUNCE_DELAY
        self._wake_dialer.set()

    def _start_exchange(self, nursery: trio.Nursery, peer_id: str) -> None:
        """Exchange with ``peer_id`` unless an exchange with it is already in flight: on a
        CPU-starved machine an exchange can take seconds, and rounds started meanwhile must not
        pile more streams onto the same slow peer (measured: 9 peers on 2 cores made ~8
        failing exchanges a second each, and the storm starved the model)."""
        if peer_id in self._exchanging:
            return
        self._exchanging.add(peer_id)
        nursery.start_soon(self._exchange_with, peer_id)

    async def _exchange_with(self, peer_id: str) -> None:
        try:
            with trio.fail_after(self._config.dial_timeout):
                reply = await self._calls.call(peer_id, PEERS_PROTOCOL, self._payload())
        except (TransportError, trio.TooSlowError) as exc:
            failures = self._exchange_failures.get(peer_id, 0) + 1
            self._exchange_failures[peer_id] = failures
            log.debug("peer exchange with %s failed (%d in a row): %s", peer_id, failures, describe(exc))
            # ask again, backing off (0.5, 1, 2 ... s, at most a quiet round), rather than at the
            # dialer's next look 0.2 s from now
            backoff = min(self._config.exchange_interval * QUIET_BACKOFF_MAX, 0.5 * 2 ** (failures - 1))
            self._retry_exchange[peer_id] = trio.current_time() + backoff * random.uniform(0.8, 1.2)
            self._exchanged.discard(peer_id)
            return
        finally:
            self._exchanging.discard(peer_id)
        self._exchange_failures.pop(peer_id, None)
        self._retry_exchange.pop(peer_id, None)
        self._learn(reply, peer_id)

    async def _dial(self, peer_id: str) -> None:
        try:
            await self._dial_once(peer_id)
        finally:
            self._dialing.discard(peer_id)

    async def _dial_once(self, peer_id: str) -> None:
        addrs = self.dial_addrs(peer_id)
        if not addrs:
            return
        info = PeerInfo(ID.from_base58(peer_id), addrs)
        try:
            unblock_peer(self._host, info.peer_id)
            with trio.fail_after(self._config.dial_timeout):
                await self._host.connect(info)
        except Exception as exc:
            log.debug("dial %s failed: %s", peer_id, describe(exc))
            self._book.failed(peer_id, trio.current_time())
            return
        self._book.succeeded(peer_id)
        self._wake_dialer.set()


class MdnsBridge:
    """Hands peers found by py-libp2p's mDNS (on zeroconf's thread) to the trio loop as sticky peers.

    The library only fills its peer store and calls back; dialling is ours.
    """

    def __init__(self, exchange: PeerExchange) -> None:
        self.token: trio.lowlevel.TrioToken | None = None
        """The running trio loop; None before start and after close (callbacks are then ignored)."""
        self._exchange = exchange

    def on_peer(self, info: PeerInfo) -> None:
        """Called from zeroconf's thread: hand the peer to trio, never block."""
        token = self.token
        if token is None:
            return
        addrs = [f"{a}/p2p/{info.peer_id.to_base58()}" for a in info.addrs]
        try:
            token.run_sync_soon(self._learn, addrs)
        except trio.RunFinishedError:
            pass

    def _learn(self, addrs: list[str]) -> None:
        for addr in addrs:
            try:
                self._exchange.add_peer_addr(addr, sticky=True)
            except TransportError:
                continue
