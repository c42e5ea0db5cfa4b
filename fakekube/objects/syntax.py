"""Upstream's string checks for label keys and values, and Go's way of printing them.

A selector that names an invalid key must fail with the same text the API server
sends (``labels.NewRequirement`` runs ``validation.IsQualifiedName`` and
``IsValidLabelValue``), and that text embeds Go's ``%q`` and ``%#v`` renderings. This
package may not import the API layer, so the checks live here, and the API layer's
validation calls them (one ``go_quote``, one qualified-name and label-value check).
"""

from __future__ import annotations

import re
from typing import Sequence

_NAME_MAX_BYTES = 63
_SUBDOMAIN_MAX_BYTES = 253

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', "
             "and must start and end with an alphanumeric character")
_VALUE_FMT = "(" + _NAME_FMT + ")?"
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
              "'-', '_' or '.', and must start and end with an alphanumeric character")
_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric character")

# \Z rather than $: Go's $ does not match before a trailing newline.
_NAME_RE = re.compile("(?:" + _NAME_FMT + r")\Z")
_VALUE_RE = re.compile("(?:" + _VALUE_FMT + r")\Z")
_SUBDOMAIN_RE = re.compile("(?:" + _SUBDOMAIN_FMT + r")\Z")

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """Go's ``%q``: double quotes, backslash escapes for quotes and non-printables."""
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c == " " or c.isprintable():
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def go_string_slice(values: Sequence[str] | None) -> str:
    """A ``[]string`` as ``%#v`` prints it; empty values print as Go's nil slice."""
    if not values:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _byte_len(text: str) -> int:
    return len(text.encode("utf-8"))


def qualified_name_errors(value: str, noun: str = "a qualified name", unit: str = "characters") -> list[str]:
    """``validation.IsQualifiedName``: ``[prefix/]name``, prefix a DNS subdomain. ``noun``
    starts the message for too many slashes: "a valid label key" from 1.35, and lengths are
    counted in ``unit`` ("bytes" from 1.35; the release's ``label_key_noun`` and
    ``label_length_unit``, fakekube/objects/versions.py)."""
    parts = value.split("/")
    if len(parts) > 2:
        return [noun + " " + _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errors: list[str] = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if _byte_len(prefix) > _SUBDOMAIN_MAX_BYTES:
                errors.append(f"prefix part must be no more than {_SUBDOMAIN_MAX_BYTES} {unit}")
            if not _SUBDOMAIN_RE.match(prefix):
                errors.append("prefix part " + _regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif _byte_len(name) > _NAME_MAX_BYTES:
        errors.append(f"name part must be no more than {_NAME_MAX_BYTES} {unit}")
    if not _NAME_RE.match(name):
        errors.append("name part " + _regex_error(_NAME_MSG, _NAME_FMT, "MyName", "my.name", "123-abc"))
    return errors


def is_plain_label(key: str, value: str) -> bool:
    """Whether ``key`` is a valid qualified name and ``value`` a valid label value — exactly
    when :func:`qualified_name_errors` and :func:`label_value_errors` find nothing — decided
    by one pass of the regexes. Every write validates every label it carries (a pod's
    status write included) and nearly all are valid, so the messages, which depend on
    the release, are built only for a label that fails here. The regexes match ASCII
    only, so a length in characters is the length in bytes."""
    return is_plain_qualified_name(key) and len(value) <= _NAME_MAX_BYTES and _VALUE_RE.match(value) is not None


def is_plain_qualified_name(key: str) -> bool:
    """Whether :func:`qualified_name_errors` finds nothing in ``key`` (an annotation's key,
    a label's), by one pass of the regexes: the fast check before the worded one."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or "/" in prefix or len(prefix) > _SUBDOMAIN_MAX_BYTES
                  or _SUBDOMAIN_RE.match(prefix) is None):
        return False
    return len(name) <= _NAME_MAX_BYTES and _NAME_RE.match(name) is not None


def label_value_errors(value: str, unit: str = "characters") -> list[str]:
    """``validation.IsValidLabelValue``: empty, or a name of at most 63 bytes (counted in
    ``unit`` in the message, as :func:`qualified_name_errors`)."""
    errors = []
    if _byte_len(value) > _NAME_MAX_BYTES:
        errors.append(f"must be no more than {_NAME_MAX_BYTES} {unit}")
    if not _VALUE_RE.match(value):
        errors.append(_regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors
