"""Claims scale with the leaves, not with the executors: the claimable leaves, in tree order,
fall to the free executors one each (ranked per leaf by a hash of (leaf, peer)), and each claims
its own at once; a leaf left claimable is claimed by the free executor ranked ``r`` for it after
``max(1, r)`` settle windows, so a busy or gone executor delays it by a window or so only."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import trio
import trio.testing

from specswarm.model.replay import ScriptedModel
from specswarm.plan import ROOT, Plan, child_id, fold
from specswarm.protocol.bodies import ClaimBody
from specswarm.swarm.roles.base import spread, tree_orders
from specswarm.swarm.roles.executor import (
    SETTLE_FLOOR,
    SETTLE_SHARE,
    Executor,
    RankCache,
    assign_leaves,
    claim_rank,
)
from specswarm.testing.sim import SimConfig, run_simulation
from specswarm.testing.synth import Swarm, one_split_spec
from tests.swarmkit import swarm_spec

SETTLE = 0.5


class FakeNode:
    """What the executor asks of its node: the plan, who looks gone, and publishing."""

    def __init__(
        self, peer_id: str, plan: Plan, gone: frozenset[str] = frozenset(), period: float = 1.0
    ) -> None:
        self.peer_id = peer_id
        self._plan = plan
        self.gone = gone
        self.published: list[Any] = []
        # the swarm's round and the announcement interval (AntiEntropy)
        self.sync = SimpleNamespace(period=lambda: period, announce_interval=lambda: 1.0)

    def plan(self) -> Plan:
        return self._plan

    def peer_gone(self, peer: str, since: float, grace: float = 0.0) -> bool:
        return peer in self.gone

    async def publish(self, body: Any) -> Any:
        self.published.append(body)
        return SimpleNamespace(id=f"claim-{len(self.published)}")


def _two_leaves(busy_first: bool) -> tuple[Plan, str, list[str]]:
    """A run split into two leaves, with four executors; returns the plan, the second leaf and
    the executors ranked for it. With ``busy_first``, its first-ranked executor holds the
    first leaf."""
    sw = Swarm(spec=one_split_spec(scorers=1, executors=4), seed=8)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["Lisbon", "Sintra"], leaf=True)
    sw.vote(sw.peers["scorer"][0], prop, True, 80)
    first, second = child_id(prop.id, 0), child_id(prop.id, 1)
    ranked = sorted((e.peer_id for e in sw.peers["executor"]), key=lambda p: (spread(second, p), p))
    if busy_first:
        holder = next(e for e in sw.peers["executor"] if e.peer_id == ranked[0])
        sw.claim(holder, first)
    return fold(sw.events), second, ranked


def _act_at(node: FakeNode, times: list[float]) -> list[tuple[float, list[str]]]:
    """Run one executor's act at each virtual time; what it had claimed after each."""

    async def main() -> list[tuple[float, list[str]]]:
        ex = Executor(None, settle_seconds=SETTLE, claim_timeout=60.0)
        seen = []
        start = trio.current_time()
        for t in times:
            await trio.sleep_until(start + t)
            await ex.act(node, node.plan())  # type: ignore[arg-type]
            seen.append((t, [b.leaf for b in node.published if isinstance(b, ClaimBody)]))
        return seen

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_the_first_ranked_free_executor_claims_at_once_the_next_one_settle_window_later() -> None:
    plan, leaf, ranked = _two_leaves(busy_first=True)
    # ranked[0] holds the other leaf: busy, so ranked[1] is first among the free ones
    assert _act_at(FakeNode(ranked[1], plan), [0.0])[-1][1] == [leaf]
    late = _act_at(FakeNode(ranked[2], plan), [0.0, SETTLE * 0.9, SETTLE * 1.1])
    assert [claimed for _, claimed in late] == [[], [], [leaf]]
    last = _act_at(FakeNode(ranked[3], plan), [0.0, SETTLE * 1.5, SETTLE * 2.1])
    assert [claimed for _, claimed in last] == [[], [], [leaf]]


def test_in_a_swarm_larger_than_the_announcers_each_rank_waits_a_round_at_least() -> None:
    """At 32 peers on 2 cores gossip takes seconds: with settle windows of 0.3 s every executor
    claimed and ran the same leaf. There a rank waits the swarm's round (4 s at 32 peers)."""
    plan, _, ranked = _two_leaves(busy_first=True)
    ex = Executor(None, settle_seconds=0.3)
    small = FakeNode(ranked[2], plan, period=1.0)  # up to ANNOUNCERS peers: one interval
    large = FakeNode(ranked[2], plan, period=4.0)  # 4 * ANNOUNCERS peers: four intervals
    assert ex._window(small) == 0.3  # type: ignore[arg-type]
    assert ex._window(large) == 4.0  # type: ignore[arg-type]
    assert ex._window(FakeNode(ranked[2], plan, period=0.1)) == 0.3  # type: ignore[arg-type]


