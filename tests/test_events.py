"""Signed events: signing, every tamper refused with the right reason, schema, logs."""

from __future__ import annotations

import base64
import copy
import io
import json
from typing import Any

import pytest

from specswarm.errors import EventError, UsageError
from specswarm.protocol.canonical import canonical_bytes, digest, sha256_hex
from specswarm.protocol.events import (
    DOMAIN,
    MAX_EVENT_BYTES,
    Event,
    admission_valid,
    admit,
    check_event,
    iter_sorted,
    make_event,
    make_run_event,
    parse_event,
    read_event_log,
    run_id_for,
    sign_json,
    write_event_log,
)
from specswarm.protocol.identity import Identity
from specswarm.testing.synth import Swarm, complete_swarm, minimal_spec

ALICE = Identity(b"\xa1" * 32)
BOB = Identity(b"\xb0" * 32)
RUN = "0123456789abcdef0123456789abcdef"
OTHER_RUN = "fedcba9876543210fedcba9876543210"
BAD_SIG = "bad signature: not signed by its author, or tampered"

BODIES: dict[str, dict[str, Any]] = {
    "join": {"role": "scorer", "strategy": None, "admission": None},
    "proposal": {
        "node": "root",
        "strategy": "by place",
        "children": [
            {"title": "A", "detail": "a", "leaf": False, "facts": {"days": 2}},
            {"title": "B", "detail": "b", "leaf": True, "facts": {}},
        ],
        "revises": None,
        "rationale": "why",
    },
    "vote": {
        "proposal": "a" * 64,
        "approve": True,
        "score": 80,
        "critique": "ok",
        "checks": [{"name": "count", "score": 100, "passed": True, "note": ""}],
        "model_score": 70,
    },
    "claim": {"leaf": "0123456789abcdef.1", "supersedes": None},
    "result": {"leaf": "0123456789abcdef.1", "claim": "b" * 64, "output": "done", "model": "m"},
}


def sign_raw(who: Identity, unsigned: dict[str, Any]) -> dict[str, Any]:
    """Sign an arbitrary envelope (even one make_event would never build)."""
    sig = base64.b64encode(who.sign(DOMAIN + canonical_bytes(unsigned))).decode()
    return {**unsigned, "sig": sig}


def good(**overrides: Any) -> dict[str, Any]:
    """A well-signed vote (as a fresh dict), with envelope fields overridden after signing."""
    body = copy.deepcopy(BODIES["vote"])
    return make_event(ALICE, RUN, "vote", 5, body).to_json() | overrides


# -- signing and the happy path -------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_sign_then_check_accepts_every_kind(kind: str) -> None:
    event = make_event(ALICE, RUN, kind, 5, BODIES[kind])
    for data in (event.to_bytes(), event.to_bytes().decode(), event.to_json()):
        got, reason = check_event(data, RUN)
        assert reason == ""
        assert got == event
        assert got is not None and got.id == event.id


def test_event_id_and_signature_definition() -> None:
    event = make_event(ALICE, RUN, "claim", 3, BODIES["claim"])
    unsigned = {
        "v": 1,
        "run": RUN,
        "kind": "claim",
        "author": ALICE.peer_id,
        "lamport": 3,
        "body": BODIES["claim"],
    }
    assert event.id == sha256_hex(canonical_bytes(unsigned))
    assert event.id == digest(unsigned)
    assert event.unsigned() == unsigned
    assert event.to_json() == {**unsigned, "sig": event.sig}
    assert base64.b64decode(event.sig) == ALICE.sign(DOMAIN + canonical_bytes(unsigned))
    assert event.order == (3, ALICE.peer_id, event.id)
    # the id does not depend on the signature
    assert Event(RUN, "claim", ALICE.peer_id, 3, BODIES["claim"], "x").id == event.id


