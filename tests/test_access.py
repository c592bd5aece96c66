"""Access control with real processes: a stranger that knows the run (right run id, real libp2p,
connected to the swarm) but is not admitted cannot vote or claim. Its events travel and are
stored, but the fold ignores them: the plan digest is what the honest events alone give.

Modes (spec ``access.mode``): launcher (admission signed by the launcher's per-run key: the
stranger has none), allowlist (the stranger is not listed), secret (the stranger's
SPECSWARM_SECRET is wrong, so its admission signature is by the wrong key).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from specswarm.plan.fold import FoldState
from specswarm.protocol.identity import Identity
from tests.chaos import ChaosSwarm, chaos_spec

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("mode", ["launcher", "allowlist", "secret"])
def test_a_stranger_cannot_vote_or_claim(mode: str, tmp_path: Path) -> None:
    spec = chaos_spec(decomposers=1, scorers=1, executors=1, quorum=1, max_depth=1)
    rng = random.Random(f"access:{mode}")
    members = [Identity(bytes(rng.getrandbits(8) for _ in range(32))) for _ in range(4)]
    secret = None
    if mode == "allowlist":
        spec["access"] = {**spec["access"], "mode": "allowlist", "peers": [m.peer_id for m in members]}
    elif mode == "secret":
        spec["access"] = {**spec["access"], "mode": "secret"}
        secret = "the right secret"
    with ChaosSwarm(tmp_path, spec, seed=1, secret=secret) as swarm:
        # the decomposer starts last, once the strangers are in: they then see the proposal
        # and the leaves while those are still open, and do try to vote and claim
        # the honest executor writes slowly (1 s an answer): the leaves stay open long enough
        # for the stranger to try to claim one, whatever the machine's speed
        slow = {"executor": {"SPECSWARM_TEST_MODEL_DELAY": "1"}}
        honest = [
            swarm.start(swarm.new_peer(role, identity=ident), env=slow.get(role))
            for role, ident in zip(("observer", "scorer", "executor"), members, strict=False)
        ]
        strangers = []
        for role in ("scorer", "executor"):
            p = swarm.new_peer(role)
            strangers.append(
                swarm.start(
                    p,
                    admission=None if mode != "allowlist" else swarm.admission_for(p),
                    env={"SPECSWARM_SECRET": "a wrong guess"} if mode == "secret" else None,
                )
            )
        ids = {s.peer_id for s in strangers}
        swarm.wait_for(
            lambda: sum(1 for e in swarm.union_events() if e.kind == "join" and e.author in ids) == 2,
            60,
            "the strangers to join",
        )
        strategy = (spec["roles"]["decomposer"].get("strategies") or [None])[0]
        honest.append(swarm.start(swarm.new_peer("decomposer", strategy, identity=members[3])))

        def stranger_acted() -> bool:
            kinds = {e.kind for e in swarm.union_events() if e.author in ids}
            return {"join", "vote", "claim"} <= kinds

        digest = swarm.wait_converged()
        swarm.wait_for(stranger_acted, 60, "the strangers to vote and claim")
        swarm.wait_converged()
        assert swarm.converged_digest() == digest
        events = swarm.observer_events()
        by_stranger = [e for e in events if e.author in ids]
        assert {"join", "vote", "claim"} <= {e.kind for e in by_stranger}  # they did try, and it travelled
        plan = FoldState(events).plan()
        assert plan.complete and plan.digest == digest
        assert not ids & set(plan.roles)
        assert set(plan.roles) == {p.peer_id for p in honest if p.role != "observer"}  # observers never join
        for n in plan.walk():
            assert not ids & {v.author for p in n.proposals for v in p.votes}
            assert not ids & {c.author for c in n.claims}
            assert n.result is None or n.result.author not in ids
        # the digest is exactly that of the honest events alone
        assert FoldState(e for e in events if e.author not in ids).plan().digest == digest
        assert {p.status["digest"] for p in honest} == {digest}
