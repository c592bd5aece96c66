"""Backend for any OpenAI-compatible endpoint: ``POST {base_url}/chat/completions``.

Ollama (``http://localhost:11434/v1``), llama.cpp's server, vLLM, LM Studio and hosted APIs
all speak it. The standard library does the HTTP (``urllib``); nothing is installed for it.

* **Several requests at once, bounded.** A server answers several requests at once (its
  parallel slots, a batch, a hosted API), so a spec's endpoint is asked by up to
  ``model.concurrency`` peers' calls at once (:data:`DEFAULT_CONCURRENCY` when unset), a
  bound shared by every peer process of the machine through file locks of that endpoint
  (:attr:`OpenAIModel.endpoint_slots`, :mod:`specswarm.swarm.roles.slots`), not the
  machine's generation slot. Without a bound (a model built without ``concurrency``: the
  shared model service's client) where it runs decides: a server on this machine
  (``127.0.0.1``, ``::1``, ``localhost``) takes the machine-wide generation slot like
  gpt4all's (``instant`` False); an endpoint elsewhere is ``instant``.
* **Retries are bounded.** A 429, a 5xx, a dropped connection or a timeout is asked again
  ``retries`` times, after 1, 2, 4 ... seconds (or the server's ``Retry-After``, at most
  30 s: :mod:`specswarm.model._http`); then the call fails as a
  :class:`~specswarm.errors.ModelError`, which the role counts and backs off from. What asking
  again cannot fix -- a refused key, a model the server does not serve, a prompt longer than
  its context -- raises :class:`~specswarm.errors.EndpointError` at once (exit 2, naming the
  spec field). So does an endpoint that stopped working: every call failed for
  :data:`DEAD_AFTER` seconds (at least :data:`DEAD_CALLS` calls in a row, none answered).
* **Schema-constrained output, detected once.** A request with an
  :class:`~specswarm.model.base.OutputSchema` is sent with
  ``response_format: {type: json_schema, json_schema: {name, schema}}`` (the nested form:
  llama.cpp's server silently ignores the flat one). A server that rejects the field (a 4xx
  naming it), or answers with something that is not a JSON object, is taken not to support
  it: ``accepts_schema`` turns False and every later request is sent without one (the tasks
  then parse free text).
* **Sampling.** ``temperature`` and ``seed`` are standard; ``top_k`` and ``repeat_penalty``
  are not (llama.cpp's server honours both, vLLM ``top_k``); a server that refuses them by
  name is asked again without them, once for all.
* The key is read from the environment variable ``api_key_env`` names, never from the spec;
  unset, no ``Authorization`` header is sent (a local server needs none).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from specswarm.errors import EndpointError, ModelError
from specswarm.model._common import cut_at_stop
from specswarm.model._http import Endpoint, Reply, Unreachable, is_loopback
from specswarm.model.base import Generation, GenerationRequest
from specswarm.model.schemas import whole_words
from specswarm.spec import ModelSettings

log = logging.getLogger("specswarm.model.openai")

EXTRAS = ("top_k", "repeat_penalty")
"""Sampling fields outside the OpenAI standard, sent until a server refuses them."""
_CONTEXT = re.compile(r"context (?:size|length|window)|context_length|exceed_context|too many tokens", re.I)
_SCHEMA_WORDS = re.compile(r"response_format|json_schema|grammar", re.I)
_NOT_SERVED = re.compile(r"model_not_found|\bmodel\b.*\b(?:not found|does not exist)", re.I)
DEFAULT_CONCURRENCY = 4
"""Requests the peers of one machine send an endpoint at once when ``model.concurrency`` is
unset: a server with parallel slots (or a hosted API) answers several at once, and more than a
few at once only queue there."""
DEAD_AFTER = 30.0
"""Seconds from the start of the first of a row of failed calls after which the endpoint counts
as dead (an :class:`~specswarm.errors.EndpointError` naming ``base_url``, not one more
:class:`~specswarm.errors.ModelError`): a server restarting comes back sooner; a run whose
endpoint died ends within a minute, not at the end of its budget."""
DEAD_CALLS = 2
"""Failed calls in a row (each after its retries) the endpoint must also have had to count as
dead."""


class OpenAIModel:
    """A :class:`~specswarm.model.base.Model` that asks an OpenAI-compatible endpoint."""

    def __init__(
        self,
        base_url: str,
        name: str | None = None,
        *,
        api_key: str | None = None,
        key_env: str = "OPENAI_API_KEY",
        timeout: float = 300.0,
        retries: int = 3,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        concurrency: int | None = None,
    ) -> None:
        self.http = Endpoint(
            base_url, api_key=api_key, timeout=timeout, retries=retries, backoff=backoff, sleep=sleep
        )
        self.base_url = self.http.base_url
        self.model_id = name
        """The id sent as ``model`` (None until resolved: the only model the server lists)."""
        self.name = _display(name) if name else "openai"
        self.key_env = key_env
        self._instant: bool | None = None if is_loopback(base_url) else True
        self.accepts_schema = True
        """Until the server shows it ignores or refuses ``response_format``."""
        self.extras = True
        """Send :data:`EXTRAS` until the server refuses them."""
        self._lock = threading.Lock()
        self.row = FailedRow(self.http.base_url, clock)
        """Its calls that failed in a row: when the endpoint counts as dead."""
        self.concurrency = concurrency
        """Calls the peers of this machine send it at once (a spec's ``model.concurrency``);
        None: no endpoint slots (the machine slot of a loopback server, or none)."""

    @classmethod
    def from_settings(cls, settings: ModelSettings, env: Mapping[str, str] | None = None) -> OpenAIModel:
        """The endpoint of a spec's model settings; the key from ``api_key_env`` in ``env``."""
        if not settings.base_url:
            raise EndpointError("base_url", "missing (backend 'openai' needs the endpoint's API root)")
        environ = os.environ if env is None else env
        return cls(
            settings.base_url,
            settings.name,
            api_key=environ.get(settings.api_key_env) or None,
            key_env=settings.api_key_env,
            timeout=settings.timeout,
            retries=settings.retries,
            concurrency=settings.concurrency or DEFAULT_CONCURRENCY,
        )

    # ------------------------------------------------------------------ what the server says

    def refused(self, reply: Reply) -> EndpointError:
        """The error of a 401/403: which variable to fix."""
        if self.http.api_key:
            why = (
                f"{self.base_url} refused the API key in ${self.key_env} "
                f"(HTTP {reply.status}: {reply.message})"
            )
        else:
            why = f"{self.base_url} wants an API key (HTTP {reply.status}); ${self.key_env} is not set"
        return EndpointError("api_key_env", why)

    @property
    def endpoint_slots(self) -> tuple[str, int] | None:
        """``(base_url, concurrency)``: its calls take one of that many machine-wide slots of
        this endpoint (:mod:`specswarm.swarm.roles.slots`), not the generation slot; None
        without a bound."""
        return (self.base_url, self.concurrency) if self.concurrency else None

    @property
    def instant(self) -> bool:
        """No machine-wide slot: a server elsewhere costs this machine nothing, and specswarm's
        model service on this machine holds the slot itself (asked once, by its model list)."""
        if self._instant is None:
            self._instant = serves_own_slot(self.http)
        return bool(self._instant)

    def served(self) -> list[str]:
        """The model ids ``GET /models`` lists. Raise EndpointError when the endpoint cannot be
        reached, refuses the key or has no such list (base_url is not an API root)."""
        try:
            reply = self.http.request("GET", "/models", retry_unreachable=False)
        except Unreachable as exc:
            raise EndpointError("base_url", f"cannot reach {self.base_url} ({exc})") from None
        if reply.status in (401, 403):
            raise self.refused(reply)
        if reply.status == 404:
            raise EndpointError(
                "base_url",
                f"{self.base_url}/models: HTTP 404 (expected the API root of an OpenAI-compatible "
                "server, usually ending in /v1)",
            )
        rows = reply.data.get("data") if isinstance(reply.data, dict) else None
        if reply.status != 200 or not isinstance(rows, list):
            raise EndpointError(
                "base_url", f"{self.base_url}/models: HTTP {reply.status} ({reply.message}); not a model list"
            )
        return [str(r["id"]) for r in rows if isinstance(r, dict) and r.get("id")]

    def check(self) -> None:
        """The preflight: the endpoint answers, takes the key, serves the model named (and, with
        none named, serves exactly one, which is then used). Raise EndpointError if not."""
        ids = self.served()
        if self.model_id is None:
            if len(ids) != 1:
                listed = ", ".join(ids[:8]) or "none"
                raise EndpointError(
                    "name", f"not set, and {self.base_url} serves {len(ids)} models ({listed}): name one"
                )
            self._use(ids[0])
        elif self.model_id not in ids:
            listed = ", ".join(repr(i) for i in ids[:8]) or "none"
            raise EndpointError(
                "name", f"{self.model_id!r} is not served by {self.base_url} (it serves {listed})"
            )

    def _use(self, model_id: str) -> None:
        self.model_id = model_id
        self.name = _display(model_id)

    # ------------------------------------------------------------------ generation

    def generate(self, req: GenerationRequest) -> Generation:
        started = self.row.clock()
        try:
            gen = self._generate(req)
        except EndpointError:
            raise
        except ModelError as exc:
            raise self.row.failed(exc, started) from None
        self.row.answered()
        return gen

    def _generate(self, req: GenerationRequest) -> Generation:
        with self._lock:
            if self.model_id is None:
                self.check()
        started = time.perf_counter()
        for _ in range(3):  # at most: once with everything, once without extras, once without schema
            schema = req.schema is not None and self.accepts_schema
            try:
                reply = self.http.request("POST", "/chat/completions", chat_payload(self, req, schema))
            except Unreachable as exc:
                raise ModelError(
                    f"cannot reach {self.base_url} ({exc}) after {self.http.retries + 1} tries"
                ) from None
            if reply.status == 200:
                return read_answer(self, req, reply, schema, time.perf_counter() - started)
            self._fail(reply, schema)
        raise ModelError(f"{self.base_url}: the server refused every form of the request")

    def _fail(self, reply: Reply, schema: bool) -> None:
        """Learn from a refused request (and return, to send it again), or raise."""
        status, message = reply.status, reply.message
        said = f"{message} {reply.error_code}"
        if status in (401, 403):
            raise self.refused(reply)
        if 400 <= status < 500 and _CONTEXT.search(said):
            err = reply.data.get("error") if isinstance(reply.data, dict) else None
            sizes = (err.get("n_prompt_tokens"), err.get("n_ctx")) if isinstance(err, dict) else (None, None)
            counted = f"; {sizes[0]} prompt tokens, context {sizes[1]}" if None not in sizes else ""
            raise EndpointError(
                "max_tokens",
                f"the prompt and answer do not fit the context of {self.model_id!r} at {self.base_url} "
                f"(HTTP {status}: {message}{counted}); serve it with a larger context or lower "
                "model.max_tokens",
            )
        if status == 404 or (400 <= status < 500 and _NOT_SERVED.search(said)):
            raise EndpointError(
                "name", f"{self.model_id!r} is not served by {self.base_url} (HTTP {status}: {message})"
            )
        if 400 <= status < 500 and schema and _SCHEMA_WORDS.search(said):
            log.warning("%s refuses response_format (%s); asking for free text", self.base_url, message)
            self.accepts_schema = False
            return
        if 400 <= status < 500 and self.extras and any(x in said for x in EXTRAS):
            log.warning("%s refuses %s (%s); sending only standard fields", self.base_url, EXTRAS, message)
            self.extras = False
            return
        raise ModelError(f"{self.base_url}/chat/completions: HTTP {status}: {message}")


def read_answer(
    model: OpenAIModel, req: GenerationRequest, reply: Reply, schema: bool, seconds: float
) -> Generation:
    """The generation in ``model``'s 200 ``reply`` to ``req`` (``schema``: asked with one); an
    answer that ignored the schema turns ``model.accepts_schema`` off. ModelError when the
    reply is not a chat completion."""
    data = reply.data if isinstance(reply.data, dict) else {}
    try:
        text = str(data["choices"][0]["message"].get("content") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelError(
            f"{model.base_url}/chat/completions: not a chat completion: {reply.text[:200]!r}"
        ) from None
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    tokens = int(usage.get("completion_tokens") or len(text.split()))
    seconds = _model_seconds(data.get("timings")) or seconds
    structured = schema and text.lstrip().startswith("{")
    if schema and not structured:
        log.warning(
            "%s ignored response_format (the answer is not JSON); asking for free text", model.base_url
        )
        model.accepts_schema = False
    text, _ = cut_at_stop(text, req.stop)  # servers cut at stop strings; make sure
    if structured and req.schema is not None:
        text = whole_words(text, req.schema.value())
    answered_by = str(data.get("model") or model.model_id or model.name)
    return Generation(
        text=text.strip(), tokens=tokens, seconds=seconds, model=_display(answered_by), structured=structured
    )


def serves_own_slot(http: Endpoint) -> bool | None:
    """Whether the server at ``http`` is specswarm's model service (its model list says
    ``owned_by: specswarm``), which takes the machine slot for each generation itself: a client
    holding the slot too would wait for itself. None when the list cannot be read (ask again)."""
    try:
        reply = http.request("GET", "/models", retry_unreachable=False)
    except Unreachable:
        return None
    rows = reply.data.get("data") if reply.status == 200 and isinstance(reply.data, dict) else None
    if not isinstance(rows, list):
        return None
    return any(isinstance(r, dict) and r.get("owned_by") == "specswarm" for r in rows)


def chat_payload(model: OpenAIModel, req: GenerationRequest, schema: bool) -> dict[str, Any]:
    """The body of ``model``'s chat completion request for ``req`` (``schema``: with its
    ``response_format``)."""
    messages = [{"role": "system", "content": req.system}] if req.system else []
    messages.append({"role": "user", "content": req.prompt})
    payload: dict[str, Any] = {
        "model": model.model_id,
        "messages": messages,
        "max_tokens": req.max_tokens,
        "temperature": req.temperature,
        "seed": req.seed,
        "stream": False,
    }
    if req.stop:
        payload["stop"] = list(req.stop)
    if model.extras:
        payload.update(top_k=req.top_k, repeat_penalty=req.repeat_penalty)
    if schema and req.schema is not None:
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": req.schema.name, "schema": req.schema.value()},
        }
    return payload


class FailedRow:
    """An endpoint's calls that failed in a row, and whether it is dead: :data:`DEAD_CALLS`
    calls in a row failed over :data:`DEAD_AFTER` seconds, none answered."""

    def __init__(self, base_url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.base_url = base_url
        self.clock = clock
        self.calls = 0
        """Calls in a row that failed (none answered since)."""
        self.since: float | None = None
        """When the first of them started (``clock`` time); None after an answer."""

    def answered(self) -> None:
        self.calls, self.since = 0, None

    def failed(self, exc: ModelError, started: float) -> ModelError | EndpointError:
        """A call that started at ``started`` failed with ``exc``: the error to raise (an
        EndpointError naming ``base_url`` once the endpoint is dead)."""
        self.calls += 1
        self.since = started if self.since is None else self.since
        span = self.clock() - self.since
        if self.calls < DEAD_CALLS or span < DEAD_AFTER:
            return exc
        return EndpointError(
            "base_url",
            f"{self.base_url} stopped working: {self.calls} calls in a row failed over {span:.0f} s "
            f"(last: {exc})",
        )


def _model_seconds(timings: object) -> float:
    """The model's own time for an answer, queueing left out, when the server reports it
    (llama.cpp's server and the shared model service: ``timings.prompt_ms + predicted_ms``);
    0.0 when it does not."""
    if not isinstance(timings, dict):
        return 0.0
    try:
        return max(
            0.0, (float(timings.get("prompt_ms") or 0) + float(timings.get("predicted_ms") or 0)) / 1000
        )
    except (TypeError, ValueError):
        return 0.0


def _display(model_id: str) -> str:
    """How results name a model: its id, or the file name when the id is a file path (llama.cpp's
    server names a model by the path it was loaded from)."""
    return model_id.rsplit("/", 1)[-1] if model_id.startswith("/") else model_id


def preflight(settings: ModelSettings, env: Mapping[str, str] | None = None) -> OpenAIModel:
    """Check the endpoint of ``settings`` before any peer starts (see :meth:`OpenAIModel.check`);
    return the checked model. Raise EndpointError naming the field to fix."""
    model = OpenAIModel.from_settings(settings, env)
    model.check()
    return model
