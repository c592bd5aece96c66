"""Fail fast on what is certain, heal what died: the launcher's pure rule of what the peers that
are left can still reach (reach.py), its restart policy and seat keeper (heal.py, with small real
processes), and a restarted peer's own event log (peer.py). The end-to-end faults through
`specswarm plan` are chaos scenarios (tests/chaos.py: restart_scorers, no_restart_scorers,
restart_executor, failing_template)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import trio

from specswarm.plan.fold import FoldState
from specswarm.plan.views import child_id
from specswarm.protocol.identity import Identity
from specswarm.swarm.launcher.heal import RestartPolicy, Seats, keep
from specswarm.swarm.launcher.procs import PeerProc, last_words
from specswarm.swarm.launcher.progress import Progress
from specswarm.swarm.launcher.reach import out_of_reach
from specswarm.swarm.peer import DETERMINISTIC_EXIT, EventLogFile
from specswarm.testing.synth import Swarm, minimal_spec


def _peer(tmp: Path, role: str, i: int, *, lost: bool = False, exited: int | None = None) -> PeerProc:
    p = PeerProc(i, role, Identity.generate(), 0, None, tmp / f"{role}-{i}.jsonl", tmp / f"{role}-{i}.log")
    p.seat, p.lost, p.exited = f"{role}-{i}", lost, exited
    return p


def _seats(tmp: Path, dead: dict[str, int]) -> list[PeerProc]:
    """3 scorers, 2 decomposers, 2 executors, an observer; ``dead``: role -> how many are lost."""
    out = []
    for role, n in (("observer", 1), ("scorer", 3), ("executor", 2), ("decomposer", 2)):
        out += [
            _peer(tmp, role, i, lost=i < dead.get(role, 0), exited=-9 if i < dead.get(role, 0) else None)
            for i in range(n)
        ]
    return out


def _swarm(quorum: object = 2) -> Swarm:
    tree = {"max_depth": 2, "min_children": 2, "max_children": 4, "max_revisions": 1, "approve_threshold": 60}
    return Swarm(spec=minimal_spec(quorum=quorum, tree=tree), seed=3)


def test_fewer_live_scorers_than_the_quorum_is_out_of_reach_while_a_node_is_to_split(tmp_path: Path) -> None:
    sw = _swarm()
    plan = FoldState(sw.events).plan()
    assert out_of_reach(plan, _seats(tmp_path, {"scorer": 1})) == []  # 2 left: the quorum
    short = out_of_reach(plan, _seats(tmp_path, {"scorer": 2}))
    assert short == [
        "scorers: 2 needed (the quorum; 1 node(s) still to split), 1 alive (scorer-2); "
        "dead: scorer-0 (exit -9), scorer-1 (exit -9)"
    ]
    # once every split is accepted, only executors are needed: scorers may all be gone
    root = sw.accept("root", ["Lisbon", "Sintra"], leaf=True)
    plan = FoldState(sw.events).plan()
    assert plan.nodes[child_id(root.id, 0)].leaf
    assert out_of_reach(plan, _seats(tmp_path, {"scorer": 3})) == []


def test_a_peer_waiting_for_its_restart_or_merely_quiet_still_counts(tmp_path: Path) -> None:
    plan = FoldState(_swarm().events).plan()
    peers = _seats(tmp_path, {})
    for p in peers:
        if p.role == "scorer":
            p.exited = -9  # dead, but its keeper will start it again: not lost
    assert out_of_reach(plan, peers) == []


def test_no_decomposer_is_out_of_reach_only_for_a_node_without_a_live_proposal(tmp_path: Path) -> None:
    sw = _swarm()
    prop = sw.propose(sw.peers["decomposer"][0], "root", ["Lisbon", "Sintra"], leaf=True)
    no_decomposers = _seats(tmp_path, {"decomposer": 2})
    # the pending split may still be accepted: its children are leaves, no decomposer needed
    assert out_of_reach(FoldState(sw.events).plan(), no_decomposers) == []
    for scorer in sw.peers["scorer"][:2]:
        sw.vote(scorer, prop, False, 20)  # rejected (2 > n - q = 1): a revision is needed
    short = out_of_reach(FoldState(sw.events).plan(), no_decomposers)
    assert len(short) == 1 and short[0].startswith(
        "decomposers: 1 needed (1 node(s) with no live proposal), 0 alive"
    )


def test_no_executor_is_out_of_reach_while_the_plan_is_incomplete(tmp_path: Path) -> None:
    sw = _swarm(quorum="majority")
    sw.accept("root", ["Lisbon", "Sintra"], leaf=True)
    plan = FoldState(sw.events).plan()
    short = out_of_reach(plan, _seats(tmp_path, {"executor": 2}))
    assert short == [
        "executors: 1 needed (2 leaf/leaves open), 0 alive; dead: executor-0 (exit -9), executor-1 (exit -9)"
    ]
    sw.finish_leaves()
    assert out_of_reach(FoldState(sw.events).plan(), _seats(tmp_path, {"executor": 2, "scorer": 3})) == []


def test_restart_policy(tmp_path: Path) -> None:
    p = _peer(tmp_path, "scorer", 1, exited=-9)
    policy = RestartPolicy()
    assert policy.limit == 3 and policy.why_not(p) is None
    p.restarts = 3
    assert policy.why_not(p) == "restarts used up (3/3)"
    p.restarts = 0
    assert RestartPolicy(enabled=False).why_not(p) == "restarts are off (--no-restart)"
    p.exited = DETERMINISTIC_EXIT
    assert policy.why_not(p) == "it would fail the same way again"
    assert policy.why_not(_peer(tmp_path, "observer", 0, exited=-9)) == "the observer is not restarted"


def _keep(p: PeerProc, script: str, policy: RestartPolicy) -> tuple[list[str], float]:
    """Run ``p``'s seat with a tiny Python program as its process; (progress lines, seconds)."""
    lines: list[str] = []

    class Lines:
        def write(self, text: str) -> None:
            lines.append(text)

        def flush(self) -> None:
            pass

        def isatty(self) -> bool:
            return False

    seats = Seats(policy, Progress(False, Lines()))  # type: ignore[arg-type]
    started = time.monotonic()
    trio.run(keep, p, lambda: [sys.executable, "-c", script], seats)
    return [ln.split("] ", 1)[1].strip() for ln in lines if "] " in ln], time.monotonic() - started


