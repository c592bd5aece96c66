"""Request/response over raw libp2p streams: one length-prefixed request frame, one response frame.

:class:`RequestResponse` makes calls on any of our stream protocols (the sync
protocol and peer exchange) and serves ``/specswarm/sync/1.0.0`` with the
node's request handler. A failed or cancelled call resets its stream; a served
request that fails is logged at debug level and reset, never raised.
"""

from __future__ import annotations

from collections.abc import Callable

import multiaddr
import trio
from libp2p.abc import IHost, INetStream
from libp2p.custom_types import TProtocol
from libp2p.io.exceptions import ConnectionClosedError
from libp2p.peer.id import ID

from specswarm.errors import TransportError
from specswarm.transport._config import P2PConfig
from specswarm.transport._frames import encode_frame, read_frame
from specswarm.transport._libp2p import log, remote_peer, stream_reader, unblock_peer
from specswarm.transport._util import describe, quietly
from specswarm.transport.base import RequestHandler, TransportStats

SYNC_PROTOCOL = TProtocol("/specswarm/sync/1.0.0")
"""Request/response: one request frame, one response frame, per stream."""
ADDR_TTL = 120
"""Seconds the addresses we hand py-libp2p's peer store before a call stay there."""


class Unopened(TransportError):
    """A call that found no way to the peer: no stream could be opened (no connection, or the
    peer would not speak the protocol)."""


class RequestResponse:
    """Calls to other peers and the sync-protocol server of one host."""

    def __init__(self, host: IHost, config: P2PConfig, stats: TransportStats) -> None:
        self.handler: RequestHandler | None = None
        """Serves sync requests; None answers every request by resetting the stream."""
        self.known_addrs: Callable[[str], list[multiaddr.Multiaddr]] = lambda peer_id: []
        """Transport addresses we know for a peer (the peer exchange's book): a call to a peer
        we are not connected to dials them. py-libp2p dials only what its own peer store holds,
        and forgets dialled addresses after 120 s; at 64 peers 305 of 693 anti-entropy pulls
        failed with "No known addresses" (the announcer of a gap was relayed to us by others)."""
        self._host = host
        self._config = config
        self._stats = stats

    async def request(self, peer_id: str, data: bytes, timeout: float) -> bytes:
        """One sync exchange with ``peer_id`` under ``timeout``, counted in the stats."""
        self._stats.requests_made += 1
        try:
            with trio.fail_after(timeout):
                response = await self.call(peer_id, SYNC_PROTOCOL, bytes(data))
        except trio.TooSlowError:
            self._stats.requests_failed += 1
            self._stats.requests_timed_out += 1
            raise TransportError(f"request to {peer_id} timed out after {timeout:g} s") from None
        except Unopened:
            self._stats.requests_failed += 1
            self._stats.requests_unopened += 1
            raise
        except TransportError:
            self._stats.requests_failed += 1
            raise
        self._stats.bytes_out += len(data)
        self._stats.bytes_in += len(response)
        return response

    async def call(self, peer_id: str, protocol: TProtocol, data: bytes) -> bytes:
        """Open a ``protocol`` stream to ``peer_id`` (dialling if needed), send ``data``, read the reply."""
        try:
            pid = ID.from_base58(peer_id)
        except Exception:
            raise TransportError(f"bad peer id {peer_id!r}") from None
        stream: INetStream | None = None
        try:
            unblock_peer(self._host, pid)
            self._remind_addrs(pid)
            stream = await self._host.new_stream(pid, [protocol])
            await stream.write(encode_frame(data, self._config.max_frame))
            response = await read_frame(stream_reader(stream), self._config.max_frame)
        except (trio.Cancelled, KeyboardInterrupt):
            if stream is not None:
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await quietly(stream.reset())
            raise
        except Exception as exc:
            with trio.CancelScope(shield=True), trio.move_on_after(1):
                if stream is not None:
                    await quietly(stream.reset())
                if broken(exc) and pid in self._host.get_connected_peers():
                    # the remote reset it, and py-libp2p still lists it: every request and
                    # gossip message to this peer would fail the same way until it is closed
                    self._stats.broken_closed += 1
                    await quietly(self._host.disconnect(pid))
            failed = Unopened if stream is None else TransportError
            raise failed(f"request to {peer_id} failed: {describe(exc)}") from None
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await quietly(stream.close())
        return response

    def _remind_addrs(self, pid: ID) -> None:
        """Give py-libp2p's peer store our addresses of ``pid`` if we are not connected to it."""
        if pid in self._host.get_connected_peers():
            return
        addrs = self.known_addrs(pid.to_base58())
        if addrs:
            self._host.get_peerstore().add_addrs(pid, addrs, ADDR_TTL)

    async def serve_sync(self, stream: INetStream) -> None:
        """Stream handler of :data:`SYNC_PROTOCOL`: answer one request with :attr:`handler`."""
        peer_id = remote_peer(stream)
        try:
            request = await read_frame(stream_reader(stream), self._config.max_frame)
            if self.handler is None:
                raise TransportError("no request handler is set")
            self._stats.bytes_in += len(request)
            response = await self.handler(peer_id, request)
            await stream.write(encode_frame(response, self._config.max_frame))
            self._stats.requests_served += 1
            self._stats.bytes_out += len(response)
            await stream.close()
        except Exception as exc:
            log.debug("sync request from %s failed: %s", peer_id, describe(exc))
            await quietly(stream.reset())


def broken(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says the connection itself is gone: the remote reset
    the TCP connection. At 64 peers in 8 processes, 262 requests failed so ("Failed to send
    SYN: TCP connection reset by remote peer") on connections py-libp2p still listed as open."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain of causes, not a cycle
        if seen is None:
            break
        if isinstance(seen, (ConnectionClosedError, trio.BrokenResourceError)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
