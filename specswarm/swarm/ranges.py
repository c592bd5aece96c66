"""Set reconciliation by id ranges: what two peers exchange to find the events one lacks,
without either listing every id it holds.

Event ids are hashes, so their hex digits are uniform. A peer keeps its ids sorted
(:class:`IdRanges`); everything under a hex prefix is one contiguous range, summarised as
``"count:xor"`` of the ids in it. A ``sum`` request (:class:`Sum`) asks, for a few prefixes,
either the ids under each (when few, at most :data:`LIST_MAX`) or the summaries of its 16
one-digit-longer prefixes. The puller starts at the empty prefix and descends only into
prefixes whose summaries differ from its own (:class:`Descent`); where it holds half as many
ids as the other peer or fewer, it asks for the ids outright (``all``). Two peers that differ
by ``k`` events exchange about ``k × 16 × log16(n)`` summaries instead of ``n`` ids.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field
from functools import reduce
from operator import xor

ID_PREFIX = 16
"""Hex digits of an event id that name it in ``sum``, ``inv`` and ``get``."""
SUM_BATCH = 64
"""Prefixes in one ``sum`` request (a server reads no more)."""
LIST_MAX = 16
"""Ids under a prefix that a ``sum`` answer lists instead of summarising its sub-prefixes."""
SUM_ROUNDS = 24
"""``sum`` requests one pull makes at most (an honest peer needs about log16(events) + a few)."""
HEX = "0123456789abcdef"
EMPTY = "0:0"
"""The summary of a prefix that holds no id."""
SUM_BITS = 48
"""Bits of the xor a summary keeps: two different ranges look alike with odds 2^-48."""


@dataclass(frozen=True, slots=True)
class Sum:
    """``{"t": "sum"}``: for each of ``prefixes``, the ids held under it if few, else a summary
    of each one-digit-longer prefix; for each of ``everything``, the ids held under it."""

    prefixes: tuple[str, ...]
    everything: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SumEntry:
    """One prefix of a ``sum`` answer: the ids under it, or the 16 summaries below it."""

    ids: tuple[str, ...] | None = None
    kids: tuple[str, ...] | None = None


def prefixes(values: list[object]) -> tuple[str, ...]:
    """The well-formed prefixes among ``values`` (lowercase hex, shorter than an id prefix),
    each once, in order."""
    return tuple(
        dict.fromkeys(
            v for v in values if isinstance(v, str) and len(v) < ID_PREFIX and all(c in HEX for c in v)
        )
    )


class IdRanges:
    """The sorted id prefixes a peer holds, with the ``sum`` answers over them."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._ints: list[int] = []
        self._sums: dict[str, str] = {}
        """Summaries computed since the last new id."""

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, prefix: str) -> None:
        at = bisect.bisect_left(self._ids, prefix)
        if at < len(self._ids) and self._ids[at] == prefix:
            return
        self._ids.insert(at, prefix)
        self._ints.insert(at, int(prefix, 16))
        self._sums.clear()

    def _span(self, prefix: str) -> tuple[int, int]:
        return bisect.bisect_left(self._ids, prefix), bisect.bisect_left(self._ids, prefix + "g")

    def count(self, prefix: str) -> int:
        lo, hi = self._span(prefix)
        return hi - lo

    def ids(self, prefix: str = "") -> list[str]:
        lo, hi = self._span(prefix)
        return self._ids[lo:hi]

    def summary(self, prefix: str) -> str:
        """``"count:xor"`` of the ids under ``prefix`` (the low :data:`SUM_BITS` bits of the
        xor of their values, in hex)."""
        held = self._sums.get(prefix)
        if held is None:
            lo, hi = self._span(prefix)
            low = reduce(xor, self._ints[lo:hi], 0) & ((1 << SUM_BITS) - 1)
            held = self._sums[prefix] = f"{hi - lo}:{low:x}"
        return held

    def answer(self, request: Sum) -> dict[str, SumEntry]:
        """What we answer to ``request``."""
        out = {p: SumEntry(ids=tuple(self.ids(p))) for p in request.everything}
        for p in request.prefixes:
            if p in out:
                continue
            if self.count(p) <= LIST_MAX or len(p) >= ID_PREFIX - 1:
                out[p] = SumEntry(ids=tuple(self.ids(p)))
            else:
                out[p] = SumEntry(kids=tuple(self.summary(p + h) for h in HEX))
        return out


