"""The openai backend against a stub server on 127.0.0.1 (fast): the request it sends, retries,
the errors a user can act on (each naming its spec field), schema-constrained output and its
fallback, per-role model sections, and votes that name their model. The same paths against a
real third-party server (llama.cpp's, from xllamacpp) are in tests/test_openai_real.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from specswarm.cli import main
from specswarm.errors import EndpointError, ModelError, SpecError
from specswarm.model import GenerationRequest, TaskCounts, decompose, execute, load_model, rate
from specswarm.model.base import Generation, OutputSchema, accepts_schema
from specswarm.model.load import preflight
from specswarm.model.openai_backend import OpenAIModel
from specswarm.model.parse import OutputError, parse_children
from specswarm.model.replay import RecordingModel, ReplayModel, ScriptedModel, request_key, scripted_answer
from specswarm.model.schemas import schema_for
from specswarm.model.scores import parse_score
from specswarm.protocol.bodies import VoteBody, parse_body
from specswarm.spec import ModelSettings, load_spec, spec_from_json, spec_from_mapping
from specswarm.swarm.peer import model_settings
from specswarm.testing.local import run_local
from tests.openai_stub import Stub, chat, error, free_port, serve
from tests.swarmkit import swarm_spec

ROLES = {"decomposer": {"count": 1}, "scorer": {"count": 1}, "executor": {"count": 1}}
PICNIC = (
    "goal: Plan a picnic\nroles:\n  decomposer: {count: 1}\n  scorer: {count: 1}\n  executor: {count: 1}\n"
)
"""A goal spec's first five lines (its model section starts on line 6)."""


def model_at(stub: Stub, **kw: Any) -> OpenAIModel:
    kw.setdefault("sleep", lambda s: None)
    return OpenAIModel(stub.url, kw.pop("name", "stub-model"), **kw)


def spec_with(url: str, **model: Any) -> Any:
    return spec_from_mapping(
        {"goal": "Plan a picnic", "roles": ROLES, "model": {"backend": "openai", "base_url": url, **model}}
    )


class Node:
    id, title, detail, depth, facts = "root", "Plan a picnic", "", 0, {}


# --------------------------------------------------------------------------- the request


def test_the_request_carries_sampling_and_the_nested_json_schema() -> None:
    with serve(Stub(key="k3y")) as stub:
        model = model_at(stub, api_key="k3y")
        schema = OutputSchema.of("score", {"type": "object"})
        stub.answers.append(chat('{"score": 70, "reason": "fine"}'))
        req = GenerationRequest("p", system="s", max_tokens=9, seed=7, top_k=3, schema=schema)
        gen = model.generate(req)
    assert gen.structured and gen.text == '{"score": 70, "reason": "fine"}' and gen.tokens == 5
    body = stub.chats()[0]
    assert body["messages"] == [{"role": "system", "content": "s"}, {"role": "user", "content": "p"}]
    assert (body["model"], body["max_tokens"], body["seed"], body["temperature"]) == ("stub-model", 9, 7, 0.0)
    assert (body["top_k"], body["repeat_penalty"]) == (3, 1.1)
    # the nested form: llama.cpp's server silently ignores {type: json_schema, schema: ...}
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "score", "schema": {"type": "object"}},
    }
    assert stub.requests[0][3]["Authorization"] == "Bearer k3y"


def test_no_schema_no_response_format_and_no_key_no_header() -> None:
    with serve() as stub:
        gen = model_at(stub).generate(GenerationRequest("p"))
    assert not gen.structured and gen.text.startswith("- Alpha")
    assert "response_format" not in stub.chats()[0]
    assert "Authorization" not in stub.requests[0][3]


def test_a_loopback_endpoint_takes_the_machine_slot_a_remote_one_does_not() -> None:
    assert OpenAIModel("http://127.0.0.1:8080/v1", "m").instant is False
    assert OpenAIModel("http://localhost:11434/v1", "m").instant is False
    assert OpenAIModel("http://[::1]:8000/v1", "m").instant is False
    assert OpenAIModel("https://api.example.com/v1", "m").instant is True


