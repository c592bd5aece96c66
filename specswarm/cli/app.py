"""The ``specswarm`` command line. The one place where errors become text and exit codes.

Commands raise the project's errors (:mod:`specswarm.errors`) and return nothing;
:func:`main` hands whatever stops a command to :func:`_exit`, which prints it and exits
with the code the error's class states.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from specswarm.errors import InterruptedRunError, SpecError, SpecSwarmError, TransportError

app = typer.Typer(
    name="specswarm",
    help="Plan big goals with a swarm of local-LLM agents on libp2p, with no one in charge.\n\n"
    "\b\nExamples:\n"
    "  specswarm init --kind trip --goal 'Ten days in Portugal'\n"
    "  specswarm plan goals/japan.yaml --out japan.md\n"
    "  SPECSWARM_MODEL_BACKEND=scripted specswarm plan goals/tiny.yaml   # 10 s, no model",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"specswarm {version('specswarm')}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Plan big goals with a swarm of local-LLM agents on libp2p, with no one in charge."""


class Format(str, Enum):
    markdown = "markdown"
    json = "json"
    spec = "spec"


class Role(str, Enum):
    decomposer = "decomposer"
    scorer = "scorer"
    executor = "executor"
    observer = "observer"


def _exit(exc: SpecSwarmError | KeyboardInterrupt | OSError) -> NoReturn:
    """Print what stopped a command, in red on stderr, and exit with its code.

    A TransportError reads ``error: ...``; an error with no message (a peer stopped by
    Ctrl-C) prints nothing; Ctrl-C outside any command's own handling reads ``interrupted``.
    An OSError no command turned into words reads ``error: PATH: what the system says``, exit 2
    when it names a path (a file or directory given that cannot be read or written), else 1.
    """
    if isinstance(exc, KeyboardInterrupt):
        message, code = "interrupted", InterruptedRunError.exit_code
    elif isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename is not None else ""
        message, code = f"error: {where}{exc.strerror or exc}", 2 if exc.filename is not None else 1
    else:
        message, code = str(exc), exc.exit_code
        if isinstance(exc, TransportError):
            message = f"error: {message}"
    if message:
        typer.secho(message, fg=typer.colors.RED, err=True)
    sys.exit(code)


def _check_output(path: Path | None, option: str, what: str) -> None:
    """``path`` (when given) can be written: else one line naming ``option``, exit 2."""
    if path is not None:
        from specswarm.swarm.outputs import check_output

        check_output(path, option, what)


def _write_output(text: str, out: Path | None) -> None:
    from specswarm.render import write_output

    write_output(text, out)
    if out is not None:
        typer.echo(f"wrote {out}", err=True)


class SpecChanged(str, Enum):
    original = "original"
    new = "new"


CONTENT_ONLY_HELP = (
    "Write only the plan's content: no run id, peer ids, digest or event counts (they are in "
    "--report), so the file changes only when the plan does (for plans committed by CI)."
)


class Kind(str, Enum):
    trip = "trip"
    software = "software"
    event = "event"
    blank = "blank"


@app.command()
def init(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="Where to write the spec (default: ./<words-of-the-goal>.yaml).", metavar="[FILE]"
        ),
    ] = None,
    kind: Annotated[Kind, typer.Option("--kind", "-k", help="Which template to start from.")] = Kind.blank,
    goal: Annotated[
        str | None, typer.Option("--goal", "-g", help="The goal, one sentence (asked for on a terminal).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite FILE if it exists.")] = False,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            help="What the first line's $schema names (default: specswarm's goal schema, by a relative path inside a checkout, else by its absolute path).",
        ),
    ] = None,
) -> None:
    """Write a commented goal spec for a kind of goal, and validate it.

    \b
    Examples:
      specswarm init --kind trip --goal "Ten days in Portugal"
      specswarm init goals/cli.yaml --kind software --goal "A CLI that converts units"
    """
    from specswarm.cli.init import run_init

    run_init(file, kind.value, goal, force, schema)


