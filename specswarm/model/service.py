"""The shared model service: one copy of a local model per machine, for every peer of a run.

``specswarm plan`` starts one service per distinct local gpt4all model (``specswarm model
serve``) before any peer, and the peers ask it through the openai backend's code path
(:class:`SharedModel`). It speaks the part of the OpenAI chat-completions protocol that
backend uses: ``GET /v1/models``, ``POST /v1/chat/completions`` (one optional system message,
one user message, ``max_tokens``, ``temperature``, ``top_k``, ``repeat_penalty``, ``seed``,
``stop``), and ``GET /health`` (no token; its counters).

* **Loopback only, a per-run token.** It listens on 127.0.0.1; every ``/v1`` request must
  carry ``Authorization: Bearer <token>`` when a token is set (the launcher makes a random
  one per run and hands it to its peers in :data:`TOKEN_ENV`; it never enters an event).
* **One queue instead of the machine-wide slots.** Requests are answered in the order they
  came (FIFO), by as many workers as the machine has generation slots (its cores divided by
  the model's threads), each with its own context of the one loaded file and holding its
  slot's file lock (:func:`~specswarm.model.lock.hold_machine_lock`), so the service takes
  turns with any peer that runs a model of its own. Its clients take no slot themselves.
* **The same answers.** A request becomes the same :class:`GenerationRequest` an
  in-process peer would make, and the same :class:`~specswarm.model.gpt4all_backend.Gpt4AllModel`
  code answers it (ChatML turns, greedy ``top_k=1``, stops and loop guard), with
  ``keep_prefix``: a system turn that the previous call also had is not read again.
  Greedy requests (``top_k`` 1) are deterministic, so an identical one already queued or
  answered recently is not generated twice (the second waits for, or gets, the first's text).
* ``response_format`` is refused (HTTP 400, naming it): gpt4all cannot hold output to a
  schema, and the openai backend then asks for free text, as it does with any such server.
"""

from __future__ import annotations

import hmac
import json
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from specswarm.errors import EndpointError, ModelError
from specswarm.model._http import Unreachable
from specswarm.model.base import Generation, GenerationRequest, Model
from specswarm.model.lock import hold_machine_lock
from specswarm.model.openai_backend import OpenAIModel
from specswarm.spec import ModelSettings

log = logging.getLogger("specswarm.model.service")

TOKEN_ENV = "SPECSWARM_MODEL_TOKEN"
"""The environment variable that holds the service's bearer token (for it and its clients)."""
CLIENT_RETRIES = 6
"""A client asks again this often (after 1, 2, 4, 8, 16, 30 s) while the service is down:
about a minute, long enough for the launcher to restart it."""
CLIENT_TIMEOUT = 3600.0
"""Seconds a client waits for one answer: the queue may hold every peer's request before it
(a dead service is noticed at once: its connections close)."""
CACHE_SIZE = 256
"""Greedy answers kept for identical requests."""
MAX_BODY = 4 * 2**20


