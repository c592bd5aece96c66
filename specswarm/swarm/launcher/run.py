"""``run_plan``: the launcher from a spec file to a rendered plan.

Its steps: :func:`prepare` the launch (load and check the spec, check the model endpoints it
names, a new or resumed run, one peer per seat of the roster),
:func:`~specswarm.swarm.launcher.watch.run_swarm` (start and watch the peers, restarting those
that die), :func:`~specswarm.swarm.launcher.eventlog.collect_events` (the union event log) and
:func:`finish` (the report; the rendered plan, or the error why there is none:
:class:`~specswarm.errors.RunError` when it timed out or can no longer complete,
:class:`PeerFailedError` when a peer stopped on an error a restart would meet again).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from specswarm.errors import InterruptedRunError, RunError, SpecError, SpecSwarmError
from specswarm.plan import FoldState
from specswarm.render.tree import tree_text
from specswarm.spec import GoalSpec
from specswarm.swarm.launcher.diagnose import write_report
from specswarm.swarm.launcher.eventlog import collect_events
from specswarm.swarm.launcher.heal import RestartPolicy
from specswarm.swarm.launcher.models import ServiceProc, peer_env, plan_services
from specswarm.swarm.launcher.prepare import PreparedRun, prepare_run
from specswarm.swarm.launcher.procs import PeerProc, build_peers
from specswarm.swarm.launcher.progress import Progress, summary
from specswarm.swarm.launcher.watch import Outcome, run_swarm
from specswarm.swarm.peer import DETERMINISTIC_EXIT


class PeerFailedError(RunError):
    """A peer stopped on an error a restart would meet again (it exited with
    :data:`~specswarm.swarm.peer.DETERMINISTIC_EXIT`: a spec or prompt template problem); the
    run was stopped at once. The message is the peer's own last line."""

    exit_code: ClassVar[int] = DETERMINISTIC_EXIT


class EndpointLostError(RunError):
    """A model endpoint stopped working mid-run (every call, or every probe of the launcher,
    failed for half a minute): exit 2, as for an endpoint the preflight finds unusable; the
    message names the spec field (``model.base_url``) and how to resume."""

    exit_code: ClassVar[int] = 2


class CacheDirError(SpecSwarmError):
    """The answer cache (``--cache`` or the spec's ``cache``) cannot be a directory: a usage
    error, before any peer starts."""

    exit_code: ClassVar[int] = 2


@dataclass(frozen=True)
class PlanRequest:
    """What ``specswarm plan`` was asked for (None: the spec's own setting, or none)."""

    spec_path: Path
    fmt: str | None
    out: Path | None
    events_path: Path | None
    timeout: float | None
    resume: Path | None
    quiet: bool
    report: Path | None
    restart: bool = True
    """Restart a peer that dies (``--no-restart``: False)."""
    cache: Path | None = None
    """The answer cache directory (``--cache``; None: the spec's ``cache``, or none)."""
    peers_per_process: int = 1
    """Peers per OS process (``--peers-per-process``); 1: one process per peer."""


@dataclass(frozen=True)
class Launch:
    """One ``specswarm plan`` under way: the request, its spec, the prepared run, its peers."""

    request: PlanRequest
    spec: GoalSpec
    run: PreparedRun
    peers: list[PeerProc]
    progress: Progress
    services: list[ServiceProc] = dataclasses.field(default_factory=list)
    """The shared model services (one per distinct local model; none when no role shares one)."""

    @property
    def budget(self) -> float:
        timeout = self.request.timeout
        return timeout if timeout is not None else self.spec.budget.seconds

    @property
    def resume_hint(self) -> str:
        return f"continue with: specswarm plan {self.request.spec_path} --resume {self.run.events_path}"


