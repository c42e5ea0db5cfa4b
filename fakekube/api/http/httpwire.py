"""HTTP/1.x on a forwarded connection: requests parsed from the bytes a client sends through
``kubectl port-forward``, and the pod's answers rendered back (sans-I/O).

A forwarded connection carries whatever the client speaks; fakekube's pods answer HTTP/1.x
only. :class:`RequestFeed` turns the bytes into requests — a request line, headers, and a
body of ``Content-Length`` bytes (chunked bodies are refused with 411, as servers that
want a length do) — and notices when the client asked to close after the answer
(``Connection: close``, or HTTP/1.0 without keep-alive). Bytes that are not HTTP end the
connection. Bounds: a head of at most :data:`MAX_HEAD_BYTES`, a body of at most
:data:`MAX_BODY_BYTES` (past them: 431 / 413, then the connection closes).
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import NamedTuple, Sequence

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 1024 * 1024
_REQUEST_LINE = re.compile(rb"^([A-Z][A-Z-]*) (\S+) HTTP/(1\.[01])$")


class WireRequest(NamedTuple):
    """One parsed request; ``close``: the connection ends after its answer."""

    method: str
    target: str
    version: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    close: bool


class WireError(NamedTuple):
    """The client sent something that is not (acceptable) HTTP: answer ``status`` if not
    None, then close."""

    status: int | None


class RequestFeed:
    """The requests in a connection's bytes, in order, as they complete."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.done = False

    def feed(self, data: bytes) -> list[WireRequest | WireError]:
        if self.done:
            return []
        self._buffer += data
        found: list[WireRequest | WireError] = []
        while not self.done:
            item = self._next()
            if item is None:
                break
            found.append(item)
            if isinstance(item, WireError) or item.close:
                self.done = True
        return found

    def _next(self) -> WireRequest | WireError | None:
        while self._buffer.startswith(b"\r\n"):  # RFC 9112 2.2: blank lines before a request
            del self._buffer[:2]
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEAD_BYTES:
                return WireError(431)
            first = bytes(self._buffer.split(b"\r\n", 1)[0])
            return WireError(None) if first and b" " in first and not _plausible_start(first) else None
        head = bytes(self._buffer[:end]).split(b"\r\n")
        match = _REQUEST_LINE.match(head[0])
        if match is None:
            return WireError(400 if _plausible_start(head[0]) else None)
        headers = tuple(_header(line) for line in head[1:] if b":" in line)
        names = {name.lower(): value for name, value in headers}
        if "chunked" in names.get("transfer-encoding", "").lower():
            return WireError(411)
        length_text = names.get("content-length", "0").strip() or "0"
        if not length_text.isdigit():
            return WireError(400)
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            return WireError(413)
        if len(self._buffer) < end + 4 + length:
            return None
        body = bytes(self._buffer[end + 4:end + 4 + length])
        del self._buffer[:end + 4 + length]
        version = match.group(3).decode()
        connection = names.get("connection", "").lower()
        close = "close" in connection or (version == "1.0" and "keep-alive" not in connection)
        return WireRequest(match.group(1).decode(), match.group(2).decode("latin-1"), version, headers, body, close)


def _plausible_start(line: bytes) -> bool:
    return bool(re.match(rb"^[A-Z]+ ", line))


def _header(line: bytes) -> tuple[str, str]:
    name, _, value = line.partition(b":")
    return name.decode("latin-1").strip(), value.decode("latin-1").strip()


def render(status: int, headers: Sequence[tuple[str, str]], body: bytes, method: str, close: bool) -> bytes:
    """An HTTP/1.1 response: status line, headers (``Content-Length`` added, ``Connection:
    close`` when closing), body (none for HEAD, 1xx, 204 and 304)."""
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Status"
    names = {name.lower() for name, _ in headers}
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name}: {value}" for name, value in headers
              if not (close and name.lower() == "connection")]
    bodiless = method == "HEAD" or status in (204, 304) or status < 200
    if "content-length" not in names and status not in (204, 304) and status >= 200:
        lines.append(f"Content-Length: {len(body)}")
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + (b"" if bodiless else body)


def error_answer(status: int) -> bytes:
    """What a server says to a request it cannot read, before it closes."""
    text = f"{status} {HTTPStatus(status).phrase}\n".encode()
    return render(status, (("Content-Type", "text/plain; charset=utf-8"),), text, "GET", close=True)
