"""``specswarm plan``: launch the declared peers as processes on loopback and watch them converge.

The launcher is not a coordinator: it generates the peers' keys and the run
event, starts one OS process per declared peer (each bootstrapping from two
others, so there is no hub), and then only *reads*: the peers' status lines
and the observer's event log, which it folds itself to show the tree growing.
When every peer reports the same complete plan it stops them, writes the
event log and renders the plan. On timeout it names the stuck nodes and why.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import trio

from specswarm.errors import RunError, SpecError, SpecProblem, SpecSwarmError
from specswarm.plan.fold import FoldState, Plan
from specswarm.protocol.events import (
    Event,
    admit,
    check_event,
    make_run_event,
    read_event_log,
    write_event_log,
)
from specswarm.protocol.identity import Identity
from specswarm.render.tree import short, tree_text

STOP_GRACE = 5.0
AGREE_GRACE = 15.0


@dataclass
class PeerProc:
    index: int
    role: str
    identity: Identity
    port: int
    strategy: str | None
    events: Path
    log: Path
    proc: trio.Process | None = None
    status: dict[str, Any] = field(default_factory=dict)
    exited: int | None = None

    @property
    def addr(self) -> str:
        return f"/ip4/127.0.0.1/tcp/{self.port}/p2p/{self.identity.peer_id}"

    @property
    def name(self) -> str:
        return f"{self.role}-{self.index}"


def _line_of(spec_path: Path, key: str) -> int:
    """The line of ``key:`` in a spec file (1 if it cannot be found): for problems found after loading."""
    import re

    try:
        lines = spec_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    return next((i for i, line in enumerate(lines, 1) if re.match(rf"\s*{re.escape(key)}\s*:", line)), 1)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keys_path(events: Path) -> Path:
    return events.with_name(events.name + ".keys.json")


def _write_secret_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)


def event_count(plan: Plan) -> int:
    kinds = ("run", "join", "proposal", "vote", "claim", "result")
    return sum(v for k, v in plan.counts.items() if k in kinds)


class Progress:
    """Live progress on stderr: the growing tree on a terminal, sparse lines otherwise."""

    def __init__(self, quiet: bool, stream: TextIO = sys.stderr) -> None:
        self.quiet = quiet
        self.stream = stream
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.last_line = ""
        self.last_print = 0.0
        self.seen_accepted: set[str] = set()
        self.seen_results: set[str] = set()

    def elapsed(self) -> str:
        s = int(time.monotonic() - self.started)
        return f"{s // 60:02d}:{s % 60:02d}"

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"[{self.elapsed()}] {text}", file=self.stream, flush=True)

    def update(self, plan: Plan, peers: list[PeerProc]) -> None:
        if self.quiet or plan.root is None:
            return
        for n in plan.walk():
            if n.accepted and n.id not in self.seen_accepted:
                self.seen_accepted.add(n.id)
                acc = n.accepted_proposal
                assert acc is not None
                rivals = len(n.proposals) - 1
                self.say(
                    f"split accepted: {n.title[:60]!r} → {len(n.children)} parts "
                    f"({acc.strategy}, {acc.approvals} approvals"
                    + (f", {rivals} rival(s) rejected/outvoted" if rivals else "")
                    + ")"
                )
            if n.result and n.id not in self.seen_results:
                self.seen_results.add(n.id)
                self.say(f"leaf done: {n.title[:60]!r} by executor {short(n.result.author)}")
        p = plan.progress()
        calls = sum(int(x.status.get("counters", {}).get("model_calls", 0)) for x in peers)
        alive = sum(1 for x in peers if x.exited is None)
        line = (
            f"nodes {p['nodes']}  split {p['split']}  open {p['open']}  leaves {p['done']}/{p['leaves']} "
            f"done ({p['claimed']} claimed)  events {event_count(plan)}"
            f"  model calls {calls}  peers {alive}/{len(peers)}"
        )
        now = time.monotonic()
        if line != self.last_line and now - self.last_print > (1 if self.tty else 5):
            self.say(line)
            self.last_line, self.last_print = line, now


def diagnose(plan: Plan, peers: list[PeerProc]) -> list[str]:
    """Why the plan is not complete: one line per stuck node."""
    reasons = []
    roles_alive = {p.role for p in peers if p.exited is None}
    spec = plan.spec or {}
    max_rev = int(spec.get("tree", {}).get("max_revisions", 2))
    if plan.root is None:
        return ["the run never started: no peer published the run"]
    for n in plan.walk():
        if n.leaf and n.result is None:
            if "executor" not in roles_alive:
                why = "no executor is alive"
            elif n.claim:
                holder = next((c.author for c in n.claims if c.id == n.claim), "?")
                why = f"claimed by {short(holder)} but no result yet (model slow or failing)"
            else:
                why = "nobody claimed it yet"
            reasons.append(f"leaf {n.id} {n.title[:50]!r}: {why}")
        elif not n.leaf and not n.accepted:
            if not n.proposals:
                why = (
                    "no decomposer is alive"
                    if "decomposer" not in roles_alive
                    else "no proposal yet (decomposer model slow or failing)"
                )
            elif all(p.status == "rejected" for p in n.proposals):
                why = (
                    f"all {len(n.proposals)} proposals rejected by the scorers "
                    f"(revisions per decomposer are capped at {max_rev}); last critique: "
                    + (
                        n.proposals[-1].votes[-1].critique.splitlines()[0][:120]
                        if n.proposals[-1].votes
                        else "-"
                    )
                )
            else:
                pend = [p for p in n.proposals if p.status == "pending"]
                votes = sum(len(p.votes) for p in pend)
                why = (
                    f"{len(pend)} proposal(s) pending without quorum ({votes} vote(s) so far"
                    + ("; no scorer alive" if "scorer" not in roles_alive else "")
                    + ")"
                )
            reasons.append(f"node {n.id} {n.title[:50]!r}: {why}")
    failures = sum(int(p.status.get("counters", {}).get("model_failures", 0)) for p in peers)
    if failures:
        last = [
            f"{p.name}: {p.status['last_model_failure']}" for p in peers if p.status.get("last_model_failure")
        ]
        reasons.append(
            f"model failures across peers: {failures} (see the peer logs)"
            + (f"; last: {last[0]}" if last else "")
        )
    dead = [f"{p.name} (exit {p.exited})" for p in peers if p.exited not in (None, 0)]
    if dead:
        reasons.append("peers that died: " + ", ".join(dead))
    return reasons


def write_report(
    path: Path, plan: Plan, peers: list[PeerProc], code: int, wall: float, reasons: list[str]
) -> None:
    """A machine-readable summary of the run (for CI jobs and tests)."""
    report = {
        "run_id": plan.run_id,
        "digest": plan.digest,
        "complete": plan.complete,
        "exit_code": code,
        "wall_seconds": round(wall, 3),
        "events": event_count(plan),
        "progress": plan.progress(),
        "stuck": reasons,
        "peers": [
            {
                "name": p.name,
                "role": p.role,
                "peer_id": p.identity.peer_id,
                "digest": p.status.get("digest"),
                "complete": p.status.get("complete"),
                "events": p.status.get("events"),
                "counters": p.status.get("counters", {}),
                "transport": p.status.get("transport", {}),
                "exit": p.exited,
                "pid": p.proc.pid if p.proc else None,
                "log": str(p.log),
            }
            for p in peers
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def run_plan(
    spec_path: Path,
    *,
    fmt: str | None,
    out: Path | None,
    events_path: Path | None,
    timeout: float | None,
    resume: Path | None,
    quiet: bool,
    report: Path | None = None,
) -> int:
    from specswarm.spec import load_spec

    spec = load_spec(spec_path)
    spec_json = spec.to_json()
    fmt = fmt or spec_json.get("output", {}).get("format", "markdown")
    budget = float(timeout if timeout is not None else spec_json.get("budget", {}).get("seconds", 900))
    for role in ("decomposer", "scorer", "executor", "observer"):
        if int(spec_json["roles"].get(role, {}).get("count", 0)) < 1:
            why = "the launcher reads the plan from it" if role == "observer" else "`plan` needs one"
            raise SpecError(
                [
                    SpecProblem(
                        str(spec_path),
                        _line_of(spec_path, role),
                        f"roles.{role}.count",
                        f"0 {role}s (expected at least 1 to run `plan`: {why})",
                    )
                ]
            )
    workdir = Path(tempfile.mkdtemp(prefix="specswarm-run-"))
    preload: list[Event] = []
    if resume is not None:
        keys_file = _keys_path(resume)
        if not keys_file.exists():
            raise SpecSwarmError(f"cannot resume: {keys_file} (written beside the event log) is missing")
        keys = json.loads(keys_file.read_text())
        log = read_event_log(resume)
        preload = log.events
        run_event = next((e for e in preload if e.kind == "run"), None)
        if run_event is None:
            raise SpecSwarmError(f"cannot resume: {resume} holds no run event")
        if run_event.body["spec"] != spec_json:
            print(
                "warning: the spec changed since the run began; resuming with the original spec",
                file=sys.stderr,
            )
    else:
        launcher = Identity.generate()
        admission = Identity.generate()
        run_event = make_run_event(
            launcher, spec_json, admission=admission.public_key.hex(), nonce=secrets.token_hex(8)
        )
        keys = {"admission": admission.seed.hex(), "peers": {}}
    admission_key = Identity(bytes.fromhex(keys["admission"]))
    if events_path is None:
        events_path = workdir / "events.jsonl"
    _write_secret_json(_keys_path(events_path), keys)
    run_file = workdir / "run.json"
    run_file.write_text(run_event.to_bytes().decode())
    preload_file = None
    if preload:
        preload_file = workdir / "preload.jsonl"
        with open(preload_file, "w") as fh:
            write_event_log(preload, fh)

    peers: list[PeerProc] = []
    roles = spec_json["roles"]
    strategies = roles.get("decomposer", {}).get("strategies") or ["by parts"]
    for role in ("observer", "scorer", "executor", "decomposer"):
        for i in range(int(roles.get(role, {}).get("count", 0))):
            name = f"{role}-{i}"
            seed = keys["peers"].get(name)
            ident = Identity(bytes.fromhex(seed)) if seed else Identity.generate()
            keys["peers"][name] = ident.seed.hex()
            peers.append(
                PeerProc(
                    len(peers),
                    role,
                    ident,
                    _free_port(),
                    strategies[i % len(strategies)] if role == "decomposer" else None,
                    workdir / f"{name}.jsonl",
                    workdir / f"{name}.log",
                )
            )
    _write_secret_json(_keys_path(events_path), keys)
    progress = Progress(quiet)
    declared = ", ".join(f"{r} x{roles[r]['count']}" for r in roles if roles[r]["count"])
    progress.say(
        f"run {run_event.run[:12]}: {spec_json['goal']!r} — starting {len(peers)} peers "
        f"({declared}); logs in {workdir}"
    )
    if resume:
        progress.say(f"resuming from {resume}: {len(preload)} events")
    try:
        _, code, reasons = trio.run(
            _launch, peers, run_event, admission_key, run_file, preload_file, budget, progress
        )
    except KeyboardInterrupt:  # pragma: no cover
        code, reasons = 130, ["interrupted"]
    # the event log: the union of every peer's log, in (lamport, author, id) order
    state = FoldState(preload)
    state.apply(run_event)
    for p in peers:
        if p.events.exists():
            for e in read_event_log(p.events, run_event.run).events:
                state.apply(e)
    events_path.parent.mkdir(parents=True, exist_ok=True)
    with open(events_path, "w", encoding="utf-8") as fh:
        write_event_log(sorted(state.events(), key=lambda e: e.order), fh)
    final = state.plan()
    summary = _summary(final, peers, progress)
    if report is not None:
        write_report(report, final, peers, code, time.monotonic() - progress.started, reasons)
    if code == 0:
        from specswarm.render import render_plan, write_output

        write_output(render_plan(final, fmt, spec_json.get("output", {}).get("template")), out)
        progress.say(f"plan complete: digest {final.digest[:16]}; {summary}")
        progress.say(f"events: {events_path}" + (f"; plan: {out}" if out else ""))
        return 0
    if code == 130:
        print(
            f"interrupted: all peers stopped; {len(state)} events saved to {events_path}\n"
            f"continue with: specswarm plan {spec_path} --resume {events_path}",
            file=sys.stderr,
        )
        return 130
    print(tree_text(final), file=sys.stderr)
    raise RunError(
        "the plan did not converge within "
        f"{budget:g} s ({summary})\n"
        + "\n".join(f"  stuck: {r}" for r in reasons)
        + f"\nevents saved to {events_path}; peer logs in {peers[0].log.parent}"
        + f"\ncontinue with: specswarm plan {spec_path} --resume {events_path}"
    )


def _summary(plan: Plan, peers: list[PeerProc], progress: Progress) -> str:
    calls = sum(int(p.status.get("counters", {}).get("model_calls", 0)) for p in peers)
    tokens = sum(int(p.status.get("counters", {}).get("model_tokens", 0)) for p in peers)
    n_events = event_count(plan)
    p = plan.progress()
    return (
        f"{p['nodes']} nodes, {p['leaves']} leaves, {n_events} events, {calls} model calls"
        + (f", {tokens} tokens" if tokens else "")
        + f", wall {progress.elapsed()}"
    )


async def _launch(
    peers: list[PeerProc],
    run_event: Event,
    admission_key: Identity,
    run_file: Path,
    preload_file: Path | None,
    budget: float,
    progress: Progress,
) -> tuple[Plan, int, list[str]]:
    observer = next(p for p in peers if p.role == "observer")
    state = FoldState([run_event])
    offsets: dict[Path, int] = {}
    code = 1
    reasons: list[str] = []
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def on_signal() -> None:
                nonlocal code
                async for _ in signals:
                    code = 130
                    progress.say("stopping all peers…")
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(on_signal)
            n = len(peers)
            for p in peers:
                boot = [peers[(p.index + k) % n].addr for k in (1, 2) if n > k]
                await nursery.start(_run_peer, p, boot, run_event, admission_key, run_file, preload_file)
            deadline = time.monotonic() + budget
            complete_since: float | None = None
            while True:
                _tail(observer.events, state, offsets)
                plan = state.plan()
                progress.update(plan, peers)
                alive = [p for p in peers if p.exited is None]
                if plan.complete:
                    complete_since = complete_since or time.monotonic()
                    digests = {p.status.get("digest") for p in alive}
                    if digests == {plan.digest} or time.monotonic() - complete_since > AGREE_GRACE:
                        if digests != {plan.digest}:
                            lag = [p.name for p in alive if p.status.get("digest") != plan.digest]
                            progress.say(f"warning: peers not yet at the final digest: {', '.join(lag)}")
                        code = 0
                        break
                if observer.exited is not None:
                    reasons = [f"the observer exited with code {observer.exited}; see {observer.log}"]
                    break
                if time.monotonic() > deadline:
                    reasons = diagnose(plan, peers)
                    break
                await trio.sleep(0.25)
            nursery.cancel_scope.cancel()
    # reap: the nursery cancelled every _run_peer, which terminated its process
    _tail(observer.events, state, offsets)
    return state.plan(), code, reasons


def _tail(path: Path, state: FoldState, offsets: dict[Path, int]) -> None:
    """Apply the new complete lines of an event log."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        fh.seek(offsets.get(path, 0))
        data = fh.read()
    end = data.rfind(b"\n") + 1
    offsets[path] = offsets.get(path, 0) + end
    for line in data[:end].splitlines():
        event, _ = check_event(line, state.run_event.run if state.run_event else None)
        if event is not None:
            state.apply(event)


