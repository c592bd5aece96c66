"""The shared model service and its client, over real loopback HTTP, with fake models (fast);
the gpt4all backend's prefix keeping on a fake gpt4all; the launcher's service planning."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from specswarm.errors import EndpointError, ModelError
from specswarm.model import GenerationRequest, ScriptedModel
from specswarm.model import gpt4all_backend as gb
from specswarm.model._http import Endpoint
from specswarm.model.base import Generation
from specswarm.model.runtime import llamacpp_installed
from specswarm.model.service import ModelService, SharedModel, request_of, serve, service_client
from specswarm.spec import GoalSpec, ModelSettings
from specswarm.swarm.launcher.models import plan_services, shares
from specswarm.swarm.launcher.procs import PeerProc, peer_command


class SlowEcho:
    """Answers with the prompt, after ``delay`` s; records the order it was asked in."""

    instant = False

    def __init__(self, delay: float = 0.0, gate: bool = False) -> None:
        self.name = "echo.gguf"
        self.delay = delay
        self.asked: list[str] = []
        self.gate = threading.Event()
        if not gate:
            self.gate.set()

    def generate(self, req: GenerationRequest) -> Generation:
        self.asked.append(req.prompt)
        self.gate.wait(30)
        time.sleep(self.delay)
        return Generation(text=f"{req.system}|{req.prompt}", tokens=3, seconds=self.delay, model=self.name)


@pytest.fixture
def running() -> Iterator:  # type: ignore[type-arg]
    servers = []

    def start(model, token: str | None = "t0ken", port: int = 0):  # type: ignore[no-untyped-def]
        service = ModelService(model, token)
        server = serve(service, port)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return service, server, f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_request_of_takes_the_openai_subset_and_refuses_the_rest() -> None:
    req = request_of(
        {
            "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
            "max_tokens": 9,
            "temperature": 0.0,
            "top_k": 1,
            "repeat_penalty": 1.1,
            "seed": 7,
            "stop": ["END"],
        }
    )
    assert req == GenerationRequest(prompt="U", system="S", max_tokens=9, seed=7, stop=("END",))
    for bad, why in [
        ({"messages": []}, "non-empty"),
        ({"messages": [{"role": "assistant", "content": "x"}]}, "system"),
        ({"messages": [{"role": "user", "content": 3}]}, "string"),
        ({"messages": [{"role": "user", "content": "x"}], "stream": True}, "stream"),
        (
            {"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema"}},
            "schema",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": -1}, "max_tokens"),
        ([1], "object"),
    ]:
        with pytest.raises(ValueError, match=why):
            request_of(bad)


def test_a_client_gets_what_the_model_in_the_service_says(running) -> None:  # type: ignore[no-untyped-def]
    inner = ScriptedModel()
    service, _, url = running(inner)
    client = SharedModel(url, "t0ken", "scripted")
    assert client.instant and not client.accepts_schema  # no machine slot; free text
    req = GenerationRequest(prompt="Goal to split: Plan a weekend\nSplit it into 3 parts", system="sys")
    got = client.generate(req)
    want = inner.generate(req)
    assert (got.text, got.tokens, got.model) == (want.text, want.tokens, want.model)
    assert service.health()["generated"] == 1


def test_a_wrong_or_missing_token_is_refused_and_names_the_variable(running) -> None:  # type: ignore[no-untyped-def]
    _, _, url = running(SlowEcho())
    for token in ("wrong", None):
        with pytest.raises(EndpointError, match=r"^model.api_key_env: .*SPECSWARM_MODEL_TOKEN"):
            SharedModel(url, token, "echo.gguf").generate(GenerationRequest(prompt="x"))
    health = Endpoint(url.removesuffix("/v1")).request("GET", "/health")  # no token needed
    assert health.status == 200 and health.data["model"] == "echo.gguf"


def test_response_format_is_refused_naming_it_and_the_backend_falls_back(running) -> None:  # type: ignore[no-untyped-def]
    _, _, url = running(SlowEcho(), token=None)
    reply = Endpoint(url).request(
        "POST",
        "/chat/completions",
        {"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema"}},
    )
    assert reply.status == 400 and "response_format" in reply.message


def _arrive(service: ModelService, url: str, prompts: list[str], **kw) -> tuple[list, dict[str, str]]:  # type: ignore[no-untyped-def]
    """Ask ``prompts`` from one thread each, each arriving after the one before it."""
    out: dict[str, str] = {}
    walls: dict[str, float] = {}

    def ask(prompt: str, key: str) -> None:
        started = time.monotonic()
        gen = SharedModel(url, "t0ken", "echo.gguf").generate(GenerationRequest(prompt=prompt, **kw))
        out[key] = gen.text
        walls[key] = time.monotonic() - started
        seconds[key] = gen.seconds

    seconds: dict[str, float] = {}
    threads = []
    for i, prompt in enumerate(prompts):
        t = threading.Thread(target=ask, args=(prompt, f"{prompt}{i}"))
        t.start()
        threads.append(t)
        deadline = time.monotonic() + 120  # a starved machine may take long to get a thread going
        while service.counts.requests < i + 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert service.counts.requests == i + 1, f"request {i} did not arrive"
    return threads, {"out": out, "walls": walls, "seconds": seconds}  # type: ignore[dict-item]


def test_requests_are_answered_one_at_a_time_in_arrival_order_and_identical_ones_once(running) -> None:  # type: ignore[no-untyped-def]
    model = SlowEcho(gate=True)
    service, _, url = running(model)
    threads, got = _arrive(service, url, ["a", "b", "a", "c", "a"])
    model.gate.set()  # every request is in: the first one may finish now
    for t in threads:
        t.join(30)
    assert model.asked == ["a", "b", "c"]  # FIFO; the two later "a" shared the first one's answer
    assert got["out"] == {"a0": "|a", "b1": "|b", "a2": "|a", "c3": "|c", "a4": "|a"}
    health = service.health()
    assert (health["requests"], health["generated"], health["shared"]) == (5, 3, 2)
    assert health["queue_peak"] >= 2  # b and c waited while a was generated
    # a request that samples (top_k > 1) is never shared
    SharedModel(url, "t0ken", "echo.gguf").generate(GenerationRequest(prompt="a", top_k=40))
    assert model.asked[-1] == "a" and len(model.asked) == 4


def test_the_client_reports_the_models_own_seconds_not_the_queueing(running) -> None:  # type: ignore[no-untyped-def]
    model = SlowEcho(delay=0.3, gate=True)
    service, _, url = running(model)
    threads, got = _arrive(service, url, ["x", "y"])
    model.gate.set()
    for t in threads:
        t.join(30)
    # the second waited in the queue while x was generated, but the model's time is reported
    assert got["walls"]["y1"] >= 0.6
    assert all(abs(s - 0.3) < 0.01 for s in got["seconds"].values()), got["seconds"]


def test_a_client_retries_while_the_service_restarts_on_its_port(running) -> None:  # type: ignore[no-untyped-def]
    _, server, url = running(SlowEcho())
    port = server.server_address[1]
    client = SharedModel(url, "t0ken", "echo.gguf")
    client.http.backoff = 0.1
    assert client.generate(GenerationRequest(prompt="one")).text == "|one"
    server.shutdown()
    server.server_close()

    def restart() -> None:
        time.sleep(0.4)
        running(SlowEcho(), port=port)

    threading.Thread(target=restart).start()
    assert client.generate(GenerationRequest(prompt="two")).text == "|two"


def test_a_service_that_stays_down_is_a_model_error_the_role_counts() -> None:
    from specswarm.swarm.launcher.procs import free_port

    client = SharedModel(f"http://127.0.0.1:{free_port()}/v1", "t", "echo.gguf")
    client.http.retries, client.http.backoff = 1, 0.01
    with pytest.raises(ModelError, match="model service .* is down"):
        client.generate(GenerationRequest(prompt="x"))


def test_the_service_listens_on_loopback_only() -> None:
    with pytest.raises(ModelError, match="loopback only"):
        serve(ModelService(SlowEcho()), 0, host="0.0.0.0")


def test_service_client_names_the_gpt4all_file_before_it_asks(tmp_path: Path) -> None:
    client = service_client(ModelSettings(), "http://127.0.0.1:9/v1")
    assert client.name == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    gguf = tmp_path / "x.gguf"
    assert service_client(ModelSettings(file=gguf), "http://127.0.0.1:9/v1").name == "x.gguf"


# ---------------------------------------------------------------------------- gpt4all, prefix kept


class FakeContext:
    n_past = 0


class FakeLLModel:
    """Stands in for gpt4all's LLModel: counts tokens as characters, records every call."""

    def __init__(self) -> None:
        self.context: FakeContext | None = None
        self.calls: list[dict] = []

    def prompt_model(self, prompt: str, template: str, callback, **kw) -> None:  # type: ignore[no-untyped-def]
        if self.context is None:
            self.context = FakeContext()
        if kw.get("reset_context"):
            self.context.n_past = 0
        self.calls.append({"prompt": prompt, "template": template, "n_past": self.context.n_past, **kw})
        self.context.n_past += len(template.replace("%1", prompt).replace("%2", ""))
        for i in range(min(kw.get("n_predict", 0), 3)):
            self.context.n_past += 1
            if not callback(i, f"w{i} "):
                break


