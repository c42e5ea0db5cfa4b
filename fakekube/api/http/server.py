"""Serving the WSGI app from a background thread.

werkzeug's threaded server gives each connection its own thread (so a watch stream
never holds up other clients) and speaks HTTP/1.1 with keep-alive and chunked
responses, which is what client-go and kubectl expect.
"""

from __future__ import annotations

import threading
from typing import Callable

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server


class _QuietHandler(WSGIRequestHandler):
    """No per-request log lines: a test suite makes thousands of requests."""

    def log_request(self, *args: object, **kwargs: object) -> None:
        pass

    def log(self, type: str, message: str, *args: object) -> None:  # noqa: A002 - werkzeug's name
        if type == "error":
            super().log(type, message, *args)

    def send_response(self, code: int, message: str | None = None) -> None:
        """A status line and a Date, like the apiserver's Go server: no ``Server`` header."""
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())


class BackgroundServer:
    """A threaded HTTP server for ``app`` on ``host:port`` (port 0 picks a free one)."""

    def __init__(self, app: Callable, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server: BaseWSGIServer = make_server(host, port, app, threaded=True, request_handler=_QuietHandler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return self._server.server_address[0]

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fakekube-apiserver-{self.port}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
