"""An in-process gossip *mesh* (not a hub), for simulations of large swarms.

::

    async with open_mesh_network(seed=1, degree=6, latency=0.02, loss=0.01) as net:
        a = net.add_peer("a", topic="run")
        ...

Unlike :mod:`specswarm.transport.memory`, which hands every publish straight to every
subscriber, each peer here is connected to about ``degree`` others, and a gossip message
travels hop by hop, the way GossipSub's mesh pushes it: a peer that receives a message for
the first time validates it, delivers it and forwards it to every neighbour but the one it
came from; a copy it has seen before is counted and dropped. Every hop takes ``latency``
(+ uniform ``jitter``) seconds and is lost with probability ``loss``. Requests go straight
to the named peer (libp2p dials it), taking one hop's latency each way.

Churn: :meth:`MeshNetwork.remove_peer` drops a peer and its links; a neighbour left with
fewer than ``degree`` links dials a random peer, as GossipSub grafts a new mesh member. A
peer added later (a late joiner) dials ``degree`` random peers.

All deliveries are driven by one task from a time-ordered queue, so a simulation of a
thousand peers runs under :class:`trio.testing.MockClock` (``autojump_threshold=0``)
without a task per message. Processing takes no virtual time: the model is the network,
not the CPU.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import math
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import NamedTuple

import trio

from specswarm.errors import TransportError
from specswarm.transport._util import unwrap_single_group
from specswarm.transport.base import RequestHandler, TransportStats, Validator

INCOMING_BUFFER = 100_000
"""Gossip messages held for a slow reader before new ones are dropped (and counted)."""
TICK = 0.005
"""Hops are delivered in batches, every this many seconds (one scheduler round per batch)."""
SEEN_LIMIT = 50_000
"""Message ids a peer remembers for de-duplication (the oldest are forgotten first)."""


@dataclass
class MeshCounters:
    """What one peer's links carried (beyond :class:`TransportStats`)."""

    sent: int = 0
    """Gossip copies this peer pushed to a neighbour (its own publishes and forwards)."""
    copies_in: int = 0
    """Gossip copies that arrived (first copies and duplicates)."""
    duplicates: int = 0
    """Copies of a message this peer had already seen."""
    lost: int = 0
    """Copies this peer sent that the network dropped."""


class _Hop(NamedTuple):
    """One copy of a message on one link (a tuple: a simulation makes millions of them)."""

    receiver: str
    via: str
    origin: str
    msg_id: bytes
    data: bytes


