"""Hostile input at a running swarm (in-memory transport, scripted model; fast).

What tests/test_events.py and tests/test_fold.py prove for single events and the fold, here
at the node: oversized gossip, replayed events, another run's events (by gossip and through
anti-entropy from a lying peer), an admitted insider acting outside its role, and a model that
answers garbage. Each peer drops and counts what it refuses, never crashes, and the plan is
exactly what the honest events alone give.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import trio

from specswarm.model.base import GenerationRequest
from specswarm.model.replay import ScriptedModel
from specswarm.plan.fold import FoldState
from specswarm.protocol.events import MAX_EVENT_BYTES, Event, admit, make_event, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.swarm.launcher import PeerProc, diagnose
from specswarm.swarm.node import MAX_MESSAGE_BYTES, Node
from specswarm.testing.local import LocalSwarm
from tests.swarmkit import Hook, hooked_swarm, swarm_spec


async def _swarm(
    spec: dict[str, Any],
    seed: int,
    hook: Hook,
    model: Any = ScriptedModel,
    converge: bool = True,
    timeout: float = 60.0,
) -> tuple[str | None, LocalSwarm, Any]:
    return await hooked_swarm(spec, seed, hook, model, converge, timeout, delay=0.002)


def _topic(swarm: LocalSwarm) -> str:
    return next(iter(swarm.nodes.values())).transport._topics[-1]  # type: ignore[attr-defined]


def _ev(event: Event) -> bytes:
    return json.dumps({"t": "ev", "e": event.to_json()}).encode()


async def _until(cond: Callable[[], bool], timeout: float = 20) -> None:
    with trio.fail_after(timeout):
        while not cond():
            await trio.sleep(0.01)


def _honest(node: Node, *bad_authors: str) -> FoldState:
    return FoldState(e for e in node.state.events() if e.author not in bad_authors)


def test_oversized_replayed_and_foreign_gossip_is_dropped_and_counted() -> None:
    spec = swarm_spec(decomposers=1, scorers=2, executors=1, max_depth=1)
    other_run = make_run_event(Identity.generate(), spec, nonce="another run")

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        attacker = swarm.network.add_peer(ident().peer_id, topic=_topic(swarm))
        honest = next(n for n in swarm.nodes.values() if n.role_name == "scorer")
        await _until(lambda: any(n.accepted for n in honest.plan().walk()))
        before = {p: (n.counters.duplicates, dict(n.counters.dropped)) for p, n in swarm.nodes.items()}
        # 1. oversized: a real event in a message padded past the limit, and a huge event body
        real = honest.state.events()[-1]
        await attacker.publish(
            json.dumps({"t": "ev", "e": real.to_json(), "pad": "x" * MAX_MESSAGE_BYTES}).encode()
        )
        huge = make_event(
            honest.identity,
            swarm.run_event.run,
            "vote",
            999,
            {
                "proposal": "0" * 64,
                "approve": True,
                "score": 99,
                "checks": [],
                "critique": "y" * MAX_EVENT_BYTES * 2,
                "model_score": None,
            },
        )
        await attacker.publish(_ev(huge))
        # 2. replays: every event the swarm holds, twice, by a peer that did not author them
        replayed = honest.state.events()
        for _ in range(2):
            for event in replayed:
                await attacker.publish(_ev(event))
        # 3. another run: a well-signed vote by a real scorer, in a run nobody here is part of
        accepted = next(n.accepted for n in honest.plan().walk() if n.accepted)
        foreign = make_event(
            honest.identity,
            other_run.run,
            "vote",
            1,
            {
                "proposal": accepted,
                "approve": False,
                "score": 0,
                "critique": "no",
                "checks": [],
                "model_score": None,
            },
        )
        await attacker.publish(_ev(other_run))
        await attacker.publish(_ev(foreign))
        return before, len(replayed), foreign, huge

    digest, swarm, (before, n_replayed, foreign, huge) = trio.run(lambda: _swarm(spec, 11, hook))
    for peer, node in swarm.nodes.items():
        dup0, dropped0 = before[peer]
        dropped = node.counters.dropped
        assert dropped["oversized"] - dropped0.get("oversized", 0) == 2, dropped
        assert dropped["foreign run"] - dropped0.get("foreign run", 0) == 2, dropped
        assert node.counters.duplicates - dup0 >= 2 * n_replayed
        assert foreign.id not in node.state and huge.id not in node.state
        assert node.plan().digest == digest
        assert node.plan().complete


def test_a_lying_peer_cannot_push_another_runs_events_through_anti_entropy() -> None:
    """A peer announces a huge event set; when asked, it serves foreign-run and forged events."""
    spec = swarm_spec(decomposers=1, scorers=2, executors=1, max_depth=1)

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        liar = ident()
        transport = swarm.network.add_peer(liar.peer_id, topic=_topic(swarm))
        other_run = make_run_event(liar, spec, nonce="elsewhere")
        bait = [other_run] + [
            make_event(
                liar, other_run.run, "join", i, {"role": "scorer", "strategy": None, "admission": None}
            )
            for i in range(1, 4)
        ]
        forged = make_event(
            liar, swarm.run_event.run, "join", 9, {"role": "executor", "strategy": None, "admission": None}
        ).to_json()
        forged["lamport"] = 10  # tampered after signing
        served = [e.to_json() for e in bait] + [forged, {"junk": True}, "not an event"]
        asked: list[str] = []

        async def handler(sender: str, data: bytes) -> bytes:
            req = json.loads(data)
            asked.append(req["t"])
            if req["t"] == "get":
                pulled.add(sender)
            if req["t"] == "inv":
                return json.dumps({"ids": [f"{i:016x}" for i in range(len(served))]}).encode()
            if req["t"] == "get":
                return json.dumps({"events": served}).encode()
            return json.dumps({"run": None, "n": 0}).encode()

        transport.set_request_handler(handler)
        for _ in range(3):
            await transport.publish(json.dumps({"t": "have", "n": 10_000, "d": "lies"}).encode())
            await trio.sleep(0.05)
        await _until(lambda: asked.count("get") >= len(swarm.nodes) - 1)  # the observer pulls too
        return liar, bait

    pulled: set[str] = set()  # the peers that fetched the liar's events
    digest, swarm, (liar, bait) = trio.run(lambda: _swarm(spec, 12, hook))
    assert len(pulled) >= len(swarm.nodes) - 1
    for peer_id, node in swarm.nodes.items():
        assert all(e.id not in node.state for e in bait)
        assert liar.peer_id not in {e.author for e in node.state.events()}
        # a peer that fetched them dropped the other run's (one done before it asked may not have)
        assert node.counters.dropped["foreign run"] >= (1 if peer_id in pulled else 0)
        assert node.plan().digest == digest
    assert (
        sum(n.counters.dropped["bad signature"] + n.counters.dropped["schema"] for n in swarm.nodes.values())
        >= 2
    )


def test_an_admitted_insider_acting_outside_its_role_changes_nothing() -> None:
    """An admitted *executor* votes on every proposal (approving) and proposes splits; an admitted
    *observer* claims leaves. Both are well signed and admitted, so only the fold's role rules stop them."""
    spec = swarm_spec(decomposers=1, scorers=3, executors=1, max_depth=1, quorum="all")

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        run = swarm.run_event.run
        rogue_exec, rogue_obs = ident(), ident()
        tx = swarm.network.add_peer(rogue_exec.peer_id, topic=_topic(swarm))
        honest = next(n for n in swarm.nodes.values() if n.role_name == "observer")
        lamport = 0

        async def send(who: Identity, kind: str, body: dict[str, Any]) -> Event:
            nonlocal lamport
            lamport += 1
            event = make_event(who, run, kind, lamport, body)
            await tx.publish(_ev(event))
            return event

        for who, role in ((rogue_exec, "executor"), (rogue_obs, "observer")):
            await send(
                who,
                "join",
                {"role": role, "strategy": None, "admission": admit(swarm.admission, run, who.peer_id, role)},
            )
        children = [{"title": f"Rogue part {i}", "detail": "x", "leaf": True, "facts": {}} for i in (1, 2)]
        await send(
            rogue_exec,
            "proposal",
            {"node": "root", "strategy": "rogue", "revises": None, "rationale": "mine", "children": children},
        )
        voted: set[str] = set()
        claimed: set[str] = set()
        with trio.fail_after(30):
            while not honest.plan().complete:
                plan = honest.plan()
                for n in plan.walk():
                    for p in n.proposals:
                        if p.id not in voted:
                            voted.add(p.id)
                            await send(
                                rogue_exec,
                                "vote",
                                {
                                    "proposal": p.id,
                                    "approve": True,
                                    "score": 100,
                                    "critique": "great",
                                    "checks": [],
                                    "model_score": 100,
                                },
                            )
                    if n.leaf and n.id not in claimed:
                        claimed.add(n.id)
                        await send(rogue_obs, "claim", {"leaf": n.id, "supersedes": n.claim})
                await honest.wait_changed(0.2)
        return rogue_exec, rogue_obs, voted, claimed

    digest, swarm, (rogue_exec, rogue_obs, voted, claimed) = trio.run(lambda: _swarm(spec, 13, hook))
    assert voted and claimed  # the insiders did act
    for node in swarm.nodes.values():
        plan = node.plan()
        assert plan.roles[rogue_exec.peer_id] == "executor" and plan.roles[rogue_obs.peer_id] == "observer"
        for n in plan.walk():
            assert all(v.author != rogue_exec.peer_id for p in n.proposals for v in p.votes)
            assert all(p.author != rogue_exec.peer_id for p in n.proposals)
            assert all(c.author != rogue_obs.peer_id for c in n.claims)
        assert plan.digest == digest == _honest(node, rogue_exec.peer_id, rogue_obs.peer_id).plan().digest


