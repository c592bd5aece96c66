"""Chaos harness: real ``specswarm peer`` processes on loopback (real libp2p, scripted model).

A :class:`ChaosSwarm` builds a run (run event, admission key, seeded identities), starts peers
as separate OS processes exactly as ``specswarm plan`` does (:func:`specswarm.swarm.launcher.peer_command`),
reads their JSON status lines in background threads, can SIGKILL any of them, and waits for
*conditions* (over status lines and the peers' event logs) — never for a fixed time.

The scenarios live here too (plain functions, one per kind of fault), so that both the pytest
suite (tests/test_chaos.py) and ``bench/chaos_report.py`` run the very same code. A scenario
raises AssertionError when an invariant breaks and returns a short dict of what happened.

Invariants checked after every fault: the plan converges; every surviving peer and the observer
report one and the same complete digest; the observer's event log folds to that digest; and
every proposal that was accepted when the fault struck is still accepted at the end. These
peers are started by the harness itself, so a peer killed here stays dead (nothing restarts it).

The healing scenarios (``restart_scorers``, ``restart_executor``, ``no_restart_scorers``,
``no_restart_executor``) go through ``specswarm plan`` instead (tests/plankit.py) and kill the
launcher's own peers: by default the launcher restarts them and the plan converges with them
taking part again; with ``--no-restart`` it stops within seconds, naming the role it is short
of. Each returns the seconds from the fault to what followed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specswarm.plan.fold import FoldState, Plan
from specswarm.protocol.events import Event, admit, check_event, make_run_event, read_event_log
from specswarm.protocol.identity import Identity
from specswarm.swarm.launcher import PeerProc, free_port, peer_command
from tests.plankit import PlanRun, plan_env, read_report
from tests.swarmkit import swarm_spec

CONVERGE_TIMEOUT = 120.0
START_TIMEOUT = 60.0
DEFAULT = object()


def chaos_seeds() -> list[int]:
    """Seeds from ``SPECSWARM_CHAOS_SEEDS``: a count N (seeds 0..N-1) or a comma list; default 2."""
    raw = os.environ.get("SPECSWARM_CHAOS_SEEDS", "2").strip()
    if "," in raw:
        return [int(s) for s in raw.split(",") if s.strip()]
    return list(range(int(raw)))


@dataclass
class ChaosPeer:
    spec: PeerProc
    popen: subprocess.Popen[bytes]
    status: dict[str, Any] = field(default_factory=dict)
    lines: int = 0
    killed: bool = False
    reader: threading.Thread | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def role(self) -> str:
        return self.spec.role

    @property
    def peer_id(self) -> str:
        return self.spec.identity.peer_id

    @property
    def alive(self) -> bool:
        return not self.killed and self.popen.poll() is None

    def published(self) -> int:
        return int(self.status.get("counters", {}).get("published", 0))

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for raw in self.popen.stdout:
            try:
                self.status = json.loads(raw)
            except ValueError:
                continue
            self.lines += 1


class ChaosSwarm:
    """One run of real peer processes. Use as a context manager: it always stops every process."""

    def __init__(
        self,
        workdir: Path,
        spec: dict[str, Any],
        seed: int,
        *,
        secret: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.seed = seed
        self.rng = random.Random(f"chaos:{seed}")
        self.spec = spec
        self.secret = secret
        launcher = self.identity()
        if secret is not None:  # access.mode secret: the admission key is derived from the secret
            self.admission_key: Identity | None = Identity.from_secret(secret, "admission")
        elif spec["access"]["mode"] == "allowlist":
            self.admission_key = None
        else:
            self.admission_key = self.identity()
        self.run_event = make_run_event(
            launcher,
            spec,
            nonce=f"chaos-{seed}",
            admission=self.admission_key.public_key.hex() if self.admission_key else None,
        )
        self.run_file = workdir / "run.json"
        self.run_file.write_text(self.run_event.to_bytes().decode())
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("SPECSWARM_MODEL_")
            and k != "SPECSWARM_SECRET"
            and not k.startswith("SPECSWARM_TEST_")
        }
        self.env["PYTHONUNBUFFERED"] = "1"
        self.env.update(env or {})
        self.peers: list[ChaosPeer] = []
        self._offsets: dict[Path, int] = {}
        self._state = FoldState([self.run_event])

    # -- building and starting peers ---------------------------------------------------------
    def identity(self) -> Identity:
        return Identity(bytes(self.rng.getrandbits(8) for _ in range(32)))

    def new_peer(self, role: str, strategy: str | None = None, identity: Identity | None = None) -> PeerProc:
        index = len(self.peers)
        name = f"{role}-{index}"
        return PeerProc(
            index,
            role,
            identity or self.identity(),
            free_port(),
            strategy,
            self.workdir / f"{name}.jsonl",
            self.workdir / f"{name}.log",
        )

    def admission_for(self, p: PeerProc) -> str | None:
        if self.admission_key is None or self.secret is not None:
            return None  # allowlist: nothing to sign; secret: the peer derives it from its env
        return admit(self.admission_key, self.run_event.run, p.identity.peer_id, p.role)

    def start(
        self,
        p: PeerProc,
        *,
        boot: list[str] | None = None,
        admission: Any = DEFAULT,
        with_run_file: bool = True,
        env: dict[str, str] | None = None,
    ) -> ChaosPeer:
        """Start ``p`` as a process. ``boot``: addresses to --join (default: the first and the
        latest started peer). ``with_run_file=False``: the peer only joins and learns the run."""
        if boot is None:
            boot = list(dict.fromkeys(x.spec.addr for x in (self.peers[:1] + self.peers[-1:])))
        adm = self.admission_for(p) if admission is DEFAULT else admission
        cmd = peer_command(p, boot, self.run_file, adm)
        if not with_run_file:
            i = cmd.index("--run-file")
            del cmd[i : i + 2]
        penv = dict(self.env)
        if self.secret is not None:
            penv["SPECSWARM_SECRET"] = self.secret
        penv.update(env or {})
        popen = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=open(p.log, "wb"),
            stdin=subprocess.DEVNULL,
            env=penv,
            start_new_session=True,
        )
        peer = ChaosPeer(p, popen)
        peer.reader = threading.Thread(target=peer._read, daemon=True, name=p.name)
        peer.reader.start()
        self.peers.append(peer)
        return peer

    def start_declared(
        self, *, star: bool = False, first_role: str | None = None, identities: list[Identity] | None = None
    ) -> list[ChaosPeer]:
        """Start the peers the spec declares. ``star``: every peer bootstraps from the first one
        only (whose role is ``first_role``, default the observer). ``identities``: use these, in order."""
        roles = self.spec["roles"]
        strategies = roles["decomposer"].get("strategies") or ["by parts"]
        plan: list[tuple[str, str | None]] = []
        for role in ("observer", "scorer", "executor", "decomposer"):
            for i in range(int(roles.get(role, {}).get("count", 0))):
                plan.append((role, strategies[i % len(strategies)] if role == "decomposer" else None))
        if first_role is not None:
            first = next(x for x in plan if x[0] == first_role)
            plan.remove(first)
            plan.insert(0, first)
        started = []
        given = list(identities or [])
        for role, strategy in plan:
            p = self.new_peer(role, strategy, given.pop(0) if given else None)
            boot = [self.peers[0].spec.addr] if star and self.peers else None
            started.append(self.start(p, boot=boot))
        return started

    def kill(self, peer: ChaosPeer) -> None:
        """SIGKILL: no cleanup, no goodbye."""
        peer.killed = True
        peer.popen.send_signal(signal.SIGKILL)
        peer.popen.wait(timeout=10)

    def close(self) -> dict[str, int | None]:
        """SIGTERM every live peer (SIGKILL after 15 s); returns exit codes of those stopped."""
        codes: dict[str, int | None] = {}
        live = [p for p in self.peers if p.popen.poll() is None]
        for p in live:
            p.popen.send_signal(signal.SIGTERM)
        for p in live:
            try:
                codes[p.name] = p.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.popen.kill()
                p.popen.wait()
                codes[p.name] = None
        for p in self.peers:
            if p.popen.stdout is not None:
                p.popen.stdout.close()
        return codes

    def __enter__(self) -> ChaosSwarm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- observing -----------------------------------------------------------------------------
    def alive(self) -> list[ChaosPeer]:
        return [p for p in self.peers if p.alive]

    def of_role(self, role: str) -> list[ChaosPeer]:
        return [p for p in self.peers if p.role == role]

    @property
    def observer(self) -> ChaosPeer:
        return self.of_role("observer")[0]

    def _tail(self, path: Path, state: FoldState, key: Any = None) -> None:
        key = key or path
        try:
            with open(path, "rb") as fh:
                fh.seek(self._offsets.get(key, 0))
                data = fh.read()
        except FileNotFoundError:  # not written yet, or gone between two looks
            return
        end = data.rfind(b"\n") + 1
        self._offsets[key] = self._offsets.get(key, 0) + end
        for line in data[:end].splitlines():
            event, _ = check_event(line, self.run_event.run)
            if event is not None:
                state.apply(event)

    def union(self) -> Plan:
        """Fold of every event any peer has written to its log so far (killed peers included)."""
        for p in self.peers:
            self._tail(p.spec.events, self._state)
        return self._state.plan()

    def observer_plan(self) -> Plan:
        """The plan as the (first) observer holds it now: what the swarm as a whole has heard."""
        if not hasattr(self, "_obs_state"):
            self._obs_state = FoldState([self.run_event])
        self._tail(self.observer.spec.events, self._obs_state, key=("observer", self.observer.spec.events))
        return self._obs_state.plan()

    def union_events(self) -> list[Event]:
        self.union()
        return self._state.events()

    def observer_events(self) -> list[Event]:
        return [
            e
            for line in self.observer.spec.events.read_bytes().splitlines()
            if (e := check_event(line, self.run_event.run)[0]) is not None
        ]

    def accepted(self) -> set[str]:
        return {n.accepted for n in self.union().walk() if n.accepted}

    def wait_for(self, cond: Callable[[], Any], timeout: float, what: str) -> Any:
        """Poll ``cond`` (cheap: status lines and log tails) until it is truthy."""
        deadline = time.monotonic() + timeout
        while True:
            value = cond()
            if value:
                return value
            dead = [p.name for p in self.peers if not p.killed and p.popen.poll() is not None]
            if dead:
                raise AssertionError(
                    f"while waiting for {what}: peer(s) exited: {dead}; " + self._log_tail(dead[0])
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; {self.describe()}")
            time.sleep(0.02)

    def _log_tail(self, name: str) -> str:
        p = next(x for x in self.peers if x.name == name)
        return p.spec.log.read_text(errors="replace")[-1500:]

    def describe(self) -> str:
        plan = self.union()
        rows = [
            f"{p.name}{'(killed)' if p.killed else ''}: complete={p.status.get('complete')} "
            f"digest={str(p.status.get('digest'))[:10]} events={p.status.get('events')} "
            f"peers={p.status.get('peers')}"
            for p in self.peers
        ]
        stuck = [p for p in self.alive() if not p.status.get("complete")]
        tails = "".join(f"\n--- log of {p.name} (end) ---\n{self._log_tail(p.name)}" for p in stuck[:2])
        return f"union progress {plan.progress()} complete={plan.complete}; " + "; ".join(rows) + tails

    def wait_started(self, peers: list[ChaosPeer] | None = None, timeout: float = START_TIMEOUT) -> None:
        """Until every given peer printed a status line (it runs the node and knows the run)."""
        group = peers or self.alive()
        self.wait_for(lambda: all(p.lines > 0 for p in group), timeout, "peers to start")

    def converged_digest(self) -> str | None:
        alive = self.alive()
        digests = {p.status.get("digest") for p in alive}
        if alive and all(p.status.get("complete") for p in alive) and len(digests) == 1:
            return digests.pop()
        return None

    def wait_converged(self, timeout: float = CONVERGE_TIMEOUT) -> str:
        return str(
            self.wait_for(self.converged_digest, timeout, "every live peer to report one complete digest")
        )

    def check_final(self, digest: str, accepted_before: set[str]) -> Plan:
        """The invariants every scenario ends with. Returns the observer's final plan."""
        alive = self.alive()
        assert self.observer in alive, "the observer must survive"
        assert {p.status["digest"] for p in alive} == {digest}
        plan = FoldState(self.observer_events()).plan()
        assert plan.complete and plan.digest == digest
        final_accepted = {n.accepted for n in plan.walk() if n.accepted}
        lost = accepted_before - final_accepted
        assert not lost, f"lost accepted proposals: {lost}"
        # exactly one counted result per leaf, and every leaf has it
        assert all(n.result is not None for n in plan.leaves())
        return plan


