"""Coordination overhead: the same spec, zero-latency scripted model, (a) in one process on the
in-memory transport (``local.run_local``) vs (b) one OS process per peer on real libp2p
(``specswarm plan --report``).

(b)'s convergence time excludes process start-up: it runs from the moment every declared
peer's join is in some peer's log to the moment every peer's log holds the final event set
(see bench/_common.py). Target: (b) <= 2 x (a) + PER_LEVEL seconds per tree level.

    python bench/coordination.py [--depths 1 2 3] [--repeat 3] [--per-level 1.0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_spec, machine, median, run_memory, run_plan, table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--repeat", type=int, default=3, help="runs per depth and side (medians reported)")
    ap.add_argument("--per-level", type=float, default=1.0, help="allowed seconds per tree level")
    ap.add_argument("--decomposers", type=int, default=3)
    ap.add_argument("--scorers", type=int, default=3)
    ap.add_argument("--executors", type=int, default=2)
    ap.add_argument("--settle", type=float, default=0.3)
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args(argv)
    print(machine())
    print(
        f"swarm: {args.decomposers} decomposers, {args.scorers} scorers, {args.executors} executors, "
        f"1 observer; scripted model; settle {args.settle}s; min/max children 2/3; "
        f"{args.repeat} run(s) per cell, medians"
    )
    rows = []
    ok_all = True
    for depth in args.depths:
        spec = bench_spec(
            depth=depth,
            decomposers=args.decomposers,
            scorers=args.scorers,
            executors=args.executors,
            settle=args.settle,
            seconds=args.timeout,
        )
        mem, p2p = [], []
        for i in range(args.repeat):  # alternate the two sides to spread machine noise
            mem.append(run_memory(spec, seed=i, timeout=args.timeout))
            p2p.append(run_plan(spec, timeout=args.timeout))
            if p2p[-1].code != 0:
                print(
                    f"depth {depth}: specswarm plan exited {p2p[-1].code}:\n{p2p[-1].stderr}", file=sys.stderr
                )
        good = [r for r in p2p if r.code == 0 and r.converge is not None]
        a = median(r.seconds for r in mem)
        b = median(r.converge for r in good) if good else float("nan")
        limit = 2 * a + args.per_level * depth
        met = bool(good) and b <= limit
        ok_all = ok_all and met
        rows.append(
            {
                "depth": depth,
                "nodes": mem[0].nodes,
                "events a/b": f"{median(r.events for r in mem):.0f}/{median(r.events for r in good):.0f}",
                "(a) mem s": a,
                "(b) p2p s": b,
                "b/a": b / a if a else None,
                "limit s": limit,
                "target": "met" if met else "MISSED",
                "p2p startup s": median(r.startup for r in good),
                "p2p wall s": median(r.wall for r in good),
                "msgs pub a/b": f"{median(r.published for r in mem):.0f}/"
                f"{median(r.transport_sum('published') for r in good):.0f}",
                "msgs recv a/b": f"{median(r.received for r in mem):.0f}/"
                f"{median(r.transport_sum('received') for r in good):.0f}",
                "bytes out a/b": f"{median(r.bytes_out for r in mem):.0f}/"
                f"{median(r.transport_sum('bytes_out') for r in good):.0f}",
                "bytes in a/b": f"{median(r.bytes_in for r in mem):.0f}/"
                f"{median(r.transport_sum('bytes_in') for r in good):.0f}",
                "missing at stop": sum(sum(r.lost.values()) for r in good),
                "p2p ok": f"{len(good)}/{len(p2p)}",
            }
        )
    print(table(rows))
    print(
        "bytes are payload bytes counted by the transports (gossip published + request/response), "
        "summed over peers; libp2p framing, encryption and mesh re-forwards are not included"
    )
    print(f"target (b) <= 2*(a) + {args.per_level:g} s/level: {'met' if ok_all else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