def run_plan(
    spec_path: Path,
    *,
    fmt: str | None,
    out: Path | None,
    events_path: Path | None,
    timeout: float | None,
    resume: Path | None,
    quiet: bool,
    report: Path | None = None,
    restart: bool = True,
    cache: Path | None = None,
    peers_per_process: int = 1,
) -> None:
    """Launch the peers ``spec_path`` declares and render the plan they converge on.

    Raises SpecError (the spec cannot be run), SpecSwarmError (cannot resume), RunError
    (no convergence within the budget, or the peers left can no longer converge),
    PeerFailedError (a peer failed for good) or InterruptedRunError (stopped by a signal).
    """
    request = PlanRequest(
        spec_path, fmt, out, events_path, timeout, resume, quiet, report, restart, cache, peers_per_process
    )
    launch = prepare(request)
    policy = RestartPolicy(enabled=request.restart)
    try:
        outcome = run_swarm(
            launch.peers,
            launch.run,
            launch.budget,
            launch.progress,
            policy,
            launch.services,
            per_process=peers_per_process,
        )
        finish(launch, outcome, collect_events(launch.run, launch.peers))
    finally:
        launch.progress.stop()


def prepare(request: PlanRequest) -> Launch:
    """Load and check the spec, prepare the run (new or resumed), build one peer per seat."""
    from specswarm.spec import load_spec

    spec = load_spec(request.spec_path)
    check_launchable(spec)
    check_models(spec)
    cache = answer_cache(request, spec)
    run = prepare_run(spec, resume=request.resume, events_path=request.events_path)
    peers = build_peers(spec, run.keys.peers, run.workdir, cache)
    run.keys.save(run.keys_file)
    services = share_models(spec, peers, run.workdir)
    launch = Launch(request, spec, run, peers, Progress(request.quiet), services)
    counts = [(f.name, getattr(spec.roles, f.name).count) for f in dataclasses.fields(spec.roles)]
    declared = ", ".join(f"{role} x{count}" for role, count in counts if count)
    launch.progress.say(
        f"run {run.run[:12]}: {spec.goal!r} — starting {len(peers)} peers ({declared}); logs in {run.workdir}"
    )
    if request.resume:
        launch.progress.say(f"resuming from {request.resume}: {len(run.preload)} events")
    if cache is not None:
        held = sum(1 for _ in cache.glob("*.json"))
        launch.progress.say(f"answer cache {cache}: {held} answer(s) held")
    return launch


def answer_cache(request: PlanRequest, spec: GoalSpec) -> Path | None:
    """The answer cache directory of the launch (``--cache``, else the spec's), created now: a
    path that cannot be a directory is a usage error (exit 2) before any peer starts."""
    cache = request.cache or spec.cache
    if cache is None:
        return None
    cache = cache.expanduser().resolve()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        where = "--cache" if request.cache else "cache"
        raise CacheDirError(
            f"{where} {str(cache)!r}: cannot use it as the answer cache: {exc.strerror or exc}"
        ) from None
    return cache


def share_models(spec: GoalSpec, peers: list[PeerProc], workdir: Path) -> list[ServiceProc]:
    """The shared model services of the run; point each peer of a role they serve at its
    service (``--model-url``, the run's token in its environment)."""
    from specswarm.swarm.peer import model_settings

    by_role = plan_services(spec, lambda role: model_settings(spec, role), workdir)
    services = list({id(s): s for s in by_role.values()}.values())
    for p in peers:
        service = by_role.get(p.role)
        if service is not None:
            p.model_url = service.url
            p.env.update(peer_env(services))
    return services


def check_launchable(spec: GoalSpec) -> None:
    """``plan`` needs at least one peer of every role (a valid spec may declare none)."""
    for field in dataclasses.fields(spec.roles):
        role = field.name
        if getattr(spec.roles, role).count < 1:
            why = "the launcher reads the plan from it" if role == "observer" else "`plan` needs one"
            message = f"0 {role}s (expected at least 1 to run `plan`: {why})"
            raise SpecError([spec.problem(f"roles.{role}.count", message)])


