"""The CI recipe of docs/examples/ci/plans.yml, run as written in a scratch Git repository.

Its two steps that do the work ("Generate the plan", "Commit the plan when its content
changed") run with bash, the scripted model standing in for the real one, and a bare
repository standing in for GitHub: the first run commits the plan, a second run of the
unchanged spec writes a byte-identical file and commits nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / "docs" / "examples" / "ci" / "plans.yml"
STEPS = ("Generate the plan", "Commit the plan when its content changed")


def _steps() -> list[str]:
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    by_name = {s.get("name"): s.get("run") for s in jobs["plan"]["steps"]}
    return [by_name[name] for name in STEPS]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def _run_steps(repo: Path, env: dict[str, str], which: slice = slice(None)) -> str:
    out = []
    for script in _steps()[which]:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script], cwd=repo, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        out.append(done.stdout + done.stderr)
    return "".join(out)


def test_the_ci_recipe_seeds_the_plan_then_commits_only_content_changes(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    remote, repo = tmp_path / "remote.git", tmp_path / "repo"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    _git(tmp_path, "clone", "-q", str(remote), str(repo))
    (repo / "goals").mkdir()
    shutil.copy(ROOT / "goals" / "tiny.yaml", repo / "goals" / "tiny.yaml")
    _git(repo, "add", "goals")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "spec")
    _git(repo, "push", "-q", "origin", "HEAD")
    bin_dir = tmp_path / "bin"  # `specswarm` as the recipe calls it: this checkout's
    bin_dir.mkdir()
    (bin_dir / "specswarm").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m specswarm "$@"\n')
    (bin_dir / "specswarm").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "SPECSWARM_MODEL_BACKEND": "scripted",
    }

    said = _run_steps(repo, env)
    assert "no committed plan yet" in said
    first = (repo / "plans" / "tiny.json").read_bytes()
    assert _git(remote, "log", "--format=%s").splitlines()[0] == "Regenerate the plan of goals/tiny.yaml"

    _run_steps(repo, env, slice(0, 1))  # generate again: the same file, byte for byte
    assert (repo / "new-plan.json").read_bytes() == first
    said = _run_steps(repo, env, slice(1, 2))
    assert "the plan's content did not change" in said
    assert not (repo / "new-plan.json").exists()
    assert len(_git(remote, "log", "--format=%s").splitlines()) == 2  # nothing new committed
    assert (repo / ".specswarm-cache").is_dir() and (repo / "plan-report.json").is_file()