def test_run_event_id_is_body_hash() -> None:
    spec = minimal_spec()
    event = make_run_event(ALICE, spec, admission=None, nonce="n")
    body = {"spec": spec, "admission": None, "nonce": "n"}
    assert event.run == run_id_for(body) == digest(body)[:32]
    assert event.lamport == 0
    got, reason = check_event(event.to_bytes(), event.run)
    assert (got, reason) == (event, "")


def test_parse_event_raises_event_error_with_reason() -> None:
    with pytest.raises(EventError, match="^malformed JSON: "):
        parse_event(b"{")


def test_iter_sorted_uses_lamport_author_id() -> None:
    events = [
        make_event(who, RUN, "claim", lam, BODIES["claim"])
        for who, lam in [(BOB, 2), (ALICE, 2), (BOB, 1), (ALICE, 3)]
    ]
    assert [e.order for e in iter_sorted(events)] == sorted(e.order for e in events)
    assert [e.lamport for e in iter_sorted(events)] == [1, 2, 2, 3]


# -- tampering --------------------------------------------------------------------------------


def _body_tampers() -> list[tuple[str, Any]]:
    return [("score", 81), ("approve", False), ("critique", "ok!"), ("model_score", None), ("checks", [])]


@pytest.mark.parametrize(("field", "value"), _body_tampers())
def test_body_tamper_refused(field: str, value: Any) -> None:
    data = good()
    data["body"][field] = value
    assert check_event(data, RUN) == (None, BAD_SIG)


@pytest.mark.parametrize("lamport", [0, 4, 6, 1000])
def test_lamport_tamper_refused(lamport: int) -> None:
    assert check_event(good(lamport=lamport), RUN) == (None, BAD_SIG)


def test_author_swapped_to_another_valid_id_refused() -> None:
    assert check_event(good(author=BOB.peer_id), RUN) == (None, BAD_SIG)


def test_kind_tamper_refused() -> None:
    data = make_event(ALICE, RUN, "claim", 5, BODIES["claim"]).to_json()
    data["kind"] = "result"
    assert check_event(data, RUN)[1].startswith("schema: body: ")


@pytest.mark.parametrize("bit", [0, 7, 100, 255, 511])
def test_signature_bit_flip_refused(bit: int) -> None:
    data = good()
    sig = bytearray(base64.b64decode(data["sig"]))
    sig[bit // 8] ^= 1 << (bit % 8)
    data["sig"] = base64.b64encode(bytes(sig)).decode()
    assert check_event(data, RUN) == (None, BAD_SIG)


def test_signature_by_another_key_refused() -> None:
    unsigned = {k: v for k, v in good().items() if k != "sig"}
    forged = sign_raw(BOB, unsigned)  # author stays ALICE
    assert check_event(forged, RUN) == (None, BAD_SIG)


def test_run_id_changed_refused() -> None:
    # without a run filter the signature catches it; with one, the run filter does first
    assert check_event(good(run=OTHER_RUN)) == (None, BAD_SIG)
    assert check_event(good(run=OTHER_RUN), RUN) == (None, f"foreign run: {OTHER_RUN} (this run is {RUN})")


def test_foreign_run_refused_even_when_well_signed() -> None:
    event = make_event(ALICE, OTHER_RUN, "vote", 1, BODIES["vote"])
    assert check_event(event.to_bytes(), OTHER_RUN)[1] == ""
    assert check_event(event.to_bytes(), RUN) == (None, f"foreign run: {OTHER_RUN} (this run is {RUN})")


def test_run_event_with_wrong_run_id_refused() -> None:
    body = {"spec": minimal_spec(), "admission": None, "nonce": ""}
    wrong = "0" * 32
    assert run_id_for(body) != wrong
    data = make_event(ALICE, wrong, "run", 0, body).to_bytes()
    assert check_event(data) == (None, "run event: its run id is not the hash of its body")
    # a run event whose body was changed after signing fails the signature first
    ok = make_run_event(ALICE, minimal_spec()).to_json()
    ok["body"]["nonce"] = "x"
    assert check_event(ok) == (None, BAD_SIG)


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ({"quorum": 0}, "quorum"),
        ({"quorum": "most"}, "quorum"),
        ({"quorum": 1.5}, "quorum"),
        ({"tree": "deep"}, "tree"),
        ({"access": None}, "access"),
        ({"roles": {**minimal_spec()["roles"], "scorer": {"count": "three"}}}, "roles.scorer.count"),
    ],
)
def test_run_event_with_an_invalid_spec_refused(override: dict[str, Any], path: str) -> None:
    # the fold reads the run's spec: one the goal schema forbids must never reach it
    body = {"spec": {**minimal_spec(), **override}, "admission": None, "nonce": ""}
    data = sign_json(ALICE, run_id_for(body), "run", 0, body)
    got, reason = check_event(data, data["run"])
    assert got is None
    assert reason.startswith(f"run event: invalid spec: {path}: "), reason


