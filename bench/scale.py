"""How far it scales: more peer processes, bigger plans, and the fold over ~10,000 events.

1. peers: 4 .. 32 processes (`specswarm plan`, real libp2p, scripted model, a small plan):
   convergence time (start-up excluded), messages per accepted node, peak RSS per peer,
   anti-entropy traffic (announcements, sync requests and bytes), lost events (final event
   set minus each peer's log) and whether every peer reported the final digest.
2. plans: ~4 .. ~460 nodes (tree.max_depth x max_children), 9 peers; on libp2p up to
   --p2p-max-nodes, in memory (`local.run_local`) for all sizes.
3. the fold over ~10,000 events: bench/fold_bench.py.

Targets: 32 peers converge with no lost event; incremental fold of one event well under
1 ms; full fold of 10,000 events under 1 s.

    python bench/scale.py [--peers 4 8 16 32] [--plans 1x3 2x3 3x3 2x8 3x6 3x8] [--repeat 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bench_spec, machine, median, run_memory, run_plan, table  # noqa: E402


def _swarm(total: int) -> dict[str, int]:
    """Split ``total`` peers into roles: 1 observer, ~1/3 decomposers, ~1/3 scorers, the rest executors."""
    rest = total - 1
    dec = max(1, rest // 3)
    sc = max(1, rest // 3)
    ex = max(1, rest - dec - sc)
    return {"decomposers": dec, "scorers": sc, "executors": ex}


def _missing_kinds(runs: list) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in runs:
        for k, v in r.lost_kinds.items():
            out[k] = out.get(k, 0) + v
    return out


def _p2p_row(label: str, spec: dict, timeout: float, repeat: int, per_process: int = 1) -> dict:
    extra = ["--peers-per-process", str(per_process)] if per_process > 1 else []
    runs = [run_plan(spec, timeout=timeout, extra=extra) for _ in range(repeat)]
    good = [r for r in runs if r.code == 0]
    for r in runs:
        if r.code != 0:
            print(f"{label}: specswarm plan exited {r.code}:\n{r.stderr[-1500:]}", file=sys.stderr)
    r0 = good[0] if good else runs[0]
    nodes = int(r0.report.get("progress", {}).get("nodes", 0) or 0)
    final = r0.report.get("digest")
    agree = all({p.get("digest") for p in r.peers} == {r.report.get("digest")} for r in good)
    rss = [kib / 1024 for r in runs for kib in r.rss_kib.values()]
    n_peers = max(1, len(r0.peers))
    events = max(1, r0.events)
    return {
        "case": label,
        "peers": len(r0.peers),
        "nodes": nodes,
        "events": r0.events,
        "ok": f"{len(good)}/{len(runs)}",
        "startup s": median(r.startup for r in good),
        "converge s": median(r.converge for r in good),
        "msgs recv/node": median(r.transport_sum("received") / max(1, nodes) for r in good),
        "pub/node": median(r.transport_sum("published") / max(1, nodes) for r in good),
        "recv/peer/event": median(r.transport_sum("received") / n_peers / events for r in good),
        "sent/peer/event": median(r.transport_sum("published") / n_peers / events for r in good),
        "announces": median(r.counter_sum("announces") for r in good),
        "sync req/peer": median(r.counter_sum("sync_requests") / n_peers for r in good),
        "sync KiB/peer/event": median(r.counter_sum("sync_bytes") / 1024 / n_peers / events for r in good),
        "CPU s/peer": median(sum(r.cpu_s.values()) / n_peers for r in runs) if r0.cpu_s else None,
        "processes": len(r0.cpu_s) or None,
        "sync req": median(r.counter_sum("sync_requests") for r in good),
        "requests failed (timed out, no way)": " ".join(
            f"{r.transport_sum('requests_failed')}"
            f"({r.transport_sum('requests_timed_out')},{r.transport_sum('requests_unopened')})"
            for r in runs
        ),
        "sync KiB": median(r.counter_sum("sync_bytes") / 1024 for r in good),
        "sync events": median(r.counter_sum("synced_events") for r in good),
        "all KiB out": median(r.transport_sum("bytes_out") / 1024 for r in good),
        "RSS/peer MiB": median(rss) if rss else None,
        "RSS max MiB": max(rss) if rss else None,
        "missing at stop": sum(sum(r.lost.values()) for r in runs),
        "missing kinds": ",".join(f"{k}:{v}" for k, v in sorted(_missing_kinds(runs).items())) or "-",
        "digests agree": "yes" if agree and good and final else "NO",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", type=int, nargs="*", default=[4, 8, 16, 32])
    ap.add_argument("--peer-depth", type=int, default=2, help="plan depth for the peer sweep")
    ap.add_argument(
        "--plans",
        nargs="*",
        default=["1x3", "2x3", "3x3", "2x8", "3x6", "3x8"],
        help="DEPTHxMAX plan shapes (min_children 2; the scripted model gives MAX parts at the "
        "root and MAX-1 below it)",
    )
    ap.add_argument("--p2p-max-nodes", type=int, default=160, help="larger plans run in memory only")
    ap.add_argument("--plan-peers", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument(
        "--per-process", type=int, default=1, help="peers per process (specswarm plan --peers-per-process)"
    )
    ap.add_argument("--settle", type=float, default=0.3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--no-fold", action="store_true", help="skip the fold benchmark")
    ap.add_argument("--fold-args", default="", help="arguments for fold_bench.py")
    args = ap.parse_args(argv)
    print(machine())

    if args.peers:
        rows = []
        for total in args.peers:
            spec = bench_spec(
                depth=args.peer_depth,
                settle=args.settle,
                seconds=args.timeout,
                min_children=2,
                max_children=3,
                **_swarm(total),
            )
            rows.append(_p2p_row(f"{total} peers", spec, args.timeout, args.repeat, args.per_process))
        print(
            f"\n## peers (real libp2p, one process each; scripted model; depth {args.peer_depth}, "
            f"2-3 children; {args.repeat} run(s), medians)"
        )
        print(table(rows))
        big = [r for r in rows if r["peers"] >= 32]
        if big:
            ok = all(
                r["missing at stop"] == 0
                and r["digests agree"] == "yes"
                and r["ok"].split("/")[0] == r["ok"].split("/")[1]
                for r in big
            )
            print(f"target: 32 peers converge with no lost event: {'met' if ok else 'MISSED'}")
        print(
            "missing at stop = events of the union of all peers' logs that a peer's log lacks when the "
            "launcher stops the swarm (it stops once every peer reports the final digest and the same "
            "event set, or when its grace after the plan completed runs out)"
        )

    if args.plans:
        rows = []
        roles = _swarm(args.plan_peers)
        for shape in args.plans:
            depth, children = (int(x) for x in shape.split("x"))
            spec = bench_spec(
                depth=depth,
                min_children=2,
                max_children=children,
                settle=args.settle,
                seconds=args.timeout,
                **roles,
            )
            want = 1 + sum(children * (children - 1) ** (d - 1) for d in range(1, depth + 1))
            mem = [run_memory(spec, seed=i, timeout=args.timeout) for i in range(args.repeat)]
            row = {
                "shape": shape,
                "nodes": mem[0].nodes,
                "events": mem[0].events,
                "mem s": median(m.seconds for m in mem),
                "mem msgs recv/node": median(m.received / max(1, m.nodes) for m in mem),
                "mem sync req": median(m.requests for m in mem),
                "mem sync KiB": median(m.sync_bytes / 1024 for m in mem),
                "mem lost": sum(m.lost for m in mem),
            }
            if want <= args.p2p_max_nodes:
                p = _p2p_row(shape, spec, args.timeout, args.repeat)
                row.update(
                    {
                        "p2p converge s": p["converge s"],
                        "p2p msgs recv/node": p["msgs recv/node"],
                        "p2p sync req": p["sync req"],
                        "p2p sync KiB": p["sync KiB"],
                        "p2p RSS/peer MiB": p["RSS/peer MiB"],
                        "p2p missing": p["missing at stop"],
                        "p2p digests agree": p["digests agree"],
                    }
                )
            else:
                row["p2p converge s"] = "mem only"
            rows.append(row)
        print(
            f"\n## plan size ({args.plan_peers} peers: {roles}; scripted model; settle {args.settle}s; "
            f"libp2p only up to {args.p2p_max_nodes} nodes)"
        )
        print(table(rows))

    if not args.no_fold:
        print("\n## fold")
        import fold_bench

        fold_bench.main(args.fold_args.split() if args.fold_args else [])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
