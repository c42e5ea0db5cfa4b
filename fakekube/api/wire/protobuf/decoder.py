"""Kubernetes protobuf messages decoded into the JSON shape upstream would have produced.

Upstream unmarshals protobuf into Go structs and everything downstream sees those
structs; fakekube works on JSON dicts, so we decode straight to the dict Go's
``encoding/json`` would write for that struct. The field table (``fields.json``, built
by ``tools/gen_protobuf_fields.py``) gives, per field, its JSON name and Go tag flags:

- gogo marshals non-pointer fields always, so on the way back an ``omitempty`` field
  holding ``""``/``0``/``false``/an empty list is dropped, as Go's encoder drops it;
- a pointer field is kept whenever it was on the wire, zero or not (``replicas: 0``);
- a non-``omitempty`` field absent from the wire still appears with Go's zero value,
  and a struct field always appears (Go never omits structs): the dict matches what
  kubectl 1.29 sends as JSON for the same object.

Messages with a custom JSON form (Time, MicroTime, Duration, Quantity, IntOrString,
RawExtension, FieldsV1) are decoded by hand. Fields whose message type is outside the
table (alpha packages fakekube does not serve) are skipped. Nesting is capped at
:data:`MAX_DEPTH` so a hostile body cannot exhaust the stack.
"""

from __future__ import annotations

import base64
import datetime
import struct
from typing import Any, Callable

from fakekube.api.wire.decoding import SyntaxFailure, parse_json
from fakekube.api.wire.gostructs import Field, Message, message
from fakekube.api.wire.protobuf.wire import (BYTES, FIXED32, FIXED64, VARINT, ProtobufError, iter_fields, read_varint,
                                        signed32, signed64, zigzag)
from fakekube.clock import format_go_duration

MAX_DEPTH = 100

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_VARINTS = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"}
_FIXED32S = {"fixed32", "sfixed32", "float"}
_FIXED64S = {"fixed64", "sfixed64", "double"}
_ZERO: dict[str, Any] = {"string": "", "bytes": None, "bool": False, "double": 0, "float": 0}
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def decode_message(type_name: str, data: bytes, depth: int = 0) -> Any:
    """One message as its JSON value (a dict, or a scalar for the custom-JSON types)."""
    if depth > MAX_DEPTH:
        raise ProtobufError(f"proto: message nesting exceeds {MAX_DEPTH} levels")
    special = _SPECIAL.get(type_name)
    if special is not None:
        return special(data)
    spec = message(type_name)
    if spec is None:
        raise ProtobufError(f"proto: unknown message type {type_name}")
    present: dict[int, Any] = {}
    for number, wire_type, value in iter_fields(data):
        field = spec.by_number.get(number)
        if field is not None and _known_type(field.type):
            _collect(present, field, wire_type, value, depth)
    if spec.is_list:
        return present.get(1)
    return _assemble(spec, present, depth)


def _known_type(type_name: str) -> bool:
    return type_name in _ZERO or type_name in _VARINTS or type_name in _FIXED32S or type_name in _FIXED64S \
        or type_name in _SPECIAL or message(type_name) is not None


def _collect(present: dict[int, Any], field: Field, wire_type: int, value: int | bytes, depth: int) -> None:
    """Fold one wire occurrence of a field into ``present`` (repeated appends, map merges)."""
    if field.card == "map":
        key, item = _map_entry(field, _expect_bytes(field, wire_type, value), depth)
        present.setdefault(field.number, {})[key] = item
    elif field.card == "rep":
        items = present.setdefault(field.number, [])
        if wire_type == BYTES and field.type not in ("string", "bytes") and _is_numeric(field.type):
            items.extend(_packed(field, value))  # type: ignore[arg-type]
        else:
            items.append(_value(field.type, field, wire_type, value, depth))
    else:
        present[field.number] = _value(field.type, field, wire_type, value, depth)


def _is_numeric(type_name: str) -> bool:
    return type_name in _VARINTS or type_name in _FIXED32S or type_name in _FIXED64S


def _packed(field: Field, data: bytes) -> list[Any]:
    """A packed repeated scalar: values back to back in one length-delimited field."""
    values, pos = [], 0
    if field.type in _VARINTS:
        while pos < len(data):
            raw, pos = read_varint(data, pos)
            values.append(_scalar(field.type, field, VARINT, raw))
        return values
    width = 4 if field.type in _FIXED32S else 8
    if len(data) % width:
        raise ProtobufError("unexpected EOF")
    wire_type = FIXED32 if width == 4 else FIXED64
    return [_scalar(field.type, field, wire_type, data[i:i + width]) for i in range(0, len(data), width)]


