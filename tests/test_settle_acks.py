"""A claim's settle window ends once every other live executor holds the claim
(:mod:`specswarm.swarm.roles.acks`); it runs out when an executor the spec declares has not
joined, when one never holds the claim, and in a swarm of more than ACK_PEERS executors."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import trio
import trio.testing

from specswarm.plan import Plan, fold
from specswarm.swarm.roles import acks
from specswarm.testing.synth import Swarm, one_split_spec

WINDOW = 1.0


class FakeNode:
    """A node whose other executors come to hold a claim after ``asks`` inventories each."""

    def __init__(self, plan: Plan, me: str, asks: dict[str, int], gone: frozenset[str] = frozenset()) -> None:
        self.peer_id, self._plan, self.gone, self.asks = me, plan, gone, dict(asks)
        self.asked: list[str] = []
        self.sync = SimpleNamespace(holds=self._holds)

    def plan(self) -> Plan:
        return self._plan

    def peer_gone(self, peer: str, since: float, grace: float = 0.0) -> bool:
        return peer in self.gone

    async def _holds(self, peer: str, event_id: str) -> bool:
        self.asked.append(peer)
        await trio.sleep(0.01)  # a request's round trip
        self.asks[peer] = self.asks.get(peer, 10**6) - 1
        return self.asks[peer] <= 0


def _plan(executors: int, joined: int | None = None) -> tuple[Plan, list[str]]:
    sw = Swarm(spec=one_split_spec(scorers=1, executors=executors), seed=3)
    ids = [e.peer_id for e in sw.peers["executor"]]
    if joined is not None:  # drop the joins of the executors past ``joined``
        late = set(ids[joined:])
        sw.events = [e for e in sw.events if not (e.kind == "join" and e.author in late)]
    return fold(sw.events), ids


def _settle(node: FakeNode) -> tuple[bool, float]:
    async def main() -> tuple[bool, float]:
        start = trio.current_time()
        early = await acks.settle(node, SimpleNamespace(id="c" * 64), WINDOW, since=0.0)  # type: ignore[arg-type]
        return early, trio.current_time() - start

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_window_ends_once_every_other_executor_holds_the_claim() -> None:
    plan, ids = _plan(3)
    node = FakeNode(plan, ids[0], {ids[1]: 1, ids[2]: 3})
    early, took = _settle(node)
    assert early and took < 0.2
    assert ids[0] not in node.asked and node.asked.count(ids[2]) == 3


def test_a_gone_executor_is_not_waited_for() -> None:
    plan, ids = _plan(3)
    node = FakeNode(plan, ids[0], {ids[1]: 1}, gone=frozenset({ids[2]}))
    early, took = _settle(node)
    assert early and took < 0.2 and ids[2] not in node.asked


def test_the_window_runs_out_when_one_never_holds_it() -> None:
    plan, ids = _plan(2)
    early, took = _settle(FakeNode(plan, ids[0], {}))
    assert not early and abs(took - WINDOW) < 1e-6


def test_the_window_runs_out_while_a_declared_executor_has_not_joined() -> None:
    plan, ids = _plan(3, joined=2)
    node = FakeNode(plan, ids[0], {ids[1]: 1})
    early, took = _settle(node)
    assert not early and abs(took - WINDOW) < 1e-6 and node.asked == []


def test_a_large_swarm_waits_the_whole_window() -> None:
    plan, ids = _plan(acks.ACK_PEERS + 2)
    asks: dict[str, Any] = dict.fromkeys(ids, 1)
    node = FakeNode(plan, ids[0], asks)
    early, took = _settle(node)
    assert not early and abs(took - WINDOW) < 1e-6 and node.asked == []
