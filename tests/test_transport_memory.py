"""The in-memory transport (delivery, requests, simulated faults) and the pure helpers
of the libp2p transport (frames, the peer book). Fast: no libp2p import."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio

from specswarm.errors import TransportError
from specswarm.transport import MemoryTransport, Transport, open_memory_network
from specswarm.transport._frames import FrameError, encode_frame, read_frame
from specswarm.transport._peerbook import PeerBook, split_p2p_addr


def trio_test(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test function under ``trio.run`` (no plugin needed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        trio.run(functools.partial(fn, *args, **kwargs))

    return wrapper


async def drain(t: MemoryTransport) -> list[tuple[str, bytes]]:
    """Everything already delivered to ``t`` (no waiting)."""
    out = []
    while True:
        try:
            out.append(t.incoming().receive_nowait())
        except trio.WouldBlock:
            return out


@trio_test
async def test_gossip_reaches_every_other_subscriber_but_not_the_sender() -> None:
    async with open_memory_network() as net:
        a, b, c = (net.add_peer(p, topic="t") for p in "abc")
        assert isinstance(a, Transport)
        await a.publish(b"x")
        assert await drain(b) == [("a", b"x")]
        assert await drain(c) == [("a", b"x")]
        assert await drain(a) == []
        assert (a.stats.published, a.stats.bytes_out) == (1, 1)
        assert (b.stats.received, b.stats.bytes_in) == (1, 1)


@trio_test
async def test_only_subscribers_of_the_topic_receive_and_late_subscribe_works() -> None:
    async with open_memory_network() as net:
        a = net.add_peer("a", topic="run-1")
        joiner = net.add_peer("j")
        await a.publish(b"before")
        assert await drain(joiner) == []
        with pytest.raises(TransportError, match="cannot publish before subscribing"):
            await joiner.publish(b"nope")
        await joiner.subscribe("run-1")
        await a.publish(b"after")
        assert await drain(joiner) == [("a", b"after")]


@trio_test
async def test_validator_rejections_are_counted_and_not_delivered() -> None:
    async with open_memory_network() as net:
        a = net.add_peer("a", topic="t")
        b = net.add_peer("b", topic="t")

        def validator(sender: str, data: bytes) -> bool:
            if data == b"boom":
                raise ValueError("validator bug")
            return sender == "a" and data.startswith(b"ok")

        b.set_validator(validator)
        for payload in (b"ok-1", b"bad", b"boom", b"ok-2"):
            await a.publish(payload)
        assert await drain(b) == [("a", b"ok-1"), ("a", b"ok-2")]
        assert b.stats.dropped_invalid == 2
        assert b.stats.received == 2


@trio_test
async def test_loss_is_a_seeded_fraction() -> None:
    async def run(seed: int) -> int:
        async with open_memory_network(seed=seed, loss=0.3) as net:
            a = net.add_peer("a", topic="t")
            b = net.add_peer("b", topic="t")
            for i in range(1000):
                await a.publish(str(i).encode())
            return len(await drain(b))

    first = await run(1)
    assert 650 <= first <= 750
    assert await run(1) == first
    assert await run(2) != first


@trio_test
async def test_duplicates_arrive_twice() -> None:
    async with open_memory_network(seed=3, duplicate=1.0) as net:
        a = net.add_peer("a", topic="t")
        b = net.add_peer("b", topic="t")
        await a.publish(b"d")
        assert await drain(b) == [("a", b"d"), ("a", b"d")]
        assert b.stats.received == 2


@trio_test
async def test_delay_holds_delivery_back() -> None:
    async with open_memory_network(delay=0.05, jitter=0.01) as net:
        a = net.add_peer("a", topic="t")
        b = net.add_peer("b", topic="t")
        start = trio.current_time()
        await a.publish(b"late")
        assert await drain(b) == []
        with trio.fail_after(1):
            assert await b.incoming().receive() == ("a", b"late")
        assert 0.05 <= trio.current_time() - start < 0.5


@trio_test
async def test_partition_blocks_gossip_and_requests_until_healed() -> None:
    async with open_memory_network() as net:
        a, b, c = (net.add_peer(p, topic="t") for p in "abc")

        async def echo(sender: str, data: bytes) -> bytes:
            return sender.encode() + b":" + data

        c.set_request_handler(echo)
        net.partition(["a"], ["b", "c"])
        assert a.peers() == []
        assert b.peers() == ["c"]
        await a.publish(b"lost")
        assert await drain(b) == [] and await drain(c) == []
        with pytest.raises(TransportError, match="peer c is not reachable"):
            await a.request("c", b"q")
        assert a.stats.requests_failed == 1

        net.heal()
        assert a.peers() == ["b", "c"]
        assert await a.request("c", b"q") == b"a:q"
        assert c.stats.requests_served == 1

        net.isolate("c")
        assert a.peers() == ["b"] and c.peers() == []


@trio_test
async def test_in_flight_messages_are_lost_when_a_partition_starts() -> None:
    async with open_memory_network(delay=0.05) as net:
        a = net.add_peer("a", topic="t")
        b = net.add_peer("b", topic="t")
        await a.publish(b"in-flight")
        net.isolate("b")
        await trio.sleep(0.1)
        assert await drain(b) == []


@trio_test
async def test_request_errors_timeouts_and_departed_peers() -> None:
    async with open_memory_network() as net:
        a = net.add_peer("a")
        b = net.add_peer("b")
        with pytest.raises(TransportError, match="peer b serves no requests"):
            await a.request("b", b"?")

        async def slow(sender: str, data: bytes) -> bytes:
            await trio.sleep(10)
            return b""

        b.set_request_handler(slow)
        with pytest.raises(TransportError, match=r"request to b timed out after 0.05 s"):
            await a.request("b", b"?", timeout=0.05)

        async def broken(sender: str, data: bytes) -> bytes:
            raise RuntimeError("disk on fire")

        b.set_request_handler(broken)
        with pytest.raises(TransportError, match="peer b failed to answer: disk on fire"):
            await a.request("b", b"?")

        await b.aclose()
        with pytest.raises(TransportError, match="peer b is not reachable"):
            await a.request("b", b"?")
        with pytest.raises(TransportError, match="transport of b is closed"):
            await b.request("a", b"?")
        assert a.stats.requests_made == 4 and a.stats.requests_failed == 4
        assert a.stats.requests_timed_out == 1


@trio_test
async def test_wait_helpers_wait_for_the_condition() -> None:
    async with open_memory_network() as net:
        a = net.add_peer("a", topic="t")
        with pytest.raises(TransportError, match="timed out after 0.01 s waiting for 1 peer"):
            await a.wait_for_peers(1, timeout=0.01)

        async def join_later() -> None:
            await trio.sleep(0.02)
            b = net.add_peer("b")
            await trio.sleep(0.02)
            await b.subscribe("t")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(join_later)
            await a.wait_for_peers(1, timeout=1)
            assert a.peers() == ["b"]
            await a.wait_for_mesh(timeout=1)


@trio_test
async def test_incoming_overflow_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("specswarm.transport.memory.INCOMING_BUFFER", 2)
    async with open_memory_network() as net:
        a = net.add_peer("a", topic="t")
        b = net.add_peer("b", topic="t")
        for i in range(5):
            await a.publish(bytes([i]))
        assert len(await drain(b)) == 2
        assert b.stats.dropped_overflow == 3


@trio_test
async def test_open_peer_closes_and_bad_knobs_are_named() -> None:
    async with open_memory_network() as net:
        async with net.open_peer("x") as x:
            assert x.addrs() == ["/memory/p2p/x"]
        with pytest.raises(ValueError, match="peer_id 'y' is already on this network"):
            net.add_peer("y")
            net.add_peer("y")
    with pytest.raises(ValueError, match="loss must be between 0 and 1, got 2"):
        async with open_memory_network(loss=2):
            pass
    with pytest.raises(ValueError, match="delay must be non-negative, got -1"):
        async with open_memory_network(delay=-1):
            pass


@trio_test
async def test_errors_from_the_body_are_not_wrapped_in_a_group() -> None:
    with pytest.raises(TransportError, match="^plain$"):
        async with open_memory_network(delay=0.01) as net:
            await net.add_peer("a", topic="t").publish(b"x")
            raise TransportError("plain")


# ----- pure helpers of the libp2p transport (no libp2p import) -------------------


def reader_of(data: bytes, chunk: int = 3) -> Callable[[int], Awaitable[bytes]]:
    """A ``read(n)`` over ``data`` that returns at most ``chunk`` bytes at a time."""
    buffer = bytearray(data)

    async def read(n: int) -> bytes:
        out = bytes(buffer[: min(n, chunk)])
        del buffer[: len(out)]
        return out

    return read


@trio_test
async def test_frames_round_trip_in_pieces_and_reject_bad_input() -> None:
    wire = encode_frame(b"hello") + encode_frame(b"")
    read = reader_of(wire)
    assert await read_frame(read) == b"hello"
    assert await read_frame(read) == b""
    with pytest.raises(FrameError, match="stream ended 4 bytes short of a 4-byte read"):
        await read_frame(read)
    with pytest.raises(FrameError, match="stream ended 2 bytes short of a 5-byte read"):
        await read_frame(reader_of(encode_frame(b"hello")[:-2]))
    with pytest.raises(FrameError, match="frame of 11 bytes exceeds the limit of 10"):
        await read_frame(reader_of(encode_frame(b"x" * 11)), max_frame=10)
    with pytest.raises(FrameError, match="frame of 11 bytes exceeds the limit of 10"):
        encode_frame(b"x" * 11, max_frame=10)


def test_split_p2p_addr() -> None:
    assert split_p2p_addr("/ip4/127.0.0.1/tcp/1/p2p/QmX") == ("/ip4/127.0.0.1/tcp/1", "QmX")
    assert split_p2p_addr("/p2p/QmX") == ("", "QmX")
    with pytest.raises(ValueError, match=r"does not end in /p2p/<peer id>"):
        split_p2p_addr("/ip4/127.0.0.1/tcp/1")


def test_peerbook_backs_off_resets_and_forgets_only_non_sticky_peers() -> None:
    book = PeerBook("me", min_backoff=1, max_backoff=4, sticky_max_backoff=2, forget_after=10)
    assert book.add("/ip4/127.0.0.1/tcp/1/p2p/me") is None
    assert book.add("/ip4/127.0.0.1/tcp/1/p2p/boot", sticky=True) == "boot"
    book.add("/ip4/127.0.0.1/tcp/2/p2p/learned")
    book.add("/ip4/127.0.0.2/tcp/2/p2p/learned")
    assert book.due(set(), now=0) == ["boot", "learned"]
    assert book.due({"boot"}, now=0) == ["learned"]
    assert book.addrs_of({"learned"}) == [
        "/ip4/127.0.0.1/tcp/2/p2p/learned",
        "/ip4/127.0.0.2/tcp/2/p2p/learned",
    ]

    book.dialing("learned", now=0, dial_timeout=5)
    assert book.due(set(), now=1) == ["boot"]
    delays = []
    for now in (0, 1, 3, 7):
        book.failed("learned", now)
        book.failed("boot", now)
        delays.append((book.peers["learned"].next_try - now, book.peers["boot"].next_try - now))
    assert delays == [(1, 1), (2, 2), (4, 2), (4, 2)]
    assert book.next_due(set()) == 9

    book.succeeded("boot")
    book.failed("boot", 20)
    assert book.peers["boot"].next_try == 21  # backoff reset to the minimum
    book.failed("learned", 10)  # failing since 0: forgotten
    book.failed("boot", 1000)
    assert set(book.peers) == {"boot"}


def test_peerbook_gives_at_most_room_peers_sticky_first_the_rest_spread() -> None:
    book = PeerBook("me")
    book.add("/ip4/127.0.0.1/tcp/1/p2p/boot", sticky=True)
    for i in range(20):
        book.add(f"/ip4/127.0.0.1/tcp/{100 + i}/p2p/p{i:02d}")
    assert len(book.due(set(), now=0)) == 21  # no room given: every due peer
    assert book.due(set(), now=0, room=0) == []
    assert book.due(set(), now=0, room=-3) == []
    picks = [book.due(set(), now=0, room=3) for _ in range(30)]
    assert all(len(p) == 3 and p[0] == "boot" and len(set(p)) == 3 for p in picks)
    # the rest at random, not the same lowest ids for every peer of a swarm
    assert len({q for p in picks for q in p[1:]}) > 5
    assert book.due({"boot"}, now=0, room=2)[0] != "boot"