def chaos_spec(
    *,
    decomposers: int = 1,
    scorers: int = 1,
    executors: int = 1,
    quorum: Any = "majority",
    max_depth: int = 2,
    settle: float = 0.3,
) -> dict[str, Any]:
    spec = swarm_spec(
        decomposers=decomposers,
        scorers=scorers,
        executors=executors,
        observers=1,
        max_depth=max_depth,
        quorum=quorum,
        settle_seconds=settle,
        seconds=300.0,
    )
    spec["name"] = "chaos"
    return spec


def results_per_leaf(events: list[Event]) -> Counter[str]:
    return Counter(e.body.leaf for e in events if e.kind == "result")


# ----------------------------------------------------------------------------------- scenarios
# Each: (workdir, seed) -> dict. The seed picks the victim and the moment it dies.


def kill_decomposer(workdir: Path, seed: int) -> dict[str, Any]:
    """SIGKILL a decomposer after it has published part of its proposals (the others take over)."""
    spec = chaos_spec(decomposers=2, scorers=1, executors=1, quorum=1)
    with ChaosSwarm(workdir, spec, seed) as swarm:
        swarm.start_declared()
        victim = swarm.rng.choice(swarm.of_role("decomposer"))
        after = swarm.rng.choice(["first proposal", "root accepted", "second proposal"])

        def mine() -> int:
            return sum(1 for e in swarm.union_events() if e.kind == "proposal" and e.author == victim.peer_id)

        def root_accepted() -> bool:
            return (r := swarm.union().root) is not None and r.accepted is not None

        def children_proposed() -> bool:  # the victim may own no child: then every child is proposed
            plan = swarm.union()
            return root_accepted() and all(plan.nodes[c].proposals for c in plan.nodes["root"].children)

        if after == "first proposal":
            swarm.wait_for(lambda: mine() >= 1, 60, "the victim's first proposal")
        elif after == "root accepted":
            swarm.wait_for(root_accepted, 60, "root accepted")
        else:
            swarm.wait_for(lambda: mine() >= 2 or children_proposed(), 60, "the victim's second proposal")
        accepted = swarm.accepted()
        proposals = mine()
        swarm.kill(victim)
        digest = swarm.wait_converged()
        swarm.check_final(digest, accepted)
        return {"victim": victim.name, "after": after, "victim_proposals": proposals}


