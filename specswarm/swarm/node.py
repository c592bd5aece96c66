"""One peer: an event store, a transport, anti-entropy and a role loop.

A node keeps its own copy of the run's events (a :class:`~specswarm.plan.fold.FoldState`),
gossips every event it makes, verifies every event it hears, and repairs what
gossip lost with anti-entropy: each node announces ``(count, set digest)`` about
once a second; a node that hears a digest unlike its own pulls the inventory of
that peer and fetches the events it lacks over request/response. A node that
joins late (or knows only one address) learns the run the same way.

Wire messages (JSON):

* gossip ``{"t": "ev", "e": <event>}`` and ``{"t": "have", "n": N, "d": <set digest>}``;
* requests ``{"t": "hello"}`` → ``{"run": <run event> | null, "n": N}``,
  ``{"t": "inv"}`` → ``{"ids": [<16-hex id prefixes>]}``,
  ``{"t": "get", "ids": [...]}`` → ``{"events": [...]}``.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

import trio

from specswarm.errors import TransportError
from specswarm.model.tasks import TaskCounts
from specswarm.plan.fold import FoldState, Plan
from specswarm.protocol.bodies import Body, JoinBody, RunBody
from specswarm.protocol.events import MAX_EVENT_BYTES, Event, admit, check_event, make_event
from specswarm.protocol.identity import Identity
from specswarm.spec import GoalSpec
from specswarm.transport.base import Transport

log = logging.getLogger("specswarm.swarm.node")

ID_PREFIX = 16
GET_BATCH = 200
ANNOUNCE_INTERVAL = 1.0
VERIFIED_CACHE = 512

MAX_MESSAGE_BYTES = MAX_EVENT_BYTES + 1024
"""A gossip message is one event plus a small envelope; anything larger is dropped unread."""

TEST_LOSS_ENV = "SPECSWARM_TEST_GOSSIP_LOSS"
"""TEST ONLY: a fraction in [0, 1) of received gossip messages (events and announcements) that
a node drops on arrival, before applying them, as if the network had lost them; counted as
``dropped["test loss"]``. The RNG is seeded by ``SPECSWARM_TEST_GOSSIP_SEED`` (default 0) and the
peer id, so a chaos run is repeatable. Anti-entropy (request/response) is never dropped: it is
what must repair the loss. Unset in normal use."""


def _test_loss_from_env(peer_id: str) -> tuple[float, random.Random | None]:
    import os

    raw = os.environ.get(TEST_LOSS_ENV)
    if not raw:
        return 0.0, None
    loss = float(raw)
    if not 0.0 <= loss < 1.0:
        raise ValueError(f"{TEST_LOSS_ENV} must be in [0, 1), got {raw!r}")
    seed = os.environ.get("SPECSWARM_TEST_GOSSIP_SEED", "0")
    log.warning("test-only gossip loss %.2f is on (seed %s)", loss, seed)
    return loss, random.Random(f"{seed}:{peer_id}")


GONE_GRACE = 3 * 5 * ANNOUNCE_INTERVAL
"""Seconds without contact before a peer counts as gone (three quiet announcement periods)."""
QUIET_ANNOUNCE_EVERY = 5
"""When nothing changes and every peer agrees, announce once in this many rounds."""
SYNC_TIMEOUT = 30.0
"""Seconds an anti-entropy request may take: generous, because a CPU-starved peer (many
processes on few cores) answers late, and a timed-out pull repairs nothing."""
SYNC_MIN_INTERVAL = 2.0
"""Seconds between two anti-entropy pulls from the same peer."""


class Role(Protocol):
    name: str
    last_failure: str | None

    async def act(self, node: Node, plan: Plan) -> None:
        """Look at the plan, publish what this role should, return (called again on change)."""


@dataclass
class NodeCounters:
    """What a node did and dropped; shown in status lines and in the run summary."""

    published: int = 0
    applied: int = 0
    duplicates: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    """Invalid input by reason class (malformed, schema, signature, foreign run, ...)."""
    syncs: int = 0
    synced_events: int = 0
    model_calls: int = 0
    model_reused: int = 0
    """Model ratings taken from another scorer's vote instead of generating the same one again."""
    model_failures: int = 0
    model_tokens: int = 0
    model_seconds: float = 0.0
    """Wall time inside model tasks (waiting for the machine-wide generation slot included)."""
    model_generations: int = 0
    """Generations (a task retried after a bad answer makes several)."""
    model_gen_seconds: float = 0.0
    """Time the model itself spent generating (sum of Generation.seconds; 0 for scripted/replay)."""
    announces: int = 0
    """``have`` announcements published (anti-entropy gossip)."""
    sync_requests: int = 0
    """Anti-entropy requests this node made (inv + get)."""
    sync_bytes: int = 0
    """Bytes of those requests and their responses."""
    tasks: TaskCounts = field(default_factory=TaskCounts)
    """What the model tasks counted: retries, loops cut, sums fitted, bad answers, give-ups."""

    def to_json(self) -> dict[str, Any]:
        return {
            "published": self.published,
            "applied": self.applied,
            "duplicates": self.duplicates,
            "dropped": dict(self.dropped),
            "syncs": self.syncs,
            "synced_events": self.synced_events,
            "model_calls": self.model_calls,
            "model_reused": self.model_reused,
            "model_failures": self.model_failures,
            "model_tokens": self.model_tokens,
            "model_seconds": round(self.model_seconds, 2),
            "model_generations": self.model_generations,
            "model_gen_seconds": round(self.model_gen_seconds, 2),
            "announces": self.announces,
            "sync_requests": self.sync_requests,
            "sync_bytes": self.sync_bytes,
            "tasks": self.tasks.to_json(),
        }


