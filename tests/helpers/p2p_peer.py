"""One libp2p transport in its own process, driven by JSON lines (for the real-network tests).

Run as ``python tests/helpers/p2p_peer.py --seed HEX [--listen MA] [--bootstrap MA]...
[--mdns] [--topic T] [--reject PREFIX]``. It prints, one JSON object per line:

- ``{"event": "ready", "id": ..., "addrs": [...]}`` once listening;
- ``{"event": "msg", "from": ..., "data": ...}`` for each gossip message;
- ``{"event": "done", "cmd": ..., ...}`` or ``{"event": "error", "cmd": ..., "error": ...}``
  for each command read from stdin: ``publish`` (data, count), ``request`` (peer, data),
  ``wait_peers`` (n, timeout), ``wait_mesh`` (n, timeout), ``stats``, ``peers``.

Its request handler answers ``echo:<own id>:<request>``; the validator (with
``--reject``) rejects data starting with that prefix.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys

import trio

from specswarm.errors import TransportError
from specswarm.transport._config import P2PConfig
from specswarm.transport.p2p import open_libp2p_transport


def emit(**fields: object) -> None:
    """Print one event line."""
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def serve(args: argparse.Namespace) -> None:
    """Run the transport until stdin closes or a signal arrives."""
    async with open_libp2p_transport(
        bytes.fromhex(args.seed),
        listen=args.listen,
        bootstrap=args.bootstrap,
        mdns=args.mdns,
        topic=args.topic,
        config=P2PConfig(exchange_interval=args.exchange_interval),
    ) as t:

        async def echo(sender: str, data: bytes) -> bytes:
            return f"echo:{t.local_id}:".encode() + data

        t.set_request_handler(echo)
        if args.reject:
            prefix = args.reject.encode()
            t.set_validator(lambda sender, data: not data.startswith(prefix))

        async def forward() -> None:
            async for sender, data in t.incoming():
                emit(event="msg", **{"from": sender}, data=data.decode())

        async def command(cmd: dict[str, object]) -> None:
            name = cmd["cmd"]
            try:
                if name == "publish":
                    for i in range(int(cmd.get("count", 1))):  # type: ignore[call-overload]
                        data = str(cmd["data"]).replace("{i}", str(i))
                        await t.publish(data.encode())
                    emit(event="done", cmd=name)
                elif name == "request":
                    reply = await t.request(str(cmd["peer"]), str(cmd["data"]).encode(), 10)
                    emit(event="done", cmd=name, reply=reply.decode())
                elif name == "wait_peers":
                    await t.wait_for_peers(int(cmd["n"]), float(cmd["timeout"]))  # type: ignore[call-overload,arg-type]
                    emit(event="done", cmd=name, peers=t.peers())
                elif name == "wait_mesh":
                    await t.wait_for_mesh(float(cmd["timeout"]), int(cmd.get("n", 1)))  # type: ignore[call-overload,arg-type]
                    emit(event="done", cmd=name, mesh=t.mesh_peers())
                elif name == "stats":
                    emit(event="done", cmd=name, stats=t.stats.to_json())
                elif name == "peers":
                    emit(event="done", cmd=name, peers=t.peers())
                else:
                    emit(event="error", cmd=name, error="unknown command")
            except TransportError as exc:
                emit(event="error", cmd=name, error=str(exc))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(forward)
            emit(event="ready", id=t.local_id, addrs=t.addrs())
            # A cancellable stdin (trio.wrap_file's reader thread would ignore signals).
            stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
            buffer = b""
            async for chunk in stdin:
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        nursery.start_soon(command, json.loads(line))
            nursery.cancel_scope.cancel()


async def main(args: argparse.Namespace) -> None:
    """Serve, and exit quietly on SIGINT/SIGTERM."""
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()

            nursery.start_soon(stop_on_signal)
            await serve(args)
            nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", required=True)
    parser.add_argument("--listen", default="/ip4/127.0.0.1/tcp/0")
    parser.add_argument("--bootstrap", action="append", default=[])
    parser.add_argument("--mdns", action="store_true")
    parser.add_argument("--topic", default="specswarm-test")
    parser.add_argument("--reject", default="")
    parser.add_argument("--exchange-interval", type=float, default=P2PConfig.exchange_interval)
    trio.run(main, parser.parse_args())
