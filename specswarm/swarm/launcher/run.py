"""``run_plan``: the launcher from a spec file to a rendered plan.

Its steps: :func:`prepare` the launch (load and check the spec, check the model endpoints it
names, a new or resumed run, one peer per seat of the roster),
:func:`~specswarm.swarm.launcher.watch.run_swarm` (start and watch the peers, restarting those
that die), :func:`~specswarm.swarm.launcher.eventlog.collect_events` (the union of the peers' events) and
:func:`finish` (the event log, the report; the rendered plan, or the error why there is none:
:class:`~specswarm.errors.RunError` when it timed out or can no longer complete,
:class:`PeerFailedError` when a peer stopped on an error a restart would meet again).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from specswarm.errors import InterruptedRunError, RunError, SpecError, SpecSwarmError, UsageError
from specswarm.plan import FoldState, Plan
from specswarm.render.tree import tree_text
from specswarm.spec import GoalSpec
from specswarm.spec.language import language_hint
from specswarm.swarm.launcher import forked
from specswarm.swarm.launcher.diagnose import write_report
from specswarm.swarm.launcher.eventlog import collect_events, write_events
from specswarm.swarm.launcher.failure import RunFacts, failure
from specswarm.swarm.launcher.heal import RestartPolicy
from specswarm.swarm.launcher.language import goal_language, needs_language
from specswarm.swarm.launcher.models import ServiceProc, peer_env, plan_services
from specswarm.swarm.launcher.network import check_network, start_lines
from specswarm.swarm.launcher.prepare import PreparedRun, SpecChoice, keys_path, prepare_run, start_of
from specswarm.swarm.launcher.procs import PeerProc, build_peers
from specswarm.swarm.launcher.progress import Progress, summary
from specswarm.swarm.launcher.watch import Outcome, run_swarm
from specswarm.swarm.outputs import OutputError, check_directory, check_output, keep, reason, unwritable
from specswarm.swarm.overrides import check_environment


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
    spec_changed: SpecChoice | None = None
    """With ``resume``: the run to go on with when the spec file changed since it began
    (``--spec-changed``); None: such a change stops the launch (exit 2)."""
    content_only: bool = False
    """Render only the plan's content (``--content-only``: no run id, peer ids or digests)."""
    allow_outside: bool = False
    """The spec may name files outside its folder (``--allow-outside-files``)."""


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
        kept = " --spec-changed original" if self.run.edits else ""  # the file still differs
        return f"continue with: specswarm plan {self.request.spec_path} --resume {self.run.events_path}{kept}"


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
    spec_changed: SpecChoice | None = None,
    content_only: bool = False,
    allow_outside_files: bool = False,
) -> None:
    """Launch the peers ``spec_path`` declares and render the plan they converge on.

    Raises SpecError (the spec cannot be run), SpecSwarmError (cannot resume), RunError
    (no convergence within the budget, or the peers left can no longer converge),
    PeerFailedError (a peer failed for good) or InterruptedRunError (stopped by a signal);
    SpecChangedError when the spec changed since the resumed run began and ``spec_changed``
    does not say which spec to run.
    """
    request = PlanRequest(
        spec_path,
        fmt,
        out,
        events_path,
        timeout,
        resume,
        quiet,
        report,
        restart,
        cache,
        peers_per_process,
        spec_changed,
        content_only,
        allow_outside_files,
    )
    forked.warm_up()  # the fork server imports what a peer needs while the run is prepared
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

    loaded = load_spec(request.spec_path, allow_outside=request.allow_outside)
    check_paths(request)
    check_launchable(loaded)  # before start_of: a new run's admission key may need the secret
    progress, note = Progress(request.quiet), None
    if request.resume is None and needs_language(loaded):
        progress.say("asking the model which language the goal is written in")
        loaded, note = goal_language(loaded)
    start = start_of(
        loaded,
        resume=request.resume,
        spec_changed=request.spec_changed,
        spec_path=request.spec_path,
    )
    spec = start.spec
    if spec is not loaded:  # a resumed run goes on with the spec it began with
        check_launchable(spec)
    note = note or language_hint(spec.goal, spec.context, spec.language)
    cache = answer_cache(request, spec)
    unreachable = check_models(spec, cached=cache is not None)
    run = prepare_run(start, events_path=request.events_path)
    peers = build_peers(spec, run.keys.peers, run.workdir, cache)
    run.keys.save(run.keys_file)
    services = share_models(spec, peers, run.workdir)
    launch = Launch(request, spec, run, peers, progress, services)
    counts = [(f.name, getattr(spec.roles, f.name).count) for f in dataclasses.fields(spec.roles)]
    declared = ", ".join(f"{role} x{count}" for role, count in counts if count)
    launch.progress.say(
        f"run {run.run[:12]}: {spec.goal!r} — starting {len(peers)} peers ({declared}); logs in {run.workdir}"
    )
    for line in start_lines(spec, peers[0].listen, peers[0].port, peers[0].identity.peer_id):
        launch.progress.say(line)
    if note is not None:
        launch.progress.say(f"note: {note}")
    if run.resumed:
        launch.progress.say(f"resuming from {request.resume}: {len(run.preload)} events")
    if start.edits:
        edits = ", ".join(start.edits)
        launch.progress.say(
            f"resuming with the spec the run began with; not used: {edits}"
            if run.resumed
            else f"a new run of the edited spec ({edits}); nothing of {request.resume} is reused"
        )
    if cache is not None:
        held = sum(1 for _ in cache.glob("*.json"))
        launch.progress.say(f"answer cache {cache}: {held} answer(s) held")
    for problem in unreachable:
        launch.progress.say(f"{problem}; going on with the answer cache (an answer it lacks will fail)")
    return launch