def _reason_class(reason: str) -> str:
    return reason.split(":", 1)[0].strip() or "invalid"


class Node:
    """A peer of one run. Use :meth:`run` inside a nursery; it returns only when cancelled."""

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
        self.state = FoldState()
        self.run_event: Event | None = None
        self.lamport = 0
        self.counters = NodeCounters()
        self.sink = sink
        self.on_status = on_status
        self.announce_interval = announce_interval
        self.rng = rng or random.Random(identity.peer_id)
        self._changed = trio.Event()
        self._preload = list(preload)
        self._pending_run = run_event
        self._syncing: set[str] = set()
        self._peer_have: dict[str, tuple[int, str, float]] = {}
        self._last_sync: dict[str, float] = {}
        self._last_announced = ""
        self._quiet_rounds = 0
        self._xor = 0
        self._by_prefix: dict[str, list[tuple[int, Event]]] = {}
        """16-hex id prefix -> the events held under it, with their arrival index (for 'get')."""
        self._inv: bytes | None = None
        """The 'inv' answer, kept until the next new event."""
        self._verified: dict[bytes, tuple[str | None, Event]] = {}
        """Gossip the validator just verified -> (run id it was checked against, event), so the
        receive loop does not verify the same bytes twice (bounded: VERIFIED_CACHE)."""
        self.last_connected: dict[str, float] = {}
        self.ready = trio.Event()
        self._test_loss, self._test_loss_rng = _test_loss_from_env(identity.peer_id)

    # -- identity & state ------------------------------------------------------------------
    @property
    def peer_id(self) -> str:
        return self.identity.peer_id

    @property
    def run_id(self) -> str | None:
        return self.run_event.run if self.run_event else None

    def plan(self) -> Plan:
        return self.state.plan()

    def set_digest(self) -> str:
        return f"{len(self.state)}:{self._xor:064x}"

    def add(self, event: Event) -> bool:
        """Apply a verified event; returns True if it was new."""
        if self.run_event is not None and event.run != self.run_event.run:
            self.counters.dropped["foreign run"] += 1
            return False
        if not self.state.apply(event):
            self.counters.duplicates += 1
            return False
        self._xor ^= int(event.id, 16)
        self._by_prefix.setdefault(event.id[:ID_PREFIX], []).append((len(self.state), event))
        self._inv = None
        self.counters.applied += 1
        self.lamport = max(self.lamport, event.lamport)
        if self.sink is not None:
            self.sink.write(event.to_bytes().decode() + "\n")
            self.sink.flush()
        self._changed.set()
        self._changed = trio.Event()
        return True

    def peer_gone(self, peer: str, since: float, grace: float = GONE_GRACE) -> bool:
        """Whether ``peer`` looks gone: not connected to us, and not heard from (announcements
        relayed through the mesh count) for ``grace`` seconds, counting from ``since`` at most.
        A peer we are not directly connected to in a large swarm is not gone."""
        if peer == self.peer_id:
            return False
        now = time.monotonic()
        if peer in self.transport.peers():
            self.last_connected[peer] = now
            return False
        return now - max(self.last_connected.get(peer, since), since) > grace

    def adopt_run(self, run_event: Event) -> None:
        self.run_event = run_event
        if len(self.state) == 0:
            self.state = FoldState(run=run_event.run)
        self.add(run_event)

    async def wait_changed(self, timeout: float) -> None:
        """Wait until a new event is applied, or ``timeout`` seconds."""
        changed = self._changed
        with trio.move_on_after(timeout):
            await changed.wait()

    # -- publishing --------------------------------------------------------------------------
    async def publish(self, body: Body) -> Event:
        assert self.run_event is not None, "publish before the run is known"
        self.lamport += 1
        event = make_event(self.identity, self.run_event.run, body.KIND, self.lamport, body)
        self.add(event)
        self.counters.published += 1
        await self._gossip_event(event)
        return event

    async def _gossip_event(self, event: Event) -> None:
        data = json.dumps({"t": "ev", "e": event.to_json()}, separators=(",", ":")).encode()
        try:
            await self.transport.publish(data)
        except TransportError as exc:  # best effort: anti-entropy repairs it
            log.debug("publish failed: %s", exc)

    # -- validation (runs on every gossip message, before delivery) ----------------------------
    def validate(self, sender: str, data: bytes) -> bool:
        if len(data) > MAX_MESSAGE_BYTES:  # refused unread: parsing it is already the attack
            self.counters.dropped["oversized"] += 1
            return False
        try:
            msg = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            self.counters.dropped["malformed"] += 1
            return False
        if not isinstance(msg, dict):
            self.counters.dropped["malformed"] += 1
            return False
        if msg.get("t") == "have":
            ok = isinstance(msg.get("n"), int) and isinstance(msg.get("d"), str) and len(msg["d"]) < 100
            if not ok:
                self.counters.dropped["malformed"] += 1
            return ok
        if msg.get("t") == "ev":
            event, reason = check_event(msg.get("e"), self.run_id)  # type: ignore[arg-type]
            if event is None:
                self.counters.dropped[_reason_class(reason)] += 1
                return False
            self._verified[data] = (self.run_id, event)
            if len(self._verified) > VERIFIED_CACHE:
                del self._verified[next(iter(self._verified))]
            return True
        self.counters.dropped["malformed"] += 1
        return False

    # -- request/response ---------------------------------------------------------------------
    async def handle_request(self, sender: str, data: bytes) -> bytes:
        try:
            req = json.loads(data)
            kind = req.get("t")
        except (ValueError, AttributeError, UnicodeDecodeError):
            return b'{"error":"malformed request"}'
        if kind == "hello":
            run = self.run_event.to_json() if self.run_event else None
            return _dumps({"run": run, "n": len(self.state), "role": self.role_name})
        if kind == "inv":
            if self._inv is None:
                self._inv = _dumps({"ids": sorted(e[:ID_PREFIX] for e in self.state.ids)})
            return self._inv
        if kind == "get":
            wanted = req.get("ids")
            if not isinstance(wanted, list):
                return b'{"error":"ids must be a list"}'
            wanted_set = {w for w in wanted[:GET_BATCH] if isinstance(w, str)}
            found = [hit for w in wanted_set for hit in self._by_prefix.get(w, ())]
            found.sort(key=lambda hit: hit[0])  # arrival order, as a scan of the store gives
            return _dumps({"events": [e.to_json() for _, e in found]})
        return b'{"error":"unknown request"}'

    async def sync_with(self, peer: str) -> int:
        """Pull every event ``peer`` has and we lack. Returns how many were new."""
        if peer in self._syncing:
            return 0
        self._syncing.add(peer)
        new = 0
        try:
            inv = json.loads(await self._sync_request(peer, b'{"t":"inv"}'))
            have = self._by_prefix
            missing = [i for i in inv.get("ids", []) if isinstance(i, str) and i not in have]
            for start in range(0, len(missing), GET_BATCH):
                batch = missing[start : start + GET_BATCH]
                resp = json.loads(await self._sync_request(peer, _dumps({"t": "get", "ids": batch})))
                for raw in resp.get("events", []):
                    event, reason = check_event(raw, self.run_id)
                    if event is None:
                        self.counters.dropped[_reason_class(reason)] += 1
                    elif self.add(event):
                        new += 1
            self.counters.syncs += 1
            self.counters.synced_events += new
        except (TransportError, ValueError, AttributeError, TypeError) as exc:
            log.debug("sync with %s failed: %s", peer, exc)
        finally:
            self._syncing.discard(peer)
        return new

    async def _sync_request(self, peer: str, data: bytes) -> bytes:
        self.counters.sync_requests += 1
        self.counters.sync_bytes += len(data)
        resp = await self.transport.request(peer, data, timeout=SYNC_TIMEOUT)
        self.counters.sync_bytes += len(resp)
        return resp

    async def learn_run(self, timeout: float) -> Event:
        """Ask connected peers for the run event until one answers (a peer that only has --join)."""
        with trio.fail_after(timeout):
            while True:
                for peer in self.transport.peers():
                    try:
                        resp = json.loads(await self.transport.request(peer, b'{"t":"hello"}', timeout=5))
                    except (TransportError, ValueError):
                        continue
                    if isinstance(resp, dict) and resp.get("run"):
                        event, reason = check_event(resp["run"])
                        if event is not None and event.kind == "run":
                            return event
                        self.counters.dropped[_reason_class(reason or "not a run event")] += 1
                await trio.sleep(0.2)

    # -- loops --------------------------------------------------------------------------------
    async def _receive_loop(self, nursery: trio.Nursery) -> None:
        async for sender, data in self.transport.incoming():
            if self._test_loss_rng is not None and self._test_loss_rng.random() < self._test_loss:
                self.counters.dropped["test loss"] += 1  # TEST ONLY: see TEST_LOSS_ENV
                continue
            try:
                msg = json.loads(data)
            except (ValueError, UnicodeDecodeError):
                continue
            if not isinstance(msg, dict):
                continue
            if msg.get("t") == "ev":
                hit = self._verified.pop(data, None)
                if hit is not None and hit[0] == self.run_id:
                    event, reason = hit[1], ""  # verified by validate() a moment ago
                else:
                    event, reason = check_event(msg.get("e"), self.run_id)  # type: ignore[arg-type]
                if event is None:
                    self.counters.dropped[_reason_class(reason)] += 1
                else:
                    self.add(event)
            elif msg.get("t") == "have" and sender != self.peer_id:
                self._on_have(nursery, sender, msg)

    def _on_have(self, nursery: trio.Nursery, sender: str, msg: dict[str, Any]) -> None:
        n, d = msg.get("n"), msg.get("d")
        if not isinstance(n, int) or not isinstance(d, str):
            return
        now = time.monotonic()
        prev = self._peer_have.get(sender)
        self._peer_have[sender] = (n, d, now)
        self.last_connected[sender] = now
        if d == self.set_digest() or now - self._last_sync.get(sender, -1e9) < SYNC_MIN_INTERVAL:
            return
        # Pull only when the difference is not just gossip still in flight: the peer already
        # held more than we hold now one announcement ago, or its (different) set is not changing.
        # A fresh joiner (almost nothing yet) pulls at once.
        behind = prev is not None and prev[0] > len(self.state)
        stable = prev is not None and prev[0] == n and prev[1] == d
        fresh = len(self.state) <= 2 and n > len(self.state)
        if behind or stable or fresh:
            self._last_sync[sender] = now
            nursery.start_soon(self.sync_with, sender)

    async def _announce_loop(self) -> None:
        while True:
            await trio.sleep(self.announce_interval * (0.75 + 0.5 * self.rng.random()))
            now = time.monotonic()
            for peer in self.transport.peers():
                self.last_connected[peer] = now
            if self.role_name == "observer":
                continue  # the observer never speaks; it still pulls when others announce
            digest = self.set_digest()
            # In a quiet, agreeing swarm announce only every QUIET_ANNOUNCE_EVERY rounds: each
            # announcement costs every peer a validation, which dominates idle CPU.
            agreed = digest == self._last_announced and all(
                d == digest for _, d, t in self._peer_have.values() if now - t < 10
            )
            self._quiet_rounds = self._quiet_rounds + 1 if agreed else 0
            if agreed and self._quiet_rounds % QUIET_ANNOUNCE_EVERY:
                continue
            self._last_announced = digest
            msg = {"t": "have", "n": len(self.state), "d": digest}
            try:
                self.counters.announces += 1
                await self.transport.publish(_dumps(msg))
            except TransportError:
                pass

    async def _role_loop(self) -> None:
        if self.role is None:
            return
        while True:
            await self.role.act(self, self.plan())
            await self.wait_changed(0.5)

    async def _status_loop(self) -> None:
        if self.on_status is None:
            return
        last: tuple[Any, ...] | None = None
        last_time = 0.0
        while True:
            plan = self.plan()
            key = (plan.digest, len(self.state), plan.complete)
            now = time.monotonic()
            if key != last or now - last_time > 5:
                self.on_status(self.status(plan))
                last, last_time = key, now
            await self.wait_changed(0.5)
            await trio.sleep(0.2)

    def status(self, plan: Plan | None = None) -> dict[str, Any]:
        plan = plan or self.plan()
        return {
            "peer": self.peer_id,
            "role": self.role_name,
            "run": self.run_id,
            "digest": plan.digest,
            "complete": plan.complete,
            "events": len(self.state),
            "progress": plan.progress(),
            "counters": self.counters.to_json(),
            "transport": self.transport.stats.to_json(),
            "peers": len(self.transport.peers()),
            "addrs": self.transport.addrs(),
            "last_model_failure": self.role.last_failure if self.role else None,
        }

    async def run(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED, learn_timeout: float = 60
    ) -> None:
        self.transport.set_validator(self.validate)
        self.transport.set_request_handler(self.handle_request)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._receive_loop, nursery)
            run_event = self._pending_run
            if run_event is None:
                run_event = next((e for e in self._preload if e.kind == "run"), None)
            if run_event is None:
                run_event = await self.learn_run(learn_timeout)
            self.adopt_run(run_event)
            for event in self._preload:
                if event.run == run_event.run:
                    self.add(event)
            self._preload = []
            if self.role is None and self.role_factory is not None:
                assert isinstance(run_event.body, RunBody)
                self.role = self.role_factory(run_event.body.spec)
            await self.transport.subscribe(topic_for(run_event))
            if self.role_name != "observer":
                await self._join()
            nursery.start_soon(self._announce_loop)
            nursery.start_soon(self._status_loop)
            # catch up with whoever is there before acting
            for peer in self.transport.peers():
                nursery.start_soon(self.sync_with, peer)
            self.ready.set()
            task_status.started()
            await self._role_loop()
            await trio.sleep_forever()

    async def _join(self) -> None:
        mine = [e for e in self.state.events() if e.kind == "join" and e.author == self.peer_id]
        if any(isinstance(e.body, JoinBody) and e.body.role == self.role_name for e in mine):
            for e in mine:  # re-gossip after a restart: others may have missed it
                await self._gossip_event(e)
            return
        admission = self.admission
        if admission is None and self.admission_key is not None and self.run_id:
            admission = admit(self.admission_key, self.run_id, self.peer_id, self.role_name)
        await self.publish(JoinBody(role=self.role_name, strategy=self.strategy, admission=admission))


def topic_for(run_event: Event) -> str:
    """The GossipSub topic of a run: the spec's, or one derived from the run id."""
    assert isinstance(run_event.body, RunBody)
    return run_event.body.spec.network.topic or f"specswarm/{run_event.run}"


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()
