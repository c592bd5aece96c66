"""The fold rules (docs/ARCHITECTURE.md, "The fold rules"), one exact case at a time."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from specswarm.plan import ROOT, FoldState, Plan, child_id, fold
from specswarm.protocol.canonical import digest as canonical_digest
from specswarm.protocol.events import Event, admit, make_event, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.render import render_plan
from specswarm.spec import quorum_size, spec_from_json
from specswarm.testing.synth import Swarm, complete_swarm, minimal_spec

# -- helpers -------------------------------------------------------------------------------------


def make_swarm(
    n_scorers: int = 3,
    quorum: Any = "majority",
    max_depth: int = 2,
    seed: int = 1,
    admission: Identity | None = None,
    select: str = "first",
    **spec: Any,
) -> Swarm:
    """A synthetic run; ``select``: the acceptance rule (most tests here are of the ``first``
    rule's tie-breaks; the ``best`` rule's tests pass ``select="best"``)."""
    roles = {
        "decomposer": {"count": 2, "strategies": ["by place", "by day"]},
        "scorer": {"count": n_scorers},
        "executor": {"count": 2},
        "observer": {"count": 1},
    }
    tree = {
        "max_depth": max_depth,
        "min_children": 1,
        "max_children": 6,
        "max_revisions": 2,
        "approve_threshold": 60,
        "select": select,
    }
    return Swarm(
        spec=minimal_spec(quorum=quorum, roles=roles, tree=tree, **spec), seed=seed, admission=admission
    )


def scorers(sw: Swarm) -> list[Identity]:
    """The scorers, sorted by peer id (so "least author" is index 0)."""
    return sorted(sw.peers["scorer"], key=lambda i: i.peer_id)


def executors(sw: Swarm) -> list[Identity]:
    return sorted(sw.peers["executor"], key=lambda i: i.peer_id)


def without_counts(plan: Plan) -> dict[str, Any]:
    """The plan export minus the raw event counts (which count every event held, counted or not)."""
    out = plan.to_json()
    del out["event_counts"]
    return out


def assert_same_plan(a: Plan, b: Plan) -> None:
    assert a.digest == b.digest
    assert without_counts(a) == without_counts(b)


def leaf_swarm(**kw: Any) -> tuple[Swarm, str]:
    """A run whose root is accepted with two leaf children; returns (swarm, first leaf id)."""
    sw = make_swarm(**kw)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["Lisbon", "Sintra"], leaf=True, lamport=10)
    for s in scorers(sw):
        sw.vote(s, prop, True, 80, lamport=11)
    return sw, child_id(prop.id, 0)


def statuses(plan: Plan, node: str = ROOT) -> dict[str, str]:
    return {p.id: p.status for p in plan.nodes[node].proposals}


# -- quorum --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quorum", "expected"),
    [
        ("majority", [1, 2, 2, 3, 3]),
        ("all", [1, 2, 3, 4, 5]),
        (1, [1, 1, 1, 1, 1]),
        (2, [2, 2, 2, 2, 2]),
        (4, [4, 4, 4, 4, 4]),
        (0.5, [1, 1, 2, 2, 3]),
        (1 / 3, [1, 1, 1, 2, 2]),
        (2 / 3, [1, 2, 2, 3, 4]),
        (0.1, [1, 1, 1, 1, 1]),
        (0.6, [1, 2, 2, 3, 3]),
        (1.0, [1, 2, 3, 4, 5]),
    ],
)
def test_quorum_sizes(quorum: Any, expected: list[int]) -> None:
    assert [quorum_size(quorum, n) for n in range(1, 6)] == expected


@pytest.mark.parametrize("bad", [True, False, "most", 0.0, 1.5, -0.5, None, [1]])
def test_bad_quorum_raises(bad: Any) -> None:
    with pytest.raises(ValueError, match="bad quorum"):
        quorum_size(bad, 3)


@pytest.mark.parametrize(
    ("n", "quorum", "q"),
    [
        (1, "majority", 1),
        (3, "majority", 2),
        (5, "majority", 3),
        (4, "majority", 3),
        (3, "all", 3),
        (5, 0.4, 2),
        (4, 2, 2),
    ],
)
def test_accepted_at_exactly_q_approvals_not_before(n: int, quorum: Any, q: int) -> None:
    sw = make_swarm(n_scorers=n, quorum=quorum)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["A", "B"], lamport=10)
    ss = scorers(sw)
    for i in range(q - 1):
        sw.vote(ss[i], prop, True, lamport=20 + i)
    before = fold(sw.events)
    assert before.root is not None and before.root.accepted is None
    assert statuses(before) == {prop.id: "pending"}
    assert before.root.status == "voting"
    sw.vote(ss[q - 1], prop, True, lamport=40)
    after = fold(sw.events)
    assert after.root is not None and after.root.accepted == prop.id
    assert statuses(after) == {prop.id: "accepted"}
    assert after.root.status == "split"
    assert after.root.accepted_proposal is not None and after.root.accepted_proposal.approvals == q


def test_duplicate_votes_by_one_scorer_count_once() -> None:
    sw = make_swarm(n_scorers=3, quorum=2)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["A", "B"], lamport=10)
    s0 = scorers(sw)[0]
    sw.vote(s0, prop, True, 90, lamport=11)
    sw.vote(s0, prop, True, 95, lamport=12)
    sw.vote(s0, prop, True, 99, lamport=13)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted is None
    (view,) = plan.root.proposals
    assert (view.approvals, view.rejections, view.mean_score, view.status) == (1, 0, 90, "pending")
    assert [v.lamport for v in view.votes] == [11]


@pytest.mark.parametrize(("first", "expected"), [(True, "accepted"), (False, "pending")])
def test_least_vote_of_a_scorer_counts(first: bool, expected: str) -> None:
    sw = make_swarm(n_scorers=3, quorum=2)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["A", "B"], lamport=10)
    s0, s1, _ = scorers(sw)
    sw.vote(s0, prop, not first, 10, lamport=30)  # later: ignored
    sw.vote(s0, prop, first, 50, lamport=20)  # earlier: counts
    sw.vote(s1, prop, True, 70, lamport=21)
    plan = fold(sw.events)
    assert statuses(plan) == {prop.id: expected}
    (view,) = plan.root.proposals  # type: ignore[union-attr]
    assert [(v.author, v.lamport, v.approve) for v in view.votes] == [
        (s0.peer_id, 20, first),
        (s1.peer_id, 21, True),
    ]
    assert view.mean_score == 60


def test_vote_tally_and_mean_rounding() -> None:
    sw = make_swarm(n_scorers=3)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["A", "B"], lamport=10)
    s0, s1, s2 = scorers(sw)
    sw.vote(s0, prop, True, 80, lamport=11)
    sw.vote(s1, prop, False, 21, lamport=12)
    sw.vote(s2, prop, True, 0, lamport=13)
    (view,) = fold(sw.events).root.proposals  # type: ignore[union-attr]
    # mean 33.67 -> 34
    assert (view.approvals, view.rejections, view.mean_score, view.status) == (2, 1, 34, "accepted")
    tally = fold(sw.events).to_json()["root"]["accepted"]["tally"]
    assert tally == {"approve": 2, "reject": 1, "mean_score": 34, "points": 0}


# -- unauthorised authors never change the plan ------------------------------------------------


def _accepted_root(sw: Swarm) -> Event:
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["A", "B"], leaf=True, lamport=10)
    s0, s1, _ = scorers(sw)
    sw.vote(s0, prop, True, 80, lamport=11)
    sw.vote(s1, prop, False, 40, lamport=12)
    return prop


def test_votes_from_non_scorers_never_change_the_plan() -> None:
    sw = make_swarm(n_scorers=3)
    prop = _accepted_root(sw)
    base = fold(sw.events)
    assert base.root is not None and base.root.accepted is None
    outsider = Identity(b"\x42" * 32)
    noise = [
        make_event(
            who,
            sw.run,
            "vote",
            1,
            {
                "proposal": prop.id,
                "approve": True,
                "score": 100,
                "critique": "",
                "checks": [],
                "model_score": None,
            },
        )
        for who in (*sw.peers["decomposer"], *sw.peers["executor"], *sw.peers["observer"], outsider)
    ]
    plan = fold(sw.events + noise)
    assert_same_plan(plan, base)
    assert plan.counts["vote"] == base.counts["vote"] + len(noise)


def test_proposals_from_non_decomposers_never_count() -> None:
    sw = make_swarm(n_scorers=3)
    base = fold(sw.events)
    for who in (
        sw.peers["scorer"][0],
        sw.peers["executor"][0],
        sw.peers["observer"][0],
        Identity(b"\x43" * 32),
    ):
        prop = sw.propose(who, ROOT, ["Rogue A", "Rogue B"], lamport=5)
        for s in sw.peers["scorer"]:
            sw.vote(s, prop, True, 100, lamport=6)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted is None and plan.root.proposals == ()
    assert plan.digest == base.digest
    assert plan.counts["proposals_outside_tree"] == 4


def test_claims_and_results_from_non_executors_never_count() -> None:
    sw, leaf = leaf_swarm()
    base = fold(sw.events)
    for who in (
        sw.peers["decomposer"][0],
        sw.peers["scorer"][0],
        sw.peers["observer"][0],
        Identity(b"\x44" * 32),
    ):
        c = sw.claim(who, leaf, lamport=1)
        sw.result(who, leaf, c)
    plan = fold(sw.events)
    assert_same_plan(plan, base)
    node = plan.nodes[leaf]
    assert (node.claims, node.claim, node.result, node.status) == ((), None, None, "unclaimed")


def test_observer_events_never_count() -> None:
    sw, leaf = leaf_swarm()
    base = fold(sw.events)
    obs = sw.peers["observer"][0]
    prop = sw.propose(obs, ROOT, ["X", "Y"], lamport=1)
    sw.vote(obs, base.root.proposals[0], False, 0, lamport=1)  # type: ignore[union-attr]
    for s in sw.peers["scorer"]:
        sw.vote(s, prop, True, 100, lamport=2)
    c = sw.claim(obs, leaf, lamport=1)
    sw.result(obs, leaf, c)
    assert_same_plan(fold(sw.events), base)
    assert fold(sw.events).roles[obs.peer_id] == "observer"


def test_joins_need_a_valid_admission_signature() -> None:
    key = Identity(b"\xad" * 32)
    sw = make_swarm(admission=key)
    plan = fold(sw.events)
    assert len(plan.roles) == 8  # every synthetic peer was admitted
    base_events = list(sw.events)
    # a peer without admission, one admitted for another role, one admitted by the wrong key
    rogue = sw.add_peer("decomposer", admitted=False)
    assert rogue.peer_id not in fold(sw.events).roles
    sly = Identity(b"\x51" * 32)
    sw.emit(
        sly,
        "join",
        {"role": "decomposer", "strategy": None, "admission": admit(key, sw.run, sly.peer_id, "observer")},
    )
    wrong = Identity(b"\x52" * 32)
    sw.emit(
        wrong,
        "join",
        {
            "role": "scorer",
            "strategy": None,
            "admission": admit(Identity(b"\x00" * 32), sw.run, wrong.peer_id, "scorer"),
        },
    )
    base = fold(base_events)
    for who in (rogue, sly):
        prop = sw.propose(who, ROOT, ["R1", "R2"], lamport=3)
        for s in sw.peers["scorer"]:
            sw.vote(s, prop, True, 100, lamport=4)
    plan = fold(sw.events)
    assert set(plan.roles) == set(base.roles)
    assert_same_plan(plan, base)
    assert plan.root is not None and plan.root.proposals == ()


def test_allowlist_mode_only_counts_listed_peers() -> None:
    probe = make_swarm(seed=5)
    allowed = [i.peer_id for i in (probe.peers["decomposer"][0], *probe.peers["scorer"][:2])]
    sw = make_swarm(seed=5, access={"mode": "allowlist", "peers": allowed, "secret_env": "X"})
    assert [i.peer_id for i in sw.peers["scorer"]] == [i.peer_id for i in probe.peers["scorer"]]
    base = fold(sw.events)
    assert set(base.roles) == set(allowed)
    # an unlisted decomposer's proposal and an unlisted scorer's vote do not count
    rogue_prop = sw.propose(sw.peers["decomposer"][1], ROOT, ["A", "B"], lamport=5)
    for s in sw.peers["scorer"]:
        sw.vote(s, rogue_prop, True, 100, lamport=6)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["C", "D"], lamport=7)
    sw.vote(sw.peers["scorer"][2], prop, True, 100, lamport=8)  # unlisted
    sw.vote(sw.peers["scorer"][0], prop, True, 100, lamport=9)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted is None
    assert [(p.id, p.approvals) for p in plan.root.proposals] == [(prop.id, 1)]
    sw.vote(sw.peers["scorer"][1], prop, True, 100, lamport=10)
    assert fold(sw.events).root.accepted == prop.id  # type: ignore[union-attr]


def test_least_join_of_an_author_decides_its_role() -> None:
    sw = make_swarm()
    turncoat = Identity(b"\x61" * 32)
    sw.emit(turncoat, "join", {"role": "decomposer", "strategy": None, "admission": None}, lamport=9)
    sw.emit(turncoat, "join", {"role": "scorer", "strategy": None, "admission": None}, lamport=3)
    assert fold(sw.events).roles[turncoat.peer_id] == "scorer"


# -- the tie-break between proposals that both reach quorum -------------------------------------


def _two_proposals(sw: Swarm) -> tuple[Event, Event]:
    p1 = sw.propose(sw.peers["decomposer"][0], ROOT, ["One A", "One B"], lamport=1)
    p2 = sw.propose(sw.peers["decomposer"][1], ROOT, ["Two A", "Two B"], lamport=2)
    return p1, p2


@pytest.mark.parametrize("swap", [False, True])
def test_tie_break_least_completing_vote_lamport(swap: bool) -> None:
    sw = make_swarm(n_scorers=3, quorum=2)
    p1, p2 = _two_proposals(sw)
    early, late = (p2, p1) if swap else (p1, p2)
    s0, s1, s2 = scorers(sw)
    # `late` has its first approval earlier and a higher mean, but completes later
    sw.vote(s0, late, True, 100, lamport=3)
    sw.vote(s1, late, True, 100, lamport=20)
    sw.vote(s1, early, True, 10, lamport=10)
    sw.vote(s2, early, True, 10, lamport=19)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted == early.id
    assert statuses(plan) == {early.id: "accepted", late.id: "outvoted"}
    assert [p.id for p in plan.root.proposals] == [early.id, late.id]
    assert plan.root.children == (child_id(early.id, 0), child_id(early.id, 1))


@pytest.mark.parametrize("swap", [False, True])
def test_tie_break_then_least_completing_vote_author(swap: bool) -> None:
    sw = make_swarm(n_scorers=3, quorum=2)
    p1, p2 = _two_proposals(sw)
    win, lose = (p2, p1) if swap else (p1, p2)
    s0, s1, s2 = scorers(sw)
    # both complete at lamport 10; win's completing vote is by s0 (the least id), lose's by s2
    sw.vote(s2, win, True, 10, lamport=5)
    sw.vote(s0, win, True, 10, lamport=10)
    sw.vote(s0, lose, True, 100, lamport=4)
    sw.vote(s2, lose, True, 100, lamport=10)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted == win.id
    assert statuses(plan) == {win.id: "accepted", lose.id: "outvoted"}


@pytest.mark.parametrize("swap", [False, True])
def test_tie_break_then_higher_mean_score(swap: bool) -> None:
    sw = make_swarm(n_scorers=3, quorum=2)
    p1, p2 = _two_proposals(sw)
    win, lose = (p2, p1) if swap else (p1, p2)
    s0, s1, s2 = scorers(sw)
    # the same scorer completes both at the same lamport: (10, s1) for both
    sw.vote(s0, win, True, 71, lamport=3)
    sw.vote(s1, win, True, 70, lamport=10)
    sw.vote(s0, lose, True, 70, lamport=4)
    sw.vote(s1, lose, True, 70, lamport=10)
    # a rejecting vote after completion lowers the mean used in the tie-break
    sw.vote(s2, lose, False, 100, lamport=11)  # raises lose's mean to 80
    plan = fold(sw.events)
    lose_view = next(p for p in plan.root.proposals if p.id == lose.id)  # type: ignore[union-attr]
    assert lose_view.mean_score == 80
    assert plan.root.accepted == lose.id  # type: ignore[union-attr]
    # without that vote: 70.5 vs 70 -> win
    plan2 = fold([e for e in sw.events if not (e.kind == "vote" and e.lamport == 11)])
    assert plan2.root is not None and plan2.root.accepted == win.id
    assert statuses(plan2) == {win.id: "accepted", lose.id: "outvoted"}


def test_tie_break_then_lesser_proposal_id() -> None:
    sw = make_swarm(n_scorers=3, quorum=2)
    p1, p2 = _two_proposals(sw)
    s0, s1, _ = scorers(sw)
    for p in (p1, p2):
        sw.vote(s0, p, True, 75, lamport=3)
        sw.vote(s1, p, True, 85, lamport=10)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted == min(p1.id, p2.id)
    assert statuses(plan) == {min(p1.id, p2.id): "accepted", max(p1.id, p2.id): "outvoted"}


def test_completing_vote_is_the_qth_approval_not_the_last() -> None:
    # q = 2 of 5; p_a completes at 10 and gets more approvals later; p_b completes at 12
    sw = make_swarm(n_scorers=5, quorum=2)
    p_a, p_b = _two_proposals(sw)
    ss = scorers(sw)
    sw.vote(ss[0], p_a, True, 50, lamport=5)
    sw.vote(ss[1], p_a, True, 50, lamport=10)
    sw.vote(ss[2], p_a, True, 50, lamport=30)
    sw.vote(ss[3], p_b, True, 90, lamport=6)
    sw.vote(ss[4], p_b, True, 90, lamport=12)
    sw.vote(ss[0], p_b, False, 90, lamport=4)  # a rejection does not move the completing vote
    assert fold(sw.events).root.accepted == p_a.id  # type: ignore[union-attr]


# -- rejection -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "quorum", "rejections", "status"),
    [
        (3, "majority", 1, "pending"),
        (3, "majority", 2, "rejected"),
        (3, "all", 1, "rejected"),
        (3, 1, 2, "pending"),
        (3, 1, 3, "rejected"),
        (5, "majority", 2, "pending"),
        (5, "majority", 3, "rejected"),
        (4, "majority", 1, "pending"),
        (4, "majority", 2, "rejected"),
    ],
)
def test_rejected_when_rejections_exceed_n_minus_q(n: int, quorum: Any, rejections: int, status: str) -> None:
    sw = make_swarm(n_scorers=n, quorum=quorum)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["A", "B"], lamport=1)
    for i, s in enumerate(scorers(sw)[:rejections]):
        sw.vote(s, prop, False, 20, lamport=2 + i)
    plan = fold(sw.events)
    assert statuses(plan) == {prop.id: status}
    assert plan.root is not None and plan.root.status == ("open" if status == "rejected" else "voting")


def test_pending_proposal_is_outvoted_once_another_is_accepted() -> None:
    sw = make_swarm(n_scorers=3)
    p1, p2 = _two_proposals(sw)
    s0, s1, _ = scorers(sw)
    sw.vote(s0, p1, True, 80, lamport=3)
    sw.vote(s1, p1, True, 80, lamport=4)
    sw.vote(s0, p2, True, 80, lamport=5)
    assert statuses(fold(sw.events)) == {p1.id: "accepted", p2.id: "outvoted"}


# -- tree shape ----------------------------------------------------------------------------------


def test_child_ids_depths_and_the_leaf_rule() -> None:
    sw = make_swarm(max_depth=2)
    d0, d1 = sw.peers["decomposer"]
    ss = scorers(sw)
    root_prop = sw.emit(
        d0,
        "proposal",
        {
            "node": ROOT,
            "strategy": "by place",
            "revises": None,
            "rationale": "r",
            "children": [
                {"title": "Leaf now", "detail": "d0", "leaf": True, "facts": {"days": 2}},
                {"title": "Split me", "detail": "d1", "leaf": False, "facts": {"city": "Porto"}},
            ],
        },
        lamport=1,
    )
    for s in ss[:2]:
        sw.vote(s, root_prop, True, lamport=2)
    mid = child_id(root_prop.id, 1)
    assert mid == f"{root_prop.id[:16]}.1"
    mid_prop = sw.propose(d1, mid, ["Deep A", "Deep B", "Deep C"], leaf=False, lamport=3)
    for s in ss[:2]:
        sw.vote(s, mid_prop, True, lamport=4)
    # a proposal for a leaf and one for an unknown node are not part of the tree
    sw.propose(d0, child_id(root_prop.id, 0), ["No", "Way"], lamport=5)
    sw.propose(d0, "0123456789abcdef.0", ["Nowhere", "Else"], lamport=5)
    plan = fold(sw.events)

    root = plan.nodes[ROOT]
    assert (root.title, root.detail, root.depth, root.leaf, root.parent) == (
        "Plan a weekend in Lisbon",
        "Two adults, spring.",
        0,
        False,
        None,
    )
    assert root.children == (child_id(root_prop.id, 0), child_id(root_prop.id, 1))
    leaf0 = plan.nodes[child_id(root_prop.id, 0)]
    assert (leaf0.title, leaf0.detail, leaf0.depth, leaf0.leaf, leaf0.parent, dict(leaf0.facts)) == (
        "Leaf now",
        "d0",
        1,
        True,
        ROOT,
        {"days": 2},
    )
    assert leaf0.proposals == ()
    node1 = plan.nodes[mid]
    assert (node1.depth, node1.leaf, node1.accepted, dict(node1.facts)) == (
        1,
        False,
        mid_prop.id,
        {"city": "Porto"},
    )
    deep = [plan.nodes[c] for c in node1.children]
    assert [(n.id, n.title, n.depth, n.leaf, n.parent) for n in deep] == [
        (child_id(mid_prop.id, i), t, 2, True, mid) for i, t in enumerate(["Deep A", "Deep B", "Deep C"])
    ]
    assert len(plan.nodes) == 6
    assert plan.counts["proposals_outside_tree"] == 2
    assert [n.id for n in plan.walk()] == [ROOT, leaf0.id, mid, *node1.children]
    assert [n.id for n in plan.leaves()] == [leaf0.id, *node1.children]
    assert plan.progress() == {"nodes": 6, "split": 2, "open": 0, "leaves": 4, "claimed": 0, "done": 0}


def test_max_depth_zero_makes_the_root_a_leaf() -> None:
    # the goal schema forbids max_depth 0, so only a spec built in code reaches this rule
    spec = spec_from_json(make_swarm().spec)
    sw = Swarm(spec=replace(spec, tree=replace(spec.tree, max_depth=0)), seed=0)
    ex = sw.peers["executor"][0]
    c = sw.claim(ex, ROOT, lamport=1)
    sw.result(ex, ROOT, c, output="all of it")
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.leaf is True
    assert plan.root.result is not None and plan.root.result.output == "all of it"
    assert plan.complete is True


# -- claims and results ---------------------------------------------------------------------------


def test_least_claim_wins_by_lamport_then_author() -> None:
    sw, leaf = leaf_swarm()
    e0, e1 = executors(sw)
    late = sw.claim(e0, leaf, lamport=30)
    early = sw.claim(e1, leaf, lamport=20)
    node = fold(sw.events).nodes[leaf]
    assert node.claim == early.id
    assert [(c.id, c.live) for c in node.claims] == [(early.id, True), (late.id, True)]
    assert node.status == "claimed"
    # same lamport: the lesser author wins
    tie = sw.claim(e0, leaf, lamport=20)
    assert fold(sw.events).nodes[leaf].claim == tie.id


def test_supersede_kills_the_named_claim_only_from_a_later_lamport() -> None:
    sw, leaf = leaf_swarm()
    e0, e1 = executors(sw)
    old = sw.claim(e0, leaf, lamport=20)
    # a claim naming `old` but with a lower lamport does not kill it
    early = sw.claim(e1, leaf, supersedes=old.id, lamport=19)
    node = fold(sw.events).nodes[leaf]
    assert {c.id: c.live for c in node.claims} == {old.id: True, early.id: True}
    assert node.claim == early.id
    # one with the same lamport does not either
    sw.claim(e1, leaf, supersedes=old.id, lamport=20)
    assert {c.id: c.live for c in fold(sw.events).nodes[leaf].claims}[old.id] is True
    # a later one does; the dead claim can no longer win even though it is least
    sw2, leaf2 = leaf_swarm()
    e0, e1 = executors(sw2)
    old = sw2.claim(e0, leaf2, lamport=20)
    new = sw2.claim(e1, leaf2, supersedes=old.id, lamport=40)
    node = fold(sw2.events).nodes[leaf2]
    assert {c.id: c.live for c in node.claims} == {old.id: False, new.id: True}
    assert node.claim == new.id


def test_supersede_needs_an_authorised_claim_on_the_same_leaf() -> None:
    sw, leaf = leaf_swarm()
    other_leaf = leaf[:-1] + "1"
    e0, e1 = executors(sw)
    old = sw.claim(e0, leaf, lamport=20)
    sw.claim(e1, other_leaf, supersedes=old.id, lamport=40)  # other leaf
    sw.claim(sw.peers["scorer"][0], leaf, supersedes=old.id, lamport=40)  # not an executor
    node = fold(sw.events).nodes[leaf]
    assert [(c.id, c.live) for c in node.claims] == [(old.id, True)]
    assert node.claim == old.id


def test_results_count_only_under_a_claim_of_their_author_on_that_leaf() -> None:
    sw, leaf = leaf_swarm()
    other_leaf = leaf[:-1] + "1"
    e0, e1 = executors(sw)
    c0 = sw.claim(e0, leaf, lamport=20)
    c_other = sw.claim(e1, other_leaf, lamport=20)
    sw.result(e1, leaf, c0, output="stolen claim")  # author differs from the claim's
    sw.result(e1, leaf, c_other, output="claim elsewhere")  # claim on another leaf
    sw.emit(e1, "result", {"leaf": leaf, "claim": "f" * 64, "output": "no claim", "model": "m"})
    node = fold(sw.events).nodes[leaf]
    assert node.result is None and node.status == "claimed"
    good = sw.result(e0, leaf, c0, output="mine")
    node = fold(sw.events).nodes[leaf]
    assert node.result is not None and (node.result.id, node.result.output) == (good.id, "mine")
    assert node.status == "done"


def test_result_under_the_least_claim_counts_then_least_id() -> None:
    sw, leaf = leaf_swarm()
    e0, e1 = executors(sw)
    c_late = sw.claim(e0, leaf, lamport=30)
    c_early = sw.claim(e1, leaf, lamport=25)
    sw.result(e0, leaf, c_late, output="late claim")
    r1 = sw.result(e1, leaf, c_early, output="early claim 1")
    r2 = sw.result(e1, leaf, c_early, output="early claim 2")
    result = fold(sw.events).nodes[leaf].result
    assert result is not None
    assert result.id == min(r1.id, r2.id)
    assert result.claim == c_early.id and result.author == e1.peer_id


def test_superseded_holders_late_result_still_counts() -> None:
    sw, leaf = leaf_swarm()
    e0, e1 = executors(sw)
    slow = sw.claim(e0, leaf, lamport=20)
    taker = sw.claim(e1, leaf, supersedes=slow.id, lamport=50)
    sw.result(e1, leaf, taker, output="taker")
    late = sw.result(e0, leaf, slow, output="slow but first")
    node = fold(sw.events).nodes[leaf]
    assert node.claim == taker.id
    assert node.result is not None and node.result.id == late.id
    # without the slow holder's result, the taker's counts
    node = fold([e for e in sw.events if e.id != late.id]).nodes[leaf]
    assert node.result is not None and node.result.output == "taker"


# -- completeness and digest ----------------------------------------------------------------------


def test_complete_swarm_is_complete(converged: Swarm) -> None:
    plan = fold(converged.events)
    assert plan.complete is True
    assert plan.progress() == {"nodes": 13, "split": 4, "open": 0, "leaves": 9, "claimed": 9, "done": 9}
    alternatives = [p for p in plan.root.proposals if p.id != plan.root.accepted]  # type: ignore[union-attr]
    assert [p.status for p in alternatives] == ["rejected"]
    assert all(n.status in ("split", "done") for n in plan.walk())


def test_incomplete_without_one_result_or_one_acceptance(converged: Swarm) -> None:
    events = converged.events
    results = [e for e in events if e.kind == "result"]
    plan = fold([e for e in events if e.id != results[0].id])
    assert plan.complete is False
    assert plan.progress()["done"] == 8
    # drop every vote on one inner node's accepted proposal: that node reopens, its leaves vanish
    full = fold(events)
    inner = full.nodes[full.root.children[0]]  # type: ignore[union-attr]
    plan = fold([e for e in events if not (e.kind == "vote" and e.body.proposal == inner.accepted)])
    assert plan.complete is False
    assert plan.nodes[inner.id].status == "voting"
    assert plan.progress() == {"nodes": 10, "split": 3, "open": 1, "leaves": 6, "claimed": 6, "done": 6}


def test_root_not_accepted_is_incomplete() -> None:
    plan = fold(make_swarm().events)
    assert plan.complete is False
    assert plan.root is not None and plan.root.status == "open"
    assert plan.progress() == {"nodes": 1, "split": 0, "open": 1, "leaves": 0, "claimed": 0, "done": 0}


def test_digest_is_hash_of_content(converged: Swarm) -> None:
    plan = fold(converged.events)
    assert plan.digest == canonical_digest(plan.content())
    assert plan.to_json()["digest"] == plan.digest
    assert len(plan.digest) == 64


def test_digest_equal_for_equal_sets_and_differs_otherwise(converged: Swarm) -> None:
    events = converged.events
    plan = fold(events)
    assert fold(list(reversed(events))).digest == plan.digest
    assert fold(events + events[::3]).digest == plan.digest
    assert fold(complete_swarm(seed=7).events).digest == plan.digest  # synth is deterministic
    assert fold(complete_swarm(seed=8).events).digest != plan.digest
    last_result = [e for e in events if e.kind == "result"][-1]
    assert fold([e for e in events if e.id != last_result.id]).digest != plan.digest
    # a second result under a later claim does not change it; the counted one does
    leaf = last_result.body.leaf
    sw_events = list(events)
    ex = Identity(b"\x71" * 32)
    sw_events.append(
        make_event(ex, converged.run, "join", 1, {"role": "executor", "strategy": None, "admission": None})
    )
    c = make_event(ex, converged.run, "claim", 10_000, {"leaf": leaf, "supersedes": None})
    r = make_event(
        ex, converged.run, "result", 10_001, {"leaf": leaf, "claim": c.id, "output": "another", "model": "m"}
    )
    assert fold(sw_events + [c, r]).digest == plan.digest


def test_no_run_event_gives_an_empty_plan() -> None:
    sw = make_swarm()
    plan = fold(sw.events[1:])
    assert (plan.run_id, plan.root, plan.complete, plan.roles) == (None, None, False, {})
    assert plan.digest == canonical_digest({"run": None})
    assert plan.to_json()["root"] is None
    assert fold([]).digest == plan.digest


def test_foldstate_apply_is_idempotent(converged: Swarm) -> None:
    state = FoldState()
    assert [state.apply(e) for e in converged.events[:3]] == [True, True, True]
    assert state.apply(converged.events[0]) is False
    assert len(state) == 3 and converged.events[1].id in state
    assert state.get(converged.events[2].id) == converged.events[2]
    assert state.ids == {e.id for e in converged.events[:3]}


# -- findings (the first was a real bug, fixed in 7a7778a; the second is still open) ------------


def test_foreign_run_vote_never_hides_a_scorers_vote() -> None:
    sw = make_swarm(n_scorers=3)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["A", "B"], lamport=10)
    s0, s1, _ = scorers(sw)
    sw.vote(s0, prop, True, 80, lamport=20)
    sw.vote(s1, prop, True, 80, lamport=21)
    base = fold(sw.events)
    assert base.root is not None and base.root.accepted == prop.id
    foreign = make_swarm(seed=99)
    shadow = make_event(
        s0,
        foreign.run,
        "vote",
        1,
        {
            "proposal": prop.id,
            "approve": False,
            "score": 0,
            "critique": "",
            "checks": [],
            "model_score": None,
        },
    )
    assert fold(sw.events + [shadow]).digest == base.digest


def _foreign_run_event_with_lesser_id(sw: Swarm) -> Event:
    for nonce in range(1000):
        ev = make_run_event(Identity(b"\x13" * 32), minimal_spec(goal="Hijack"), nonce=str(nonce))
        if ev.id < sw.run_event.id:
            return ev
    raise AssertionError("unreachable")


def test_foreign_run_event_never_changes_the_plan(converged: Swarm) -> None:
    base = fold(converged.events)
    assert fold(converged.events + [_foreign_run_event_with_lesser_id(converged)]).digest == base.digest


# -- every run delivers: the best rejected split once every chain of revisions is used up -------------


def _reject_all(sw: Swarm, prop: Event, score: int) -> None:
    for s in scorers(sw):
        sw.vote(s, prop, False, score)


def test_a_node_takes_its_best_rejected_split_once_every_chain_is_used_up() -> None:
    sw = make_swarm(max_depth=1)  # max_revisions 2: a chain is three proposals
    a, b = sw.peers["decomposer"]
    scores = {a.peer_id: [40, 71, 55], b.peer_id: [62, 30, 66]}
    props: dict[int, Event] = {}
    for who in (a, b):
        for i, score in enumerate(scores[who.peer_id]):
            prop = sw.propose(who, ROOT, [f"Part {who.peer_id[-4:]} {i} {j}" for j in range(2)], leaf=True)
            props[score] = prop
            plan = fold(sw.events)
            assert plan.root is not None and plan.root.accepted is None  # a chain is still open
            _reject_all(sw, prop, score)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.accepted == props[71].id
    acc = plan.root.accepted_proposal
    assert acc is not None and acc.status == "accepted" and acc.approvals == 0 and acc.rejections == 3
    assert all(v.critique == "too vague" for v in acc.votes)  # the critiques stay on record
    assert sorted(p.status for p in plan.root.proposals) == ["accepted"] + ["rejected"] * 5


def test_no_fallback_while_a_proposal_is_pending_or_a_chain_is_open() -> None:
    sw = make_swarm(max_depth=1)
    a, b = sw.peers["decomposer"]
    for i in range(3):
        _reject_all(sw, sw.propose(a, ROOT, [f"A {i} x", f"A {i} y"], leaf=True), 50)
    pending = sw.propose(b, ROOT, ["B x", "B y"], leaf=True)
    sw.vote(scorers(sw)[0], pending, False, 90)
    assert fold(sw.events).root.accepted is None  # type: ignore[union-attr]
    sw.vote(scorers(sw)[1], pending, False, 90)  # rejected now, but b's chain has one of three
    assert fold(sw.events).root.accepted is None  # type: ignore[union-attr]


def test_a_revision_that_repeats_its_author_word_for_word_ends_its_chain() -> None:
    cases = ((["kyoto  temples", "Tokyo Sights"], True), (["Tokyo sights", "Nara deer"], False))
    for revision, ends in cases:
        sw = make_swarm(max_depth=1)  # max_revisions 2: a chain is three proposals
        a, b = sw.peers["decomposer"]
        for i in range(3):
            _reject_all(sw, sw.propose(a, ROOT, [f"A {i} x", f"A {i} y"], leaf=True), 50)
        first = sw.propose(b, ROOT, ["Tokyo sights", "Kyoto temples"], leaf=True)
        _reject_all(sw, first, 70)
        assert fold(sw.events).root.accepted is None  # type: ignore[union-attr]
        _reject_all(sw, sw.propose(b, ROOT, revision, leaf=True), 60)
        # the same split again (case and spacing aside) ends b's chain; one kept part does not
        assert fold(sw.events).root.accepted == (first.id if ends else None)  # type: ignore[union-attr]


def test_the_fallback_prefers_a_split_some_lens_approved_over_a_higher_mean() -> None:
    sw = make_swarm(max_depth=1)
    a, b = sw.peers["decomposer"]
    s0, s1, s2 = scorers(sw)
    props = {}
    for who in (a, b):
        for i in range(3):
            prop = sw.propose(who, ROOT, [f"{who.peer_id[-3:]} {i} x", f"{i} y"], leaf=True)
            props[(who.peer_id, i)] = prop
            if (who, i) == (b, 1):  # one lens approves it: mean 50
                sw.vote(s0, prop, True, 75)
                sw.vote(s1, prop, False, 40)
                sw.vote(s2, prop, False, 35)
            else:  # every lens rejects: mean 58 for a's first, lower for the rest
                _reject_all(sw, prop, 58 if (who, i) == (a, 0) else 30)
    assert fold(sw.events).root.accepted == props[(b.peer_id, 1)].id  # type: ignore[union-attr]


def test_the_fallback_never_takes_a_split_that_repeats_other_parts_of_the_tree() -> None:
    """A split a quorum found repeating other nodes (``repeats`` failed) loses the fallback to
    any split that does not, whatever its score."""
    sw = make_swarm(max_depth=1)
    a, b = sw.peers["decomposer"]
    props = {}
    for who in (a, b):
        for i in range(3):
            prop = sw.propose(who, ROOT, [f"{who.peer_id[-3:]} {i} x", f"{i} y"], leaf=True)
            props[(who.peer_id, i)] = prop
            clean = (who, i) == (a, 2)
            for s in scorers(sw):
                sw.vote(s, prop, False, 20 if clean else 59, failed=() if clean else ("repeats",))
    assert fold(sw.events).root.accepted == props[(a.peer_id, 2)].id  # type: ignore[union-attr]


def test_a_node_whose_every_split_repeats_other_parts_is_done_as_one_task() -> None:
    """Seen on todo-cli: all six splits of one stage re-listed the root's other stages. Taking
    the best of them planned those stages twice; the node becomes a leaf instead, claimed and
    executed like any other, and a split that reaches quorum later still wins."""
    sw = make_swarm(max_depth=2)
    root = sw.accept(ROOT, ["Storage layer", "Sync protocol"])
    sync = child_id(root.id, 1)
    a, b = sw.peers["decomposer"]
    for who in (a, b):
        for i in range(3):
            prop = sw.propose(who, sync, [f"{who.peer_id[-3:]} storage {i}", f"sync {i}"], leaf=True)
            for j, s in enumerate(scorers(sw)):
                # a quorum (2 of 3) saw the repeat; one lens did not
                sw.vote(s, prop, False, 50, failed=("repeats",) if j < 2 else ())
    plan = fold(sw.events)
    node = plan.nodes[sync]
    assert node.leaf and node.accepted is None and node.children == () and node.status == "unclaimed"
    assert len(node.proposals) == 6 and {p.status for p in node.proposals} == {"rejected"}
    assert sync in {n.id for n in plan.leaves()} and not plan.complete
    # executed like any leaf
    ex = sw.peers["executor"][0]
    sw.result(ex, sync, sw.claim(ex, sync))
    done = fold(sw.events)
    assert done.nodes[sync].status == "done" and done.nodes[sync].result is not None
    # every export shows it (the JSON one is checked against schemas/plan.schema.json)
    for fmt in ("json", "markdown"):
        assert "sync 2" in render_plan(done, fmt)  # the rejected splits stay on record
    assert "Done as one task" in render_plan(done, "markdown")
    assert "Result for" in render_plan(done, "spec")
    assert not done.complete  # the other stage still needs its split
    # the same events in another order give the same plan, and the incremental fold agrees
    assert fold(list(reversed(sw.events))).digest == done.digest
    state = FoldState(sw.events[:-3])
    for e in sw.events[-3:]:
        state.apply(e)
    assert state.plan().digest == done.digest
    # a split that passes later still wins: the leaf becomes a split again
    late = sw.propose(a, sync, ["Conflict rules", "Offline queue"], leaf=True)
    for s in scorers(sw):
        sw.vote(s, late, True, 80)
    for s in scorers(sw):
        sw.ballot(s, sync, [late])
    state.apply(late)
    for e in sw.events[-6:]:
        state.apply(e)
    again = state.plan()
    assert again.nodes[sync].accepted == late.id and not again.nodes[sync].leaf
    assert again.digest == fold(sw.events).digest


def test_a_split_that_reaches_quorum_beats_the_fallback() -> None:
    sw = make_swarm(max_depth=1)
    a, b = sw.peers["decomposer"]
    for who in (a, b):
        for i in range(3):
            _reject_all(sw, sw.propose(who, ROOT, [f"{who.peer_id[-3:]} {i} x", f"{i} y"], leaf=True), 80)
    assert fold(sw.events).root.accepted is not None  # type: ignore[union-attr]
    late = sw.propose(a, ROOT, ["Late x", "Late y"], leaf=True)
    for s in scorers(sw)[:2]:
        sw.vote(s, late, True, 61)
    assert fold(sw.events).root.accepted == late.id  # type: ignore[union-attr]


# -- tree.select: best — ranked ballots decide among approved splits -----------------------------


def _approved_pair(sw: Swarm) -> tuple[Event, Event]:
    """Two splits of the root, each approved by every scorer: ``early`` completes its quorum
    first, ``late`` after (the ``first`` rule would take ``early``)."""
    a, b = sw.peers["decomposer"]
    early = sw.propose(a, ROOT, ["Early x", "Early y"], leaf=True, lamport=1)
    late = sw.propose(b, ROOT, ["Late x", "Late y"], leaf=True, lamport=2)
    for s in scorers(sw):
        sw.vote(s, early, True, 70, lamport=3)
    for s in scorers(sw):
        sw.vote(s, late, True, 90, lamport=10)
    return early, late


def test_a_better_ranked_rival_beats_an_earlier_one() -> None:
    sw = make_swarm(max_depth=1, select="best")
    early, late = _approved_pair(sw)
    plan = fold(sw.events)
    assert plan.root.accepted is None  # type: ignore[union-attr]
    assert statuses(plan) == {early.id: "approved", late.id: "approved"}
    assert plan.root.status == "balloting"  # type: ignore[union-attr]
    s1, s2, s3 = scorers(sw)
    sw.ballot(s1, ROOT, [late, early], lamport=11)
    assert fold(sw.events).root.accepted is None  # type: ignore[union-attr]  # 1 of q=2
    sw.ballot(s2, ROOT, [late, early], lamport=12)
    plan = fold(sw.events)
    assert plan.root.accepted == late.id  # type: ignore[union-attr]
    assert statuses(plan) == {late.id: "accepted", early.id: "outvoted"}
    assert {p.id: p.points for p in plan.root.proposals} == {late.id: 4, early.id: 2}  # type: ignore[union-attr]
    # a third ballot, later, changes nothing: the first q decide
    sw.ballot(s3, ROOT, [early, late], lamport=13)
    assert fold(sw.events).root.accepted == late.id  # type: ignore[union-attr]


def test_borda_points_then_mean_score_then_order() -> None:
    sw = make_swarm(max_depth=1, select="best")
    early, late = _approved_pair(sw)
    s1, s2, _ = scorers(sw)
    sw.ballot(s1, ROOT, [early, late], lamport=11)
    sw.ballot(s2, ROOT, [late, early], lamport=12)
    # 3 points each: the higher mean score (late: 90) wins
    assert fold(sw.events).root.accepted == late.id  # type: ignore[union-attr]
    sw = make_swarm(max_depth=1, select="best")
    early, late = _approved_pair(sw)
    s1, s2, _ = scorers(sw)
    sw.ballot(s1, ROOT, [early], lamport=11)
    sw.ballot(s2, ROOT, [early, late], lamport=12)
    assert fold(sw.events).root.accepted == early.id  # type: ignore[union-attr]  # 3 points to 1


def test_a_tie_of_points_and_mean_goes_by_content_not_by_who_proposed_first() -> None:
    """Two approved splits with the same Borda points and mean score: the winner is the one whose
    content sorts first, whichever was proposed first and by whom (so that the same proposals
    give the same plan in every run)."""
    winners = set()
    for first, second in ((["Aa x", "Aa y"], ["Bb x", "Bb y"]), (["Bb x", "Bb y"], ["Aa x", "Aa y"])):
        sw = make_swarm(max_depth=1, select="best")
        a, b = sw.peers["decomposer"]
        p1 = sw.propose(a, ROOT, first, leaf=True, lamport=1)
        p2 = sw.propose(b, ROOT, second, leaf=True, lamport=2)
        for s in scorers(sw):
            sw.vote(s, p1, True, 80, lamport=3)
            sw.vote(s, p2, True, 80, lamport=4)
        s1, s2, _ = scorers(sw)
        sw.ballot(s1, ROOT, [p1, p2], lamport=11)
        sw.ballot(s2, ROOT, [p2, p1], lamport=12)
        root = fold(sw.events).root
        assert root is not None and root.accepted is not None
        winners.add(tuple(c.title for c in root.accepted_proposal.children))  # type: ignore[union-attr]
    assert winners == {("Aa x", "Aa y")}


def test_only_a_scorers_first_decisive_ballot_counts() -> None:
    sw = make_swarm(max_depth=1, select="best")
    a, _ = sw.peers["decomposer"]
    bad = sw.propose(a, ROOT, ["Bad x", "Bad y"], leaf=True, lamport=1)
    for s in scorers(sw):
        sw.vote(s, bad, False, 20, lamport=2)
    early, late = _approved_pair(sw)
    s1, s2, s3 = scorers(sw)
    sw.ballot(s1, ROOT, [bad], lamport=11)  # ranks no approved split: not decisive
    sw.ballot(s1, ROOT, [late], lamport=12)  # s1's decisive ballot
    sw.ballot(s1, ROOT, [early], lamport=13)  # ignored: s1 has decided
    sw.ballot(s2, ROOT, [early, late], lamport=14)
    # late 1 + 1, early 2: a tie, and late's mean score (90) beats early's (70); had s1's
    # ranking of only the rejected split counted, early would have won 2 to 1
    assert fold(sw.events).root.accepted == late.id  # type: ignore[union-attr]


def test_a_ballot_past_the_first_q_decisive_ones_changes_nothing() -> None:
    sw = make_swarm(max_depth=1, select="best")
    early, late = _approved_pair(sw)
    s1, s2, s3 = scorers(sw)
    sw.ballot(s1, ROOT, [late, early], lamport=11)
    sw.ballot(s2, ROOT, [early, late], lamport=12)
    assert fold(sw.events).root.accepted == late.id  # type: ignore[union-attr]  # 3 to 3, mean 90
    sw.ballot(s3, ROOT, [early], lamport=13)  # counted, early would win 4 to 3
    assert fold(sw.events).root.accepted == late.id  # type: ignore[union-attr]


def test_ballots_of_non_scorers_and_foreign_nodes_do_not_count() -> None:
    sw = make_swarm(max_depth=1, select="best")
    early, late = _approved_pair(sw)
    s1, _, _ = scorers(sw)
    sw.ballot(sw.peers["decomposer"][1], ROOT, [late], lamport=11)  # a decomposer's
    sw.ballot(executors(sw)[0], ROOT, [late], lamport=11)  # an executor's
    sw.ballot(s1, "0000000000000000.0", [late], lamport=11)  # another node's
    sw.ballot(s1, ROOT, [late], lamport=12)
    assert fold(sw.events).root.accepted is None  # type: ignore[union-attr]  # 1 decisive of 2


def test_a_run_made_before_ballots_keeps_the_first_rule() -> None:
    """A run event whose spec has no tree.select folds by the rule its peers ran with."""
    raw = minimal_spec()
    del raw["tree"]["select"]
    sw = Swarm(spec=raw, seed=1)
    assert sw.run_event.body.spec.tree.select == "first"
    early, late = _approved_pair(sw)
    assert fold(sw.events).root.accepted == early.id  # type: ignore[union-attr]


def test_a_plan_with_a_split_awaiting_its_ballots_exports() -> None:
    """An approved split before the ballots (status 'balloting': a run stopped then, say)
    is a valid export in every format."""
    sw = make_swarm(max_depth=1, select="best")
    a, _ = sw.peers["decomposer"]
    prop = sw.propose(a, ROOT, ["Alfama walk", "Belem tower"], leaf=True)
    for s in scorers(sw):
        sw.vote(s, prop, True, 80)
    plan = fold(sw.events)
    assert plan.root is not None and plan.root.status == "balloting"
    for fmt in ("json", "markdown"):
        assert "Alfama walk" in render_plan(plan, fmt)
    assert "Plan a weekend in Lisbon" in render_plan(plan, "spec")