@dataclass
class Descent:
    """Where a pull stands: the ids found missing so far, and the prefixes still to ask about."""

    missing: dict[str, None]
    ask: list[str]
    """Prefixes whose ids or summaries we want next."""
    ask_all: list[str]
    """Prefixes under which we hold nothing: their ids, outright."""
    lacking: dict[str, None] = field(default_factory=dict)
    """Ids we hold that the other peer was seen to lack: under a prefix it listed, or one it
    summarised as empty (what it lacks under prefixes never descended into is not known)."""

    @classmethod
    def start(cls, mine: IdRanges, theirs: int | None = None) -> Descent:
        """A pull from a peer holding ``theirs`` ids (None: not known). Holding few ids, or half
        of theirs or fewer (a peer catching up), we ask for their ids outright: summaries
        would only lead to them a level or two later."""
        few = len(mine) <= LIST_MAX or (theirs is not None and 2 * len(mine) <= theirs)
        return cls({}, [] if few else [""], [""] if few else [])

    def next_request(self) -> Sum | None:
        """The next ``sum`` request (None when there is nothing left to ask)."""
        if not self.ask and not self.ask_all:
            return None
        every, self.ask_all = self.ask_all[:SUM_BATCH], self.ask_all[SUM_BATCH:]
        room = SUM_BATCH - len(every)
        asked, self.ask = self.ask[:room], self.ask[room:]
        return Sum(tuple(asked), tuple(every))

    def take(self, request: Sum, answer: dict[str, SumEntry], mine: IdRanges) -> None:
        """Read the answer to ``request``: note the ids we lack, and the prefixes whose summary
        differs from ours (to ask about next)."""
        for prefix in (*request.everything, *request.prefixes):
            entry = answer.get(prefix)
            if entry is None:
                continue
            if entry.ids is not None:
                ours = mine.ids(prefix)
                lo_ids, listed = set(ours), set(entry.ids)
                for i in entry.ids:
                    if i.startswith(prefix) and i not in lo_ids:
                        self.missing[i] = None
                self.lacking.update(dict.fromkeys(i for i in ours if i not in listed))
                continue
            for h, theirs in zip(HEX, entry.kids or (), strict=False):
                child = prefix + h
                if theirs == EMPTY:
                    self.lacking.update(dict.fromkeys(mine.ids(child)))
                    continue
                if len(child) >= ID_PREFIX or theirs == mine.summary(child):
                    continue
                # holding half of theirs or less, we lack most of them: their ids cost less
                # than a level of summaries
                few = 2 * mine.count(child) <= _count(theirs)
                (self.ask_all if few else self.ask).append(child)


def _count(summary: str) -> int:
    head = summary.split(":", 1)[0]
    return int(head) if head.isdigit() else 0


def encode_sum_reply(entries: dict[str, SumEntry]) -> bytes:
    body = {
        p: {"ids": list(e.ids)} if e.ids is not None else {"kids": list(e.kids or ())}
        for p, e in entries.items()
    }
    return json.dumps({"sum": body}, separators=(",", ":")).encode()


def decode_sum_reply(data: bytes) -> dict[str, SumEntry] | None:
    """The entries of a ``sum`` answer (malformed ones skipped); None if the answer is not one
    (a peer that does not know ``sum``); ValueError if it is not JSON."""
    obj = json.loads(data)
    entries = obj.get("sum") if isinstance(obj, dict) else None
    if not isinstance(entries, dict):
        return None
    out: dict[str, SumEntry] = {}
    for prefix, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        ids, kids = entry.get("ids"), entry.get("kids")
        if isinstance(ids, list):
            out[prefix] = SumEntry(ids=tuple(i for i in ids if isinstance(i, str) and i.startswith(prefix)))
        elif isinstance(kids, list) and len(kids) == len(HEX) and all(isinstance(k, str) for k in kids):
            out[prefix] = SumEntry(kids=tuple(kids))
    return out
