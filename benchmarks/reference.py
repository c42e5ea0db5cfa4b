"""The same-bytes reference: servers that answer exactly what fakekube answers, doing nothing else.

A ratio against a "hello" app says what the whole request costs; a ratio against a server
that sends fakekube's own answer — same status line, headers and body, recorded from
fakekube once it is serving — says what fakekube's *work* costs, with the bytes on the
wire (a 0.9 MB LIST, a configmap) held equal. Two references, both on the transport
fakekube serves with (:class:`~fakekube.api.http.server.BackgroundServer`):

* ``bare``: a WSGI function that looks the recorded answer up by method and path;
* ``werkzeug``: the same lookup behind werkzeug's ``Request``/``Response`` (what a plain
  werkzeug app costs on top).

POSTs are answered with fakekube's recorded create answer (201, one configmap). A watch
(``?watch=true``) streams, as chunked newline-delimited JSON, one ``ADDED`` event per
POST to the watch namespace, made from the posted body without parsing it (fakekube's
events also carry the server-set metadata, ~200 bytes more per event): the reference
for event delivery is a broadcast with no store and no selectors.
"""

from __future__ import annotations

import http.client
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urlparse

from werkzeug.wrappers import Request, Response

import workload

#: Headers the recorded answers keep (the transport adds its own framing headers).
KEPT_HEADERS = ("content-type", "cache-control", "audit-id", "x-kubernetes-pf-flowschema-uid",
                "x-kubernetes-pf-prioritylevel-uid", "warning")
#: A reference watch ends after this many wall seconds without an event (transport time).
WATCH_IDLE_S = 30.0
#: Events the reference keeps for its watches; past it the oldest are dropped (bounded).
WATCH_LOG_LIMIT = 100_000


@dataclass(frozen=True)
class Recorded:
    """One of fakekube's answers, as sent: status line, headers, body."""

    status: str
    headers: list[tuple[str, str]]
    body: bytes


def _fetch(url: str, method: str, path: str, body: bytes | None = None) -> Recorded:
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname or "127.0.0.1", parsed.port or 80, timeout=30)
    try:
        conn.request(method, path, body=body, headers=workload.JSON_HEADERS)
        response = conn.getresponse()
        data = response.read()
        headers = [(k, v) for k, v in response.getheaders() if k.lower() in KEPT_HEADERS]
        return Recorded(f"{response.status} {response.reason}", headers, data)
    finally:
        conn.close()


def record(fakekube_url: str) -> dict[tuple[str, str], Recorded]:
    """fakekube's answers to the benchmark's requests, keyed by (method, path without query)."""
    return {
        ("GET", workload.GET_PATH): _fetch(fakekube_url, "GET", workload.GET_PATH),
        ("GET", workload.LIST_PATH): _fetch(fakekube_url, "GET", workload.LIST_PATH),
        # The watch benchmark's first call: the watch namespace's resourceVersion.
        ("GET", workload.WATCH_CONFIGMAPS_PATH): _fetch(fakekube_url, "GET", f"{workload.WATCH_CONFIGMAPS_PATH}?limit=1"),
        ("POST", workload.CONFIGMAPS_PATH): _fetch(fakekube_url, "POST", workload.CONFIGMAPS_PATH,
                                                   workload.configmap_body("reference-recorded")),
    }


class Broadcast:
    """Watch events for the reference: every POST to the watch namespace, for every stream.

    A bounded log (the newest ``WATCH_LOG_LIMIT`` events). The watch benchmark asks for the
    namespace's resourceVersion, then watches from it: here, that probe marks the log's
    end, and the next watches start there (so a write made before a stream is open is not
    missed, as with fakekube's resourceVersion).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._log: list[bytes] = []
        self._dropped = 0          # events trimmed from the log's front
        self._mark = 0

    def publish(self, line: bytes) -> None:
        with self._cond:
            self._log.append(line)
            if len(self._log) > WATCH_LOG_LIMIT:
                trim = len(self._log) - WATCH_LOG_LIMIT
                del self._log[:trim]
                self._dropped += trim
            self._cond.notify_all()

    def mark(self) -> None:
        with self._cond:
            self._mark = self._dropped + len(self._log)

    def stream(self) -> Iterator[bytes]:
        with self._cond:
            start = self._mark
        return self._follow(start)

    def _follow(self, position: int) -> Iterator[bytes]:
        while True:
            with self._cond:
                if not self._cond.wait_for(lambda: self._dropped + len(self._log) > position, WATCH_IDLE_S):
                    return
                lines = self._log[max(0, position - self._dropped):]
                position = self._dropped + len(self._log)
            yield b"".join(lines)


def _event(body: bytes) -> bytes:
    return b'{"type":"ADDED","object":' + body + b"}\n"


class SameBytesApp:
    """The ``bare`` reference: recorded answers looked up by (method, path); nothing parsed."""

    def __init__(self, answers: dict[tuple[str, str], Recorded]) -> None:
        self.answers = answers
        self.broadcast = Broadcast()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        method, path = environ["REQUEST_METHOD"], environ["PATH_INFO"]
        if method == "GET" and "watch=" in environ.get("QUERY_STRING", ""):
            start_response("200 OK", [("Content-Type", "application/json")])
            return self.broadcast.stream()
        if method == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length)
            if path == workload.WATCH_CONFIGMAPS_PATH:
                self.broadcast.publish(_event(body))
            answer = self.answers[("POST", workload.CONFIGMAPS_PATH)]
        else:
            if path == workload.WATCH_CONFIGMAPS_PATH:
                self.broadcast.mark()
            answer = self.answers[(method, path)]
        start_response(answer.status, answer.headers + [("Content-Length", str(len(answer.body)))])
        return [answer.body]


class WerkzeugSameBytesApp:
    """The ``werkzeug`` reference: the same answers through werkzeug's Request and Response."""

    def __init__(self, bare: SameBytesApp) -> None:
        self.bare = bare

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request = Request(environ)
        if request.method == "GET" and "watch" in request.args:
            response = Response(self.bare.broadcast.stream(), content_type="application/json",
                                direct_passthrough=True)
            return response(environ, start_response)
        if request.method == "POST":
            body = request.get_data()
            if request.path == workload.WATCH_CONFIGMAPS_PATH:
                self.bare.broadcast.publish(_event(body))
            answer = self.bare.answers[("POST", workload.CONFIGMAPS_PATH)]
        else:
            if request.path == workload.WATCH_CONFIGMAPS_PATH:
                self.bare.broadcast.mark()
            answer = self.bare.answers[(request.method, request.path)]
        code = int(answer.status.split(" ", 1)[0])
        response = Response(answer.body, status=code, headers=answer.headers)
        response.status = answer.status
        return response(environ, start_response)
