"""End to end with the real embedded model: `specswarm plan goals/tiny.yaml`, offline.

The whole swarm (one process per peer, real libp2p on loopback, the default
Qwen2.5-Coder-1.5B through gpt4all) runs inside a fresh network namespace whose
only interface is loopback: proof that nothing reaches for the network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specswarm.plan.fold import fold
from specswarm.protocol.events import read_event_log

pytestmark = [pytest.mark.slow, pytest.mark.model]

ROOT = Path(__file__).resolve().parent.parent


def _offline_prefix() -> list[str]:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("unshare/ip (util-linux, iproute2) are not installed: cannot cut the network off")
    if os.geteuid() != 0:
        pytest.skip("unshare -n needs root to create a network namespace")
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "offline"]


def test_tiny_plan_with_the_real_model_offline(tmp_path: Path) -> None:
    events, report, out = tmp_path / "events.jsonl", tmp_path / "report.json", tmp_path / "plan.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECSWARM_MODEL")}
    cmd = [
        *_offline_prefix(),
        sys.executable,
        "-m",
        "specswarm",
        "plan",
        str(ROOT / "goals" / "tiny.yaml"),
        "--out",
        str(out),
        "--events",
        str(events),
        "--report",
        str(report),
        "--timeout",
        "900",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1000, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    rep = json.loads(report.read_text())
    assert rep["complete"] and {p["digest"] for p in rep["peers"]} == {rep["digest"]}
    plan = fold(read_event_log(events).events)
    assert plan.digest == rep["digest"]
    # the split was chosen by a quorum of the two scorers or, when no proposal reached it (the
    # small model's tiny split is vague, and it repeats itself when asked to revise), it is the
    # best rejected one -- most approvals, then highest mean score -- once the decomposer's
    # chain (max_revisions 1 + 1, or fewer when a revision repeats its original) was used up
    root = plan.root
    assert root is not None and root.accepted_proposal is not None
    accepted = root.accepted_proposal
    if accepted.approvals < 2:
        assert accepted.rejections >= 1 and 1 <= len(root.proposals) <= 2
        assert all(p.approvals < 2 and p.approvals + p.rejections == 2 for p in root.proposals)
        best = max((p.approvals, p.mean_score or 0) for p in root.proposals)
        assert (accepted.approvals, accepted.mean_score or 0) == best
        # a rejecting vote says why
        assert any(not v.approve and v.critique and v.critique != "no problems found" for v in accepted.votes)
    leaves = plan.leaves()
    assert 2 <= len(leaves) <= 3
    for leaf in leaves:
        assert leaf.result is not None and leaf.result.model.startswith("qwen2.5-coder-1.5b")
        assert len(leaf.result.output.split()) >= 5
    # real generations happened (tokens counted), and the Markdown names the goal
    assert sum(p["counters"].get("model_tokens", 0) for p in rep["peers"]) > 50
    assert "# Plan a relaxed Saturday afternoon in a city park" in out.read_text()