def _value(type_name: str, field: Field, wire_type: int, value: int | bytes, depth: int) -> Any:
    if type_name in _ZERO or _is_numeric(type_name):
        return _scalar(type_name, field, wire_type, value)
    return decode_message(type_name, _expect_bytes(field, wire_type, value), depth + 1)


def _expect_bytes(field: Field, wire_type: int, value: int | bytes) -> bytes:
    if wire_type != BYTES or not isinstance(value, bytes):
        raise ProtobufError(f"proto: wrong wireType = {wire_type} for field {field.name}")
    return value


def _scalar(type_name: str, field: Field, wire_type: int, value: int | bytes) -> Any:
    """A scalar's JSON value; the wire type must be the one gogo writes for it."""
    if type_name in _VARINTS:
        if wire_type != VARINT or not isinstance(value, int):
            raise ProtobufError(f"proto: wrong wireType = {wire_type} for field {field.name}")
        return _varint_value(type_name, value)
    if type_name in _FIXED32S or type_name in _FIXED64S:
        expected = FIXED32 if type_name in _FIXED32S else FIXED64
        if wire_type != expected or not isinstance(value, bytes):
            raise ProtobufError(f"proto: wrong wireType = {wire_type} for field {field.name}")
        return _fixed_value(type_name, value)
    data = _expect_bytes(field, wire_type, value)
    if type_name == "bytes":
        return base64.b64encode(data).decode("ascii")
    return data.decode("utf-8", errors="replace")  # Go's JSON encoder writes U+FFFD for bad bytes


def _varint_value(type_name: str, value: int) -> Any:
    if type_name == "bool":
        return value != 0
    if type_name == "int32":
        return signed32(value)
    if type_name == "int64":
        return signed64(value)
    if type_name == "uint32":
        return value & 0xFFFFFFFF
    if type_name in ("sint32", "sint64"):
        return zigzag(value)
    return value


def _fixed_value(type_name: str, value: bytes) -> Any:
    fmt = {"fixed32": "<I", "sfixed32": "<i", "float": "<f", "fixed64": "<Q", "sfixed64": "<q", "double": "<d"}
    number = struct.unpack(fmt[type_name], value)[0]
    if isinstance(number, float) and (number != number or number in (float("inf"), float("-inf"))):
        raise ProtobufError(f"json: unsupported value: {number}")
    return number


def _map_entry(field: Field, data: bytes, depth: int) -> tuple[str, Any]:
    """A map entry message (key = 1, value = 2) as a JSON key and value; absent parts are zero."""
    key: Any = _zero_scalar(field.key_type)
    item: Any = _MISSING
    key_field = Field(1, "key", field.key_type, "opt", "", "")
    value_field = Field(2, "value", field.type, "opt", "", "")
    for number, wire_type, value in iter_fields(data):
        if number == 1:
            key = _scalar(field.key_type, key_field, wire_type, value)
        elif number == 2:
            item = _value(field.type, value_field, wire_type, value, depth + 1)
    if item is _MISSING:
        item = _absent_value(value_field, depth)
    if isinstance(key, bool):
        key = "true" if key else "false"
    return str(key), item


_MISSING = object()


def _zero_scalar(type_name: str) -> Any:
    return _ZERO.get(type_name, 0)


def _assemble(spec: Message, present: dict[int, Any], depth: int) -> dict[str, Any]:
    """The struct as Go's JSON encoder writes it, in struct order."""
    out: dict[str, Any] = {}
    for field in spec.fields:
        if field.number in present:
            value = present[field.number]
            if "o" in field.flags and "p" not in field.flags and _is_empty(field, value):
                continue
        else:
            value = _absent_value(field, depth)
            if value is _MISSING:
                continue
        if "i" in field.flags and isinstance(value, dict):
            out.update(value)
        else:
            out[field.name] = value
    return out


def _absent_value(field: Field, depth: int) -> Any:
    """What Go writes for a field the wire did not carry: nothing, null, a zero, or a zero struct."""
    if "p" in field.flags or not _known_type(field.type):
        return _MISSING
    slice_like = field.card in ("rep", "map") or _is_list_message(field.type) or field.type == "bytes"
    if slice_like or field.type in _ZERO or _is_numeric(field.type):
        if "o" in field.flags:
            return _MISSING
        return None if slice_like else _zero_scalar(field.type)
    return decode_message(field.type, b"", depth + 1)


