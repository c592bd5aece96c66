"""`specswarm plan` with the shared model service: started before the peers, asked by all of
them, restarted when it dies, the run stopped with its last words when it cannot be (scripted
model through a real service process: fast enough to run on every commit, but real processes
and real libp2p, so marked slow); and the same with the real embedded model (marked model)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from specswarm.plan.fold import fold
from specswarm.protocol.events import read_event_log
from specswarm.spec import ModelSettings
from specswarm.swarm.launcher import models
from specswarm.swarm.launcher.heal import RestartPolicy, Seats
from specswarm.swarm.launcher.progress import Progress

ROOT = Path(__file__).resolve().parent.parent

SPEC = """\
name: shared-service-test
goal: Plan a weekend in Lisbon
context: Two adults, spring, mid-range budget.
roles:
  decomposer: {count: 1, strategies: [by day]}
  scorer: {count: 1}
  executor: {count: 1}
  observer: {count: 1}
tree: {max_depth: 2, min_children: 2, max_children: 3}
model: {backend: scripted, shared: true, model_weight: 0.5}  # scorers rate every split they pass
budget: {seconds: 240, settle_seconds: 0.5, claim_timeout: 30}
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SPECSWARM_MODEL")}


def _plan(spec: Path, tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    """``specswarm plan`` in the background, its stderr in ``tmp_path/stderr.txt``."""
    cmd = [sys.executable, "-m", "specswarm", "plan", str(spec), "--report", str(tmp_path / "report.json")]
    cmd += ["--events", str(tmp_path / "events.jsonl"), "--out", str(tmp_path / "plan.md"), *extra]
    err = open(tmp_path / "stderr.txt", "w")  # noqa: SIM115 - the child holds it open
    return subprocess.Popen(cmd, stderr=err, stdout=subprocess.DEVNULL, text=True, env=_env())


READY = re.compile(r"model service \(.*\) ready on http://127\.0\.0\.1:\d+/v1 \(pid (\d+)\)")


def _ready_pid(proc: subprocess.Popen[str], tmp_path: Path, timeout: float = 300) -> int:
    """Wait until the launcher says its model service is ready; the service's pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = READY.search((tmp_path / "stderr.txt").read_text())
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError("no 'ready' line:\n" + (tmp_path / "stderr.txt").read_text()[-3000:])


def _finish(proc: subprocess.Popen[str], tmp_path: Path, timeout: float = 400) -> str:
    proc.wait(timeout=timeout)
    return (tmp_path / "stderr.txt").read_text()


@pytest.mark.slow
def test_every_model_peer_asks_the_one_service_and_the_run_converges(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    proc = _plan(spec, tmp_path)
    pid = _ready_pid(proc, tmp_path)
    err = _finish(proc, tmp_path)
    assert proc.returncode == 0, err[-3000:]
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["complete"] and {p["digest"] for p in rep["peers"]} == {rep["digest"]}
    assert fold(read_event_log(tmp_path / "events.jsonl").events).digest == rep["digest"]
    # every model peer asked the service (and counted its generations); the service is gone
    for p in rep["peers"]:
        if p["role"] != "observer":
            assert p["counters"]["model_generations"] > 0, p
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # nothing secret on a command line: the token is only in the environment
    assert "SPECSWARM_MODEL_TOKEN" not in err


@pytest.mark.slow
def test_a_service_killed_mid_run_is_restarted_and_the_run_converges(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    proc = _plan(spec, tmp_path)
    pid = _ready_pid(proc, tmp_path)
    time.sleep(1.0)  # the peers are starting and asking
    os.kill(pid, signal.SIGKILL)
    err = _finish(proc, tmp_path)
    assert proc.returncode == 0, err[-3000:]
    assert re.search(r"model service \(.*\) exited -9; restarting \(1/5\)", err), err[-3000:]
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["complete"] and {p["digest"] for p in rep["peers"]} == {rep["digest"]}
    assert any("model service" in r["what"] for r in rep["restarts"])


@pytest.mark.slow
def test_a_service_that_cannot_load_its_model_stops_the_run_before_any_peer(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a model")
    spec = tmp_path / "spec.yaml"
    assert "{backend: scripted, shared: true," in SPEC
    spec.write_text(
        SPEC.replace("{backend: scripted, shared: true,", f"{{backend: gpt4all, file: {bad}, shared: true,")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "specswarm", "plan", str(spec)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert re.search(
        r"the model service \(decomposer, scorer, executor\) exited \d+ before it was ready", proc.stderr
    )
    assert "broken.gguf" in proc.stderr and "starting" in proc.stderr
    assert "peers restarted" not in proc.stderr


def test_a_service_that_keeps_dying_ends_the_run_with_its_last_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "BACKOFF", (0.01, 0.01))

    class Dying(models.ServiceProc):
        def command(self) -> list[str]:
            return [sys.executable, "-c", "import sys; print('out of memory', file=sys.stderr); sys.exit(3)"]

    s = Dying(ModelSettings(), ["scorer"], 1, tmp_path / "svc.log", "tok")
    seats = Seats(RestartPolicy(), Progress(quiet=True))

    async def main() -> None:
        await models._spawn(s)
        await models.keep(s, seats)

    trio.run(main)
    assert s.restarts == 2 and len(s.deaths) == 3 and set(s.deaths) == {3}
    assert seats.fatal is not None and "died 3 times (last exit 3): out of memory" in seats.fatal


# ---------------------------------------------------------------------------- the real model


def _gguf_mappers(name: str) -> set[int]:
    """The processes that have the model file mapped (gpt4all mmaps it)."""
    pids = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            if name in maps.read_text(errors="replace"):
                pids.add(int(maps.parent.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
@pytest.mark.model
def test_the_service_answers_as_the_in_process_model_does_with_the_prefix_kept() -> None:
    from specswarm.model import GenerationRequest
    from specswarm.model.gpt4all_backend import Gpt4AllModel

    settings = ModelSettings(threads=2)
    plan_sys, rate_sys = "You split goals into parts.", "You rate splits from 0 to 10."
    reqs = [
        GenerationRequest(prompt="Split: plan a picnic. Three lines.", system=plan_sys, max_tokens=40),
        GenerationRequest(prompt="Split: clean a garage. Three lines.", system=plan_sys, max_tokens=40),
        GenerationRequest(prompt="Rate: 1. buy food 2. go. Answer a number.", system=rate_sys, max_tokens=8),
        GenerationRequest(prompt="Split: plan a picnic. Three lines.", system=plan_sys, max_tokens=40),
    ]
    kept = Gpt4AllModel.from_settings(settings, keep_prefix=True)
    with_prefix = [kept.generate(r).text for r in reqs]
    assert kept.prefix_hits == 1  # the second call; the third changed the system turn, the fourth again
    plain = Gpt4AllModel.from_settings(settings)
    fresh = [plain.generate(r).text for r in reqs]
    assert with_prefix == fresh
    assert with_prefix[0] == with_prefix[3] and with_prefix[0] != with_prefix[1]


@pytest.mark.slow
@pytest.mark.model
def test_tiny_with_the_real_model_loads_it_in_one_process_and_converges(tmp_path: Path) -> None:
    from specswarm.model.assets import MODEL_FILE, ensure_default_model

    ensure_default_model()
    before = _gguf_mappers(MODEL_FILE)
    spec = tmp_path / "tiny.yaml"
    spec.write_text(
        (ROOT / "goals" / "tiny.yaml").read_text().replace("\nmodel:\n", "\nmodel:\n  shared: true\n", 1)
    )
    proc = _plan(spec, tmp_path, "--timeout", "900")
    service = _ready_pid(proc, tmp_path)
    most: set[int] = set()
    while proc.poll() is None:
        now = _gguf_mappers(MODEL_FILE) - before
        most = now if len(now) > len(most) else most
        time.sleep(2)
    err = _finish(proc, tmp_path)
    assert proc.returncode == 0, err[-4000:]
    assert most == {service}, f"processes with the model mapped: {most} (service {service})"
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["complete"] and {p["digest"] for p in rep["peers"]} == {rep["digest"]}
    assert sum(p["counters"]["model_generations"] for p in rep["peers"]) > 0