class MeshNetwork:
    """The links between :class:`MeshTransport` peers. Make it with :func:`open_mesh_network`."""

    def __init__(
        self,
        *,
        seed: int = 0,
        degree: int = 6,
        latency: float = 0.02,
        jitter: float = 0.0,
        loss: float = 0.0,
    ) -> None:
        if degree < 1:
            raise ValueError(f"degree must be at least 1, got {degree}")
        if not 0.0 <= loss <= 1.0:
            raise ValueError(f"loss must be between 0 and 1, got {loss}")
        if latency < 0 or jitter < 0:
            raise ValueError(f"latency and jitter must be non-negative, got {latency}, {jitter}")
        self.degree = degree
        self.latency = latency
        self.jitter = jitter
        self.loss = loss
        self.rng = random.Random(seed)
        self.peers: dict[str, MeshTransport] = {}
        self.links: dict[str, set[str]] = {}
        self._due: dict[int, list[_Hop]] = {}
        """Tick number -> the hops due then, in the order they were sent."""
        self._ticks: list[int] = []
        """A heap of the tick numbers in :attr:`_due`."""
        self._wake = trio.Event()
        self._changed = trio.Event()

    # ----- membership ----------------------------------------------------------------------
    def add_peer(self, peer_id: str, *, topic: str | None = None) -> MeshTransport:
        """Attach a peer and link it to ``degree`` random peers already there."""
        if peer_id in self.peers:
            raise ValueError(f"peer_id {peer_id!r} is already on this network")
        others = list(self.peers)
        transport = MeshTransport(self, peer_id, topic)
        self.peers[peer_id] = transport
        self.links[peer_id] = set()
        for other in self.rng.sample(others, min(self.degree, len(others))):
            self._link(peer_id, other)
        self._notify()
        return transport

    def remove_peer(self, peer_id: str) -> None:
        """Detach a peer as if its process died; its neighbours re-dial to keep their degree."""
        transport = self.peers.pop(peer_id, None)
        if transport is None:
            return
        transport._closed = True
        transport._send.close()
        for other in self.links.pop(peer_id, set()):
            self.links[other].discard(peer_id)
            if len(self.links[other]) < self.degree:
                candidates = [p for p in self.peers if p != other and p not in self.links[other]]
                if candidates:
                    self._link(other, self.rng.choice(candidates))
        self._notify()

    def _link(self, a: str, b: str) -> None:
        self.links[a].add(b)
        self.links[b].add(a)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # ----- gossip --------------------------------------------------------------------------
    def _hop_latency(self) -> float:
        # what rng.uniform(0, jitter) draws, without its Python frame (one call per hop)
        return self.latency + (self.jitter * self.rng.random() if self.jitter else 0.0)

    def _push(self, sender: MeshTransport, origin: str, msg_id: bytes, data: bytes, skip: str) -> None:
        now = trio.current_time()
        counters, via, loss, rng = sender.mesh, sender.local_id, self.loss, self.rng
        for receiver in self.links.get(via, ()):
            if receiver in (skip, origin):
                continue
            counters.sent += 1
            if loss and rng.random() < loss:
                counters.lost += 1
                continue
            tick = math.ceil((now + self._hop_latency()) / TICK)
            bucket = self._due.get(tick)
            if bucket is None:
                bucket = self._due[tick] = []
                heapq.heappush(self._ticks, tick)
            bucket.append(_Hop(receiver, via, origin, msg_id, data))
        self._wake.set()

    async def pump(self) -> None:
        """Deliver queued hops in time order (runs for the network's lifetime)."""
        # Hops are kept by due tick (a list per tick, in sending order): the same order as a
        # heap of (due, sequence) gives, at a list append per hop instead of a heap operation.
        ticks, due_hops, peers, links = self._ticks, self._due, self.peers, self.links
        while True:
            if not ticks:
                self._wake = trio.Event()
                await self._wake.wait()
                continue
            now = trio.current_time()
            due = ticks[0] * TICK
            if due > now:
                self._wake = trio.Event()
                with trio.move_on_at(due):
                    await self._wake.wait()
                continue
            while ticks and ticks[0] * TICK <= now:
                for hop in due_hops.pop(heapq.heappop(ticks)):
                    receiver = peers.get(hop.receiver)
                    if receiver is not None and hop.via in links.get(hop.receiver, ()):
                        receiver._arrive(hop)
            await trio.lowlevel.checkpoint()

    async def _wait_until(self, condition: object, what: str, timeout: float) -> None:
        assert callable(condition)
        with trio.move_on_after(timeout):
            while not condition():
                await self._changed.wait()
            return
        raise TransportError(f"timed out after {timeout:g} s waiting for {what}")


@asynccontextmanager
async def open_mesh_network(
    *, seed: int = 0, degree: int = 6, latency: float = 0.02, jitter: float = 0.0, loss: float = 0.0
) -> AsyncIterator[MeshNetwork]:
    """Run a :class:`MeshNetwork`; in-flight hops are dropped on exit."""
    async with unwrap_single_group(), trio.open_nursery() as nursery:
        network = MeshNetwork(seed=seed, degree=degree, latency=latency, jitter=jitter, loss=loss)
        nursery.start_soon(network.pump)
        try:
            yield network
        finally:
            for peer_id in list(network.peers):
                network.remove_peer(peer_id)
            nursery.cancel_scope.cancel()


