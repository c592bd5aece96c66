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
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

LINE = re.compile(
    r"^(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \S+ INFO model (?P<task>\S+) on (?P<key>\S+): "
    r"waited (?P<wait>[\d.]+) s, generated (?P<gen>[\d.]+) s"
)


def read_tasks(run_dir: Path) -> list[tuple[str, str, float, float, float]]:
    """(peer, task, start, slot taken, end) of every model task the run's peer logs show, in
    seconds of the epoch."""
    tasks = []
    for log in sorted(run_dir.glob("*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            m = LINE.match(line)
            if m is None:
                continue
            end = datetime.strptime(m["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            gen, wait = float(m["gen"]), float(m["wait"])
            tasks.append((log.stem, m["task"], end - gen - wait, end - gen, end))
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    args = ap.parse_args(argv)
    tasks = read_tasks(args.run_dir)
    if not tasks:
        print(f"no model task lines in {args.run_dir}/*.log (run with SPECSWARM_LOG=INFO)", file=sys.stderr)
        return 1
    by_role: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for peer, _task, start, slot, end in tasks:
        row = by_role[peer.rsplit("-", 1)[0]]
        row[0] += 1
        row[1] += slot - start
        row[2] += end - slot
    print(f"{'role':<12} {'tasks':>6} {'waiting s':>10} {'generating s':>13}")
    for role, (n, wait, gen) in sorted(by_role.items()):
        print(f"{role:<12} {int(n):>6} {wait:>10.0f} {gen:>13.0f}")
    first, last = min(t[2] for t in tasks), max(t[4] for t in tasks)
    busy = occupancy([(t[3], t[4]) for t in tasks])
    print(f"\nspan {last - first:.0f} s from the first model task to the last; slots generating:")
    for k in sorted(busy):
        print(f"  {k} at once: {busy[k]:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
