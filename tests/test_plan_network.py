"""The spec's network keys reach the launched peers, and a peer elsewhere can join a `plan` run.

The slow test runs `plan` in one network namespace and hand-started peers in another (a veth
pair between two namespaces it creates, 10.78.0.x addresses that exist only there).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from specswarm.errors import SpecError, SpecSwarmError
from specswarm.protocol.bodies import RunBody
from specswarm.protocol.events import make_run_event, write_event_log
from specswarm.protocol.identity import Identity
from specswarm.spec import load_spec
from specswarm.spec.addresses import parse_listen
from specswarm.swarm.group import read_group
from specswarm.swarm.launcher.groups import group_command, peer_entry
from specswarm.swarm.launcher.network import check_network, start_lines
from specswarm.swarm.launcher.prepare import prepare_run, start_of
from specswarm.swarm.launcher.procs import boot_addrs, build_peers, peer_command
from specswarm.swarm.peer import peer_config
from specswarm.transport.addrs import expand
from tests.netns import veth_pair
from tests.plankit import plan_env

SPEC = """\
name: lan
goal: Plan a relaxed Saturday afternoon in a city park
quorum: majority
roles:
  decomposer: {count: 1, strategies: [by sequence]}
  scorer: {count: 2}
  executor: {count: 1}
  observer: {count: 1}
tree: {max_depth: 1, min_children: 2, max_children: 3}
model: {backend: scripted}
budget: {seconds: 60, settle_seconds: 0.3, claim_timeout: 30}
access: {mode: open}
network:
  listen: /ip4/%(host)s/tcp/0
  mdns: true