class FakeGPT4All:
    def __init__(self) -> None:
        self.model = FakeLLModel()


@pytest.fixture
def prefix_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"GGUF")
    fake = FakeGPT4All()
    monkeypatch.setitem(gb._LOADED, (str(tmp_path), "m.gguf", 2), fake)
    return gb.Gpt4AllModel(model_file, threads=2, keep_prefix=True), fake.model


def test_the_system_turn_is_read_once_and_the_context_rewound_to_it(prefix_model) -> None:  # type: ignore[no-untyped-def]
    model, llm = prefix_model
    req = GenerationRequest(prompt="Split A", system="You plan.", max_tokens=5, top_k=1, repeat_penalty=1.1)
    first = model.generate(req)
    ingest, user = llm.calls
    system = "<|im_start|>system\nYou plan.<|im_end|>\n"
    # the calls GPT4All.generate makes in a chat session, with its defaults
    assert (ingest["prompt"], ingest["template"], ingest["reset_context"], ingest["special"]) == (
        system,
        "%1%2",
        True,
        True,
    )
    assert ingest["n_predict"] == 0 and ingest["n_batch"] == 512
    assert user["template"] == "<|im_start|>user\n%1<|im_end|>\n<|im_start|>assistant\n"
    assert {k: user[k] for k in ("temp", "top_k", "top_p", "min_p", "repeat_penalty", "repeat_last_n")} == {
        "temp": 0.0,
        "top_k": 1,
        "top_p": 0.4,
        "min_p": 0.0,
        "repeat_penalty": 1.1,
        "repeat_last_n": 64,
    }
    assert "reset_context" not in user and user["n_past"] == len(system)
    second = model.generate(GenerationRequest(prompt="Split B", system="You plan.", max_tokens=5))
    assert len(llm.calls) == 3 and llm.calls[2]["prompt"] == "Split B"  # no second ingest
    assert llm.calls[2]["n_past"] == len(system)  # rewound to just after the system turn
    assert model.prefix_hits == 1 and first.text == second.text == "w0 w1 w2"
    model.generate(GenerationRequest(prompt="Rate it", system="You rate.", max_tokens=5))
    assert llm.calls[3]["reset_context"] and llm.calls[3]["prompt"].startswith(
        "<|im_start|>system\nYou rate."
    )
    assert model.prefix_hits == 1