def check_paths(request: PlanRequest) -> None:
    """The log to resume from (``--resume``) can be read, and every file the run writes where
    the user said (``--out``, ``--events`` and the keys kept beside it, ``--report``) can be
    written: else a UsageError (exit 2) naming the option, before any peer starts. Nothing is
    left behind and no existing file is changed."""
    if request.resume is not None:
        try:
            open(request.resume, "rb").close()
        except OSError as exc:
            raise UsageError(
                f"--resume {request.resume}: cannot read the event log: {reason(exc, request.resume)}"
            ) from None
    events = request.events_path
    for path, option, what in (
        (request.out, "--out", "the plan"),
        (events, "--events", "the event log"),
        (request.report, "--report", "the run report"),
    ):
        if path is not None:
            check_output(path, option, what)
    why = unwritable(keys_path(events)) if events is not None else None
    if events is not None and why is not None:
        raise UsageError(
            f"--events {events}: cannot write the run's keys beside it ({keys_path(events).name}): {why}"
        )


def answer_cache(request: PlanRequest, spec: GoalSpec) -> Path | None:
    """The answer cache directory of the launch (``--cache``, else the spec's), created now: a
    path that cannot be a directory written in is a usage error (exit 2) before any peer starts."""
    cache = request.cache or spec.cache
    if cache is None:
        return None
    cache = cache.expanduser().resolve()
    check_directory(cache, "--cache" if request.cache else "cache", "the answer cache")
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
    """``plan`` needs at least one peer of every role (a valid spec may declare none), usable
    environment overrides (:mod:`specswarm.swarm.overrides`) and network settings this
    machine can serve (:mod:`.network`)."""
    for field in dataclasses.fields(spec.roles):
        role = field.name
        if getattr(spec.roles, role).count < 1:
            why = "the launcher reads the plan from it" if role == "observer" else "`plan` needs one"
            message = f"0 {role}s (expected at least 1 to run `plan`: {why})"
            raise SpecError([spec.problem(f"roles.{role}.count", message)])
    check_environment(spec)
    check_network(spec, len(spec.roster()))


def check_models(spec: GoalSpec, *, cached: bool = False) -> list[str]:
    """The preflight of every model endpoint the peers will ask (as each role's peers will run
    it, environment overrides applied): a SpecError naming the field, before any peer starts.

    ``cached``: the run has an answer cache, which may hold every answer; then an endpoint that
    cannot be reached is no error yet: its problems are returned (to be said), and a question
    the cache does not hold fails at run time, naming the endpoint."""
    from specswarm.model.load import preflight
    from specswarm.swarm.peer import model_settings

    try:
        preflight(spec, lambda role: model_settings(spec, role))
    except SpecError as exc:
        if not cached or not all(p.path.endswith("base_url") for p in exc.problems):
            raise
        return [str(p) for p in exc.problems]
    return []