def test_the_model_is_the_only_one_served_when_none_is_named() -> None:
    with serve(Stub(models=["/models/qwen.gguf"])) as stub:
        model = OpenAIModel(stub.url)
        gen = model.generate(GenerationRequest("p"))
    assert stub.chats()[0]["model"] == "/models/qwen.gguf"  # sent as served ...
    assert model.name == "qwen.gguf" and gen.model == "stub-model"  # ... named without the path


# --------------------------------------------------------------------------- retries


def test_429_and_5xx_are_asked_again_with_backoff() -> None:
    waits: list[float] = []
    with serve() as stub:
        stub.answers += [error(429, "slow down", headers={"Retry-After": "2"}), error(503, "loading model")]
        gen = model_at(stub, sleep=waits.append).generate(GenerationRequest("p"))
    assert gen.text.startswith("- Alpha") and len(stub.chats()) == 3
    assert waits == [2.0, 2.0]  # Retry-After first, then the backoff of the second try (1 s * 2)


def test_retries_are_bounded_then_a_model_error() -> None:
    with serve() as stub:
        stub.answers += [error(500, "boom")] * 5
        with pytest.raises(ModelError, match=r"HTTP 500: boom") as info:
            model_at(stub, retries=2).generate(GenerationRequest("p"))
    assert not isinstance(info.value, EndpointError)  # the role backs off and tries later
    assert len(stub.chats()) == 3


def test_a_lost_connection_mid_run_is_a_model_error_after_the_retries() -> None:
    waits: list[float] = []
    model = OpenAIModel(f"http://127.0.0.1:{free_port()}/v1", "m", retries=2, sleep=waits.append)
    with pytest.raises(ModelError, match=r"cannot reach .* \(connection refused\) after 3 tries"):
        model.generate(GenerationRequest("p"))
    assert waits == [1.0, 2.0]


# --------------------------------------------------------------------------- errors a user can act on


def test_unreachable_endpoint_names_base_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(EndpointError) as info:
        OpenAIModel(url, "m").check()
    assert str(info.value) == f"model.base_url: cannot reach {url} (connection refused)"
    assert info.value.exit_code == 2


def test_401_names_api_key_env_with_and_without_a_key() -> None:
    with serve(Stub(key="right")) as stub:
        with pytest.raises(EndpointError, match=r"^model.api_key_env: .* \$MY_KEY is not set"):
            model_at(stub, key_env="MY_KEY").check()
        with pytest.raises(
            EndpointError, match=r"refused the API key in \$MY_KEY \(HTTP 401: Invalid API Key\)"
        ):
            model_at(stub, key_env="MY_KEY", api_key="wrong").generate(GenerationRequest("p"))


def test_unknown_model_names_name_and_lists_what_is_served() -> None:
    with serve(Stub(models=["a", "b"])) as stub:
        with pytest.raises(
            EndpointError, match=r"^model.name: 'nope' is not served by .* \(it serves 'a', 'b'\)"
        ):
            model_at(stub, name="nope").check()
        with pytest.raises(EndpointError, match=r"^model.name: not set, and .* serves 2 models \(a, b\)"):
            OpenAIModel(stub.url).check()
        stub.answers.append(error(404, "The model `x` does not exist.", "model_not_found"))
        with pytest.raises(EndpointError, match=r"^model.name: 'a' is not served"):
            model_at(stub, name="a").generate(GenerationRequest("p"))


def test_a_base_url_that_is_not_an_api_root_says_so() -> None:
    with serve() as stub, pytest.raises(EndpointError, match=r"^model.base_url: .*/models: HTTP 404 .*/v1"):
        OpenAIModel(stub.url.removesuffix("/v1"), "m").check()


