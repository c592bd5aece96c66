"""The plan-quality benchmark (bench/quality.py) end to end with the scripted model.

It starts the real `specswarm plan` (libp2p peer processes on loopback) for goals/tiny.yaml,
then the one-shot and single-agent systems in the benchmark's own process, and scores all
three. Figures of quality are not checked (the scripted model says nothing about quality);
the table's shape, the swarm's delivery and the artefacts are.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from content_metrics import CONTENT_METRICS  # noqa: E402
from quality_metrics import METRICS  # noqa: E402

SYSTEMS = ("swarm", "one-shot", "single-agent")
EXTRA_ROWS = (
    "scorer disagreement (swarm)",
    "revisions passing where the original failed (swarm)",
    "model calls (tasks)",
    "generations",
    "tokens generated",
    "generation s",
    "wall s",
    "exit code",
    "delivered",
)


def _strict_json(path: Path) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{path}: {name} is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _table(stdout: str, heading: str) -> dict[str, list[str]]:
    """The side-by-side table under ``heading``: row label -> cells (one per system)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    header = next(i for i in range(start, len(lines)) if lines[i].startswith("metric "))
    assert lines[header].split() == ["metric", *SYSTEMS], lines[header]
    rows: dict[str, list[str]] = {}
    for line in lines[header + 2 :]:
        if not line.strip() or line.startswith("  "):
            break
        label, *cells = re.split(r"\s{2,}", line.strip())
        rows[label] = cells
    return rows