def request_of(payload: Any) -> GenerationRequest:
    """The generation a chat-completions body asks for; ValueError naming what is wrong."""
    if not isinstance(payload, dict):
        raise ValueError("the body is not a JSON object")
    if payload.get("stream"):
        raise ValueError("stream is not supported")
    if payload.get("response_format") is not None:
        raise ValueError("response_format is not supported: gpt4all cannot hold an answer to a json_schema")
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if roles not in (["user"], ["system", "user"]):
        raise ValueError(f"messages must be [system,] user (got {roles})")
    texts = [m.get("content") for m in messages]
    if not all(isinstance(t, str) for t in texts):
        raise ValueError("every message content must be a string")
    stop = payload.get("stop") or ()
    stop = (stop,) if isinstance(stop, str) else stop
    if not isinstance(stop, list | tuple) or not all(isinstance(s, str) for s in stop):
        raise ValueError("stop must be a string or a list of strings")
    try:
        return GenerationRequest(
            prompt=texts[-1],
            system=texts[0] if len(texts) == 2 else "",
            max_tokens=int(payload.get("max_tokens") or 256),
            temperature=float(payload.get("temperature") or 0.0),
            top_k=int(payload.get("top_k") or 1),
            seed=int(payload.get("seed") or 42),
            repeat_penalty=float(payload.get("repeat_penalty") or 1.1),
            stop=tuple(stop),
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad sampling field: {exc}") from None


@dataclass
class _Job:
    req: GenerationRequest
    queued: float = field(default_factory=time.perf_counter)
    done: threading.Event = field(default_factory=threading.Event)
    gen: Generation | None = None
    error: str | None = None
    started: float = 0.0
    prompt_seconds: float = 0.0


@dataclass
class ServiceCounts:
    """What the service did (``GET /health`` shows it)."""

    requests: int = 0
    generated: int = 0
    shared: int = 0
    """Answered from an identical request's generation (queued or recent)."""
    prefix_hits: int = 0
    failures: int = 0
    queue_peak: int = 0
    tokens: int = 0
    prompt_seconds: float = 0.0
    gen_seconds: float = 0.0
    prompt_tokens: int = 0
    """Prompt tokens read (llama.cpp workers; gpt4all does not count them)."""
    reused_tokens: int = 0
    """Prompt tokens found evaluated already, not read again (llama.cpp workers)."""


_TALLIES = ("prefix_hits", "prompt_tokens", "reused_tokens")
"""A worker model's running counts the service adds up."""


class ModelService:
    """One model, a FIFO queue, one worker thread per context of the model (each in its own
    machine slot), and the identical-request sharing."""

    def __init__(
        self,
        model: Model,
        token: str | None = None,
        *,
        cache_size: int = CACHE_SIZE,
        more: Sequence[Model] = (),
    ) -> None:
        """``more``: further contexts of the same model, one worker each (a machine with more
        cores than one generation uses runs several generations at once)."""
        self.model = model
        self.token = token or None
        self.counts = ServiceCounts()
        self._queue: queue.Queue[_Job] = queue.Queue()
        self._lock = threading.Lock()
        self._pending: dict[GenerationRequest, _Job] = {}
        self._recent: OrderedDict[GenerationRequest, _Job] = OrderedDict()
        self._cache_size = cache_size
        self.workers = [
            threading.Thread(target=self._work, args=(m, slot), name=f"specswarm-model-{slot}", daemon=True)
            for slot, m in enumerate([model, *more])
        ]
        for worker in self.workers:
            worker.start()

    def answer(self, req: GenerationRequest) -> _Job:
        """Queue ``req`` (or join an identical one) and wait for its generation."""
        greedy = req.top_k == 1
        with self._lock:
            self.counts.requests += 1
            job = (self._pending.get(req) or self._recent.get(req)) if greedy else None
            if job is not None:
                self.counts.shared += 1
            else:
                job = _Job(req)
                if greedy:
                    self._pending[req] = job
                self._queue.put(job)
                self.counts.queue_peak = max(self.counts.queue_peak, self._queue.qsize())
        job.done.wait()
        return job

    def _work(self, model: Model, slot: int) -> None:
        while True:
            job = self._queue.get()
            job.started = time.perf_counter()
            try:
                with hold_machine_lock(slot):
                    before = {name: getattr(model, name, 0) for name in _TALLIES}
                    job.gen = model.generate(job.req)
                    job.prompt_seconds = float(getattr(model, "last_prompt_seconds", 0.0))
                    with self._lock:
                        for name, was in before.items():
                            grown = getattr(model, name, 0) - was
                            setattr(self.counts, name, getattr(self.counts, name) + grown)
            except Exception as exc:  # the worker must outlive any failure: its waiters get a 500
                job.error = str(exc) or type(exc).__name__
            with self._lock:
                self._pending.pop(job.req, None)
                if job.gen is not None:
                    self.counts.generated += 1
                    self.counts.tokens += job.gen.tokens
                    self.counts.gen_seconds += job.gen.seconds
                    self.counts.prompt_seconds += job.prompt_seconds
                    if job.req.top_k == 1:
                        self._recent[job.req] = job
                        while len(self._recent) > self._cache_size:
                            self._recent.popitem(last=False)
                else:
                    self.counts.failures += 1
            job.done.set()

    def authorized(self, header: str | None) -> bool:
        if self.token is None:
            return True
        given = (header or "").removeprefix("Bearer ").strip()
        return hmac.compare_digest(given.encode(), self.token.encode())

    def health(self) -> dict[str, Any]:
        c = self.counts
        with self._lock:
            waiting = self._queue.qsize()
        return {
            "status": "ok",
            "model": self.model.name,
            "workers": len(self.workers),
            "queued": waiting,
            **vars(c),
        }

    def completion(self, job: _Job) -> dict[str, Any]:
        gen = job.gen
        assert gen is not None
        gen_ms = gen.seconds * 1000
        prompt_ms = min(job.prompt_seconds * 1000, gen_ms)
        return {
            "id": f"chatcmpl-{id(job):x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": gen.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": gen.text},
                    "finish_reason": "length" if gen.tokens >= job.req.max_tokens else "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": gen.tokens, "total_tokens": gen.tokens},
            # llama.cpp's server reports its times so too: the model's own time, no queueing
            "timings": {
                "prompt_ms": round(prompt_ms, 3),
                "predicted_ms": round(gen_ms - prompt_ms, 3),
                "predicted_n": gen.tokens,
                "queue_ms": round((job.started - job.queued) * 1000, 3),
            },
        }


