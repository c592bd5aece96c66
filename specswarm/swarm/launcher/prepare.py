"""Prepare a launch: a new run (fresh keys, a new run event) or a resumed one (the keys and
the events saved beside an earlier run's event log), and the files the peers start from."""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

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

    @property
    def run(self) -> str:
        return self.run_event.run

    @property
    def keys_file(self) -> Path:
        return keys_path(self.events_path)


def prepare_run(spec: GoalSpec, *, resume: Path | None, events_path: Path | None) -> PreparedRun:
    """A new run of ``spec``, or the run logged in ``resume``; writes the run and preload files."""
    workdir = Path(tempfile.mkdtemp(prefix="specswarm-run-"))
    if resume is not None:
        run_event, keys, preload = _resumed(spec, resume)
    else:
        run_event, keys, preload = _new(spec)
    run_file = workdir / "run.json"
    run_file.write_text(run_event.to_bytes().decode())
    preload_file = None
    if preload:
        preload_file = workdir / "preload.jsonl"
        with open(preload_file, "w") as fh:
            write_event_log(preload, fh)
    return PreparedRun(
        run_event,
        keys,
        workdir,
        run_file,
        events_path if events_path is not None else workdir / "events.jsonl",
        preload,
        preload_file,
    )


def _new(spec: GoalSpec) -> tuple[Event, RunKeys, list[Event]]:
    """A new run event, admitting whom the spec's ``access`` says (:mod:`.network`)."""
    launcher, admission, seats = Identity.generate(), admission_key(spec), seat_keys(spec)
    run_event = make_run_event(
        launcher, listed(spec, seats), admission=admission_field(spec, admission), nonce=secrets.token_hex(8)
    )
    return run_event, RunKeys(admission, seats), []


def _resumed(spec: GoalSpec, resume: Path) -> tuple[Event, RunKeys, list[Event]]:
    keys_file = keys_path(resume)
    if not keys_file.exists():
        raise SpecSwarmError(f"cannot resume: {keys_file} (written beside the event log) is missing")
    keys = RunKeys.load(keys_file)
    preload = read_event_log(resume).events
    run_event = next((e for e in preload if e.kind == "run"), None)
    if run_event is None:
        raise SpecSwarmError(f"cannot resume: {resume} holds no run event")
    assert isinstance(run_event.body, RunBody)
    if run_event.body.spec != listed(spec, keys.peers):
        # a note, not an error: the run goes on, as every peer of it knows it
        print(
            "warning: the spec changed since the run began; resuming with the original spec",
            file=sys.stderr,
        )
    return run_event, keys, preload


def _write_secret_json(path: Path, data: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
