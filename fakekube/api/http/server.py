"""Serving the WSGI app over HTTP/1.1 from a background thread.

Why not werkzeug's development server: since werkzeug 2.1 it answers every request with
``Connection: close``, so every client request paid for a new TCP connection, a new
thread and a socket left in TIME_WAIT (see docs/performance.md). kubectl, client-go and
the Python client all keep connections open, as against a real apiserver. This server
does too:

* one thread per connection (a watch stream never holds up other clients);
* HTTP/1.1 keep-alive; a response with a Content-Length goes out in one write, with
  ``TCP_NODELAY`` (else Nagle and delayed ACKs stall keep-alive connections);
* responses without a Content-Length (watch streams) are chunked and flushed per chunk;
* the unread part of a request body is drained so the next request parses cleanly;
* wall-clock limits belong to the connection (DESIGN.md, "two kinds of time"): an idle
  or stalled connection is closed after ``IDLE_TIMEOUT_S``.

The application itself stays a werkzeug WSGI app.
"""

from __future__ import annotations

import select
import socket
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler
from typing import IO, Any, Callable, Iterable, cast
from urllib.parse import unquote_to_bytes

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]

#: A connection that sends nothing (or reads nothing) for this long is closed (wall clock).
IDLE_TIMEOUT_S = 120.0
#: Unread request bodies up to this size are drained to keep the connection; larger: close.
MAX_DRAIN_BYTES = 4 * 1024 * 1024
#: Pending connections the listening socket queues (8 concurrent clients and bursts).
LISTEN_BACKLOG = 128
_DRAIN_BLOCK = 64 * 1024
#: ``environ`` key of a callable that says whether the client closed its end of the
#: connection: long streams (pods/log follow) check it, since they may write nothing for a while.
CLIENT_GONE = "fakekube.client_gone"


class _Body:
    """``wsgi.input`` for a request with a Content-Length: never reads past the body."""

    def __init__(self, rfile: Any, length: int) -> None:
        self._rfile = rfile
        self.remaining = length

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0 or size > self.remaining:
            size = self.remaining
        data = self._rfile.read(size) if size else b""
        self.remaining -= len(data)
        if size and not data:
            self.remaining = 0  # the client went away mid-body
        return data

    def readline(self, size: int = -1) -> bytes:
        limit = self.remaining if size is None or size < 0 else min(size, self.remaining)
        data = self._rfile.readline(limit) if limit else b""
        self.remaining -= len(data)
        return data

    def drain(self) -> bool:
        """Discard the unread rest; False when it is too big to bother (close instead)."""
        if self.remaining > MAX_DRAIN_BYTES:
            return False
        while self.remaining:
            if not self.read(min(self.remaining, _DRAIN_BLOCK)):
                return False
        return True


class _Handler(BaseHTTPRequestHandler):
    """One connection: requests in sequence, each handed to the WSGI app."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = IDLE_TIMEOUT_S
    server: "_Server"

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        """Quiet: a test suite makes thousands of requests."""

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (ConnectionError, socket.timeout, OSError):
            self.close_connection = True

    def __getattr__(self, name: str) -> Any:
        # BaseHTTPRequestHandler dispatches to do_<METHOD>; every method goes to the app.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def _serve(self) -> None:
        body = self._request_body()
        response = _Response(self)
        result = self.server.app(self._environ(body), response.start)
        try:
            response.send(result, head=self.command == "HEAD")
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        if not isinstance(body, _Body) or not body.drain():
            self.close_connection = True

    def _client_gone(self) -> bool:
        """Has the client closed the connection? (readable, yet nothing to read: EOF.)"""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _request_body(self) -> Any:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            from werkzeug.serving import DechunkedInput

            return DechunkedInput(cast("IO[bytes]", self.rfile))
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        return _Body(self.rfile, max(length, 0))

    def _environ(self, body: Any) -> dict[str, Any]:
        path, _, query = self.path.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": self.command,
            "SCRIPT_NAME": "",
            "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
            "QUERY_STRING": query,
            "SERVER_NAME": self.server.server_address[0],
            "SERVER_PORT": str(self.server.server_address[1]),
            "SERVER_PROTOCOL": self.request_version,
            "REMOTE_ADDR": self.client_address[0],
            "REMOTE_PORT": self.client_address[1],
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": body,
            "wsgi.input_terminated": True,
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            CLIENT_GONE: self._client_gone,
        }
        for key, value in self.headers.items():
            name = key.upper().replace("-", "_")
            if name == "CONTENT_TYPE" or name == "CONTENT_LENGTH":
                environ[name] = value
            elif "HTTP_" + name in environ:
                environ["HTTP_" + name] += "," + value
            else:
                environ["HTTP_" + name] = value
        return environ


class _Response:
    """Writes one WSGI response: whole, or chunked when its length is unknown."""

    def __init__(self, handler: _Handler) -> None:
        self._handler = handler
        self._status = ""
        self._headers: list[tuple[str, str]] = []

    def start(self, status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        self._status, self._headers = status, list(headers)
        return self._write_unsupported

    @staticmethod
    def _write_unsupported(data: bytes) -> None:
        raise RuntimeError("the WSGI write() callable is not supported; return an iterable")

    def send(self, result: Iterable[bytes], head: bool) -> None:
        names = {name.lower() for name, _ in self._headers}
        code = int(self._status.split(" ", 1)[0])
        if "content-length" in names or head or code in (204, 304) or code < 200:
            body = b"" if head else b"".join(result)
            self._handler.wfile.write(self._head() + body)
            return
        self._send_chunked(result)

    def _head(self, extra: str = "") -> bytes:
        lines = [f"HTTP/1.1 {self._status}"]
        lines += [f"{name}: {value}" for name, value in self._headers]
        if extra:
            lines.append(extra)
        if self._handler.close_connection:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _send_chunked(self, result: Iterable[bytes]) -> None:
        """Stream: headers at once, then each chunk as it comes (watch events)."""
        out = self._handler.wfile
        out.write(self._head("Transfer-Encoding: chunked"))
        for data in result:
            if data:
                out.write(b"%x\r\n%s\r\n" % (len(data), data))
        out.write(b"0\r\n\r\n")


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """A threading TCP server that remembers its open connections, to close them on stop."""

    allow_reuse_address = True
    daemon_threads = True
    block_on_close = False
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], app: WSGIApp) -> None:
        super().__init__(address, _Handler)
        self.app = app
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def track(self, conn: socket.socket) -> None:
        with self._open_lock:
            self._open.add(conn)

    def untrack(self, conn: socket.socket) -> None:
        with self._open_lock:
            self._open.discard(conn)

    def close_connections(self) -> None:
        with self._open_lock:
            connections = list(self._open)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class BackgroundServer:
    """A threaded HTTP/1.1 server for ``app`` on ``host:port`` (port 0 picks a free one)."""

    def __init__(self, app: WSGIApp, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = _Server((host, port), app)
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.5},
                                        name=f"fakekube-apiserver-{self.port}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, end every open connection, and return promptly."""
        stopper = threading.Thread(target=self._server.shutdown, daemon=True)
        stopper.start()
        self._wake()
        stopper.join(timeout=5)
        self._server.server_close()
        self._server.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _wake(self) -> None:
        """One connection makes the accept loop's select return, so shutdown is immediate."""
        try:
            with socket.create_connection((self.host, self.port), timeout=1):
                pass
        except OSError:
            pass