def finish(launch: Launch, outcome: Outcome, state: FoldState) -> None:
    """Write the event log, the plan (or the plan so far) and the report; raise the error why
    there is no plan, if any. An output that cannot be written where asked goes to the run's
    directory instead, and the error says where (:class:`OutputError` after a complete run)."""
    launch, kept = keep_events(launch, state)
    final = state.plan()
    done = summary(final, launch.peers, launch.progress)
    launch.progress.close(final, launch.peers)  # the last frame and the summary table
    error: SpecSwarmError | None = _failure(launch, outcome, len(state), done)
    request = launch.request
    output = launch.spec.output
    fmt = request.fmt or output.format
    rundir = launch.run.workdir
    # the plan: where asked, else in the run's directory, else on stdout
    places = [request.out, rundir / f"plan.{'json' if fmt == 'json' else 'md'}"]
    places += [None] if request.out is not None else []

    def plan_to(what: str) -> Path | None:
        from specswarm.render import render_plan, write_output

        text = render_plan(final, fmt, output.template, content_only=request.content_only)
        where, note = keep(lambda place: write_output(text, place), places, what)
        kept.append(note)
        return where

    if error is not None and not isinstance(error, InterruptedRunError):
        if not launch.progress.live:  # the live view's last frame shows it already
            print(tree_text(final), file=sys.stderr)  # where the plan stands, above the error
        if request.out is not None and final.root is not None:
            # every run delivers: the plan so far, its open and stuck nodes marked as such
            where = plan_to("the partial plan")
            if where is not None:
                launch.progress.say(f"partial plan written to {where} (incomplete nodes marked)")
    where = plan_to("the plan") if error is None else None
    if error is None:
        launch.progress.say(
            f"plan complete: digest {final.digest[:16]}, content {final.content_digest[:16]}; {done}"
        )
    if request.report is not None:
        code = error.exit_code if error else OutputError.exit_code if any(kept) else 0
        kept.append(write_run_report(launch, outcome, final, code))
    notes = "\n".join(note for note in kept if note)
    if notes and error is None:
        error = OutputError(f"{notes}\nevents: {launch.run.events_path}")
    elif notes and error is not None:
        error.args = (f"{error}\n{notes}",)
    if error is not None:
        raise error
    launch.progress.say(f"events: {launch.run.events_path}" + (f"; plan: {where}" if where else ""))


def keep_events(launch: Launch, state: FoldState) -> tuple[Launch, list[str | None]]:
    """Write the union event log where the run keeps it; should that fail, in the run's
    directory, with the run's keys beside it (so that ``--resume`` takes it), and the launch
    from then on names that place. Returns the launch and the note of what failed (or None)."""
    run = launch.run
    places = list(dict.fromkeys([run.events_path, run.workdir / "events.jsonl"]))
    where, note = keep(lambda place: write_events(state, place or run.events_path), places, "the event log")
    if where is not None and where != run.events_path:
        run.keys.save(keys_path(where))
        launch = dataclasses.replace(launch, run=dataclasses.replace(run, events_path=where))
    return launch, [note]


def write_run_report(launch: Launch, outcome: Outcome, final: Plan, code: int) -> str | None:
    """Write the JSON report of a run ending with exit ``code`` (``--report``; should that fail,
    in the run's directory); the note of what failed, or None."""
    assert launch.request.report is not None
    wall = time.monotonic() - launch.progress.started
    notes = [(t - launch.progress.started, text) for t, text in outcome.notes]
    cache = next((p.cache for p in launch.peers if p.cache is not None), None)

    def report(place: Path | None) -> None:
        assert place is not None
        write_report(place, final, launch.peers, code, wall, outcome.reasons, notes, cache)

    return keep(report, [launch.request.report, launch.run.workdir / "report.json"], "the run report")[1]


def _failure(launch: Launch, outcome: Outcome, n_events: int, done: str) -> RunError | None:
    """The error a run that did not complete ends with (None when it completed)."""
    if outcome.status == "complete":
        return None
    return failure(
        outcome,
        RunFacts(
            launch.run.events_path,
            launch.peers[0].log.parent if launch.peers else launch.run.workdir,
            launch.resume_hint,
            launch.progress.elapsed(),
            launch.budget,
        ),
        n_events,
        done,
    )
