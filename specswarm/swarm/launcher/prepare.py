"""Prepare a launch: a new run (fresh keys, a new run event) or a resumed one (the keys and
the events saved beside an earlier run's event log), and the files the peers start from.

A resumed run goes on with the spec its run event holds. When the spec file was edited since
(:func:`spec_changes`: the dotted paths where the two normalized specs differ), the launch
asks which one is meant (``--spec-changed``): ``original`` resumes the run as it began, the
edits unused; ``new`` starts a new run of the edited spec, which takes nothing from the old
log (its events belong to another run; only an answer cache the first run filled is used
again). Without the choice it stops before any peer starts (:class:`SpecChangedError`)."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shlex
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from specswarm.errors import SpecSwarmError
from specswarm.protocol.bodies import RunBody
from specswarm.protocol.events import Event, make_run_event, read_event_log, write_event_log
from specswarm.protocol.identity import Identity
from specswarm.spec import GoalSpec
from specswarm.swarm.launcher.network import admission_field, admission_key, listed, seat_keys


def keys_path(events: Path) -> Path:
    """Where the keys of the run logged in ``events`` are kept (beside it, mode 0600)."""
    return events.with_name(events.name + ".keys.json")


@dataclass
class RunKeys:
    """The secret keys of a run: the launcher's admission key and each peer's identity by seat
    name (``scorer-1``). Saved beside the event log so that ``--resume`` can go on with them."""

    admission: Identity
    """Signs every launched peer's admission (its public key is in the run event)."""
    peers: dict[str, Identity] = field(default_factory=dict)
    """Seat name -> identity; filled in as peers are built."""

    @classmethod
    def load(cls, path: Path) -> RunKeys:
        raw = json.loads(path.read_text())
        return cls(
            Identity(bytes.fromhex(raw["admission"])),
            {name: Identity(bytes.fromhex(seed)) for name, seed in raw["peers"].items()},
        )

    def save(self, path: Path) -> None:
        _write_secret_json(
            path,
            {
                "admission": self.admission.seed.hex(),
                "peers": {name: ident.seed.hex() for name, ident in self.peers.items()},
            },
        )


SpecChoice = Literal["original", "new"]
"""What ``--spec-changed`` chooses when the spec file differs from the resumed run's spec."""


class SpecChangedError(SpecSwarmError):
    """``--resume`` of a run whose spec file was edited since, without ``--spec-changed``: the
    message lists the changed fields and the two commands to choose from (exit 2)."""

    exit_code: ClassVar[int] = 2


@dataclass(frozen=True)
class Start:
    """How a launch begins (:func:`start_of`): the spec it runs and its run event, keys and preload."""

    spec: GoalSpec
    """The spec the peers run: the file's, or the resumed run's own (with the file's local settings)."""
    run_event: Event
    keys: RunKeys
    preload: list[Event]
    """The events of the run being resumed (empty for a new run)."""
    resumed: Path | None = None
    """The event log resumed; None: a new run."""
    edits: tuple[str, ...] = ()
    """Where the spec file differs from the resumed run's spec (dotted paths): left unused
    (``original``), or what the new run changes (``new``)."""


@dataclass(frozen=True)
class PreparedRun:
    """A run ready to launch: its run event and keys, and the files every peer starts from."""

    run_event: Event
    keys: RunKeys
    workdir: Path
    """Where the peers' logs, keys and event logs go (a new temporary directory)."""
    run_file: Path
    """The run event, given to each peer with ``--run-file``."""
    events_path: Path
    """Where the union event log is written (``--events``, or ``events.jsonl`` in ``workdir``)."""
    preload: list[Event]
    """The events of the run being resumed (empty for a new run)."""
    preload_file: Path | None
    """Those events as a file for ``--preload`` (None for a new run)."""
    resumed: Path | None = None
    """The event log resumed; None: a new run."""
    edits: tuple[str, ...] = ()
    """A resumed run: the spec file's edits it leaves unused (see :class:`Start`)."""

    @property
    def run(self) -> str:
        return self.run_event.run

    @property
    def keys_file(self) -> Path:
        return keys_path(self.events_path)


