"""The answer cache: what keys an answer, replay of the same request, misses on a change, writes
that stay whole under concurrent writer processes, and its counts in a peer's counters."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from specswarm.errors import SpecError
from specswarm.model import GenerationRequest, ScriptedModel, load_model
from specswarm.model.cache import AnswerCache, CachingModel, cache_key, model_identity
from specswarm.spec import ModelSettings, load_spec, spec_from_json
from specswarm.swarm.counters import NodeCounters
from specswarm.swarm.roles.base import CountingModel

REQ = GenerationRequest(prompt="Goal to split: Visit Kyoto\nmore", system="You plan.", max_tokens=50)
SCRIPTED = ModelSettings(backend="scripted")


def cached_scripted(
    directory: Path, settings: ModelSettings = SCRIPTED
) -> tuple[CachingModel, ScriptedModel]:
    inner = ScriptedModel(lambda req: f"answer to {req.prompt!r} at {req.temperature}")
    return CachingModel(inner, AnswerCache(directory), model_identity(settings, inner)), inner


def test_the_same_request_is_answered_once_then_replayed(tmp_path: Path) -> None:
    first, inner = cached_scripted(tmp_path)
    a = first.generate(REQ)
    assert (a.cached, first.hits, first.misses, len(inner.calls)) == (False, 0, 1, 1)
    # another process (a new model over the same directory) replays it without asking its model
    second, inner2 = cached_scripted(tmp_path)
    b = second.generate(REQ)
    assert (b.cached, b.text, b.tokens, b.seconds) == (True, a.text, a.tokens, 0.0)
    assert (second.hits, second.misses, inner2.calls) == (1, 0, [])
    assert len(list(tmp_path.glob("*.json"))) == 1
    stored = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert stored["prompt"] == REQ.prompt and stored["text"] == a.text


@pytest.mark.parametrize(
    "change",
    [
        {"prompt": REQ.prompt + " (changed)"},
        {"system": "You plan trips."},
        {"max_tokens": 51},
        {"temperature": 0.7},
        {"seed": 7},
        {"top_k": 40},
        {"repeat_penalty": 1.0},
        {"stop": ("\n\n",)},
    ],
    ids=lambda c: next(iter(c)),
)
def test_anything_that_changes_the_answer_misses(tmp_path: Path, change: dict[str, object]) -> None:
    model, inner = cached_scripted(tmp_path)
    model.generate(REQ)
    changed = dataclasses.replace(REQ, **change)  # type: ignore[arg-type]
    assert model.generate(changed).cached is False
    assert (model.hits, model.misses, len(inner.calls)) == (0, 2, 2)


def test_the_model_is_part_of_the_key_and_threads_are_not() -> None:
    inner = ScriptedModel()
    key = cache_key(model_identity(SCRIPTED, inner), REQ)
    # what a run's speed depends on, not its answers
    for same in ({"threads": 3}, {"timeout": 5.0}, {"retries": 0}, {"model_weight": 0.5}):
        assert cache_key(model_identity(dataclasses.replace(SCRIPTED, **same), inner), REQ) == key  # type: ignore[arg-type]
    other = [
        model_identity(ModelSettings(backend="gpt4all"), inner),
        model_identity(dataclasses.replace(SCRIPTED, name="other"), inner),
        model_identity(SCRIPTED, ScriptedModel(name="scripted-2")),
        model_identity(ModelSettings(backend="openai", base_url="http://127.0.0.1:1/v1"), inner),
    ]
    assert len({cache_key(i, REQ) for i in other} | {key}) == len(other) + 1


def test_an_unreadable_or_foreign_file_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    model, inner = cached_scripted(tmp_path)
    key = cache_key(model.identity, REQ)
    for junk in ("{not json", json.dumps({"format": "other", "key": key, "text": "x"}), "[]"):
        (tmp_path / f"{key}.json").write_text(junk)
        assert model.generate(REQ).cached is False
        assert json.loads((tmp_path / f"{key}.json").read_text())["text"] == inner.fn(REQ)
    assert model.generate(REQ).cached is True


def test_a_cache_that_cannot_be_written_only_costs_time(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    model, inner = cached_scripted(blocker / "cache")  # a directory below a file: mkdir fails
    assert model.generate(REQ).text == inner.fn(REQ)
    assert model.generate(REQ).cached is False  # nothing was stored: asked again


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from specswarm.model.cache import AnswerCache
    cache = AnswerCache(Path(sys.argv[1]))
    for i in range(200):
        cache.put("k" * 64, {"text": sys.argv[2] * (1000 + i)})
    """
)


def test_concurrent_writer_processes_never_leave_a_partial_file(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), letter]) for letter in ("a", "b", "c")
    ]
    cache = AnswerCache(tmp_path)
    seen = 0
    while any(p.poll() is None for p in procs):
        got = cache.get("k" * 64)
        if got is not None:  # whole, from one writer
            assert set(got["text"]) in ({"a"}, {"b"}, {"c"}) and len(got["text"]) >= 1000
            seen += 1
    assert all(p.wait() == 0 for p in procs)
    assert cache.get("k" * 64) is not None
    assert [p.name for p in tmp_path.iterdir()] == ["k" * 64 + ".json"]  # no temporary file left


def test_load_model_puts_every_backend_behind_the_cache(tmp_path: Path) -> None:
    assert not isinstance(load_model(SCRIPTED), CachingModel)
    model = load_model(SCRIPTED, tmp_path / "c")
    assert isinstance(model, CachingModel) and model.instant
    assert model.generate(REQ).cached is False and model.generate(REQ).cached is True


def test_a_peers_counters_count_hits_and_misses_apart_from_generations(tmp_path: Path) -> None:
    counters = NodeCounters()
    model = CountingModel(cached_scripted(tmp_path)[0], counters)
    gen = model.generate(REQ)
    model.generate(REQ)
    model.generate(dataclasses.replace(REQ, prompt="other"))
    assert (counters.cache_hits, counters.cache_misses, counters.model_generations) == (1, 2, 2)
    assert counters.cached_tokens == gen.tokens
    assert {"cache_hits": 1, "cache_misses": 2}.items() <= counters.to_json().items()
    uncached = NodeCounters()
    CountingModel(ScriptedModel(), uncached).generate(REQ)
    assert (uncached.cache_hits, uncached.cache_misses, uncached.model_generations) == (0, 0, 1)


SPEC = """\
goal: Plan a weekend in Lisbon
roles: {decomposer: {count: 1}, scorer: {count: 1}, executor: {count: 1}}
model: {backend: scripted}
"""


def test_the_specs_cache_is_relative_to_it_and_stays_out_of_the_run(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path = tmp_path / "a" / "spec.yaml"
    path.write_text(SPEC + "cache: ../answers\n")
    spec = load_spec(path)
    assert spec.cache == (tmp_path / "answers").resolve()
    plain = tmp_path / "b" / "spec.yaml"
    plain.write_text(SPEC)
    assert "cache" not in spec.to_json() and spec.to_json() == load_spec(plain).to_json()
    (tmp_path / "a" / "taken").write_text("x")
    path.write_text(SPEC + "cache: taken\n")
    with pytest.raises(SpecError, match=r"spec.yaml:4: cache: cache 'taken' is not a directory"):
        load_spec(path)


def test_a_run_event_cannot_carry_a_cache(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    data = load_spec(path).to_json()
    assert spec_from_json(data).cache is None
    with pytest.raises(SpecError, match="cache: the answer cache is a local setting, not part of a run"):
        spec_from_json({**data, "cache": "/elsewhere"})