def test_claimable_leaves_fall_in_tree_order_to_distinct_free_executors() -> None:
    plan, _, ranked = _two_leaves(busy_first=False)
    orders = tree_orders(plan)
    leaves = sorted((n.id for n in plan.leaves()), key=lambda i: orders[i])
    since = dict.fromkeys(leaves, 0.0)
    turn = assign_leaves(FakeNode(ranked[0], plan), plan, leaves, set(), RankCache(), since)  # type: ignore[arg-type]
    assert set(turn) == set(leaves) and len(set(turn.values())) == 2
    first = sorted(ranked, key=lambda p: (spread(leaves[0], p), p))[0]
    assert turn[leaves[0]] == first  # the first leaf picks first
    # the first leaf's executor claims it at once; the second leaf waits for its elder sibling
    assert _act_at(FakeNode(turn[leaves[0]], plan), [0.0])[-1][1] == [leaves[0]]
    assert _act_at(FakeNode(turn[leaves[1]], plan), [0.0])[-1][1] == []
    # the first leaf's executor looks gone: the others take both leaves, still one each
    gone = frozenset([first])
    view = FakeNode(ranked[0] if ranked[0] != first else ranked[1], plan, gone=gone)
    again = assign_leaves(view, plan, leaves, set(), RankCache(), since)  # type: ignore[arg-type]
    assert set(again) == set(leaves) and first not in again.values() and len(set(again.values())) == 2
    # and with fewer free executors than leaves, the earlier leaf is the one taken
    busy = {p for p in ranked if p != first}
    live = FakeNode(view.peer_id, plan)
    assert assign_leaves(live, plan, leaves, busy, RankCache(), since) == {leaves[0]: first}  # type: ignore[arg-type]


def test_the_rank_counts_free_live_executors_ranked_before_us() -> None:
    plan, leaf, ranked = _two_leaves(busy_first=False)
    node = FakeNode(ranked[2], plan, gone=frozenset(ranked[:2]))
    assert claim_rank(node, plan, leaf, set(), RankCache(), 0.0, 10) == 0  # type: ignore[arg-type]
    alive = FakeNode(ranked[2], plan)
    assert claim_rank(alive, plan, leaf, set(), RankCache(), 0.0, 10) == 2  # type: ignore[arg-type]
    assert claim_rank(alive, plan, leaf, {ranked[0]}, RankCache(), 0.0, 10) == 1  # type: ignore[arg-type]
    assert claim_rank(alive, plan, leaf, set(), RankCache(), 0.0, 0) == 1  # type: ignore[arg-type]  # stops early


def test_no_leaf_is_claimed_before_its_earlier_siblings() -> None:
    """A result is compared with the earlier siblings' (``_earlier_results``), which must be
    under way when it is written: so the second leaf waits for the first to be claimed, even
    for the executor it would fall to, and even past the fallback's windows."""
    plan, second, ranked = _two_leaves(busy_first=False)
    acts = [_act_at(FakeNode(p, plan), [0.0, 10 * SETTLE]) for p in ranked]
    assert sum(1 for a in acts if a[0][1]) == 1  # at once: the first leaf, by the one it falls to
    assert all(second not in a[-1][1] for a in acts)  # in this (frozen) view the first stays open


def test_claims_in_a_simulated_swarm_follow_the_leaves_not_the_executors() -> None:
    r = run_simulation(swarm_spec(), SimConfig(peers=40, depth=2))
    assert r.converged and r.share_final == 1.0
    leaves = len(r.plan.leaves()) if r.plan else 0
    assert leaves >= 2
    executors = sum(1 for role in r.plan.roles.values() if role == "executor") if r.plan else 0
    assert executors > 2 * leaves  # more executors than leaves: the case that fanned out
    assert r.kinds["result"] == leaves
    assert r.kinds["claim"] <= 2 * leaves, r.kinds  # was about one per executor per leaf wave


def _rival_claims() -> tuple[Swarm, str, Any, Any, Any]:
    """A run split into two leaves; the first leaf claimed by two executors at once (the same
    lamport, as views that differ give): returns the swarm, the leaf, the claim that wins, the
    one that loses, and the loser's identity."""
    sw = Swarm(spec=one_split_spec(scorers=1, executors=4), seed=8)
    prop = sw.propose(sw.peers["decomposer"][0], ROOT, ["Lisbon", "Sintra"], leaf=True)
    sw.vote(sw.peers["scorer"][0], prop, True, 80)
    leaf = child_id(prop.id, 0)
    a, b = sw.peers["executor"][:2]
    lamport = max(sw.clock.values()) + 1
    ca, cb = sw.claim(a, leaf, lamport=lamport), sw.claim(b, leaf, lamport=lamport)
    plan = fold(sw.events)
    win, lose = (ca, cb) if plan.nodes[leaf].claim == ca.id else (cb, ca)
    return sw, leaf, win, lose, (b if lose is cb else a)


