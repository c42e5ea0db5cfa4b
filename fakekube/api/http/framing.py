"""HTTP/1.1 request framing, without I/O: the request head and chunked bodies.

The rules and the answers are those of Go's net/http server, which fronts kube-apiserver,
so a client sees the same thing from the fake as from a real cluster:

* A head Go refuses before any handler runs is answered in plain text, as Go writes it
  (:class:`HeadError`: 400, 431, 501, 505), and the connection closes.
* A body is decoded strictly and bounded: hex chunk sizes only, CRLF after every chunk
  line and chunk, at most ``limit`` bytes in all. Past the limit: 413
  ``RequestEntityTooLarge``, as the apiserver's ``limitedReadBody``. Malformed framing:
  400 ``BadRequest`` with Go's chunked-reader message (upstream's handler turns that read
  error into a 500; a fake answers 400, since the fault is the client's).

Reading is the caller's: :func:`read_chunked` pulls from a :class:`Source`, whose reads
raise :class:`Truncated` when the client goes away and :class:`Deadline` when it is too slow.
"""

from __future__ import annotations

import re
from typing import Protocol

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError

#: Go's ``http.DefaultMaxHeaderBytes`` and kube-apiserver's ``MaxHeaderBytes: 1 << 20``.
MAX_HEADER_BYTES = 1 << 20
#: Go reads ``MaxHeaderBytes + 4096`` ("bufio slop") before it answers 431.
HEADER_SLOP_BYTES = 4096
#: Go's chunked reader refuses a chunk-size or trailer line this long ("header line too long").
MAX_CHUNK_LINE_BYTES = 4096

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_VERSION = re.compile(rb"HTTP/(\d)\.(\d)\Z")
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_BAD_TARGET = re.compile(rb"[\x00-\x20\x7f]|%(?![0-9A-Fa-f]{2})")
_HEX = re.compile(rb"[0-9A-Fa-f]+\Z")
END_OF_HEAD = re.compile(rb"\n\r?\n")


class HeadError(Exception):
    """A head Go's server refuses before the handler: its exact plain-text answer."""

    def __init__(self, code: int, text: str, body: str | None = None) -> None:
        super().__init__(text)
        self.code = code
        self.text = text  # "400 Bad Request" or "400 Bad Request: missing required Host header"
        self.body = text if body is None else body

    def response(self) -> bytes:
        return (f"HTTP/1.1 {self.text}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Connection: close\r\n\r\n{self.body}").encode("latin-1")


def _bad_request(detail: str = "") -> HeadError:
    return HeadError(400, f"400 Bad Request: {detail}" if detail else "400 Bad Request")


HEADERS_TOO_LARGE = HeadError(431, "431 Request Header Fields Too Large")


class Truncated(Exception):
    """The client closed the connection before the request was complete."""


class Deadline(Exception):
    """The client did not send the request within its transport deadline."""


class Source(Protocol):
    """Where a body comes from: reads that block, then raise Truncated or Deadline."""

    def readline(self, max_bytes: int) -> bytes:
        """Bytes up to and including ``\\n``; at most ``max_bytes`` (then without the ``\\n``)."""

    def read_exact(self, size: int) -> bytes: ...


class RequestHead:
    """The parsed request line and headers, and what they say about the body and connection."""

    __slots__ = ("method", "target", "version", "headers", "content_length", "chunked", "keep_alive",
                 "expect_continue")

    def __init__(self, method: str, target: str, version: str, headers: list[tuple[str, str]] | None = None,
                 content_length: int | None = 0, chunked: bool = False, keep_alive: bool = True,
                 expect_continue: bool = False) -> None:
        self.method = method
        self.target = target
        self.version = version
        self.headers: list[tuple[str, str]] = [] if headers is None else headers
        #: The body's length when it has a Content-Length; None for chunked.
        self.content_length = content_length
        self.chunked = chunked
        self.keep_alive = keep_alive
        self.expect_continue = expect_continue

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((value for key, value in self.headers if key.lower() == lowered), None)


def head_too_large(buffered: int, max_header_bytes: int) -> bool:
    return buffered > max_header_bytes + HEADER_SLOP_BYTES


