"""How often a node announces its event set: at once when it changed, every
DISAGREE_ANNOUNCE_EVERY rounds while a peer's set differs, every QUIET_ANNOUNCE_EVERY rounds in a
quiet, agreeing swarm. Each announcement costs every peer a delivery, which dominated the idle
CPU of a 9-peer swarm on 2 cores."""

from __future__ import annotations

import random

import trio
import trio.testing

from specswarm.swarm import antientropy
from specswarm.swarm.antientropy import AntiEntropy, _Heard
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.liveness import Liveness
from specswarm.swarm.store import EventStore


class Recorder:
    def __init__(self) -> None:
        self.published: list[bytes] = []

    def peers(self) -> list[str]:
        return []

    async def publish(self, data: bytes) -> None:
        self.published.append(data)


def _rounds(sync: AntiEntropy, transport: Recorder, rounds: int, *, disagree: bool) -> int:
    """Announcements made in ``rounds`` announcement intervals (virtual time)."""
    before = len(transport.published)

    async def main() -> None:
        with trio.move_on_after(rounds):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sync.announce_loop)
                while True:
                    if disagree:  # a peer keeps announcing another set
                        sync._peer_have["other"] = _Heard(5, "5:other", trio.current_time())
                    await trio.sleep(0.1)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return len(transport.published) - before


def test_a_quiet_agreeing_node_announces_once_in_five_rounds_and_a_disagreeing_one_in_two() -> None:
    transport = Recorder()
    counters = NodeCounters()
    sync = AntiEntropy(
        transport,  # type: ignore[arg-type]
        EventStore(counters),
        Liveness("me", transport),  # type: ignore[arg-type]
        "scorer",
        random.Random(1),
        lambda: 1.0,
    )
    first = _rounds(sync, transport, 1, disagree=False)
    assert first in (0, 1)  # the first round: our (empty) set has never been announced
    quiet = _rounds(sync, transport, 100, disagree=False)
    every = antientropy.QUIET_ANNOUNCE_EVERY
    assert 100 / every * 0.7 <= quiet <= 100 / every * 1.4
    disagreeing = _rounds(sync, transport, 100, disagree=True)
    assert (
        100 / antientropy.DISAGREE_ANNOUNCE_EVERY * 0.7
        <= disagreeing
        <= 100 / antientropy.DISAGREE_ANNOUNCE_EVERY * 1.4
    )
    assert counters.announces == len(transport.published)
