"""Shared helpers of the benchmarks: machine line, plain tables, specs, and timed `specswarm plan` runs.

A `specswarm plan` run is measured from outside, without touching the launcher:
the launcher is started with ``TMPDIR`` pointing at a fresh directory, so its
work directory (and every peer's event log, ``<role>-<i>.jsonl``) lands there.
The bench tails those logs every ``poll`` seconds and notes when each line (one
signed event, byte-identical on every peer: canonical JSON) first appears in
each peer's log. From that:

* ``startup``: launch -> every declared peer's ``join`` is in some log (processes up,
  libp2p imported, on the network);
* ``converge``: that moment -> every peer's log holds the final event set;
* ``lost``: events of the final set missing from a peer's log at the end.

It also samples the peers' peak RSS (VmHWM) while they run.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent


# -- machine & tables ---------------------------------------------------------------------


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"machine: nproc {os.cpu_count()}, cpu {cpu!r}, RAM {ram}, python {platform.python_version()}, "
        f"load avg {load:.1f} at start (shared machine: compare ratios within one run)"
    )


def table(rows: Sequence[dict[str, Any]], cols: Sequence[str] | None = None) -> str:
    """A plain left-aligned text table."""
    if not rows:
        return "(no rows)"
    cols = list(cols or rows[0].keys())

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
        return "-" if v is None else str(v)

    cells = [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(out)


def median(xs: Iterable[float]) -> float:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


# -- specs ---------------------------------------------------------------------------------


def bench_spec(
    depth: int = 1,
    decomposers: int = 1,
    scorers: int = 2,
    executors: int = 1,
    observers: int = 1,
    min_children: int = 2,
    max_children: int = 3,
    settle: float = 0.3,
    seconds: float = 300,
    base: str = "tiny",
) -> dict[str, Any]:
    """A normalized spec (GoalSpec.to_json()) from goals/<base>.yaml with the scripted model."""
    from specswarm.spec import load_spec

    spec = load_spec(REPO / "goals" / f"{base}.yaml").to_json()
    spec["name"] = f"bench-d{depth}"
    spec["roles"] = {
        "decomposer": {
            "count": decomposers,
            "strategies": ["by place", "by day", "by theme"][: max(1, decomposers)],
        },
        "scorer": {"count": scorers},
        "executor": {"count": executors},
        "observer": {"count": observers},
    }
    spec["tree"].update(max_depth=depth, min_children=min_children, max_children=max_children)
    spec["model"].update(backend="scripted")
    spec["budget"].update(settle_seconds=settle, claim_timeout=60.0, seconds=seconds)
    return spec


def write_spec_yaml(spec: dict[str, Any], path: Path) -> Path:
    """Write a spec file `specswarm plan` reads back to the same normalized spec."""
    data = {k: v for k, v in spec.items() if k not in ("version", "prompts")}
    data["model"] = {k: v for k, v in data["model"].items() if v is not None}
    data["network"] = {k: v for k, v in data["network"].items() if v is not None}
    data["output"] = {k: v for k, v in data["output"].items() if v is not None}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def expected_nodes(depth: int, children: int) -> int:
    return sum(children**d for d in range(depth + 1))


# -- a timed `specswarm plan` run -------------------------------------------------------


@dataclass
class _Tail:
    path: Path
    offset: int = 0
    seen: dict[bytes, float] = field(default_factory=dict)

    def poll(self, now: float) -> list[bytes]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1
        self.offset += end
        new = []
        for line in data[:end].splitlines():
            line = line.strip()
            if line and line not in self.seen:
                self.seen[line] = now
                new.append(line)
        return new


def _vm_hwm_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds a process has used so far (from /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _children_roles(pid: int) -> dict[int, str]:
    """Peer processes under the launcher: pid -> '<role>' (from their command lines)."""
    import psutil

    out = {}
    try:
        for child in psutil.Process(pid).children(recursive=True):
            try:
                cmd = child.cmdline()
            except psutil.Error:
                continue
            if "peer" in cmd and "--role" in cmd:
                out[child.pid] = cmd[cmd.index("--role") + 1]
            elif "peer-group" in cmd:  # --peers-per-process: several peers in one process
                out[child.pid] = "group"
    except psutil.Error:
        pass
    return out


def _seat_pids(runs_dir: Path) -> dict[int, str]:
    """Peer processes by the launcher's ``SEAT.pid`` files: pid -> role (a forked peer's command
    line is the fork server's, so :func:`_children_roles` cannot name it)."""
    out = {}
    for f in runs_dir.glob("specswarm-run-*/*.pid"):
        try:
            out[int(f.read_text())] = f.stem.rsplit("-", 1)[0]
        except (OSError, ValueError):
            continue
    return out


