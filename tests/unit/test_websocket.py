"""The server side of RFC 6455 as the exec sessions use it (fakekube.api.http.websocket)."""

from __future__ import annotations

import struct

import pytest

from fakekube.api.http import websocket as ws


def client_frame(opcode: int, payload: bytes, fin: bool = True, mask: bytes = b"\x01\x02\x03\x04") -> bytes:
    """A frame as a client sends it: masked."""
    length = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if length < 126:
        head += bytes([0x80 | length])
    elif length < 1 << 16:
        head += bytes([0x80 | 126]) + struct.pack("!H", length)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", length)
    return head + mask + bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))


def test_accept_key_is_rfc_6455s_example() -> None:
    assert ws.accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def test_handshake_problems() -> None:
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    assert ws.handshake_problem("GET", "13", key) is None
    assert "request method is not GET" in str(ws.handshake_problem("POST", "13", key))
    assert "unsupported version" in str(ws.handshake_problem("GET", "8", key))
    assert "16-byte" in str(ws.handshake_problem("GET", "13", "c2hvcnQ="))
    assert ws.is_upgrade("WebSocket", "keep-alive, Upgrade") and not ws.is_upgrade("SPDY/3.1", "Upgrade")


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536])
def test_server_frames_use_the_shortest_length(size: int) -> None:
    frame = ws.encode_frame(ws.BINARY, b"x" * size)
    assert frame[0] == 0x82
    header = 2 if size < 126 else 4 if size < 65536 else 10
    assert len(frame) == header + size and not frame[1] & 0x80  # never masked


def test_the_parser_unmasks_reassembles_and_passes_control_frames_between_fragments() -> None:
    parser = ws.FrameParser()
    data = (client_frame(ws.BINARY, b"\x00hel", fin=False) + client_frame(ws.PING, b"p")
            + client_frame(ws.CONTINUATION, b"lo") + client_frame(ws.CLOSE, struct.pack("!H", 1000)))
    out = []
    for at in range(len(data)):  # byte by byte: every partial frame waits for the rest
        out += list(parser.feed(data[at:at + 1]))
    assert out == [(ws.PING, b"p"), (ws.BINARY, b"\x00hello"), (ws.CLOSE, b"\x03\xe8")]
    big = b"y" * 70000
    assert list(ws.FrameParser().feed(client_frame(ws.BINARY, big))) == [(ws.BINARY, big)]


@pytest.mark.parametrize(("data", "code"), [
    (ws.encode_frame(ws.BINARY, b"x"), ws.PROTOCOL_ERROR),  # unmasked
    (client_frame(ws.CONTINUATION, b"x"), ws.PROTOCOL_ERROR),  # nothing to continue
    (client_frame(ws.PING, b"p", fin=False), ws.PROTOCOL_ERROR),  # fragmented control frame
    (client_frame(0x3, b""), ws.PROTOCOL_ERROR),  # reserved opcode
    (client_frame(ws.BINARY, b"z" * 11), ws.MESSAGE_TOO_BIG),
    (client_frame(ws.BINARY, b"z" * 6, fin=False) + client_frame(ws.CONTINUATION, b"z" * 6), ws.MESSAGE_TOO_BIG),
])
def test_protocol_errors_name_their_close_code(data: bytes, code: int) -> None:
    with pytest.raises(ws.ProtocolError) as error:
        list(ws.FrameParser(max_message_bytes=10).feed(data))
    assert error.value.code == code


def test_close_frame_carries_code_and_reason() -> None:
    assert ws.close_frame() == b"\x88\x02\x03\xe8"
    assert ws.close_frame(1009, "big") == b"\x88\x05\x03\xf1big"
