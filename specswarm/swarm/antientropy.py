"""Anti-entropy: repair what gossip lost, and learn the run from a peer.

Each node announces ``(count, set digest)`` on every event it publishes
(:func:`gossip_event`), and on its own at the cadence of :mod:`specswarm.swarm.cadence` (sooner
while a peer lags behind what it held, in a small swarm; rounds stretched in a large one).
Events a node got by gossip are not announced (every peer got the same gossip). A node that hears
a peer holding more than it does, or as many but other events, waits one round (gossip still in
flight arrives meanwhile) and, if the gap is still there, finds the ids it lacks by comparing
range summaries (:mod:`specswarm.swarm.ranges`, not the whole inventory) with that peer, or with
a neighbour that announced as much when the announcer is not one (:func:`pull_source`), and
fetches those events over request/response; one pull at a time. A node that joins late
(or knows only one address) learns the run the same way, with ``hello``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

import trio

from specswarm.errors import TransportError
from specswarm.protocol.events import Event
from specswarm.swarm.cadence import ANNOUNCERS, QUIET_ANNOUNCE_EVERY, Cadence, Heard, spread, swarm_size
from specswarm.swarm.liveness import Liveness
from specswarm.swarm.ranges import ID_PREFIX, SUM_ROUNDS, Descent, Sum, decode_sum_reply, encode_sum_reply
from specswarm.swarm.store import EventStore
from specswarm.swarm.wire import (
    GET_BATCH,
    HELLO,
    INV,
    BadRequest,
    Get,
    HaveMsg,
    Hello,
    Inv,
    decode_get_reply,
    decode_hello_reply,
    decode_inv_reply,
    decode_request,
    encode_event,
    encode_get_reply,
    encode_have,
    encode_hello_reply,
    encode_request,
    reason_class,
    verify_event,
)
from specswarm.transport.base import Transport

log = logging.getLogger("specswarm.swarm.node")

ANNOUNCE_INTERVAL = 1.0
GONE_GRACE = 3 * QUIET_ANNOUNCE_EVERY * ANNOUNCE_INTERVAL
"""Seconds without contact before a peer counts as gone (three quiet announcement periods); in a
swarm of more than :data:`ANNOUNCERS` peers, longer (:meth:`AntiEntropy.silence`)."""
SYNC_TIMEOUT = 30.0
"""Seconds an anti-entropy request may take: generous, because a CPU-starved peer (many
processes on few cores) answers late, and a timed-out pull repairs nothing."""
SYNC_MIN_INTERVAL = 2.0
"""Seconds between two anti-entropy pulls from the same peer."""
SYNC_BACKOFF_DOUBLINGS = 4
"""After a failed pull from a peer, it is not pulled from for SYNC_MIN_INTERVAL seconds, doubled
with each failure in a row at most this many times (2 s up to 32 s). At 32 peers on 2 cores
three pulls in four failed (a stream to a CPU-starved peer did not open within the library's
10 s), and a node pulls from one peer at a time: retried at once, the same slow peer held every
other repair back."""
PUSH_AFTER = 30.0
"""Seconds we must have held an event before a peer's lacking it counts as a loss (not gossip
still in flight) and we gossip it again (:func:`push_back`)."""
PUSH_AGAIN = 30.0
"""Seconds before we gossip the same event again for a loss."""
PUSH_MAX = 8
"""Events a peer may lack, at most, for us to gossip them again: a peer lacking more is catching
up, and pulls them itself."""
HELLO_TIMEOUT = 5.0
LEARN_RETRY = 0.2


class AntiEntropy:
    """Announcements, pulls and the answers to them, for one node's store."""

    def __init__(
        self,
        transport: Transport,
        store: EventStore,
        liveness: Liveness,
        role_name: str,
        rng: random.Random,
        announce_interval: Callable[[], float] = lambda: ANNOUNCE_INTERVAL,
    ) -> None:
        self.transport = transport
        self.store = store
        self.counters = store.counters
        self.liveness = liveness
        self.role_name = role_name
        self.rng = rng
        self.announce_interval = announce_interval
        """Mean seconds between announcements (asked every round: it may change while running)."""
        self._peer_have: dict[str, Heard] = {}
        self._last_sync: dict[str, float] = {}
        self._syncing: set[str] = set()
        self.cadence = Cadence()
        self._checking: set[str] = set()
        self._pulling = False
        self._failures: dict[str, int] = {}
        """Peer -> failed pulls from it in a row (capped: :data:`SYNC_BACKOFF_DOUBLINGS`)."""
        self.pushed_at: dict[str, float] = {}
        """Id prefix -> when we last gossiped that event again (:func:`push_back`)."""

    # -- serving ------------------------------------------------------------------------------
    async def handle_request(self, sender: str, data: bytes) -> bytes:
        self.liveness.heard(sender)
        req = decode_request(data)
        if isinstance(req, BadRequest):
            return req.reply
        if isinstance(req, Hello):
            return encode_hello_reply(self.store.run_event, len(self.store), self.role_name)
        if isinstance(req, Inv):
            return self.store.inv_reply()
        if isinstance(req, Sum):
            return encode_sum_reply(self.store.ranges.answer(req))
        return encode_get_reply(self.store.get(req.ids))

    # -- pulling ------------------------------------------------------------------------------
    def on_have(self, nursery: trio.Nursery, sender: str, msg: HaveMsg) -> None:
        """A peer announced its set: if it holds more than we do (or as many, but others), check
        again one round later, when gossip still in flight has arrived, and pull if it still does.
        A fresh joiner (almost nothing yet) pulls at once. A peer holding fewer events than we do
        is pulled from too once it announces the same other set twice: it is not catching up, and
        it may hold what we lack (at 32 peers on 2 cores one peer's join stayed missing at 22
        peers for 7 minutes: each of them held more events than the peers that had it)."""
        now = trio.current_time()
        before = self._peer_have.get(sender)
        self._peer_have[sender] = Heard(msg.n, msg.digest, now)
        self.liveness.heard(sender, now)
        held = len(self.store)
        if msg.digest == self.store.set_digest() or sender in self._checking:
            return  # the same set
        stuck = msg.n < held
        if stuck and (before is None or before.digest != msg.digest):
            return  # the peer is behind and catching up (it pulls when it hears one of us)
        if now - self._last_sync.get(sender, -1e9) < SYNC_MIN_INTERVAL * 2 ** self._failures.get(sender, 0):
            return
        if held <= 2:
            self._last_sync[sender] = now
            nursery.start_soon(self.sync_with, pull_source(self, sender, msg))
            return
        self._checking.add(sender)
        nursery.start_soon(self._pull_if_still_behind, sender, msg, stuck)

    async def _pull_if_still_behind(self, sender: str, msg: HaveMsg, stuck: bool = False) -> None:
        try:
            await trio.sleep(self.announce_interval())
            held = len(self.store)
            other = self.store.set_digest() != msg.digest
            gap = held < msg.n or (other and (held == msg.n or stuck))
            if not gap or self._pulling:
                if gap:
                    self.counters.sync_skipped += 1  # another pull is under way; a later one helps
                return
            self._pulling = True
            self._last_sync[sender] = trio.current_time()
            source = pull_source(self, sender, msg)
            try:
                await self.sync_with(source, self._peer_have[source].n)
            finally:
                self._pulling = False
        finally:
            self._checking.discard(sender)

    def silence(self) -> float:
        """Seconds a live peer may go unheard here: three of its quiet announcement periods."""
        return 3 * QUIET_ANNOUNCE_EVERY * self.announce_interval() * self._spread()

    def _spread(self) -> float:
        """Rounds between two of our announcements (:func:`spread`), by the joins heard so far
        (by the size the spec declares, the 100-peer simulation took 121 virtual s, not 29:
        rounds were stretched before the peers they were for had joined)."""
        return spread(len(self.store.state.plan().roles))

    def period(self) -> float:
        """Seconds between two of our chances to announce: the swarm's round, longer in a swarm
        of more than ANNOUNCERS peers (a scale for waits, not a clock)."""
        return self.announce_interval() * self._spread()

    async def sync_with(self, peer: str, their_count: int | None = None) -> int:
        """Pull every event ``peer`` has and we lack (``their_count``: how many it announced it
        holds, when known). Returns how many were new."""
        if peer in self._syncing:
            return 0
        self._syncing.add(peer)
        new = 0
        lacking: list[str] = []
        try:
            ids, lacking = await self._differences(peer, their_count)
            missing = [i for i in ids if not self.store.holds_prefix(i)]
            for start in range(0, len(missing), GET_BATCH):
                batch = Get(tuple(missing[start : start + GET_BATCH]))
                for raw in decode_get_reply(await self._request(peer, encode_request(batch))):
                    event, reason = verify_event(raw, self.store.run_id)
                    if event is None:
                        self.counters.dropped[reason_class(reason)] += 1
                    elif self.store.add(event):
                        new += 1
            self.counters.syncs += 1
            self.counters.synced_events += new
            self._failures.pop(peer, None)
        except (TransportError, ValueError, AttributeError, TypeError) as exc:
            log.debug("sync with %s failed: %s", peer, exc)
            self.counters.sync_failures += 1
            self._failures[peer] = min(self._failures.get(peer, 0) + 1, SYNC_BACKOFF_DOUBLINGS)
        finally:
            self._syncing.discard(peer)
        await push_back(self, lacking)
        return new

    async def _differences(self, peer: str, their_count: int | None = None) -> tuple[list[str], list[str]]:
        """The ids ``peer`` holds that we may lack, and the ids we hold that it was seen to lack:
        found by descending the id ranges whose summaries differ (:mod:`specswarm.swarm.ranges`),
        or, from a peer that does not answer ``sum``, from its whole inventory."""
        descent = Descent.start(self.store.ranges, their_count)
        for _ in range(SUM_ROUNDS):
            request = descent.next_request()
            if request is None:
                break
            answer = decode_sum_reply(await self._request(peer, encode_request(request), inventory=True))
            if answer is None:
                theirs = decode_inv_reply(await self._request(peer, INV, inventory=True))
                return list(theirs), sorted(set(self.store.ranges.ids()).difference(theirs))
            descent.take(request, answer, self.store.ranges)
        return list(descent.missing), list(descent.lacking)

    async def _request(self, peer: str, data: bytes, inventory: bool = False) -> bytes:
        self.counters.sync_requests += 1
        self.counters.sync_bytes += len(data)
        resp = await self.transport.request(peer, data, timeout=SYNC_TIMEOUT)
        self.liveness.heard(peer)
        self.counters.sync_bytes += len(resp)
        if inventory:
            self.counters.sync_inventory_bytes += len(data) + len(resp)
        return resp

    # -- announcing -----------------------------------------------------------------------------
    async def announce_loop(self) -> None:
        while True:
            await trio.sleep(self.announce_interval() * self._spread() * (0.75 + 0.5 * self.rng.random()))
            now = trio.current_time()
            self.liveness.see_connected(now)
            if self.role_name == "observer":
                continue  # the observer never speaks; it still pulls when others announce
            digest = self.store.set_digest()
            period = self.period()
            hurry = swarm_size(self.store.state.plan()) <= ANNOUNCERS  # small: a laggard is told sooner
            if not self.cadence.due(
                now, digest, len(self.store), self.counters.published, self._peer_have, period, hurry
            ):
                continue
            try:
                self.counters.announces += 1
                await self.transport.publish(encode_have(len(self.store), digest))
            except TransportError:
                pass