def test_a_prompt_longer_than_the_context_names_max_tokens() -> None:
    with serve() as stub:
        stub.answers.append(
            error(
                400,
                "the request exceeds the available context size, try increasing it",
                "exceed_context_size_error",
            )
        )
        with pytest.raises(EndpointError, match=r"^model.max_tokens: the prompt and answer do not fit"):
            model_at(stub).generate(GenerationRequest("p"))


# --------------------------------------------------------------------------- schema support, detected once


def test_a_server_that_ignores_the_schema_is_asked_for_free_text_from_then_on() -> None:
    spec = spec_with("http://x/v1")
    with serve() as stub:
        model, counts = model_at(stub), TaskCounts()
        stub.answers += [chat("- Sandwiches: make them\n- Blanket: bring one"), chat("- Drinks\n- Games")]
        first = decompose(model, spec, Node(), [], [], "by parts", [], counts=counts)
        assert accepts_schema(model) is False
        decompose(model, spec, Node(), [], [], "by parts", [], counts=counts)
    assert [c.title for c in first] == ["Sandwiches", "Blanket"]
    assert ["response_format" in c for c in stub.chats()] == [True, False]
    assert counts.free == {"decompose": 2} and counts.structured == {}


def test_a_server_that_refuses_the_schema_is_asked_again_without_it() -> None:
    with serve() as stub:
        stub.answers.append(error(400, "Unrecognized request argument supplied: response_format"))
        model = model_at(stub)
        schema = OutputSchema.of("score", {"type": "object"})
        gen = model.generate(GenerationRequest("p", schema=schema))
    assert not gen.structured and not model.accepts_schema
    assert ["response_format" in c for c in stub.chats()] == [True, False]


def test_a_server_that_refuses_top_k_gets_only_standard_fields() -> None:
    with serve() as stub:
        stub.answers.append(error(400, "Unrecognized request argument supplied: top_k"))
        model = model_at(stub)
        model.generate(GenerationRequest("p"))
        model.generate(GenerationRequest("p"))
    assert ["top_k" in c for c in stub.chats()] == [True, False, False]


