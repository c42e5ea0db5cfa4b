"""SPDY/3.1 framing as kubectl's exec uses it (fakekube.api.http.spdy)."""

from __future__ import annotations

import struct
import zlib

import pytest

from fakekube.api.http import spdy


def client_syn_stream(stream_id: int, headers: list[tuple[str, str]], codec: spdy.HeaderCodec) -> bytes:
    payload = struct.pack("!IIBB", stream_id, 0, 0, 0) + codec.encode(headers)
    return spdy.encode_control(spdy.SYN_STREAM, payload)


def test_the_dictionary_is_spdy3s() -> None:
    assert len(spdy.DICTIONARY) == 1423
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")


def test_header_blocks_share_one_context_per_direction() -> None:
    client, server = spdy.HeaderCodec(), spdy.HeaderCodec()
    first = client.encode([("streamtype", "error")])
    second = client.encode([("StreamType", "stdout"), ("x", "a\0b")])
    assert server.decode(first) == [("streamtype", "error")]
    assert server.decode(second) == [("streamtype", "stdout"), ("x", "a"), ("x", "b")]
    # The second block refers back to the first: a fresh context cannot read it alone.
    with pytest.raises(spdy.ProtocolError):
        spdy.HeaderCodec().decode(second)


def test_frames_parse_byte_by_byte() -> None:
    codec = spdy.HeaderCodec()
    data = (client_syn_stream(1, [("streamtype", "error")], codec) + spdy.encode_data(3, b"stdin", spdy.FLAG_FIN)
            + spdy.encode_control(spdy.PING, struct.pack("!I", 7)))
    parser, frames = spdy.FrameParser(), []
    for at in range(len(data)):
        frames += list(parser.feed(data[at:at + 1]))
    assert [(f.control, f.kind, f.stream_id, f.flags) for f in frames] == [
        (True, spdy.SYN_STREAM, 1, 0), (False, 0, 3, spdy.FLAG_FIN), (True, spdy.PING, 7, 0)]
    assert frames[1].data == b"stdin"
    assert spdy.syn_stream_headers(frames[0], spdy.HeaderCodec()) == {"streamtype": "error"}


def test_syn_reply_carries_an_empty_header_block() -> None:
    server, client = spdy.HeaderCodec(), spdy.HeaderCodec()
    frame = next(spdy.FrameParser().feed(spdy.syn_reply(5, server)))
    assert (frame.kind, frame.stream_id) == (spdy.SYN_REPLY, 5)
    assert client.decode(frame.data[4:]) == []


def test_bounds_and_bad_input_are_protocol_errors() -> None:
    with pytest.raises(spdy.ProtocolError):
        list(spdy.FrameParser(max_frame_bytes=4).feed(spdy.encode_data(1, b"12345")))
    with pytest.raises(spdy.ProtocolError):  # SPDY/2
        list(spdy.FrameParser().feed(struct.pack("!HHI", 0x8002, spdy.PING, 4) + b"\0\0\0\1"))
    with pytest.raises(spdy.ProtocolError):
        spdy.HeaderCodec().decode(b"not zlib")
    deflate = zlib.compressobj(zdict=spdy.DICTIONARY)
    bomb = deflate.compress(struct.pack("!I", 1) + b"\0" * (spdy.MAX_HEADER_BLOCK_BYTES + 10)) + deflate.flush(zlib.Z_SYNC_FLUSH)
    with pytest.raises(spdy.ProtocolError):
        spdy.HeaderCodec().decode(bomb)
