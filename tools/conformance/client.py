"""The HTTP(S) client of the recorder and the replay: one request per connection, bearer
tokens per user, raw answers (status, headers, bytes) and watch streams read event by event.

The standard library's ``http.client`` is enough and keeps every byte visible: no client
library reorders headers, retries, or decodes bodies behind our back.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import yaml

#: How long one request may take (wall clock): a reference under load answers in well under it.
REQUEST_TIMEOUT_S = 30.0
#: The User-Agent of every request (server-side field managers are named after it, as
#: client-go's are); a step may send its own, or ``User-Agent: ""`` for none.
USER_AGENT = "conformance/v0.0.0 (linux/amd64) kubernetes/none"
#: How long a watch step waits for its events when the server does not end the stream first.
WATCH_WAIT_S = 5.0


@dataclass
class RawResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    #: For a watch: each event line's bytes, in order (``body`` is then empty).
    events: list[bytes] | None = None
    #: A watch that neither reached its count nor was ended by the server.
    watch_timed_out: bool = False

    def header_values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@dataclass
class Server:
    """An apiserver to talk to: its base URL and the bearer token of each user."""

    url: str
    tokens: dict[str, str] = field(default_factory=dict)
    #: How long a watch step waits for its events (the replay's fake answers at once).
    watch_wait_s: float = WATCH_WAIT_S

    @classmethod
    def from_kubeconfig(cls, path: str, extra_tokens: dict[str, str]) -> "Server":
        """The current context's server and its user's token (as ``admin``), plus ``extra_tokens``."""
        with open(path) as f:
            config = yaml.safe_load(f)
        context_name = config.get("current-context")
        context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
        if "token" not in user:
            raise ValueError(f"{path}: the current user has no bearer token (the recorder authenticates with one)")
        return cls(url=cluster["server"], tokens={"admin": user["token"], **extra_tokens})

    def _connection(self) -> http.client.HTTPConnection:
        parts = urlsplit(self.url)
        if parts.scheme == "https":
            context = ssl._create_unverified_context()  # the references' self-signed serving certificate
            return http.client.HTTPSConnection(parts.hostname or "127.0.0.1", parts.port or 443,
                                               timeout=REQUEST_TIMEOUT_S, context=context)
        return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=REQUEST_TIMEOUT_S)

    def _headers(self, user: str, headers: dict[str, Any]) -> list[tuple[str, str]]:
        """The request's header lines: a list value is one line per item (``Impersonate-Group``)."""
        out: dict[str, Any] = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if user != "anonymous":
            out["Authorization"] = f"Bearer {self.tokens.get(user, user)}"
        out.update(headers)
        lines: list[tuple[str, str]] = []
        for name, value in out.items():
            for item in value if isinstance(value, list) else [value]:
                if item != "":
                    lines.append((name, str(item)))
        return lines

    def send(self, method: str, path: str, headers: dict[str, Any], body: bytes | None, user: str = "admin",
             watch_events: int | None = None) -> RawResponse:
        """One request. With ``watch_events``, the answer is read as a watch stream: one event
        per line until that many arrived, the server ended it, or ``watch_wait_s`` passed."""
        conn = self._connection()
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            for name, value in self._headers(user, headers):
                conn.putheader(name, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            resp = conn.getresponse()
            pairs = list(resp.getheaders())
            if watch_events is None or resp.status != 200:
                return RawResponse(resp.status, pairs, resp.read())
            return self._read_watch(conn, resp, pairs, watch_events)
        finally:
            conn.close()

    def _read_watch(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse,
                    pairs: list[tuple[str, str]], count: int) -> RawResponse:
        events: list[bytes] = []
        deadline = time.monotonic() + self.watch_wait_s
        if conn.sock is not None:
            conn.sock.settimeout(self.watch_wait_s)
        timed_out = False
        while len(events) < count:
            if time.monotonic() > deadline:
                timed_out = True
                break
            try:
                line = resp.readline()
            except (TimeoutError, OSError):
                timed_out = True
                break
            if not line:
                break
            if line.strip():
                events.append(line.strip())
        return RawResponse(resp.status, pairs, b"", events=events, watch_timed_out=timed_out)
