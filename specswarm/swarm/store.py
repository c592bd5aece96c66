"""A node's copy of the run: the events it holds, and what it derives from them as they arrive.

:class:`EventStore` wraps the :class:`~specswarm.plan.fold.FoldState` with what anti-entropy
asks of it (the xor set digest, the id-prefix index ``get`` reads, the sorted ids ``sum``
answers from, the cached ``inv`` answer),
appends every new event to the event log, keeps the Lamport clock, and wakes whoever waits for
a change.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

import trio

from specswarm.plan.fold import FoldState
from specswarm.protocol.events import Event
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.ranges import IdRanges
from specswarm.swarm.wire import ID_PREFIX, encode_inv_reply


class EventStore:
    """The events of one run, applied once each; counts into ``counters``."""

    def __init__(self, counters: NodeCounters, sink: IO[str] | None = None) -> None:
        self.counters = counters
        self.sink = sink
        """Where each new event is appended, one JSON line each (the peer's event log)."""
        self.state = FoldState()
        self.run_event: Event | None = None
        self.lamport = 0
        self._xor = 0
        self._by_prefix: dict[str, list[tuple[int, Event]]] = {}
        """16-hex id prefix -> the events held under it, with their arrival index (for 'get')."""
        self._inv: bytes | None = None
        """The 'inv' answer, kept until the next new event."""
        self.ranges = IdRanges()
        """The id prefixes held, sorted, with their range summaries (the 'sum' answers)."""
        self._changed = trio.Event()
        self.arrived: dict[str, float] = {}
        """16-hex id prefix -> when the event was applied here (trio's clock; 0 outside trio)."""

    @property
    def run_id(self) -> str | None:
        return self.run_event.run if self.run_event else None

    def __len__(self) -> int:
        return len(self.state)

    def set_digest(self) -> str:
        """``count:xor of the ids``: equal for two stores exactly when they (almost surely) agree."""
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
        self.ranges.add(event.id[:ID_PREFIX])
        self.arrived[event.id[:ID_PREFIX]] = _now()
        self._inv = None
        self.counters.applied += 1
        self.lamport = max(self.lamport, event.lamport)
        if self.sink is not None:
            self.sink.write(event.to_bytes().decode() + "\n")
            self.sink.flush()
        self._changed.set()
        self._changed = trio.Event()
        return True

    def adopt_run(self, run_event: Event, preload: Iterable[Event] = ()) -> None:
        """Pin the store to ``run_event``'s run, then apply it and the ``preload`` events of that run."""
        self.run_event = run_event
        if len(self.state) == 0:
            self.state = FoldState(run=run_event.run)
        self.add(run_event)
        for event in preload:
            if event.run == run_event.run:
                self.add(event)

    def tick(self) -> int:
        """Advance the Lamport clock for an event we make; returns its new value."""
        self.lamport += 1
        return self.lamport

    def holds_prefix(self, prefix: str) -> bool:
        return prefix in self._by_prefix

    def inv_reply(self) -> bytes:
        """The encoded answer to ``inv``: the sorted id prefixes of every event held."""
        if self._inv is None:
            self._inv = encode_inv_reply(e[:ID_PREFIX] for e in self.state.ids)
        return self._inv

    def get(self, prefixes: Iterable[str]) -> list[Event]:
        """The events held under ``prefixes``, in arrival order (as a scan of the store gives)."""
        found = [hit for p in set(prefixes) for hit in self._by_prefix.get(p, ())]
        found.sort(key=lambda hit: hit[0])
        return [e for _, e in found]

    async def wait_changed(self, timeout: float) -> None:
        """Wait until a new event is applied, or ``timeout`` seconds."""
        changed = self._changed
        with trio.move_on_after(timeout):
            await changed.wait()


def _now() -> float:
    """trio's clock, or 0 outside a trio run (an event applied before the node runs is old)."""
    try:
        return trio.current_time()
    except RuntimeError:
        return 0.0
