"""Peers forked from the launcher's preloaded fork server (specswarm/swarm/launcher/forked.py):
each is still a process of its own (session, stdout pipe, stderr log, environment, exit code,
signals), and a launched run's peers are forked by default on Linux and exec'd with
SPECSWARM_FORK=0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from specswarm.swarm.launcher import forked
from tests.plankit import PlanRun, parent_cmdline, plan_env

CLI = [sys.executable, "-m", "specswarm"]


async def _read_line(stream: trio.abc.ReceiveStream) -> bytes:
    buf = b""
    while b"\n" not in buf:
        chunk = await stream.receive_some(4096)
        if not chunk:
            break
        buf += chunk
    return buf


def test_a_forked_command_exits_with_its_code_and_writes_its_log(tmp_path: Path) -> None:
    log = tmp_path / "peer.log"
    log.write_text("before\n")

    async def main() -> int:
        proc = await forked.open_peer(
            [*CLI, "validate", str(tmp_path / "missing.yaml")], dict(os.environ), log
        )
        assert isinstance(proc, forked.ForkedProcess)
        return await proc.wait()

    assert trio.run(main) == 2
    text = log.read_text()
    assert text.startswith("before\n"), "the log is appended to"
    assert "missing.yaml" in text


def test_a_forked_service_has_its_session_environment_pipe_and_dies_by_signal(tmp_path: Path) -> None:
    env = dict(os.environ, SPECSWARM_MODEL_TOKEN="t0ken-of-this-test")

    async def main() -> tuple[dict[str, object], int, int, str, int | None]:
        cmd = [*CLI, "model", "serve", "--backend", "scripted", "--port", "0"]
        proc = await forked.open_peer(cmd, env, tmp_path / "serve.log")
        assert proc.stdout is not None
        with trio.fail_after(60):
            ready = json.loads(await _read_line(proc.stdout))
        sid = os.getsid(proc.pid)
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes()  # the fork server's, not the peer's
        assert b"t0ken-of-this-test" not in environ
        parent = parent_cmdline(proc.pid)
        running = proc.returncode
        proc.send_signal(signal.SIGKILL)
        with trio.fail_after(30):
            code = await proc.wait()
        return ready, sid, code, parent, running

    ready, sid, code, parent, running = trio.run(main)
    assert ready.get("event") == "ready"
    assert running is None
    assert code == -signal.SIGKILL
    assert "forkserver" in parent
    assert sid != os.getsid(0), "the peer has a session of its own"


def test_the_token_reaches_the_forked_process(tmp_path: Path) -> None:
    """The environment handed to open_peer is the one the command runs with (the service
    wants the token it was given: a request without it is refused)."""
    env = dict(os.environ, SPECSWARM_MODEL_TOKEN="another-t0ken")

    async def main() -> tuple[int, int]:
        cmd = [*CLI, "model", "serve", "--backend", "scripted", "--port", "0"]
        proc = await forked.open_peer(cmd, env, tmp_path / "serve.log")
        assert proc.stdout is not None
        with trio.fail_after(60):
            url = json.loads(await _read_line(proc.stdout))["url"]

        def ask(token: str) -> int:
            import urllib.error
            import urllib.request

            req = urllib.request.Request(url + "/models", headers={"Authorization": f"Bearer {token}"})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    return int(resp.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        good, bad = (
            await trio.to_thread.run_sync(ask, "another-t0ken"),
            await trio.to_thread.run_sync(ask, "x"),
        )
        proc.send_signal(signal.SIGTERM)
        with trio.fail_after(30):
            await proc.wait()
        return good, bad

    good, bad = trio.run(main)
    assert (good, bad) == (200, 401)


@pytest.mark.parametrize("fork", ["1", "0"])
def test_a_launched_run_forks_its_peers_unless_told_not_to(tmp_path: Path, fork: str) -> None:
    """Every seat's pid file names a live process while the run goes on; forked, its parent is
    the fork server; with SPECSWARM_FORK=0, the launcher itself."""
    env = plan_env() | {
        "SPECSWARM_FORK": fork,
        "SPECSWARM_MODEL_BACKEND": "scripted",
        "SPECSWARM_MODEL_SHARED": "0",
    }
    with PlanRun("goals/tiny.yaml", "--out", str(tmp_path / "plan.md"), env=env) as run:
        seat = "observer-0"
        pid = run.wait_pid(seat)
        parent = parent_cmdline(pid)
        code = run.wait(timeout=300)
    assert code == 0
    if fork == "1":
        assert "forkserver" in parent
    else:
        assert "specswarm plan" in parent


def test_fork_is_off_when_told() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "from specswarm.swarm.launcher import forked; print(forked.enabled())"],
        env=dict(os.environ, SPECSWARM_FORK="0"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"


def test_a_long_temp_dir_still_forks(tmp_path: Path) -> None:
    """A Unix socket's path has at most 107 bytes: a deep TMPDIR (a test's or a benchmark's
    work directory) must not stop the fork server (it did: every peer failed, the run exit 1)."""
    deep = tmp_path / ("a" * 40) / ("b" * 40) / ("c" * 20)
    deep.mkdir(parents=True)
    env = plan_env() | {
        "TMPDIR": str(deep),
        "SPECSWARM_MODEL_BACKEND": "scripted",
        "SPECSWARM_MODEL_SHARED": "0",
    }
    with PlanRun("goals/tiny.yaml", "--out", str(tmp_path / "plan.md"), env=env) as run:
        parent = parent_cmdline(run.wait_pid("observer-0"))
        code = run.wait(timeout=300)
    assert code == 0, run.stderr[-2000:]
    assert "forkserver" in parent


def test_peers_are_execd_when_the_fork_server_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise OSError("AF_UNIX path too long")

    monkeypatch.setattr(forked, "_ctx", broken)
    monkeypatch.setattr(forked, "_broken", None)
    monkeypatch.setenv(forked.FORK_ENV, "1")

    async def main() -> tuple[bool, int]:
        proc = await forked.open_peer(
            [*CLI, "validate", str(tmp_path / "none.yaml")], dict(os.environ), tmp_path / "l"
        )
        return isinstance(proc, forked.ForkedProcess), await proc.wait()

    was_forked, code = trio.run(main)
    assert not was_forked and code == 2
    assert forked._broken is not None and "path too long" in forked._broken
