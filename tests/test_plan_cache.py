"""`specswarm plan --cache DIR`, twice, with real peer processes (the scripted model): the second
run is answered from the cache alone and plans the same content; the report and the end line
count the hits and misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.swarmkit import park_spec

pytestmark = pytest.mark.slow

# one decomposer, one scorer, one executor, the observer: 4 processes; max_depth 1, so the
# executor's prompts do not depend on which sibling leaf it happened to finish first
SPEC = park_spec(240, 0.2, 30)


def plan(spec: Path, tmp_path: Path, name: str, *extra: str) -> tuple[dict, str]:  # type: ignore[type-arg]
    report = tmp_path / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if k != "SPECSWARM_MODEL_BACKEND"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "specswarm",
            "plan",
            str(spec),
            "--report",
            str(report),
            "-o",
            str(tmp_path / name),
        ]
        + list(extra),
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(report.read_text()), proc.stderr


def test_a_second_run_with_the_cache_replays_every_answer(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    cache = tmp_path / "answers"
    first, _ = plan(spec, tmp_path, "first", "--cache", str(cache))
    assert first["cache"]["hits"] == 0 and first["cache"]["misses"] > 0
    stored = len(list(cache.glob("*.json")))
    assert stored == first["cache"]["misses"]
    second, said = plan(spec, tmp_path, "second", "--cache", str(cache))
    assert second["cache"] == {"dir": str(cache.resolve()), "hits": first["cache"]["misses"], "misses": 0}
    assert f"cache {first['cache']['misses']} hits / 0 misses" in said
    assert f"answer cache {cache.resolve()}: {stored} answer(s) held" in said
    assert second["run_id"] != first["run_id"] and second["digest"] != first["digest"]
    assert second["content_digest"] == first["content_digest"]
    assert len(list(cache.glob("*.json"))) == stored  # nothing new was stored
    # the spec's own cache: field names the same directory (relative to the spec)
    spec.write_text(SPEC + "cache: answers\n")
    third, _ = plan(spec, tmp_path, "third")
    assert (third["cache"]["hits"], third["cache"]["misses"]) == (stored, 0)


def test_a_cache_that_cannot_be_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    (tmp_path / "file").write_text("x")
    proc = subprocess.run(
        [sys.executable, "-m", "specswarm", "plan", str(spec), "--cache", str(tmp_path / "file" / "sub")],
        capture_output=True,
        text=True,
        timeout=300,  # no peer starts; the bound is for a loaded machine's imports
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("--cache ")
    assert "cannot use it as the answer cache" in proc.stderr


def test_an_unreachable_endpoint_is_said_not_refused_when_a_cache_may_answer(tmp_path: Path) -> None:
    """With an answer cache, a run may need no endpoint at all: the preflight's "cannot reach"
    becomes a line to say (a question the cache lacks fails at run time); without one, exit 2."""
    from specswarm.errors import SpecError
    from specswarm.spec import spec_from_mapping
    from specswarm.swarm.launcher.run import check_models
    from tests.openai_stub import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    roles = {"decomposer": {"count": 1}, "scorer": {"count": 1}, "executor": {"count": 1}}
    spec = spec_from_mapping({"goal": "g", "roles": roles, "model": {"backend": "openai", "base_url": url}})
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECSWARM_MODEL")}
    with pytest.MonkeyPatch.context() as mp:
        for key in os.environ:
            if key not in env:
                mp.delenv(key)
        said = check_models(spec, cached=True)
        assert len(said) == 1 and f"model.base_url: cannot reach {url}" in said[0]
        with pytest.raises(SpecError, match="cannot reach"):
            check_models(spec, cached=False)


def test_a_run_the_cache_answers_whole_needs_no_endpoint(tmp_path: Path) -> None:
    """An openai endpoint on this machine (the model service serving the scripted model) answers a
    first run with --cache; with the endpoint gone, the same run is answered from the cache alone:
    the preflight says it cannot reach the endpoint, and the run goes on."""
    from tests.openai_stub import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    spec = tmp_path / "spec.yaml"
    model = f"model: {{backend: openai, base_url: '{url}'}}"
    spec.write_text(SPEC.replace("model: {backend: scripted}", model))
    cache = tmp_path / "answers"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPECSWARM_MODEL")}
    cmd = [sys.executable, "-m", "specswarm", "model", "serve", "--backend", "scripted", "--port", str(port)]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert server.stdout is not None and '"ready"' in server.stdout.readline()
        first, _ = plan(spec, tmp_path, "first", "--cache", str(cache))
    finally:
        server.terminate()
        server.wait(20)
    assert first["cache"]["misses"] > 0
    second, said = plan(spec, tmp_path, "second", "--cache", str(cache))
    assert second["cache"]["misses"] == 0 and second["cache"]["hits"] == first["cache"]["misses"]
    assert f"model.base_url: cannot reach {url}" in said and "going on with the answer cache" in said
