"""The benchmark scripts run in a tiny configuration, so they cannot rot (figures not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _run(script: str, *args: str, timeout: float = 240) -> str:
    proc = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.startswith("machine: nproc"), proc.stdout[:500]
    return proc.stdout


def test_fold_bench_tiny() -> None:
    out = _run("fold_bench.py", "--fanout", "3", "--depth", "2", "--tail", "10", "--repeat", "1")
    assert "full fold" in out and "incremental: apply + plan()" in out and "node: answer 'get'" in out


@pytest.mark.slow
def test_coordination_bench_tiny() -> None:
    out = _run("coordination.py", "--depths", "1", "--repeat", "1", "--decomposers", "1", "--scorers", "1",
               "--executors", "1", "--timeout", "120")
    assert "b/a" in out and "target" in out


@pytest.mark.slow
def test_scale_bench_tiny() -> None:
    out = _run("scale.py", "--peers", "4", "--plans", "1x2", "--p2p-max-nodes", "0", "--timeout", "120",
               "--fold-args", "--fanout 2 --depth 2 --tail 5 --repeat 1")
    assert "## peers" in out and "## plan size" in out and "## fold" in out


@pytest.mark.slow
def test_real_model_bench_runs_with_the_scripted_model() -> None:
    out = _run("real_model.py", "--spec", str(BENCH.parent / "goals" / "tiny.yaml"), "--scripted",
               "--timeout", "120")
    assert "coordination % of wall" in out and "peak RSS total MiB" in out
