"""A connection the remote has reset, that py-libp2p 0.8.1 still lists as open, is closed by the
request that finds it broken. At 64 peers in 8 processes 262 requests failed with "Failed to send
SYN: TCP connection reset by remote peer" on such connections: every request and gossip message
to that peer failed the same way, and the dialer never replaced it (it looked connected)."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from libp2p.crypto.ed25519 import create_new_key_pair
from libp2p.io.exceptions import ConnectionClosedError
from libp2p.peer.id import ID
from libp2p.stream_muxer.exceptions import MuxedStreamError

from specswarm.errors import TransportError
from specswarm.transport._config import P2PConfig
from specswarm.transport._reqresp import SYNC_PROTOCOL, RequestResponse, broken
from specswarm.transport.base import TransportStats

PEER = ID.from_pubkey(create_new_key_pair(b"\x07" * 32).public_key)


def _syn_failure() -> MuxedStreamError:
    """What yamux raises when the SYN of a new stream cannot be written (as py-libp2p chains it)."""
    try:
        try:
            raise ConnectionClosedError("TCP connection reset by remote peer: [Errno 104]", transport="tcp")
        except ConnectionClosedError as exc:
            raise MuxedStreamError(f"Failed to send SYN: {exc}") from exc
    except MuxedStreamError as outer:
        return outer


class _Network:
    def unblock_peer(self, peer: ID) -> None:
        pass


class _Host:
    """A host whose one connection (to PEER) fails every new stream with ``failure``."""

    def __init__(self, failure: Exception) -> None:
        self.failure = failure
        self.connected = [PEER]
        self.disconnected: list[ID] = []

    def get_network(self) -> _Network:
        return _Network()

    def get_connected_peers(self) -> list[ID]:
        return list(self.connected)

    async def new_stream(self, peer: ID, protocols: list[Any]) -> Any:
        raise self.failure

    async def disconnect(self, peer: ID) -> None:
        self.disconnected.append(peer)
        self.connected.remove(peer)


def _call(host: _Host) -> TransportStats:
    stats = TransportStats()
    calls = RequestResponse(host, P2PConfig(), stats)  # type: ignore[arg-type]

    async def main() -> None:
        with pytest.raises(TransportError, match="reset by remote peer|timed out"):
            await calls.call(PEER.to_base58(), SYNC_PROTOCOL, b"{}")

    trio.run(main)
    return stats


def test_a_reset_connection_is_recognised_through_the_chain_of_causes() -> None:
    assert broken(_syn_failure())
    assert broken(trio.BrokenResourceError())
    assert not broken(MuxedStreamError("stream limit exceeded"))
    assert not broken(TimeoutError("response timed out after 10s"))


def test_a_request_that_finds_its_connection_reset_closes_it() -> None:
    host = _Host(_syn_failure())
    stats = _call(host)
    assert host.disconnected == [PEER] and stats.broken_closed == 1


def test_a_request_that_merely_times_out_leaves_the_connection_open() -> None:
    """A slow peer (CPU-starved) is not a broken one: its connection stays."""
    host = _Host(TimeoutError("response timed out after 10s"))
    stats = _call(host)
    assert host.disconnected == [] and stats.broken_closed == 0
