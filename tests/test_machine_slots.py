"""The machine-wide generation slots: as many generations at once as the cores hold."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import trio

from specswarm.swarm.roles import slots
from specswarm.swarm.roles.slots import machine_slot, machine_slots


def test_slots_are_the_cores_divided_by_a_generations_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slots.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert machine_slots(SimpleNamespace(threads=1)) == 4
    assert machine_slots(SimpleNamespace(threads=2)) == 2
    assert machine_slots(SimpleNamespace(threads=3)) == 1
    assert machine_slots(SimpleNamespace(threads=8)) == 1
    assert machine_slots(SimpleNamespace()) == 1  # a model that does not say: one at a time


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_no_more_generations_run_at_once_than_there_are_slots(
    slots: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECSWARM_CACHE", str(tmp_path))
    monkeypatch.delenv("SPECSWARM_MACHINE_LOCK", raising=False)
    running, peak, done = 0, 0, 0

    async def generation() -> None:
        nonlocal running, peak, done
        async with machine_slot(slots=slots):
            running += 1
            peak = max(peak, running)
            await trio.sleep(0.2)
            running -= 1
            done += 1

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(generation)

    trio.run(main)
    assert done == 5
    assert peak == slots


def test_a_peer_answers_a_greedy_request_it_has_answered_before_from_memory() -> None:
    from specswarm.model import GenerationRequest, ScriptedModel
    from specswarm.swarm.counters import NodeCounters
    from specswarm.swarm.roles.base import CountingModel

    inner = ScriptedModel(lambda req: f"answer to {req.prompt}")
    counters, memo = NodeCounters(), {}
    model = CountingModel(inner, counters, memo)
    first = model.generate(GenerationRequest("rate this split"))
    again = model.generate(GenerationRequest("rate this split"))
    other = model.generate(GenerationRequest("rate that split"))
    assert again == first and other.text == "answer to rate that split"
    assert len(inner.calls) == 2 and counters.model_reused == 1 and counters.model_generations == 2
    sampled = CountingModel(inner, counters, memo)  # sampling may answer differently: ask again
    sampled.generate(GenerationRequest("rate this split", top_k=40, temperature=0.7))
    sampled.generate(GenerationRequest("rate this split", top_k=40, temperature=0.7))
    assert len(inner.calls) == 4


def test_a_cached_model_has_the_slots_of_the_model_it_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # seen in a real run with --cache: the cache hid the model's threads, so the swarm
    # generated one answer at a time on a machine with two slots
    from specswarm.model.gpt4all_backend import Gpt4AllModel
    from specswarm.model.load import with_cache
    from specswarm.spec import ModelSettings

    monkeypatch.setattr(slots.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    inner = Gpt4AllModel(tmp_path / "model.gguf", threads=1)  # weights load lazily: none here
    cached = with_cache(inner, ModelSettings(), tmp_path / "cache")
    assert cached is not inner
    assert machine_slots(inner) == machine_slots(cached) == 2
