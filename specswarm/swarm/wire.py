"""The wire format of a node: every message decoded once into a small typed value, encoded here.

Gossip (one topic per run; every message passes the node's validator before delivery):

* ``{"t": "ev", "e": <event>}`` → :class:`EventMsg` (the event already verified);
* ``{"t": "have", "n": N, "d": <set digest>}`` → :class:`HaveMsg`.

Requests (anti-entropy, request/response; never gossiped) and their answers:

* ``{"t": "hello"}`` → ``{"run": <run event> | null, "n": N, "role": <role>}``;
* ``{"t": "sum", "p": [<hex prefixes>], "all": [<hex prefixes>]}`` → ``{"sum": {<prefix>:
  {"ids": [<16-hex id prefixes>]} | {"kids": [<"count:xor"> × 16]}}}``: per prefix, the ids
  held under it when there are few (:data:`~specswarm.swarm.ranges.LIST_MAX`, or the prefix
  is in ``all``),
  else the summary of each one-digit-longer prefix, so two peers descend only where their
  sets differ (:meth:`~specswarm.swarm.antientropy.AntiEntropy.sync_with`);
* ``{"t": "inv"}`` → ``{"ids": [<16-hex id prefixes>]}`` (every id: what peers before ``sum``
  ask, and what a peer asks one that does not answer ``sum``);
* ``{"t": "get", "ids": [...]}`` → ``{"events": [...]}``;
* anything else → ``{"error": ...}``.

:class:`Intake` is the validator: it decodes a gossip message once, counts what it refuses, and
keeps the typed result for the receive loop, which takes it instead of parsing the bytes again.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from specswarm.protocol.events import MAX_EVENT_BYTES, Event, check_event
from specswarm.swarm.ranges import ID_PREFIX as ID_PREFIX
from specswarm.swarm.ranges import SUM_BATCH, Sum, prefixes

T = TypeVar("T")

GET_BATCH = 200
"""Ids in one ``get`` request (a server reads no more)."""
MAX_MESSAGE_BYTES = MAX_EVENT_BYTES + 1024
"""A gossip message is one event plus a small envelope; anything larger is dropped unread."""
MAX_DIGEST_CHARS = 100
"""A ``have`` digest this long or longer is not one of ours."""
VERIFIED_CACHE = 512
"""Gossip messages the validator decoded that the receive loop has not taken yet (at most)."""

HELLO = b'{"t":"hello"}'
INV = b'{"t":"inv"}'
MALFORMED_REQUEST = b'{"error":"malformed request"}'
IDS_NOT_A_LIST = b'{"error":"ids must be a list"}'
UNKNOWN_REQUEST = b'{"error":"unknown request"}'
PREFIXES_NOT_A_LIST = b'{"error":"p and all must be lists"}'


def reason_class(reason: str) -> str:
    """The counter a refusal goes to: its reason up to the first colon."""
    return reason.split(":", 1)[0].strip() or "invalid"


VERIFIED_SHARED = 8192
"""Events pulled by anti-entropy whose verification every node of one process shares."""

_VERIFIED: dict[tuple[bytes, str | None], tuple[Event | None, str]] = {}


def verify_event(raw: object, run: str | None) -> tuple[Event | None, str]:
    """Verify an event as it came off the wire (any JSON value): ``(event, "")`` or ``(None, reason)``.

    Like :func:`decode_gossip`, a pure function with an immutable answer, shared by every node
    of the process (keyed by a hash of the value's JSON; the :data:`VERIFIED_SHARED` latest
    kept): peers in one process that pull the same event verify it once."""
    try:
        text = json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()
    except (TypeError, ValueError, RecursionError):
        return check_event(raw, run)  # type: ignore[arg-type]  # refuses any value, never raises
    return _shared(_VERIFIED, VERIFIED_SHARED, text, run, lambda: check_event(raw, run))  # type: ignore[arg-type]


def _shared(
    cache: dict[tuple[bytes, str | None], T],
    keep: int,
    data: bytes,
    run: str | None,
    compute: Callable[[], T],
) -> T:
    """The process-wide answer for ``(data, run)`` (keyed by a hash of ``data``): computed once,
    the ``keep`` latest kept (the oldest dropped first)."""
    key = (hashlib.blake2b(data, digest_size=20).digest(), run)
    answer = cache.get(key)
    if answer is None:
        answer = cache[key] = compute()
        if len(cache) > keep:
            del cache[next(iter(cache))]
    return answer


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


# -- gossip -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HaveMsg:
    """``{"t": "have"}``: the sender holds ``n`` events whose set digest is ``digest``."""

    n: int
    digest: str


@dataclass(frozen=True, slots=True)
class EventMsg:
    """``{"t": "ev"}``: a verified event, and (``"n"``, ``"d"``) the publisher's set right after
    it added the event: the announcement that publishing makes due, riding on the event instead
    of a message of its own (which every peer would receive too)."""

    event: Event
    have: HaveMsg | None = None


Gossip = EventMsg | HaveMsg


@dataclass(frozen=True, slots=True)
class Refused:
    """A gossip message we do not take, and the counter it goes to."""

    reason: str
    envelope: bool
    """The message itself is not ours (oversized, not JSON, unknown kind, bad ``have``), as
    opposed to carrying an event that fails verification."""


_MALFORMED = Refused("malformed", envelope=True)


DECODED_SHARED = 4096
"""Gossip messages whose decoding every node of one process shares (see :func:`decode_gossip`)."""


_SHARED: dict[tuple[bytes, str | None], Gossip | Refused] = {}


def decode_gossip(data: bytes, run: str | None) -> Gossip | Refused:
    """Decode and verify one gossip message (events of runs other than ``run`` are refused).

    A pure function of its arguments with an immutable result, so its answers are shared by
    every node of the process (keyed by a hash of the bytes; the :data:`DECODED_SHARED` latest
    kept): several peers in one process (``--peers-per-process``, simulations) verify each
    message once, not once each. Verifying an event (schema and signature) costs ~2-7 ms."""
    return _shared(_SHARED, DECODED_SHARED, data, run, lambda: _decode_gossip(data, run))


def _decode_gossip(data: bytes, run: str | None) -> Gossip | Refused:
    if len(data) > MAX_MESSAGE_BYTES:  # refused unread: parsing it is already the attack
        return Refused("oversized", envelope=True)
    try:
        msg = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return _MALFORMED
    if not isinstance(msg, dict):
        return _MALFORMED
    kind = msg.get("t")
    have = _have(msg)
    if kind == "have":
        return have or _MALFORMED
    if kind == "ev":
        if have is None and ("n" in msg or "d" in msg):
            return _MALFORMED
        event, reason = verify_event(msg.get("e"), run)
        return EventMsg(event, have) if event is not None else Refused(reason_class(reason), envelope=False)
    return _MALFORMED


def _have(msg: dict[str, object]) -> HaveMsg | None:
    n, digest = msg.get("n"), msg.get("d")
    if type(n) is int and n >= 0 and isinstance(digest, str) and len(digest) < MAX_DIGEST_CHARS:
        return HaveMsg(n, digest)
    return None


def encode_event(event: Event, have: HaveMsg | None = None) -> bytes:
    if have is None:
        return _dumps({"t": "ev", "e": event.to_json()})
    return _dumps({"t": "ev", "e": event.to_json(), "n": have.n, "d": have.digest})


def encode_have(n: int, digest: str) -> bytes:
    return _dumps({"t": "have", "n": n, "d": digest})


@dataclass(slots=True)
class _Decoded:
    run: str | None
    """The run id the message was verified against."""
    msg: Gossip
    pending: int
    """Deliveries validated and not yet taken (the same bytes may arrive more than once)."""


class Intake:
    """The node's gossip validator, and the hand-over of what it decoded to the receive loop.

    :meth:`validate` decodes each message once and counts each refusal in ``dropped`` by its
    reason; :meth:`take` gives the receive loop the decoded message for the same bytes. Only a
    message the validator never saw, or that fell out of the bounded hand-over, is decoded in
    :meth:`take` (its event refusals are counted there; envelope refusals are the validator's).
    """

    def __init__(self, dropped: Counter[str], run_id: Callable[[], str | None]) -> None:
        self._dropped = dropped
        self._run_id = run_id
        self._decoded: dict[bytes, _Decoded] = {}

    def validate(self, data: bytes) -> bool:
        run = self._run_id()
        held = self._decoded.get(data)
        if held is not None and held.run == run:
            held.pending += 1  # the same bytes again: verified already
            return True
        msg = decode_gossip(data, run)
        if isinstance(msg, Refused):
            self._dropped[msg.reason] += 1
            return False
        self._decoded[data] = _Decoded(run, msg, 1 + (held.pending if held is not None else 0))
        if len(self._decoded) > VERIFIED_CACHE:
            del self._decoded[next(iter(self._decoded))]
        return True

    def take(self, data: bytes) -> Gossip | None:
        """The message in ``data`` for the receive loop, or None if it is refused."""
        run = self._run_id()
        held = self._pop(data)
        if held is not None and held.run == run:
            return held.msg
        msg = decode_gossip(data, run)
        if isinstance(msg, Refused):
            if not msg.envelope:
                self._dropped[msg.reason] += 1
            return None
        return msg

    def forget(self, data: bytes) -> None:
        """One delivery of ``data`` was dropped unread."""
        self._pop(data)

    def _pop(self, data: bytes) -> _Decoded | None:
        held = self._decoded.get(data)
        if held is not None:
            held.pending -= 1
            if held.pending <= 0:
                del self._decoded[data]
        return held


# -- requests and their answers ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Hello:
    """``{"t": "hello"}``: what run is this, and how many events do you hold?"""


@dataclass(frozen=True, slots=True)
class Inv:
    """``{"t": "inv"}``: the id prefixes of every event you hold."""


@dataclass(frozen=True, slots=True)
class Get:
    """``{"t": "get"}``: the events under these id prefixes."""

    ids: tuple[str, ...]


Request = Hello | Inv | Sum | Get


@dataclass(frozen=True, slots=True)
class BadRequest:
    """A request we cannot answer, and the error to answer it with."""

    reply: bytes


def encode_request(request: Request) -> bytes:
    if isinstance(request, Hello):
        return HELLO
    if isinstance(request, Inv):
        return INV
    if isinstance(request, Sum):
        return _dumps({"t": "sum", "p": list(request.prefixes), "all": list(request.everything)})
    return _dumps({"t": "get", "ids": list(request.ids)})


def decode_request(data: bytes) -> Request | BadRequest:
    try:
        req = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return BadRequest(MALFORMED_REQUEST)
    if not isinstance(req, dict):
        return BadRequest(MALFORMED_REQUEST)
    kind = req.get("t")
    if kind == "hello":
        return Hello()
    if kind == "inv":
        return Inv()
    if kind == "sum":
        asked, everything = req.get("p", []), req.get("all", [])
        if not isinstance(asked, list) or not isinstance(everything, list):
            return BadRequest(PREFIXES_NOT_A_LIST)
        every = prefixes(everything[:SUM_BATCH])
        return Sum(prefixes(asked[: SUM_BATCH - len(every)]), every)
    if kind == "get":
        wanted = req.get("ids")
        if not isinstance(wanted, list):
            return BadRequest(IDS_NOT_A_LIST)
        return Get(tuple(w for w in wanted[:GET_BATCH] if isinstance(w, str)))
    return BadRequest(UNKNOWN_REQUEST)


class WireError(ValueError):
    """An answer that is not what the request asks for."""


def _reply_field(data: bytes, key: str) -> Iterable[object]:
    """``key`` of an answer (empty if absent); ValueError if the answer is not a JSON object,
    TypeError if the field is not iterable."""
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise WireError("an answer is a JSON object")
    value = obj.get(key, [])
    if not isinstance(value, Iterable):
        raise TypeError(f"{key!r} is not a list")
    return value


def encode_hello_reply(run_event: Event | None, n: int, role: str) -> bytes:
    return _dumps({"run": run_event.to_json() if run_event else None, "n": n, "role": role})


def decode_hello_reply(data: bytes) -> object:
    """The run event of a ``hello`` answer, unverified (None if it names none); ValueError if not JSON."""
    obj = json.loads(data)
    return obj.get("run") if isinstance(obj, dict) else None


def encode_inv_reply(prefixes: Iterable[str]) -> bytes:
    return _dumps({"ids": sorted(prefixes)})


def decode_inv_reply(data: bytes) -> tuple[str, ...]:
    """The id prefixes of an ``inv`` answer (entries that are not strings skipped)."""
    return tuple(i for i in _reply_field(data, "ids") if isinstance(i, str))


def encode_get_reply(events: Iterable[Event]) -> bytes:
    return _dumps({"events": [e.to_json() for e in events]})


def decode_get_reply(data: bytes) -> tuple[object, ...]:
    """The events of a ``get`` answer, unverified."""
    return tuple(_reply_field(data, "events"))