def peer_command(
    p: PeerProc, boot: list[str], run_file: Path, admission: str | None, preload_file: Path | None = None
) -> list[str]:
    """The ``specswarm peer`` command line of a launched peer (writes its key file beside its log).

    ``admission`` is the join's admission signature (None: the peer has none, or derives it
    from ``SPECSWARM_SECRET``). Also used by the chaos test harness (tests/chaos.py).
    """
    key_file = p.log.with_suffix(".key")
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(p.identity.seed.hex())
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
        f"/ip4/127.0.0.1/tcp/{p.port}",
        "--json-status",
        "--events",
        str(p.events),
    ]
    if admission is not None:
        cmd += ["--admission", admission]
    for b in boot:
        cmd += ["--join", b]
    if p.strategy:
        cmd += ["--strategy", p.strategy]
    if preload_file:
        cmd += ["--preload", str(preload_file)]
    return cmd


async def _run_peer(
    p: PeerProc,
    boot: list[str],
    run_event: Event,
    admission_key: Identity,
    run_file: Path,
    preload_file: Path | None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    cmd = peer_command(
        p, boot, run_file, admit(admission_key, run_event.run, p.identity.peer_id, p.role), preload_file
    )
    log = open(p.log, "wb")
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    proc = await trio.lowlevel.open_process(
        cmd, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, env=env, start_new_session=True
    )
    p.proc = proc
    task_status.started()
    try:
        assert proc.stdout is not None
        buf = b""
        async for chunk in proc.stdout:
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    p.status = json.loads(line)
                except ValueError:
                    pass
        p.exited = await proc.wait()
    finally:
        with trio.CancelScope(shield=True):
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                with trio.move_on_after(STOP_GRACE):
                    await proc.wait()
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            p.exited = proc.returncode if p.exited is None else p.exited
            log.close()