def kill_scorer(workdir: Path, seed: int) -> dict[str, Any]:
    """SIGKILL one of 3 scorers (quorum 2): the other two still accept splits."""
    spec = chaos_spec(decomposers=1, scorers=3, executors=1, quorum=2)
    with ChaosSwarm(workdir, spec, seed) as swarm:
        swarm.start_declared()
        victim = swarm.rng.choice(swarm.of_role("scorer"))
        votes = swarm.rng.randint(0, 2)

        def mine() -> int:
            return sum(1 for e in swarm.union_events() if e.kind == "vote" and e.author == victim.peer_id)

        swarm.wait_for(lambda: mine() >= votes and victim.lines > 0, 60, f"the victim's vote #{votes}")
        accepted = swarm.accepted()
        swarm.kill(victim)
        digest = swarm.wait_converged()
        plan = swarm.check_final(digest, accepted)
        # splits accepted after the kill were carried by the two survivors
        late = {n.accepted for n in plan.walk() if n.accepted} - accepted
        for n in plan.walk():
            if n.accepted in late:
                prop = n.accepted_proposal
                assert prop is not None
                assert victim.peer_id not in {v.author for v in prop.votes if v.approve} or prop.approvals > 2
        return {"victim": victim.name, "after_votes": votes, "accepted_after_kill": len(late)}