def check_models(spec: GoalSpec) -> None:
    """The preflight of every model endpoint the peers will ask (as each role's peers will run
    it, environment overrides applied): a SpecError naming the field, before any peer starts."""
    from specswarm.model.load import preflight
    from specswarm.swarm.peer import model_settings

    preflight(spec, lambda role: model_settings(spec, role))


def finish(launch: Launch, outcome: Outcome, state: FoldState) -> None:
    """Write the report; then render the plan, or raise the error why there is none."""
    final = state.plan()
    done = summary(final, launch.peers, launch.progress)
    launch.progress.close(final, launch.peers)  # the last frame and the summary table
    error = _failure(launch, outcome, len(state), done)
    request = launch.request
    if request.report is not None:
        wall = time.monotonic() - launch.progress.started
        code = error.exit_code if error else 0
        notes = [(t - launch.progress.started, text) for t, text in outcome.notes]
        cache = next((p.cache for p in launch.peers if p.cache is not None), None)
        write_report(request.report, final, launch.peers, code, wall, outcome.reasons, notes, cache)
    from specswarm.render import render_plan, write_output

    output = launch.spec.output
    if error is not None:
        if not isinstance(error, InterruptedRunError):
            if not launch.progress.live:  # the live view's last frame shows it already
                print(tree_text(final), file=sys.stderr)  # where the plan stands, above the error
            if request.out is not None and final.root is not None:
                # every run delivers: the plan so far, its open and stuck nodes marked as such
                write_output(render_plan(final, request.fmt or output.format, output.template), request.out)
                launch.progress.say(f"partial plan written to {request.out} (incomplete nodes marked)")
        raise error
    write_output(render_plan(final, request.fmt or output.format, output.template), request.out)
    launch.progress.say(
        f"plan complete: digest {final.digest[:16]}, content {final.content_digest[:16]}; {done}"
    )
    launch.progress.say(
        f"events: {launch.run.events_path}" + (f"; plan: {request.out}" if request.out else "")
    )


def _failure(launch: Launch, outcome: Outcome, n_events: int, done: str) -> RunError | None:
    """The error a run that did not complete ends with (None when it completed)."""
    events = launch.run.events_path
    if outcome.status == "complete":
        return None
    if outcome.status == "interrupted":
        return InterruptedRunError(
            f"interrupted: all peers stopped; {n_events} events saved to {events}\n{launch.resume_hint}"
        )
    logs = f"\nevents saved to {events}; peer logs in {launch.peers[0].log.parent}"
    saved = logs + f"\n{launch.resume_hint}"
    if outcome.status == "endpoint lost":  # once it is back, the run goes on from its events
        return EndpointLostError(f"the run stopped: {outcome.reasons[0]} ({done})" + saved)
    if outcome.status == "peer failed":  # no resume hint: the run event holds the spec as it was
        return PeerFailedError(
            f"a peer failed for good: {outcome.reasons[0]}\n"
            f"(not restarted: it would fail the same way again; every peer stopped; {done})"
            + logs
            + "\nfix the spec and start the run again"
        )
    if outcome.status == "model lost":
        return RunError(f"the run stopped: {outcome.reasons[0]} ({done})" + saved)
    stuck = "\n".join(f"  stuck: {r}" for r in outcome.reasons if r not in outcome.short)
    if outcome.status == "stalled":
        return RunError(
            f"the run stopped after {launch.progress.elapsed()}: nothing can change the plan any more "
            f"({done}):\n"
            + "\n".join(f"  stalled: {r}" for r in outcome.short)
            + ("\n" + stuck if stuck else "")
            + saved
        )
    if outcome.status == "out of reach":
        return RunError(
            f"the run can no longer complete after {launch.progress.elapsed()} ({done}):\n"
            + "\n".join(f"  short of {r}" for r in outcome.short)
            + ("\n" + stuck if stuck else "")
            + saved
        )
    return RunError(f"the plan did not converge within {launch.budget:g} s ({done})\n" + stuck + saved)
