"""The libp2p transport on a real network: separate OS processes on loopback.

Every peer is ``tests/helpers/p2p_peer.py`` in its own process, driven by JSON
lines. Tests wait for conditions (a message, a connection) under deadlines,
never for fixed times. Only 127.0.0.1 is used, except in the mDNS test, which
runs inside network namespaces it creates and removes.
"""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from specswarm.ports import free_port
from tests.netns import veth_pair

pytestmark = pytest.mark.slow

HELPER = Path(__file__).parent / "helpers" / "p2p_peer.py"
TOPIC = "specswarm-test"


def trio_test(fn: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test function under ``trio.run`` (no plugin needed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        trio.run(functools.partial(fn, *args, **kwargs))

    return wrapper


class Peer:
    """A peer process and the JSON events it printed."""

    def __init__(self, name: str, proc: trio.Process, stderr: Any) -> None:
        self.name = name
        self.proc = proc
        self.stderr = stderr
        self.id = ""
        self.addrs: list[str] = []
        self.messages: list[tuple[str, str]] = []
        self._buffer = b""
        self._events: list[dict[str, Any]] = []

    async def _next(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await self.proc.stdout.receive_some(65536)
            if not chunk:
                raise AssertionError(f"peer {self.name} exited: {self.stderr_text()}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        event: dict[str, Any] = json.loads(line)
        if event["event"] == "msg":
            self.messages.append((event["from"], event["data"]))
        return event

    async def expect(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 20) -> dict[str, Any]:
        """The first event (past or future) matching ``pred``."""
        with trio.fail_after(timeout):
            for i, event in enumerate(self._events):
                if pred(event):
                    return self._events.pop(i)
            while True:
                event = await self._next()
                if pred(event):
                    return event
                if event["event"] != "msg":
                    self._events.append(event)

    async def wait_messages(self, pred: Callable[[list[tuple[str, str]]], bool], timeout: float = 20) -> None:
        """Wait until the messages received so far satisfy ``pred``."""
        with trio.fail_after(timeout):
            while not pred(self.messages):
                event = await self._next()
                if event["event"] != "msg":
                    self._events.append(event)

    async def call(self, deadline: float = 30, **cmd: Any) -> dict[str, Any]:
        """Send a command and return its ``done`` event (fail on ``error``)."""
        assert self.proc.stdin is not None
        await self.proc.stdin.send_all((json.dumps(cmd) + "\n").encode())
        event = await self.expect(
            lambda e: e["event"] in ("done", "error") and e.get("cmd") == cmd["cmd"], deadline
        )
        assert event["event"] == "done", f"{self.name}: {event}"
        return event

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return str(self.stderr.read().decode(errors="replace"))


def seed(name: str) -> str:
    return (name.encode() * 32)[:32].hex()


class Swarm:
    """Starts peer processes and stops them all at the end."""

    def __init__(self) -> None:
        self.peers: list[Peer] = []

    async def start(self, name: str, *args: str, prefix: tuple[str, ...] = (), wait: bool = True) -> Peer:
        stderr = tempfile.TemporaryFile()
        proc = await trio.lowlevel.open_process(
            [*prefix, sys.executable, str(HELPER), "--seed", seed(name), "--topic", TOPIC, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        peer = Peer(name, proc, stderr)
        self.peers.append(peer)
        if wait:
            await self.ready(peer)
        return peer

    async def ready(self, peer: Peer) -> None:
        event = await peer.expect(lambda e: e["event"] == "ready", timeout=30)
        peer.id, peer.addrs = event["id"], event["addrs"]

    async def stop(self) -> None:
        """Close every stdin (a clean exit), then make sure all are gone."""
        for peer in self.peers:
            if peer.proc.returncode is None and peer.proc.stdin is not None:
                try:
                    await peer.proc.stdin.aclose()
                except trio.BrokenResourceError:
                    pass
        with trio.move_on_after(15):
            for peer in self.peers:
                await peer.proc.wait()
        for peer in self.peers:
            if peer.proc.returncode is None:
                peer.proc.kill()
                await peer.proc.wait()

    def assert_quiet(self, *, killed: tuple[Peer, ...] = ()) -> None:
        """Peers that were not killed exited 0 and printed nothing on stderr."""
        for peer in self.peers:
            if peer in killed:
                continue
            assert peer.proc.returncode == 0, f"{peer.name}: rc={peer.proc.returncode}"
            assert peer.stderr_text() == "", f"{peer.name} stderr:\n{peer.stderr_text()}"


@trio_test
async def test_three_processes_gossip_both_ways_and_answer_requests() -> None:
    swarm = Swarm()
    try:
        a = await swarm.start("a")
        b = await swarm.start("b", "--bootstrap", a.addrs[0], wait=False)
        c = await swarm.start("c", "--bootstrap", a.addrs[0], wait=False)
        await swarm.ready(b)
        await swarm.ready(c)
        for p in (a, b, c):
            await p.call(cmd="wait_peers", n=2, timeout=20)
            await p.call(cmd="wait_mesh", n=2, timeout=20)

        for p in (a, b, c):
            await p.call(cmd="publish", data=f"from-{p.name}-{{i}}", count=5)
        for p in (a, b, c):
            others = {q.id for q in (a, b, c) if q is not p}
            await p.wait_messages(lambda m, o=others: {s for s, _ in m} == o and len(m) >= 10)
            assert sorted(m for _, m in p.messages) == sorted(
                f"from-{q.name}-{i}" for q in (a, b, c) if q is not p for i in range(5)
            )
            assert all(not m.startswith(f"from-{p.name}-") for _, m in p.messages)

        reply = await c.call(cmd="request", peer=a.id, data="pull")
        assert reply["reply"] == f"echo:{a.id}:pull"
        stats = (await a.call(cmd="stats"))["stats"]
        assert stats["requests_served"] == 1
        assert (stats["published"], stats["received"]) == (5, 10)
    finally:
        await swarm.stop()
    swarm.assert_quiet()


@pytest.mark.parametrize("shape", ["star", "chain"])
@trio_test
async def test_losing_the_first_or_middle_peer_partitions_nothing(shape: str) -> None:
    """star: B and C bootstrap from A, A dies. chain: A <- B <- C, B (the only link) dies."""
    swarm = Swarm()
    try:
        a = await swarm.start("a")
        b = await swarm.start("b", "--bootstrap", a.addrs[0])
        c = await swarm.start("c", "--bootstrap", (a if shape == "star" else b).addrs[0])
        # Address exchange makes the full mesh: everyone reaches everyone directly.
        for p in (a, b, c):
            await p.call(cmd="wait_peers", n=2, timeout=20)
        victim = a if shape == "star" else b
        left, right = [p for p in (a, b, c) if p is not victim]
        victim.proc.kill()
        await victim.proc.wait()

        await left.call(cmd="wait_mesh", n=1, timeout=20)
        await right.call(cmd="wait_mesh", n=1, timeout=20)
        await left.call(cmd="publish", data="after-kill-left")
        await right.call(cmd="publish", data="after-kill-right")
        await right.wait_messages(lambda m: (left.id, "after-kill-left") in m)
        await left.wait_messages(lambda m: (right.id, "after-kill-right") in m)
        assert (await left.call(cmd="request", peer=right.id, data="x"))["reply"] == (f"echo:{right.id}:x")
    finally:
        await swarm.stop()
    swarm.assert_quiet(killed=(a if shape == "star" else b,))


@trio_test
async def test_a_hub_passes_a_new_spoke_on_at_once() -> None:
    """B reached A before C did: A tells B of C when C arrives, not at its next periodic round
    (disabled here: one hour), so killing A right after C reached it partitions nothing."""
    swarm = Swarm()
    hour = ("--exchange-interval", "3600")
    try:
        a = await swarm.start("a", *hour)
        b = await swarm.start("b", "--bootstrap", a.addrs[0], *hour)
        await b.call(cmd="wait_peers", n=1, timeout=20)
        c = await swarm.start("c", "--bootstrap", a.addrs[0], *hour)
        await b.call(cmd="wait_peers", n=2, timeout=20)
        await c.call(cmd="wait_peers", n=2, timeout=20)
    finally:
        await swarm.stop()
    swarm.assert_quiet()


@trio_test
async def test_a_bootstrap_peer_that_starts_late_is_retried() -> None:
    from specswarm.transport.p2p import peer_id_from_seed

    swarm = Swarm()
    try:
        port = free_port()
        late_addr = f"/ip4/127.0.0.1/tcp/{port}/p2p/{peer_id_from_seed(bytes.fromhex(seed('b')))}"
        a = await swarm.start("a", "--bootstrap", late_addr)
        await trio.sleep(3)  # the scenario itself: B starts 3 s after A
        b = await swarm.start("b", "--listen", f"/ip4/127.0.0.1/tcp/{port}")
        assert b.addrs[0] == late_addr
        await a.call(cmd="wait_peers", n=1, timeout=20)
        await a.call(cmd="wait_mesh", n=1, timeout=20)
        await b.call(cmd="wait_mesh", n=1, timeout=20)
        await b.call(cmd="publish", data="hello-late")
        await a.wait_messages(lambda m: m == [(b.id, "hello-late")])
    finally:
        await swarm.stop()
    swarm.assert_quiet()


@trio_test
async def test_validator_rejections_are_counted_and_not_delivered() -> None:
    """B's validator rejects "bad:" messages: counted, never delivered (nor forwarded)."""
    swarm = Swarm()
    try:
        a = await swarm.start("a")
        b = await swarm.start("b", "--bootstrap", a.addrs[0], "--reject", "bad:")
        await a.call(cmd="wait_mesh", n=1, timeout=20)
        await b.call(cmd="wait_mesh", n=1, timeout=20)
        await a.call(cmd="publish", data="bad:{i}", count=3)
        await a.call(cmd="publish", data="good")
        await b.wait_messages(lambda m: (a.id, "good") in m)
        assert b.messages == [(a.id, "good")]
        stats = (await b.call(cmd="stats"))["stats"]
        assert stats["dropped_invalid"] == 3
        assert stats["received"] == 1
    finally:
        await swarm.stop()
    swarm.assert_quiet()


# ----- mDNS inside network namespaces ---------------------------------------------


@pytest.mark.netns
@trio_test
async def test_mdns_discovery_inside_network_namespaces() -> None:
    """Two namespaces joined by a veth pair (10.77.x addresses that exist only there)."""
    swarm = Swarm()
    with veth_pair("10.77.0") as (one, two):
        try:
            a = await swarm.start("a", "--mdns", "--listen", f"/ip4/{one.addr}/tcp/0", prefix=one.prefix)
            b = await swarm.start("b", "--mdns", "--listen", f"/ip4/{two.addr}/tcp/0", prefix=two.prefix)
            await a.call(cmd="wait_peers", n=1, timeout=30)
            await b.call(cmd="wait_mesh", n=1, timeout=20)
            await a.call(cmd="wait_mesh", n=1, timeout=20)
            await a.call(cmd="publish", data="found-you")
            await b.wait_messages(lambda m: m == [(a.id, "found-you")])
        finally:
            await swarm.stop()
    swarm.assert_quiet()


@trio_test
async def test_signals_stop_a_peer_cleanly() -> None:
    swarm = Swarm()
    try:
        a = await swarm.start("a")
        b = await swarm.start("b", "--bootstrap", a.addrs[0])
        await b.call(cmd="wait_mesh", n=1, timeout=20)
        a.proc.send_signal(signal.SIGINT)
        b.proc.send_signal(signal.SIGTERM)
        with trio.fail_after(15):
            assert await a.proc.wait() == 0
            assert await b.proc.wait() == 0
    finally:
        await swarm.stop()
    swarm.assert_quiet()


# ----- in one process: errors, and nothing printed ----------------------------------


@trio_test
async def test_bad_arguments_are_named(capfd: pytest.CaptureFixture[str]) -> None:
    from specswarm.errors import TransportError
    from specswarm.transport.p2p import open_libp2p_transport

    with pytest.raises(ValueError, match="^seed must be 32 bytes, got 3$"):
        async with open_libp2p_transport(b"abc"):
            pass
    with pytest.raises(TransportError, match="^bad listen address 'garbage': "):
        async with open_libp2p_transport(bytes(32), listen="garbage"):
            pass
    with pytest.raises(
        TransportError,
        match=r"^bad bootstrap address: address '/ip4/127.0.0.1/tcp/9' does not end in /p2p/<peer id>$",
    ):
        async with open_libp2p_transport(bytes(32), bootstrap=["/ip4/127.0.0.1/tcp/9"]):
            pass
    async with open_libp2p_transport(bytes(32)) as t:
        port = t.addrs()[0].split("/")[4]
        with pytest.raises(TransportError, match=f"^cannot listen on /ip4/127.0.0.1/tcp/{port}: "):
            async with open_libp2p_transport(bytes([1]) * 32, listen=f"/ip4/127.0.0.1/tcp/{port}"):
                pass
        with pytest.raises(TransportError, match="^cannot publish before subscribing to a topic$"):
            await t.publish(b"x")
    assert capfd.readouterr() == ("", "")


@trio_test
async def test_request_failures_are_transport_errors(capfd: pytest.CaptureFixture[str]) -> None:
    from specswarm.errors import TransportError
    from specswarm.transport.p2p import open_libp2p_transport, peer_id_from_seed

    async with (
        open_libp2p_transport(bytes([1]) * 32, topic="t") as a,
        open_libp2p_transport(bytes([2]) * 32, topic="t", bootstrap=a.addrs()) as b,
    ):
        await b.wait_for_peers(1, timeout=20)
        with pytest.raises(TransportError, match=f"^request to {a.local_id} failed: "):
            await b.request(a.local_id, b"no handler yet")

        async def handler(sender: str, data: bytes) -> bytes:
            if data == b"slow":
                await trio.sleep(5)
            if data == b"boom":
                raise RuntimeError("handler bug")
            return sender.encode()

        a.set_request_handler(handler)
        assert await b.request(a.local_id, b"who am I") == b.local_id.encode()
        with pytest.raises(TransportError, match=f"^request to {a.local_id} failed: "):
            await b.request(a.local_id, b"boom")
        with pytest.raises(TransportError, match=f"^request to {a.local_id} timed out after 0.2 s$"):
            await b.request(a.local_id, b"slow", timeout=0.2)
        stranger = peer_id_from_seed(bytes([3]) * 32)
        with pytest.raises(TransportError, match=f"^request to {stranger} failed: "):
            await b.request(stranger, b"?", timeout=5)
        with pytest.raises(TransportError, match="^bad peer id '0OIl'$"):
            await b.request("0OIl", b"?")
        stats = b.stats
        # of the five failures: one ran out of time, one (the stranger) found no way to its peer
        assert (stats.requests_made, stats.requests_failed) == (6, 5)
        assert (stats.requests_timed_out, stats.requests_unopened) == (1, 1)
        assert a.stats.requests_served == 1
    assert capfd.readouterr() == ("", "")


@trio_test
async def test_cancellation_shuts_down_quietly(capfd: pytest.CaptureFixture[str]) -> None:
    from specswarm.transport.p2p import open_libp2p_transport

    with trio.move_on_after(20) as outer:
        async with trio.open_nursery() as nursery:

            async def peer(n: int, bootstrap: list[str], task_status: Any) -> None:
                async with open_libp2p_transport(bytes([n]) * 32, bootstrap=bootstrap, topic="t") as t:
                    task_status.started(t)
                    await trio.sleep_forever()

            a = await nursery.start(peer, 1, [])
            b = await nursery.start(peer, 2, a.addrs())
            await b.wait_for_mesh(timeout=15)
            await a.wait_for_mesh(timeout=15)
            await a.publish(b"bye")
            with trio.fail_after(10):
                assert await b.incoming().receive() == (a.local_id, b"bye")
            nursery.cancel_scope.cancel()
    assert not outer.cancelled_caught
    assert capfd.readouterr() == ("", "")


def test_quiet_exchange_rounds_back_off_and_news_resets_them() -> None:
    from specswarm.transport._discovery import QUIET_BACKOFF_MAX, round_factor

    factors = [1]
    for _ in range(6):
        factors.append(round_factor(factors[-1], learned=False))
    assert factors == [1, 2, 4, 8, 8, 8, 8] and QUIET_BACKOFF_MAX == 8
    assert round_factor(8, learned=True) == 1


def test_one_exchange_at_a_time_per_peer_and_a_failed_one_backs_off() -> None:
    """A slow peer gets one exchange stream at a time however many rounds start meanwhile, and
    one that failed is asked again after a growing wait, not at the dialer's next look (9 peers
    on 2 cores made ~8 failing exchanges a second each before)."""
    from types import SimpleNamespace

    from specswarm.errors import TransportError
    from specswarm.transport._config import P2PConfig
    from specswarm.transport._discovery import PeerExchange

    in_flight, peak, calls = 0, 0, 0

    class SlowCalls:
        async def call(self, peer_id: str, protocol: object, data: bytes) -> bytes:
            nonlocal in_flight, peak, calls
            calls += 1
            in_flight += 1
            peak = max(peak, in_flight)
            try:
                await trio.sleep(0.3)
            finally:
                in_flight -= 1
            raise TransportError("too slow")

    host = SimpleNamespace(get_addrs=lambda: [], get_connected_peers=lambda: [])
    config = P2PConfig(dial_timeout=1.0, exchange_interval=5.0)
    px = PeerExchange("me", host, config, SlowCalls())  # type: ignore[arg-type]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(10):  # ten rounds start while the first exchange is still running
                px._start_exchange(nursery, "peer")
                await trio.sleep(0.01)
        assert calls == 1 and peak == 1
        first = px._retry_exchange["peer"] - trio.current_time()
        async with trio.open_nursery() as nursery:
            px._start_exchange(nursery, "peer")
        second = px._retry_exchange["peer"] - trio.current_time()
        assert 0.3 < first < 0.7 and 0.7 < second < 1.3  # 0.5 s, then 1 s (±20%)

    trio.run(main)


def test_a_periodic_exchange_round_asks_a_few_connected_peers_not_all() -> None:
    """At 32 peers on 2 cores every round asked all 31 connected peers: ~6 exchange streams a
    second per peer, 8 % of its CPU. A first contact is still exchanged with at once."""
    from types import SimpleNamespace

    import trio.testing

    from specswarm.transport._config import P2PConfig
    from specswarm.transport._discovery import ROUND_FANOUT, PeerExchange

    peers = [SimpleNamespace(to_base58=lambda i=i: f"peer{i:02d}") for i in range(31)]
    host = SimpleNamespace(get_addrs=lambda: [], get_connected_peers=lambda: peers)
    px = PeerExchange("me", host, P2PConfig(exchange_interval=5.0), None)  # type: ignore[arg-type]
    asked: list[tuple[float, str]] = []
    px._start_exchange = lambda nursery, peer: asked.append((trio.current_time(), peer))  # type: ignore[method-assign]

    async def main() -> None:
        with trio.move_on_after(30):
            async with trio.open_nursery() as nursery:
                await px.run_dialer(nursery)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    first = [p for t, p in asked if t == 0]
    rounds = [p for t, p in asked if t > 0]
    assert sorted(first) == [f"peer{i:02d}" for i in range(31)]  # first contact: every one
    assert rounds and len(rounds) <= ROUND_FANOUT * 6  # at most 6 rounds of 5 s in 30 s, a few each


def test_the_exchange_payload_is_remade_when_a_peer_connects_within_its_reuse_time() -> None:
    """A hub reusing a payload made before its last spokes arrived told them nothing of each
    other; killing the hub then left every spoke alone (chaos ``kill_first_peer``)."""
    from types import SimpleNamespace

    import trio.testing

    from specswarm.transport._config import P2PConfig
    from specswarm.transport._discovery import PAYLOAD_REUSE, PeerExchange

    connected: list[SimpleNamespace] = []
    host = SimpleNamespace(get_addrs=lambda: [], get_connected_peers=lambda: list(connected))
    px = PeerExchange("me", host, P2PConfig(), None)  # type: ignore[arg-type]

    def spoke(n: int) -> str:
        peer = SimpleNamespace(to_base58=lambda: f"spoke{n}")
        connected.append(peer)
        px._book.add(f"/ip4/127.0.0.1/tcp/{4000 + n}/p2p/spoke{n}", now=trio.current_time())
        return f"spoke{n}"

    async def main() -> None:
        spoke(1)
        first = json.loads(px._payload())["peers"]
        assert px._payload() is px._payload()  # unchanged swarm: reused
        await trio.sleep(PAYLOAD_REUSE / 4)
        spoke(2)
        second = json.loads(px._payload())["peers"]
        assert [a.rsplit("/", 1)[1] for a in first] == ["spoke1"]
        assert [a.rsplit("/", 1)[1] for a in second] == ["spoke1", "spoke2"]

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


@trio_test
async def test_a_request_to_a_peer_we_are_not_connected_to_dials_the_address_we_learned() -> None:
    """py-libp2p dials only what its own peer store holds, and forgets dialled addresses after
    120 s: at 64 peers 305 of 693 anti-entropy pulls failed with "No known addresses" to a peer
    whose announcement was relayed to us. A call dials the address the peer exchange learned."""
    from specswarm.transport.p2p import open_libp2p_transport

    async with (
        open_libp2p_transport(bytes([1]) * 32, topic="t") as a,
        open_libp2p_transport(bytes([2]) * 32, topic="t", bootstrap=a.addrs()) as b,
    ):

        async def handler(sender: str, data: bytes) -> bytes:
            return data[::-1]

        b.set_request_handler(handler)
        await a.wait_for_peers(1, timeout=20)
        with trio.fail_after(20):
            while not a._exchange.dial_addrs(b.local_id):  # learned by peer exchange
                await trio.sleep(0.05)
        b_id = a._host.get_connected_peers()[0]
        assert b_id.to_base58() == b.local_id
        await a._host.disconnect(b_id)
        a._host.get_peerstore().clear_addrs(b_id)  # what 120 s do to it
        assert b.local_id not in a.peers()
        assert await a.request(b.local_id, b"olleh", timeout=10) == b"hello"


@trio_test
async def test_the_dialer_connects_up_to_its_target_and_replaces_a_lost_peer() -> None:
    """Dialling every known peer made a 32-peer swarm a full mesh of 496 connections, each one a
    cost to both ends for every message; GossipSub needs only its degree. A peer that knows three
    others with a target of two connects to two, and to the third when one of them goes."""
    from specswarm.transport._config import P2PConfig
    from specswarm.transport.p2p import Libp2pTransport, open_libp2p_transport

    async with trio.open_nursery() as nursery:
        stops: dict[str, trio.Event] = {}

        async def run(seed: int, boot: list[str], config: P2PConfig | None, task_status: Any) -> None:
            key = bytes([seed]) * 32
            async with open_libp2p_transport(key, topic="t", bootstrap=boot, config=config) as t:
                stops[t.local_id] = trio.Event()
                task_status.started(t)
                await stops[t.local_id].wait()

        others: list[Libp2pTransport] = [
            await nursery.start(functools.partial(run, seed, [], None)) for seed in (11, 12, 13)
        ]
        boot = [addr for t in others for addr in t.addrs()]
        a = await nursery.start(functools.partial(run, 10, boot, P2PConfig(dial_target=2)))
        await a.wait_for_peers(2, timeout=20)
        await trio.sleep(3)  # exchanges teach b, c, d of each other; a must not dial more
        first = set(a.peers())
        ids = {t.local_id for t in others}
        assert len(first) == 2 and first <= ids, first
        gone = sorted(first)[0]
        stops[gone].set()
        spare = (ids - first).pop()
        with trio.fail_after(30):
            while spare not in a.peers():
                await trio.sleep(0.1)
        assert gone not in a.peers() and len(a.peers()) == 2
        for stop in stops.values():
            stop.set()
