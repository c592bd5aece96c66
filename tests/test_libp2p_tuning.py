"""The py-libp2p tuning of specswarm/transport/_tuning.py: a signed peer record is verified once
per (host, sender, bytes), a rejected one every time; yamux credit is batched unless the user
set the variable; the library's pubsub modules call the remembering check."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest

from specswarm.transport import _tuning


@dataclass
class Msg:
    senderRecord: bytes  # noqa: N815 - the protobuf field's name

    def HasField(self, name: str) -> bool:  # noqa: N802 - the protobuf method's name
        return name == "senderRecord" and bool(self.senderRecord)


@dataclass(frozen=True)
class Peer:
    raw: bytes

    def to_bytes(self) -> bytes:
        return self.raw


def test_a_record_is_checked_once_per_host_sender_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, bytes, bytes]] = []
    verdicts = {b"good": True, b"forged": False}

    def check(msg: Msg, host: Any, peer_id: Peer) -> bool:
        calls.append((host, peer_id.raw, msg.senderRecord))
        return verdicts.get(msg.senderRecord, True)

    monkeypatch.setattr(_tuning, "_check", check)
    monkeypatch.setattr(_tuning, "_accepted", type(_tuning._accepted)())
    host_a, host_b = object(), object()
    a, b = Peer(b"A"), Peer(b"B")
    once = _tuning.consume_signed_record_once
    assert once(Msg(b"good"), host_a, a) and once(Msg(b"good"), host_a, a)
    assert len(calls) == 1, "the same record from the same peer is verified once"
    assert once(Msg(b"good"), host_a, b) and once(Msg(b"good"), host_b, a)
    assert len(calls) == 3, "another sender or another host of this process checks again"
    assert not once(Msg(b"forged"), host_a, a) and not once(Msg(b"forged"), host_a, a)
    assert len(calls) == 5, "a rejected record is never remembered"
    assert once(Msg(b""), host_a, a) and len(calls) == 5  # no record: nothing to check


def test_a_remembered_record_is_checked_again_after_the_recheck_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []

    def check(msg: Msg, host: Any, peer_id: Peer) -> bool:
        calls.append(msg.senderRecord)
        return True

    monkeypatch.setattr(_tuning, "_check", check)
    monkeypatch.setattr(_tuning, "_accepted", type(_tuning._accepted)())
    now = [1000.0]
    monkeypatch.setattr(_tuning, "_clock", lambda: now[0])
    host = object()
    _tuning.consume_signed_record_once(Msg(b"r"), host, Peer(b"A"))
    now[0] += _tuning.RECORD_RECHECK - 1
    _tuning.consume_signed_record_once(Msg(b"r"), host, Peer(b"A"))
    now[0] += 2
    _tuning.consume_signed_record_once(Msg(b"r"), host, Peer(b"A"))
    assert calls == [b"r", b"r"]


def test_the_library_uses_the_remembering_check_and_batched_credit(monkeypatch: pytest.MonkeyPatch) -> None:
    import libp2p.pubsub.gossipsub as gossipsub
    import libp2p.pubsub.pubsub as pubsub

    import specswarm.transport.p2p  # noqa: F401 - importing it tunes the library

    assert vars(pubsub)["maybe_consume_signed_record"] is _tuning.consume_signed_record_once
    assert vars(gossipsub)["maybe_consume_signed_record"] is _tuning.consume_signed_record_once
    monkeypatch.delenv("PY_YAMUX_RELEASE_ON_READ", raising=False)
    _tuning.tune_libp2p()
    assert os.environ["PY_YAMUX_RELEASE_ON_READ"] == "0"
    monkeypatch.setenv("PY_YAMUX_RELEASE_ON_READ", "1")
    _tuning.tune_libp2p()
    assert os.environ["PY_YAMUX_RELEASE_ON_READ"] == "1", "a user's own setting is kept"


def test_tuning_can_be_turned_off_for_a_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    import libp2p.pubsub.pubsub as pubsub

    monkeypatch.delenv("PY_YAMUX_RELEASE_ON_READ", raising=False)
    monkeypatch.setenv(_tuning.TUNING_ENV, "0")
    try:
        _tuning.tune_libp2p()
        assert vars(pubsub)["maybe_consume_signed_record"] is _tuning._check
        assert "PY_YAMUX_RELEASE_ON_READ" not in os.environ
    finally:
        monkeypatch.delenv(_tuning.TUNING_ENV)
        _tuning.tune_libp2p()
    assert vars(pubsub)["maybe_consume_signed_record"] is _tuning.consume_signed_record_once
