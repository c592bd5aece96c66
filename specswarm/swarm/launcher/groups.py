"""Several seats in one process (``specswarm plan --peers-per-process N``).

The roster is cut, in launch order, into groups of at most N seats; each group runs as one
``specswarm peer-group GROUP.json`` process (:mod:`specswarm.swarm.group`), whose peers keep
their own keys, ports, event logs and status lines. The status lines of the group share its
stdout and name their peer, so each goes to its seat. The group's stderr goes to its first
seat's log (the others' logs say where to look). A group whose process dies is restarted
whole, as :func:`~specswarm.swarm.launcher.heal.keep` restarts one peer: same keys and logs,
each peer preloading its own log, and the same ports but one that was taken meanwhile, unless a
seat of it may not be restarted (the observer, or restarts used up); then all its seats are lost.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import trio

from specswarm.swarm.launcher.forked import PeerProcess, open_peer
from specswarm.swarm.launcher.heal import Seats
from specswarm.swarm.launcher.procs import (
    PeerProc,
    PeerStatus,
    StatusLines,
    begin_log,
    free_port,
    last_words,
    port_taken,
    stop_process,
    take_status,
    write_key_file,
    write_pid,
)
from specswarm.swarm.peer import DETERMINISTIC_EXIT


def groups_of(peers: Sequence[PeerProc], per_process: int) -> list[list[PeerProc]]:
    """``peers`` in launch order, cut into groups of at most ``per_process``."""
    if per_process < 1:
        raise ValueError(f"per_process must be at least 1, got {per_process}")
    return [list(peers[i : i + per_process]) for i in range(0, len(peers), per_process)]


def peer_entry(
    p: PeerProc, boot: list[str], run_file: Path, admission: str | None, preload_file: Path | None
) -> dict[str, object]:
    """``p``'s entry of a group file (the options ``peer_command`` would give it)."""
    preload = [str(preload_file)] if preload_file else []
    if p.restarts > 0 and p.events.exists():
        preload.append(str(p.events))
    return {
        "role": p.role,
        "run_file": str(run_file),
        "key": str(write_key_file(p)),
        "listen": p.listen.multiaddr(p.port),
        "events": str(p.events),
        "admission": admission,
        "join": [*boot, *p.bootstrap],
        "mdns": p.mdns,
        "strategy": p.strategy,
        "preload": preload,
        "json_status": True,
        "cache": str(p.cache) if p.cache is not None else None,
        "model_url": p.model_url,
    }


def group_command(group: Sequence[PeerProc], entries: list[dict[str, object]]) -> list[str]:
    """Write the group file beside the first seat's log; the command line that runs it."""
    path = group[0].log.with_suffix(".group.json")
    path.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    return [sys.executable, "-m", "specswarm", "peer-group", str(path)]


async def keep_group(group: Sequence[PeerProc], command: object, seats: Seats) -> None:
    """Run ``group``'s process for the whole launch, restarting it as ``keep`` restarts a peer.
    ``command()`` gives its command line for each start."""
    assert callable(command)
    lead = group[0]
    while True:
        proc = await _spawn(group, command())
        await _supervise(group, proc)
        code = lead.exited
        if code == 0 or code is None:
            return
        for p in group:
            p.deaths.append(code)
        why = "the plan is complete" if seats.over else _why_not(group, seats)
        if why is not None:
            for p in group:
                p.lost = True
            if code != DETERMINISTIC_EXIT:
                seats.note(f"process of {_names(group)} exited {code}; not restarted: {why}")
            return
        said = last_words(lead)  # the group's stderr is in its first seat's log
        for p in group:  # the error names the port that was taken: move that peer
            if port_taken(p, said):
                p.port = free_port(p.listen.host)
        delay = seats.policy.backoff[lead.restarts]
        for p in group:
            p.restarts += 1
        seats.note(
            f"process of {_names(group)} exited {code}; restarting "
            f"({lead.restarts}/{seats.policy.limit}) in {delay:g} s"
        )
        await trio.sleep(delay)


def _names(group: Sequence[PeerProc]) -> str:
    return ", ".join(p.name for p in group)


def _why_not(group: Sequence[PeerProc], seats: Seats) -> str | None:
    for p in group:
        why = seats.policy.why_not(p)
        if why is not None:
            return f"{p.name}: {why}"
    return None


async def _spawn(group: Sequence[PeerProc], cmd: list[str]) -> PeerProcess:
    lead = group[0]
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    for p in group:
        env.update(p.env)  # the shared model service's token (the same for every peer of a run)
    for p in group[1:]:
        p.log.write_text(f"runs in the process of {lead.name}: see {lead.log.name}\n", encoding="utf-8")
    begin_log(lead)
    proc = await open_peer(cmd, env, lead.log)
    for p in group:
        write_pid(p, proc.pid)
        if p.restarts:  # the status lines of the process before are over: keep their counts
            for name, value in p.status.get("counters", {}).items():
                if isinstance(value, int | float):
                    p.carried[name] = p.carried.get(name, 0) + value
            p.status = PeerStatus()
        p.proc, p.exited = proc, None
    return proc


async def _supervise(group: Sequence[PeerProc], proc: PeerProcess) -> None:
    by_id = {p.identity.peer_id: p for p in group}

    def take(line: bytes) -> None:
        peer = _peer_of(line)
        if peer in by_id:
            take_status(by_id[peer], line)

    assert proc.stdout is not None
    lines = StatusLines(take)
    try:
        async for chunk in proc.stdout:
            lines.feed(chunk)
        code = await proc.wait()
        for p in group:
            p.exited = code
    finally:
        with trio.CancelScope(shield=True):
            await stop_process(proc, lines)
            for p in group:
                p.exited = proc.returncode if p.exited is None else p.exited


def _peer_of(line: bytes) -> str | None:
    """The peer a status line is of (cheaply: the ``"peer"`` field leads every status line)."""
    start = line.find(b'"peer":"')
    if start < 0:
        return None
    start += len(b'"peer":"')
    end = line.find(b'"', start)
    return line[start:end].decode("ascii", "replace") if end > 0 else None