async def learn_run(sync: AntiEntropy, timeout: float) -> Event:
    """Ask ``sync``'s connected peers for the run event until one answers (a peer that only has
    --join)."""
    with trio.fail_after(timeout):
        while True:
            for peer in sync.transport.peers():
                try:
                    raw = decode_hello_reply(await sync.transport.request(peer, HELLO, timeout=HELLO_TIMEOUT))
                except (TransportError, ValueError):
                    continue
                if raw:
                    event, reason = verify_event(raw, None)
                    if event is not None and event.kind == "run":
                        return event
                    sync.counters.dropped[reason_class(reason or "not a run event")] += 1
            await trio.sleep(LEARN_RETRY)


def pull_source(sync: AntiEntropy, sender: str, msg: HaveMsg) -> str:
    """Whom ``sync`` pulls the set ``sender`` announced (``msg``) from: the sender if connected;
    else a neighbour that announced that very set (sets only grow), else one that announced more
    events than we hold, else as many but another set; else the sender (a dial). At 64 peers in
    8 processes 1,175 of 2,024 failed pulls were to a peer whose address was never learnt."""
    connected = sync.transport.peers()
    if sender in connected:
        return sender
    held, digest = len(sync.store), sync.store.set_digest()
    known = [(p, sync._peer_have[p]) for p in sorted(connected) if p in sync._peer_have]
    fits: list[Callable[[Heard], bool]] = [
        lambda h: h.digest == msg.digest,
        lambda h: h.n > held,
        lambda h: h.n == held and h.digest != digest,
    ]
    for fit in fits:
        pool = [p for p, h in known if fit(h)]
        if pool:
            return sync.rng.choice(pool)
    return sender


