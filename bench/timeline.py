"""Where a real-model run's time went: the machine's generation slots, busy and idle.

    SPECSWARM_LOG=INFO specswarm plan SPEC ...        # the peers log each model task
    python bench/timeline.py RUN_DIR [--slots 2]

``RUN_DIR`` is the launcher's work directory (``specswarm-run-*`` in the temp directory, or a
quality bench's ``OUT/<goal>/swarm-work``): one ``<role>-<i>.log`` per peer. Each model task
logs one INFO line when it ends (``specswarm/swarm/roles/base.py``, ``ModelRole.think``)::

    2026-12-02 16:46:31,123 specswarm.swarm.roles INFO model propose on <node>: waited 3.1 s, generated 21.4 s

Prints, per role, the tasks, the seconds spent waiting for a slot and generating; then, over
the span from the first task's start to the last one's end, how many seconds 0, 1, ... slots
were generating. Seconds with a slot idle while another peer waited for one cannot happen
(a free slot is taken at once); idle seconds are seconds when no peer had model work: the
swarm was waiting for votes, ballots, a node's turn or the network.

Then the model's own path through the run, when ``RUN_DIR/events.jsonl`` is there (the
launcher collects it): the phases the swarm's rules run one after another (each tree level's
proposals, top-down; the leaves' results, revisions included; each level's summaries,
bottom-up), each as long as its busiest peer's generating seconds in it, summed. That is what
the run would take with this plan, these peers and coordination that costs nothing; a summary
written while the leaves of another branch are still being written overlaps a phase before it,
so the sum can exceed the shortest possible run by up to the summaries' share.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, for node_depths

LINE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \S+ INFO model (?P<task>\S+) on (?P<key>\S+): "
    r"waited (?P<wait>[\d.]+) s, generated (?P<gen>[\d.]+) s"
)


class Task(NamedTuple):
    """One model task a peer logged; times in seconds of the epoch."""

    peer: str
    task: str
    key: str
    """What it was about: a node id, ``root`` or ``summary/<node>``."""
    start: float
    slot: float
    """When it took a generation slot."""
    end: float


def read_tasks(run_dir: Path) -> list[Task]:
    """Every model task the run's peer logs show."""
    tasks = []
    for log in sorted(run_dir.glob("*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            m = LINE.match(line)
            if m is None:
                continue
            end = datetime.strptime(m["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            gen, wait = float(m["gen"]), float(m["wait"])
            tasks.append(Task(log.stem, m["task"], m["key"], end - gen - wait, end - gen, end))
    return tasks


def occupancy(intervals: list[tuple[float, float]]) -> dict[int, float]:
    """Seconds during which exactly k of the intervals overlap, for each k seen."""
    points = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    seconds: dict[int, float] = defaultdict(float)
    level, last = 0, points[0][0] if points else 0.0
    for at, step in points:
        seconds[level] += at - last
        level, last = level + step, at
    return dict(seconds)


def model_path(tasks: list[Task], depths: dict[str, int]) -> list[tuple[str, float]]:
    """(phase, seconds) of the phases the model tasks fall in, in the order the swarm runs them
    (see the module docstring): per phase, the most seconds one peer spent generating in it."""
    phases: dict[tuple[int, int], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for t in tasks:
        if t.key.startswith("summary/"):
            order = (2, -depths.get(t.key.removeprefix("summary/"), 0))
        elif t.task == "propose":
            order = (0, depths.get(t.key, 0))
        else:
            order = (1, 0)
        phases[order][t.peer] += t.end - t.slot
    names = {0: "proposals at depth {}", 1: "leaf results", 2: "summaries at depth {}"}
    return [
        (names[kind].format(abs(level)), max(per_peer.values()))
        for (kind, level), per_peer in sorted(phases.items())
    ]


def node_depths(run_dir: Path) -> dict[str, int] | None:
    """node id -> depth, from the run's collected event log; None without one."""
    log = run_dir / "events.jsonl"
    if not log.exists():
        return None
    from specswarm.plan import fold
    from specswarm.protocol.events import read_event_log

    plan = fold(read_event_log(log).events)
    return {n.id: n.depth for n in plan.nodes.values()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    args = ap.parse_args(argv)
    tasks = read_tasks(args.run_dir)
    if not tasks:
        print(f"no model task lines in {args.run_dir}/*.log (run with SPECSWARM_LOG=INFO)", file=sys.stderr)
        return 1
    by_role: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for t in tasks:
        row = by_role[t.peer.rsplit("-", 1)[0]]
        row[0] += 1
        row[1] += t.slot - t.start
        row[2] += t.end - t.slot
    print(f"{'role':<12} {'tasks':>6} {'waiting s':>10} {'generating s':>13}")
    for role, (n, wait, gen) in sorted(by_role.items()):
        print(f"{role:<12} {int(n):>6} {wait:>10.0f} {gen:>13.0f}")
    first, last = min(t.start for t in tasks), max(t.end for t in tasks)
    busy = occupancy([(t.slot, t.end) for t in tasks])
    print(f"\nspan {last - first:.0f} s from the first model task to the last; slots generating:")
    for k in sorted(busy):
        print(f"  {k} at once: {busy[k]:.0f} s")
    depths = node_depths(args.run_dir)
    if depths is not None:
        path = model_path(tasks, depths)
        print("\nthe model's path, phase after phase (the busiest peer's generating seconds in each):")
        for phase, seconds in path:
            print(f"  {phase:<24} {seconds:7.1f} s")
        print(f"  {'in all':<24} {sum(s for _, s in path):7.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
