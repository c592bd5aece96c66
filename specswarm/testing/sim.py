"""A protocol simulation: the real nodes and roles on a simulated gossip mesh, in virtual time.

Every peer is a real :class:`~specswarm.swarm.node.Node` with its real role, fold, event
signing and verification (Ed25519, PyNaCl) and anti-entropy; only two things are simulated:

* the network — :class:`~specswarm.transport.mesh.MeshNetwork`, a mesh of degree ``D`` with
  per-hop latency, loss, churn and late joiners;
* the model — the scripted model, answering at once but taking ``model_seconds`` of virtual
  time per call (:class:`SimModel`).

Run :func:`simulate` under ``trio.run(..., clock=trio.testing.MockClock(autojump_threshold=0))``
(:func:`run_simulation` does): the clock jumps whenever every task waits, so a thousand peers'
minutes pass in less real time. Processing costs no virtual time; what the simulation measures is
the protocol (messages, bytes, rounds), not the CPU. ``bench/simulate.py`` sweeps it.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

import trio
import trio.testing

from specswarm.model.base import Generation, GenerationRequest
from specswarm.model.replay import ScriptedModel
from specswarm.plan.views import Plan
from specswarm.protocol.events import make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import GoalSpec, spec_from_json
from specswarm.swarm.node import Node
from specswarm.testing.local import LocalSwarm, kill, start_peer
from specswarm.transport.mesh import MeshTransport, open_mesh_network


class SimModel(ScriptedModel):
    """The scripted model, instant in real time, ``virtual_seconds`` per call in virtual time
    (:meth:`~specswarm.swarm.roles.base.ModelRole.think` sleeps that long, then calls it inline)."""

    virtual_seconds = 2.0

    def generate(self, req: GenerationRequest) -> Generation:
        self.calls.clear()  # a thousand peers need not keep every prompt
        return super().generate(req)


@dataclass(frozen=True)
class SimConfig:
    """One simulated run."""

    peers: int
    """Peers at the start plus late joiners (the roster; churn replaces peers one for one)."""
    working: int = 12
    """Decomposers + scorers (a third each of min(peers - 1, working)); the rest are executors
    and one observer. ``0``: a third of all peers each, as bench/scale.py."""
    degree: int = 6
    latency: float = 0.02
    """Seconds per hop (and per request direction)."""
    jitter: float = 0.01
    loss: float = 0.01
    """Fraction of hops lost."""
    late: float = 0.1
    """Fraction of executors that join ``late_at`` seconds after the start (and learn the run)."""
    late_at: float = 5.0
    churn: float = 0.05
    """Fraction of executors killed at ``churn_at`` and replaced by new peers."""
    churn_at: float = 8.0
    depth: int = 2
    model_seconds: float = 2.0
    announce_interval: float = 1.0
    timeout: float = 600.0
    """Virtual seconds before the run counts as not converged."""
    seed: int = 0


@dataclass
class SimResult:
    config: SimConfig
    converged: bool
    seconds: float
    """Virtual seconds from the start to convergence (or to the timeout)."""
    events: int
    """Events in the union of every live peer's log."""
    kinds: dict[str, int]
    """Those events by kind (join, proposal, vote, ballot, claim, result, run)."""
    nodes: int
    live: int
    share_final: float
    """Share of live peers whose plan digest is the final one (the most common complete one)."""
    gossip_copies_in: int
    gossip_sent: int
    duplicates: int
    announces: int
    sync_requests: int
    sync_bytes: int
    sync_inventory_bytes: int
    """Of ``sync_bytes``, those spent finding which events to fetch (not the events)."""
    proposals: int
    model_calls: int
    plan: Plan | None = None
    """The final plan of the live peer that holds the largest tree."""

    @property
    def per_peer_per_event(self) -> float:
        """Gossip copies received per peer per event (announcements included)."""
        return self.gossip_copies_in / max(1, self.live) / max(1, self.events)


