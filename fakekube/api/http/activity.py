"""Is anyone talking to the server, and is anyone waiting on it? A WSGI wrapper that counts.

Auto-advance (``fakekube.engine.autoadvance``) moves cluster time only while some client
*waits* on the cluster and nobody *talks* to it. Long-lived streams — watches (``kubectl
wait``, ``rollout status``, an informer) and followed logs — are how a client waits: each
counts as a waiter from its arrival until its stream ends or the client is seen to have
hung up, and every event or log chunk sent to a waiter is counted as a delivery (the
client may answer it: hang up, or make a request). Every other request is talking: it
counts from its arrival until its response has been sent.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, Iterator, NamedTuple
from urllib.parse import parse_qs

from fakekube.api.machinery.params import query_bool

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]

#: ``environ`` keys of the server's disconnect check (fakekube.api.http.server), wrapped
#: here so that the stream's own check of its client also ends its wait at once.
DISCONNECT_KEYS = ("fakekube.disconnected", "fakekube.client_gone")


class Activity(NamedTuple):
    """One reading of the meter: requests started so far, requests in flight, waiters open,
    chunks delivered to waiters so far."""

    started: int
    in_flight: int
    waiting: int
    delivered: int = 0


class ActivityMeter:
    """Wraps a WSGI app; :meth:`snapshot` says who talks and who waits right now."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._started = 0
        self._in_flight = 0
        self._waiting = 0
        self._delivered = 0

    def snapshot(self) -> Activity:
        """Equal ``started`` with nothing in flight mean no client spoke in between."""
        with self._lock:
            return Activity(self._started, self._in_flight, self._waiting, self._delivered)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if _is_stream(environ):
            return self._waiter(environ, start_response)
        with self._lock:
            self._started += 1
            self._in_flight += 1
        try:
            body = self.app(environ, start_response)
        except BaseException:
            self._done()
            raise
        return self._counted(body)

    def _waiter(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        """Serve a stream, counted as a waiter until it ends or its client is seen gone."""
        wait = _Wait(self)
        for key in DISCONNECT_KEYS:
            check = environ.get(key)
            if check is not None:
                environ[key] = wait.watching(check)
        with self._lock:
            self._waiting += 1
        try:
            body = self.app(environ, start_response)
        except BaseException:
            wait.end()
            raise
        return self._delivering(body, wait.end)

    def _counted(self, body: Iterable[bytes]) -> Iterator[bytes]:
        try:
            yield from body
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
            self._done()

    def _delivering(self, body: Iterable[bytes], end: Callable[[], None]) -> Iterator[bytes]:
        try:
            for chunk in body:
                if chunk:  # not an idle stream's empty chunk (sent only to notice a client gone)
                    with self._lock:
                        self._delivered += 1
                yield chunk
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
            end()

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _waiter_done(self) -> None:
        with self._lock:
            self._waiting -= 1


class _Wait:
    """One open stream's place among the waiters; :meth:`end` gives it up once."""

    def __init__(self, meter: ActivityMeter) -> None:
        self._meter = meter
        self._ended = False
        self._lock = threading.Lock()

    def end(self) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
        self._meter._waiter_done()

    def watching(self, check: Callable[[], bool]) -> Callable[[], bool]:
        """``check`` (has the client hung up?), ending the wait the moment it says so: a
        client gone is no longer waiting, even before its stream has wound down."""
        def disconnected() -> bool:
            gone = check()
            if gone:
                self.end()
            return gone
        return disconnected


def _is_stream(environ: dict) -> bool:
    query = environ.get("QUERY_STRING", "")
    if "%" not in query and "watch" not in query and "follow" not in query \
            and "/watch/" not in environ.get("PATH_INFO", ""):
        return False  # the common case, decided without parsing (nothing percent-encoded)
    # The first value of each parameter, percent-decoded, as the handlers read it.
    params = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).items()}
    path = environ.get("PATH_INFO", "")
    return query_bool(params.get("watch")) or params.get("follow") in ("true", "1") or "/watch/" in path
