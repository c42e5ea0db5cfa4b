"""Serving the WSGI app over HTTP/1.1 from a background thread.

Why not werkzeug's development server: since werkzeug 2.1 it answers every request with
``Connection: close``, so every client request paid for a new TCP connection, a new
thread and a socket left in TIME_WAIT (see docs/performance.md). kubectl, client-go and
the Python client all keep connections open, as against a real apiserver. This server
does too:

* one thread per connection (a watch stream never holds up other clients);
* HTTP/1.1 keep-alive; a response with a Content-Length goes out in one gathering write
  (``sendmsg``: head and body parts, none copied), with ``TCP_NODELAY`` (else Nagle and
  delayed ACKs stall keep-alive connections);
* responses without a Content-Length (watch streams) are chunked and flushed per chunk;
* a request is read whole before the app is called: the head, then the body (by its
  Content-Length, or chunked, decoded strictly by :mod:`fakekube.api.http.framing`). A
  client that goes away mid-request gets nothing dispatched; the app's ``wsgi.input``
  is the finished body.

Limits (constructor parameters of :class:`BackgroundServer`; wall clock, since they are
transport time, DESIGN.md "two kinds of time"), and what happens at each:

* ``max_header_bytes`` (1 MiB, kube-apiserver's ``MaxHeaderBytes``): a longer request
  line and headers get Go's plain-text ``431 Request Header Fields Too Large``, then close.
  Other heads Go refuses get its plain-text 400, 501 or 505, then close.
* ``header_timeout_s`` (32 s, kube-apiserver's ``ReadHeaderTimeout``): counted from the
  connection's start, or from a kept-alive connection's first byte. Past it the
  connection closes without an answer, as Go's does.
* ``body_timeout_s`` (60 s, kube-apiserver's default ``--request-timeout``): counted from
  the end of the head. Past it: 504 ``Timeout`` Status, then close; nothing dispatched.
* ``max_body_bytes`` (3 MiB, the apiserver's ``MaxRequestBodyBytes``): a larger body,
  declared or chunked, gets 413 ``RequestEntityTooLarge``, then close. Malformed chunked
  framing gets 400 ``BadRequest``, then close.
* ``idle_timeout_s`` (90 s, kube-apiserver's ``IdleTimeout``): a kept-alive connection
  with no next request is closed; a response write that cannot proceed for this long ends
  the connection.
* ``max_connections`` (2048): a connection past the cap is answered ``429
  TooManyRequests`` with ``Retry-After: 1``, a Status body and ``Connection: close``,
  without a thread (one shared thread lingers over refused sockets briefly, so the
  answer is not lost to a reset). client-go retries a 429 with Retry-After by itself;
  other clients see the Status message. (Upstream's overload 429, from priority and
  fairness, carries the same message as plain text.)

``environ`` keys for the app:

* ``fakekube.disconnected`` (also ``fakekube.client_gone``): a zero-argument callable,
  True once the client has closed its side of the connection (a non-blocking peek: the
  socket is readable and has nothing to read). It costs one ``poll`` and, when readable,
  one peeking ``recv``: cheap enough for a streaming response to call every second.
* ``fakekube.upgrade``: a callable taking ``handler(connection: Upgraded)``. An app that
  answers ``101 Switching Protocols`` registers the handler through it; once the 101 head is
  written the handler owns the connection (a WebSocket exec session), which closes when the
  handler returns.

The application itself stays a werkzeug WSGI app.
"""

from __future__ import annotations

import io
import json
import select
import socket
import socketserver
import ssl
import sys
import threading
import time
from collections import deque
from typing import Any, Callable, Iterable, NamedTuple
from urllib.parse import unquote_to_bytes

from fakekube.api.auth.identity import UserInfo
from fakekube.api.http import framing
from fakekube.api.http.framing import Deadline, HeadError, RequestHead, Truncated
from fakekube.api.http.response import status_line
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]