def _is_list_message(type_name: str) -> bool:
    spec = message(type_name) if type_name not in _SPECIAL else None
    return spec is not None and spec.is_list


def _is_empty(field: Field, value: Any) -> bool:
    """Go's ``omitempty`` test: zero scalars and empty slices/maps; structs are never empty."""
    if field.card in ("rep", "map") or _is_list_message(field.type):
        return not value
    if field.type in _ZERO or _is_numeric(field.type):
        return value in ("", 0, False) and value is not None
    return False


# --- messages with their own JSON form -------------------------------------------------------

def _last_fields(data: bytes) -> dict[int, int | bytes]:
    return {number: value for number, _, value in iter_fields(data)}


def _timestamp(data: bytes) -> tuple[int, int] | None:
    """``{seconds = 1, nanos = 2}``; empty means Go's zero time (gogo writes nothing for it)."""
    if not data:
        return None
    values = _last_fields(data)
    seconds, nanos = values.get(1, 0), values.get(2, 0)
    if not isinstance(seconds, int) or not isinstance(nanos, int):
        raise ProtobufError("proto: wrong wireType for Timestamp")
    total = signed64(seconds) * 1_000_000_000 + signed32(nanos)
    return divmod(total, 1_000_000_000)


def _datetime(seconds: int) -> datetime.datetime:
    try:
        return _EPOCH + datetime.timedelta(seconds=seconds)
    except OverflowError:
        raise ProtobufError("Time.MarshalJSON: year outside of range [0,9999]") from None


def _time(data: bytes) -> str | None:
    """``metav1.Time``: RFC 3339 in UTC, whole seconds; the zero time is ``null``."""
    stamp = _timestamp(data)
    return None if stamp is None else _datetime(stamp[0]).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_time(data: bytes) -> str | None:
    """``metav1.MicroTime``: RFC 3339 with six fraction digits, in UTC."""
    stamp = _timestamp(data)
    if stamp is None:
        return None
    return _datetime(stamp[0]).strftime("%Y-%m-%dT%H:%M:%S") + f".{stamp[1] // 1000:06d}Z"


def _duration(data: bytes) -> str:
    value = _last_fields(data).get(1, 0)
    if not isinstance(value, int):
        raise ProtobufError("proto: wrong wireType for Duration")
    return format_go_duration(signed64(value))


def _quantity(data: bytes) -> str:
    """``resource.Quantity``: its string; an empty message is the zero quantity, ``"0"``."""
    value = _last_fields(data).get(1, b"")
    if not isinstance(value, bytes):
        raise ProtobufError("proto: wrong wireType for Quantity")
    return value.decode("utf-8", errors="replace") or "0"


def _int_or_string(data: bytes) -> int | str:
    """``intstr.IntOrString``: ``type`` 1 means the string, anything else the int."""
    values = _last_fields(data)
    kind, int_val, str_val = values.get(1, 0), values.get(2, 0), values.get(3, b"")
    if not isinstance(kind, int) or not isinstance(int_val, int) or not isinstance(str_val, bytes):
        raise ProtobufError("proto: wrong wireType for IntOrString")
    if signed64(kind) == 1:
        return str_val.decode("utf-8", errors="replace")
    return signed32(int_val)


def _embedded_json(data: bytes) -> Any:
    """``RawExtension``/``FieldsV1``: bytes that hold a JSON document; none is ``null``."""
    raw = _last_fields(data).get(1, b"")
    if not isinstance(raw, bytes):
        raise ProtobufError("proto: wrong wireType for raw bytes")
    if not raw:
        return None
    try:
        return parse_json(raw)  # nesting bounded, as for a JSON body
    except SyntaxFailure:
        raise ProtobufError("embedded object is not JSON") from None


_SPECIAL: dict[str, Callable[[bytes], Any]] = {
    META + "Time": _time,
    META + "MicroTime": _micro_time,
    META + "Duration": _duration,
    META + "FieldsV1": _embedded_json,
    "k8s.io.apimachinery.pkg.api.resource.Quantity": _quantity,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": _int_or_string,
    "k8s.io.apimachinery.pkg.runtime.RawExtension": _embedded_json,
}
