"""Cassettes: record -> replay round trip, loud misses; the scripted responder; load_model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from specswarm.errors import ModelError, ReplayMissError
from specswarm.model import (
    Generation,
    GenerationRequest,
    Model,
    RecordingModel,
    ReplayModel,
    ScriptedModel,
    agenerate,
    load_model,
)
from specswarm.model.gpt4all_backend import Gpt4AllModel
from specswarm.model.replay import request_key, scripted_answer
from specswarm.spec import ModelSettings

REQ = GenerationRequest(
    prompt="Goal to split: Visit Kyoto\nmore", system="You plan.", max_tokens=50, stop=("\n\n",)
)


def echo(req: GenerationRequest) -> str:
    return f"- {req.prompt.upper()}"


def test_request_key_covers_every_parameter() -> None:
    base = request_key(REQ)
    assert base == request_key(GenerationRequest(**{**REQ.__dict__}))
    for change in (
        {"prompt": "x"},
        {"system": "y"},
        {"max_tokens": 51},
        {"temperature": 0.5},
        {"top_k": 2},
        {"seed": 7},
        {"repeat_penalty": 1.2},
        {"stop": ("END",)},
    ):
        assert request_key(GenerationRequest(**{**REQ.__dict__, **change})) != base, change


def test_record_then_replay_round_trip(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    recorder = RecordingModel(ScriptedModel(echo, name="inner-model"), cassette)
    first = recorder.generate(REQ)
    assert first.text == "- GOAL TO SPLIT: VISIT KYOTO\nMORE"
    line = json.loads(cassette.read_text(encoding="utf-8").splitlines()[0])
    assert line == {
        "key": request_key(REQ),
        "prompt": REQ.prompt,
        "system": "You plan.",
        "params": {
            "max_tokens": 50,
            "temperature": 0.0,
            "top_k": 1,
            "seed": 42,
            "repeat_penalty": 1.1,
            "stop": ["\n\n"],
        },
        "text": first.text,
        "tokens": first.tokens,
        "model": "inner-model",
    }
    replay = ReplayModel(cassette)
    again = replay.generate(REQ)
    assert again == Generation(first.text, first.tokens, 0.0, "inner-model")
    assert replay.name == "replay:inner-model"


def test_replay_miss_is_loud_and_names_the_prompt(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    RecordingModel(ScriptedModel(echo), cassette).generate(REQ)
    other = GenerationRequest(prompt="\n  Execute: book the Kyoto ryokan\nsecond line")
    with pytest.raises(ReplayMissError) as info:
        ReplayModel(cassette).generate(other)
    assert (
        f"replay cassette {cassette} has no recording for the prompt starting "
        "'Execute: book the Kyoto ryokan'" in str(info.value)
    )


def test_bad_cassettes(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"replay cassette '.*nope.jsonl' does not exist"):
        ReplayModel(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "a", "text": "x"}\n\nnot json\n', encoding="utf-8")
    with pytest.raises(ModelError, match=r"bad.jsonl:3: not a cassette record"):
        ReplayModel(bad)


def test_load_model_backends(tmp_path: Path) -> None:
    assert isinstance(load_model(ModelSettings(backend="scripted")), ScriptedModel)
    with pytest.raises(ModelError, match="model.backend 'replay' needs model.cassette"):
        load_model(ModelSettings(backend="replay", cassette=None))
    with pytest.raises(
        ModelError, match="model.backend must be one of gpt4all, replay, scripted, llama, openai; got 'gpt5'"
    ):
        load_model(ModelSettings(backend="gpt5"))  # type: ignore[arg-type]
    with pytest.raises(ModelError, match=r"model.file '.*missing.gguf' does not exist"):
        load_model(ModelSettings(backend="gpt4all", file=tmp_path / "missing.gguf"))
    with pytest.raises(ModelError, match=r"model.file '.*missing.gguf' does not exist"):
        load_model(ModelSettings(backend="llama", file=tmp_path / "missing.gguf"))
    with pytest.raises(ModelError, match=r"model.name \(a gpt4all catalogue name\) needs backend gpt4all"):
        load_model(ModelSettings(backend="llama", name="orca-mini-3b.gguf"))
    assert isinstance(load_model(ModelSettings(backend="scripted")), Model)


def test_load_model_records_real_backends_into_the_cassette(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    model = load_model(ModelSettings(file=gguf, threads=3, cassette=tmp_path / "c.jsonl"))
    assert isinstance(model, RecordingModel) and isinstance(model.inner, Gpt4AllModel)
    assert (model.name, model.inner.threads) == ("m.gguf", 3)
    replay = tmp_path / "r.jsonl"
    replay.write_text("", encoding="utf-8")
    assert isinstance(load_model(ModelSettings(backend="replay", cassette=replay)), ReplayModel)


def test_instant_models_need_no_generation_slot(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    cassette.write_text("", encoding="utf-8")
    real = Gpt4AllModel(tmp_path / "m.gguf")  # nothing loads before the first generation
    assert ScriptedModel().instant and ReplayModel(cassette).instant
    assert real.instant is False
    assert RecordingModel(real, cassette).instant is False
    assert RecordingModel(ScriptedModel(), cassette).instant is True


def test_request_validation() -> None:
    with pytest.raises(ValueError, match="max_tokens must be >= 1, got 0"):
        GenerationRequest(prompt="x", max_tokens=0)
    with pytest.raises(ValueError, match="top_k must be >= 1, got 0"):
        GenerationRequest(prompt="x", top_k=0)
    assert GenerationRequest(prompt="x", stop=["a"]).stop == ("a",)  # type: ignore[arg-type]


def test_agenerate_serialises_generations_and_keeps_trio_running() -> None:
    import threading
    import time

    active = 0
    peak = 0
    guard = threading.Lock()

    def slow(req: GenerationRequest) -> str:
        nonlocal active, peak
        with guard:
            active += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with guard:
            active -= 1
        return req.prompt

    model = ScriptedModel(slow)
    ticks = 0

    async def main() -> list[str]:
        nonlocal ticks
        results: list[str] = []

        async def one(i: int) -> None:
            results.append((await agenerate(model, GenerationRequest(prompt=str(i)))).text)

        async def ticker() -> None:
            nonlocal ticks
            while len(results) < 4:
                ticks += 1
                await trio.sleep(0.01)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            for i in range(4):
                nursery.start_soon(one, i)
        return results

    assert sorted(trio.run(main)) == ["0", "1", "2", "3"]
    assert peak == 1  # one generation at a time per process
    assert ticks >= 10  # the event loop kept running while the model "thought"


def test_scripted_answer_unknown_prompt_echoes_first_line() -> None:
    assert scripted_answer(GenerationRequest(prompt="\nHello there\nmore")) == "- Hello there"