class MeshTransport:
    """One peer of a :class:`MeshNetwork`; implements :class:`~specswarm.transport.base.Transport`."""

    def __init__(self, network: MeshNetwork, peer_id: str, topic: str | None) -> None:
        self.local_id = peer_id
        self.stats = TransportStats()
        self.mesh = MeshCounters()
        """What this peer's links carried."""
        self._network = network
        self._topic = topic
        self._send, self._receive = trio.open_memory_channel[tuple[str, bytes]](INCOMING_BUFFER)
        self._handler: RequestHandler | None = None
        self._validator: Validator | None = None
        self._closed = False
        self._seen: dict[bytes, None] = {}
        self._publish_seq = itertools.count()

    async def publish(self, data: bytes) -> None:
        """Push ``data`` to every neighbour; they forward it through the mesh."""
        self._check_open()
        if self._topic is None:
            raise TransportError("cannot publish before subscribing to a topic")
        data = bytes(data)
        msg_id = hashlib.blake2b(
            self.local_id.encode() + next(self._publish_seq).to_bytes(8, "big"), digest_size=12
        ).digest()
        self._remember(msg_id)
        self.stats.published += 1
        self.stats.bytes_out += len(data)
        self._network._push(self, self.local_id, msg_id, data, skip="")
        await trio.lowlevel.checkpoint()

    def incoming(self) -> trio.MemoryReceiveChannel[tuple[str, bytes]]:
        return self._receive

    def set_request_handler(self, fn: RequestHandler) -> None:
        self._handler = fn

    def set_validator(self, fn: Validator) -> None:
        self._validator = fn

    async def request(self, peer_id: str, data: bytes, timeout: float = 10) -> bytes:
        """Call ``peer_id``'s handler, one hop's latency each way."""
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
        """Our direct neighbours (a small part of a large swarm)."""
        return sorted(self._network.links.get(self.local_id, ()))

    def addrs(self) -> list[str]:
        return [f"/mesh/p2p/{self.local_id}"]

    async def subscribe(self, topic: str) -> None:
        self._check_open()
        self._topic = topic
        self._network._notify()
        await trio.lowlevel.checkpoint()

    async def wait_for_peers(self, n: int, timeout: float) -> None:
        await self._network._wait_until(lambda: len(self.peers()) >= n, f"{n} peer(s)", timeout)

    async def wait_for_mesh(self, timeout: float, n: int = 1) -> None:
        await self.wait_for_peers(n, timeout)

    async def aclose(self) -> None:
        self._network.remove_peer(self.local_id)
        await trio.lowlevel.checkpoint()

    # ----- internals -----------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise TransportError(f"transport of {self.local_id} is closed")

    def _remember(self, msg_id: bytes) -> None:
        self._seen[msg_id] = None
        if len(self._seen) > SEEN_LIMIT:
            del self._seen[next(iter(self._seen))]

    def _arrive(self, hop: _Hop) -> None:
        if self._closed or self._topic is None:
            return
        self.mesh.copies_in += 1
        if hop.msg_id in self._seen:
            self.mesh.duplicates += 1
            return
        self._remember(hop.msg_id)
        if self._validator is not None:
            try:
                ok = self._validator(hop.origin, hop.data)
            except Exception:
                ok = False
            if not ok:
                self.stats.dropped_invalid += 1
                return  # rejected messages are not forwarded
        try:
            self._send.send_nowait((hop.origin, hop.data))
        except trio.WouldBlock:
            self.stats.dropped_overflow += 1
        except trio.ClosedResourceError:
            return
        else:
            self.stats.received += 1
            self.stats.bytes_in += len(hop.data)
        self._network._push(self, hop.origin, hop.msg_id, hop.data, skip=hop.via)

    async def _call(self, peer_id: str, data: bytes) -> bytes:
        network = self._network
        server = network.peers.get(peer_id)
        if server is None:
            raise TransportError(f"peer {peer_id} is not reachable")
        await trio.sleep(network._hop_latency())
        if server._closed or server._handler is None:
            raise TransportError(f"peer {peer_id} is not reachable")
        server.stats.bytes_in += len(data)
        try:
            response = await server._handler(self.local_id, data)
        except Exception as exc:
            raise TransportError(f"peer {peer_id} failed to answer: {exc}") from exc
        server.stats.requests_served += 1
        server.stats.bytes_out += len(response)
        await trio.sleep(network._hop_latency())
        if self._closed:
            raise TransportError(f"transport of {self.local_id} is closed")
        return bytes(response)