#: Defaults of the limits above (kube-apiserver's values where it has one).
IDLE_TIMEOUT_S = 90.0
HEADER_TIMEOUT_S = 32.0
BODY_TIMEOUT_S = 60.0
MAX_BODY_BYTES = 3 * 1024 * 1024
MAX_CONNECTIONS = 2048
#: Pending connections the listening socket queues (8 concurrent clients and bursts).
LISTEN_BACKLOG = 128
#: After an error answer the connection is shut for writing and what the client still
#: sends is read and dropped — at most this much, for at most this long — so that the
#: answer is not lost to a TCP reset (Go's closeWriteAndWait).
LINGER_BYTES = 4 * 1024 * 1024
LINGER_S = 1.0
#: Refused connections lingering at once (beyond: closed at once).
MAX_LINGERING = 256
_RECV_BYTES = 64 * 1024
#: Whether the platform gathers writes (Linux, macOS); else parts are joined, then sent.
_HAS_SENDMSG = hasattr(socket.socket, "sendmsg")
#: Buffers per sendmsg call (Linux's IOV_MAX is 1024).
_MAX_IOV = 512
#: ``environ`` keys of the disconnect check (the second is the older name).
DISCONNECTED = "fakekube.disconnected"
CLIENT_GONE = "fakekube.client_gone"
#: ``environ`` key of a verified TLS client certificate's user (CN, O as groups).
CLIENT_CERT_USER = "fakekube.client_cert_user"
#: ``environ`` key of the request's header lines as received, ``[(name, value), ...]``:
#: WSGI joins a repeated header's values with commas, and a value may hold commas itself
#: (each ``Impersonate-Group`` line is one group, ``a,b`` included).
HEADER_LINES = "fakekube.header_lines"
#: ``environ`` key through which a 101 answer hands the connection to its handler.
UPGRADE = "fakekube.upgrade"


class Upgraded:
    """A connection after its ``101 Switching Protocols`` head: bytes in and out, no HTTP."""

    def __init__(self, sock: socket.socket, reader: "_Reader") -> None:
        self._sock = sock
        self._reader = reader

    def read(self, timeout_s: float) -> bytes:
        """What the client sent (bytes read ahead with the request first); b"" once it has
        closed, or when nothing came within ``timeout_s`` (wall clock: transport time)."""
        if not self._reader.buffer:
            try:
                self._reader.fill(max(timeout_s, 0.001))
            except (Truncated, Deadline):
                return b""
        return self._reader.take(len(self._reader.buffer))

    def receive(self, timeout_s: float) -> bytes | None:
        """As :meth:`read`, for a long session that must tell the two apart: None when nothing
        came within ``timeout_s``, b"" once the client has closed."""
        if not self._reader.buffer:
            try:
                self._reader.fill(max(timeout_s, 0.001))
            except Deadline:
                return None
            except Truncated:
                return b""
        return self._reader.take(len(self._reader.buffer))

    def write(self, data: bytes) -> None:
        self._sock.sendall(data)