class ClaimingNode(FakeNode):
    """A node whose plan the test changes over time, counting what the executor withholds."""

    def __init__(self, peer_id: str, plan: Plan, claim_id: str, period: float) -> None:
        super().__init__(peer_id, plan, period=period)
        self.claim_id = claim_id
        self.counters = SimpleNamespace(results_withheld=0)

    async def publish(self, body: Any) -> Any:
        self.published.append(body)
        return SimpleNamespace(id=self.claim_id)


def _claim_and_run(
    period: float,
    rival_heard_at: float,
    settle: float = 0.3,
    task_seconds: float | None = None,
    model: Any = None,
    loaded: bool = False,
) -> tuple[int, int]:
    """The losing claimant claims; the winning rival's claim reaches it ``rival_heard_at``
    seconds later. Returns (leaves it went on to run, races it saw lost). ``task_seconds``: what
    its latest model task took (None: it has not asked the model yet); ``model``: its model
    (None: none given), ``loaded`` before the claim or loaded while it settles."""
    sw, leaf, win, lose, loser = _rival_claims()
    mine = fold([e for e in sw.events if e.id != win.id])
    both = fold(sw.events)
    node = ClaimingNode(loser.peer_id, mine, lose.id, period)
    ex = Executor((lambda: model) if model is not None else None, settle_seconds=settle)
    ex._model = model if loaded else None
    ex.task_seconds = task_seconds
    ran: list[str] = []

    async def execute(node: Any, plan: Plan, leaf: Any, claim_id: str) -> None:
        ran.append(leaf.id)

    ex._execute = execute  # type: ignore[method-assign]

    async def main() -> None:
        async with trio.open_nursery() as nursery:

            async def rival_arrives() -> None:
                await trio.sleep(rival_heard_at)
                node._plan = both

            nursery.start_soon(rival_arrives)
            await ex._claim_and_run(node, leaf, None)  # type: ignore[arg-type]

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return len(ran), ex.lost_races


def test_in_a_large_swarm_a_claim_settles_a_round_before_its_leaf_is_run() -> None:
    """At 32 peers on 2 cores two executors that claimed the same leaf at once each ran it (51
    claims, 51 results for 9 leaves): a rival claim took longer than the 0.3 s settle window to
    arrive. Where the swarm's round is longer than the settle window, a claim waits the round."""
    assert _claim_and_run(period=1.0, rival_heard_at=2.0) == (1, 0)  # small swarm: 0.3 s, ran
    assert _claim_and_run(period=4.0, rival_heard_at=2.0) == (0, 1)  # large: heard it, stood back
    assert _claim_and_run(period=4.0, rival_heard_at=5.0) == (1, 0)  # heard too late: ran


def test_a_claim_settles_for_a_share_of_what_the_model_takes_never_below_the_floor() -> None:
    """A second spent per leaf guarding a model that answers at once cost more than the
    duplicates it avoided (japan, scripted model: 5 of 13 s). Once the model has answered, a
    small swarm's claimant settles for SETTLE_SHARE of its latest task, at least SETTLE_FLOOR;
    a slow model keeps the whole window, and a large swarm its round."""
    heard = SETTLE_FLOOR + 0.05  # the rival's claim arrives just after the floor
    assert _claim_and_run(1.0, heard, settle=1.0) == (0, 1)  # no task yet: the whole window
    assert _claim_and_run(1.0, heard, settle=1.0, task_seconds=0.01) == (1, 0)  # floor: ran
    slow = (SETTLE_FLOOR + 0.1) / SETTLE_SHARE  # a share of it outlasts the rival's arrival
    assert _claim_and_run(1.0, heard, settle=1.0, task_seconds=slow) == (0, 1)
    assert _claim_and_run(1.0, 0.95, settle=1.0, task_seconds=600.0) == (0, 1)  # capped: 1 s
    assert _claim_and_run(1.0, 1.05, settle=1.0, task_seconds=600.0) == (1, 0)
    assert _claim_and_run(4.0, 2.0, settle=1.0, task_seconds=0.01) == (0, 1)  # large: its round


def test_a_claim_settles_for_the_floor_from_the_first_when_the_model_is_no_real_one() -> None:
    """A scripted model (``instant``) settles for SETTLE_FLOOR from the first claim on, a real
    one keeps the whole window until it has answered once (loaded before the claim or while it
    settles: the mock clock runs on while a thread loads it); a large swarm keeps its round."""
    heard = SETTLE_FLOOR + 0.05
    real = SimpleNamespace(instant=False, name="real")
    scripted = ScriptedModel()
    assert _claim_and_run(1.0, heard, settle=1.0, model=scripted, loaded=True) == (1, 0)  # floor: ran
    assert _claim_and_run(1.0, heard, settle=1.0, model=real, loaded=True) == (0, 1)  # the window
    assert _claim_and_run(1.0, heard, settle=1.0, model=real) == (0, 1)
    assert _claim_and_run(4.0, 2.0, settle=1.0, model=scripted, loaded=True) == (0, 1)  # large: round