def _json_answer(body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
    """What a schema-honouring server says: the scripted model's answer, as the schema's JSON."""
    req = GenerationRequest(body["messages"][-1]["content"])
    text = scripted_answer(req)
    form = body.get("response_format", {}).get("json_schema", {}).get("name")
    if form == "split":
        kids = parse_children(text, min_children=1, max_children=9, fact_fields=["days"])
        parts = [{"title": c.title, "detail": c.detail, **c.facts} for c in kids]
        return chat(json.dumps({"parts": parts}))
    if form == "score":
        return chat(json.dumps({"score": 80, "reason": "distinct parts"}))
    return chat(text)


def test_decompose_score_execute_take_the_json_path_and_count_it() -> None:
    spec = spec_from_mapping(
        {
            "goal": "Plan a 3-day trip",
            "roles": ROLES,
            "constraints": [{"kind": "sum", "field": "days", "total": 3}],
            "model": {"backend": "openai", "base_url": "http://x/v1"},
        }
    )
    with serve(Stub(responder=_json_answer)) as stub:
        model, counts = model_at(stub), TaskCounts()
        kids = decompose(model, spec, Node(), [], [], "by parts", [], counts=counts)
        score = rate(model, spec, Node(), kids, counts=counts)
        out = execute(model, spec, Node(), [], counts=counts)
    assert sum(int(c.facts["days"]) for c in kids) == 3 and score == 80 and out.startswith("- ")
    assert counts.structured == {"decompose": 1, "score": 1} and counts.free == {"execute": 1}
    split = stub.chats()[0]["response_format"]["json_schema"]["schema"]
    item = split["properties"]["parts"]["items"]
    assert split["properties"]["parts"]["maxItems"] == spec.tree.max_children
    assert item["properties"]["detail"]["maxLength"] <= 400 and item["required"] == [
        "title",
        "detail",
        "days",
    ]
    assert item["properties"]["days"] == {"type": "integer", "minimum": 0, "maximum": 3}
    assert "response_format" not in stub.chats()[2]  # execute answers in prose


def test_schema_for_bounds_every_string_and_list_to_the_token_cap() -> None:
    tree = spec_with("http://x/v1").tree
    score = schema_for("score", tree, [], [])
    assert score is not None and score.value()["properties"]["reason"]["maxLength"] > 0
    assert schema_for("execute", tree, [], []) is None

    def bounds(cap: int) -> tuple[int, int]:
        split = schema_for("decompose", tree, [], [], cap)
        assert split is not None
        props = split.value()["properties"]["parts"]["items"]["properties"]
        return props["title"]["maxLength"], props["detail"]["maxLength"]

    small, large = bounds(160), bounds(400)
    assert small < large and large[0] <= 80 and large[1] <= 200
    # five parts (the four asked for, one more) of the longest strings fit the cap with their JSON
    assert 5 * (sum(large) / 3 + 16) <= 400


def test_a_split_cut_off_at_the_token_cap_keeps_its_complete_parts() -> None:
    cut = '{"parts": [{"title": "Lunch", "detail": "Pack food", "days": 1}, {"title": "Walk", "detail": "Loop'
    two = '{"parts": [{"title": "Lunch", "detail": "Food"}, {"title": "Walk", "detail": "The lake"}, {"ti'
    assert [c.title for c in parse_children(two, min_children=2, max_children=3)] == ["Lunch", "Walk"]
    with pytest.raises(OutputError, match="only 1 usable part"):
        parse_children(cut, min_children=2, max_children=3, fact_fields=["days"])
    assert parse_score('{"score": 72, "reason": "fine but the la') == 72


# --------------------------------------------------------------------------- cassettes stay as they were


def test_a_request_without_schema_keys_as_before_and_one_with_a_schema_differs() -> None:
    import hashlib

    from specswarm.protocol.canonical import canonical_bytes

    req = GenerationRequest("p", system="s")
    legacy = hashlib.sha256(canonical_bytes(["s", "p", 256, 0.0, 1, 42, 1.1, []])).hexdigest()
    assert request_key(req) == legacy
    assert request_key(GenerationRequest("p", system="s", schema=OutputSchema.of("x", {}))) != legacy


def test_a_cassette_recorded_with_schemas_replays_them(tmp_path: Path) -> None:
    class Structured(ScriptedModel):
        accepts_schema = True

        def generate(self, req: GenerationRequest) -> Generation:
            return Generation('{"score": 9, "reason": "r"}', 3, 0.0, "m", structured=req.schema is not None)

    path = tmp_path / "c.jsonl"
    recording = RecordingModel(Structured(), path)
    assert accepts_schema(recording)
    req = GenerationRequest("p", schema=OutputSchema.of("score", {"type": "object"}))
    recording.generate(req)
    replay = ReplayModel(path)
    assert accepts_schema(replay) and replay.generate(req).structured
    assert accepts_schema(ReplayModel(Path(__file__).parent / "cassettes" / "real_japan.jsonl")) is False


# --------------------------------------------------------------------------- the spec


def test_openai_settings_load_and_travel() -> None:
    spec = spec_with("http://127.0.0.1:8080/v1", name="qwen", timeout=60, retries=1)
    m = spec.model
    assert (m.backend, m.base_url, m.name, m.api_key_env, m.timeout, m.retries) == (
        "openai",
        "http://127.0.0.1:8080/v1",
        "qwen",
        "OPENAI_API_KEY",
        60.0,
        1,
    )
    assert spec_from_json(json.loads(json.dumps(spec.to_json()))) == spec
    plain = spec_from_mapping({"goal": "g", "roles": ROLES}).to_json()
    # a spec that uses none of the new fields normalizes as before (old run events compare equal)
    assert not {"base_url", "api_key_env", "timeout", "retries"} & set(plain["model"])
    assert "model" not in plain["roles"]["scorer"]


def test_openai_without_base_url_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match=r"model.base_url: missing \(backend 'openai' needs"):
        spec_from_mapping({"goal": "g", "roles": ROLES, "model": {"backend": "openai"}})


