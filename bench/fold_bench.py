"""The fold over ~10,000 signed events (synth.py), and the per-event costs around it.

* full fold: ``FoldState(events).plan()`` in a shuffled order (and the digest);
* incremental: a state holding all but K events; then each of the K: ``apply`` alone, and
  ``apply`` + ``plan()`` (what a peer's role loop pays per new event), + ``.digest``;
* ``check_event`` (JSON + schema + signature) of one event's bytes;
* a node's anti-entropy answers: ``inv`` and a 200-id ``get``.

Targets: incremental fold of one event well under 1 ms; full fold of 10,000 events under 1 s.

    python bench/fold_bench.py [--fanout 17] [--depth 3] [--tail 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, median, table  # noqa: E402


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fanout", type=int, default=17)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--tail", type=int, default=200, help="events applied one by one")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    import trio

    from specswarm.plan.fold import FoldState
    from specswarm.protocol.events import check_event
    from specswarm.protocol.identity import Identity
    from specswarm.swarm.node import Node
    from specswarm.testing.synth import complete_swarm

    print(machine())
    t = time.perf_counter()
    sw = complete_swarm(seed=1, fanout=args.fanout, depth=args.depth)
    events = list(sw.events)
    gen_s = time.perf_counter() - t
    rng = random.Random(0)
    rng.shuffle(events)
    n = len(events)
    ref = FoldState(events).plan()
    print(
        f"events: {n} (synth complete_swarm fanout {args.fanout}, depth {args.depth}: "
        f"{len(ref.nodes)} plan nodes, complete={ref.complete}); generated+signed in {gen_s:.1f} s"
    )

    full, full_digest = [], []
    for _ in range(args.repeat):
        order = events[:]
        rng.shuffle(order)
        t0 = time.perf_counter()
        st = FoldState(order)
        plan = st.plan()
        t1 = time.perf_counter()
        _ = plan.digest
        t2 = time.perf_counter()
        assert plan.digest == ref.digest
        full.append(t1 - t0)
        full_digest.append(t2 - t0)

    apply_t, plan_t, digest_t = [], [], []
    k = min(args.tail, n // 2)
    for rep in range(max(1, args.repeat // 2)):
        order = events[:]
        random.Random(rep).shuffle(order)
        st = FoldState(order[:-k])
        _ = st.plan().digest
        for e in order[-k:]:
            t0 = time.perf_counter()
            st.apply(e)
            t1 = time.perf_counter()
            p = st.plan()
            t2 = time.perf_counter()
            _ = p.digest
            t3 = time.perf_counter()
            apply_t.append(t1 - t0)
            plan_t.append(t2 - t0)
            digest_t.append(t3 - t0)
        assert st.plan().digest == ref.digest

    raws = [e.to_bytes() for e in events[:500]]
    chk = []
    for raw in raws:
        t0 = time.perf_counter()
        ev, reason = check_event(raw, sw.run)
        chk.append(time.perf_counter() - t0)
        assert ev is not None, reason

    node = Node(None, Identity(bytes(32)), None, role_name="observer")  # type: ignore[arg-type]
    inv_t, get_t = [], []

    async def serve() -> None:
        node.adopt_run(sw.run_event)
        for e in events:
            node.add(e)
        ids = [e.id[:16] for e in events]
        for i in range(args.repeat):
            t0 = time.perf_counter()
            await node.handle_request("x", b'{"t":"inv"}')
            inv_t.append(time.perf_counter() - t0)
            want = random.Random(i).sample(ids, min(200, len(ids)))
            t0 = time.perf_counter()
            resp = await node.handle_request("x", json.dumps({"t": "get", "ids": want}).encode())
            get_t.append(time.perf_counter() - t0)
            assert len(json.loads(resp)["events"]) == len(want)

    trio.run(serve)

    ms = 1e3
    rows = [
        {
            "measure": f"full fold: FoldState({n} events).plan()",
            "median ms": median(full) * ms,
            "p95 ms": _pct(full, 0.95) * ms,
            "target": "< 1000 ms",
            "met": "met" if median(full) < 1 else "MISSED",
        },
        {
            "measure": "full fold + digest",
            "median ms": median(full_digest) * ms,
            "p95 ms": _pct(full_digest, 0.95) * ms,
        },
        {
            "measure": "incremental: apply(one event)",
            "median ms": median(apply_t) * ms,
            "p95 ms": _pct(apply_t, 0.95) * ms,
        },
        {
            "measure": "incremental: apply + plan()",
            "median ms": median(plan_t) * ms,
            "p95 ms": _pct(plan_t, 0.95) * ms,
            "target": "well under 1 ms",
            "met": "met" if median(plan_t) < 1e-3 else "MISSED",
        },
        {
            "measure": "incremental: apply + plan() + digest",
            "median ms": median(digest_t) * ms,
            "p95 ms": _pct(digest_t, 0.95) * ms,
        },
        {
            "measure": "check_event(bytes) (JSON+schema+sig)",
            "median ms": median(chk) * ms,
            "p95 ms": _pct(chk, 0.95) * ms,
        },
        {
            "measure": f"node: answer 'inv' ({n} ids)",
            "median ms": median(inv_t) * ms,
            "p95 ms": _pct(inv_t, 0.95) * ms,
        },
        {
            "measure": "node: answer 'get' (200 ids)",
            "median ms": median(get_t) * ms,
            "p95 ms": _pct(get_t, 0.95) * ms,
        },
    ]
    print(table(rows, ["measure", "median ms", "p95 ms", "target", "met"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
