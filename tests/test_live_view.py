"""The live view: its parts on a synthetic plan (fast), the sparse lines off a terminal, and
`specswarm plan` in a pseudo-terminal of 120x40 (real peer processes, the scripted model)."""

from __future__ import annotations

import codecs
import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from rich.console import Console

from specswarm.plan import ROOT, Plan, child_id, fold
from specswarm.protocol.identity import Identity
from specswarm.render.live import (
    LiveStats,
    PeerRow,
    RoleUse,
    describe,
    live_view,
    node_status,
    seen_doing,
    summary_table,
)
from specswarm.swarm.launcher.estimate import calls_left, seconds_left, seconds_per_call
from specswarm.swarm.launcher.procs import PeerProc, PeerStatus
from specswarm.swarm.launcher.progress import Progress
from specswarm.testing.synth import Swarm, complete_swarm, minimal_spec
from tests.swarmkit import park_spec
from tests.vt import Screen


def text_of(renderable: object, width: int = 120) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def growing() -> tuple[Swarm, Plan]:
    """A run under way: the root split, one child voting, the other split with a claimed leaf
    and a done one."""
    sw = Swarm(spec=minimal_spec(tree={"max_depth": 2, "min_children": 2, "max_children": 4}), seed=5)
    root = sw.accept(ROOT, ["Day one in Alfama", "Day two in Belem"])
    a, b = child_id(root.id, 0), child_id(root.id, 1)
    pending = sw.propose(sw.peers["decomposer"][0], a, ["Morning walk", "Tram ride"])
    sw.vote(sw.peers["scorer"][0], pending, True)
    sw.accept(b, ["Tower visit", "Pastry stop"], leaf=True, by=1)
    plan = fold(sw.events)
    ex = sw.peers["executor"][0]
    leaves = plan.nodes[b].children
    sw.result(ex, leaves[0], sw.claim(ex, leaves[0]))
    sw.claim(sw.peers["executor"][1], leaves[1])
    return sw, fold(sw.events)


def test_every_node_says_its_status() -> None:
    sw, plan = growing()
    names = {sw.peers["executor"][0].peer_id: "executor-0"}
    by_title = {n.title: node_status(n, names) for n in plan.walk()}
    assert by_title["Plan a weekend in Lisbon"].startswith("accepted 3/3 (by place)")
    assert by_title["Day one in Alfama"] == "voting: 1 proposal(s), 1 vote(s)"
    assert by_title["Day two in Belem"].startswith("accepted 3/3")
    assert by_title["Tower visit"] == "done by executor-0"
    assert by_title["Pastry stop"] == f"claimed by {sw.peers['executor'][1].peer_id[-6:]}"


def test_a_frame_shows_the_header_the_bar_the_tree_and_the_peers() -> None:
    _, plan = growing()
    stats = LiveStats(
        elapsed=75, left=130, tokens_per_second=12.5, model_calls=9, peers_alive=8, peers_total=9
    )
    rows = [PeerRow("decomposer-0", "decomposer", "proposing a split of 'Day one in Alfama'")]
    out = text_of(live_view(plan, stats, rows))
    assert "elapsed 01:15" in out and "~02:10 left" in out and "12.5 tok/s" in out and "peers 8/9" in out
    assert "leaves" in out and "1/2 done, 1 claimed" in out
    assert "├── ? Day one in Alfama  [voting" in out and "✔ Tower visit  [done by" in out
    assert "decomposer-0  decomposer  proposing a split of 'Day one in Alfama'" in out


def test_what_a_peer_does_is_said_with_the_node_title() -> None:
    _, plan = growing()
    a = next(n for n in plan.walk() if n.title == "Day one in Alfama")
    assert describe(plan, None) == "idle"
    assert describe(plan, {"task": "propose", "on": a.id, "phase": "generating"}) == (
        "proposing a split of 'Day one in Alfama'"
    )
    rate = {"task": "rate", "on": a.proposals[0].id, "phase": "waiting"}
    assert describe(plan, rate) == "rating a split of 'Day one in Alfama' (waiting for the model)"
    executing = [r for r in seen_doing(plan) if r.doing.startswith("executing")]
    assert [r.doing for r in executing] == ["executing 'Pastry stop'"]


def test_the_estimate_counts_the_open_work() -> None:
    _, plan = growing()
    spec = plan.spec
    assert spec is not None
    # one leaf to execute; one node voting (its split, then its two leaves)
    left = calls_left(plan, spec)
    assert 3 < left < 15
    assert calls_left(fold(complete_swarm(seed=1).events), spec) == 0
    assert seconds_per_call(100, 0, 0) is None
    assert seconds_per_call(100, 10, 80) == 8.0  # the model's own seconds per call
    assert seconds_per_call(100, 10, 0) == 10.0  # an instant model: the run's pace
    assert seconds_left(plan, spec, 100, 10, 80) == pytest.approx(left * 8)


