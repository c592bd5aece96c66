"""``specswarm observe`` (a human-run observer): the plan as it grows, then the plan rendered.

On a terminal (stderr a TTY) the launcher's live view (:mod:`specswarm.render.live`), redrawn
in place; elsewhere a snapshot of the tree (:func:`~specswarm.render.tree.tree_text`) on each
change, as before. An observer reads only the events, not the peers' status lines: the
model's speed is unknown to it, the estimate of the time left comes from the pace of the
model's work it has seen (proposals, votes and results since it started), and of what each
peer does now it can only tell which leaf an executor holds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rich.console import Console
from rich.live import Live

from specswarm.plan import Plan
from specswarm.swarm.node import Node


def model_work(plan: Plan) -> int:
    """The model calls the plan shows were made: one per proposal, vote and result."""
    return sum(len(n.proposals) + sum(len(p.votes) for p in n.proposals) for n in plan.walk()) + sum(
        1 for n in plan.leaves() if n.result is not None
    )


async def observe_until_complete(node: Node, fmt: str, out: Path | None) -> None:
    """Show the plan until it is complete, then write it as ``fmt`` to ``out`` (or stdout);
    should ``out`` fail then, to stdout, and raise the OutputError that says so."""
    from specswarm.render import render_plan, write_output
    from specswarm.swarm.outputs import OutputError, keep

    if sys.stderr.isatty():
        plan = await _live(node)
    else:
        plan = await _snapshots(node)
    text = render_plan(plan, fmt)
    _, note = keep(lambda place: write_output(text, place), [out, None] if out else [None], "the plan")
    if note is not None:
        raise OutputError(note)
    if out:
        print(f"wrote {out}", file=sys.stderr)


async def _snapshots(node: Node) -> Plan:
    from specswarm.render.tree import tree_text

    last = None
    while True:
        plan = node.plan()
        if plan.digest != last:
            last = plan.digest
            print(tree_text(plan), file=sys.stderr, flush=True)
        if plan.complete:
            return plan
        await node.wait_changed(2.0)


async def _live(node: Node) -> Plan:
    from specswarm.render.live import LiveStats, live_view, seen_doing
    from specswarm.swarm.launcher.estimate import seconds_left

    started = time.monotonic()
    first = model_work(node.plan())
    console = Console(file=sys.stderr, highlight=False)
    with Live(
        console=console, auto_refresh=False, redirect_stderr=False, vertical_overflow="ellipsis"
    ) as view:
        while True:
            plan = node.plan()
            elapsed = time.monotonic() - started
            seen = model_work(plan) - first
            left = None
            if plan.spec is not None and seen > 0:
                left = seconds_left(plan, plan.spec, elapsed, seen, 0.0)
            stats = LiveStats(elapsed=elapsed, left=left, model_calls=model_work(plan))
            view.update(live_view(plan, stats, seen_doing(plan)), refresh=True)
            if plan.complete:
                return plan
            await node.wait_changed(1.0)
