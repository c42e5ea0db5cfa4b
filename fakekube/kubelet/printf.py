"""``printf FORMAT [ARGUMENT]...`` as POSIX ``sh`` and busybox print it (for exec and programs).

The format's backslash escapes (``\\n``, ``\\t``, ``\\\\``, ``\\0NNN`` …) and conversions
``%s %b %c %d %i %u %o %x %X %e %E %f %g %G %%`` with flags, width and precision; the format
is reused while arguments remain, and missing arguments are empty strings or zero. A
numeric argument that is not a number prints 0 and makes the exit status 1, with the
message busybox writes. Pure.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_CONVERSION = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?([diouxXeEfgGcsb%])")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "v": "\v", '"': '"',
            "'": "'"}
_OCTAL = re.compile(r"\\0?([0-7]{1,3})")


class Printed(NamedTuple):
    """What printf wrote, and its exit status (1 after an invalid number)."""

    stdout: str
    stderr: str
    exit_code: int


def printf(args: list[str]) -> Printed:
    """``printf`` with ``args`` (the format first)."""
    if not args:
        return Printed("", "printf: usage: printf FORMAT [ARGUMENT]...\n", 2)
    fmt, values = args[0], list(args[1:])
    out: list[str] = []
    errors: list[str] = []
    while True:
        consumed = _format_once(fmt, values, out, errors)
        if not values or consumed == 0:
            break
    return Printed("".join(out), "".join(errors), 1 if errors else 0)


def _format_once(fmt: str, values: list[str], out: list[str], errors: list[str]) -> int:
    """Print the format once, taking arguments from ``values``; how many it took."""
    taken, position = 0, 0
    for match in _CONVERSION.finditer(fmt):
        out.append(_unescape(fmt[position:match.start()]))
        position = match.end()
        flags, width, precision, kind = match.groups()
        if kind == "%":
            out.append("%")
            continue
        value = values.pop(0) if values else None
        taken += value is not None
        out.append(_convert(flags, width, precision, kind, value, errors))
    out.append(_unescape(fmt[position:]))
    return taken


def _convert(flags: str, width: str | None, precision: str | None, kind: str, value: str | None,
             errors: list[str]) -> str:
    spec = f"%{flags}{width or ''}{'.' + precision if precision is not None else ''}"
    if kind in "sb":
        text = _unescape(value or "") if kind == "b" else (value or "")
        return (spec + "s") % text
    if kind == "c":
        return (spec + "s") % (value or "")[:1]
    if kind in "eEfgG":
        return (spec + kind) % _number(value, float, errors)
    number = _number(value, int, errors)
    return (spec + ("d" if kind in "iu" else kind)) % number


def _number(value: str | None, kind: type, errors: list[str]) -> float:
    if value is None or value == "":
        return kind(0)
    text = value[1:] if value[:1] in "'\"" else None
    if text is not None:
        return kind(ord(text[0])) if text else kind(0)
    try:
        if kind is not int:
            return float(value)
        octal = re.fullmatch(r"([+-]?)0([0-7]+)", value)  # C's strtol: a leading 0 is octal
        return int(octal.group(1) + octal.group(2), 8) if octal else int(value, 0)
    except ValueError:
        errors.append(f"printf: invalid number '{value}'\n")
        return kind(0)


def _unescape(text: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\" or index + 1 >= len(text):
            out.append(char)
            index += 1
            continue
        octal = _OCTAL.match(text, index)
        if octal is not None:
            out.append(chr(int(octal.group(1), 8)))
            index = octal.end()
            continue
        escaped = text[index + 1]
        out.append(_ESCAPES.get(escaped, "\\" + escaped))
        index += 2
    return "".join(out)
