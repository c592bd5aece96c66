"""The gossip mesh, liveness through it, and the protocol simulation (virtual time throughout)."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from specswarm.protocol.bodies import JoinBody
from specswarm.protocol.events import make_event, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import spec_from_json
from specswarm.swarm.antientropy import GONE_GRACE, AntiEntropy
from specswarm.swarm.cadence import ANNOUNCERS
from specswarm.swarm.node import Node, topic_for
from specswarm.swarm.wire import encode_event
from specswarm.testing.sim import SimConfig, run_simulation
from specswarm.transport.mesh import MeshNetwork, open_mesh_network
from tests.swarmkit import swarm_spec


def _virtual(fn):  # type: ignore[no-untyped-def]
    return trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))


def _hops_apart(net: MeshNetwork, a: str, b: str) -> int:
    seen, frontier, hops = {a}, {a}, 0
    while b not in frontier:
        frontier = {n for f in frontier for n in net.links[f]} - seen
        seen |= frontier
        hops += 1
    return hops


def test_a_message_crosses_the_mesh_hop_by_hop_once_per_peer() -> None:
    async def main() -> tuple[list[int], int, int, float]:
        async with open_mesh_network(seed=3, degree=3, latency=0.05) as net:
            ts = [net.add_peer(f"p{i}", topic="t") for i in range(40)]
            assert all(len(t.peers()) >= 3 for t in ts[4:])
            assert len(ts[0].peers()) < 39  # a mesh, not a hub
            start = trio.current_time()
            await ts[0].publish(b"hello")
            got = []
            for t in ts[1:]:
                with trio.fail_after(5):
                    got.append((await t.incoming().receive()) == ("p0", b"hello"))
            far = max(_hops_apart(net, "p0", t.local_id) for t in ts[1:])
            await trio.sleep(1)
            for t in ts[1:]:
                assert t.incoming().statistics().current_buffer_used == 0  # delivered once
            copies = sum(t.mesh.copies_in for t in ts)
            dups = sum(t.mesh.duplicates for t in ts)
            return [int(g) for g in got], copies - dups, far, trio.current_time() - start

    got, firsts, far, _ = _virtual(main)
    assert got == [1] * 39
    assert firsts == 39  # one first copy per other peer; the rest are counted duplicates
    assert far >= 2


def test_the_network_loses_hops_and_heals_the_degree_after_a_death() -> None:
    async def main() -> tuple[int, int, list[int]]:
        async with open_mesh_network(seed=1, degree=4, loss=1.0) as net:
            ts = [net.add_peer(f"p{i}", topic="t") for i in range(12)]
            await ts[0].publish(b"x")
            await trio.sleep(1)
            received = sum(t.stats.received for t in ts)
            lost = ts[0].mesh.lost
            victim = ts[5].local_id
            neighbours = ts[5].peers()
            net.remove_peer(victim)
            degrees = [len(net.links[n]) for n in neighbours]
            return received, lost, degrees

    received, lost, degrees = _virtual(main)
    assert received == 0
    assert lost >= 4
    assert all(d >= 4 for d in degrees)


def test_a_peer_heard_only_through_its_gossiped_events_is_not_gone() -> None:
    """Not connected to us, never announcing (busy, or its announcements lost): its events,
    relayed through the mesh to the node's receive loop, still show it alive; once it falls
    silent it counts as gone."""
    author, launcher, mine = Identity(b"\x01" * 32), Identity(b"\x02" * 32), Identity(b"\x03" * 32)
    run_event = make_run_event(launcher, spec_from_json(swarm_spec()), nonce="liveness")

    async def main() -> tuple[bool, bool, bool, bool]:
        async with open_mesh_network(seed=2, degree=2) as net:
            far = net.add_peer(author.peer_id)
            for i in range(6):
                net.add_peer(f"m{i}", topic=topic_for(run_event))
            me = Node(net.add_peer(mine.peer_id), mine, None, role_name="observer", run_event=run_event)
            assert author.peer_id not in me.transport.peers()
            async with trio.open_nursery() as nursery:
                await nursery.start(me.run)
                await far.subscribe(topic_for(run_event))
                since = trio.current_time()
                never_heard = me.peer_gone(author.peer_id, since - GONE_GRACE - 1)
                alive = []
                for lamport in range(1, 5):  # an event every 10 s, 40 s in all
                    body = JoinBody(role="decomposer", strategy=None, admission=None)
                    await far.publish(encode_event(make_event(author, run_event.run, "join", lamport, body)))
                    await trio.sleep(10)
                    alive.append(not me.peer_gone(author.peer_id, since))
                alive_while_talking = all(alive)
                await trio.sleep(GONE_GRACE - 10 - 1)  # 1 s short of the grace since the last event
                alive_just_after = not me.peer_gone(author.peer_id, since)
                await trio.sleep(2)
                gone_later = me.peer_gone(author.peer_id, since)
                nursery.cancel_scope.cancel()
            return never_heard, alive_while_talking, alive_just_after, gone_later

    assert _virtual(main) == (True, True, True, True)


def test_announcements_thin_out_and_the_gone_grace_grows_with_the_swarm() -> None:
    class _Plan:
        def __init__(self, n: int) -> None:
            self.roles = {f"p{i}": "executor" for i in range(n)}
            self.spec = None  # no run event: the joins alone say how large the swarm is

    class _State:
        def __init__(self, n: int) -> None:
            self.n = n

        def plan(self) -> _Plan:
            return _Plan(self.n)

    class _Store:
        def __init__(self, n: int) -> None:
            self.state = _State(n)
            self.counters = None

    def silence(n: int) -> float:
        sync = AntiEntropy.__new__(AntiEntropy)
        sync.store = _Store(n)  # type: ignore[assignment]
        sync.announce_interval = lambda: 1.0
        return sync.silence()

    assert silence(4) == GONE_GRACE
    assert silence(ANNOUNCERS) == GONE_GRACE
    assert silence(8 * ANNOUNCERS) == 8 * GONE_GRACE


def _sim(peers: int, **kw: object) -> object:
    base = swarm_spec()
    return run_simulation(base, SimConfig(peers=peers, **kw))  # type: ignore[arg-type]


@pytest.mark.slow
def test_in_a_sparse_mesh_only_a_nodes_owners_propose_for_it() -> None:
    """16 peers, degree 3: most decomposers are not connected to a node's owners, and each
    model call takes 20 s with no event meanwhile. The owners must still count as alive (so no
    takeover): every node below the root gets proposals from its two owners only."""
    from specswarm.swarm.roles.base import owners_of

    r = _sim(16, working=15, degree=3, loss=0.0, late=0.0, churn=0.0, model_seconds=20.0, depth=2)
    assert r.converged  # type: ignore[attr-defined]
    plan = r.plan  # type: ignore[attr-defined]
    decs = [p for p, role in plan.roles.items() if role == "decomposer"]
    assert len(decs) == 5
    below_root = [n for n in plan.nodes.values() if n.depth > 0 and n.proposals]
    assert below_root
    for n in below_root:
        authors = {p.author for p in n.proposals}
        assert authors <= set(owners_of(plan, n.id)), (n.id, authors)


@pytest.mark.slow
def test_the_simulated_swarm_converges_with_loss_late_joiners_and_churn() -> None:
    r = _sim(40, degree=4, loss=0.05, late=0.2, churn=0.1, depth=2)
    assert r.converged  # type: ignore[attr-defined]
    assert r.share_final == 1.0  # type: ignore[attr-defined]
    assert r.live == 40  # type: ignore[attr-defined]  # churned peers were replaced, late ones joined
    assert r.sync_requests > 0  # type: ignore[attr-defined]  # 5 % loss: anti-entropy repaired it
