"""What makes a thousand peers in one process affordable, and that it changes no answer: the
fold updates one author's role on a join instead of re-deciding every node, admission checks
and pulled events are verified once per process, and the simulated mesh keeps its delivery
order while queueing hops by tick."""

from __future__ import annotations

import importlib
import random

import pytest
import trio
import trio.testing

from specswarm.plan import ROOT, FoldState, child_id, fold
from specswarm.protocol import events as events_module
from specswarm.protocol.events import admission_valid, admit
from specswarm.protocol.identity import Identity
from specswarm.swarm import wire
from specswarm.testing.synth import Swarm, one_split_spec
from specswarm.transport.mesh import open_mesh_network

fold_module = importlib.import_module("specswarm.plan.fold")  # the package's name is the function


def _swarm(admission: Identity | None = None) -> Swarm:
    return Swarm(spec=one_split_spec(scorers=2, executors=2), seed=3, admission=admission)


def _late_joiners() -> tuple[Swarm, list[str]]:
    """A run whose root split, votes, claims and results come from peers whose joins are the
    last events (in list order); returns it and the leaf ids."""
    sw = _swarm()
    late = {"decomposer": Identity(b"\x71" * 32), "scorer": Identity(b"\x72" * 32)}
    ex = Identity(b"\x73" * 32)
    prop = sw.propose(late["decomposer"], ROOT, ["Lisbon", "Sintra"], leaf=True, lamport=10)
    for s in [*sw.peers["scorer"], late["scorer"]]:
        sw.vote(s, prop, True, 80, lamport=11)
    leaves = [child_id(prop.id, i) for i in range(2)]
    claim = sw.claim(ex, leaves[0], lamport=12)
    sw.result(ex, leaves[0], claim)
    for role, who in [*late.items(), ("executor", ex)]:
        sw.emit(who, "join", {"role": role, "strategy": None, "admission": None}, lamport=1)
    return sw, leaves


def test_joins_that_arrive_after_their_authors_events_give_the_plan_of_the_whole_set() -> None:
    sw, leaves = _late_joiners()
    whole = fold(sw.events)
    assert whole.root is not None and whole.root.accepted is not None
    assert whole.nodes[leaves[0]].result is not None
    rng = random.Random(5)
    for _ in range(20):  # one event at a time, the plan asked for after each (decisions cached)
        order = list(sw.events)
        rng.shuffle(order)
        state = FoldState()
        for event in order:
            state.apply(event)
            state.plan()
        assert state.plan().digest == whole.digest
        assert state.plan().roles == whole.roles
    in_order = FoldState()
    for event in sw.events[:-3]:
        in_order.apply(event)
        in_order.plan()
    plan = in_order.plan()
    assert plan.root is not None and plan.root.proposals == ()  # from no decomposer (yet)
    in_order.apply(sw.events[-3])  # the decomposer's join: its split counts, and is accepted
    plan = in_order.plan()
    assert plan.root is not None and plan.root.accepted is not None
    assert plan.nodes[leaves[0]].claim is None  # from no executor (yet)
    in_order.apply(sw.events[-2])
    in_order.apply(sw.events[-1])  # the executor's join: its claim and result count
    assert in_order.plan().nodes[leaves[0]].result is not None
    assert in_order.plan().digest == whole.digest


def test_a_join_redecides_only_the_nodes_its_author_acted_on(monkeypatch: pytest.MonkeyPatch) -> None:
    sw, leaves = _late_joiners()
    state = FoldState(sw.events)
    state.plan()
    decided: list[str] = []
    real = fold_module.decide_leaf

    def counting(run, claims, results, roles, judge=None):  # type: ignore[no-untyped-def]
        decided.append(next(iter(claims), "-"))
        return real(run, claims, results, roles, judge)

    monkeypatch.setattr(fold_module, "decide_leaf", counting)
    stranger = Identity(b"\x74" * 32)
    sw.emit(stranger, "join", {"role": "executor", "strategy": None, "admission": None})
    state.apply(sw.events[-1])
    assert state.plan().roles[stranger.peer_id] == "executor"
    assert decided == []  # a newcomer that has done nothing changes no decision
    holder = next(e for e in sw.events if e.kind == "claim")
    # the claim's author joins again, as an observer, with a lesser Lamport: it is no executor
    sw.emit(Identity(b"\x73" * 32), "join", {"role": "observer", "strategy": None, "admission": None}, 0)
    state.apply(sw.events[-1])
    plan = state.plan()
    assert decided == [holder.id]  # only its leaf is decided again
    assert plan.nodes[leaves[0]].claim is None and plan.nodes[leaves[0]].result is None
    assert plan.digest == fold(sw.events).digest


def test_an_admission_check_is_computed_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    key = Identity(b"\x75" * 32)
    peer = Identity(b"\x76" * 32).peer_id
    run = "c0ffee" * 5 + "00"
    sig = admit(key, run, peer, "scorer")
    calls = []
    real = events_module.verify_signature

    def counting(*args):  # type: ignore[no-untyped-def]
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(events_module, "verify_signature", counting)
    assert [admission_valid(key.public_key.hex(), run, peer, "scorer", sig) for _ in range(3)] == [True] * 3
    assert admission_valid(key.public_key.hex(), run, peer, "executor", sig) is False
    assert len(calls) == 2  # one per distinct question, whatever the number of folds asking


def test_a_pulled_event_is_verified_once_per_process_and_a_changed_one_again() -> None:
    sw = _swarm()
    event = sw.events[-1]
    raw = event.to_json()
    first, reason = wire.verify_event(raw, sw.run)
    assert first is not None and reason == ""
    again, _ = wire.verify_event(dict(reversed(list(raw.items()))), sw.run)  # same value, other order
    assert again is first  # the shared answer, not a second verification
    forged = {**raw, "lamport": raw["lamport"] + 1}
    bad, why = wire.verify_event(forged, sw.run)
    assert bad is None and why.startswith("bad signature")
    foreign, why = wire.verify_event(raw, "f" * 32)
    assert foreign is None and why.startswith("foreign run")


def test_hops_due_in_one_tick_arrive_in_the_order_they_were_sent() -> None:
    async def main() -> list[bytes]:
        async with open_mesh_network(seed=2, degree=1, latency=0.02) as net:
            a, b = net.add_peer("a", topic="t"), net.add_peer("b", topic="t")
            for i in range(50):
                await a.publish(b"m%d" % i)
            got = []
            with trio.fail_after(1):
                for _ in range(50):
                    got.append((await b.incoming().receive())[1])
            return got

    got = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert got == [b"m%d" % i for i in range(50)]


def test_a_mesh_without_latency_still_delivers_across_several_hops() -> None:
    async def main() -> tuple[int, float]:
        async with open_mesh_network(seed=4, degree=2, latency=0.0) as net:
            ts = [net.add_peer(f"p{i}", topic="t") for i in range(30)]
            start = trio.current_time()
            await ts[0].publish(b"x")
            for t in ts[1:]:
                with trio.fail_after(1):
                    await t.incoming().receive()
            return sum(t.stats.received for t in ts), trio.current_time() - start

    received, took = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert received == 29 and took <= 0.01