def _error(message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection: nothing half-read is left behind

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("%s " + format, self.address_string(), *args)

    def _send(self, status: int, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _allowed(self) -> bool:
        if self.server.service.authorized(self.headers.get("Authorization")):
            return True
        self._send(401, _error("missing or wrong bearer token", "authentication_error"))
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        service = self.server.service
        if self.path == "/health":
            self._send(200, service.health())
        elif self.path == "/v1/models":
            if self._allowed():
                row = {"id": service.model.name, "object": "model", "owned_by": "specswarm"}
                self._send(200, {"object": "list", "data": [row]})
        else:
            self._send(404, _error(f"no such path: {self.path}", "invalid_request_error"))

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        if self.path != "/v1/chat/completions":
            self._send(404, _error(f"no such path: {self.path}", "invalid_request_error"))
            return
        if not self._allowed():
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_BODY:
                raise ValueError(f"a body of 1 to {MAX_BODY} bytes is needed")
            req = request_of(json.loads(self.rfile.read(length)))
        except ValueError as exc:
            param = "response_format" if "response_format" in str(exc) else None
            self._send(400, _error(str(exc), "invalid_request_error", param))
            return
        job = self.server.service.answer(req)
        if job.gen is None:
            self._send(500, _error(f"generation failed: {job.error}", "server_error"))
        else:
            self._send(200, self.server.service.completion(job))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], service: ModelService) -> None:
        self.service = service
        super().__init__(address, _Handler)


def serve(service: ModelService, port: int = 0, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """Bind ``service`` to ``host:port`` (loopback; 0: any free port); call ``serve_forever``."""
    from specswarm.model._http import is_loopback

    if not is_loopback(f"http://{host}/"):
        raise ModelError(f"the model service listens on loopback only, not {host!r}")
    return _Server((host, port), service)


class SharedModel(OpenAIModel):
    """A peer's client of the shared model service: the openai backend, with no machine slot
    (the service queues), free text (gpt4all holds no schema), patient retries while the
    launcher restarts a dead service, and the served model's name from the start."""

    def __init__(self, base_url: str, token: str | None, name: str | None = None) -> None:
        super().__init__(
            base_url, name, api_key=token, key_env=TOKEN_ENV, timeout=CLIENT_TIMEOUT, retries=CLIENT_RETRIES
        )
        self._instant = True  # no machine-wide slot: the service queues and holds it itself
        self.accepts_schema = False
        self._confirmed = False

    def _confirm(self) -> None:
        """Take the model id the service serves (a failure is a ModelError: counted, retried)."""
        try:
            reply = self.http.request("GET", "/models")
        except Unreachable as exc:
            raise ModelError(f"the model service at {self.base_url} is down ({exc})") from None
        if reply.status in (401, 403):
            raise self.refused(reply)
        rows = reply.data.get("data") if isinstance(reply.data, dict) else None
        if reply.status != 200 or not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
            raise ModelError(f"{self.base_url}/models: HTTP {reply.status} ({reply.message})")
        self._use(str(rows[0].get("id") or self.name))
        self._confirmed = True

    def generate(self, req: GenerationRequest) -> Generation:
        if not self._confirmed:
            self._confirm()
        try:
            return super().generate(req)
        except EndpointError as exc:
            if exc.field == "api_key_env":
                raise
            raise ModelError(str(exc)) from None  # the service serves whatever it loaded


def service_client(settings: ModelSettings, url: str) -> Model:
    """A role's client of the service at ``url`` (``settings``: the role's model, which names
    it until the service says, and whose cassette a real model records into)."""
    import os

    from specswarm.model.gpt4all_backend import file_name

    name = file_name(settings) if settings.backend == "gpt4all" else None
    client: Model = SharedModel(url, os.environ.get(TOKEN_ENV) or None, name)
    if settings.cassette and settings.backend in ("gpt4all", "llama"):
        from specswarm.model.replay import RecordingModel

        return RecordingModel(client, settings.cassette)
    return client