class _Reader:
    """Buffered reads from the connection, each bounded by the current wall-clock deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.buffer = bytearray()
        self.deadline = 0.0

    def fill(self, timeout_s: float | None = None) -> None:
        """One ``recv`` into the buffer; Truncated at EOF, Deadline past the deadline."""
        if timeout_s is None:
            timeout_s = self.deadline - time.monotonic()
            if timeout_s <= 0:
                raise Deadline()
        self._sock.settimeout(timeout_s)
        try:
            data = self._sock.recv(_RECV_BYTES)
        except socket.timeout:
            raise Deadline() from None
        except OSError:
            raise Truncated() from None
        if not data:
            raise Truncated()
        self.buffer += data

    def take(self, size: int) -> bytes:
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def readline(self, max_bytes: int) -> bytes:
        while True:
            end = self.buffer.find(b"\n", 0, max_bytes)
            if end >= 0:
                return self.take(end + 1)
            if len(self.buffer) >= max_bytes:
                return self.take(max_bytes)
            self.fill()

    def read_exact(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self.fill()
        return self.take(size)


class _Handler(socketserver.BaseRequestHandler):
    """One connection: requests in sequence, each read whole, then handed to the WSGI app."""

    server: "_Server"
    request: socket.socket

    def setup(self) -> None:
        self.connection = self.request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = _Reader(self.connection)
        self.close_connection = False
        self.disconnected = _disconnect_check(self.connection, self.reader)
        self.cert_user = _certificate_user(self.connection)

    def handle(self) -> None:
        limits = self.server.limits
        self.reader.deadline = time.monotonic() + limits.header_timeout_s
        while not self.close_connection:
            try:
                head = self._read_head(limits)
                if head is None:
                    return
                body = self._read_body(head, limits)
            except (Truncated, Deadline, OSError):
                return  # nothing to answer: the client left, or was too slow to send a head
            except HeadError as exc:
                self._refuse(exc.response())
                return
            except ApiError as exc:
                self._refuse(_status_bytes(exc, close=True))
                return
            self.close_connection = not head.keep_alive
            try:
                self._serve(head, body)
            except OSError:
                return
            self.reader.deadline = 0.0  # the next request's head deadline starts at its first byte

    def _read_head(self, limits: "Limits") -> RequestHead | None:
        """The next request's head; None when a kept-alive connection ends or idles out."""
        reader = self.reader
        if not reader.buffer and reader.deadline == 0.0:
            try:
                reader.fill(limits.idle_timeout_s)
            except (Truncated, Deadline):
                return None
        if reader.deadline == 0.0:
            reader.deadline = time.monotonic() + limits.header_timeout_s
        while True:
            while reader.buffer[:1] in (b"\r", b"\n"):  # empty lines before a request are ignored
                del reader.buffer[:1]
            found = framing.END_OF_HEAD.search(reader.buffer)
            if found is not None:
                if framing.head_too_large(found.start(), limits.max_header_bytes):
                    raise framing.HEADERS_TOO_LARGE
                data = reader.take(found.end())[:found.start()]
                return framing.parse_head(data)
            if framing.head_too_large(len(reader.buffer), limits.max_header_bytes):
                raise framing.HEADERS_TOO_LARGE
            reader.fill()

    def _read_body(self, head: RequestHead, limits: "Limits") -> bytes:
        length = head.content_length
        if length is not None and length > limits.max_body_bytes:
            raise errors.request_entity_too_large(f"limit is {limits.max_body_bytes}")
        if head.expect_continue and (head.chunked or length):
            self.connection.settimeout(limits.idle_timeout_s)
            self.connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        self.reader.deadline = time.monotonic() + limits.body_timeout_s
        try:
            if head.chunked:
                return framing.read_chunked(self.reader, limits.max_body_bytes)
            return self.reader.read_exact(length or 0)
        except Deadline:
            raise ApiError(504, "Timeout", "Timeout: request did not complete within the allotted timeout") from None

    def _refuse(self, answer: bytes) -> None:
        """Send an error answer and end the connection (draining what the client still sends)."""
        try:
            self.connection.settimeout(LINGER_S)
            self.connection.sendall(answer)
            _linger(self.connection, time.monotonic() + LINGER_S)
        except OSError:
            pass

    def _serve(self, head: RequestHead, body: bytes) -> None:
        self.connection.settimeout(self.server.limits.idle_timeout_s)  # now a write timeout
        response = _Response(self)
        upgrade: list[Callable[[Upgraded], None]] = []
        environ = self._environ(head, body)
        environ[UPGRADE] = upgrade.append
        result = self.server.app(environ, response.start)
        try:
            response.send(result, head=head.method == "HEAD")
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        if upgrade and response.code == 101:
            self.close_connection = True  # the handler's protocol ends the connection
            upgrade[0](Upgraded(self.connection, self.reader))

    def write(self, data: bytes) -> None:
        self.connection.sendall(data)

    def write_parts(self, parts: list[bytes]) -> None:
        """Write ``parts`` in order, gathered by the kernel (``sendmsg``, i.e. writev): a
        0.9 MB list body goes out without being copied into one buffer with its head."""
        if not _HAS_SENDMSG or isinstance(self.connection, ssl.SSLSocket):  # TLS records: no gathering
            self.connection.sendall(b"".join(parts))
            return
        views = [memoryview(part) for part in parts if part]
        while views:
            sent = self.connection.sendmsg(views[:_MAX_IOV])
            while sent:
                first = views[0]
                if sent < len(first):
                    views[0] = first[sent:]
                    break
                sent -= len(first)
                del views[0]

    def _environ(self, head: RequestHead, body: bytes) -> dict[str, Any]:
        target = head.target
        if not target.startswith("/"):  # absolute form (http://host/path) or "*"
            target = "/" + target.split("://", 1)[-1].partition("/")[2] if "://" in target else target
        path, _, query = target.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": head.method,
            "SCRIPT_NAME": "",
            "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
            "QUERY_STRING": query,
            "SERVER_NAME": self.server.server_address[0],
            "SERVER_PORT": str(self.server.server_address[1]),
            "SERVER_PROTOCOL": head.version,
            "REMOTE_ADDR": self.client_address[0],
            "REMOTE_PORT": self.client_address[1],
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "https" if isinstance(self.connection, ssl.SSLSocket) else "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.input_terminated": True,
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            DISCONNECTED: self.disconnected,
            CLIENT_GONE: self.disconnected,
            CLIENT_CERT_USER: self.cert_user,
            HEADER_LINES: head.headers,
        }
        for key, value in head.headers:
            name = key.upper().replace("-", "_")
            if name in ("CONTENT_TYPE", "CONTENT_LENGTH", "TRANSFER_ENCODING"):
                if name == "CONTENT_TYPE":
                    environ[name] = value
            elif "HTTP_" + name in environ:
                environ["HTTP_" + name] += "," + value
            else:
                environ["HTTP_" + name] = value
        environ["CONTENT_LENGTH"] = str(len(body))  # the body as read: a chunked one decoded
        return environ


