"""How often a node announces its event set: with every event it publishes (not when gossip
changed it), every DISAGREE_ANNOUNCE_EVERY rounds while a peer lags behind what it held a round
before, every QUIET_ANNOUNCE_EVERY rounds else. Each announcement costs every peer a delivery,
which dominated the idle CPU of a 9-peer swarm on 2 cores (and was 95 % of what each of 32 peers
received). In a swarm of more than ANNOUNCERS peers every one of those periods is
``peers / ANNOUNCERS`` times longer (the thinning by swarm size, issue 14)."""

from __future__ import annotations

import json
import random

import trio
import trio.testing

from specswarm.errors import TransportError
from specswarm.protocol.bodies import JoinBody
from specswarm.protocol.events import make_event, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import spec_from_json
from specswarm.swarm import antientropy, cadence
from specswarm.swarm.antientropy import AntiEntropy
from specswarm.swarm.cadence import ANNOUNCERS, Cadence, Heard
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.liveness import Liveness
from specswarm.swarm.store import EventStore
from specswarm.swarm.wire import HaveMsg
from tests.swarmkit import swarm_spec


class Recorder:
    def __init__(self) -> None:
        self.published: list[bytes] = []

    def peers(self) -> list[str]:
        return ["other"]

    async def publish(self, data: bytes) -> None:
        self.published.append(data)


def _rounds(sync: AntiEntropy, transport: Recorder, rounds: int, *, disagree: bool) -> int:
    """Announcements made in ``rounds`` announcement intervals (virtual time); ``disagree``: a
    peer keeps announcing that it holds two events, fewer than we have held all along."""
    before = len(transport.published)

    async def main() -> None:
        with trio.move_on_after(rounds):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sync.announce_loop)
                while True:
                    if disagree:  # a peer keeps announcing a set behind ours
                        sync._peer_have["other"] = Heard(2, "2:other", trio.current_time())
                    await trio.sleep(0.1)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return len(transport.published) - before


def _sync(transport: Recorder, counters: NodeCounters, peers: int = 0, executors: int = 2) -> AntiEntropy:
    """A scorer's anti-entropy over a store holding a run that ``peers`` peers have joined (its
    spec declares 3 decomposers, 3 scorers and ``executors`` executors)."""
    store = EventStore(counters)
    if peers:
        spec = spec_from_json(swarm_spec(executors=executors))
        run_event = make_run_event(Identity(b"\x01" * 32), spec, nonce="announce")
        store.adopt_run(run_event)
        for i in range(peers):
            author = Identity(i.to_bytes(2, "big") * 16)
            body = JoinBody(role="executor", strategy=None, admission=None)
            store.add(make_event(author, run_event.run, "join", 1, body))
        assert len(store.state.plan().roles) == peers
    return AntiEntropy(
        transport,  # type: ignore[arg-type]
        store,
        Liveness("me", transport),  # type: ignore[arg-type]
        "scorer",
        random.Random(1),
        lambda: 1.0,
    )


def test_a_quiet_agreeing_node_announces_once_in_five_rounds_and_a_disagreeing_one_in_two() -> None:
    transport = Recorder()
    counters = NodeCounters()
    sync = _sync(transport, counters, peers=ANNOUNCERS)  # no larger: a round is one interval
    first = _rounds(sync, transport, 1, disagree=False)
    assert first in (0, 1)  # the first round: our (empty) set has never been announced
    quiet = _rounds(sync, transport, 100, disagree=False)
    every = cadence.QUIET_ANNOUNCE_EVERY
    assert 100 / every * 0.7 <= quiet <= 100 / every * 1.4
    disagreeing = _rounds(sync, transport, 100, disagree=True)
    assert (
        100 / cadence.DISAGREE_ANNOUNCE_EVERY * 0.7
        <= disagreeing
        <= 100 / cadence.DISAGREE_ANNOUNCE_EVERY * 1.4
    )
    assert counters.announces == len(transport.published)