def kill_executor(workdir: Path, seed: int) -> dict[str, Any]:
    """SIGKILL an executor while it holds a claim: another supersedes it; one result per leaf."""
    spec = chaos_spec(decomposers=1, scorers=1, executors=2, quorum=1, max_depth=1, settle=1.0)
    with ChaosSwarm(workdir, spec, seed) as swarm:
        swarm.start_declared()
        victim = swarm.rng.choice(swarm.of_role("executor"))
        # "holding": the swarm (the observer) has heard the victim's claim and it is the winning one
        claim = swarm.wait_for(lambda: _held_claim(swarm, victim), 60, "the victim to hold a claim")
        accepted = swarm.accepted()
        swarm.kill(victim)
        digest = swarm.wait_converged()
        plan = swarm.check_final(digest, accepted)
        leaf = plan.nodes[claim.body.leaf]
        events = swarm.observer_events()
        victim_results = [
            e for e in events if e.kind == "result" and e.author == victim.peer_id and e.body.leaf == leaf.id
        ]
        assert leaf.result is not None
        if not victim_results:  # it died before executing: someone superseded its claim
            assert leaf.result.author != victim.peer_id
            assert any(c.supersedes == claim.id and c.live for c in leaf.claims), leaf.claims
            assert not next(c for c in leaf.claims if c.id == claim.id).live
            assert results_per_leaf(events)[leaf.id] == 1
        return {"victim": victim.name, "leaf": leaf.id, "victim_finished_first": bool(victim_results)}


def _held_claim(swarm: ChaosSwarm, victim: ChaosPeer) -> Event | None:
    """The victim's claim that wins a leaf without a result, in the observer's plan."""
    plan = swarm.observer_plan()
    for leaf in plan.leaves():
        if leaf.result is None and leaf.claim:
            view = next(c for c in leaf.claims if c.id == leaf.claim)
            if view.author == victim.peer_id:
                return swarm._obs_state.get(view.id)
    return None