def test_a_model_answering_garbage_is_counted_and_the_run_reports_it_stuck() -> None:
    spec = swarm_spec(decomposers=1, scorers=1, executors=1, max_depth=1, quorum=1)

    def garbage(req: GenerationRequest) -> str:
        return "}}{{ \x00 lorem ipsum ###\n" * 3

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        decomposer = next(n for n in swarm.nodes.values() if n.role_name == "decomposer")
        await _until(lambda: decomposer.counters.model_failures >= 1)
        return decomposer

    _, swarm, decomposer = trio.run(
        lambda: _swarm(spec, 14, hook, model=lambda: ScriptedModel(garbage), converge=False)
    )
    assert decomposer.counters.model_failures == 1  # one failed task (after its retries), then a backoff
    assert decomposer.counters.model_calls == 1
    assert decomposer.counters.published == 1  # its join, and no proposal made of garbage
    failure = decomposer.role.last_failure
    assert failure is not None
    assert failure.startswith("decomposer on root: ")
    plan = decomposer.plan()
    assert not plan.complete and plan.root is not None and not plan.root.proposals
    # what `specswarm plan` prints when it gives up: the stuck node, and why
    peers = [
        PeerProc(i, n.role_name, n.identity, 0, None, None, None, status=n.status())  # type: ignore[arg-type]
        for i, n in enumerate(swarm.nodes.values())
    ]
    reasons = diagnose(plan, peers)
    assert reasons[0] == (
        f"node root {plan.root.title[:50]!r}: no proposal yet (decomposer model slow or failing)"
    )
    assert reasons[1].startswith("model failures across peers: 1 (see the peer logs); last: decomposer-")
    assert failure in reasons[1]
    assert len(reasons) == 2