def sim_spec(base: dict[str, Any], cfg: SimConfig) -> GoalSpec:
    """``base`` (a normalized spec) with the roster and tree of ``cfg``."""
    spec = copy.deepcopy(base)
    rest = cfg.peers - 1
    work = rest if cfg.working <= 0 else min(rest, cfg.working)
    dec = max(1, work // 3)
    sc = max(1, work // 3)
    ex = max(1, rest - dec - sc)
    spec["roles"] = {
        "decomposer": {"count": dec, "strategies": ["by place", "by day", "by theme"][: max(1, dec)]},
        "scorer": {"count": sc},
        "executor": {"count": ex},
        "observer": {"count": 1},
    }
    spec["tree"].update(max_depth=cfg.depth, min_children=2, max_children=3)
    spec["model"].update(backend="scripted")
    spec["budget"].update(settle_seconds=0.5, claim_timeout=60.0, seconds=cfg.timeout)
    return spec_from_json(spec)


def _ident(rng: random.Random) -> Identity:
    return Identity(bytes(rng.getrandbits(8) for _ in range(32)))


async def simulate(base: dict[str, Any], cfg: SimConfig) -> SimResult:
    """Run one simulated swarm until every live peer holds one complete plan, or the timeout."""
    spec = sim_spec(base, cfg)
    rng = random.Random(cfg.seed)
    launcher, admission = _ident(rng), _ident(rng)
    run_event = make_run_event(launcher, spec, admission=admission.public_key.hex(), nonce=str(cfg.seed))
    seats = spec.roster()
    executors = [s for s in seats if s.role == "executor"]
    n_late = int(len(executors) * cfg.late)
    late = executors[len(executors) - n_late :]
    early = [s for s in seats if s not in late]

    class Model(SimModel):
        virtual_seconds = cfg.model_seconds

    async with (
        open_mesh_network(
            seed=cfg.seed, degree=cfg.degree, latency=cfg.latency, jitter=cfg.jitter, loss=cfg.loss
        ) as net,
        trio.open_nursery() as nursery,
    ):
        swarm = LocalSwarm(net, run_event, admission)
        started = trio.current_time()

        async def start(role: str, strategy: str | None, learn: bool) -> Node:
            node = await start_peer(
                swarm, nursery, role, spec, Model, identity=_ident(rng), strategy=strategy, learn=learn
            )
            node.announce_interval = cfg.announce_interval
            return node

        for seat in early:
            await start(seat.role, seat.strategy, learn=False)

        async def late_joiners() -> None:
            await trio.sleep(cfg.late_at)
            for seat in late:
                nursery.start_soon(start, seat.role, seat.strategy, True)

        async def churn() -> None:
            await trio.sleep(cfg.churn_at)
            live_ex = [p for p, r in swarm.roles.items() if r == "executor" and not _dead(swarm, p)]
            victims = rng.sample(live_ex, int(len(live_ex) * cfg.churn))
            for p in victims:
                kill(swarm, p)
            for _ in victims:
                nursery.start_soon(start, "executor", None, True)

        nursery.start_soon(late_joiners)
        nursery.start_soon(churn)
        converged = False
        with trio.move_on_after(cfg.timeout):
            while True:
                await trio.sleep(0.5)
                if _converged(swarm):
                    converged = True
                    break
        seconds = trio.current_time() - started
        result = _measure(swarm, cfg, converged, seconds)
        nursery.cancel_scope.cancel()
    return result


def _dead(swarm: LocalSwarm, peer: str) -> bool:
    return swarm.scopes[peer].cancel_called


def _live(swarm: LocalSwarm) -> list[Node]:
    return [n for p, n in swarm.nodes.items() if not _dead(swarm, p) and n.ready.is_set()]


def _converged(swarm: LocalSwarm) -> bool:
    nodes = _live(swarm)
    if len(nodes) < len([p for p in swarm.nodes if not _dead(swarm, p)]):
        return False  # a late joiner has not caught up with the run yet
    digest = None
    for n in nodes:
        plan = n.plan()
        if not plan.complete or (digest is not None and plan.digest != digest):
            return False
        digest = plan.digest
    return digest is not None


def _measure(swarm: LocalSwarm, cfg: SimConfig, converged: bool, seconds: float) -> SimResult:
    nodes = _live(swarm)
    everyone = list(swarm.nodes.values())  # the dead too: their traffic counts
    union: dict[str, str] = {}
    for n in nodes:
        for e in n.state.events():
            union[e.id] = e.kind
    kinds: dict[str, int] = {}
    for kind in union.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    digests: dict[str, int] = {}
    for n in nodes:
        plan = n.plan()
        if plan.complete:
            digests[plan.digest] = digests.get(plan.digest, 0) + 1
    final = max(digests, key=lambda d: digests[d]) if digests else None
    holding = sum(1 for n in nodes if n.plan().digest == final) if final else 0
    meshes = [n.transport.mesh for n in everyone if isinstance(n.transport, MeshTransport)]
    plan0 = max((n.plan() for n in nodes), key=lambda p: len(p.nodes), default=None)
    return SimResult(
        config=cfg,
        converged=converged,
        seconds=seconds,
        events=len(union),
        kinds=dict(sorted(kinds.items())),
        nodes=len(plan0.nodes) if plan0 else 0,
        live=len(nodes),
        share_final=holding / max(1, len(nodes)),
        gossip_copies_in=sum(m.copies_in for m in meshes),
        gossip_sent=sum(m.sent for m in meshes),
        duplicates=sum(m.duplicates for m in meshes),
        announces=sum(n.counters.announces for n in everyone),
        sync_requests=sum(n.counters.sync_requests for n in everyone),
        sync_bytes=sum(n.counters.sync_bytes for n in everyone),
        sync_inventory_bytes=sum(n.counters.sync_inventory_bytes for n in everyone),
        proposals=sum(len(v.proposals) for v in plan0.nodes.values()) if plan0 else 0,
        model_calls=sum(n.counters.model_calls for n in everyone),
        plan=plan0,
    )


def run_simulation(base: dict[str, Any], cfg: SimConfig) -> SimResult:
    """:func:`simulate` under a virtual clock that jumps whenever every task waits."""
    clock = trio.testing.MockClock(autojump_threshold=0)
    return trio.run(simulate, base, cfg, clock=clock)
