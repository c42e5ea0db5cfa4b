"""RFC 6455 WebSocket, the server's side, as much as the remote-command protocols use.

Sans-I/O: :func:`accept_key` and :func:`handshake_problem` judge an upgrade request,
:func:`encode_frame` makes the frames a server sends (unmasked, never fragmented) and
:class:`FrameParser` turns the bytes a client sends (masked, possibly fragmented) into
whole messages and control frames. The caller owns the socket (execstream.py).

Bound: a client message larger than ``max_message_bytes`` is a protocol error (the caller
closes with 1009, "message too big"); control frames carry at most 125 bytes (RFC 6455 5.5).
"""

from __future__ import annotations

import base64
import hashlib
import struct
from typing import Iterator

#: The GUID every server appends to the client's key (RFC 6455 section 1.3).
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

CONTINUATION = 0x0
TEXT = 0x1
BINARY = 0x2
CLOSE = 0x8
PING = 0x9
PONG = 0xA
_CONTROL = (CLOSE, PING, PONG)
_KNOWN = (CONTINUATION, TEXT, BINARY, *_CONTROL)

#: Close codes (RFC 6455 section 7.4.1).
NORMAL_CLOSURE = 1000
PROTOCOL_ERROR = 1002
MESSAGE_TOO_BIG = 1009

#: The most a client message may carry by default (stdin is read and dropped in slices).
MAX_MESSAGE_BYTES = 1024 * 1024


class ProtocolError(Exception):
    """The client broke RFC 6455; ``code`` is the close code to answer with."""

    def __init__(self, message: str, code: int = PROTOCOL_ERROR) -> None:
        super().__init__(message)
        self.code = code


def accept_key(key: str) -> str:
    """``Sec-WebSocket-Accept`` for the client's ``Sec-WebSocket-Key``."""
    return base64.b64encode(hashlib.sha1(key.strip().encode("latin-1") + _GUID).digest()).decode()


def is_upgrade(upgrade: str | None, connection: str | None) -> bool:
    """Is this a WebSocket upgrade request (``Upgrade: websocket``, ``Connection: ... upgrade``)?"""
    tokens = {token.strip().lower() for token in (connection or "").split(",")}
    return (upgrade or "").strip().lower() == "websocket" and "upgrade" in tokens


def handshake_problem(method: str, version: str | None, key: str | None) -> str | None:
    """Why an upgrade request cannot be accepted (RFC 6455 section 4.2.1), or None."""
    if method != "GET":
        return "websocket: the client is not using the websocket protocol: request method is not GET"
    if (version or "").strip() != "13":
        return "websocket: unsupported version: 13 not found in 'Sec-Websocket-Version' header"
    try:
        if len(base64.b64decode((key or "").strip(), validate=True)) != 16:
            raise ValueError()
    except ValueError:
        return "websocket: not a websocket handshake: 'Sec-WebSocket-Key' header must be Base64 encoded value of 16-byte in length"
    return None


def encode_frame(opcode: int, payload: bytes = b"") -> bytes:
    """One whole (FIN) server frame: servers never mask (RFC 6455 section 5.1)."""
    length = len(payload)
    if length < 126:
        head = struct.pack("!BB", 0x80 | opcode, length)
    elif length < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, length)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, length)
    return head + payload


def close_frame(code: int = NORMAL_CLOSURE, reason: str = "") -> bytes:
    return encode_frame(CLOSE, struct.pack("!H", code) + reason.encode()[:123])


class FrameParser:
    """Client bytes in, ``(opcode, payload)`` out: data messages reassembled from their
    fragments, control frames as they come. Payloads are unmasked."""

    def __init__(self, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_message_bytes
        self._message_opcode: int | None = None
        self._fragments = bytearray()

    def feed(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        """Take ``data`` and yield every frame or message it completes (ProtocolError on misuse)."""
        self._buffer += data
        while True:
            frame = self._next_frame()
            if frame is None:
                return
            fin, opcode, payload = frame
            if opcode in _CONTROL:
                if not fin or len(payload) > 125:
                    raise ProtocolError("websocket: control frames must be whole and at most 125 bytes")
                yield opcode, payload
                continue
            message = self._join(fin, opcode, payload)
            if message is not None:
                yield message

    def _join(self, fin: bool, opcode: int, payload: bytes) -> tuple[int, bytes] | None:
        if opcode == CONTINUATION:
            if self._message_opcode is None:
                raise ProtocolError("websocket: continuation frame without a message to continue")
        elif self._message_opcode is not None:
            raise ProtocolError("websocket: new message before the last one's final fragment")
        else:
            self._message_opcode = opcode
        if len(self._fragments) + len(payload) > self._max:
            raise ProtocolError(f"websocket: message longer than {self._max} bytes", MESSAGE_TOO_BIG)
        self._fragments += payload
        if not fin:
            return None
        message = (self._message_opcode, bytes(self._fragments))
        self._message_opcode, self._fragments = None, bytearray()
        return message

    def _next_frame(self) -> tuple[bool, int, bytes] | None:
        buffer = self._buffer
        if len(buffer) < 2:
            return None
        first, second = buffer[0], buffer[1]
        if first & 0x70:
            raise ProtocolError("websocket: reserved bits set without a negotiated extension")
        opcode = first & 0x0F
        if opcode not in _KNOWN:
            raise ProtocolError(f"websocket: unknown opcode {opcode}")
        if not second & 0x80:
            raise ProtocolError("websocket: client frames must be masked")
        length, offset = second & 0x7F, 2
        if length == 126:
            if len(buffer) < 4:
                return None
            length, offset = struct.unpack_from("!H", buffer, 2)[0], 4
        elif length == 127:
            if len(buffer) < 10:
                return None
            length, offset = struct.unpack_from("!Q", buffer, 2)[0], 10
        if length > self._max:
            raise ProtocolError(f"websocket: frame longer than {self._max} bytes", MESSAGE_TOO_BIG)
        end = offset + 4 + length
        if len(buffer) < end:
            return None
        mask = bytes(buffer[offset:offset + 4])
        payload = _unmask(bytes(buffer[offset + 4:end]), mask)
        del buffer[:end]
        return bool(first & 0x80), opcode, payload


def _unmask(data: bytes, mask: bytes) -> bytes:
    """XOR with the 4-byte mask, repeated: done as one big-integer XOR (fast in CPython)."""
    if not data:
        return data
    repeated = (mask * (len(data) // 4 + 1))[:len(data)]
    return (int.from_bytes(data, "big") ^ int.from_bytes(repeated, "big")).to_bytes(len(data), "big")