def parse_head(data: bytes) -> RequestHead:
    """Parse a request head (without its ending empty line), or raise :class:`HeadError`."""
    lines = data.split(b"\n")
    request_line = lines[0].removesuffix(b"\r")
    parts = request_line.split(b" ")
    if len(parts) != 3:
        raise _bad_request()  # Go: "malformed HTTP request"
    method, target, version = parts
    if not _TOKEN.match(method):
        raise _bad_request()  # Go: "invalid method"
    matched = _VERSION.match(version)
    if not matched:
        raise _bad_request()  # Go: "malformed HTTP version"
    if matched.group(1) != b"1":
        raise HeadError(505, "505 HTTP Version Not Supported: unsupported protocol version")
    if not target or _BAD_TARGET.search(target) or not (target[:1] == b"/" or target == b"*"
                                                         or target.startswith((b"http://", b"https://"))):
        raise _bad_request()  # Go: url.ParseRequestURI's errors
    head = RequestHead(method.decode("ascii"), target.decode("latin-1"), version.decode("ascii"))
    head.headers = _parse_headers(lines[1:])
    _check(head, http11=matched.group(2) != b"0")
    return head


def _parse_headers(lines: list[bytes]) -> list[tuple[str, str]]:
    headers = []
    for raw in lines:
        line = raw.removesuffix(b"\r")
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.match(name):
            raise _bad_request()  # textproto: malformed MIME header line (folded lines too)
        value = value.strip(b" \t")
        if _BAD_VALUE.search(value):
            raise _bad_request("invalid header value")
        headers.append((name.decode("ascii"), value.decode("latin-1")))
    return headers


def _check(head: RequestHead, http11: bool) -> None:
    """Host, body framing, keep-alive and Expect, as Go's readRequest/readTransfer decide them."""
    values: dict[str, list[str]] = {}
    for name, value in head.headers:
        values.setdefault(name.lower(), []).append(value)
    if http11 and not values.get("host"):
        raise _bad_request("missing required Host header")
    encodings = values.get("transfer-encoding") if http11 else None  # Go ignores TE on HTTP/1.0
    if encodings:
        if len(encodings) != 1 or encodings[0].lower() != "chunked":
            raise HeadError(501, "501 Not Implemented", "Unsupported transfer encoding")
        head.chunked, head.content_length = True, None  # Go drops a Content-Length beside it
    else:
        head.content_length = _content_length(values.get("content-length", []))
    connection = {token.strip().lower() for value in values.get("connection", []) for token in value.split(",")}
    head.keep_alive = "close" not in connection and (http11 or "keep-alive" in connection)
    expect = values.get("expect")
    if expect and http11:
        if expect[0].lower() != "100-continue":
            raise HeadError(417, "417 Expectation Failed", "")
        head.expect_continue = True


def _content_length(values: list[str]) -> int:
    if not values:
        return 0
    if len(set(v.strip() for v in values)) > 1:
        raise _bad_request()  # Go: "http: message cannot contain multiple Content-Length headers"
    text = values[0].strip()
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        raise _bad_request()  # Go: "bad Content-Length"
    return int(text)


def read_chunked(source: Source, limit: int) -> bytes:
    """The decoded body of a chunked request: at most ``limit`` bytes, trailers read and dropped."""
    body = bytearray()
    while True:
        size = _chunk_size(_line(source))
        if size == 0:
            break
        if len(body) + size > limit:
            raise errors.request_entity_too_large(f"limit is {limit}")
        body += source.read_exact(size)
        if source.read_exact(2) != b"\r\n":
            raise _framing("malformed chunked encoding")
    trailer_bytes = 0
    while line := _line(source):  # trailers end at an empty line; bounded like a head
        trailer_bytes += len(line)
        if trailer_bytes > MAX_HEADER_BYTES:
            raise _framing("header line too long")
        try:
            _parse_headers([line])
        except HeadError:
            raise _framing("malformed MIME header line") from None
    return bytes(body)


def _line(source: Source) -> bytes:
    """One chunk-size or trailer line, without its CRLF (a bare LF is refused, as Go 1.24 does)."""
    line = source.readline(MAX_CHUNK_LINE_BYTES)
    if not line.endswith(b"\n"):
        raise _framing("header line too long")
    if not line.endswith(b"\r\n"):
        raise _framing("chunked line ends with bare LF")
    return line[:-2]


def _chunk_size(line: bytes) -> int:
    digits = line.partition(b";")[0].rstrip(b" \t")  # chunk extensions are ignored
    if not digits:
        raise _framing("empty hex number for chunk length")
    if not _HEX.match(digits):
        raise _framing("invalid byte in chunk length")
    if len(digits) > 16:
        raise _framing("http chunk length too large")
    return int(digits, 16)


def _framing(message: str) -> ApiError:
    return errors.bad_request(message)
