"""The protobuf wire format, read only: varints, fixed-width numbers and length-delimited bytes.

Why hand-written: the decoder needs four wire types and nothing else, and a protobuf
runtime dependency would bring code generation we do not use. Every read is bounded by
the body (already capped by the request size limit), and malformed input raises
:class:`ProtobufError`, which the HTTP layer turns into a 400.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
_MAX_VARINT_BYTES = 10


class ProtobufError(ValueError):
    """A body that does not decode; the text follows gogo-protobuf's wording where it has one.

    ``api_version``/``kind`` are the envelope's type, once known: upstream words the
    error differently with and without them (``transformDecodeError``).
    """

    api_version: str = ""
    kind: str = ""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it (at most 10 bytes, as Go reads)."""
    value = shift = 0
    for offset in range(_MAX_VARINT_BYTES):
        if pos + offset >= len(data):
            raise ProtobufError("unexpected EOF")
        byte = data[pos + offset]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, pos + offset + 1
        shift += 7
    raise ProtobufError("proto: integer overflow")


def iter_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """``(field number, wire type, value)`` for each field: an int for varints, bytes otherwise."""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number <= 0:
            raise ProtobufError(f"proto: illegal tag {number} (wire type {wire_type})")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
            yield number, wire_type, value
        elif wire_type in (FIXED64, FIXED32):
            width = 8 if wire_type == FIXED64 else 4
            if pos + width > len(data):
                raise ProtobufError("unexpected EOF")
            yield number, wire_type, data[pos:pos + width]
            pos += width
        elif wire_type == BYTES:
            length, pos = read_varint(data, pos)
            if pos + length > len(data):
                raise ProtobufError("unexpected EOF")
            yield number, wire_type, data[pos:pos + length]
            pos += length
        else:
            raise ProtobufError(f"proto: illegal wireType {wire_type}")


def signed64(value: int) -> int:
    """A varint as Go's int64 (two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def signed32(value: int) -> int:
    """A varint as Go's int32: the low 32 bits, two's complement (what gogo's cast keeps)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def zigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)