OUTSIDE_HELP = (
    "Let the spec name prompt templates, an output template and cassettes outside its own folder "
    "(default: only files in the spec's folder or below it, and specswarm's templates)."
)


@app.command()
def validate(
    specs: Annotated[
        list[Path],
        typer.Argument(
            help="Goal spec files, or folders whose *.yaml and *.yml files are checked.", metavar="SPEC..."
        ),
    ],
    allow_outside_files: Annotated[bool, typer.Option("--allow-outside-files", help=OUTSIDE_HELP)] = False,
) -> None:
    """Check goal specs; print one `FILE:LINE: field.path: problem` line per problem (exit 2).

    \b
    Examples:
      specswarm validate goals/japan.yaml
      specswarm validate goals/          # every *.yaml and *.yml in the folder
    """
    from specswarm.cli.init import validate_line
    from specswarm.spec import load_spec
    from specswarm.spec.language import language_hint

    problems: list[str] = []
    for path in _spec_files(specs):
        try:
            spec = load_spec(path, allow_outside=allow_outside_files)
        except SpecError as exc:
            problems.extend(str(p) for p in exc.problems)
        else:
            typer.echo(validate_line(path, spec.name, spec.goal))
            hint = language_hint(spec.goal, spec.context, spec.language)
            if hint is not None:
                typer.secho(f"{path}: note: {hint}", fg=typer.colors.YELLOW, err=True)
    if problems:
        for line in problems:
            typer.secho(line, fg=typer.colors.RED, err=True)
        raise typer.Exit(SpecError.exit_code)