# -- size, JSON, schema --------------------------------------------------------------------


def test_oversized_refused_unread() -> None:
    data = b" " * (MAX_EVENT_BYTES + 1)
    assert check_event(data) == (None, f"oversized: {MAX_EVENT_BYTES + 1} bytes (limit {MAX_EVENT_BYTES})")
    # a well-signed event just over the limit is refused too
    big = make_event(ALICE, RUN, "result", 1, {**BODIES["result"], "output": "x" * 20000}).to_bytes()
    padded = big + b" " * (MAX_EVENT_BYTES + 1 - len(big))
    assert check_event(padded, RUN)[1].startswith("oversized: ")
    # exactly at the limit it is read (and accepted: JSON allows trailing whitespace)
    at_limit = big + b" " * (MAX_EVENT_BYTES - len(big))
    assert check_event(at_limit, RUN)[1] == ""


@pytest.mark.parametrize("data", [b"", b"{", b"{'a': 1}", b"\xff\xfe\x00", "[1, 2", b"nul", b'{"v": 1,}'])
def test_malformed_json_refused(data: bytes | str) -> None:
    event, reason = check_event(data)
    assert event is None
    assert reason.startswith("malformed JSON: ")


@pytest.mark.parametrize("data", [b"[]", b"1", b'"event"', b"null", b"true", [1, 2], "[{}]"])
def test_non_object_refused(data: Any) -> None:
    assert check_event(data) == (None, "malformed: an event is a JSON object")


def test_envelope_schema_violations() -> None:
    cases = {
        "v": ("v", 2),
        "run": ("run", "ABC"),
        "kind": ("kind", "gossip"),
        "author": ("author", "Qm123"),
        "lamport": ("lamport", -1),
        "body": ("body", []),
        "sig": ("sig", "short"),
    }
    for where, (field, value) in cases.items():
        reason = check_event(good(**{field: value}), RUN)[1]
        assert reason.startswith(f"schema: {where}: "), (field, reason)
    data = good()
    del data["sig"]
    assert check_event(data)[1].startswith("schema: (event): 'sig' is a required property")
    assert check_event(good(extra=1))[1].startswith("schema: (event): Additional properties")
    assert check_event(good(lamport=10**9 + 1))[1].startswith("schema: lamport: ")
    assert check_event(good(lamport=True))[1].startswith("schema: lamport: ")
    assert check_event(good(lamport="5"))[1].startswith("schema: lamport: ")