def test_in_a_large_swarm_each_cadence_is_stretched_by_peers_over_announcers() -> None:
    """4 * ANNOUNCERS peers: a round between two chances to announce is 4 intervals, so a node
    announces once in 20 intervals, and no sooner while a peer lags: at 64 peers in 8 processes a
    lagging peer somewhere kept every peer on the faster cadence (1,436 announcements for 310
    events, each delivered to every peer; no convergence in 7 minutes). A change of our own set
    is announced at the next chance (within about 4 intervals), not after the cadence."""
    transport = Recorder()
    counters = NodeCounters()
    sync = _sync(transport, counters, peers=4 * ANNOUNCERS)
    _rounds(sync, transport, 20, disagree=False)  # the first announcement of our set
    spread = 4 * cadence.QUIET_ANNOUNCE_EVERY
    quiet = _rounds(sync, transport, 400, disagree=False)
    assert 400 / spread * 0.7 <= quiet <= 400 / spread * 1.4
    disagreeing = _rounds(sync, transport, 400, disagree=True)  # no sooner: the quiet cadence
    assert 400 / spread * 0.7 <= disagreeing <= 400 / spread * 1.4
    sync.cadence.quiet_rounds = 0  # a quiet announcement was just made
    sync.cadence.last = "a set we no longer hold"  # our set changed since the last one...
    assert _rounds(sync, transport, 6, disagree=False) == 0  # ...by gossip: every peer has it
    counters.published += 1  # we published an event (Node.publish counts it)
    assert _rounds(sync, transport, 6, disagree=False) == 1


def test_a_peer_that_heard_few_joins_of_a_large_declared_swarm_does_not_hurry() -> None:
    """At 64 peers in 8 processes joins were slow to arrive, and peers that had heard few of them
    hurried as in a small swarm: every peer announced at every chance, 3,263 times in 7 min. The
    rounds still follow the joins heard (stretched by the declared size before its peers had
    joined, the 100-peer simulation took 121 virtual s, not 29)."""
    transport = Recorder()
    declared = _sync(transport, NodeCounters(), peers=2, executors=4 * ANNOUNCERS - 6)
    assert declared.period() == 1.0  # 2 joins heard, of 3 + 3 + 26 = 32 speakers declared
    _rounds(declared, transport, 1, disagree=False)
    disagreeing = _rounds(declared, transport, 100, disagree=True)
    every = cadence.QUIET_ANNOUNCE_EVERY
    assert 100 / every * 0.7 <= disagreeing <= 100 / every * 1.4  # the quiet cadence
    small = _sync(transport, NodeCounters(), peers=2)  # 8 speakers declared
    _rounds(small, transport, 1, disagree=False)
    assert _rounds(small, transport, 100, disagree=True) >= 100 / cadence.DISAGREE_ANNOUNCE_EVERY * 0.7


def test_a_peer_ahead_of_us_or_only_a_moment_behind_is_not_lagging() -> None:
    cadence = Cadence()
    now, period = 100.0, 1.0
    cadence.held = [(now - 10, 5), (now - 5, 8)]
    peers = {"ahead": Heard(20, "20:ahead", now - 1)}
    assert cadence.lagging(now, 8, peers, period) is None
    # it announced 7 just after we reached 8: our newest event may have been in flight
    peers["moment"] = Heard(7, "7:moment", now - 4.5)
    assert cadence.lagging(now, 8, peers, period) is None
    # it announced 4 when we had held 5 for a round and more: gossip lost something on the way
    peers["behind"] = Heard(4, "4:behind", now - 4.5)
    assert cadence.lagging(now, 8, peers, period) == now - 4.5
    # an announcement too old to trust is not counted
    peers["behind"] = Heard(4, "4:behind", now - 30)
    assert cadence.lagging(now, 8, peers, period) is None


