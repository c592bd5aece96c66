"""One peer: an event store, a transport, anti-entropy and a role loop.

A node keeps its own copy of the run's events (:class:`~specswarm.swarm.store.EventStore`),
gossips every event it makes, verifies every event it hears (the validator of
:mod:`specswarm.swarm.wire`, which decodes each message once), and repairs what gossip lost
with :class:`~specswarm.swarm.antientropy.AntiEntropy`. :class:`Node` wires those parts to the
transport, runs the receive, announce, status and role loops, and reports its status; whether
a peer looks gone is :class:`~specswarm.swarm.liveness.Liveness`'s.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, Any, Protocol

import trio

from specswarm.plan.fold import FoldState
from specswarm.plan.views import Plan
from specswarm.protocol.bodies import Body, JoinBody, RunBody
from specswarm.protocol.events import Event, admit, make_event
from specswarm.protocol.identity import Identity
from specswarm.spec import GoalSpec
from specswarm.swarm import streaks
from specswarm.swarm.antientropy import ANNOUNCE_INTERVAL, GONE_GRACE, AntiEntropy, gossip_event, learn_run
from specswarm.swarm.cadence import ANNOUNCERS, swarm_size
from specswarm.swarm.counters import NodeCounters as NodeCounters
from specswarm.swarm.liveness import Liveness
from specswarm.swarm.store import EventStore
from specswarm.swarm.testloss import TestGossipLoss
from specswarm.swarm.wire import MAX_MESSAGE_BYTES as MAX_MESSAGE_BYTES
from specswarm.swarm.wire import EventMsg, Intake
from specswarm.transport.base import Transport

if TYPE_CHECKING:
    from trio_typing import TaskStatus  # what the trio stubs libp2p installs (trio-typing) expect

log = logging.getLogger("specswarm.swarm.node")


class Role(Protocol):
    name: str
    last_failure: str | None

    async def act(self, node: Node, plan: Plan) -> None:
        """Look at the plan, publish what this role should, return (called again on change)."""


class Node:
    """A peer of one run. Use :meth:`run` inside a nursery; it returns only when cancelled.
    Its parts are :attr:`store`, :attr:`intake`, :attr:`sync` and :attr:`liveness`."""

    def __init__(
        self,
        transport: Transport,
        identity: Identity,
        role: Role | None,
        *,
        role_name: str,
        run_event: Event | None = None,
        admission: str | None = None,
        admission_key: Identity | None = None,
        role_factory: Callable[[GoalSpec], Role | None] | None = None,
        strategy: str | None = None,
        preload: Iterable[Event] = (),
        sink: IO[str] | None = None,
        on_status: Callable[[dict[str, Any]], None] | None = None,
        announce_interval: float = ANNOUNCE_INTERVAL,
        rng: random.Random | None = None,
    ) -> None:
        self.transport = transport
        self.identity = identity
        self.role = role
        self.role_name = role_name
        self.strategy = strategy
        self.admission = admission
        self.admission_key = admission_key
        self.role_factory = role_factory
        self.on_status = on_status
        self.announce_interval = announce_interval  # mean seconds between announcements; read every round
        self.counters = NodeCounters()
        self.store = EventStore(self.counters, sink)
        self.liveness = Liveness(identity.peer_id, transport)
        rng = rng or random.Random(identity.peer_id)
        self.sync = AntiEntropy(
            transport, self.store, self.liveness, role_name, rng, lambda: self.announce_interval
        )
        self.intake = Intake(self.counters.dropped, lambda: self.store.run_id)
        self.ready = trio.Event()
        self._test_loss = TestGossipLoss.from_env(identity.peer_id)  # TEST ONLY; None in normal use
        self._preload = list(preload)
        self._pending_run = run_event

    # -- identity & state (the store's); liveness --------------------------------------------
    @property
    def peer_id(self) -> str:
        return self.identity.peer_id

    @property
    def run_event(self) -> Event | None:
        return self.store.run_event

    @property
    def run_id(self) -> str | None:
        return self.store.run_id

    @property
    def state(self) -> FoldState:
        return self.store.state

    def plan(self) -> Plan:
        return self.store.state.plan()

    def set_digest(self) -> str:
        return self.store.set_digest()

    def add(self, event: Event) -> bool:
        return self.store.add(event)

    def adopt_run(self, run_event: Event) -> None:
        self.store.adopt_run(run_event)

    async def wait_changed(self, timeout: float) -> None:
        await self.store.wait_changed(timeout)

    def peer_gone(self, peer: str, since: float, grace: float = GONE_GRACE) -> bool:
        """Unheard for ``grace`` s, or longer in a large swarm (:meth:`AntiEntropy.silence`)."""
        return self.liveness.peer_gone(peer, since, max(grace, self.sync.silence()))

    # -- the wire: gossip validation (the intake's), requests and pulls (anti-entropy's) --------
    def validate(self, sender: str, data: bytes) -> bool:
        return self.intake.validate(data)

    async def handle_request(self, sender: str, data: bytes) -> bytes:
        return await self.sync.handle_request(sender, data)

    async def sync_with(self, peer: str) -> int:
        return await self.sync.sync_with(peer)

    async def learn_run(self, timeout: float) -> Event:
        return await learn_run(self.sync, timeout)

    async def publish(self, body: Body) -> Event:
        assert self.run_event is not None, "publish before the run is known"
        event = make_event(self.identity, self.run_event.run, body.KIND, self.store.tick(), body)
        self.add(event)
        self.counters.published += 1
        await gossip_event(self.sync, event)
        return event

    # -- loops --------------------------------------------------------------------------------
    async def _receive_loop(self, nursery: trio.Nursery) -> None:
        async for sender, data in self.transport.incoming():
            if self._test_loss is not None and self._test_loss.drops():  # TEST ONLY: see testloss.py
                self.intake.forget(data)
                self.counters.dropped["test loss"] += 1
                continue
            msg = self.intake.take(data)  # what validate() decoded a moment ago
            if isinstance(msg, EventMsg):
                # its publisher is alive; the event's author may be another peer (an event gossiped
                # again to repair a loss, maybe long after its author left)
                self.liveness.heard(sender)
                self.add(msg.event)
            have = msg.have if isinstance(msg, EventMsg) else msg  # an event carries its sender's set
            if have is not None and sender != self.peer_id:
                self.sync.on_have(nursery, sender, have)

    async def _role_loop(self) -> None:
        if self.role is None:
            return
        while True:
            await self.role.act(self, self.plan())
            await self.wait_changed(0.5)

    async def _status_loop(self) -> None:
        if self.on_status is not None:
            await _report_status(self, self.on_status)

    def status(self, plan: Plan | None = None) -> dict[str, Any]:
        plan = plan or self.plan()
        return {
            "peer": self.peer_id,
            "role": self.role_name,
            "run": self.run_id,
            "digest": plan.digest,
            "complete": plan.complete,
            "events": len(self.state),
            "set": self.set_digest(),
            "progress": plan.progress(),
            "counters": self.counters.to_json(),
            "transport": self.transport.stats.to_json(),
            "peers": len(self.transport.peers()),
            "addrs": self.transport.addrs(),
            "last_model_failure": self.role.last_failure if self.role else None,
            "doing": getattr(self.role, "doing", None),
            "failing": streaks.report(getattr(self.role, "failing", {})),
        }

    async def run(
        self, *, task_status: TaskStatus[None] = trio.TASK_STATUS_IGNORED, learn_timeout: float = 60
    ) -> None:
        self.transport.set_validator(self.validate)
        self.transport.set_request_handler(self.handle_request)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._receive_loop, nursery)
            run_event = self._pending_run or next((e for e in self._preload if e.kind == "run"), None)
            if run_event is None:
                run_event = await self.learn_run(learn_timeout)
            self.store.adopt_run(run_event, self._preload)
            self._preload = []
            if self.role is None and self.role_factory is not None:
                assert isinstance(run_event.body, RunBody)
                self.role = self.role_factory(run_event.body.spec)
            await self.transport.subscribe(topic_for(run_event))
            if self.role_name != "observer":
                await self._join()
                nursery.start_soon(_join_again, self)
            nursery.start_soon(self.sync.announce_loop)
            nursery.start_soon(self._status_loop)
            # catch up with whoever is there before acting
            for peer in self.transport.peers():
                nursery.start_soon(self.sync_with, peer)
            self.ready.set()
            task_status.started()
            await self._role_loop()
            await trio.sleep_forever()

    def own_joins(self) -> list[Event]:
        """The join events this peer wrote (one per role it joined as)."""
        return [e for e in self.state.events() if e.kind == "join" and e.author == self.peer_id]

    async def gossip_joins(self) -> None:
        """Gossip this peer's join events again."""
        for e in self.own_joins():
            await gossip_event(self.sync, e)

    async def _join(self) -> None:
        mine = self.own_joins()
        if any(isinstance(e.body, JoinBody) and e.body.role == self.role_name for e in mine):
            await self.gossip_joins()  # after a restart: others may have missed it
            return
        admission = self.admission
        if admission is None and self.admission_key is not None and self.run_id:
            admission = admit(self.admission_key, self.run_id, self.peer_id, self.role_name)
        await self.publish(JoinBody(role=self.role_name, strategy=self.strategy, admission=admission))