def test_a_result_is_not_sent_when_an_older_live_claim_or_a_result_holds_the_leaf() -> None:
    sw, leaf, win, lose, loser = _rival_claims()
    winner = next(p for p in sw.peers["executor"] if p.peer_id == win.author)
    ex = Executor(None, settle_seconds=0.3)

    def outrun(
        events: list[Any], claim_id: str, peer: str, gone: frozenset[str] = frozenset()
    ) -> tuple[bool, int]:
        node = ClaimingNode(peer, fold(events), claim_id, period=1.0)
        node.gone = gone
        return ex._outrun(node, leaf, claim_id), node.counters.results_withheld  # type: ignore[arg-type]

    async def check() -> None:
        # the rival's older claim, its holder alive: the loser's result is not sent
        assert outrun(sw.events, lose.id, loser.peer_id) == (True, 1)
        # the rival is gone: the loser's result is sent (it takes the leaf over)
        assert outrun(sw.events, lose.id, loser.peer_id, gone=frozenset([winner.peer_id])) == (False, 0)
        # the winner's own result is sent
        assert outrun(sw.events, win.id, winner.peer_id) == (False, 0)
        # a result is in: nobody else's is sent, however old its claim
        done = [*sw.events, sw.result(winner, leaf, win)]
        assert outrun(done, lose.id, loser.peer_id) == (True, 1)

    trio.run(check, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_leaf_waiting_for_its_earlier_sibling_counts_its_turns_from_when_it_is_ready() -> None:
    """At 32 peers a second leaf became claimable when the first was claimed, seconds after both
    appeared; its turns had been counted from its appearance, so every executor's had come, and
    7 to 10 executors claimed it at once. The turns now count from when it is ready."""
    open_plan, second, ranked = _two_leaves(busy_first=False)
    claimed_plan, _, _ = _two_leaves(busy_first=True)  # ranked[0] now holds the first leaf
    first = next(n.id for n in open_plan.leaves() if n.id != second)
    first_top = sorted(ranked, key=lambda p: (spread(first, p), p))[0]
    me = next(p for p in ranked[2:] if p != first_top)  # never assigned the first leaf
    rank = ranked.index(me) - 1  # among the free: ranked[0] is busy
    node = FakeNode(me, open_plan)
    ready_at = 0.5 * SETTLE  # before its first turn for the first leaf (it ranks below first_top)

    async def main() -> list[tuple[float, list[str]]]:
        ex = Executor(None, settle_seconds=SETTLE, claim_timeout=60.0)
        start, seen = trio.current_time(), []
        for t in [0.0, ready_at, ready_at + (rank - 0.2) * SETTLE, ready_at + (rank + 0.1) * SETTLE]:
            await trio.sleep_until(start + t)
            if t >= ready_at:
                node._plan = claimed_plan
            await ex.act(node, node.plan())  # type: ignore[arg-type]
            seen.append((t, [b.leaf for b in node.published if isinstance(b, ClaimBody)]))
        return seen

    seen = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    # counted from its appearance, its turn would have come at rank windows, before the last act
    assert [claimed for _, claimed in seen] == [[], [], [], [second]]


def test_a_claimant_in_a_swarm_whose_round_exceeds_the_claim_timeout_is_not_superseded() -> None:
    """The settle window follows the swarm's round, which grows with the swarm (125 s at 1,000
    peers). With the window longer than the claim timeout (60 s in the simulation) every claim
    was taken over while its holder still settled, and the holder then found it had lost: 1,000
    simulated peers never converged (40 claims, 4 results for 9 leaves). The window is capped
    well below the timeout, and the timeout counts from the end of the holder's window."""
    plan, _, ranked = _two_leaves(busy_first=True)
    ex = Executor(None, settle_seconds=0.3, claim_timeout=60.0)
    huge = FakeNode(ranked[2], plan, period=125.0)
    assert ex._window(huge) == 15.0  # type: ignore[arg-type]
    # 40 peers announcing every 15 s: a round of 75 s, past the simulation's 60 s claim timeout
    r = run_simulation(swarm_spec(), SimConfig(peers=40, depth=2, announce_interval=15.0))
    assert r.converged and r.share_final == 1.0, (r.seconds, r.kinds)
    leaves = len(r.plan.leaves()) if r.plan else 0
    assert r.kinds["result"] == leaves and r.kinds["claim"] <= 2 * leaves, r.kinds