def test_the_summary_table_says_where_the_time_went() -> None:
    plan = fold(complete_swarm(seed=2).events)
    uses = [RoleUse("decomposer", 4, 900, 60.0), RoleUse("scorer", 12, 300, 30.0, 5, 7)]
    out = text_of(summary_table(plan, 120.0, uses))
    assert "run summary" in out and "decomposer" in out and "900" in out
    assert "02:00: model 90.0 s (75%), coordination 30.0 s" in out
    assert "1 rejected" in out  # the rival at the root
    assert "5 hits, 7 misses" in out


def peer(role: str, index: int, status: PeerStatus, identity: Identity | None = None) -> PeerProc:
    key = identity or Identity.generate()
    p = PeerProc(index, role, key, 1, None, Path("e"), Path("l"), seat=f"{role}-{index}")
    p.status = status
    return p


def test_off_a_terminal_the_sparse_lines_stay() -> None:
    sw, plan = growing()
    stream = io.StringIO()
    progress = Progress(quiet=False, stream=stream)
    assert not progress.live
    peers = [peer("executor", 0, PeerStatus(counters={"model_calls": 3}), sw.peers["executor"][0])]
    progress.update(plan, peers)
    progress.close(plan, peers)
    out = stream.getvalue()
    assert "split accepted: 'Plan a weekend in Lisbon' → 2 parts" in out
    assert "leaf done: 'Tower visit' by executor-0" in out  # its seat, as in the tree
    assert "nodes 5  split 2  open 1  leaves 1/2 done (2 claimed)" in out and "model calls 3" in out
    assert "\x1b[" not in out and "elapsed" not in out  # no live view
    assert "run summary" in out
    quiet = io.StringIO()
    Progress(quiet=True, stream=quiet).update(plan, peers)
    assert quiet.getvalue() == ""


# --- in a pseudo-terminal --------------------------------------------------------------

SPEC = park_spec(400, 0.3, 60).replace(
    "model: {backend: scripted}", "model: {backend: scripted, model_weight: 0.5}"
)
"""The park swarm, its scorer asking the model for a rating (so that, with the test model's delay
below, a split stays in "voting" for a while: an instant vote left it there for a few
milliseconds, and whether a frame caught that was luck)."""


def run_in_pty(
    args: list[str], rows: int = 40, cols: int = 120, timeout: float = 600
) -> tuple[int, Screen, list[str]]:
    """Run ``args`` with a pseudo-terminal of ``cols`` x ``rows`` as stdin, stdout and stderr:
    its exit code, the screen at the end, and the screen after every read."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "SPECSWARM_MODEL_BACKEND")}
    env.update(TERM="xterm-256color", SPECSWARM_TEST_MODEL_DELAY="0.5")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    screen, frames = Screen(rows, cols), []
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            screen.feed(decode(chunk))
            frames.append(screen.text())
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return proc.wait(timeout=30), screen, frames


@pytest.mark.slow
def test_plan_on_a_terminal_shows_the_live_tree_and_ends_with_the_summary(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    code, screen, frames = run_in_pty(
        [sys.executable, "-m", "specswarm", "plan", str(spec), "-o", str(tmp_path / "plan.md")]
    )
    final = screen.all_text()
    assert code == 0, final[-3000:]
    # while it ran: the header with an estimate, the bar, the tree with statuses, the peers
    live = [f for f in frames if "elapsed " in f and "doing now" in f]
    assert live, final[-3000:]
    assert any(" left" in f and "leaves ━" in f for f in live)
    assert any("[voting" in f or "[balloting" in f for f in live)
    assert any("[claimed by" in f or "[unclaimed]" in f for f in live)
    assert any("decomposer-0  decomposer" in f for f in live)
    # at the end: the whole tree, each leaf done, and the summary table
    assert "▸ Plan a relaxed Saturday afternoon in a city park  [accepted 1/1 (by sequence)]" in final
    assert final.count("[done by executor-0]") == 3 and "├── ✔ " in final and "└── ✔ " in final
    assert "run summary" in final and "│ executor   │" in final and "wall time" in final
    assert "coordination" in final and "1 accepted, 0 rejected, 0 outvoted" in final
    assert "plan complete: digest" in final
    assert "\x1b" not in final and "[0m" not in final  # every escape sequence was one


def test_the_stuck_report_names_a_claim_holder_by_its_seat() -> None:
    from specswarm.swarm.launcher.diagnose import diagnose

    sw, plan = growing()  # one leaf claimed by the second executor, no result yet
    holder = sw.peers["executor"][1]
    peers = [peer("executor", 1, PeerStatus(), holder)]
    said = [r for r in diagnose(plan, peers) if "claimed by" in r]
    assert said and said[0].endswith("claimed by executor-1 but no result yet (model slow or failing)")
