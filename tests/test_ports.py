"""Listener ports: picked below the kernel's ephemeral range, so outgoing dials never take them."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from specswarm import ports


def test_free_port_is_below_the_ephemeral_range_and_bindable() -> None:
    lo, _ = ports.ephemeral_range()
    picked = {ports.free_port() for _ in range(20)}
    assert all(ports.LOWEST <= p < lo for p in picked), picked
    assert len(picked) > 1  # random, so two peers probing at once rarely meet
    with socket.socket() as s:
        s.bind(("127.0.0.1", picked.pop()))


def test_free_port_skips_a_taken_port(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        choices = iter([busy, busy, busy + 1 if busy + 1 < 65536 else busy - 1])
        monkeypatch.setattr(ports, "LOWEST", 1024)
        monkeypatch.setattr(ports, "ephemeral_range", lambda: (65000, 65535))
        monkeypatch.setattr(ports._rng, "randrange", lambda a, b: next(choices))
        assert ports.free_port() != busy


def test_free_port_falls_back_to_the_kernel_without_room(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    squeezed = tmp_path / "range"
    squeezed.write_text("20500\t60999\n")
    monkeypatch.setattr(ports, "RANGE_FILE", squeezed)
    assert ports.ephemeral_range() == (20500, 60999)
    assert ports.free_port() >= 20500  # no 1,000 ports below the range: the kernel's pick
    squeezed.write_text("garbage")
    assert ports.ephemeral_range() == (32768, 60999)
