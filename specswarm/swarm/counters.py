"""What a node counts: :class:`NodeCounters`, shared by its parts and its role."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from specswarm.model.asking import TaskCounts


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
    """Model answers not generated again: a rating taken from another scorer's vote of the same
    lens, or a greedy answer this peer's model already gave to the same request."""
    ratings_skipped: int = 0
    """Votes cast without asking the model for a rating: the checks decide the vote whatever
    it would say (:func:`~specswarm.critics.rating_decides`; vetoed splits not counted)."""
    model_failures: int = 0
    model_tokens: int = 0
    model_seconds: float = 0.0
    """Wall time inside model tasks (waiting for the machine-wide generation slot included)."""
    model_generations: int = 0
    """Generations (a task retried after a bad answer makes several)."""
    model_gen_seconds: float = 0.0
    """Time the model itself spent generating (sum of Generation.seconds; 0 for scripted/replay)."""
    cache_hits: int = 0
    """Answers the answer cache gave (no generation; ``--cache``)."""
    cache_misses: int = 0
    """Requests the answer cache did not hold (generated, then stored)."""
    cached_tokens: int = 0
    """Tokens of the cached answers (not in ``model_tokens``: the model did not generate them)."""
    announces: int = 0
    """``have`` announcements published (anti-entropy gossip)."""
    sync_requests: int = 0
    """Anti-entropy requests this node made (sum or inv, and get)."""
    sync_bytes: int = 0
    """Bytes of those requests and their responses."""
    sync_inventory_bytes: int = 0
    """Of those, the bytes spent finding which events to fetch (sum and inv, not get)."""
    sync_failures: int = 0
    """Anti-entropy pulls that failed (a request timed out or the transport failed)."""
    sync_skipped: int = 0
    """Gaps an announcement showed that were not pulled because another pull was under way."""
    pushed: int = 0
    """Events gossiped again because a peer we pulled from was seen to lack them (lost gossip)."""
    results_withheld: int = 0
    """Leaf results written but not published: by then the leaf had a result, or an older
    claim of a live executor held it (a race lost while the model was writing)."""
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
            "ratings_skipped": self.ratings_skipped,
            "model_failures": self.model_failures,
            "model_tokens": self.model_tokens,
            "model_seconds": round(self.model_seconds, 2),
            "model_generations": self.model_generations,
            "model_gen_seconds": round(self.model_gen_seconds, 2),
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "cached_tokens": self.cached_tokens,
            "announces": self.announces,
            "sync_requests": self.sync_requests,
            "sync_bytes": self.sync_bytes,
            "sync_inventory_bytes": self.sync_inventory_bytes,
            "sync_skipped": self.sync_skipped,
            "sync_failures": self.sync_failures,
            "pushed": self.pushed,
            "results_withheld": self.results_withheld,
            "tasks": self.tasks.to_json(),
            # every thread of this process, the model's included: a peer's whole cost in CPU
            "cpu_seconds": round(time.process_time(), 2),
        }