def start_of(
    spec: GoalSpec,
    *,
    resume: Path | None,
    spec_changed: SpecChoice | None = None,
    spec_path: Path | None = None,
) -> Start:
    """A new run of ``spec`` (the spec file), or the run logged in ``resume``; SpecChangedError
    when the file was edited since that run began and ``spec_changed`` does not say which to run
    (``spec_path``: the file as the user named it, for the commands the message suggests)."""
    if resume is None:
        return Start(spec, *_new(spec))
    run_event, keys, preload = _resumed(resume)
    assert isinstance(run_event.body, RunBody)
    original = run_event.body.spec
    if not spec.language and original.language:  # named by the model when the run began
        spec = dataclasses.replace(spec, language=original.language)
    edits = tuple(spec_changes(original, listed(spec, keys.peers)))
    if not edits:
        return Start(spec, run_event, keys, preload, resume)
    if spec_changed is None:
        raise SpecChangedError(_changed_message(original, spec, spec_path or spec.source, resume))
    if spec_changed == "new":
        return Start(spec, *_new(spec), edits=edits)
    local = dataclasses.replace(original, cache=spec.cache, source=spec.source, where=spec.where)
    return Start(local, run_event, keys, preload, resume, edits)


def prepare_run(start: Start, *, events_path: Path | None) -> PreparedRun:
    """Write the run and preload files of ``start`` in a new work directory."""
    workdir = Path(tempfile.mkdtemp(prefix="specswarm-run-"))
    run_file = workdir / "run.json"
    run_file.write_text(start.run_event.to_bytes().decode())
    preload_file = None
    if start.preload:
        preload_file = workdir / "preload.jsonl"
        with open(preload_file, "w") as fh:
            write_event_log(start.preload, fh)
    return PreparedRun(
        start.run_event,
        start.keys,
        workdir,
        run_file,
        events_path if events_path is not None else workdir / "events.jsonl",
        start.preload,
        preload_file,
        start.resumed,
        start.edits if start.resumed else (),
    )


def spec_changes(old: GoalSpec, new: GoalSpec) -> list[str]:
    """The dotted paths (``goal``, ``roles.scorer.count``, ``prompts.execute``) where the
    normalized specs differ, in the order of ``old``'s fields (a list is one value)."""
    return [path for path, _, _ in _diff(old.to_json(), new.to_json(), "")]


_ABSENT = object()


def _diff(a: Any, b: Any, path: str) -> list[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in [*a, *(k for k in b if k not in a)]:
            out += _diff(a.get(key, _ABSENT), b.get(key, _ABSENT), f"{path}.{key}" if path else key)
        return out
    return [] if a == b else [(path or "(root)", a, b)]


def _shown(value: Any, limit: int = 64) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _changed_message(original: GoalSpec, spec: GoalSpec, spec_path: Path | None, log: Path) -> str:
    diff = _diff(original.to_json(), spec.to_json(), "")
    named = shlex.quote(str(spec_path or "SPEC"))
    command = f"specswarm plan {named} --resume {shlex.quote(str(log))} --spec-changed"
    return "\n".join(
        [
            f"{named} changed since the run in {log} began (changed: {', '.join(p for p, _, _ in diff)}):",
            *(f"  {path}: {_shown(old)} -> {_shown(new)}" for path, old, new in diff),
            "to resume the run as it began (your edits unused):",
            f"  {command} original",
            f"to start a new run of the edited spec (no event of {log} carries over; an answer",
            "cache the first run filled, --cache or the spec's cache, serves again):",
            f"  {command} new",
        ]
    )


def _new(spec: GoalSpec) -> tuple[Event, RunKeys, list[Event]]:
    """A new run event, admitting whom the spec's ``access`` says (:mod:`.network`)."""
    launcher, admission, seats = Identity.generate(), admission_key(spec), seat_keys(spec)
    run_event = make_run_event(
        launcher, listed(spec, seats), admission=admission_field(spec, admission), nonce=secrets.token_hex(8)
    )
    return run_event, RunKeys(admission, seats), []


def _resumed(resume: Path) -> tuple[Event, RunKeys, list[Event]]:
    keys_file = keys_path(resume)
    if not keys_file.exists():
        raise SpecSwarmError(f"cannot resume: {keys_file} (written beside the event log) is missing")
    keys = RunKeys.load(keys_file)
    preload = read_event_log(resume).events
    run_event = next((e for e in preload if e.kind == "run"), None)
    if run_event is None:
        raise SpecSwarmError(f"cannot resume: {resume} holds no run event")
    return run_event, keys, preload


def _write_secret_json(path: Path, data: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
