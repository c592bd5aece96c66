"""HTTP for the openai backend, on the standard library: one JSON request, bounded retries.

:class:`Endpoint` sends a request to an API root and asks again after a 429, a 5xx, a dropped
connection or a timeout (``retries`` times, after 1, 2, 4 ... s or the server's
``Retry-After``, at most :data:`MAX_WAIT`); what it gets back is a :class:`Reply`, whatever its
status (the caller decides what a status means). No proxy is used for a loopback URL.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("specswarm.model.openai")

MAX_WAIT = 30.0
"""The longest wait between two tries (a larger ``Retry-After`` is cut to this)."""
QUICK_TIMEOUT = 15.0
"""Seconds a request without a body (``GET /models``) may take (or ``timeout``, if smaller)."""
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


def is_loopback(url: str) -> bool:
    """True when ``url``'s host is this machine (a loopback address or ``localhost``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: its status, its JSON (None if it was not JSON), its raw text."""

    status: int
    data: Any
    text: str
    headers: Message | None = None

    @property
    def message(self) -> str:
        """The server's error message (OpenAI's ``error.message``), else the start of the text."""
        err = self.data.get("error") if isinstance(self.data, dict) else None
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
        return " ".join(self.text.split())[:300] or "no message"

    @property
    def error_code(self) -> str:
        """OpenAI's ``error.code`` / ``error.type`` (empty when absent)."""
        err = self.data.get("error") if isinstance(self.data, dict) else None
        if not isinstance(err, dict):
            return ""
        return " ".join(str(err.get(k, "")) for k in ("code", "type")).strip()


class Unreachable(Exception):
    """The request got no HTTP answer at all (refused, reset, timed out, unknown host)."""


def _reason(exc: BaseException) -> str:
    """A connection failure in a few words: "connection refused", "no answer within 5 s"."""
    inner = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(inner, ConnectionRefusedError):
        return "connection refused"
    if isinstance(inner, ConnectionResetError):
        return "connection reset"
    if isinstance(inner, socket.gaierror):
        return "unknown host"
    if isinstance(inner, TimeoutError | socket.timeout):
        return "no answer in time"
    return str(inner) or type(inner).__name__


class Endpoint:
    """An API root (``http://127.0.0.1:8080/v1``), its key, its timeout and its retry rule."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 300.0,
        retries: int = 3,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        handlers = [urllib.request.ProxyHandler({})] if is_loopback(base_url) else []
        self._opener = urllib.request.build_opener(*handlers)

    def _send(self, method: str, path: str, payload: Mapping[str, Any] | None, timeout: float) -> Reply:
        headers = {"Accept": "application/json"}
        data = None
        if payload is not None:
            data = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=timeout) as resp:
                status, raw, got = resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as exc:
            status, got = exc.code, exc.headers
            try:
                raw = exc.read()
            except OSError:
                raw = b""
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise Unreachable(_reason(exc)) from exc
        text = raw.decode("utf-8", errors="replace")
        try:
            parsed = json.loads(text) if text.strip() else None
        except ValueError:
            parsed = None
        return Reply(status, parsed, text, got)

    def _wait(self, attempt: int, reply: Reply | None) -> float:
        after = reply.headers.get("Retry-After") if reply is not None and reply.headers else None
        try:
            wait = float(after) if after is not None else self.backoff * 2**attempt
        except ValueError:
            wait = self.backoff * 2**attempt
        return min(max(wait, 0.0), MAX_WAIT)

    def request(
        self,
        method: str,
        path: str,
        payload: Mapping[str, Any] | None = None,
        *,
        retry_unreachable: bool = True,
    ) -> Reply:
        """Send one request, asking again after a 429, a 5xx or a lost connection (at most
        ``retries`` times); return the last reply. Raise :class:`Unreachable` when the last
        try got no answer."""
        timeout = self.timeout if payload is not None else min(self.timeout, QUICK_TIMEOUT)
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                reply = self._send(method, path, payload, timeout)
            except Unreachable as exc:
                if last or not retry_unreachable:
                    raise
                log.warning("%s%s: %s; trying again", self.base_url, path, exc)
                self._sleep(self._wait(attempt, None))
                continue
            if (reply.status == 429 or reply.status >= 500) and not last:
                log.warning("%s%s: HTTP %d; trying again", self.base_url, path, reply.status)
                self._sleep(self._wait(attempt, reply))
                continue
            return reply
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
