"""The benchmark scripts run in a tiny configuration, so they cannot rot (figures not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _run(script: str, *args: str, timeout: float = 240) -> str:
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.startswith("machine: nproc"), proc.stdout[:500]
    return proc.stdout


def test_fold_bench_tiny() -> None:
    out = _run("fold_bench.py", "--fanout", "3", "--depth", "2", "--tail", "10", "--repeat", "1")
    assert "full fold" in out and "incremental: apply + plan()" in out and "node: answer 'get'" in out


@pytest.mark.slow
def test_coordination_bench_tiny() -> None:
    out = _run(
        "coordination.py",
        "--depths",
        "1",
        "--repeat",
        "1",
        "--decomposers",
        "1",
        "--scorers",
        "1",
        "--executors",
        "1",
        "--timeout",
        "120",
    )
    assert "b/a" in out and "target" in out


def test_simulate_bench_tiny(tmp_path: Path) -> None:
    out = _run("simulate.py", "--peers", "6", "--depth", "1", "--figures", str(tmp_path))
    assert "## simulated mesh" in out
    row = next(line for line in out.splitlines() if line.startswith("6 "))
    assert row.split()[1] == "yes"  # converged
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert pngs == []
    else:
        names = ["antientropy", "claims", "convergence", "final-share", "inventory", "messages"]
        assert pngs == [f"sim-{n}.png" for n in names]


@pytest.mark.slow
def test_scale_bench_tiny() -> None:
    out = _run(
        "scale.py",
        "--peers",
        "4",
        "--plans",
        "1x2",
        "--p2p-max-nodes",
        "0",
        "--timeout",
        "120",
        "--fold-args",
        "--fanout 2 --depth 2 --tail 5 --repeat 1",
    )
    assert "## peers" in out and "## plan size" in out and "## fold" in out


@pytest.mark.slow
def test_real_model_bench_runs_with_the_scripted_model() -> None:
    out = _run(
        "real_model.py", "--spec", str(BENCH.parent / "goals" / "tiny.yaml"), "--scripted", "--timeout", "120"
    )
    assert "coordination % of wall" in out and "peak RSS total MiB" in out


def test_incremental_plan_equals_a_fresh_fold_after_every_event() -> None:
    """Guards the incremental plan() (kept tree, lazy digest) the fold benchmark relies on."""
    import random

    from specswarm.plan.fold import FoldState
    from specswarm.testing.synth import complete_swarm

    sw = complete_swarm(seed=3, fanout=3, depth=3)
    plan = FoldState(sw.events).plan()
    leaves = plan.leaves()
    ex, dec = sw.peers["executor"], sw.peers["decomposer"]
    for leaf in leaves[:2]:
        sw.claim(ex[1], leaf.id, lamport=1)  # an older claim without a result: the leaf reopens
    for leaf in leaves[2:4]:
        claim = sw.claim(ex[1], leaf.id, supersedes=leaf.claim)
        sw.result(ex[1], leaf.id, claim)
    inner = next(n for n in plan.walk() if n.depth == 1 and not n.leaf)
    rival = sw.propose(dec[1], inner.id, ["Alpha part", "Beta part"], lamport=1)
    for scorer in sw.peers["scorer"]:
        sw.vote(scorer, rival, True, 99, lamport=2)  # completes earlier: replaces a whole subtree
    events = list(sw.events)
    for rep in range(2):
        random.Random(rep).shuffle(events)
        state = FoldState()
        for i, event in enumerate(events):
            state.apply(event)
            if i % 4 == 0 or i == len(events) - 1:
                got, want = state.plan(), FoldState(events[: i + 1]).plan()
                assert got.digest == want.digest
                assert got.complete == want.complete and got.to_json() == want.to_json()
                assert set(got.nodes) == set(want.nodes) and dict(got.counts) == dict(want.counts)


@pytest.mark.slow
def test_shared_model_bench_runs_with_the_scripted_model() -> None:
    out = _run(
        "shared_model.py",
        "--spec",
        str(BENCH.parent / "goals" / "tiny.yaml"),
        "--scripted",
        "--timeout",
        "120",
        timeout=400,
    )
    assert "peak PSS GiB" in out and "per-peer" in out and "shared" in out
    shared = next(line for line in out.splitlines() if line.startswith("shared "))
    assert "-" not in shared.split()[-2]  # the service's own counts were read from its log
