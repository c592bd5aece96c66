"""When a node announces its event set (:class:`Cadence`), and how the swarm's size stretches
the rounds (:func:`spread`); :mod:`specswarm.swarm.antientropy` acts on what is announced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specswarm.plan import Plan

ANNOUNCERS = 8
"""About how many peers announce per round, however large the swarm."""
QUIET_ANNOUNCE_EVERY = 5
"""When nothing changes and every peer agrees, announce once in this many rounds."""
DISAGREE_ANNOUNCE_EVERY = 2
"""When our set has not changed but a peer's differs, announce once in this many rounds (in a
swarm of at most :data:`ANNOUNCERS` peers)."""
PEER_HAVE_FRESH = 10.0
"""Seconds a peer's announcement counts when deciding whether the swarm agrees."""


def spread(peers: int) -> float:
    """How much longer than one round repairs take in a swarm of ``peers``: 1, or peers /
    ANNOUNCERS in a larger swarm (each peer announces once in that many rounds)."""
    return max(1.0, peers / ANNOUNCERS)


def swarm_size(plan: Plan) -> int:
    """The peers that speak in ``plan``'s run: those that joined, or those its spec declares,
    whichever is more (the observer is silent). At 64 peers in 8 processes joins were slow to
    arrive, and peers that had heard few of them hurried as in a small swarm: every peer
    announced at every chance, 3,263 times in 7 minutes."""
    r = plan.spec.roles if plan.spec is not None else None
    declared = r.decomposer.count + r.scorer.count + r.executor.count if r else 0
    return max(len(plan.roles), declared)


@dataclass(frozen=True, slots=True)
class Heard:
    """A peer's latest announced set: ``n`` events with set digest ``digest``, heard at ``at``."""

    n: int
    digest: str
    at: float


class Cadence:
    """When a node announces its set. At once when it published an event since its last
    announcement (or has never announced); otherwise, in a swarm of at most ANNOUNCERS peers,
    every DISAGREE_ANNOUNCE_EVERY rounds while a peer lags behind what it held a round before
    (:meth:`lagging`: repair is under way) and no peer has announced our set to it since, and
    every QUIET_ANNOUNCE_EVERY rounds else. Each announcement costs every peer a delivery (and
    the library's per-RPC signed record), which dominates idle CPU. A set changed by gossip is no
    news: the peers got the same gossip. Announcing every such change made announcements grow
    with peers times events: at 32 peers on 2 cores, 2,700 announcements for 187 events, 95 % of
    what each peer received."""

    def __init__(self) -> None:
        self.last = ""
        """The digest last announced."""
        self.published = 0
        """How many events we had published at that announcement."""
        self.held: list[tuple[float, int]] = []
        """(time, events held) at each round."""
        self.quiet_rounds = 0

    def due(
        self,
        now: float,
        digest: str,
        held: int,
        published: int,
        peers: dict[str, Heard],
        period: float,
        hurry: bool = True,
    ) -> bool:
        """One round (``period`` seconds long): announce now? Records the announcement if so.
        ``hurry``: may a lagging peer make it sooner (the caller says no in a swarm wider than
        :data:`ANNOUNCERS`: there a lagging peer somewhere kept every peer on the faster
        cadence, each announcement a delivery to every peer; at 64 peers in 8 processes 1,436
        announcements for 310 events, and no convergence in 7 minutes). Hurrying only a node no
        peer had announced more than was tried and did not converge at 64 either (2,654 copies
        missing after 7 minutes). The cost: a lost event is repaired at the quiet cadence (a
        join gossip lost at 32 peers was still missing at 31 of them when the plan converged)."""
        changed = digest != self.last and (published != self.published or not self.last)
        lag_at = self.lagging(now, held, peers, period)  # called either way: it keeps our history
        lag_at = lag_at if hurry else None
        self.quiet_rounds = 0 if changed else self.quiet_rounds + 1
        # a lagging peer that a peer has announced our very set to since has been told (the
        # suppression of Trickle, RFC 6206): the quiet cadence is enough
        told = lag_at is not None and any(h.digest == digest and h.at > lag_at for h in peers.values())
        every = DISAGREE_ANNOUNCE_EVERY if lag_at is not None and not told else QUIET_ANNOUNCE_EVERY
        if not changed and self.quiet_rounds % every:
            return False
        self.announced(digest, published)
        return True

    def announced(self, digest: str, published: int) -> None:
        """Our set ``digest`` went out (an announcement, or with an event we published)."""
        self.last, self.published = digest, published

    def lagging(self, now: float, held: int, peers: dict[str, Heard], period: float) -> float | None:
        """When some peer last announced, recently, fewer events than we held a round
        (``period``) before it announced (None: none did): gossip had its chance and that peer
        still lacks what we hold (only an announcement lets it find out). A peer a moment
        behind, with our newest events in flight, does not count; a peer ahead of us learns
        nothing from us (we pull from it)."""
        self.held.append((now, held))
        while len(self.held) > 1 and self.held[1][0] < now - PEER_HAVE_FRESH - 2 * period:
            self.held.pop(0)
        latest: float | None = None
        for h in peers.values():
            before = [n for t, n in self.held if t <= h.at - period]
            if now - h.at < PEER_HAVE_FRESH and before and h.n < max(before):
                latest = h.at if latest is None else max(latest, h.at)
        return latest
