"""Signed events: the only state of a run.

An event is an immutable, signed fact. Its id is the sha256 of the canonical
JSON of the envelope without the signature; the signature covers a domain
prefix plus those same bytes. Any peer can check any event offline: the
author's public key is inside its peer id.

``check_event`` never raises: it returns the event or the reason it was refused,
so a peer can drop and count bad input.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import IO, Any

from jsonschema import Draft202012Validator

from specswarm.errors import EventError, UsageError
from specswarm.protocol.bodies import Body, RunBody, parse_body
from specswarm.protocol.canonical import canonical_bytes, digest, sha256_hex
from specswarm.protocol.identity import Identity, public_key_from_peer_id, verify_signature
from specswarm.resources import load_schema
from specswarm.spec import GoalSpec

VERSION = 1
DOMAIN = b"specswarm/event/v1\n"
ADMISSION_DOMAIN = b"specswarm/admission/v1\n"
MAX_EVENT_BYTES = 256 * 1024
"""Events larger than this (as received) are refused unread. A run event carries the whole spec."""
KINDS = ("run", "join", "proposal", "vote", "ballot", "claim", "result", "summary")


@dataclass(frozen=True)
class Event:
    """One verified (or locally made) signed event, its body typed (parsed once, at the edge)."""

    run: str
    """Run id (32 hex digits)."""
    kind: str
    """run | join | proposal | vote | claim | result."""
    author: str
    """libp2p peer id of the author."""
    lamport: int
    """Author's Lamport counter at publication."""
    body: Body
    """The typed body (a mapping given here is parsed with :func:`parse_body`)."""
    sig: str
    """Base64 Ed25519 signature."""
    id: str = field(default="", compare=False)
    """sha256 hex of the canonical unsigned envelope (computed)."""
    wire: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The body exactly as signed (its canonical bytes are what the id and signature cover)."""

    def __post_init__(self) -> None:
        body: Body | Mapping[str, Any] = self.body
        if isinstance(body, Mapping):
            object.__setattr__(self, "wire", dict(body))
            object.__setattr__(self, "body", parse_body(self.kind, body))
        elif not self.wire:
            object.__setattr__(self, "wire", body.to_json())
        if not self.id:
            object.__setattr__(self, "id", sha256_hex(canonical_bytes(self.unsigned())))

    def unsigned(self) -> dict[str, Any]:
        return envelope(self.run, self.kind, self.author, self.lamport, self.wire)

    def to_json(self) -> dict[str, Any]:
        return {**self.unsigned(), "sig": self.sig}

    def to_bytes(self) -> bytes:
        return canonical_bytes(self.to_json())

    @property
    def order(self) -> tuple[int, str, str]:
        """Total order used by every deterministic rule: (lamport, author, id)."""
        return (self.lamport, self.author, self.id)


def envelope(run: str, kind: str, author: str, lamport: int, body: Mapping[str, Any]) -> dict[str, Any]:
    """The unsigned envelope: what the id hashes and the signature covers."""
    return {"v": VERSION, "run": run, "kind": kind, "author": author, "lamport": lamport, "body": body}


def _sign(identity: Identity, unsigned: Mapping[str, Any]) -> tuple[str, str]:
    """(base64 signature, event id) of an unsigned envelope: one canonical encoding for both."""
    raw = canonical_bytes(unsigned)
    return base64.b64encode(identity.sign(DOMAIN + raw)).decode(), sha256_hex(raw)


def sign_json(
    identity: Identity, run: str, kind: str, lamport: int, body: Mapping[str, Any]
) -> dict[str, Any]:
    """The signed JSON envelope of an event, its body signed exactly as given (not checked: this
    is also how tests forge bad input)."""
    unsigned = envelope(run, kind, identity.peer_id, lamport, dict(body))
    return {**unsigned, "sig": _sign(identity, unsigned)[0]}


def make_event(
    identity: Identity, run: str, kind: str, lamport: int, body: Body | Mapping[str, Any]
) -> Event:
    """Sign a new event. A typed body must be of ``kind``; a mapping must have the shape the
    schema asks for (it is parsed into its typed body)."""
    if not isinstance(body, Mapping) and kind != body.KIND:
        raise ValueError(f"a {type(body).__name__} is not the body of a {kind!r} event")
    wire = dict(body) if isinstance(body, Mapping) else body.to_json()
    typed = parse_body(kind, wire) if isinstance(body, Mapping) else body
    sig, event_id = _sign(identity, envelope(run, kind, identity.peer_id, lamport, wire))
    return Event(run, kind, identity.peer_id, lamport, typed, sig, event_id, wire)


def run_id_for(body: Mapping[str, Any]) -> str:
    """The run id a run event's body implies."""
    return digest(dict(body))[:32]


def make_run_event(
    identity: Identity, spec: GoalSpec | Mapping[str, Any], *, admission: str | None = None, nonce: str = ""
) -> Event:
    """The run event of a new run of ``spec`` (a GoalSpec, or its normalized JSON); the run id is
    the hash of the body."""
    if isinstance(spec, GoalSpec):
        body = RunBody(spec, admission, nonce)
        return make_event(identity, run_id_for(body.to_json()), "run", 0, body)
    wire = {"spec": dict(spec), "admission": admission, "nonce": nonce}
    return make_event(identity, run_id_for(wire), "run", 0, wire)


def admission_message(run: str, peer_id: str, role: str) -> bytes:
    return ADMISSION_DOMAIN + f"{run}\n{peer_id}\n{role}".encode()


def admit(admission_key: Identity, run: str, peer_id: str, role: str) -> str:
    """The admission signature a join must carry in a run that has an admission key."""
    return base64.b64encode(admission_key.sign(admission_message(run, peer_id, role))).decode()