def _bench_tiny(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """bench/quality.py on goals/tiny.yaml with the scripted model, artefacts in ``out``."""
    cmd = [sys.executable, str(REPO / "bench" / "quality.py"), "--scripted"]
    cmd += ["--goals", str(REPO / "goals" / "tiny.yaml"), "--out", str(out), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)


@pytest.mark.slow
def test_quality_bench_scripted_tiny(tmp_path: Path) -> None:
    out = tmp_path / "q"
    proc = _bench_tiny(out)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    stdout = proc.stdout
    assert stdout.startswith("machine: nproc"), stdout[:300]
    assert "command: python " in stdout and "--scripted" in stdout
    assert "[quality" in proc.stderr  # progress lines

    rows = _table(stdout, "## tiny")
    for label in [*METRICS.values(), *CONTENT_METRICS.values(), *EXTRA_ROWS]:
        assert label in rows, f"row {label!r} missing from:\n{stdout}"
        assert len(rows[label]) == 3, (label, rows[label])
    assert rows["exit code"][0] == "0", rows["exit code"]
    assert rows["delivered"] == ["yes", "yes", "yes"], rows["delivered"]
    assert rows["model calls (tasks)"][1] == "1"  # one-shot: one call
    assert rows["scorer disagreement (swarm)"][1:] == ["-", "-"]
    # goals/tiny.yaml: one split of the root into 2-3 leaves, each executed
    for system, nodes, leaves in zip(SYSTEMS, rows["nodes"], rows["leaves"], strict=True):
        assert 3 <= int(nodes) <= 4 and int(leaves) == int(nodes) - 1, (system, nodes, leaves)
    assert "## summary" in stdout

    gdir = out / "tiny"
    metrics = _strict_json(gdir / "metrics.json")
    systems = metrics["systems"]
    assert set(systems) == set(SYSTEMS)
    swarm = systems["swarm"]
    assert swarm["exit_code"] == 0 and swarm["delivered"] is True
    assert swarm["calls"] > 0 and swarm["tokens"] > 0
    assert swarm["scorer_disagreement"]["total"] >= 1  # tiny's one split was voted on by 2 scorers
    for name, system in systems.items():
        assert set(system["metrics"]) == set(METRICS) | set(CONTENT_METRICS), name
        assert system["metrics"]["nodes"]["value"] == int(rows["nodes"][SYSTEMS.index(name)])
    summary = _strict_json(out / "summary.json")
    assert [s["system"] for s in summary["goals"][0]["systems"]] == list(SYSTEMS)
    assert (out / "quality.txt").read_text(encoding="utf-8").startswith("machine: nproc")

    # the raw artefacts: the swarm's event log folds to the tree that was scored, and the
    # single agent asked the swarm's own decompose prompt (so, with the deterministic scripted
    # model, it split the root exactly as the swarm's only decomposer first proposed)
    from specswarm.plan import fold
    from specswarm.protocol.events import read_event_log

    plan = fold(read_event_log(gdir / "swarm.jsonl").events)
    assert plan.complete
    trees = _strict_json(gdir / "trees.json")
    assert [n["title"] for n in trees["swarm"]] == [n.title for n in plan.walk()]
    first = min(plan.nodes["root"].proposals, key=lambda p: p.lamport)
    single_kids = [n["title"] for n in trees["single-agent"] if n["parent"] == "root"]
    assert single_kids == [c.title for c in first.children]
    assert (gdir / "one-shot.md").read_text(encoding="utf-8").strip()
    assert (gdir / "one-shot-prompt.txt").read_text(encoding="utf-8").count("Plan a relaxed Saturday") == 1
    calls = [json.loads(line) for line in (gdir / "single-agent.jsonl").read_text().splitlines()]
    leaves = sum(1 for n in trees["single-agent"] if not n["children"])
    assert len(calls) == systems["single-agent"]["generations"] == 1 + leaves  # a split, then each leaf
    from specswarm.spec import load_spec

    spec = load_spec(REPO / "goals" / "tiny.yaml")
    root_prompt = calls[0]["prompt"]  # the swarm's decompose prompt: its first strategy, the context
    strategy = spec.strategy_for(0).removeprefix("by ")  # "by sequence" is asked "by sequence"
    assert f"by {strategy}" in root_prompt and "by by" not in root_prompt, root_prompt
    assert spec.context in root_prompt, root_prompt
    # each leaf is written as the swarm's executors write it: its sibling leaves named
    kids = [n for n in trees["single-agent"] if n["parent"] == "root"]
    for call, kid in zip(calls[1:], kids, strict=True):
        others = [k["title"] for k in kids if k is not kid]
        assert "written separately" in call["prompt"], call["prompt"]
        assert all(title in call["prompt"] for title in others), (others, call["prompt"])

    # --baselines-from: only the swarm runs again; the baselines come back re-scored, the same
    again = tmp_path / "again"
    proc = _bench_tiny(again, "--baselines-from", str(out))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "one-shot recorded in" in proc.stderr and "single-agent recorded in" in proc.stderr
    assert "one-shot done" not in proc.stderr and "single agent done" not in proc.stderr
    reused = _strict_json(again / "tiny" / "metrics.json")["systems"]
    for name in ("one-shot", "single-agent"):
        assert reused[name]["metrics"] == systems[name]["metrics"], name
        assert reused[name]["wall_seconds"] == systems[name]["wall_seconds"]
        assert any("not run again" in note for note in reused[name]["notes"])
    assert not (again / "tiny" / "single-agent.jsonl").exists()

    # --reuse swarm=DIR: the swarm's event log is folded again, only the baselines run
    third = tmp_path / "third"
    # (a directory without this goal's run: said, and that system runs)
    proc = _bench_tiny(third, "--reuse", f"swarm={out}", "--reuse", f"one-shot={tmp_path}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "swarm recorded in" in proc.stderr and "swarm done" not in proc.stderr
    assert f"no one-shot run of this goal in {tmp_path}: running it" in proc.stderr
    assert "one-shot done" in proc.stderr and "single agent done" in proc.stderr
    again_swarm = _strict_json(third / "tiny" / "metrics.json")["systems"]["swarm"]
    for key in ("metrics", "scorer_disagreement", "revisions_passing", "wall_seconds", "tokens"):
        assert again_swarm[key] == swarm[key], key
    assert (third / "tiny" / "swarm.jsonl").read_bytes() == (gdir / "swarm.jsonl").read_bytes()
    bad = _bench_tiny(tmp_path / "bad", "--reuse", f"swarms={out}")
    assert bad.returncode == 2 and "SYSTEM=DIR" in bad.stderr, bad.stderr