async def gossip_event(sync: AntiEntropy, event: Event) -> None:
    """Gossip ``event`` with our set's (count, digest) on it, and count that as the announcement
    publishing makes due (:class:`Cadence`); the observer sends none (it never speaks). In a
    CPU-starved swarm nearly every event had a round, and an announcement every peer received,
    of its own: at 32 peers on 2 cores, 469 announcements for 266 events. Best effort: a publish
    that fails records nothing (the next round announces, and anti-entropy repairs the event)."""
    store = sync.store
    have = None if sync.role_name == "observer" else HaveMsg(len(store), store.set_digest())
    try:
        await sync.transport.publish(encode_event(event, have))
    except TransportError as exc:
        log.debug("publish failed: %s", exc)
        return
    if have is not None:
        sync.cadence.announced(have.digest, sync.counters.published)


async def push_back(ae: AntiEntropy, lacking: list[str]) -> None:
    """Gossip again the events (by id prefix) that a peer we pulled from was seen to lack,
    when they are few (:data:`PUSH_MAX`), we have held them for :data:`PUSH_AFTER` s (lost,
    not in flight) and have not gossiped them again for :data:`PUSH_AGAIN` s. A pull finds
    only what we lack; without this, an event only a lagging peer held stayed lost: the
    peers ahead of it never pull from it (at 32 peers on 2 cores a scorer's join was
    missing at 28 peers when the plan converged, 2 minutes after it was published). The
    observer never speaks, so it gossips nothing."""
    if not lacking or ae.role_name == "observer":
        return
    now = trio.current_time()
    lost = [i for i in lacking if now - ae.store.arrived.get(i, now) >= PUSH_AFTER]
    if len(lost) > PUSH_MAX:
        return
    due = [i for i in lost if now - ae.pushed_at.get(i, -1e9) >= PUSH_AGAIN]
    for event in ae.store.get(due):
        ae.pushed_at[event.id[:ID_PREFIX]] = now
        ae.counters.pushed += 1
        await gossip_event(ae, event)
