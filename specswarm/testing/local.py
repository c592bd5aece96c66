"""A whole swarm in one process, on the in-memory transport (fast tests and benchmarks).

The same :class:`~specswarm.swarm.node.Node` and roles as the real peers; only the
transport differs. Never the default path: ``specswarm plan`` runs real
processes on libp2p.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import trio

from specswarm.model.base import Model
from specswarm.protocol.events import Event, admit, make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import GoalSpec, spec_from_json
from specswarm.swarm.node import Node
from specswarm.swarm.roles import make_role
from specswarm.transport.base import Transport
from specswarm.transport.memory import open_memory_network

if TYPE_CHECKING:
    from trio_typing import TaskStatus  # what the trio stubs libp2p installs (trio-typing) expect


class PeerNetwork(Protocol):
    """What a swarm in one process needs of its network: the in-memory hub
    (:class:`~specswarm.transport.memory.MemoryNetwork`) or a simulated gossip mesh
    (:class:`~specswarm.transport.mesh.MeshNetwork`)."""

    def add_peer(self, peer_id: str, *, topic: str | None = None) -> Transport: ...

    def remove_peer(self, peer_id: str) -> None: ...


@dataclass
class LocalSwarm:
    network: PeerNetwork
    run_event: Event
    admission: Identity
    nodes: dict[str, Node] = field(default_factory=dict)
    scopes: dict[str, trio.CancelScope] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)


def as_spec(spec: GoalSpec | Mapping[str, Any]) -> GoalSpec:
    """A GoalSpec, given one or its normalized JSON (``GoalSpec.to_json()``)."""
    return spec if isinstance(spec, GoalSpec) else spec_from_json(spec)


def _seeded(rng: random.Random) -> Identity:
    return Identity(bytes(rng.getrandbits(8) for _ in range(32)))


async def start_peer(
    swarm: LocalSwarm,
    nursery: trio.Nursery,
    role: str,
    spec: GoalSpec | Mapping[str, Any],
    model_factory: Callable[[], Model] | None,
    *,
    identity: Identity,
    strategy: str | None = None,
    learn: bool = False,
    on_status: Callable[[dict[str, Any]], None] | None = None,
) -> Node:
    transport = swarm.network.add_peer(identity.peer_id)
    sig = admit(swarm.admission, swarm.run_event.run, identity.peer_id, role)
    node = Node(
        transport,
        identity,
        make_role(role, as_spec(spec), model_factory, strategy),
        role_name=role,
        run_event=None if learn else swarm.run_event,
        admission=sig,
        strategy=strategy,
        on_status=on_status,
    )
    scope = trio.CancelScope()

    async def runner(task_status: TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        with scope:
            await node.run(task_status=task_status)

    swarm.nodes[identity.peer_id] = node
    swarm.scopes[identity.peer_id] = scope
    swarm.roles[identity.peer_id] = role
    await nursery.start(runner)
    return node


def kill(swarm: LocalSwarm, peer_id: str) -> None:
    """Stop a peer abruptly (its transport vanishes from the network)."""
    swarm.scopes[peer_id].cancel()
    swarm.network.remove_peer(peer_id)


async def wait_converged(swarm: LocalSwarm, timeout: float, peers: list[str] | None = None) -> str:
    """Wait until every (listed) node holds a complete plan with one common digest."""
    with trio.fail_after(timeout):
        while True:
            ids = peers or [p for p in swarm.nodes if not swarm.scopes[p].cancel_called]
            plans = [swarm.nodes[p].plan() for p in ids]
            digests = {p.digest for p in plans}
            if plans and all(p.complete for p in plans) and len(digests) == 1:
                return digests.pop()
            await trio.sleep(0.05)


async def run_local(
    spec: GoalSpec | Mapping[str, Any],
    model_factory: Callable[[], Model],
    *,
    seed: int = 0,
    loss: float = 0.0,
    delay: float = 0.0,
    timeout: float = 60.0,
    announce_interval: float = 0.3,
) -> tuple[str, LocalSwarm, float]:
    """Run the spec's declared swarm to convergence. Returns (digest, swarm, seconds)."""
    spec = as_spec(spec)
    rng = random.Random(seed)
    launcher, admission = _seeded(rng), _seeded(rng)
    run_event = make_run_event(launcher, spec, admission=admission.public_key.hex(), nonce=str(seed))
    async with open_memory_network(seed=seed, loss=loss, delay=delay) as net, trio.open_nursery() as nursery:
        swarm = LocalSwarm(net, run_event, admission)
        started = time.monotonic()
        for seat in spec.roster():
            node = await start_peer(
                swarm, nursery, seat.role, spec, model_factory, identity=_seeded(rng), strategy=seat.strategy
            )
            node.announce_interval = announce_interval
        digest = await wait_converged(swarm, timeout)
        elapsed = time.monotonic() - started
        nursery.cancel_scope.cancel()
    return digest, swarm, elapsed