BODY_VIOLATIONS: list[tuple[str, Any, str]] = [
    ("run", {"spec": {}, "admission": None}, "body"),
    ("run", {"spec": [], "admission": None, "nonce": ""}, "body/spec"),
    ("run", {"spec": {}, "admission": "xyz", "nonce": ""}, "body/admission"),
    ("run", {"spec": {}, "admission": None, "nonce": "n" * 101}, "body/nonce"),
    ("join", {"role": "king", "strategy": None, "admission": None}, "body/role"),
    ("join", {"role": "scorer", "strategy": None}, "body"),
    ("join", {"role": "scorer", "strategy": 3, "admission": None}, "body/strategy"),
    ("join", {"role": "scorer", "strategy": None, "admission": "not a sig"}, "body/admission"),
    ("proposal", {**BODIES["proposal"], "children": []}, "body/children"),
    ("proposal", {**BODIES["proposal"], "node": "root.0"}, "body/node"),
    ("proposal", {**BODIES["proposal"], "node": "0123456789abcdef.100"}, "body/node"),
    ("proposal", {**BODIES["proposal"], "revises": "abc"}, "body/revises"),
    (
        "proposal",
        {**BODIES["proposal"], "children": [{"title": "", "detail": "", "leaf": True, "facts": {}}]},
        "body/children/0/title",
    ),
    (
        "proposal",
        {**BODIES["proposal"], "children": [{"title": "t", "detail": "", "leaf": "yes", "facts": {}}]},
        "body/children/0/leaf",
    ),
    (
        "proposal",
        {**BODIES["proposal"], "children": [{"title": "t", "detail": "", "leaf": True, "facts": {"x": 1.5}}]},
        "body/children/0/facts/x",
    ),
    (
        "proposal",
        {**BODIES["proposal"], "children": [BODIES["proposal"]["children"][0]] * 21},
        "body/children",
    ),
    ("proposal", {**BODIES["proposal"], "rationale": "r" * 4001}, "body/rationale"),
    ("vote", {**BODIES["vote"], "score": 101}, "body/score"),
    ("vote", {**BODIES["vote"], "score": -1}, "body/score"),
    ("vote", {**BODIES["vote"], "approve": 1}, "body/approve"),
    ("vote", {**BODIES["vote"], "proposal": "A" * 64}, "body/proposal"),
    ("vote", {**BODIES["vote"], "model_score": 200}, "body/model_score"),
    ("vote", {**BODIES["vote"], "checks": [{"name": "n", "score": 1, "passed": True}]}, "body/checks/0"),
    ("vote", {k: v for k, v in BODIES["vote"].items() if k != "critique"}, "body"),
    ("claim", {"leaf": "root", "supersedes": "x"}, "body/supersedes"),
    ("claim", {"leaf": "nowhere", "supersedes": None}, "body/leaf"),
    ("claim", {"leaf": "root", "supersedes": None, "extra": 1}, "body"),
    ("result", {k: v for k, v in BODIES["result"].items() if k != "output"}, "body"),
    ("result", {**BODIES["result"], "output": "o" * 20001}, "body/output"),
    ("result", {**BODIES["result"], "claim": None}, "body/claim"),
    ("result", {**BODIES["result"], "rivals": ["c" * 64]}, "body"),  # rivals without revises
    ("result", {**BODIES["result"], "revises": "a" * 64, "rivals": []}, "body/rivals"),
    ("result", {**BODIES["result"], "revises": "a" * 64, "rivals": ["c" * 64] * 2}, "body/rivals"),
]


@pytest.mark.parametrize(
    ("kind", "body", "where"),
    BODY_VIOLATIONS,
    ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(BODY_VIOLATIONS)],
)
def test_body_schema_violations_refused(kind: str, body: Any, where: str) -> None:
    # well signed, so only the schema can refuse it
    data = sign_raw(
        ALICE, {"v": 1, "run": RUN, "kind": kind, "author": ALICE.peer_id, "lamport": 1, "body": body}
    )
    event, reason = check_event(json.dumps(data))
    assert event is None
    assert reason.startswith(f"schema: {where}: "), reason


@pytest.mark.parametrize(
    "data",
    [
        {
            "v": 1,
            "run": RUN,
            "kind": "vote",
            "author": "12D3KooW" + "1" * 44,
            "lamport": 1,
            "body": {},
            "sig": "A" * 86 + "==",
        },
        b'{"v": 1e400}',
        b"[" * 100000,
        b'{"a": "\\ud800"}',
        '{"v": NaN}',
        b'{"v": ' + b"9" * 5000 + b"}",
    ],
)
def test_hostile_input_gives_a_reason_not_an_exception(data: Any) -> None:
    event, reason = check_event(data)
    assert event is None
    assert reason


