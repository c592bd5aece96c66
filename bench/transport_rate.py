"""Measure the libp2p transport on loopback: connect time, latency, lossless publish rate.

    python bench/transport_rate.py [--peers 3] [--count 1000] [--rates 50,100,200,0]

Each peer is a separate process (this script in ``worker`` mode). Peer 0
publishes; the others count what arrives. For every publish configuration it
reports the time to publish ``count`` messages, the fraction each receiver got,
and gossip latency (send -> deliver, same machine clock). ``rate 0`` means the
transport's pacing switched off (no token bucket, no queue watermark): the
library's own behaviour under a burst.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import trio


def emit(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def worker(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    from specswarm.transport.p2p import P2PConfig, open_libp2p_transport

    import_s = time.perf_counter() - t0
    drops = _count_library_drops()
    if args.rate > 0:
        config = P2PConfig(publish_rate=args.rate, publish_burst=args.burst)
    else:
        config = P2PConfig(publish_rate=1e9, publish_burst=10**9, queue_high_water=10**9)
    async with open_libp2p_transport(
        bytes([args.index + 1]) * 32, bootstrap=args.bootstrap, topic="bench", config=config
    ) as t:
        started = trio.current_time()
        latencies: list[float] = []

        async def receive() -> None:
            async for _sender, data in t.incoming():
                sent = float(data.split(b" ", 1)[0])
                latencies.append(time.time() - sent)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(receive)
            emit(event="ready", addrs=t.addrs(), import_s=import_s)
            await t.wait_for_peers(args.peers - 1, 60)
            emit(event="connected", connect_s=trio.current_time() - started)
            await t.wait_for_mesh(60, n=args.peers - 1)
            emit(event="mesh", mesh_s=trio.current_time() - started)
            stdin = trio.wrap_file(sys.stdin)
            async for line in stdin:
                cmd = json.loads(line)
                if cmd["cmd"] == "publish":
                    begin = trio.current_time()
                    pad = b"x" * cmd["size"]
                    for _ in range(cmd["count"]):
                        await t.publish(f"{time.time():.6f} ".encode() + pad)
                        if cmd.get("interval"):
                            await trio.sleep(cmd["interval"])
                    # publish() only queues: wait for the pacer to hand everything over.
                    while t.stats.published < cmd["count"] + cmd.get("before", 0):
                        await trio.sleep(0.005)
                    emit(event="published", seconds=trio.current_time() - begin)
                elif cmd["cmd"] == "report":
                    emit(event="report", received=len(latencies), latencies=latencies, drops=dict(drops))
                elif cmd["cmd"] == "reset":
                    latencies.clear()
                elif cmd["cmd"] == "quit":
                    break
            nursery.cancel_scope.cancel()


def _count_library_drops() -> dict[str, int]:
    """Count py-libp2p's silent drops by watching its (otherwise muted) log records."""
    import logging

    drops = {"subscription_full": 0, "outbound_queue_full": 0}

    class Counter(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            text = record.getMessage()
            if "fail to deliver message to subscription" in text:
                drops["subscription_full"] += 1
            elif "Dropping outbound RPC" in text and "publish=0" not in text:
                drops["outbound_queue_full"] += 1

    for name in ("libp2p.pubsub.pubsub", "libp2p.pubsub.rpc_queue"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(Counter())
    return drops


class Proc:
    def __init__(self, argv: list[str]) -> None:
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def expect(self, event: str) -> dict[str, object]:
        assert self.p.stdout is not None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("worker exited")
            data: dict[str, object] = json.loads(line)
            if data["event"] == event:
                return data

    def send(self, **cmd: object) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()


def run_config(args: argparse.Namespace, rate: float) -> None:
    base = [sys.executable, __file__, "worker", "--peers", str(args.peers)]
    first = Proc([*base, "--index", "0", "--rate", str(rate), "--burst", str(args.burst)])
    ready = first.expect("ready")
    addr = ready["addrs"][0]  # type: ignore[index]
    others = [
        Proc([*base, "--index", str(i), "--bootstrap", addr, "--rate", str(rate)])
        for i in range(1, args.peers)
    ]
    imports = [ready["import_s"]] + [p.expect("ready")["import_s"] for p in others]
    connect = [p.expect("connected")["connect_s"] for p in others]
    mesh = [p.expect("mesh")["mesh_s"] for p in [first, *others]]
    print(
        f"\n== {args.peers} peers, publish rate {'unpaced' if rate <= 0 else rate} msg/s =="
        f"\nimport libp2p+specswarm: {max(imports):.2f} s (max of {len(imports)} parallel)"  # type: ignore[type-var]
        f"\nconnect after start: max {max(connect):.3f} s; full mesh after start: max {max(mesh):.2f} s"  # type: ignore[type-var]
    )
    # Latency at a gentle rate.
    first.send(cmd="publish", count=50, size=100, interval=0.1)
    first.expect("published")
    time.sleep(1)
    lat: list[float] = []
    for p in others:
        p.send(cmd="report")
        lat += p.expect("report")["latencies"]  # type: ignore[arg-type]
        p.send(cmd="reset")
    lat_ms = sorted(x * 1000 for x in lat)
    print(
        f"latency at 10 msg/s: median {statistics.median(lat_ms):.1f} ms, "
        f"p95 {lat_ms[int(len(lat_ms) * 0.95)]:.1f} ms, max {lat_ms[-1]:.1f} ms ({len(lat_ms)} deliveries)"
    )
    # Burst: publish as fast as publish() lets us.
    first.send(cmd="publish", count=args.count, size=args.size, before=50)
    start = time.monotonic()
    seconds = float(first.expect("published")["seconds"])  # type: ignore[arg-type]
    # Wait until every receiver has everything or nothing arrives for --settle seconds.
    counts: list[object] = []
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < args.settle:
        time.sleep(0.5)
        now = []
        for p in others:
            p.send(cmd="report")
            now.append(p.expect("report")["received"])
        if now != counts:
            counts, quiet_since = now, time.monotonic()
        if all(c == args.count for c in now):
            break
    drain_s = time.monotonic() - start
    got = []
    lat = []
    drops = []
    for p in [first, *others]:
        p.send(cmd="report")
        report = p.expect("report")
        if p is not first:
            got.append(report["received"])
            lat += report["latencies"]  # type: ignore[arg-type]
        drops.append(report["drops"])
    lat_ms = sorted(x * 1000 for x in lat) or [0.0]
    print(
        f"burst of {args.count} x {args.size} B: handed to libp2p in {seconds:.2f} s "
        f"({args.count / seconds:.0f} msg/s); delivered {got} of {args.count} "
        f"after {drain_s:.1f} s ({args.count / drain_s:.0f} msg/s end to end); "
        f"latency median {statistics.median(lat_ms):.0f} ms, max {lat_ms[-1]:.0f} ms"
        f"\nlibp2p silent drops per peer (publisher first): {drops}"
    )
    for p in [first, *others]:
        p.send(cmd="quit")
    for p in [first, *others]:
        p.p.wait(timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", nargs="?", default="run", choices=["run", "worker"])
    parser.add_argument("--peers", type=int, default=3)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--rates", default="50,100,200,0")
    parser.add_argument("--burst", type=int, default=10)
    parser.add_argument("--settle", type=float, default=3.0)
    parser.add_argument("--index", type=int, default=0)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--bootstrap", action="append", default=[])
    args = parser.parse_args()
    if args.mode == "worker":
        trio.run(worker, args)
        return
    for rate in (float(r) for r in args.rates.split(",")):
        run_config(args, rate)


if __name__ == "__main__":
    main()
