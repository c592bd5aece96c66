"""No silent stalls: a run that nothing can change any more ends early, with the stuck report.

- a node the model keeps failing on the same way is asked another way each time, then counted
  used up (:mod:`specswarm.swarm.streaks`); the launcher ends the run once every decomposer
  that tried it has (:mod:`specswarm.swarm.launcher.stalls`), or when nothing happens at all;
- an OpenAI-compatible endpoint that stops working mid-run ends the run with exit 2, naming
  ``model.base_url``, within a minute;
- the scripted model completes every shipped goal and a spec of every ``init --kind``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio
import yaml

from specswarm.cli.init import KINDS, render_spec
from specswarm.model.base import GenerationRequest
from specswarm.model.replay import ScriptedModel, scripted_answer
from specswarm.model.tasks import decompose, execute
from specswarm.plan import FoldState
from specswarm.protocol.events import make_run_event
from specswarm.protocol.identity import Identity
from specswarm.spec import load_spec
from specswarm.swarm.launcher.procs import PeerProc, PeerStatus
from specswarm.swarm.launcher.stalls import QUIET_FLOOR, Quiet, used_up
from specswarm.swarm.streaks import SAME_WAY, Streak
from specswarm.testing.local import run_local
from tests.openai_stub import Answer, Stub, chat, error, serve

ROOT = Path(__file__).resolve().parent.parent
GOALS = sorted(p.name for p in (ROOT / "goals").glob("*.yaml"))
INIT_GOALS = {
    "trip": "Plan a 10-day trip to Portugal visiting Lisbon and Porto",
    "software": "Build a command-line tool that syncs two folders",
    "event": "Organize a neighbourhood summer festival for 300 people",
    "blank": "Write a grant proposal for a community garden",
}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECSWARM_MODEL")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def _plan(spec: Path, tmp_path: Path, *extra: str, env: dict[str, str]) -> tuple[int, str, float]:
    """Run ``specswarm plan``: its exit code, stderr and wall seconds."""
    cmd = [sys.executable, "-m", "specswarm", "plan", str(spec), "--quiet", *extra]
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    return done.returncode, done.stderr, time.monotonic() - started


def _peer(i: int, role: str, status: PeerStatus) -> PeerProc:
    ident = Identity(bytes([i + 1]) * 32)
    return PeerProc(i, role, ident, 0, None, Path(f"{role}.events"), Path(f"{role}.log"), status=status)


def test_a_node_failing_the_same_way_is_used_up_once_every_decomposer_that_tried_it_has() -> None:
    spec = load_spec(ROOT / "goals" / "tiny.yaml")
    plan = FoldState([make_run_event(Identity(b"\x09" * 32), spec)]).plan()
    streak = Streak()
    for titles in ("'A' repeats another part", "'B' and 'C' repeat another part"):
        streak.failed(f"decompose: only 1 usable part(s) ({titles})", "only 1 usable part(s)")
    assert (streak.times, streak.same, streak.backoff(20.0)) == (2, 1, 4.0)  # another way
    streak.failed("decompose: only 3 usable part(s) ('D' repeats another part; 'E' repeats it too)", "x")
    streak.failed("decompose: only 0 usable part(s) ('G' repeats another part)", "x")
    assert streak.same == SAME_WAY - 1 and not streak.used_up  # quoted text, numbers, lists aside
    streak.failed("decompose: only 2 usable part(s) ('F' repeats another part)", "x")
    assert streak.used_up
    spent: PeerStatus = {"failing": {"root": streak.to_json()}}
    fresh: PeerStatus = {"failing": {"root": {"times": 1, "same": 1, "why": "x"}}}
    assert used_up(plan, [_peer(0, "decomposer", spent), _peer(1, "decomposer", fresh)]) == []
    working: PeerStatus = {"doing": {"task": "propose", "on": "root", "phase": "generating"}}
    assert used_up(plan, [_peer(0, "decomposer", spent), _peer(1, "decomposer", working)]) == []
    assert used_up(plan, [_peer(0, "decomposer", spent), _peer(1, "decomposer", spent)])[0].startswith(
        "node root 'Plan a relaxed Saturday afternoon in a city park': every decomposer that tried it"
    )
    # quiet: no news for the bound (the claim timeout and a margin, at least QUIET_FLOOR s)
    quiet, idle = Quiet(0.0), [_peer(0, "decomposer", {})]
    assert quiet.stalled(plan, idle, 1.0) is None and quiet.stalled(plan, idle, QUIET_FLOOR - 1) is None
    busy = [_peer(0, "decomposer", working)]
    assert quiet.stalled(plan, busy, QUIET_FLOOR + 1) is None  # a slow model is not a stall
    assert quiet.stalled(plan, idle, 2 * QUIET_FLOOR) is None and quiet.stalled(plan, idle, 3 * QUIET_FLOOR)


def test_a_task_that_gave_up_is_asked_again_with_its_problem_sampled_and_fewer_parts() -> None:
    spec = load_spec(ROOT / "goals" / "tiny.yaml")
    plan = FoldState([make_run_event(Identity(b"\x09" * 32), spec)]).plan()
    assert plan.root is not None
    model = ScriptedModel()
    decompose(model, spec, plan.root, [], [], "by sequence", [], strategies=["by sequence"])
    decompose(model, spec, plan.root, [], [], "by sequence", [], attempt=1, failure="only 1 usable part(s)")
    first, again = model.calls[0], model.calls[1]
    assert "into 3 parts" in first.prompt and "into 2 parts" in again.prompt
    assert "could not be used: only 1 usable part(s). Answer again" in again.prompt
    assert again.seed != first.seed and again.temperature > 0
    execute(model, spec, plan.root, [], attempt=2, failure="no list found")  # any node reads as a leaf
    last = model.calls[-1]
    assert "could not be used: no list found." in last.prompt and last.seed != first.seed


@pytest.mark.slow
def test_a_run_that_cannot_progress_ends_early_with_the_stuck_report(tmp_path: Path) -> None:
    # the scripted model cannot write 7 distinct parts: every split of the root gives up
    data = yaml.safe_load((ROOT / "goals" / "tiny.yaml").read_text())
    data["tree"].update(min_children=7, max_children=8)
    spec = tmp_path / "stuck.yaml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "plan.md"
    code, err, wall = _plan(spec, tmp_path, "--out", str(out), env=_env(SPECSWARM_MODEL_BACKEND="scripted"))
    assert code == 1 and wall < 60, (wall, err[-3000:])
    assert "nothing can change the plan any more" in err and "stalled: node root" in err, err[-3000:]
    assert "- **Status:** incomplete" in out.read_text()


def _scripted_then_500(stub: Stub, good: int, died: list[float]) -> Any:
    def respond(body: dict[str, Any]) -> Answer:
        if len(stub.chats()) > good:
            died.append(died[0] if died else time.monotonic())
            return error(500, "boom")
        msgs = {m["role"]: m["content"] for m in body.get("messages", [])}
        return chat(scripted_answer(GenerationRequest(msgs.get("user", ""), system=msgs.get("system", ""))))

    return respond


@pytest.mark.slow
def test_an_endpoint_that_dies_mid_run_ends_the_run_within_a_minute_naming_base_url(tmp_path: Path) -> None:
    died: list[float] = []
    with serve() as stub:
        stub.responder = _scripted_then_500(stub, 3, died)
        data = yaml.safe_load((ROOT / "goals" / "tiny.yaml").read_text())
        data["model"] = {"backend": "openai", "base_url": stub.url, "retries": 1}
        spec = tmp_path / "tiny.yaml"
        spec.write_text(yaml.safe_dump(data, sort_keys=False))
        code, err, _ = _plan(spec, tmp_path, env=_env())
        ended = time.monotonic()
    assert died, err[-3000:]
    assert code == 2 and ended - died[0] < 60, (code, ended - died[0], err[-3000:])
    assert f"model.base_url: {stub.url} stopped working: " in err and "--resume" in err, err[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("source", [*GOALS, *(f"init --kind {k}" for k in KINDS)])
def test_the_scripted_model_completes_every_shipped_goal_and_init_kind(source: str, tmp_path: Path) -> None:
    # the same nodes and roles as `specswarm plan`, in one process (4-18 s each)
    if source.startswith("init"):
        kind = source.rsplit(" ", 1)[1]
        path = tmp_path / f"{kind}.yaml"
        path.write_text(render_spec(kind, INIT_GOALS[kind], path)[0])
    else:
        path = ROOT / "goals" / source
    _, swarm, _ = trio.run(lambda: run_local(load_spec(path), ScriptedModel, timeout=120))
    plan = next(iter(swarm.nodes.values())).plan()
    assert plan.complete and not any(n.role.failing for n in swarm.nodes.values() if n.role), source
