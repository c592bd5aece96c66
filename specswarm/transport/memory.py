"""An in-process network for fast, deterministic tests of the swarm logic.

::

    async with open_memory_network(seed=7, loss=0.2, delay=0.01) as net:
        a = net.add_peer("peer-a", topic="run")
        b = net.add_peer("peer-b", topic="run")
        await a.publish(b"hello")
        sender, data = await b.incoming().receive()

The hub delivers every publish to every other peer subscribed to the same topic
that it can reach. It can make that delivery worse, on purpose, from one seeded
:class:`random.Random`:

- ``loss``: the fraction of (message, receiver) deliveries silently dropped;
- ``delay`` (+ uniform ``jitter``): seconds before a delivery arrives;
- ``duplicate``: the fraction of deliveries that arrive a second time;
- :meth:`MemoryNetwork.partition` / :meth:`MemoryNetwork.isolate` /
  :meth:`MemoryNetwork.heal`: who can reach whom, for gossip and requests alike.

Requests call the other transport's handler directly (after ``delay``); they are
never lost, but fail with :class:`~specswarm.errors.TransportError` across a
partition, to a closed peer, or on timeout — like a real stream would.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

import trio

from specswarm.errors import TransportError
from specswarm.transport._util import unwrap_single_group
from specswarm.transport.base import RequestHandler, TransportStats, Validator

INCOMING_BUFFER = 10_000
"""Gossip messages held for a slow reader before new ones are dropped (and counted)."""


class MemoryNetwork:
    """The hub all :class:`MemoryTransport` of one test share. Make it with
    :func:`open_memory_network`; its knobs may be changed at any time."""

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        seed: int = 0,
        loss: float = 0.0,
        delay: float = 0.0,
        jitter: float = 0.0,
        duplicate: float = 0.0,
    ) -> None:
        _check_knobs(loss=loss, delay=delay, jitter=jitter, duplicate=duplicate)
        self.loss = loss
        """Fraction of gossip deliveries dropped."""
        self.delay = delay
        """Seconds every delivery (and request) takes."""
        self.jitter = jitter
        """Extra uniform random seconds added to ``delay``."""
        self.duplicate = duplicate
        """Fraction of gossip deliveries that arrive twice."""
        self.rng = random.Random(seed)
        """The one source of randomness, seeded."""
        self._nursery = nursery
        self._peers: dict[str, MemoryTransport] = {}
        self._group: dict[str, int] = {}
        self._counter = itertools.count()
        self._changed = trio.Event()

    # ----- membership -------------------------------------------------------

    def add_peer(self, peer_id: str | None = None, *, topic: str | None = None) -> MemoryTransport:
        """Attach a new transport (``peer_id`` defaults to ``memory-peer-N``)."""
        if peer_id is None:
            peer_id = f"memory-peer-{next(self._counter)}"
        if peer_id in self._peers:
            raise ValueError(f"peer_id {peer_id!r} is already on this network")
        transport = MemoryTransport(self, peer_id, topic)
        self._peers[peer_id] = transport
        self._notify()
        return transport

    @asynccontextmanager
    async def open_peer(
        self, peer_id: str | None = None, *, topic: str | None = None
    ) -> AsyncIterator[MemoryTransport]:
        """:meth:`add_peer` as an async context manager that closes the transport."""
        transport = self.add_peer(peer_id, topic=topic)
        try:
            yield transport
        finally:
            await transport.aclose()

    def remove_peer(self, peer_id: str) -> None:
        """Detach a peer, as if its process died (no-op if already gone)."""
        transport = self._peers.pop(peer_id, None)
        self._group.pop(peer_id, None)
        if transport is not None:
            transport._closed = True
            transport._send.close()
            self._notify()

    def partition(self, *groups: Iterable[str]) -> None:
        """Split the network: peers reach only peers of their own group.

        Peers named in no group form one more group together.
        """
        self._group = {}
        for index, group in enumerate(groups, start=1):
            for peer_id in group:
                self._group[peer_id] = index
        self._notify()

    def isolate(self, peer_id: str) -> None:
        """Cut one peer off from everyone else (the others still reach each other)."""
        self._group[peer_id] = -1 - next(self._counter)
        self._notify()

    def heal(self) -> None:
        """Undo every partition and isolation."""
        self._group = {}
        self._notify()

    def can_reach(self, a: str, b: str) -> bool:
        """Whether peers ``a`` and ``b`` are both attached and on the same side."""
        return a in self._peers and b in self._peers and self._group.get(a, 0) == self._group.get(b, 0)

    # ----- delivery ---------------------------------------------------------

    def _latency(self) -> float:
        return self.delay + (self.rng.uniform(0, self.jitter) if self.jitter else 0.0)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _wait_until(self, condition: object, what: str, timeout: float) -> None:
        assert callable(condition)
        with trio.move_on_after(timeout):
            while not condition():
                await self._changed.wait()
            return
        raise TransportError(f"timed out after {timeout:g} s waiting for {what}")

    def _gossip(self, sender: MemoryTransport, topic: str, data: bytes) -> None:
        for receiver in list(self._peers.values()):
            if receiver is sender or topic not in receiver._topics:
                continue
            if not self.can_reach(sender.local_id, receiver.local_id):
                continue
            if self.loss and self.rng.random() < self.loss:
                continue
            copies = 2 if self.duplicate and self.rng.random() < self.duplicate else 1
            for _ in range(copies):
                latency = self._latency()
                if latency <= 0:
                    receiver._deliver(sender.local_id, topic, data)
                else:
                    self._nursery.start_soon(
                        self._deliver_later, latency, receiver, sender.local_id, topic, data
                    )

    async def _deliver_later(
        self, latency: float, receiver: MemoryTransport, sender: str, topic: str, data: bytes
    ) -> None:
        await trio.sleep(latency)
        # A partition or a departure that happened in flight still loses the message.
        if self.can_reach(sender, receiver.local_id):
            receiver._deliver(sender, topic, data)


def _check_knobs(*, loss: float, delay: float, jitter: float, duplicate: float) -> None:
    for name, value in (("loss", loss), ("duplicate", duplicate)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1, got {value}")
    for name, value in (("delay", delay), ("jitter", jitter)):
        if value < 0:
            raise ValueError(f"{name} must be non-negative, got {value}")


@asynccontextmanager
async def open_memory_network(
    *,
    seed: int = 0,
    loss: float = 0.0,
    delay: float = 0.0,
    jitter: float = 0.0,
    duplicate: float = 0.0,
) -> AsyncIterator[MemoryNetwork]:
    """Run a :class:`MemoryNetwork`; in-flight deliveries are cancelled on exit."""
    _check_knobs(loss=loss, delay=delay, jitter=jitter, duplicate=duplicate)
    async with unwrap_single_group(), trio.open_nursery() as nursery:
        network = MemoryNetwork(
            nursery, seed=seed, loss=loss, delay=delay, jitter=jitter, duplicate=duplicate
        )
        try:
            yield network
        finally:
            for peer_id in list(network._peers):
                network.remove_peer(peer_id)
            nursery.cancel_scope.cancel()


class MemoryTransport:
    """One peer on a :class:`MemoryNetwork`; implements
    :class:`~specswarm.transport.base.Transport`."""

    def __init__(self, network: MemoryNetwork, peer_id: str, topic: str | None) -> None:
        self.local_id = peer_id
        """Our peer id on the hub."""
        self.stats = TransportStats()
        """Counters of what this transport did."""
        self._network = network
        self._topics: list[str] = [topic] if topic else []
        self._send, self._receive = trio.open_memory_channel[tuple[str, bytes]](INCOMING_BUFFER)
        self._handler: RequestHandler | None = None
        self._validator: Validator | None = None
        self._closed = False

    # ----- Transport API ----------------------------------------------------

    async def publish(self, data: bytes) -> None:
        """Hand ``data`` to the hub for every reachable subscriber of our topic."""
        self._check_open()
        if not self._topics:
            raise TransportError("cannot publish before subscribing to a topic")
        self.stats.published += 1
        self.stats.bytes_out += len(data)
        self._network._gossip(self, self._topics[-1], bytes(data))
        await trio.lowlevel.checkpoint()

    def incoming(self) -> trio.MemoryReceiveChannel[tuple[str, bytes]]:
        """Gossip delivered to us, as ``(sender peer id, data)``."""
        return self._receive

    def set_request_handler(self, fn: RequestHandler) -> None:
        """Serve requests with ``fn``."""
        self._handler = fn

    def set_validator(self, fn: Validator) -> None:
        """Check each delivered gossip message with ``fn`` first."""
        self._validator = fn

    async def request(self, peer_id: str, data: bytes, timeout: float = 10) -> bytes:
        """Call ``peer_id``'s handler; TransportError if unreachable, failing or slow."""
        self._check_open()
        self.stats.requests_made += 1
        self.stats.bytes_out += len(data)
        try:
            with trio.fail_after(timeout):
                response = await self._call(peer_id, bytes(data))
        except trio.TooSlowError:
            self.stats.requests_failed += 1
            self.stats.requests_timed_out += 1
            raise TransportError(f"request to {peer_id} timed out after {timeout:g} s") from None
        except TransportError:
            self.stats.requests_failed += 1
            raise
        self.stats.bytes_in += len(response)
        return response

    def peers(self) -> list[str]:
        """Every other attached peer we can reach now."""
        return sorted(
            p
            for p in self._network._peers
            if p != self.local_id and self._network.can_reach(self.local_id, p)
        )

    def addrs(self) -> list[str]:
        """A pseudo-address naming this peer (the hub needs no dialing)."""
        return [f"/memory/p2p/{self.local_id}"]

    async def subscribe(self, topic: str) -> None:
        """Join ``topic``; later publishes go there."""
        self._check_open()
        if topic in self._topics:
            self._topics.remove(topic)
        self._topics.append(topic)
        self._network._notify()
        await trio.lowlevel.checkpoint()

    async def wait_for_peers(self, n: int, timeout: float) -> None:
        """Return once ``n`` peers are reachable."""
        await self._network._wait_until(lambda: len(self.peers()) >= n, f"{n} peer(s)", timeout)

    async def wait_for_mesh(self, timeout: float, n: int = 1) -> None:
        """Return once ``n`` reachable peers share our topic."""
        await self._network._wait_until(
            lambda: len(self._topic_peers()) >= n, f"{n} peer(s) on our topic", timeout
        )

    async def aclose(self) -> None:
        """Leave the network."""
        self._network.remove_peer(self.local_id)
        await trio.lowlevel.checkpoint()

    # ----- internals --------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError(f"transport of {self.local_id} is closed")

    def _topic_peers(self) -> list[str]:
        if not self._topics:
            return []
        topic = self._topics[-1]
        return [p for p in self.peers() if topic in self._network._peers[p]._topics]

    def _deliver(self, sender: str, topic: str, data: bytes) -> None:
        if self._closed or topic not in self._topics:
            return
        if self._validator is not None:
            try:
                ok = self._validator(sender, data)
            except Exception:
                ok = False
            if not ok:
                self.stats.dropped_invalid += 1
                return
        try:
            self._send.send_nowait((sender, data))
        except trio.WouldBlock:
            self.stats.dropped_overflow += 1
            return
        except trio.ClosedResourceError:
            return
        self.stats.received += 1
        self.stats.bytes_in += len(data)

    async def _call(self, peer_id: str, data: bytes) -> bytes:
        network = self._network
        if not network.can_reach(self.local_id, peer_id):
            raise TransportError(f"peer {peer_id} is not reachable")
        latency = network._latency()
        if latency > 0:
            await trio.sleep(latency)
        server = network._peers.get(peer_id)
        if server is None or not network.can_reach(self.local_id, peer_id):
            raise TransportError(f"peer {peer_id} is not reachable")
        if server._handler is None:
            raise TransportError(f"peer {peer_id} serves no requests")
        server.stats.bytes_in += len(data)
        try:
            response = await server._handler(self.local_id, data)
        except Exception as exc:
            raise TransportError(f"peer {peer_id} failed to answer: {exc}") from exc
        server.stats.requests_served += 1
        server.stats.bytes_out += len(response)
        if latency > 0:
            await trio.sleep(latency)
        return bytes(response)
