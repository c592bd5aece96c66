"""A tiny OpenAI-compatible server on 127.0.0.1 for the error paths (401, 429, 5xx, a server that
ignores or refuses ``response_format``). Answers come from a queue of scripted replies; every
request is kept. The real server (llama.cpp's, from xllamacpp) is in tests/test_openai_real.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, Any, dict[str, str]]
"""(status, JSON body, extra headers)."""


def chat(text: str, model: str = "stub-model", tokens: int = 5) -> Answer:
    """A 200 chat completion answering ``text``."""
    body = {
        "id": "x",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": 10 + tokens},
    }
    return 200, body, {}


def error(status: int, message: str, code: str = "", headers: dict[str, str] | None = None) -> Answer:
    return (
        status,
        {"error": {"message": message, "type": code or "error", "code": code or None}},
        headers or {},
    )


@dataclass
class Stub:
    """What the stub answers and what it was asked."""

    models: list[str] = field(default_factory=lambda: ["stub-model"])
    key: str | None = None
    """When set, every request must carry ``Authorization: Bearer <key>``."""
    answers: list[Answer] = field(default_factory=list)
    """Replies to ``POST /chat/completions``, in order; when empty, ``responder`` answers."""
    responder: Callable[[dict[str, Any]], Answer] | None = None
    requests: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = field(default_factory=list)
    """(method, path, JSON body, headers) of every request."""
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chats(self) -> list[dict[str, Any]]:
        """The bodies of the chat completion requests, in order."""
        return [body or {} for method, path, body, _ in self.requests if path.endswith("/chat/completions")]

    def reply(self, method: str, path: str, body: dict[str, Any] | None, headers: dict[str, str]) -> Answer:
        self.requests.append((method, path, body, headers))
        if self.key is not None and headers.get("Authorization") != f"Bearer {self.key}":
            return error(401, "Invalid API Key", "invalid_api_key")
        if method == "GET" and path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}, {}
        if method == "POST" and path == "/v1/chat/completions":
            if self.answers:
                return self.answers.pop(0)
            if self.responder is not None:
                return self.responder(body or {})
            return chat("- Alpha: the first part\n- Beta: the second part")
        return error(404, f"no route {path}")


@contextmanager
def serve(stub: Stub | None = None) -> Iterator[Stub]:
    """Run ``stub`` on 127.0.0.1 (a free port) while the block runs."""
    stub = stub or Stub()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            status, data, extra = stub.reply(method, self.path, body, dict(self.headers.items()))
            out = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(out)

        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            self._answer("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._answer("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stub.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    from specswarm.ports import free_port as pick

    return pick("127.0.0.1")