def test_an_extra_announcement_for_a_lagging_peer_is_dropped_once_a_peer_announced_our_set() -> None:
    """At 32 peers on 2 cores every peer ahead of a lagging one announced every second round,
    each telling it the same thing. Once a peer has announced our very set after the lagging
    peer spoke, the lagging peer knows whom to pull from; the quiet cadence still runs."""

    def announcements(echo: bool) -> list[int]:
        cadence = Cadence()
        cadence.announced("8:ours", 0)
        said = []
        for r in range(1, 21):
            now = float(r)
            cadence.held.append((now - 0.5, 8))
            peers = {"behind": Heard(4, "4:behind", now - 0.2)}
            if echo:
                peers["twin"] = Heard(8, "8:ours", now - 0.1)
            if cadence.due(now, "8:ours", 8, 0, peers, 1.0):
                said.append(r)
        return said

    every = cadence.QUIET_ANNOUNCE_EVERY
    alone = announcements(echo=False)
    assert alone == list(range(cadence.DISAGREE_ANNOUNCE_EVERY, 21, cadence.DISAGREE_ANNOUNCE_EVERY))
    assert announcements(echo=True) == list(range(every, 21, every))  # only the quiet cadence


def _pulls(announcements: list[tuple[int, str]], held_peers: int = 3) -> list[str]:
    """The peers pulled from after ``announcements`` (count, digest) of one peer "other",
    heard a round and a half apart by a node holding a run and ``held_peers`` joins."""
    sync = _sync(Recorder(), NodeCounters(), peers=held_peers)
    pulled: list[str] = []

    async def sync_with(peer: str, their_count: int | None = None) -> int:
        pulled.append(peer)
        return 0

    sync.sync_with = sync_with  # type: ignore[method-assign]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for n, digest in announcements:
                sync.on_have(nursery, "other", HaveMsg(n, digest))
                await trio.sleep(1.5)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return pulled


def test_a_peer_behind_us_is_pulled_from_once_it_announces_the_same_other_set_twice() -> None:
    """We hold 4 events (a run, 3 joins). A peer holding fewer is catching up while its set
    changes; announcing the same other set twice, it is stuck, and may hold what we lack (at 32
    peers one join stayed missing at 22 peers for 7 minutes, each of them holding more events
    than the peers that had it)."""
    assert _pulls([(2, "2:a"), (3, "3:b")]) == []  # behind and catching up: it pulls from us
    assert _pulls([(3, "3:b"), (3, "3:b")]) == ["other"]  # the same other set twice
    assert _pulls([(9, "9:c")]) == ["other"]  # ahead of us: pulled from at once, as before


def _pulled_from(
    neighbours: dict[str, tuple[int, str]], connected: list[str]
) -> list[tuple[str, int | None]]:
    """(peer, count asked for) of the pulls after a peer "far" announces 9 events: ``neighbours``
    announced (count, digest) before it; ``connected``: the peers we hold a connection to."""
    sync = _sync(Recorder(), NodeCounters(), peers=3)
    sync.transport.peers = lambda: connected  # type: ignore[method-assign]
    pulled: list[tuple[str, int | None]] = []

    async def sync_with(peer: str, their_count: int | None = None) -> int:
        pulled.append((peer, their_count))
        return 0

    sync.sync_with = sync_with  # type: ignore[method-assign]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for peer, (n, digest) in neighbours.items():
                sync._peer_have[peer] = Heard(n, digest, trio.current_time())
            sync.on_have(nursery, "far", HaveMsg(9, "9:far"))

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return pulled


def test_a_set_announced_by_a_peer_we_are_not_connected_to_is_pulled_from_a_neighbour() -> None:
    """In a partial mesh most announcements come from peers we hold no connection to (and often
    know no address of): at 64 peers in 8 processes 1,175 of 2,024 failed pulls were to such a
    peer. A neighbour that announced the same set holds all of it; one that announced more than
    we hold has something for us, and so has one that announced as many but another set; else
    the announcer is dialled."""
    same, ahead, behind = (9, "9:far"), (6, "6:x"), (2, "2:y")
    assert _pulled_from({"a": ahead, "b": same, "c": behind}, ["a", "b", "c"]) == [("b", 9)]
    assert _pulled_from({"a": ahead, "b": same, "c": behind}, ["a", "c"]) == [("a", 6)]
    assert _pulled_from({"a": ahead, "d": (4, "4:d")}, ["d"]) == [("d", 4)]  # as many, others
    assert _pulled_from({"c": behind}, ["c"]) == [("far", 9)]  # no neighbour has more than us
    assert _pulled_from({"b": same}, ["b", "far"]) == [("far", 9)]  # connected: the announcer
    assert _pulled_from({"b": same}, []) == [("far", 9)]