def kill_first_peer(workdir: Path, seed: int) -> dict[str, Any]:
    """Every peer bootstrapped from the first one only; SIGKILL it: peer exchange avoids a partition."""
    spec = chaos_spec(decomposers=1, scorers=2, executors=1, quorum=1)
    rng = random.Random(f"first:{seed}")
    first_role = rng.choice(["scorer", "executor"])
    if first_role == "executor":
        spec = chaos_spec(decomposers=1, scorers=1, executors=2, quorum=1)
    with ChaosSwarm(workdir, spec, seed) as swarm:
        swarm.start_declared(star=True, first_role=first_role)
        first = swarm.peers[0]
        after = swarm.rng.choice(["everyone bootstrapped", "root accepted"])
        # "bootstrapped from it": every other peer has reached the first one (a peer killed before
        # anyone reached it leaves nobody anything to exchange: that would be no swarm at all)
        swarm.wait_for(
            lambda: all(int(p.status.get("peers", 0)) >= 1 for p in swarm.peers[1:]),
            60,
            "every peer to reach the first one",
        )
        if after == "root accepted":
            swarm.wait_for(lambda: (r := swarm.union().root) is not None and r.accepted, 60, "root accepted")
        accepted = swarm.accepted()
        swarm.kill(first)
        digest = swarm.wait_converged()
        swarm.check_final(digest, accepted)
        return {"first": first.name, "after": after}


def late_joiners(workdir: Path, seed: int) -> dict[str, Any]:
    """An executor that joins mid-run (knowing one address, learning the run from the swarm) and an
    observer that joins after convergence: both reach the observer's digest."""
    spec = chaos_spec(decomposers=1, scorers=1, executors=1, quorum=1)
    with ChaosSwarm(workdir, spec, seed) as swarm:
        swarm.start_declared()
        when = swarm.rng.choice(["root accepted", "first result"])
        if when == "root accepted":
            swarm.wait_for(lambda: (r := swarm.union().root) is not None and r.accepted, 60, "root accepted")
        else:
            swarm.wait_for(lambda: any(n.result for n in swarm.union().leaves()), 60, "a first result")
        accepted = swarm.accepted()
        contact = swarm.rng.choice([p for p in swarm.alive() if p.role != "observer"])
        mid = swarm.start(swarm.new_peer("executor"), boot=[contact.spec.addr], with_run_file=False)
        digest = swarm.wait_converged()
        swarm.check_final(digest, accepted)
        assert mid.status["digest"] == digest
        late_contact = swarm.rng.choice(swarm.alive())
        late = swarm.start(swarm.new_peer("observer"), boot=[late_contact.spec.addr], with_run_file=False)
        swarm.wait_for(lambda: late.status.get("digest") == digest, 60, "the late observer to catch up")
        assert late.published() == 0
        assert swarm.observer.status["digest"] == digest
        return {"mid_joined_after": when, "mid_published": mid.published()}


def gossip_loss(workdir: Path, seed: int) -> dict[str, Any]:
    """Every peer drops 20 % of received gossip (test-only knob): anti-entropy repairs it."""
    spec = chaos_spec(decomposers=2, scorers=2, executors=1, quorum=1)
    env = {"SPECSWARM_TEST_GOSSIP_LOSS": "0.2", "SPECSWARM_TEST_GOSSIP_SEED": str(seed)}
    with ChaosSwarm(workdir, spec, seed, env=env) as swarm:
        swarm.start_declared()
        digest = swarm.wait_converged()
        swarm.check_final(digest, set())
        lost = sum(int(p.status["counters"]["dropped"].get("test loss", 0)) for p in swarm.peers)
        synced = sum(int(p.status["counters"]["synced_events"]) for p in swarm.peers)
        assert lost > 0, "the loss knob dropped nothing"
        assert synced > 0, "anti-entropy repaired nothing"
        return {"lost": lost, "synced": synced}


# ---------------------------------------------------------------- healing: through `specswarm plan`

HEAL_FAIL_FAST = 15.0
"""With --no-restart, `specswarm plan` must have exited this many seconds after the fatal kill."""
HEAL_WAIT = 240.0
"""How long a healing scenario waits for a moment or for the run's end (generous: these are
whole launched swarms, and a loaded 2-core machine runs them several times slower)."""


def heal_spec(
    workdir: Path, *, scorers: int = 3, executors: int = 1, quorum: Any = 2, depth: int = 2
) -> Path:
    """A small spec for a launched run (scripted model), written into ``workdir``. Its
    ``model_weight`` 0.5 makes every scorer rate every split it does not veto (at the default
    0.2 a scorer asks the model only near the threshold and votes at once), so scorers are still
    at work when a scenario kills them."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "spec.yaml"
    path.write_text(
        f"""name: heal
goal: Plan a weekend in Lisbon
context: Two adults, spring, mid-range budget.
quorum: {quorum}
roles:
  decomposer: {{count: 1, strategies: [by place]}}
  scorer: {{count: {scorers}}}
  executor: {{count: {executors}}}
  observer: {{count: 1}}