async def _join_again(node: Node) -> None:
    """In a swarm of more than ANNOUNCERS peers, gossip ``node``'s join once more, at a random
    moment of the round after the first (:meth:`AntiEntropy.period`). A join is gossiped as its
    peer subscribes, before its mesh has formed, so many copies are lost; a peer that has not
    heard of a node's owners takes the node over, and a swarm whose anti-entropy pulls fail
    (many peers per process on few cores) holds many such peers."""
    if swarm_size(node.plan()) <= ANNOUNCERS:
        return
    await trio.sleep(node.sync.period() * (1 + node.sync.rng.random()))
    await node.gossip_joins()


async def _report_status(node: Node, on_status: Callable[[dict[str, Any]], None]) -> None:
    """Hand ``on_status`` the node's status whenever its plan, event set, activity or model
    failures change (at least every 5 s), and once more as it stops."""
    last: tuple[str, str, bool, str, int] | None = None
    last_time = 0.0
    try:
        while True:
            plan = node.plan()
            doing = repr(getattr(node.role, "doing", None))
            key = (plan.digest, node.set_digest(), plan.complete, doing, node.counters.model_failures)
            now = trio.current_time()
            if key != last or now - last_time > 5:
                on_status(node.status(plan))
                last, last_time = key, now
            await node.wait_changed(0.5)
            await trio.sleep(0.2)
    finally:
        _last_status(node, on_status)


def _last_status(node: Node, on_status: Callable[[dict[str, Any]], None]) -> None:
    """A stopped node's last status line, with its counters at the stop (what a report of an
    interrupted run counts); best effort: nobody may be reading any more."""
    try:
        on_status(node.status())
    except Exception as exc:
        log.debug("no final status line: %s", exc)


def topic_for(run_event: Event) -> str:
    """The GossipSub topic of a run: the spec's, or one derived from the run id."""
    assert isinstance(run_event.body, RunBody)
    return run_event.body.spec.network.topic or f"specswarm/{run_event.run}"