def test_author_that_is_not_an_ed25519_peer_id_refused() -> None:
    # matches the schema's pattern but does not decode to an identity multihash of an Ed25519 key
    author = "12D3KooW" + "z" * 44
    data = sign_raw(
        ALICE, {"v": 1, "run": RUN, "kind": "claim", "author": author, "lamport": 1, "body": BODIES["claim"]}
    )
    event, reason = check_event(data)
    assert event is None
    assert reason.startswith("bad author: not an Ed25519 peer id")


def test_non_canonical_signature_encoding_refused() -> None:
    data = good()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = alphabet.index(data["sig"][85])
    data["sig"] = data["sig"][:85] + alphabet[last ^ 1] + "=="
    assert check_event(data, RUN)[0] is None


# -- admission --------------------------------------------------------------------------------


def test_admission_signature() -> None:
    key = Identity(b"\xad" * 32)
    pub = key.public_key.hex()
    sig = admit(key, RUN, ALICE.peer_id, "scorer")
    assert admission_valid(pub, RUN, ALICE.peer_id, "scorer", sig) is True
    assert admission_valid(pub, RUN, ALICE.peer_id, "decomposer", sig) is False
    assert admission_valid(pub, RUN, BOB.peer_id, "scorer", sig) is False
    assert admission_valid(pub, OTHER_RUN, ALICE.peer_id, "scorer", sig) is False
    assert admission_valid(BOB.public_key.hex(), RUN, ALICE.peer_id, "scorer", sig) is False
    assert admission_valid(pub, RUN, ALICE.peer_id, "scorer", None) is False
    assert admission_valid(pub, RUN, ALICE.peer_id, "scorer", "!!notbase64") is False
    assert admission_valid("zz", RUN, ALICE.peer_id, "scorer", sig) is False


# -- event logs -------------------------------------------------------------------------------


def test_event_log_round_trip(tmp_path) -> None:
    sw = complete_swarm(seed=3, fanout=2)
    out = io.StringIO()
    write_event_log(sw.events, out)
    path = tmp_path / "events.jsonl"
    path.write_text(out.getvalue())
    log = read_event_log(path, sw.run)
    assert log.rejected == []
    assert log.events == sw.events
    assert [e.id for e in log.events] == [e.id for e in sw.events]


def test_event_log_reports_bad_lines_with_line_numbers(tmp_path) -> None:
    sw = Swarm(seed=2)
    foreign = Swarm(seed=3)
    tampered = sw.events[1].to_json()
    tampered["lamport"] += 1
    lines = [
        sw.events[0].to_bytes().decode(),  # 1 ok
        "",  # 2 blank: skipped, not an error
        "{not json",  # 3
        sw.events[1].to_bytes().decode(),  # 4 ok
        json.dumps(tampered),  # 5 tampered
        "[1, 2, 3]",  # 6 not an object
        foreign.events[1].to_bytes().decode(),  # 7 foreign run
        "   ",  # 8 blank
        sw.events[2].to_bytes().decode(),  # 9 ok
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    log = read_event_log(path, sw.run)
    assert log.events == sw.events[:3]
    assert [n for n, _ in log.rejected] == [3, 5, 6, 7]
    reasons = dict(log.rejected)
    assert reasons[3].startswith("malformed JSON: ")
    assert reasons[5] == BAD_SIG
    assert reasons[6] == "malformed: an event is a JSON object"
    assert reasons[7] == f"foreign run: {foreign.run} (this run is {sw.run})"
    # without a run filter the foreign event is accepted
    assert [n for n, _ in read_event_log(path).rejected] == [3, 5, 6]


def test_event_log_missing_file(tmp_path) -> None:
    with pytest.raises(UsageError, match=r"missing\.jsonl: cannot read event log: ") as caught:
        read_event_log(tmp_path / "missing.jsonl")
    assert caught.value.exit_code == 2  # unreadable input, as for every command
