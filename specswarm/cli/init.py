"""``specswarm init``: the first goal spec in one command, from a built-in template per kind.

The templates are ``templates/specs/KIND.yaml.j2`` (trip, software, event, blank): commented
specs with roles, quorum, constraints and tree limits that suit the kind. What the user gives
(the goal, the file's name) is put in as YAML scalars that read back as exactly the text given,
and the file is loaded with :func:`~specswarm.spec.load_spec` as soon as it is written.

The first line of every spec written is a ``# yaml-language-server: $schema=...`` comment, so
an editor with the YAML language server completes and checks the fields. It names the goal
schema by a path relative to the written file when the file lies inside the tree that holds
the schema (a checkout: ``goals/x.yaml`` gets ``../schemas/goal.schema.json``); otherwise by
the schema's absolute path in the installed package (a user's own file, outside any checkout),
or by whatever ``--schema`` says (a URL a team serves it from, say).
"""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
from pathlib import Path
from typing import NoReturn

import jinja2
import typer
import yaml

from specswarm.resources import schema_path, template_dir

KINDS = ("trip", "software", "event", "blank")
SCHEMA_LINE = "# yaml-language-server: $schema="

_NUMBERS = {
    word: n
    for n, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "  # noqa: SIM905
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"a": 1, "an": 1, "thirty": 30}
_LENGTH = re.compile(r"\b(\d{1,3}|" + "|".join(_NUMBERS) + r")[\s-]+(day|week)s?\b", re.IGNORECASE)
_NOT_PLACES = frozenset(
    "I January February March April May June July August September October November December "  # noqa: SIM905
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Christmas Easter".split()
)
"""Capitalised words that name no place."""
_FILLER = frozenset(
    "a an the to for of in on at and with my our plan write organize organise create make".split()  # noqa: SIM905
)
"""Words a file name leaves out."""
_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def refuse(message: str) -> NoReturn:
    """Bad input: one red line on stderr, exit 2."""
    typer.secho(message, fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


# --------------------------------------------------------------------------- text helpers


def one_line(text: str) -> str:
    """``text`` with every run of white space (line breaks included) made one space, trimmed."""
    return " ".join(text.split())


def yaml_scalar(text: str) -> str:
    """``text`` as a one-line YAML scalar that loads back as ``text``: plain when that is safe,
    else quoted."""
    dumped = yaml.safe_dump(text, allow_unicode=True, width=sys.maxsize)
    dumped = dumped.removesuffix("\n...\n").removesuffix("\n")
    if "\n" in dumped or yaml.safe_load(dumped) != text:
        dumped = json.dumps(text)  # a JSON string (ASCII escapes) is a YAML double-quoted scalar
    return dumped


def slug(goal: str) -> str:
    """A file name stem from the goal's first content words: ``two-week-trip-japan``."""
    ascii_text = unicodedata.normalize("NFKD", goal).encode("ascii", "ignore").decode().lower()
    words = [w for w in re.findall(r"[a-z0-9]+", ascii_text) if w not in _FILLER]
    return "-".join(words[:5])[:48].strip("-") or "goal"


def trip_days(goal: str) -> int | None:
    """The trip's length in days if the goal says it (``two-week``, ``10 days``, ``weekend``)."""
    if match := _LENGTH.search(goal):
        count, unit = match.group(1).lower(), match.group(2).lower()
        n = int(count) if count.isdigit() else _NUMBERS[count]
        days = n * 7 if unit == "week" else n
        return days if 1 <= days <= 366 else None
    lowered = goal.lower()
    if re.search(r"\bfortnight\b", lowered):
        return 14
    if re.search(r"\blong weekend\b", lowered):
        return 3
    if re.search(r"\bweekend\b", lowered):
        return 2
    return None


def place_names(goal: str) -> list[str]:
    """The names a goal gives after its first word (``Lisbon``, ``New York``), in order, once
    each; none when the goal is written in Title Case (every word capitalised)."""
    matches = list(_WORD.finditer(goal))[1:]
    capital = [m for m in matches if m.group()[0].isupper()]
    if not capital or len(capital) * 2 > len(matches):
        return []
    names: list[str] = []
    run: list[str] = []
    last_end = -2
    for m in capital:
        word = re.sub(r"['’]s$", "", m.group())
        if word in _NOT_PLACES:
            last_end = -2
            continue
        if run and goal[last_end : m.start()] == " ":
            run.append(word)
        else:
            if run:
                names.append(" ".join(run))
            run = [word]
        last_end = m.end()
    if run:
        names.append(" ".join(run))
    return list(dict.fromkeys(names))


# --------------------------------------------------------------------------- the spec


def schema_ref(target: Path) -> str:
    """What the schema line names for a spec written at ``target`` (see the module's doc)."""
    schema = schema_path("goal.schema.json").resolve()
    home = schema.parent.parent
    folder = target.resolve().parent
    if folder == home or home in folder.parents:
        return Path(os.path.relpath(schema, folder)).as_posix()
    return schema.as_posix()


def render_spec(kind: str, goal: str, target: Path, schema: str | None = None) -> tuple[str, list[str]]:
    """The text of a ``kind`` spec for ``goal`` to be written at ``target``, and notes for the user."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    notes: list[str] = []
    values: dict[str, object] = {
        "schema": one_line(schema) if schema else schema_ref(target),
        "file": target.name if re.fullmatch(r"[\w.+-]+", target.name) else "THIS_FILE.yaml",
        "name": yaml_scalar(one_line(target.stem) or "goal"),
        "goal": yaml_scalar(goal),
    }
    if kind == "trip":
        days = trip_days(goal)
        values["days"] = days or 7
        values["days_note"] = "" if days else "  # the goal names no length: 7 days assumed, set yours"
        if not days:
            notes.append(f"the goal names no length: 7 days assumed (constraints, sum of days, in {target})")
        places = place_names(goal)
        # one name is most often the country, which the stages (its cities) do not name
        values["places"] = [yaml_scalar(p) for p in places] if len(places) > 1 else []
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir() / "specs")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env.get_template(f"{kind}.yaml.j2").render(values), notes


def run_init(file: Path | None, kind: str, goal: str | None, force: bool, schema: str | None) -> None:
    """The ``init`` command: ask for the goal if need be, write the spec, validate it."""
    from specswarm.spec import load_spec
    from specswarm.swarm.outputs import reason, unwritable

    if file is not None and file.exists() and not force:
        refuse(f"{file} exists; pass --force to overwrite it")
    why = unwritable(file) if file is not None else None  # before asking for the goal
    if why is not None:
        refuse(f"{file}: cannot write the spec there: {why}")
    if goal is None:
        if not stdin_is_terminal():
            refuse("no goal: pass --goal TEXT (on a terminal, init asks for it)")
        goal = typer.prompt("Goal (one sentence)")
    goal = one_line(goal)
    if not goal:
        refuse("the goal is empty: say in one sentence what to plan")
    target = file if file is not None else Path(f"{slug(goal)}.yaml")
    if target.exists() and not force:
        refuse(f"{target} exists; pass --force to overwrite it (or name another FILE)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        text, notes = render_spec(kind, goal, target, schema)
        with open(target, "w" if force else "x", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        if isinstance(exc, FileExistsError) and target.exists():  # made meanwhile
            refuse(f"{target} exists; pass --force to overwrite it")
        refuse(f"{target}: cannot write the spec there: {reason(exc, target)}")
    typer.echo(f"wrote {target} ({kind})", err=True)
    for note in notes:
        typer.secho(f"note: {note}", fg=typer.colors.YELLOW, err=True)
    spec = load_spec(target)  # a SpecError here is a bug in a template; the file stays to look at
    if spec.goal != goal:  # the quoting must give back the goal as typed
        refuse(f"{target}: the goal reads back as {spec.goal!r}, not {goal!r} (a bug in specswarm init)")
    typer.echo(validate_line(target, spec.name, spec.goal))
    typer.echo(f"next: edit {target}, then `specswarm plan {target}`", err=True)


def validate_line(path: Path, name: str, goal: str, width: int = 80) -> str:
    """The line ``specswarm validate`` prints for a spec that loads (a goal longer than
    ``width`` characters cut to its start)."""
    shown = goal if len(goal) <= width else goal[: width - 3] + "..."
    return f"{path}: ok ({name}: {shown!r})"