tree: {{max_depth: {depth}, min_children: 2, max_children: 3}}
model: {{backend: scripted, model_weight: 0.5}}
budget: {{seconds: 400, settle_seconds: 1.0, claim_timeout: 60}}
"""
    )
    return path


def _launch(workdir: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[PlanRun, dict[str, Path]]:
    files = {
        "out": workdir / "plan.md",
        "events": workdir / "events.jsonl",
        "report": workdir / "report.json",
    }
    args = [str(workdir / "spec.yaml"), *(f"--{k}={v}" for k, v in files.items()), *extra]
    env = plan_env() | {"TMPDIR": str(workdir)} | (env or {})  # peers' logs land in workdir
    return PlanRun(*args, env=env), files


def _fault_moment(
    run: PlanRun, rng: random.Random, moments: tuple[str, ...] = ("first vote", "root accepted")
) -> str:
    """Wait for a moment the seed picks, while splits are still to be voted on."""
    moment = rng.choice(list(moments))
    if moment == "root accepted":
        run.wait_line(r"split accepted: 'Plan a weekend", HEAL_WAIT)
    else:
        deadline = time.monotonic() + HEAL_WAIT
        while not any(n.proposals and n.proposals[0].votes for n in run.plan_of("observer-0").walk()):
            assert time.monotonic() < deadline, f"no vote in {HEAL_WAIT:g} s:\n" + run.stderr[-3000:]
            assert run.proc.poll() is None, "plan exited early:\n" + run.stderr[-3000:]
            time.sleep(0.02)
    return moment


def _new_events(run: PlanRun, seat: str, before: set[str]) -> list[Event]:
    """Events ``seat`` authored that were not in its own log when it was killed."""
    mine = run.log_events(seat)
    author = next((e.author for e in mine if e.kind == "join"), None)
    return [e for e in mine if e.author == author and e.id not in before]


def _watch_return(
    run: PlanRun, victims: list[str], killed: dict[str, tuple[int, float, set[str]]], timeout: float
) -> tuple[int, dict[str, float]]:
    """Poll until `plan` exits; when each victim came back (a new process in its seat) and first
    published again (an event of its own in its log that was not there at its death)."""
    back: dict[str, float] = {}
    acted: dict[str, float] = {}
    deadline = time.monotonic() + timeout
    while run.proc.poll() is None:
        assert time.monotonic() < deadline, f"plan still running after {timeout:g} s:\n" + run.stderr[-3000:]
        for seat in victims:
            pid, _, before = killed[seat]
            if seat not in back and (new := run.pid(seat)) is not None and new != pid:
                back[seat] = time.monotonic()
            if seat not in acted and _new_events(run, seat, before):
                acted[seat] = time.monotonic()
        time.sleep(0.05)
    code = run.wait(30)
    times = {f"{s}_back": t for s, t in back.items()} | {f"{s}_acted": t for s, t in acted.items()}
    return code, times


def _kill(run: PlanRun, seat: str) -> tuple[int, float, set[str]]:
    pid, at = run.kill(seat)
    return pid, at, {e.id for e in run.log_events(seat)}


def _assert_no_work_twice(events: list[Event]) -> None:
    joins = Counter((e.author, e.body.role) for e in events if e.kind == "join")
    assert set(joins.values()) == {1}, joins
    votes = Counter((e.author, e.body.proposal) for e in events if e.kind == "vote")
    assert set(votes.values()) == {1}, [k for k, v in votes.items() if v > 1]
    assert set(results_per_leaf(events).values()) == {1}, results_per_leaf(events)


def restart_scorers(workdir: Path, seed: int) -> dict[str, Any]:
    """Quorum 2 of 3 scorers; SIGKILL two of them: the launcher restarts both in their seats, they
    resume from their own logs and vote again, and the plan converges."""
    rng = random.Random(f"restart-scorers:{seed}")
    heal_spec(workdir)
    run, files = _launch(workdir)
    with run:
        moment = _fault_moment(run, rng)
        victims = sorted(rng.sample(run.seats("scorer"), 2))
        killed = {seat: _kill(run, seat) for seat in victims}
        fault = max(at for _, at, _ in killed.values())
        code, times = _watch_return(run, victims, killed, HEAL_WAIT)
    assert code == 0, run.stderr[-3000:]
    report = read_report(files["report"])
    final = FoldState(read_event_log(files["events"]).events).plan()
    assert final.complete and final.digest == report["digest"], report
    peers = {p["name"]: p for p in report["peers"]}
    for seat in victims:
        assert f"{seat} exited -9; restarting (1/3)" in run.stderr, run.stderr[-3000:]
        assert (peers[seat]["restarts"], peers[seat]["deaths"]) == (1, [-9]), peers[seat]
        # it resumed: a new process in its seat, which took the swarm's events into its own log and
        # reported the final digest
        assert f"{seat}_back" in times, times
        assert peers[seat]["digest"] == final.digest, f"{seat} did not catch up: {peers[seat]}"
    # the restarted scorers took part: a split proposed after the kill needs 2 votes, and the one
    # surviving scorer gives at most 1, so a victim voted on it after its restart (under load the
    # seed's moment can come so late that every split was proposed, and voted on, before it)
    after = [e for seat in victims for e in _new_events(run, seat, killed[seat][2])]
    known = set().union(*(killed[seat][2] for seat in victims))
    later = [e for e in read_event_log(files["events"]).events if e.kind == "proposal" and e.id not in known]
    if later:
        assert any(e.kind in ("vote", "ballot") for e in after), "the restarted scorers published nothing"
    _assert_no_work_twice(read_event_log(files["events"]).events)
    acted = [times[f"{s}_acted"] for s in victims if f"{s}_acted" in times]
    return {
        "moment": moment,
        "victims": victims,
        "back_s": round(max(times[f"{s}_back"] for s in victims) - fault, 1),
        "first_new_vote_s": round(min(acted) - fault, 1) if acted else None,
        "converged_s": round(run.ended - fault, 1),
    }


def restart_executor(workdir: Path, seed: int) -> dict[str, Any]:
    """The only executor is SIGKILLed while it holds a claim: the launcher restarts it, it finishes
    the leaf it held under the same claim (no second claim, no second result) and the rest."""
    rng = random.Random(f"restart-executor:{seed}")
    heal_spec(workdir, scorers=1, quorum=1, depth=1 + rng.randrange(2))
    # each model call takes 1 s, so the executor holds a claim while it writes: a lone executor
    # waits no settle window, and an instant model left no claim without its result to kill at
    run, files = _launch(workdir, env={"SPECSWARM_TEST_MODEL_DELAY": "1"})
    with run:
        held = _wait_held_claim(run, "executor-0", skip=rng.randrange(2))
        killed = {"executor-0": _kill(run, "executor-0")}
        fault = killed["executor-0"][1]
        code, times = _watch_return(run, ["executor-0"], killed, HEAL_WAIT)
    assert code == 0, run.stderr[-3000:]
    assert "executor-0 exited -9; restarting (1/3)" in run.stderr, run.stderr[-3000:]
    events = read_event_log(files["events"]).events
    final = FoldState(events).plan()
    assert final.complete, run.stderr[-3000:]
    leaf = final.nodes[held.body.leaf]
    assert leaf.result is not None and leaf.result.claim == held.id, (
        "the held leaf was not finished under its claim"
    )
    assert [c.id for c in leaf.claims] == [held.id], leaf.claims
    after = _new_events(run, "executor-0", killed["executor-0"][2])
    assert any(e.kind == "result" and e.body.leaf == leaf.id for e in after), after
    _assert_no_work_twice(events)
    report = read_report(files["report"])
    assert next(p for p in report["peers"] if p["name"] == "executor-0")["restarts"] == 1, report["peers"]
    return {
        "leaves": len(final.leaves()),
        "back_s": round(times["executor-0_back"] - fault, 1),
        "held_leaf_done_s": round(times["executor-0_acted"] - fault, 1),
        "converged_s": round(run.ended - fault, 1),
    }


def _wait_held_claim(run: PlanRun, seat: str, skip: int) -> Event:
    """A claim of ``seat`` that wins a leaf without a result, as the observer has heard it (after
    ``skip`` leaves were done)."""
    deadline = time.monotonic() + HEAL_WAIT
    author = None
    while time.monotonic() < deadline:
        assert run.proc.poll() is None, "plan exited early:\n" + run.stderr[-3000:]
        author = author or next((e.author for e in run.log_events(seat) if e.kind == "join"), None)
        plan = run.plan_of("observer-0")
        done = sum(1 for n in plan.leaves() if n.result)
        for leaf in plan.leaves():
            if done >= skip and leaf.result is None and leaf.claim and leaf.claim_holder == author:
                claim = next(e for e in run.log_events("observer-0") if e.id == leaf.claim)
                return claim
        time.sleep(0.02)
    raise AssertionError(f"{seat} held no claim in {HEAL_WAIT:g} s:\n" + run.stderr[-3000:])


def _no_restart(run: PlanRun, files: dict[str, Path], fault: float, role: str, needed: str) -> dict[str, Any]:
    code = run.wait(HEAL_FAIL_FAST + 30)
    took = run.ended - fault
    assert code == 1, run.stderr[-3000:]
    assert took < HEAL_FAIL_FAST, f"exited {took:.1f} s after the fault:\n" + run.stderr[-3000:]
    err = run.stderr
    assert "the run can no longer complete" in err, err[-3000:]
    assert f"short of {role}s: {needed} needed" in err, err[-3000:]
    assert "not restarted: restarts are off (--no-restart)" in err, err[-3000:]
    assert f"partial plan written to {files['out']}" in err and files["out"].exists(), err[-3000:]
    assert f"--resume {files['events']}" in err, err[-3000:]
    assert read_event_log(files["events"]).events, "no event log written"
    report = read_report(files["report"])
    assert report["exit_code"] == 1 and not report["complete"], report
    assert all(p["restarts"] == 0 for p in report["peers"]), report["peers"]
    return {
        "fault_to_exit_s": round(took, 1),
        "message": next(ln for ln in err.splitlines() if "short of" in ln),
    }


def no_restart_scorers(workdir: Path, seed: int) -> dict[str, Any]:
    """Quorum 2 of 3 scorers, --no-restart: SIGKILL two; `plan` exits 1 within seconds, naming the
    scorers, the quorum, the one alive and the dead with their exit codes."""
    rng = random.Random(f"no-restart-scorers:{seed}")
    heal_spec(workdir)
    run, files = _launch(workdir, "--no-restart")
    with run:
        # at the first vote: by the time the launcher prints the root's acceptance, the
        # scripted swarm may have split every node (seen in CI: four acceptances in one
        # second), and then no scorer is needed any more
        moment = _fault_moment(run, rng, ("first vote",))
        victims = sorted(rng.sample(run.seats("scorer"), 2))
        fault = max(_kill(run, seat)[1] for seat in victims)
        info = _no_restart(run, files, fault, "scorer", "2")
    (alive,) = set(run.seats("scorer")) - set(victims)
    dead = ", ".join(f"{v} (exit -9)" for v in victims)
    assert "(the quorum; " in info["message"] and f"1 alive ({alive}); dead: {dead}" in info["message"], info
    return {"moment": moment, "victims": victims, **info}


def no_restart_executor(workdir: Path, seed: int) -> dict[str, Any]:
    """The only executor is SIGKILLed with --no-restart: `plan` exits 1 within seconds, naming it."""
    rng = random.Random(f"no-restart-executor:{seed}")
    heal_spec(workdir, scorers=1, quorum=1, depth=1)
    run, files = _launch(workdir, "--no-restart")
    with run:
        _wait_held_claim(run, "executor-0", skip=rng.randrange(2))
        fault = _kill(run, "executor-0")[1]
        info = _no_restart(run, files, fault, "executor", "1")
    assert "0 alive; dead: executor-0 (exit -9)" in info["message"], info
    return info


def failing_template(workdir: Path, seed: int) -> dict[str, Any]:
    """A prompt template that passes the load-time checks (every sample renders) but fails on the
    run's own data: the peer that renders it exits 2, and `plan` stops at once with its message
    and exits 2 -- no restart, no waiting for the budget."""
    task, role = (("decompose", "decomposer"), ("execute", "executor"))[seed % 2]  # seeds 0, 1: both
    heal_spec(workdir, scorers=1, quorum=1, depth=1)
    # the samples' goal has six words; this run's has five
    default = (Path(__file__).resolve().parent.parent / "templates" / "prompts" / f"{task}.j2").read_text()
    (workdir / f"{task}.j2").write_text(
        default.replace("{% block prompt %}", "{% block prompt %}\nIn short: {{ goal.split()[5] }}", 1)
    )
    spec = workdir / "spec.yaml"
    spec.write_text(spec.read_text() + f"prompts: {{{task}: {task}.j2}}\n")
    run, files = _launch(workdir)
    with run:
        pid, died = None, None  # the failing peer's process, and when it was seen gone
        while run.proc.poll() is None:
            seat = next(iter(run.seats(role)), None)
            now = run.pid(seat) if seat else None
            pid = pid or now
            if pid is not None and now is None and died is None:
                died = time.monotonic()
            time.sleep(0.02)
        code = run.wait(30)
    err = run.stderr
    assert code == 2, err[-3000:]
    assert f"a peer failed for good: {role}-0 exited 2: cannot render prompts.{task}:" in err, err[-3000:]
    assert "list object has no element 5" in err and "restarting" not in err, err[-3000:]
    assert "fix the spec and start the run again" in err and "--resume" not in err, err[-3000:]
    report = read_report(files["report"])
    assert report["exit_code"] == 2 and all(p["restarts"] == 0 for p in report["peers"]), report
    assert died is not None, "the failing peer was never seen to exit"
    took = run.ended - died
    assert took < HEAL_FAIL_FAST, f"exited {took:.1f} s after the peer failed:\n" + err[-3000:]
    return {
        "task": task,
        "fault_to_exit_s": round(took, 1),
        "start_to_exit_s": round(run.ended - run.started, 1),
    }


SCENARIOS: dict[str, Callable[[Path, int], dict[str, Any]]] = {
    "kill_decomposer": kill_decomposer,
    "kill_scorer": kill_scorer,
    "kill_executor": kill_executor,
    "kill_first_peer": kill_first_peer,
    "late_joiners": late_joiners,
    "gossip_loss": gossip_loss,
    "restart_scorers": restart_scorers,
    "restart_executor": restart_executor,
    "no_restart_scorers": no_restart_scorers,
    "no_restart_executor": no_restart_executor,
    "failing_template": failing_template,
}