def test_a_role_model_section_overrides_fields_of_the_top_level_one() -> None:
    roles = {
        **ROLES,
        "scorer": {
            "count": 2,
            "model": {"backend": "openai", "base_url": "http://127.0.0.1:1/v1", "max_tokens": {"score": 50}},
        },
    }
    spec = spec_from_mapping(
        {"goal": "g", "roles": roles, "model": {"temperature": 0.5, "max_tokens": {"execute": 99}}}
    )
    scorer, executor = spec.model_for("scorer"), spec.model_for("executor")
    assert (scorer.backend, scorer.temperature, scorer.max_tokens.score, scorer.max_tokens.execute) == (
        "openai",
        0.5,
        50,
        99,
    )
    assert executor == spec.model and executor.backend == "gpt4all"
    assert spec.model_path("scorer", "base_url") == "roles.scorer.model.base_url"
    assert spec.model_path("scorer", "temperature") == "model.temperature"  # inherited: fix it there
    assert spec.model_path("executor", "name") == "model.name"
    assert spec_from_json(json.loads(json.dumps(spec.to_json()))) == spec
    assert model_settings(spec, "scorer").backend == "openai"


def test_role_model_sections_are_validated_like_the_top_level_one(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "goal: g\nroles:\n  decomposer: {count: 1}\n  scorer:\n    count: 1\n    model:\n"
        "      backend: gpt5\n  executor: {count: 1}\n"
    )
    with pytest.raises(SpecError, match=r":7: roles.scorer.model.backend: 'gpt5' is not one of the allowed"):
        load_spec(path)


# --------------------------------------------------------------------------- the preflight


def test_preflight_names_the_field_at_its_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    path = tmp_path / "goal.yaml"
    path.write_text(f"{PICNIC}model:\n  backend: openai\n  base_url: {url}\n")
    with pytest.raises(SpecError) as info:
        preflight(load_spec(path))
    assert str(info.value) == f"{path}:8: model.base_url: cannot reach {url} (connection refused)"
    with serve(Stub(models=["a"])) as stub:
        spec = spec_from_mapping(
            {
                "goal": "g",
                "roles": {
                    **ROLES,
                    "executor": {
                        "count": 1,
                        "model": {"backend": "openai", "base_url": stub.url, "name": "b"},
                    },
                },
            }
        )
        with pytest.raises(SpecError, match=r"roles.executor.model.name: 'b' is not served by"):
            preflight(spec)
        preflight(spec_with(stub.url, name="a"))  # fine: no error
        preflight(spec_from_mapping({"goal": "g", "roles": ROLES}))  # no endpoint to check


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["specswarm", *args])
    monkeypatch.delenv("SPECSWARM_MODEL_BACKEND", raising=False)
    with pytest.raises(SystemExit) as info:
        main()
    out, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else 0), out, err


def test_plan_stops_before_any_peer_when_the_endpoint_is_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    path = tmp_path / "goal.yaml"
    path.write_text(f"{PICNIC}model:\n  backend: openai\n  base_url: {url}\n")
    monkeypatch.chdir(tmp_path)
    started: list[Any] = []
    monkeypatch.setattr("specswarm.swarm.launcher.run.build_peers", lambda *a: started.append(a) or [])
    code, out, err = run_cli(monkeypatch, capsys, "plan", str(path), "--events", str(tmp_path / "ev.jsonl"))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"{path}:8: model.base_url: cannot reach {url} (connection refused)"]
    assert started == [] and not (tmp_path / "ev.jsonl").exists()


