"""The protocol at 10 .. 1,000 peers: real nodes and roles on a simulated gossip mesh, virtual time.

Each peer is the real Node (fold, Ed25519 signing and verification, anti-entropy) with its real
role and the scripted model (instant, ``--model-seconds`` of virtual time per call); the network
is specswarm.transport.mesh (degree D, per-hop latency, loss; some executors join late, some
are killed and replaced). See specswarm/testing/sim.py. Reports, per N: virtual seconds to
convergence, events (joins and claims apart), gossip copies received per peer per event,
anti-entropy requests and bytes (and of those, the inventory: what finding the missing ids
cost), the share of live peers holding the final digest; and writes PNG plots
(pip install -e '.[bench]').

    python bench/simulate.py [--peers 10 30 100 300 1000] [--degree 6] [--loss 0.01] \\
        [--working 12] [--figures docs/figures] [--no-plots]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # this checkout's specswarm

from _common import REPO, bench_spec, machine, table  # noqa: E402

from specswarm.testing.sim import SimConfig, SimResult, run_simulation  # noqa: E402


def row(r: SimResult, wall: float) -> dict[str, object]:
    live = max(1, r.live)
    return {
        "peers": r.config.peers,
        "converged": "yes" if r.converged else "NO",
        "virtual s": round(r.seconds, 1),
        "events": r.events,
        "joins": r.kinds.get("join", 0),
        "claims": r.kinds.get("claim", 0),
        "nodes": r.nodes,
        "msgs in/peer/event": round(r.per_peer_per_event, 2),
        "dup share": round(r.duplicates / max(1, r.gossip_copies_in), 2),
        "announces/peer": round(r.announces / live, 1),
        "sync req/peer": round(r.sync_requests / live, 1),
        "sync KiB/peer": round(r.sync_bytes / 1024 / live, 1),
        "inventory KiB/peer": round(r.sync_inventory_bytes / 1024 / live, 2),
        "final digest share": round(r.share_final, 3),
        "model calls": r.model_calls,
        "real s": round(wall, 1),
    }


def plot(rows: list[dict[str, object]], out: Path) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): no plots", file=sys.stderr)
        return []
    out.mkdir(parents=True, exist_ok=True)
    n = [int(str(r["peers"])) for r in rows]
    panels = [
        ("virtual s", "seconds to convergence (virtual)", "sim-convergence.png"),
        ("msgs in/peer/event", "gossip copies received per peer per event", "sim-messages.png"),
        ("sync KiB/peer", "anti-entropy KiB per peer", "sim-antientropy.png"),
        ("inventory KiB/peer", "anti-entropy inventory KiB per peer", "sim-inventory.png"),
        ("claims", "claim events per run", "sim-claims.png"),
        ("final digest share", "share of live peers holding the final digest", "sim-final-share.png"),
    ]
    paths = []
    for key, title, name in panels:
        fig, ax = plt.subplots(figsize=(5, 3.2), dpi=100)
        ax.plot(n, [float(str(r[key])) for r in rows], marker="o")
        ax.set_xscale("log")
        ax.set_xlabel("peers")
        ax.set_title(title, fontsize=10)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        path = out / name
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", type=int, nargs="*", default=[10, 30, 100, 300, 1000])
    ap.add_argument("--degree", type=int, default=6)
    ap.add_argument("--latency", type=float, default=0.02, help="seconds per hop")
    ap.add_argument("--loss", type=float, default=0.01, help="fraction of hops lost")
    ap.add_argument("--late", type=float, default=0.1, help="fraction of executors joining late")
    ap.add_argument("--churn", type=float, default=0.05, help="fraction of executors replaced mid-run")
    ap.add_argument(
        "--working", type=int, default=12, help="decomposers+scorers (0: a third each of all peers)"
    )
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--model-seconds", type=float, default=2.0)
    ap.add_argument("--announce", type=float, default=1.0, help="base announcement interval (s)")
    ap.add_argument("--timeout", type=float, default=600.0, help="virtual seconds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--figures", type=Path, default=REPO / "docs" / "figures")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args(argv)
    print(machine())
    base = bench_spec(depth=args.depth)
    rows = []
    for n in args.peers:
        cfg = SimConfig(
            peers=n,
            working=args.working,
            degree=args.degree,
            latency=args.latency,
            loss=args.loss,
            late=args.late,
            churn=args.churn,
            depth=args.depth,
            model_seconds=args.model_seconds,
            announce_interval=args.announce,
            timeout=args.timeout,
            seed=args.seed,
        )
        t0 = time.monotonic()
        result = run_simulation(base, replace(cfg))
        rows.append(row(result, time.monotonic() - t0))
        print(table(rows[-1:]), flush=True)
    print(
        f"\n## simulated mesh: degree {args.degree}, {args.latency * 1000:g} ms/hop, loss {args.loss:g}, "
        f"late {args.late:g}, churn {args.churn:g}, working {args.working}, depth {args.depth}, "
        f"model {args.model_seconds:g} s/call (virtual)"
    )
    print(table(rows))
    if not args.no_plots:
        for p in plot(rows, args.figures):
            print(f"wrote {p.relative_to(REPO) if p.is_relative_to(REPO) else p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