@dataclass
class PlanRun:
    code: int
    report: dict[str, Any]
    wall: float
    startup: float | None
    converge: float | None
    first_proposal: float | None
    events: int
    lost: dict[str, int]
    rss_kib: dict[str, int]
    """peak RSS per peer (name -> KiB)."""
    stderr: str
    workdir: Path | None = None
    lost_kinds: dict[str, int] = field(default_factory=dict)
    """Missing events by kind, summed over peers."""
    cpu_s: dict[int, float] = field(default_factory=dict)
    """CPU seconds (user + system) per peer process (pid -> s), last sample before it exited."""
    timeline: list[tuple[float, str, str]] = field(default_factory=list)
    """(seconds since launch, kind, author) of each event's first appearance in any log."""

    @property
    def peers(self) -> list[dict[str, Any]]:
        return list(self.report.get("peers", []))

    def transport_sum(self, key: str) -> int:
        return sum(int(p.get("transport", {}).get(key, 0)) for p in self.peers)

    def counter_sum(self, key: str) -> float:
        return sum(float(p.get("counters", {}).get(key, 0) or 0) for p in self.peers)


def run_plan(
    spec: dict[str, Any],
    *,
    timeout: float = 300,
    poll: float = 0.05,
    env: dict[str, str] | None = None,
    keep: Path | None = None,
    spec_path: Path | None = None,
    scripted: bool = True,
    extra: Sequence[str] = (),
) -> PlanRun:
    """Run `specswarm plan` on ``spec`` (or on the file ``spec_path``, whose normalized form ``spec``
    is), with the scripted model unless ``scripted`` is False; timed from outside."""
    tmp = Path(tempfile.mkdtemp(prefix="specswarm-bench-", dir=keep))
    if spec_path is None:
        spec_path = write_spec_yaml(spec, tmp / "spec.yaml")
    report_path = tmp / "report.json"
    run_env = dict(os.environ)
    run_env.pop("SPECSWARM_MODEL_BACKEND", None)
    run_env.pop("SPECSWARM_MODEL_CASSETTE", None)
    if scripted:
        run_env["SPECSWARM_MODEL_BACKEND"] = "scripted"
    run_env.update(env or {})
    runs_dir = tmp / "runs"
    runs_dir.mkdir()
    run_env["TMPDIR"] = str(runs_dir)
    cmd = [
        sys.executable,
        "-m",
        "specswarm",
        "plan",
        str(spec_path),
        "--format",
        "json",
        "--out",
        str(tmp / "plan.json"),
        "--events",
        str(tmp / "events.jsonl"),
        "--report",
        str(report_path),
        "--timeout",
        str(timeout),
        *extra,
    ]
    err_path = tmp / "stderr.txt"
    started = time.monotonic()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=run_env)
    tails: dict[str, _Tail] = {}
    roles = spec["roles"]
    n_peers = sum(int(r.get("count", 0)) for r in roles.values())
    authors_joined: set[str] = set()
    t_all_joined: float | None = None
    t_first_prop: float | None = None
    rss: dict[int, int] = {}
    cpu: dict[int, float] = {}
    pid_roles: dict[int, str] = {}
    last_rss = 0.0
    while proc.poll() is None:
        now = time.monotonic()
        for d in runs_dir.glob("specswarm-run-*"):
            for f in d.glob("*.jsonl"):
                if f.name not in tails:
                    tails[f.name] = _Tail(f)
        for tail in tails.values():
            for line in tail.poll(now):
                if t_all_joined is None and b'"kind":"join"' in line:
                    authors_joined.add(json.loads(line)["author"])
                    if len(authors_joined) >= n_peers - int(roles.get("observer", {}).get("count", 0)):
                        t_all_joined = now
                if t_first_prop is None and b'"kind":"proposal"' in line:
                    t_first_prop = now
        if now - last_rss > 0.5:
            last_rss = now
            if len(pid_roles) < n_peers:
                pid_roles.update(_children_roles(proc.pid))
                pid_roles.update(_seat_pids(runs_dir))
            for pid in pid_roles:
                v = _vm_hwm_kib(pid)
                if v is not None:
                    rss[pid] = max(rss.get(pid, 0), v)
                c = _cpu_seconds(pid)
                if c is not None:
                    cpu[pid] = max(cpu.get(pid, 0.0), c)
        time.sleep(poll)
    wall = time.monotonic() - started
    now = time.monotonic()
    for tail in tails.values():
        tail.poll(now)
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    final: set[bytes] = set()
    for tail in tails.values():
        final |= set(tail.seen)
    converged_at = max((max(t.seen.values()) for t in tails.values() if t.seen), default=None)
    lost = {name[:-6]: len(final - set(t.seen)) for name, t in tails.items()}
    lost_kinds: dict[str, int] = {}
    for t in tails.values():
        for line in final - set(t.seen):
            kind = json.loads(line)["kind"]
            lost_kinds[kind] = lost_kinds.get(kind, 0) + 1
    names = {p.get("pid"): p.get("name") for p in report.get("peers", [])}
    rss_by_role: dict[str, int] = {}
    for pid, kib in sorted(rss.items()):
        rss_by_role[names.get(pid) or f"{pid_roles.get(pid, '?')}-pid{pid}"] = kib
    first: dict[bytes, float] = {}
    for tail in tails.values():
        for line, t in tail.seen.items():
            first[line] = min(first.get(line, t), t)
    timeline = []
    for line, t in sorted(first.items(), key=lambda kv: kv[1]):
        ev = json.loads(line)
        timeline.append((round(t - started, 3), ev["kind"], ev["author"]))
    return PlanRun(
        cpu_s=cpu,
        timeline=timeline,
        code=proc.returncode,
        report=report,
        wall=wall,
        startup=(t_all_joined - started) if t_all_joined else None,
        converge=(converged_at - t_all_joined) if (converged_at and t_all_joined) else None,
        first_proposal=(t_first_prop - started) if t_first_prop else None,
        events=len(final),
        lost=lost,
        lost_kinds=lost_kinds,
        rss_kib=rss_by_role,
        stderr=err_path.read_text(errors="replace")[-4000:],
        workdir=tmp,
    )


