"""The roles and the node on the in-memory transport with the scripted model (fast)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import trio

from specswarm.model.replay import ScriptedModel
from specswarm.plan.fold import FoldState
from specswarm.testing.local import LocalSwarm, kill, run_local, start_peer, wait_converged
from tests.swarmkit import hooked_swarm, swarm_spec


def _results_per_leaf(swarm: LocalSwarm) -> Counter[str]:
    """How often each leaf was written from scratch (a result the board rejected and an executor
    wrote again, ``revises``, is no second execution)."""
    node = next(iter(swarm.nodes.values()))
    return Counter(e.body.leaf for e in node.state.events() if e.kind == "result" and not e.body.revises)


def test_swarm_converges_and_every_peer_agrees() -> None:
    spec = swarm_spec()
    digest, swarm, _ = trio.run(lambda: run_local(spec, ScriptedModel, seed=1))
    plans = [n.plan() for n in swarm.nodes.values()]
    assert {p.digest for p in plans} == {digest}
    plan = plans[0]
    assert plan.complete
    assert plan.progress()["leaves"] >= 4
    assert plan.root is not None and plan.root.accepted is not None
    # the observer published nothing at all
    observer = next(n for n in swarm.nodes.values() if n.role_name == "observer")
    assert observer.counters.published == 0
    assert observer.transport.stats.published == 0
    # each leaf was executed exactly once (no supersedes happened without failures)
    assert set(_results_per_leaf(swarm).values()) == {1}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_swarm_converges_with_20_percent_gossip_loss(seed: int) -> None:
    spec = swarm_spec()
    digest, swarm, _ = trio.run(lambda: run_local(spec, ScriptedModel, seed=seed, loss=0.2, timeout=60))
    assert all(n.plan().digest == digest and n.plan().complete for n in swarm.nodes.values())
    assert sum(n.counters.synced_events for n in swarm.nodes.values()) > 0  # anti-entropy repaired it


def test_same_event_set_same_digest_as_a_fresh_fold() -> None:
    spec = swarm_spec(decomposers=2, scorers=2, executors=1)
    digest, swarm, _ = trio.run(lambda: run_local(spec, ScriptedModel, seed=5))
    events = next(iter(swarm.nodes.values())).state.events()
    assert FoldState(reversed(events)).plan().digest == digest


async def _swarm_with_hooks(spec, seed, hook, timeout=60.0):  # type: ignore[no-untyped-def]
    return await hooked_swarm(spec, seed, hook, timeout=timeout)


def test_killed_decomposer_and_scorer_the_rest_carry_on() -> None:
    spec = swarm_spec(decomposers=3, scorers=3, quorum=2)

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        # wait until the first decomposer has proposed, then kill it and one scorer
        dec = next(p for p, r in swarm.roles.items() if r == "decomposer")
        sc = next(p for p, r in swarm.roles.items() if r == "scorer")
        with trio.fail_after(10):
            while swarm.nodes[dec].counters.published < 2:
                await trio.sleep(0.01)
        kill(swarm, dec)
        kill(swarm, sc)
        return dec, sc

    digest, swarm, (dec, sc) = trio.run(lambda: _swarm_with_hooks(spec, 3, hook))
    survivors = [n for p, n in swarm.nodes.items() if p not in (dec, sc)]
    assert all(n.plan().digest == digest and n.plan().complete for n in survivors)


def test_executor_killed_while_holding_a_claim_is_superseded() -> None:
    spec = swarm_spec(decomposers=1, scorers=2, executors=2, max_depth=1, claim_timeout=30.0)

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        any_node = next(iter(swarm.nodes.values()))
        with trio.fail_after(10):
            while True:
                claims = [e for e in any_node.state.events() if e.kind == "claim"]
                if claims:
                    break
                await trio.sleep(0.001)
        victim = claims[0].author
        kill(swarm, victim)
        return victim, claims[0]

    digest, swarm, (victim, claim) = trio.run(lambda: _swarm_with_hooks(spec, 4, hook))
    plan = next(n for p, n in swarm.nodes.items() if p != victim).plan()
    leaf = plan.nodes[claim.body.leaf]
    assert leaf.result is not None
    if leaf.result.author != victim:  # the victim may have finished before it died
        won = next(c for c in leaf.claims if c.id == leaf.result.claim)
        # either the victim had lost the race anyway (the winner's claim is older), or its
        # claim was superseded by a live executor
        assert (won.lamport, won.author) < (claim.lamport, claim.author) or any(
            c.supersedes == claim.id for c in leaf.claims
        )
    survivor = next(n for p, n in swarm.nodes.items() if p != victim)
    per_leaf = Counter(
        e.body.leaf for e in survivor.state.events() if e.kind == "result" and e.author != victim
    )
    assert set(per_leaf.values()) == {1}


def test_late_joiner_learns_the_run_and_reaches_the_same_digest() -> None:
    spec = swarm_spec(decomposers=2, scorers=2, executors=1)

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        await wait_converged(swarm, 30)
        late = await start_peer(swarm, nursery, "observer", spec, None, identity=ident(), learn=True)
        return late

    digest, swarm, late = trio.run(lambda: _swarm_with_hooks(spec, 6, hook))
    assert late.plan().digest == digest
    assert late.counters.published == 0


def test_hostile_messages_are_dropped_and_counted() -> None:
    spec = swarm_spec(decomposers=1, scorers=2, executors=1, max_depth=1)

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        from specswarm.protocol.events import make_event

        stranger = ident()
        attacker = swarm.network.add_peer(
            stranger.peer_id, topic=next(iter(swarm.nodes.values())).transport._topics[-1]
        )
        run = swarm.run_event.run
        # a join without admission, then votes/claims: valid signatures, but no authority
        for kind, body in [("join", {"role": "scorer", "strategy": None, "admission": None})]:
            ev = make_event(stranger, run, kind, 1, body)
            await attacker.publish(json.dumps({"t": "ev", "e": ev.to_json()}).encode())
        forged = make_event(
            stranger, run, "join", 2, {"role": "executor", "strategy": None, "admission": None}
        ).to_json()
        forged["author"] = next(iter(swarm.nodes))  # claims to be someone else
        for junk in [
            b"not json",
            b"[]",
            b'{"t":"ev","e":{}}',
            json.dumps({"t": "ev", "e": forged}).encode(),
            b'{"t":"have","n":"x"}',
            b"\xff" * 300_000,
        ]:
            await attacker.publish(junk)
        return stranger

    digest, swarm, stranger = trio.run(lambda: _swarm_with_hooks(spec, 7, hook))
    for node in swarm.nodes.values():
        assert stranger.peer_id not in node.plan().roles
        assert sum(node.counters.dropped.values()) >= 4


@pytest.mark.parametrize(("decomposers", "proposers"), [(3, 3), (6, 4)])
def test_up_to_four_decomposers_compete_at_the_root_every_strategy_first(
    decomposers: int, proposers: int
) -> None:
    """Every decomposer proposed at the root: at 64 peers, 21 proposals and 21 scorers' 441 votes
    had to reach every peer before a ballot. Now at most ROOT_RIVALS seats compete there, each
    strategy's first seat before any second; below the root, two."""
    from specswarm.swarm.roles.base import ROOT_RIVALS

    spec = swarm_spec(decomposers=decomposers)
    digest, swarm, _ = trio.run(lambda: run_local(spec, ScriptedModel, seed=3))
    plan = next(iter(swarm.nodes.values())).plan()
    assert plan.complete and plan.root is not None
    authors = {p.author for p in plan.root.proposals}
    assert len(authors) == proposers <= ROOT_RIVALS
    assert {plan.strategies[a] for a in authors} == {"by place", "by day", "by theme"}
    for n in plan.nodes.values():
        if n.depth > 0 and n.proposals:
            assert len({p.author for p in n.proposals}) <= 2, n.id