def test_model_try_any_backend(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with serve() as stub:
        code, out, err = run_cli(
            monkeypatch, capsys, "model", "try", "Say hi", "--backend", "openai", "--base-url", stub.url
        )
    assert code == 0 and out.startswith("- Alpha") and "[stub-model: 5 tokens" in err
    code, out, err = run_cli(monkeypatch, capsys, "model", "try", "hi", "--backend", "scripted")
    assert code == 0 and out.strip() == "- hi"
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, out, err = run_cli(
        monkeypatch, capsys, "model", "try", "hi", "--backend", "openai", "--base-url", url
    )
    assert code == 2 and err.strip() == f"model.base_url: cannot reach {url} (connection refused)"


def test_load_model_builds_the_openai_backend() -> None:
    model = load_model(ModelSettings(backend="openai", base_url="https://api.example.com/v1", name="gpt-x"))
    assert isinstance(model, OpenAIModel) and model.name == "gpt-x" and model.instant


# --------------------------------------------------------------------------- votes name their model


def test_old_votes_without_a_model_still_parse_and_sign_the_same() -> None:
    raw = {
        "proposal": "a" * 64,
        "approve": True,
        "score": 70,
        "critique": "",
        "checks": [],
        "model_score": 60,
    }
    body = parse_body("vote", raw)
    assert isinstance(body, VoteBody) and body.model is None and body.to_json() == raw
    named = parse_body("vote", {**raw, "model": "qwen"})
    assert isinstance(named, VoteBody) and named.model == "qwen" and named.to_json()["model"] == "qwen"


def test_a_swarm_on_a_schema_model_votes_name_it_and_counts_show_the_json_path() -> None:
    class JsonScripted(ScriptedModel):
        accepts_schema = True

        def generate(self, req: GenerationRequest) -> Generation:
            _, body, _ = _json_answer(
                {
                    "messages": [{"content": req.prompt}],
                    "response_format": {"json_schema": {"name": req.schema.name}} if req.schema else {},
                }
            )
            text = body["choices"][0]["message"]["content"]
            return Generation(text, 1, 0.0, "json-scripted", structured=req.schema is not None)

    spec = swarm_spec(decomposers=2, scorers=3, executors=2)
    spec["model"]["model_weight"] = 0.5  # every unvetoed split rated: the score path is exercised
    digest, swarm, _ = trio.run(lambda: run_local(spec, lambda: JsonScripted(name="json-scripted"), seed=3))
    node = next(iter(swarm.nodes.values()))
    votes = [e.body for e in node.state.events() if e.kind == "vote"]
    assert votes and all(v.model == "json-scripted" for v in votes if v.model_score is not None)
    assert any(v.model_score is not None for v in votes)
    results = [e.body for e in node.state.events() if e.kind == "result"]
    assert results and {r.model for r in results} == {"json-scripted"}
    counts = [n.counters.tasks for n in swarm.nodes.values()]
    assert (
        sum(c.structured["decompose"] for c in counts) >= 1
        and sum(c.structured["score"] for c in counts) >= 1
    )
    assert not any(c.free["decompose"] or c.free["score"] for c in counts)


def test_a_string_held_to_its_schema_bound_ends_on_a_whole_word() -> None:
    """A grammar stops a string at its maxLength mid-word: the answer keeps whole words only."""
    from specswarm.model.schemas import split_schema

    schema = OutputSchema.of("split", split_schema(1, 3, [], title=20, detail=40))
    cut = '{"parts": [{"title": "Venue", "detail": "Book the hall, chairs and the entrance s"}]}'
    whole = '{"parts": [{"title": "Venue", "detail": "Book the hall."}]}'
    with serve() as stub:
        stub.answers += [chat(cut), chat(whole)]
        model = model_at(stub)
        first, second = (model.generate(GenerationRequest("p", schema=schema)) for _ in range(2))
    assert json.loads(first.text)["parts"][0]["detail"] == "Book the hall, chairs and the entrance"
    assert second.text == whole  # under its bound: as it was
