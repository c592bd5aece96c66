"""A stopped peer's last status line carries its counters at the stop, and the launcher reads
it: a report of an interrupted run counts the work the run did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import trio

from specswarm.model.replay import ScriptedModel
from specswarm.protocol.identity import Identity
from specswarm.swarm.launcher.procs import PeerProc, supervise
from specswarm.testing.local import kill, start_peer
from tests.swarmkit import hooked_swarm, swarm_spec


def test_a_peer_stopped_right_after_publishing_reports_what_it_published() -> None:
    spec = swarm_spec(decomposers=1, scorers=1, executors=1, max_depth=1)
    seen: list[dict[str, Any]] = []

    async def hook(swarm, nursery, ident):  # type: ignore[no-untyped-def]
        node = await start_peer(
            swarm, nursery, "executor", spec, ScriptedModel, identity=ident(), on_status=seen.append
        )
        with trio.fail_after(30):
            while node.counters.published < 2:  # its join, then a claim or a result
                await trio.sleep(0.001)
        kill(swarm, node.peer_id)  # at once: the status loop has not had its turn yet
        await trio.sleep(0)
        return node

    _, _, node = trio.run(lambda: hooked_swarm(spec, 7, hook, converge=False))
    assert seen, "no status line at all"
    assert seen[-1]["counters"]["published"] == node.counters.published >= 2


# a stand-in peer process: one status line at start, another (the final one) when stopped
_PEER = """
import json, signal, sys, time
def line(n):
    sys.stdout.write(json.dumps({"peer": "p", "counters": {"model_calls": n}}) + "\\n")
    sys.stdout.flush()
def stop(*_):
    line(7)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
line(1)
time.sleep(60)
"""


def test_the_launcher_reads_the_status_line_a_peer_writes_while_stopping(tmp_path: Path) -> None:
    p = PeerProc(
        index=0,
        role="executor",
        identity=Identity(bytes(32)),
        port=0,
        strategy=None,
        events=tmp_path / "p.jsonl",
        log=tmp_path / "p.log",
    )

    async def main() -> None:
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-c", _PEER], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(supervise, p, proc)
            with trio.fail_after(30):
                while p.counter("model_calls") != 1:
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()  # the launcher is done with it

    trio.run(main)
    assert p.exited == 0
    assert p.counter("model_calls") == 7
