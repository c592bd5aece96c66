"""What the launcher shows while it watches: the growing tree, as lines on stderr."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TextIO

from specswarm.plan import Plan
from specswarm.protocol.events import KINDS
from specswarm.protocol.identity import short_id
from specswarm.swarm.launcher.procs import PeerProc


def event_count(plan: Plan) -> int:
    """The events the plan was folded from (of the six kinds; ``ignored`` is not one)."""
    return sum(v for k, v in plan.counts.items() if k in KINDS)


def summary(plan: Plan, peers: Sequence[PeerProc], progress: Progress) -> str:
    """One line on a finished (or stopped) run: its size, its model calls, its wall time."""
    calls = sum(p.counter("model_calls") for p in peers)
    tokens = sum(p.counter("model_tokens") for p in peers)
    hits = sum(p.counter("cache_hits") for p in peers)
    misses = sum(p.counter("cache_misses") for p in peers)
    p = plan.progress()
    return (
        f"{p['nodes']} nodes, {p['leaves']} leaves, {event_count(plan)} events, {calls} model calls"
        + (f", {tokens} tokens" if tokens else "")
        + (f", cache {hits} hits / {misses} misses" if hits or misses else "")
        + f", wall {progress.elapsed()}"
    )


class Progress:
    """Live progress on stderr: the growing tree on a terminal, sparse lines otherwise."""

    def __init__(self, quiet: bool, stream: TextIO = sys.stderr) -> None:
        self.quiet = quiet
        self.stream = stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.last_line = ""
        self.last_print = 0.0
        self.seen_accepted: set[str] = set()
        self.seen_results: set[str] = set()

    def elapsed(self) -> str:
        s = int(time.monotonic() - self.started)
        return f"{s // 60:02d}:{s % 60:02d}"

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"[{self.elapsed()}] {text}", file=self.stream, flush=True)

    def update(self, plan: Plan, peers: Sequence[PeerProc]) -> None:
        if self.quiet or plan.root is None:
            return
        self._news(plan)
        p = plan.progress()
        calls = sum(x.counter("model_calls") for x in peers)
        alive = sum(1 for x in peers if x.alive)
        line = (
            f"nodes {p['nodes']}  split {p['split']}  open {p['open']}  leaves {p['done']}/{p['leaves']} "
            f"done ({p['claimed']} claimed)  events {event_count(plan)}"
            f"  model calls {calls}  peers {alive}/{len(peers)}"
        )
        now = time.monotonic()
        if line != self.last_line and now - self.last_print > (1 if self.tty else 5):
            self.say(line)
            self.last_line, self.last_print = line, now

    def _news(self, plan: Plan) -> None:
        """A line for every split accepted and every leaf done since the last update."""
        for n in plan.walk():
            if n.accepted and n.id not in self.seen_accepted:
                self.seen_accepted.add(n.id)
                acc = n.accepted_proposal
                assert acc is not None
                rivals = len(n.proposals) - 1
                self.say(
                    f"split accepted: {n.title[:60]!r} → {len(n.children)} parts "
                    f"({acc.strategy}, {acc.approvals} approvals"
                    + (f", {rivals} rival(s) rejected/outvoted" if rivals else "")
                    + ")"
                )
            if n.result and n.id not in self.seen_results:
                self.seen_results.add(n.id)
                self.say(f"leaf done: {n.title[:60]!r} by executor {short_id(n.result.author)}")
