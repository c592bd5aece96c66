"""What the launcher shows while it watches, and when the run ends.

On a terminal (stderr a TTY, no ``--quiet``) a live view (:mod:`specswarm.render.live`):
the growing tree with each node's status, a bar over the leaves, elapsed time and an
estimate of the time left (:mod:`~specswarm.swarm.launcher.estimate`), the model's speed and
what each peer does now (from its status lines), redrawn in place; the news of accepted
splits and finished leaves scrolls above it. Elsewhere (a CI log) sparse lines, one every few
seconds at most. Either way a run ends with a summary table (not with ``--quiet``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.live import Live

from specswarm.plan import Plan
from specswarm.protocol.events import KINDS
from specswarm.protocol.identity import short_id
from specswarm.render.live import LiveStats, PeerRow, RoleUse, describe, live_view, summary_table
from specswarm.render.tree import fallback
from specswarm.swarm.launcher.estimate import seconds_left
from specswarm.swarm.launcher.procs import PeerProc

REDRAW = 0.5
"""Seconds between two frames of the live view at most."""


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


def _seconds(p: PeerProc, name: str) -> float:
    value = p.status.get("counters", {}).get(name, 0)
    return float(value if isinstance(value, int | float) else 0) + p.carried.get(name, 0.0)


def role_uses(peers: Sequence[PeerProc]) -> list[RoleUse]:
    """What each model role's peers spent, in launch order of the roles."""
    uses = []
    for role in ("decomposer", "scorer", "executor"):
        mine = [p for p in peers if p.role == role]
        if mine:
            uses.append(
                RoleUse(
                    role,
                    sum(p.counter("model_calls") for p in mine),
                    sum(p.counter("model_tokens") for p in mine),
                    sum(_seconds(p, "model_gen_seconds") for p in mine),
                    sum(p.counter("cache_hits") for p in mine),
                    sum(p.counter("cache_misses") for p in mine),
                )
            )
    return uses