def _spec_files(paths: list[Path]) -> list[Path]:
    """The files named, a folder standing for its ``*.yaml`` and ``*.yml`` files (sorted, not
    below it); a folder with none is refused (exit 2)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
            if not found:
                _refuse(f"{path}: no *.yaml or *.yml file in this folder")
            files += found
        else:
            files.append(path)
    return files


@app.command()
def render(
    events: Annotated[
        Path, typer.Argument(help="Event log: JSON lines, one signed event each.", metavar="EVENTS")
    ],
    format: Annotated[Format, typer.Option("--format", "-f", help="What to write.")] = Format.markdown,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here (default stdout).")] = None,
    content_only: Annotated[bool, typer.Option("--content-only", help=CONTENT_ONLY_HELP)] = False,
) -> None:
    """Fold a recorded event log into a plan and render it.

    \b
    Examples:
      specswarm render run/events.jsonl --out plan.md
      specswarm render run/events.jsonl --format json --content-only --out plans/trip.json
    """
    from specswarm.plan.fold import fold
    from specswarm.protocol.events import read_event_log
    from specswarm.render import render_plan

    _check_output(out, "--out", "the plan")
    log = read_event_log(events)
    if log.rejected:
        typer.secho(
            f"{events}: dropped {len(log.rejected)} invalid event(s); "
            f"first: line {log.rejected[0][0]}: {log.rejected[0][1]}",
            fg=typer.colors.YELLOW,
            err=True,
        )
    plan = fold(log.events)
    if plan.run_id is None:
        from specswarm.errors import UsageError

        raise UsageError(
            f"{events}: no run event (expected an event log that `plan --events` or `peer --events` wrote)"
        )
    _write_output(render_plan(plan, format.value, content_only=content_only), out)


@app.command()
def diff(
    old: Annotated[
        Path, typer.Argument(help="The earlier plan (JSON: render or plan --format json).", metavar="OLD")
    ],
    new: Annotated[Path, typer.Argument(help="The later plan (JSON).", metavar="NEW")],
) -> None:
    """Compare two JSON plans node by node, content only; exit 0 same, 1 different, 2 unreadable.

    \b
    Example:
      specswarm diff plans/trip.json new.json || echo "the plan changed"
    """
    from specswarm.render.diff import PlanDocumentError, diff_plans, format_changes, parse_plan

    trees = []
    for path in (old, new):
        try:
            trees.append(parse_plan(path.read_text(encoding="utf-8-sig")))
        except OSError as exc:
            _refuse(f"{path}: cannot read the plan: {exc.strerror or exc}")
        except UnicodeDecodeError:
            _refuse(f"{path}: cannot read the plan: not UTF-8 text")
        except PlanDocumentError as exc:
            _refuse(f"{path}: {exc}")
    changes = diff_plans(trees[0], trees[1])
    typer.echo(format_changes(changes, str(old), str(new)), nl=False)
    if changes:
        raise typer.Exit(1)


def _refuse(message: str) -> NoReturn:
    """Bad input to a command that is not a spec: one red line, exit 2."""
    typer.secho(message, fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


@app.command()
def plan(
    spec: Annotated[Path, typer.Argument(help="Goal spec (YAML).", metavar="SPEC")],
    format: Annotated[
        Format | None,
        typer.Option("--format", "-f", help="What to write (default: the spec's output.format)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the plan here (default stdout).")
    ] = None,
    events: Annotated[
        Path | None, typer.Option("--events", help="Write every signed event here (JSON lines).")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds before giving up (default: the spec's budget).")
    ] = None,
    resume: Annotated[
        Path | None, typer.Option("--resume", help="Continue from an event log written by --events.")
    ] = None,
    spec_changed: Annotated[
        SpecChanged | None,
        typer.Option(
            "--spec-changed",
            help="With --resume, when SPEC was edited since the run began: 'original' resumes the run "
            "with the spec it began with (the edits unused), 'new' starts a new run of the edited spec. "
            "Without it such a run exits 2 naming the changed fields.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No live progress.")] = False,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Write a JSON run report here (digests per peer, counters, timings)."),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="Keep the model's answers in this directory and replay them on a re-run (default: the spec's cache).",
        ),
    ] = None,
    no_restart: Annotated[
        bool,
        typer.Option(
            "--no-restart", help="Leave a peer that dies dead (default: restart it, up to 3 times)."
        ),
    ] = False,
    peers_per_process: Annotated[
        int,
        typer.Option(
            "--peers-per-process",
            min=1,
            help="Run up to N peers in each process, each with its own libp2p host and key "
            "(default 1: one process per peer).",
        ),
    ] = 1,
    content_only: Annotated[bool, typer.Option("--content-only", help=CONTENT_ONLY_HELP)] = False,
    allow_outside_files: Annotated[bool, typer.Option("--allow-outside-files", help=OUTSIDE_HELP)] = False,
) -> None:
    """Launch the peers the spec declares (one process each, where its network.listen says) and
    converge on a plan.

    \b
    Examples:
      specswarm plan goals/japan.yaml --out japan.md
      specswarm plan goals/todo-cli.yaml --format spec --cache .specswarm-cache
      specswarm plan goals/japan.yaml --resume RUNDIR/events.jsonl   # the path a stopped run names
    """
    from specswarm.swarm.overrides import check_overrides

    check_overrides()  # before the launcher is imported: a bad value fails at once
    from specswarm.swarm.launcher import run_plan

    if spec_changed is not None and resume is None:
        _refuse("--spec-changed goes with --resume LOG (it says which spec a resumed run goes on with)")
    run_plan(
        spec,
        fmt=format.value if format else None,
        out=out,
        events_path=events,
        timeout=timeout,
        resume=resume,
        quiet=quiet,
        report=report,
        restart=not no_restart,
        cache=cache,
        peers_per_process=peers_per_process,
        spec_changed=spec_changed.value if spec_changed else None,
        content_only=content_only,
        allow_outside_files=allow_outside_files,
    )


def _register_subapps() -> None:
    import specswarm.cli.peers  # noqa: F401 - registers peer, peer-group and observe on app

    try:
        from specswarm.cli.model import model_app
    except ImportError:  # pragma: no cover - model layer not present
        return
    app.add_typer(model_app, name="model")


_register_subapps()


def main() -> None:
    try:
        app()
    except (SpecSwarmError, KeyboardInterrupt, OSError) as exc:
        _exit(exc)
