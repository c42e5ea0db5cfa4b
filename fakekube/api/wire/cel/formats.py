"""Kubernetes' CEL ``format`` library: ``format.dns1123Label().validate(s)`` gives an
optional list of apimachinery's error texts (none when ``s`` is valid), and
``format.named("dns1123Label")`` the format as an optional."""

from __future__ import annotations

import base64
import binascii
import datetime
import re
import urllib.parse
import uuid
from typing import Any, Callable

from fakekube.api.machinery.validation import (is_dns1035_label, is_dns1123_label, is_dns1123_subdomain,
                                               is_qualified_name, is_valid_label_value, name_is_dns1035_label,
                                               name_is_dns_label, name_is_dns_subdomain)

_FORMAT = "__format__"
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _uri(text: str) -> list[str]:
    if not (text.startswith("/") or urllib.parse.urlsplit(text).scheme):
        return [f'parse "{text}": invalid URI for request']
    return []


def _uuid(text: str) -> list[str]:
    try:
        uuid.UUID(text)
    except ValueError:
        return [f"invalid UUID length: {len(text)}" if len(text) not in (32, 36, 38, 45) else "invalid UUID format"]
    return []


def _byte(text: str) -> list[str]:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return ["invalid base64"]
    return []


def _date(text: str) -> list[str]:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return [f'error parsing "{text}" as a date']
    return [] if len(text) == 10 else [f'error parsing "{text}" as a date']


def _datetime(text: str) -> list[str]:
    return [] if _RFC3339.match(text) else [f'error parsing "{text}" as a datetime']


#: Each named format and the check behind it (apimachinery's validation functions).
FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": is_dns1123_label,
    "dns1123Subdomain": is_dns1123_subdomain,
    "dns1035Label": is_dns1035_label,
    "qualifiedName": is_qualified_name,
    "dns1123LabelPrefix": lambda s: name_is_dns_label(s, True),
    "dns1123SubdomainPrefix": lambda s: name_is_dns_subdomain(s, True),
    "dns1035LabelPrefix": lambda s: name_is_dns1035_label(s, True),
    "labelValue": is_valid_label_value,
    "uri": _uri,
    "uuid": _uuid,
    "byte": _byte,
    "date": _date,
    "datetime": _datetime,
}


def _named(name: str) -> Any:
    import cel  # loaded by the program that calls this (program.py says why it is not at the top)
    return cel.OptionalValue.of({_FORMAT: name}) if name in FORMATS else cel.OptionalValue.none()


def _validate(fmt: Any, value: Any) -> Any:
    if not (isinstance(fmt, dict) and fmt.get(_FORMAT) in FORMATS) or not isinstance(value, str):
        raise TypeError("no such overload")
    import cel  # loaded by the program that calls this (program.py says why it is not at the top)
    problems = FORMATS[fmt[_FORMAT]](value)
    return cel.OptionalValue.of(problems) if problems else cel.OptionalValue.none()


FUNCTIONS: dict[str, Callable[..., Any]] = {f"format.{name}": (lambda n=name: {_FORMAT: n}) for name in FORMATS}
FUNCTIONS["format.named"] = _named
FUNCTIONS["validate"] = _validate