"""


def _specswarm(
    prefix: tuple[str, ...], *args: str, env: dict[str, str], log: Path | None = None
) -> subprocess.Popen[str]:
    """``specswarm ARGS`` run with ``prefix`` (inside a namespace); stderr piped, or into ``log``."""
    with contextlib.ExitStack() as files:
        stderr = files.enter_context(log.open("w")) if log else subprocess.PIPE
        cmd = [*prefix, sys.executable, "-m", "specswarm", *args]
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=env)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=20)


def _spec(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text((SPEC % {"host": "127.0.0.1"}).replace("access: {mode: open}\n", "") + extra)
    return path


def _line(path: Path, key: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if f"{key}:" in text)


PEER = Identity(b"\x05" * 32).peer_id
BOOT = f"/ip4/10.9.0.1/tcp/4001/p2p/{PEER}"


def test_the_spec_refuses_what_is_no_listen_or_peer_address(tmp_path: Path) -> None:
    path = _spec(tmp_path, "").with_name("bad.yaml")
    path.write_text(_spec(tmp_path).read_text().replace("/ip4/127.0.0.1/tcp/0", "/ip4/localhost/tcp/0"))
    path.write_text(path.read_text() + "  bootstrap: [/ip4/10.9.0.1/tcp/4001]\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    listen, boot = _line(path, "listen"), _line(path, "bootstrap")
    assert str(info.value).splitlines() == [
        f"{path}:{listen}: network.listen: 'localhost' is not an ip4 address "
        "(expected /ip4/ADDRESS/tcp/PORT or /ip6/ADDRESS/tcp/PORT, e.g. /ip4/0.0.0.0/tcp/4001)",
        f"{path}:{boot}: network.bootstrap[0]: '/ip4/10.9.0.1/tcp/4001' is not a peer address "
        "(expected /ip4/ADDRESS/tcp/PORT/p2p/PEER_ID (or /ip6, /dns4, /dns6, /dns))",
    ]


def test_the_network_keys_reach_every_launched_peer(tmp_path: Path) -> None:
    """A wildcard listen host on consecutive fixed ports; bootstrap and mDNS on every command line."""
    text = _spec(tmp_path).read_text().replace("/ip4/127.0.0.1/tcp/0", "/ip4/0.0.0.0/tcp/40100")
    (tmp_path / "spec.yaml").write_text(text + f"  bootstrap: [{BOOT}]\n")
    spec = load_spec(tmp_path / "spec.yaml")
    peers = build_peers(spec, {}, tmp_path)
    assert [p.port for p in peers] == [40100, 40101, 40102, 40103, 40104]
    first, second = peers[0], peers[1]
    assert first.addr == f"/ip4/127.0.0.1/tcp/40100/p2p/{first.identity.peer_id}"  # dialled locally
    cmd = peer_command(second, boot_addrs(peers, second), tmp_path / "run.json", None)
    assert cmd[cmd.index("--listen") + 1] == "/ip4/0.0.0.0/tcp/40101" and "--mdns" in cmd
    joins = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "--join"]
    assert joins == [peers[2].addr, peers[3].addr, BOOT]
    run_file = tmp_path / "run.json"
    run_file.write_bytes(make_run_event(Identity(b"\x07" * 32), spec, nonce="n").to_bytes())
    entry = peer_entry(second, [], run_file, None, None)
    [config] = read_group(Path(group_command([second], [entry])[-1]))
    assert (config.listen, config.join, config.mdns) == ("/ip4/0.0.0.0/tcp/40101", (BOOT,), True)


def test_plan_refuses_a_listen_address_or_ports_it_cannot_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def problems(listen: str, extra: str = "") -> list[str]:
        text = _spec(tmp_path).read_text().replace("/ip4/127.0.0.1/tcp/0", listen)
        (tmp_path / "spec.yaml").write_text(text + extra)
        spec = load_spec(tmp_path / "spec.yaml")
        with pytest.raises(SpecError) as info:
            check_network(spec, len(spec.roster()))
        at = f"{tmp_path}/spec.yaml:{_line(tmp_path / 'spec.yaml', 'listen')}: network.listen: "
        return [line.replace(at, "") for line in str(info.value).splitlines()]

    assert problems("/ip4/198.51.100.7/tcp/0") == [
        "cannot listen on 198.51.100.7 here: Cannot assign requested address "
        "(expected an address of this machine, 0.0.0.0 for every interface, or 127.0.0.1)"
    ]
    assert problems("/ip4/127.0.0.1/tcp/65534") == [
        "ports 65534-65538 (one per peer, 5 peers) go past 65535 (expected a port up to 65531)"
    ]
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert problems(f"/ip4/127.0.0.1/tcp/{port}") == [
            f"ports {port}-{port + 4} (one per peer, 5 peers): {port} is taken: Address already in use "
            f"(expected 5 free ports from {port}, or port 0)"
        ]
    monkeypatch.delenv("SPECSWARM_SECRET", raising=False)
    [secret] = problems("/ip4/127.0.0.1/tcp/0", "access: {mode: secret}\n")
    assert secret.endswith(
        "access.mode: 'secret' needs the run's secret in $SPECSWARM_SECRET, which is not set "
        "(expected the shared secret in the environment of `plan`)"
    )


@pytest.mark.parametrize("mode", ["launcher", "open", "secret", "allowlist"])
def test_access_mode_decides_whom_the_run_event_admits(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SPECSWARM_SECRET", "s3cret")
    listed = f", peers: [{PEER}]" if mode == "allowlist" else ""
    access = f"access: {{mode: {mode}{listed}}}\n"
    spec = load_spec(_spec(tmp_path, access))
    run = prepare_run(start_of(spec, resume=None), events_path=tmp_path / "events.jsonl")
    body = run.run_event.body
    assert isinstance(body, RunBody)
    own = {p.identity.peer_id for p in build_peers(spec, run.keys.peers, run.workdir)}
    expected = {
        "launcher": run.keys.admission.public_key.hex(),
        "open": None,
        "secret": Identity.from_secret("s3cret", "admission").public_key.hex(),
        "allowlist": run.keys.admission.public_key.hex(),
    }[mode]
    assert body.admission == expected
    assert body.spec.access.peers == ((PEER, *sorted(own)) if mode == "allowlist" else ())
    run.keys.save(run.keys_file)
    with open(run.events_path, "w") as fh:
        write_event_log([run.run_event], fh)
    again = start_of(spec, resume=run.events_path)  # an unchanged spec: no SpecChangedError
    assert again.edits == () and prepare_run(again, events_path=None).run == run.run


def test_plan_says_how_to_observe_and_join_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def lines(listen: str, mode: str) -> list[str]:
        spec = load_spec(_spec(tmp_path, f"access: {{mode: {mode}}}\n"))
        return start_lines(spec, parse_listen(listen), 4001, PEER)

    observe = f"observe with: specswarm observe --join /ip4/10.0.0.5/tcp/4001/p2p/{PEER}"
    join = f"specswarm peer --role ROLE --join /ip4/10.0.0.5/tcp/4001/p2p/{PEER}"
    assert lines("/ip4/10.0.0.5/tcp/0", "launcher") == [
        observe,
        "only the launched peers take part (access.mode launcher); others may observe",
    ]
    assert lines("/ip4/10.0.0.5/tcp/0", "open") == [observe, f"join with: {join}"]
    secret = f"join with: SPECSWARM_SECRET=<the run's secret> {join}"
    assert lines("/ip4/10.0.0.5/tcp/0", "secret")[1] == secret
    monkeypatch.setattr("specswarm.transport.addrs.interface_hosts", lambda proto: ["10.0.0.5", "10.1.0.5"])
    assert lines("/ip4/0.0.0.0/tcp/4001", "open") == [
        observe,
        f"join with: {join}",
        "also reachable at: /ip4/10.1.0.5/tcp/4001",
    ]
    assert expand("/ip4/0.0.0.0/tcp/7/p2p/X", ["10.0.0.5"]) == ["/ip4/10.0.0.5/tcp/7/p2p/X"]
    assert expand("/ip6/::/tcp/7", []) == ["/ip6/::1/tcp/7"]
    assert expand("/ip4/10.0.0.5/tcp/7", ["10.1.0.5"]) == ["/ip4/10.0.0.5/tcp/7"]


def test_a_peer_on_a_fixed_port_may_wait_to_be_reached() -> None:
    """No --join, no --mdns: a peer with a port a run's network.bootstrap can name waits for it."""
    options = {"role": "executor", "spec": None, "join": [], "mdns": False, "key": None}
    config = peer_config(**options, listen="/ip4/127.0.0.1/tcp/4001", strategy=None, events=None)
    assert (config.run_event, config.join, config.mdns) == (None, (), False)
    with pytest.raises(SpecSwarmError, match=r"or --listen on a fixed port \(wait to be reached"):
        peer_config(**options, listen="/ip4/127.0.0.1/tcp/0", strategy=None, events=None)


