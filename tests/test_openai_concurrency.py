"""An openai endpoint is asked by several peers at once, up to ``model.concurrency`` calls
(default 4), through the same path a peer's role takes (:meth:`ModelRole.think`: the slot,
the worker thread, the process-wide lock of :func:`~specswarm.model.lock.generate_locked`).
The server is the stub on 127.0.0.1, each answer taking a fixed time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from specswarm.model import GenerationRequest
from specswarm.model.lock import generate_locked
from specswarm.model.openai_backend import DEFAULT_CONCURRENCY, OpenAIModel
from specswarm.spec import ModelSettings
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.roles.base import ModelRole
from tests.openai_stub import Answer, Stub, chat, serve

ANSWER_SECONDS = 0.3


class Gauge:
    """How many requests the server is answering at once, and the most it ever was."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def answer(self, body: dict[str, Any]) -> Answer:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(ANSWER_SECONDS)
        with self.lock:
            self.now -= 1
        return chat("- Alpha: the first part\n- Beta: the second part")


@pytest.fixture(autouse=True)
def _own_slots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECSWARM_CACHE", str(tmp_path))  # the slots' lock files live there
    monkeypatch.delenv("SPECSWARM_MACHINE_LOCK", raising=False)


def _peers_ask(peers: int, concurrency: int | None) -> tuple[int, float]:
    """``peers`` roles each make one call to a stub endpoint at once; the most requests the
    server answered at once, and the seconds all took."""
    gauge = Gauge()
    with serve(Stub(responder=gauge.answer)) as stub:
        settings = ModelSettings(
            backend="openai", base_url=stub.url, name="stub-model", concurrency=concurrency
        )

        async def one(i: int) -> None:
            role = ModelRole(lambda: OpenAIModel.from_settings(settings))
            node: Any = type("FakeNode", (), {"counters": NodeCounters()})()
            answer = await role.think(node, f"n{i}", lambda m: generate_locked(m, GenerationRequest(f"p{i}")))
            assert answer is not None and answer.text.startswith("- Alpha")

        async def main() -> float:
            started = trio.current_time()
            async with trio.open_nursery() as nursery:
                for i in range(peers):
                    nursery.start_soon(one, i)
            return trio.current_time() - started

        took = trio.run(main)
    return gauge.peak, took


def test_calls_overlap_up_to_the_default_bound() -> None:
    peak, took = _peers_ask(8, None)
    assert peak == DEFAULT_CONCURRENCY == 4
    # two rounds of four, not eight calls one after another
    assert took < 8 * ANSWER_SECONDS * 0.75


def test_model_concurrency_bounds_the_calls_at_once() -> None:
    peak, _ = _peers_ask(5, 2)
    assert peak == 2


def test_concurrency_1_asks_one_at_a_time() -> None:
    peak, took = _peers_ask(3, 1)
    assert peak == 1 and took >= 3 * ANSWER_SECONDS