def test_a_context_filled_into_the_shift_zone_reads_the_prefix_again(prefix_model) -> None:  # type: ignore[no-untyped-def]
    model, llm = prefix_model
    model.generate(GenerationRequest(prompt="x" * 3500, system="S", max_tokens=5))
    model.generate(GenerationRequest(prompt="y", system="S", max_tokens=5))
    assert llm.calls[2]["reset_context"] and model.prefix_hits == 0


# ---------------------------------------------------------------------------- the launcher's plan


def _spec(model: dict, scorer_model: dict | None = None) -> GoalSpec:
    """A spec with this model section (and the scorers' own, when given)."""
    from specswarm.spec.load import spec_from_mapping

    roles: dict = {"decomposer": {"count": 2}, "scorer": {"count": 2}, "executor": {"count": 1}}
    if scorer_model is not None:
        roles["scorer"]["model"] = scorer_model
    return spec_from_mapping({"goal": "Plan a weekend", "roles": roles, "model": model})


def test_shares_is_gpt4all_by_default_and_any_local_backend_when_asked() -> None:
    from specswarm.swarm.launcher.models import SHARED_BY_DEFAULT

    assert shares(ModelSettings()) is SHARED_BY_DEFAULT and not shares(ModelSettings(shared=False))
    assert shares(ModelSettings(shared=True))
    assert not shares(ModelSettings(backend="scripted")) and shares(
        ModelSettings(backend="scripted", shared=True)
    )
    assert not shares(ModelSettings(backend="openai", base_url="http://127.0.0.1:1/v1", shared=True))


