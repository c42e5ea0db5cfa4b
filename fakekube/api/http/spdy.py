"""SPDY/3.1 framing, the server's side, as much as the remote-command protocol uses.

kubectl 1.27-1.29 (and later ones when the WebSocket upgrade fails) run ``exec`` over SPDY:
after a ``101`` with ``Upgrade: SPDY/3.1`` the client opens one stream per channel with a
SYN_STREAM whose ``streamtype`` header names it (error, stdin, stdout, stderr, resize); the
server answers each with a SYN_REPLY, writes DATA frames and ends each stream with FIN.

Sans-I/O: :class:`FrameParser` turns client bytes into frames, the ``encode_*`` functions
make server frames, :class:`HeaderCodec` packs and unpacks name/value header blocks (zlib
with the SPDY/3 dictionary, one compression context per direction for the connection's
life, as the protocol requires). Flow control windows are not enforced: the output of one
exec is at most 2 MiB (behaviour.MAX_EXEC_OUTPUT_BYTES twice), sent in 16 KiB frames.

Bounds: a frame longer than ``max_frame_bytes`` and a header block that inflates past
:data:`MAX_HEADER_BLOCK_BYTES` are protocol errors (the caller ends the connection).
"""

from __future__ import annotations

import struct
import zlib
from typing import Iterator, NamedTuple

VERSION = 3
SYN_STREAM = 1
SYN_REPLY = 2
RST_STREAM = 3
SETTINGS = 4
PING = 6
GOAWAY = 7
HEADERS = 8
WINDOW_UPDATE = 9
FLAG_FIN = 0x01

#: The most one client frame may carry (stdin data frames are far smaller).
MAX_FRAME_BYTES = 1024 * 1024
#: The most one header block may inflate to.
MAX_HEADER_BLOCK_BYTES = 64 * 1024
#: Server data frames carry at most this much.
DATA_CHUNK_BYTES = 16 * 1024

_HEADER_WORDS = (
    "options", "head", "post", "put", "delete", "trace", "accept", "accept-charset", "accept-encoding",
    "accept-language", "accept-ranges", "age", "allow", "authorization", "cache-control", "connection",
    "content-base", "content-encoding", "content-language", "content-length", "content-location", "content-md5",
    "content-range", "content-type", "date", "etag", "expect", "expires", "from", "host", "if-match",
    "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified", "location",
    "max-forwards", "pragma", "proxy-authenticate", "proxy-authorization", "range", "referer", "retry-after",
    "server", "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "vary", "via", "warning",
    "www-authenticate", "method", "get", "status", "200 OK", "version", "HTTP/1.1", "url", "public", "set-cookie",
    "keep-alive", "origin")
_DICTIONARY_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
    "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
    "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
    "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
#: The zlib dictionary of SPDY/3 header blocks (draft-mbelshe-httpbis-spdy-00, 2.6.10.1): a
#: protocol constant, built here from its parts (1,423 bytes).
DICTIONARY = b"".join(struct.pack("!I", len(word)) + word.encode() for word in _HEADER_WORDS) + _DICTIONARY_TAIL.encode()


class ProtocolError(Exception):
    """The client broke SPDY/3.1 (or a bound): the connection ends."""


class Frame(NamedTuple):
    """One frame: ``control`` frames have a ``kind`` (SYN_STREAM, ...); data frames a
    ``stream_id``. ``data`` is what follows the 8-byte frame header."""

    control: bool
    kind: int
    stream_id: int
    flags: int
    data: bytes


class FrameParser:
    """Client bytes in, :class:`Frame` out."""

    def __init__(self, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_frame_bytes

    def feed(self, data: bytes) -> Iterator[Frame]:
        self._buffer += data
        while len(self._buffer) >= 8:
            first, flags_length = struct.unpack_from("!II", self._buffer)
            length = flags_length & 0xFFFFFF
            if length > self._max:
                raise ProtocolError(f"spdy: frame of {length} bytes (at most {self._max})")
            if len(self._buffer) < 8 + length:
                return
            payload = bytes(self._buffer[8:8 + length])
            del self._buffer[:8 + length]
            control = bool(first & 0x80000000)
            if control:
                version, kind = (first >> 16) & 0x7FFF, first & 0xFFFF
                if version != VERSION:
                    raise ProtocolError(f"spdy: version {version} (only 3 is spoken)")
                stream_id = struct.unpack_from("!I", payload)[0] & 0x7FFFFFFF if len(payload) >= 4 else 0
                yield Frame(True, kind, stream_id, flags_length >> 24, payload)
            else:
                yield Frame(False, 0, first & 0x7FFFFFFF, flags_length >> 24, payload)


def encode_control(kind: int, payload: bytes, flags: int = 0) -> bytes:
    return struct.pack("!HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload


def encode_data(stream_id: int, data: bytes, flags: int = 0) -> bytes:
    return struct.pack("!II", stream_id & 0x7FFFFFFF, (flags << 24) | len(data)) + data


class HeaderCodec:
    """Name/value header blocks: ``count, (len, name, len, value)*`` (32-bit lengths), zlib
    with :data:`DICTIONARY`; each direction keeps its context for the connection's life."""

    def __init__(self) -> None:
        self._deflate = zlib.compressobj(zdict=DICTIONARY)
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)

    def encode(self, headers: list[tuple[str, str]]) -> bytes:
        raw = struct.pack("!I", len(headers)) + b"".join(
            struct.pack("!I", len(name)) + name.encode() + struct.pack("!I", len(value)) + value.encode()
            for name, value in ((name.lower(), value) for name, value in headers))
        return self._deflate.compress(raw) + self._deflate.flush(zlib.Z_SYNC_FLUSH)

    def decode(self, block: bytes) -> list[tuple[str, str]]:
        try:
            raw = self._inflate.decompress(block, MAX_HEADER_BLOCK_BYTES)
        except zlib.error as error:
            raise ProtocolError(f"spdy: header block does not inflate: {error}") from None
        if self._inflate.unconsumed_tail:
            raise ProtocolError(f"spdy: header block longer than {MAX_HEADER_BLOCK_BYTES} bytes")
        try:
            return _pairs(raw)
        except (struct.error, UnicodeDecodeError):
            raise ProtocolError("spdy: malformed header block") from None


def _pairs(raw: bytes) -> list[tuple[str, str]]:
    count, offset = struct.unpack_from("!I", raw)[0], 4
    pairs = []
    for _ in range(count):
        name_length = struct.unpack_from("!I", raw, offset)[0]
        name = raw[offset + 4:offset + 4 + name_length].decode()
        offset += 4 + name_length
        value_length = struct.unpack_from("!I", raw, offset)[0]
        value = raw[offset + 4:offset + 4 + value_length].decode()
        offset += 4 + value_length
        if offset > len(raw):
            raise struct.error("truncated")
        pairs += [(name, part) for part in value.split("\0")]
    return pairs


def syn_stream_headers(frame: Frame, codec: HeaderCodec) -> dict[str, str]:
    """The headers of a SYN_STREAM (after stream id, associated id, priority and slot)."""
    if len(frame.data) < 10:
        raise ProtocolError("spdy: SYN_STREAM shorter than its fixed fields")
    return dict(codec.decode(frame.data[10:]))


def syn_reply(stream_id: int, codec: HeaderCodec) -> bytes:
    return encode_control(SYN_REPLY, struct.pack("!I", stream_id) + codec.encode([]))
