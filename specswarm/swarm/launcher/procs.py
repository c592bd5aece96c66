"""The peer processes of a launched run: who they are, their command lines, their lifecycle.

A :class:`PeerProc` is one declared peer (one :class:`~specswarm.spec.Seat` of the spec's
roster) as an OS process: its identity, port, files and the latest status line it printed.
:func:`spawn` starts it and :func:`supervise` reads its status lines until it exits, and
stops it (SIGTERM, then SIGKILL after a grace) when the launcher is done with it. A seat
outlives its processes: :mod:`~specswarm.swarm.launcher.heal` restarts a peer that died in
the same seat (same key, port and event log), and the seat keeps count.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, cast

import trio

from specswarm.protocol.identity import Identity
from specswarm.spec import GoalSpec
from specswarm.spec.addresses import LOOPBACK, ListenAddr
from specswarm.swarm.launcher.forked import PeerProcess, open_peer
from specswarm.swarm.launcher.network import free_port as free_port
from specswarm.swarm.launcher.network import listen_of, listen_ports

STOP_GRACE = 5.0
"""Seconds a peer has to exit after SIGTERM before it is killed."""


class PeerStatus(TypedDict, total=False):
    """A peer's latest ``--json-status`` line (written by ``Node.status``); empty before the first."""

    peer: str
    role: str
    run: str | None
    digest: str
    complete: bool
    events: int
    progress: dict[str, int]
    counters: dict[str, int | float | dict[str, int]]
    """Node counters: mostly numbers (``dropped`` is a count per reason)."""
    transport: dict[str, int]
    peers: int
    addrs: list[str]
    last_model_failure: str | None
    doing: dict[str, str] | None
    """What its role does now (``ModelRole.doing``): task, on (an id), phase; None: idle."""
    failing: dict[str, dict[str, int | str]]
    """key -> its role's calls on it that failed in a row (``Streak.to_json``)."""


@dataclass
class PeerProc:
    """One declared peer, launched as a ``specswarm peer`` process."""

    index: int
    """Position in the launch order (peer ``i`` bootstraps from peers ``i+1`` and ``i+2``)."""
    role: str
    identity: Identity
    port: int
    strategy: str | None
    events: Path
    """The peer's own event log (``--events``)."""
    log: Path
    """Its stderr."""
    proc: PeerProcess | None = None
    status: PeerStatus = field(default_factory=PeerStatus)
    exited: int | None = None
    """The exit code of its latest process (negative: the signal); None while it runs."""
    restarts: int = 0
    """How often the launcher restarted it after it died."""
    deaths: list[int] = field(default_factory=list)
    """The exit code of every process of this seat that died (nonzero), in order."""
    lost: bool = False
    """It died and the launcher will not restart it (restarts off or used up, or the run is over)."""
    carried: dict[str, float] = field(default_factory=dict)
    """Numeric counters of its earlier processes (a restarted peer counts from zero again)."""
    seat: str | None = None
    """Its seat's name (``scorer-1``: the second scorer), which its files are named after;
    None: ``role-index``."""
    cache: Path | None = None
    """The answer cache directory it shares with the other peers (``--cache``); None: none."""
    model_url: str | None = None
    """The shared model service its role asks (``--model-url``); None: it loads its own."""
    env: dict[str, str] = field(default_factory=dict)
    """Added to its environment (the model service's token)."""
    listen: ListenAddr = LOOPBACK
    """Where it listens (the spec's ``network.listen``; its port is ``port``)."""
    bootstrap: tuple[str, ...] = ()
    """Peers it also dials (the spec's ``network.bootstrap``)."""
    mdns: bool = False
    """It also finds peers on the LAN with mDNS (the spec's ``network.mdns``)."""

    @property
    def addr(self) -> str:
        """Where the other launched peers dial it (on this machine)."""
        return f"{self.listen.multiaddr(self.port, self.listen.local_host)}/p2p/{self.identity.peer_id}"

    @property
    def name(self) -> str:
        return self.seat or f"{self.role}-{self.index}"

    @property
    def alive(self) -> bool:
        return self.exited is None

    @property
    def key_file(self) -> Path:
        """Its identity key, written beside its log (by :func:`peer_command`)."""
        return self.log.with_suffix(".key")

    def counter(self, name: str) -> int:
        """A numeric counter of the latest status line (0 before the first line), plus what the
        seat's earlier processes counted."""
        value = self.status.get("counters", {}).get(name, 0)
        return int((value if isinstance(value, int | float) else 0) + self.carried.get(name, 0))


def port_taken(p: PeerProc, said: str) -> bool:
    """Whether a process's last words ``said`` it could not listen on ``p``'s port (taken
    meanwhile, e.g. by another peer's outgoing connection): "cannot listen on .../tcp/PORT: ..."."""
    return "cannot listen on" in said and f"/tcp/{p.port}:" in said


def build_peers(
    spec: GoalSpec, identities: dict[str, Identity], workdir: Path, cache: Path | None = None
) -> list[PeerProc]:
    """One PeerProc per seat of the spec's roster, in launch order. ``identities`` maps a seat's
    name to its key; seats without one get a new key, added to it. ``cache``: the answer cache
    every model-running peer shares. Each listens where the spec's ``network`` says, on a port
    of its own, and dials its bootstrap peers (and mDNS) as it says."""
    peers: list[PeerProc] = []
    roster = spec.roster()
    listen = listen_of(spec)
    for position, (seat, port) in enumerate(zip(roster, listen_ports(listen, len(roster)), strict=True)):
        identity = identities.get(seat.name) or Identity.generate()
        identities[seat.name] = identity
        peers.append(
            PeerProc(
                position,
                seat.role,
                identity,
                port,
                seat.strategy,
                workdir / f"{seat.name}.jsonl",
                workdir / f"{seat.name}.log",
                seat=seat.name,
                cache=cache if seat.role != "observer" else None,
                listen=listen,
                bootstrap=spec.network.bootstrap,
                mdns=spec.network.mdns,
            )
        )
    return peers