def test_a_seat_whose_process_keeps_dying_is_restarted_three_times_with_backoff(tmp_path: Path) -> None:
    p = _peer(tmp_path, "scorer", 1)
    # each start appends a line to a file: four starts, then the seat is lost
    starts = tmp_path / "starts"
    script = f"open({str(starts)!r}, 'a').write('x'); import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    said, took = _keep(p, script, RestartPolicy(backoff=(0.1, 0.2, 0.4)))
    assert starts.read_text() == "xxxx"
    assert p.restarts == 3 and p.deaths == [-9] * 4 and p.lost and p.exited == -9
    assert said == [
        "scorer-1 exited -9; restarting (1/3) in 0.1 s",
        "scorer-1 exited -9; restarting (2/3) in 0.2 s",
        "scorer-1 exited -9; restarting (3/3) in 0.4 s",
        "scorer-1 exited -9; not restarted: restarts used up (3/3)",
    ]
    assert took >= 0.7  # the backoff was waited
    assert p.log.read_text().count("--- restart ") == 3


def test_a_seat_that_exits_0_or_deterministically_is_not_restarted(tmp_path: Path) -> None:
    p = _peer(tmp_path, "scorer", 1)
    said, _ = _keep(p, "pass", RestartPolicy())
    assert (p.exited, p.restarts, p.deaths, p.lost, said) == (0, 0, [], False, [])
    q = _peer(tmp_path, "executor", 2)
    script = (
        "import sys; print('warning: noise', file=sys.stderr); "
        "print('prompts.execute: boom', file=sys.stderr); sys.exit(2)"
    )
    said, _ = _keep(q, script, RestartPolicy())
    assert (q.exited, q.restarts, q.lost, said) == (DETERMINISTIC_EXIT, 0, True, [])
    assert last_words(q) == "prompts.execute: boom"
    r = _peer(tmp_path, "scorer", 3)
    said, _ = _keep(r, "import sys; sys.exit(1)", RestartPolicy(enabled=False))
    assert (r.exited, r.restarts, r.lost) == (1, 0, True)
    assert said == ["scorer-3 exited 1; not restarted: restarts are off (--no-restart)"]