@pytest.mark.slow
@pytest.mark.netns
def test_peers_in_another_namespace_join_a_plan_run_by_listen_bootstrap_and_mdns(tmp_path: Path) -> None:
    """`plan` in one namespace, on fixed ports of its network.listen address. In the other: an
    executor started first and waiting on a fixed port (the spec's network.bootstrap names it),
    an executor that joins with the `join with:` line `plan` prints, and an observer that finds
    the run by mDNS alone. Both executors take part (open access: their joins count)."""
    env = {**plan_env(), "SPECSWARM_TEST_MODEL_DELAY": "1.5"}  # a run long enough to be joined
    waiting, joining = Identity(bytes(range(32))), Identity(bytes(range(1, 33)))
    for name, key in (("waiting", waiting), ("joining", joining)):
        (tmp_path / f"{name}.key").write_text(key.seed.hex())
    out, seen, spec = tmp_path / "plan.json", tmp_path / "seen.json", tmp_path / "lan.yaml"
    outside: list[subprocess.Popen[str]] = []
    with veth_pair("10.78.0") as (here, there):
        boot = f"/ip4/{there.addr}/tcp/4001/p2p/{waiting.peer_id}"
        spec.write_text(SPEC.replace("%(host)s/tcp/0", f"{here.addr}/tcp/4101") + f"  bootstrap: [{boot}]\n")
        wait = f"peer --role executor --listen /ip4/{there.addr}/tcp/4001 --key {tmp_path / 'waiting.key'}"
        outside.append(_specswarm(there.prefix, *wait.split(), env=env, log=tmp_path / "waiting.log"))
        plan = _specswarm(here.prefix, "plan", str(spec), "-f", "json", "-o", str(out), env=env)
        try:
            assert plan.stderr is not None
            said = ""
            while "join with:" not in said and (line := plan.stderr.readline()):
                said += line
            joined = re.search(r"join with: specswarm peer --role ROLE --join (\S+)", said)
            assert joined and joined.group(1).startswith(f"/ip4/{here.addr}/tcp/4101/p2p/"), said
            join = f"peer --role executor --join {joined.group(1)} --key {tmp_path / 'joining.key'}"
            outside.append(_specswarm(there.prefix, *join.split(), env=env, log=tmp_path / "joining.log"))
            observe = f"observe --mdns -f json -o {seen}"
            outside.append(_specswarm(there.prefix, *observe.split(), env=env, log=tmp_path / "observer.log"))
            said += plan.communicate(timeout=60)[1]
            assert plan.returncode == 0, said
            with contextlib.suppress(subprocess.TimeoutExpired):
                outside[-1].wait(timeout=15)
        finally:
            for proc in [plan, *outside]:
                _stop(proc)
    assert seen.exists(), (tmp_path / "observer.log").read_text()[-2000:]
    result, observed = json.loads(out.read_text()), json.loads(seen.read_text())
    for key in (waiting, joining):
        assert {"peer": key.peer_id, "role": "executor"} in result["participants"]
    assert observed["complete"] and observed["content_digest"] == result["content_digest"]


def test_plan_of_a_secret_run_without_its_secret_is_one_line_and_exit_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SPECSWARM_SECRET"}
    env["SPECSWARM_MODEL_BACKEND"] = "scripted"
    spec = _spec(tmp_path, "access: {mode: secret}\n")
    done = subprocess.run(
        [sys.executable, "-m", "specswarm", "plan", str(spec)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "access.mode: 'secret' needs the run's secret in $SPECSWARM_SECRET" in done.stderr