ADMISSIONS_KEPT = 8192
"""Admission checks whose answers a process remembers (a pure function of strings: every fold
of every peer in the process asks it again for each join it holds)."""


@lru_cache(maxsize=ADMISSIONS_KEPT)
def admission_valid(admission_pub_hex: str, run: str, peer_id: str, role: str, sig_b64: str | None) -> bool:
    if not sig_b64:
        return False
    try:
        sig = base64.b64decode(sig_b64, validate=True)
        pub = bytes.fromhex(admission_pub_hex)
    except ValueError:
        return False
    return verify_signature(pub, admission_message(run, peer_id, role), sig)


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(load_schema("event.schema.json"))


@cache
def _kind_validators() -> dict[str, Draft202012Validator]:
    """One validator per kind: the event schema with only that kind's ``if kind == K then body``
    branch of its ``allOf``. For an object whose ``kind`` is K, the other branches' ``if`` fails
    and adds nothing, so these report exactly the errors of the full schema, in the same order,
    in a third less time. Empty (use the full schema) if the schema is not shaped that way."""
    schema = load_schema("event.schema.json")
    out: dict[str, Draft202012Validator] = {}
    for branch in schema.get("allOf", []):
        cond = branch.get("if", {})
        kind = cond.get("properties", {}).get("kind", {}).get("const")
        shaped = (
            set(branch) == {"if", "then"}
            and set(cond) == {"properties"}
            and set(cond["properties"]) == {"kind"}
        )
        if not shaped or not isinstance(kind, str) or kind in out:
            return {}
        out[kind] = Draft202012Validator({**schema, "allOf": [branch]})
    return out


def _validator_for(obj: Mapping[str, Any]) -> Draft202012Validator:
    kind = obj.get("kind")
    if isinstance(kind, str):
        return _kind_validators().get(kind) or _validator()
    return _validator()


def check_event(data: bytes | str | Mapping[str, Any], run: str | None = None) -> tuple[Event | None, str]:
    """Verify raw event data. Returns ``(event, "")`` or ``(None, reason)``; never raises.

    ``run``: when given, events of any other run are refused.
    """
    try:
        return parse_event(data, run), ""
    except EventError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - hostile input must never crash a peer
        return None, f"unexpected {type(exc).__name__}: {exc}"


def parse_event(data: bytes | str | Mapping[str, Any], run: str | None = None) -> Event:
    """Verify raw event data; raise EventError with the reason."""
    if isinstance(data, bytes | str):
        if len(data) > MAX_EVENT_BYTES:
            raise EventError(f"oversized: {len(data)} bytes (limit {MAX_EVENT_BYTES})")
        try:
            obj = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise EventError(f"malformed JSON: {exc}") from None
    else:
        obj = data
    if not isinstance(obj, dict):
        raise EventError("malformed: an event is a JSON object")
    error = next(iter(sorted(_validator_for(obj).iter_errors(obj), key=lambda e: list(e.path))), None)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(event)"
        raise EventError(f"schema: {where}: {error.message[:200]}")
    if run is not None and obj["run"] != run:
        raise EventError(f"foreign run: {obj['run']} (this run is {run})")
    try:
        pub = public_key_from_peer_id(obj["author"])
    except ValueError as exc:
        raise EventError(f"bad author: {exc}") from None
    sig = base64.b64decode(obj["sig"])
    if base64.b64encode(sig).decode() != obj["sig"]:
        raise EventError("bad signature: not in canonical base64")
    unsigned = {k: obj[k] for k in ("v", "run", "kind", "author", "lamport", "body")}
    raw = canonical_bytes(unsigned)
    if not verify_signature(pub, DOMAIN + raw, sig):
        raise EventError("bad signature: not signed by its author, or tampered")
    if obj["kind"] == "run" and run_id_for(obj["body"]) != obj["run"]:
        raise EventError("run event: its run id is not the hash of its body")
    return Event(
        run=obj["run"],
        kind=obj["kind"],
        author=obj["author"],
        lamport=obj["lamport"],
        body=parse_body(obj["kind"], obj["body"]),
        sig=obj["sig"],
        id=sha256_hex(raw),
        wire=obj["body"],
    )


# -- event logs (JSON lines) ----------------------------------------------------------


@dataclass
class EventLog:
    events: list[Event]
    rejected: list[tuple[int, str]]
    """(line number, reason) of every line that was not a valid event."""


def read_event_log(path: Path, run: str | None = None, verified: dict[str, Event] | None = None) -> EventLog:
    """Read a JSON-lines event log, verifying every line. Bad lines are reported, not fatal; a
    file that cannot be read, or is not UTF-8 text, is a UsageError (exit 2) naming it.
    ``verified``: line -> event of lines verified before (for the same ``run``), taken as they
    are and added to; the peers' logs of one run hold the same lines, and checking an event's
    schema and signature costs about a millisecond."""
    events: list[Event] = []
    rejected: list[tuple[int, str]] = []
    known: dict[str, Event] = {} if verified is None else verified
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                text = line.strip()
                if not text:
                    continue
                event, reason = known.get(text), ""
                if event is None:
                    event, reason = check_event(text, run)
                if event is None:
                    rejected.append((lineno, reason))
                else:
                    known[text] = event
                    events.append(event)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read event log: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: cannot read event log: not UTF-8 text") from None
    return EventLog(events, rejected)


def write_event_log(events: Iterable[Event], out: IO[str]) -> None:
    for event in events:
        out.write(event.to_bytes().decode() + "\n")


def iter_sorted(events: Iterable[Event]) -> Iterator[Event]:
    """Events in (lamport, author, id) order: the one order every export uses."""
    return iter(sorted(events, key=lambda e: e.order))