def test_a_seat_that_could_not_listen_on_its_port_is_restarted_on_another(tmp_path: Path) -> None:
    p = _peer(tmp_path, "scorer", 1)
    p.port = 1
    said = "error: cannot listen on /ip4/127.0.0.1/tcp/1: in use"
    script = f"import sys; print({said!r}, file=sys.stderr); sys.exit(1)"
    _keep(p, script, RestartPolicy(backoff=(0.01,)))
    assert p.restarts == 1 and p.port != 1 and p.lost


def test_the_event_log_appends_only_what_it_does_not_hold_and_drops_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "peer.jsonl"
    path.write_text('{"a":1}\n{"b":2}\n{"c":')  # killed in the middle of the third line
    log = EventLogFile.open(path)
    log.write('{"b":2}\n')  # preloaded from this very log: not written again
    log.write('{"d":4}\n')
    log.flush()
    log.close()
    assert path.read_text() == '{"a":1}\n{"b":2}\n{"d":4}\n'
    fresh = tmp_path / "new.jsonl"
    log = EventLogFile.open(fresh)
    log.write('{"a":1}\n')
    log.close()
    assert fresh.read_text() == '{"a":1}\n'


def test_plan_has_a_no_restart_switch() -> None:
    from typer.testing import CliRunner

    from specswarm.cli.app import app

    out = CliRunner().invoke(app, ["plan", "--help"]).output
    assert "--no-restart" in out


def test_a_port_left_in_time_wait_by_a_dead_peer_is_free_again_but_a_listened_one_is_not() -> None:
    import socket

    import multiaddr

    from specswarm.errors import TransportError
    from specswarm.transport.p2p import _check_port_free

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    listen = f"/ip4/127.0.0.1/tcp/{port}"
    with pytest.raises(TransportError, match=f"^cannot listen on {listen}: "):
        _check_port_free(listen, multiaddr.Multiaddr(listen))  # someone listens there
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the listening side closes first: its end of the connection is in TIME_WAIT
    client.close()
    server.close()
    _check_port_free(listen, multiaddr.Multiaddr(listen))


def test_the_peers_have_longer_to_agree_in_a_swarm_wider_than_the_announcers() -> None:
    """Repairs wait for announcements, which thin out as the swarm grows: at 32 peers a join was
    still missing at one peer when the launcher's 15 s ran out."""
    from specswarm.swarm.cadence import ANNOUNCERS
    from specswarm.swarm.launcher.watch import AGREE_GRACE, agree_grace

    assert agree_grace(4) == agree_grace(ANNOUNCERS) == AGREE_GRACE
    assert agree_grace(4 * ANNOUNCERS) == 4 * AGREE_GRACE


def test_a_group_whose_peer_could_not_listen_on_its_port_is_restarted_on_another(tmp_path: Path) -> None:
    """At 64 peers in 8 processes a group's port was taken by another peer's outgoing connection
    before the group listened; restarted on the same port, the group died four times."""
    from specswarm.swarm.launcher.groups import keep_group

    lead, other = _peer(tmp_path, "scorer", 1), _peer(tmp_path, "executor", 2)
    lead.port, other.port = 11, 12
    said = "error: cannot listen on /ip4/127.0.0.1/tcp/12: in use"
    script = f"import sys; print({said!r}, file=sys.stderr); sys.exit(1)"
    seats = Seats(RestartPolicy(backoff=(0.01,)), Progress(False, open(tmp_path / "progress", "w")))
    trio.run(keep_group, [lead, other], lambda: [sys.executable, "-c", script], seats)
    assert lead.restarts == 1 and lead.lost
    assert lead.port == 11 and other.port != 12  # only the port that was taken moves