def _certificate_user(sock: socket.socket) -> UserInfo | None:
    """The user of a client certificate the TLS layer verified: CN the name, each O a group
    (upstream's ``CommonNameUserConversion``); None without one."""
    if not isinstance(sock, ssl.SSLSocket):
        return None
    cert = sock.getpeercert()
    if not cert:
        return None
    names = [(str(pair[0]), str(pair[1])) for rdn in cert.get("subject", ()) for pair in rdn]
    common = [value for key, value in names if key == "commonName"]
    if not common:
        return None
    return UserInfo(common[-1], tuple(value for key, value in names if key == "organizationName"))


def _disconnect_check(sock: socket.socket, reader: _Reader) -> Callable[[], bool]:
    """``environ["fakekube.disconnected"]``: has the client closed its side? (readable, yet EOF).

    Over TLS a peek would see the encrypted close_notify, so a readable socket is read
    through TLS without blocking: EOF means gone; any bytes join the reader's buffer."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    polling = threading.Lock()  # a poll object refuses concurrent poll() calls

    def disconnected() -> bool:
        if not polling.acquire(blocking=False):
            return False  # another thread is asking right now; it gets the answer
        try:
            return _gone(sock, reader, poller)
        finally:
            polling.release()

    return disconnected


def _gone(sock: socket.socket, reader: "_Reader", poller: "select.poll") -> bool:
    try:
        if sock.fileno() < 0:
            return True
        events = poller.poll(0)
        if not events:
            return False
        if events[0][1] & (select.POLLERR | select.POLLNVAL):
            return True
        if isinstance(sock, ssl.SSLSocket):
            return _tls_gone(sock, reader)
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except (OSError, ValueError):
        return True


def _tls_gone(sock: ssl.SSLSocket, reader: _Reader) -> bool:
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        data = sock.recv(_RECV_BYTES)
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
        return False
    finally:
        sock.settimeout(timeout)
    if not data:
        return True
    reader.buffer += data
    return False


def _status_bytes(error: ApiError, close: bool) -> bytes:
    """A whole response carrying ``error`` as a Status (for answers the server gives itself)."""
    body = json.dumps(error.status(), separators=(",", ":")).encode() + b"\n"
    lines = [f"HTTP/1.1 {status_line(error.code)}", "Content-Type: application/json",
             *(f"{k}: {v}" for k, v in error.headers.items()), f"Content-Length: {len(body)}"]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _linger(sock: socket.socket, until: float) -> None:
    """Shut the connection for writing, then drop what the client still sends (bounded)."""
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        return
    drained = 0
    while drained < LINGER_BYTES:
        remaining = until - time.monotonic()
        if remaining <= 0:
            return
        try:
            sock.settimeout(remaining)
            data = sock.recv(_RECV_BYTES)
        except OSError:
            return
        if not data:
            return
        drained += len(data)


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

    @property
    def code(self) -> int:
        return int(self._status.split(" ", 1)[0]) if self._status else 0

    def send(self, result: Iterable[bytes], head: bool) -> None:
        names = {name.lower() for name, _ in self._headers}
        code = self.code
        if "content-length" in names or head or code in (204, 304) or code < 200:
            self._handler.write_parts([self._head()] if head else [self._head(), *result])
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
        write = self._handler.write
        write(self._head("Transfer-Encoding: chunked"))
        for data in result:
            if data:
                write(b"%x\r\n%s\r\n" % (len(data), data))
        write(b"0\r\n\r\n")


class Limits(NamedTuple):
    """The transport's bounds (module docstring: what happens at each)."""

    max_body_bytes: int = MAX_BODY_BYTES
    max_header_bytes: int = framing.MAX_HEADER_BYTES
    header_timeout_s: float = HEADER_TIMEOUT_S
    body_timeout_s: float = BODY_TIMEOUT_S
    idle_timeout_s: float = IDLE_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS


