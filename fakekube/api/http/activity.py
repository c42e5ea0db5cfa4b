"""Is anyone talking to the server right now? A WSGI wrapper that counts requests.

Auto-advance (``fakekube.engine.autoadvance``) moves cluster time only while clients are
quiet. Long-lived streams — watches and followed logs — are how a client *waits*, so
they do not count as activity; every other request counts from its arrival until its
response has been sent.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, Iterator
from urllib.parse import parse_qs

from fakekube.api.machinery.params import query_bool

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


class ActivityMeter:
    """Wraps a WSGI app; :meth:`snapshot` changes whenever a counted request starts or is in flight."""

    def __init__(self, app: WSGIApp) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._started = 0
        self._in_flight = 0

    def snapshot(self) -> tuple[int, int]:
        """(requests started so far, requests in flight): equal snapshots with nothing in
        flight mean no client spoke in between."""
        with self._lock:
            return self._started, self._in_flight

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if _is_stream(environ):
            return self.app(environ, start_response)
        with self._lock:
            self._started += 1
            self._in_flight += 1
        try:
            body = self.app(environ, start_response)
        except BaseException:
            self._done()
            raise
        return self._counted(body)

    def _counted(self, body: Iterable[bytes]) -> Iterator[bytes]:
        try:
            yield from body
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
            self._done()

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1


def _is_stream(environ: dict) -> bool:
    query = environ.get("QUERY_STRING", "")
    if "%" not in query and "watch" not in query and "follow" not in query \
            and "/watch/" not in environ.get("PATH_INFO", ""):
        return False  # the common case, decided without parsing (nothing percent-encoded)
    # The first value of each parameter, percent-decoded, as the handlers read it.
    params = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).items()}
    path = environ.get("PATH_INFO", "")
    return query_bool(params.get("watch")) or params.get("follow") in ("true", "1") or "/watch/" in path