def test_a_peer_whose_pulls_fail_is_asked_less_and_less_often() -> None:
    """At 32 peers on 2 cores three pulls in four failed (a stream to a CPU-starved peer did not
    open within 10 s) and were retried at once, holding back every other repair."""
    counters = NodeCounters()
    sync = _sync(Recorder(), counters, peers=3)
    asked: list[float] = []

    async def request(peer: str, data: bytes, timeout: float = 0.0) -> bytes:
        asked.append(trio.current_time())
        raise TransportError("failed to open a stream")

    sync.transport.request = request  # type: ignore[attr-defined]

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(40):  # a peer ahead of us announces every half second for 20 s
                sync.on_have(nursery, "other", HaveMsg(9, "9:ahead"))
                await trio.sleep(0.5)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    gaps = [b - a for a, b in zip(asked, asked[1:], strict=False)]
    assert 2 <= len(asked) <= 4 and counters.sync_failures == len(asked)
    assert all(later > earlier for earlier, later in zip(gaps, gaps[1:], strict=False))  # backing off


def test_an_event_we_publish_carries_our_set_and_no_announcement_of_its_own_follows() -> None:
    """At 32 peers on 2 cores nearly every event had a round, and an announcement that every peer
    received, of its own (469 for 266 events). The event's gossip message carries the publisher's
    (count, digest) instead; a failed publish records nothing, so the next round announces."""
    from specswarm.swarm.wire import EventMsg, decode_gossip

    transport = Recorder()
    counters = NodeCounters()
    sync = _sync(transport, counters, peers=ANNOUNCERS)
    _rounds(sync, transport, 6, disagree=False)  # our set announced once
    me = Identity(b"\x07" * 32)
    assert sync.store.run_event is not None
    event = make_event(
        me, sync.store.run_id, "join", 9, JoinBody(role="scorer", strategy=None, admission=None)
    )
    sync.store.add(event)
    counters.published += 1

    trio.run(antientropy.gossip_event, sync, event)
    (data,) = transport.published[-1:]
    msg = decode_gossip(data, sync.store.run_id)
    assert isinstance(msg, EventMsg) and msg.event == event
    assert msg.have == HaveMsg(len(sync.store), sync.store.set_digest())
    assert _rounds(sync, transport, 4, disagree=False) == 0  # already announced with the event

    class Down(Recorder):
        async def publish(self, data: bytes) -> None:
            raise TransportError("no peers")

    down = Down()
    sync.transport = down  # type: ignore[assignment]
    other = make_event(
        me, sync.store.run_id, "join", 10, JoinBody(role="scorer", strategy="x", admission=None)
    )
    sync.store.add(other)
    counters.published += 1
    trio.run(antientropy.gossip_event, sync, other)  # best effort: no error
    sync.transport = transport  # type: ignore[assignment]
    assert _rounds(sync, transport, 2, disagree=False) == 1  # the round announces it after all


def test_a_malformed_set_on_an_event_message_is_refused_like_a_malformed_announcement() -> None:
    from specswarm.swarm.wire import EventMsg, Refused, decode_gossip, encode_event

    run_event = make_run_event(Identity(b"\x01" * 32), spec_from_json(swarm_spec()), nonce="wire")
    event = make_event(
        Identity(b"\x02" * 32),
        run_event.run,
        "join",
        1,
        JoinBody(role="scorer", strategy=None, admission=None),
    )
    plain = decode_gossip(encode_event(event), run_event.run)
    assert isinstance(plain, EventMsg) and plain.have is None
    good = encode_event(event, HaveMsg(3, "3:abc"))
    assert decode_gossip(good, run_event.run) == EventMsg(event, HaveMsg(3, "3:abc"))
    for n, d in [(-1, "x"), (True, "x"), ("3", "x"), (3, 7), (3, "x" * 10_000)]:
        bad = good.replace(b'"n":3', b'"n":' + json.dumps(n).encode()).replace(
            b'"d":"3:abc"', b'"d":' + json.dumps(d).encode()
        )
        refused = decode_gossip(bad, run_event.run)
        assert isinstance(refused, Refused) and refused.reason == "malformed", (n, d)