def test_one_service_per_distinct_model_and_the_peers_get_its_url(tmp_path: Path) -> None:
    spec = _spec({"backend": "gpt4all", "shared": True, "runtime": "gpt4all"})
    by_role = plan_services(spec, spec.model_for, tmp_path)
    assert set(by_role) == {"decomposer", "scorer", "executor"}
    assert len({id(s) for s in by_role.values()}) == 1
    service = by_role["scorer"]
    assert service.roles == ["decomposer", "scorer", "executor"] and len(service.token) >= 32
    assert service.command()[3:] == [
        "model",
        "serve",
        "--port",
        str(service.port),
        "--exit-with-parent",
        "--backend",
        "gpt4all",
        "--threads",
        "0",
        "--engine",
        "gpt4all",
    ]
    # llama.cpp's workers, asked for or by default where the xllamacpp wheel is installed
    for runtime, engine in (("llama.cpp", True), ("auto", llamacpp_installed())):
        spec = _spec({"backend": "gpt4all", "shared": True, "runtime": runtime})
        command = plan_services(spec, spec.model_for, tmp_path)["scorer"].command()
        assert command[-2:] == ["--engine", "llama.cpp" if engine else "gpt4all"], (runtime, command)
    # a scorer model of its own gets a service of its own; an unshared one none
    gguf = tmp_path / "other.gguf"
    mixed = _spec({"backend": "gpt4all", "shared": True}, {"backend": "gpt4all", "file": str(gguf)})
    by_role = plan_services(mixed, mixed.model_for, tmp_path)
    assert by_role["scorer"] is not by_role["decomposer"] and "--file" in by_role["scorer"].command()
    off = _spec({"backend": "gpt4all", "shared": True}, {"backend": "gpt4all", "shared": False})
    assert set(plan_services(off, off.model_for, tmp_path)) == {"decomposer", "executor"}
    assert (
        plan_services(_spec({"backend": "scripted"}), _spec({"backend": "scripted"}).model_for, tmp_path)
        == {}
    )


def test_a_peer_of_a_shared_role_is_started_with_the_service_url(tmp_path: Path) -> None:
    from specswarm.protocol.identity import Identity

    p = PeerProc(0, "scorer", Identity.generate(), 4001, None, tmp_path / "s.jsonl", tmp_path / "s.log")
    assert "--model-url" not in peer_command(p, [], tmp_path / "run.json", None)
    p.model_url = "http://127.0.0.1:5555/v1"
    cmd = peer_command(p, [], tmp_path / "run.json", None)
    assert cmd[cmd.index("--model-url") + 1] == "http://127.0.0.1:5555/v1"
    assert not any("t0ken" in c for c in cmd)  # the token travels in the environment only


def test_model_shared_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    from specswarm.swarm.peer import model_settings

    spec = _spec({"backend": "gpt4all"})
    assert model_settings(spec, "scorer").shared is None
    monkeypatch.setenv("SPECSWARM_MODEL_SHARED", "0")
    assert model_settings(spec, "scorer").shared is False
    monkeypatch.setenv("SPECSWARM_MODEL_SHARED", "1")
    assert model_settings(spec, "scorer").shared is True


def test_a_service_with_two_contexts_answers_two_requests_at_once_in_two_slots(running) -> None:  # type: ignore[no-untyped-def]
    one, two = SlowEcho(gate=True), SlowEcho(gate=True)
    service = ModelService(one, None, more=[two])
    server = serve(service, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        threads, got = _arrive(service, url, ["p", "q", "r"])
        deadline = time.monotonic() + 30
        while len(one.asked) + len(two.asked) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(one.asked) == len(two.asked) == 1  # both contexts busy, the third waits
        one.gate.set()
        two.gate.set()
        for t in threads:
            t.join(30)
        assert sorted(one.asked + two.asked) == ["p", "q", "r"] and len(got["out"]) == 3
        assert service.health()["workers"] == 2
    finally:
        server.shutdown()
        server.server_close()


def test_a_spec_s_openai_backend_on_the_model_service_takes_no_machine_slot(running) -> None:  # type: ignore[no-untyped-def]
    """The service holds the machine slot for each generation itself: an openai client on the
    same machine that held it too would wait for itself (until its request timed out)."""
    from specswarm.model.openai_backend import OpenAIModel
    from tests.openai_stub import Stub
    from tests.openai_stub import serve as serve_stub

    _, _, url = running(ScriptedModel(), token=None)
    assert OpenAIModel(url).instant is True
    with serve_stub(Stub()) as stub:  # another server on loopback: it computes on our cores
        assert OpenAIModel(stub.url).instant is False
    assert OpenAIModel("http://192.0.2.1:9/v1").instant is True  # elsewhere: not asked
