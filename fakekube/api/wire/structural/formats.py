"""String ``format``s a CRD schema can check (kube-openapi's strfmt registry).

Formats kube-openapi does not know (and ``int32``/``int64`` on integers, which it does
not range-check) pass. The checks follow strfmt's validators; where those call the
govalidator package, the rules here are the commonly documented ones, not its code.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import urllib.parse
from typing import Callable

_HOSTNAME = re.compile(
    r"^([a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.)){1,}"
    r"([a-zA-Z0-9])(-?[a-zA-Z0-9]){1,62})$")
_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID3 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_UUID4 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_UUID5 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$")
_DURATION = re.compile(
    r"^(([0-9]+(\.[0-9]+)?)\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$|^[0-9]+$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}([0-9A-Fa-f]{2})$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$")
_HEX_COLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGB_COLOR = re.compile(r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,"
                        r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$")
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_OBJECT_ID = re.compile(r"^[0-9a-fA-F]{24}$")
_EMAIL = re.compile(r"^[^@\s<>]+@[^@\s<>]+$")
_ISBN10 = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})$")
_ISBN13 = re.compile(r"^(?:[0-9]{13})$")


def _hostname(text: str) -> bool:
    return bool(_HOSTNAME.match(text)) and len(text) <= 255 and all(len(p) <= 63 for p in text.split("."))


def _ipv4(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv4Address)
    except ValueError:
        return False


def _ipv6(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv6Address)
    except ValueError:
        return False


def _cidr(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return False
    return "/" in text


def _uri(text: str) -> bool:
    """govalidator.IsRequestURI: an absolute URI (scheme and the rest) or an absolute path."""
    if text.startswith("/"):
        return True
    parts = urllib.parse.urlsplit(text)
    return bool(parts.scheme) and bool(parts.netloc or parts.path or parts.query)


def _base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(text) % 4 == 0


def _date(text: str) -> bool:
    if not _DATE.match(text):
        return False
    month, day = int(text[5:7]), int(text[8:10])
    return 1 <= month <= 12 and 1 <= day <= 31


def _isbn10(text: str) -> bool:
    digits = text.replace("-", "").replace(" ", "")
    if not _ISBN10.match(digits):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def _isbn13(text: str) -> bool:
    digits = text.replace("-", "").replace(" ", "")
    if not _ISBN13.match(digits):
        return False
    return sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(digits)) % 10 == 0


def _credit_card(text: str) -> bool:
    digits = re.sub(r"[ -]", "", text)
    if not digits.isdigit() or not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda t: bool(_OBJECT_ID.match(t)),
    "uri": _uri,
    "email": lambda t: bool(_EMAIL.match(t)),
    "hostname": _hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "cidr": _cidr,
    "mac": lambda t: bool(_MAC.match(t)),
    "uuid": lambda t: bool(_UUID.match(t)),
    "uuid3": lambda t: bool(_UUID3.match(t)),
    "uuid4": lambda t: bool(_UUID4.match(t)),
    "uuid5": lambda t: bool(_UUID5.match(t)),
    "isbn": lambda t: _isbn10(t) or _isbn13(t),
    "isbn10": _isbn10,
    "isbn13": _isbn13,
    "creditcard": _credit_card,
    "ssn": lambda t: bool(_SSN.match(t)),
    "hexcolor": lambda t: bool(_HEX_COLOR.match(t)),
    "rgbcolor": lambda t: bool(_RGB_COLOR.match(t)),
    "byte": _base64,
    "password": lambda t: True,
    "date": _date,
    "duration": lambda t: bool(_DURATION.match(t)),
    "datetime": lambda t: bool(_DATE_TIME.match(t)),
    "date-time": lambda t: bool(_DATE_TIME.match(t)),
}


def format_ok(fmt: str, text: str) -> bool:
    """Does ``text`` satisfy string format ``fmt`` (unknown formats always do)?"""
    check = CHECKS.get(fmt)
    return check is None or check(text)