# -- an in-memory run ---------------------------------------------------------------------


@dataclass
class LocalRun:
    seconds: float
    events: int
    nodes: int
    published: int
    received: int
    bytes_out: int
    bytes_in: int
    requests: int
    sync_bytes: int
    announces: int
    lost: int
    digest_agree: bool


def run_memory(
    spec: dict[str, Any],
    *,
    seed: int = 0,
    timeout: float = 300,
    announce_interval: float = 1.0,
    loss: float = 0.0,
) -> LocalRun:
    import trio

    from specswarm.model.replay import ScriptedModel
    from specswarm.testing.local import run_local

    digest, swarm, seconds = trio.run(
        lambda: run_local(
            spec, ScriptedModel, seed=seed, timeout=timeout, announce_interval=announce_interval, loss=loss
        )
    )
    nodes = list(swarm.nodes.values())
    stats = [n.transport.stats for n in nodes]
    sizes = [len(n.state) for n in nodes]
    union: set[str] = set()
    for n in nodes:
        union |= n.state.ids
    return LocalRun(
        seconds=seconds,
        events=len(union),
        nodes=len(nodes[0].plan().nodes),
        published=sum(s.published for s in stats),
        received=sum(s.received for s in stats),
        bytes_out=sum(s.bytes_out for s in stats),
        bytes_in=sum(s.bytes_in for s in stats),
        requests=sum(s.requests_made for s in stats),
        sync_bytes=sum(getattr(n.counters, "sync_bytes", 0) for n in nodes),
        announces=sum(getattr(n.counters, "announces", 0) for n in nodes),
        lost=sum(len(union) - s for s in sizes),
        digest_agree=len({n.plan().digest for n in nodes}) == 1,
    )