class Progress:
    """Live progress on stderr: the live view on a terminal, sparse lines otherwise."""

    def __init__(self, quiet: bool, stream: TextIO = sys.stderr, live: bool | None = None) -> None:
        self.quiet = quiet
        self.stream = stream
        self.tty = stream.isatty()
        self.live = (self.tty if live is None else live) and not quiet
        """Draw the live view (a terminal, not quiet)."""
        self.started = time.monotonic()
        self.last_line = ""
        self.last_print = 0.0
        self.seen_accepted: set[str] = set()
        self.seen_results: set[str] = set()
        self.console = Console(file=stream, width=None if self.tty else 120, highlight=False)
        self._view: Live | None = None
        self._drawn = 0.0

    def elapsed(self) -> str:
        s = int(time.monotonic() - self.started)
        return f"{s // 60:02d}:{s % 60:02d}"

    def say(self, text: str) -> None:
        if self.quiet:
            return
        line = f"[{self.elapsed()}] {text}"
        if self._view is not None:
            self._view.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(line, file=self.stream, flush=True)

    def update(self, plan: Plan, peers: Sequence[PeerProc]) -> None:
        if self.quiet or plan.root is None:
            return
        self._news(plan, names_of(peers))
        if self.live:
            self._draw(plan, peers)
            return
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

    def _draw(self, plan: Plan, peers: Sequence[PeerProc], ended: bool = False) -> None:
        now = time.monotonic()
        if not ended and now - self._drawn < REDRAW:
            return
        self._drawn = now
        stats = self.stats(plan, peers, ended)
        frame = live_view(plan, stats, peer_rows(plan, peers, ended), names_of(peers))
        if self._view is None:
            self._view = Live(
                frame,
                console=self.console,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
                vertical_overflow="ellipsis",
            )
            self._view.start(refresh=True)
        else:
            self._view.update(frame, refresh=True)

    def stats(self, plan: Plan, peers: Sequence[PeerProc], ended: bool = False) -> LiveStats:
        """The header's numbers, from the peers' latest status lines (``ended``: the run is
        over and its peers stopped: no peer count)."""
        elapsed = time.monotonic() - self.started
        calls = sum(p.counter("model_calls") for p in peers)
        gen = sum(_seconds(p, "model_gen_seconds") for p in peers)
        tokens = sum(p.counter("model_tokens") for p in peers)
        spec = plan.spec
        return LiveStats(
            elapsed=elapsed,
            left=seconds_left(plan, spec, elapsed, calls, gen) if spec is not None else None,
            tokens_per_second=tokens / gen if gen > 0 else None,
            model_calls=calls,
            cache_hits=sum(p.counter("cache_hits") for p in peers),
            cache_misses=sum(p.counter("cache_misses") for p in peers),
            peers_alive=None if ended else sum(1 for p in peers if p.alive),
            peers_total=None if ended else len(peers),
        )

    def close(self, plan: Plan, peers: Sequence[PeerProc]) -> None:
        """The run is over: draw the last frame (kept on screen), then the summary table."""
        if self.quiet:
            return
        if self.live and plan.root is not None:
            self._news(plan, names_of(peers))
            self._draw(plan, peers, ended=True)
        self.stop()
        wall = time.monotonic() - self.started
        self.console.print(summary_table(plan, wall, role_uses(peers)))

    def stop(self) -> None:
        """Stop redrawing (the last frame stays); safe to call twice."""
        if self._view is not None:
            self._view.stop()
            self._view = None

    def _news(self, plan: Plan, names: dict[str, str]) -> None:
        """A line for every split accepted, every leaf done and every node summarized since the
        last update; a peer is named by its seat (``executor-0``), as in the tree and the peer
        table."""
        summarized = []  # said after the leaves: a summary comes after its parts
        for n in plan.walk():
            if n.accepted and n.id not in self.seen_accepted:
                self.seen_accepted.add(n.id)
                acc = n.accepted_proposal
                assert acc is not None
                rivals = len(n.proposals) - 1
                self.say(
                    f"split accepted: {n.title[:60]!r} → {len(n.children)} parts "
                    f"({acc.strategy}, {acc.approvals} approvals"
                    + (", the fallback: no split reached the quorum" if fallback(plan, n) else "")
                    + (f", {rivals} rival(s) rejected/outvoted" if rivals else "")
                    + ")"
                )
            if n.result and n.id not in self.seen_results:
                self.seen_results.add(n.id)
                who = names.get(n.result.author) or f"executor {short_id(n.result.author)}"
                self.say(f"leaf done: {n.title[:60]!r} by {who}")
            if n.summary and n.id not in self.seen_results:
                self.seen_results.add(n.id)
                who = names.get(n.summary.author) or f"executor {short_id(n.summary.author)}"
                how = " (its parts' titles: no usable answer)" if n.summary.fallback else ""
                summarized.append((n.depth, f"summary: {n.title[:60]!r} by {who}{how}"))
        for _, line in sorted(summarized, key=lambda dl: -dl[0]):
            self.say(line)


def names_of(peers: Sequence[PeerProc]) -> dict[str, str]:
    """peer id -> seat name (``executor-0``), for the view."""
    return {p.identity.peer_id: p.name for p in peers}


def peer_rows(plan: Plan, peers: Sequence[PeerProc], ended: bool = False) -> list[PeerRow]:
    """What each peer does now, from its latest status line (observers are left out);
    ``ended``: the run is over (what each peer did instead)."""
    rows = []
    for p in peers:
        if p.role == "observer":
            continue
        if ended:
            calls = p.counter("model_calls")
            doing = f"stopped: {calls} model call(s)" + (f", {p.restarts} restart(s)" if p.restarts else "")
        elif not p.alive:
            doing = f"exited ({p.exited})" + (", restarting" if not p.lost else "")
        elif not p.status:
            doing = "starting"
        else:
            doing = describe(plan, p.status.get("doing"))
        rows.append(PeerRow(p.name, p.role, doing))
    return rows