def boot_addrs(peers: Sequence[PeerProc], p: PeerProc) -> list[str]:
    """The two peers after ``p`` in launch order (a ring: no hub, no peer is special)."""
    n = len(peers)
    return [peers[(p.index + k) % n].addr for k in (1, 2) if n > k]


def peer_command(
    p: PeerProc,
    boot: list[str],
    run_file: Path,
    admission: str | None,
    preload_file: Path | None = None,
    *,
    own_log: bool = False,
) -> list[str]:
    """The ``specswarm peer`` command line of a launched peer (writes its key file beside its log).

    ``admission`` is the join's admission signature (None: the peer has none, or derives it
    from ``SPECSWARM_SECRET``). ``own_log``: the peer also starts from the events its own log
    already holds (a restart; the peer appends only what is new to it). Also used by the chaos
    test harness (tests/chaos.py).
    """
    key_file = write_key_file(p)
    cmd = [
        sys.executable,
        "-m",
        "specswarm",
        "peer",
        "--role",
        p.role,
        "--run-file",
        str(run_file),
        "--key",
        str(key_file),
        "--listen",
        p.listen.multiaddr(p.port),
        "--json-status",
        "--events",
        str(p.events),
    ]
    if admission is not None:
        cmd += ["--admission", admission]
    for b in [*boot, *p.bootstrap]:
        cmd += ["--join", b]
    if p.mdns:
        cmd += ["--mdns"]
    if p.strategy:
        cmd += ["--strategy", p.strategy]
    if preload_file:
        cmd += ["--preload", str(preload_file)]
    if own_log and p.events.exists():
        cmd += ["--preload", str(p.events)]
    if p.cache is not None:
        cmd += ["--cache", str(p.cache)]
    if p.model_url:
        cmd += ["--model-url", p.model_url]
    return cmd


def write_key_file(p: PeerProc) -> Path:
    """Write ``p``'s identity key beside its log (mode 0600); returns the file."""
    key_file = p.key_file
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(p.identity.seed.hex())
    return key_file


async def spawn(p: PeerProc, cmd: list[str]) -> PeerProcess:
    """Start ``p``'s process: status lines on a pipe, stderr into its log, its own session.

    A restarted seat's log goes on below a ``--- restart N ---`` line (what killed the
    previous process stays readable)."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(p.env)
    begin_log(p)
    proc = await open_peer(cmd, env, p.log)
    write_pid(p, proc.pid)
    if p.restarts:  # the status lines of the process before are over: keep their counts
        for name, value in p.status.get("counters", {}).items():
            if isinstance(value, int | float):
                p.carried[name] = p.carried.get(name, 0) + value
        p.status = PeerStatus()
    p.proc, p.exited = proc, None
    return proc


def begin_log(p: PeerProc) -> None:
    """Start ``p``'s log (a restarted seat's goes on below a ``--- restart N ---`` line)."""
    with open(p.log, "ab" if p.restarts else "wb") as log:
        if p.restarts:
            log.write(f"--- restart {p.restarts} (previous exit {p.exited}) ---\n".encode())


def write_pid(p: PeerProc, pid: int) -> None:
    """``SEAT.pid`` beside its log: the pid of the seat's live process (a forked peer's command
    line is the fork server's, so this is how a person or a test finds it)."""
    p.log.with_suffix(".pid").write_text(f"{pid}\n", encoding="ascii")


def last_words(p: PeerProc, limit: int = 300) -> str:
    """The last non-empty line the peer's latest process wrote to its log (what stopped it)."""
    try:
        text = p.log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = text.splitlines()
    marks = [i for i, ln in enumerate(lines) if ln.startswith("--- restart ")]
    said = [ln.strip() for ln in lines[marks[-1] + 1 if marks else 0 :] if ln.strip()]
    return said[-1][:limit] if said else ""


async def supervise(p: PeerProc, proc: PeerProcess) -> None:
    """Keep ``p.status`` at its latest status line until it exits; when cancelled, stop it
    (:func:`stop_process`)."""
    assert proc.stdout is not None
    lines = StatusLines(lambda line: take_status(p, line))
    try:
        async for chunk in proc.stdout:
            lines.feed(chunk)
        p.exited = await proc.wait()
    finally:
        with trio.CancelScope(shield=True):
            await stop_process(proc, lines)
            p.exited = proc.returncode if p.exited is None else p.exited


class StatusLines:
    """A peer process's stdout cut into lines, each handed to ``take``."""

    def __init__(self, take: Callable[[bytes], None]) -> None:
        self.take, self.buf = take, b""

    def feed(self, chunk: bytes) -> None:
        *lines, self.buf = (self.buf + chunk).split(b"\n")
        for line in lines:
            self.take(line)


def take_status(p: PeerProc, line: bytes) -> None:
    try:
        status = json.loads(line)
    except ValueError:
        return
    if isinstance(status, dict):
        p.status = cast(PeerStatus, status)  # what Node.status() wrote


async def stop_process(proc: PeerProcess, lines: StatusLines) -> None:
    """SIGTERM, then SIGKILL after :data:`STOP_GRACE` seconds. Within the grace, what it writes
    while stopping is read into ``lines``: the final status line a peer prints when stopped,
    with its counters at the stop (what a report of an interrupted run counts). Call shielded."""
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        with trio.move_on_after(STOP_GRACE):
            if proc.stdout is not None:
                async for chunk in proc.stdout:
                    lines.feed(chunk)
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