_TOO_MANY = errors.too_many_requests("Too many requests, please try again later.", retry_after_s=1)


class _Lingerer:
    """One thread that holds refused connections open briefly, dropping what they send,
    so their 429 is read rather than lost to a reset; bounded in count and time."""

    def __init__(self) -> None:
        self._sockets: deque[tuple[socket.socket, float]] = deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.stopped = False

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            if self.stopped or len(self._sockets) >= MAX_LINGERING:
                sock.close()
                return
            self._sockets.append((sock, time.monotonic() + LINGER_S))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fakekube-lingerer", daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.clear()
            with self._lock:
                now = time.monotonic()
                live = [(sock, until) for sock, until in self._sockets if until > now and not self.stopped]
                for sock, until in self._sockets:
                    if until <= now or self.stopped:
                        sock.close()
                self._sockets = deque(live)
                if self.stopped:
                    return
            if not live:
                self._wake.wait(LINGER_S)
                continue
            poller = select.poll()
            for sock, _ in live:
                poller.register(sock, select.POLLIN)
            ready = {fd for fd, _ in poller.poll(50)}
            for sock, _ in live:
                if sock.fileno() in ready and not self._drain(sock):
                    self._expire(sock)

    @staticmethod
    def _drain(sock: socket.socket) -> bool:
        """Drop what the client sent; False once it has closed (or failed)."""
        try:
            return bool(sock.recv(_RECV_BYTES, socket.MSG_DONTWAIT))
        except BlockingIOError:
            return True
        except OSError:
            return False

    def _expire(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets = deque((s, 0.0 if s is sock else until) for s, until in self._sockets)


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    """A threading TCP server with a cap on connections; it remembers them, to close them on stop."""

    allow_reuse_address = True
    daemon_threads = True
    block_on_close = False
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], app: WSGIApp, limits: Limits,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(address, _Handler)
        self.app = app
        self.limits = limits
        self.ssl_context = ssl_context
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self.lingerer = _Lingerer()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            admitted = len(self._open) < self.limits.max_connections
            if admitted:
                self._open.add(request)
        if admitted:
            super().process_request(request, client_address)
        else:
            self._refuse(request)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Serve one connection (on its own thread); over TLS, after the handshake (bounded by
        the header timeout; a failed handshake just ends the connection)."""
        if self.ssl_context is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(self.limits.header_timeout_s)
        try:
            secured = self.ssl_context.wrap_socket(request, server_side=True)
        except (OSError, ValueError):
            return
        with self._open_lock:  # wrapping detached the plain socket: track the TLS one
            self._open.discard(request)
            self._open.add(secured)
        try:
            super().finish_request(secured, client_address)
        finally:
            with self._open_lock:
                self._open.discard(secured)
            try:
                secured.close()
            except OSError:
                pass

    def _refuse(self, sock: socket.socket) -> None:
        """Past the cap: answer 429 at once, from this thread, and let the lingerer close."""
        try:
            sock.setblocking(False)
            sock.send(_status_bytes(_TOO_MANY, close=True))
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            sock.close()
            return
        self.lingerer.add(sock)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    @property
    def open_connections(self) -> int:
        with self._open_lock:
            return len(self._open)

    def close_connections(self) -> None:
        self.lingerer.stop()
        with self._open_lock:
            connections = list(self._open)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class BackgroundServer:
    """A threaded HTTP/1.1 server for ``app`` on ``host:port`` (port 0 picks a free one).

    The limits are transport time and size bounds; their defaults are kube-apiserver's
    where it has one (module docstring: what happens at each).
    """

    def __init__(self, app: WSGIApp, host: str = "127.0.0.1", port: int = 0, *,
                 max_body_bytes: int = MAX_BODY_BYTES, max_header_bytes: int = framing.MAX_HEADER_BYTES,
                 header_timeout_s: float = HEADER_TIMEOUT_S, body_timeout_s: float = BODY_TIMEOUT_S,
                 idle_timeout_s: float = IDLE_TIMEOUT_S, max_connections: int = MAX_CONNECTIONS,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        self.limits = Limits(max_body_bytes, max_header_bytes, header_timeout_s, body_timeout_s,
                             idle_timeout_s, max_connections)
        self._server = _Server((host, port), app, self.limits, ssl_context)
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._server.server_address[0])

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        scheme = "https" if self._server.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def open_connections(self) -> int:
        """Connections being served now (refused ones not counted)."""
        return self._server.open_connections

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
