"""Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library) as Python functions.

CEL calls ``x.f(a)`` as ``f(x, a)``, so each method is one function of its receiver.
Values CEL has no type for here (a URL, a quantity, an IP, a CIDR) travel as one-key
maps (``{"__quantity__": "1Gi"}``) that only these functions read; comparing two of them
with ``==`` compares their text, not their value (upstream compares values).
A function given arguments it has no overload for raises ``TypeError`` (CEL's
``no such overload``); a bad literal raises ``ValueError`` with upstream's text.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from fractions import Fraction
from typing import Any, Callable

from fakekube.api.wire import regexp
from fakekube.api.wire.cel.meter import MATCH_UNITS, charge
from fakekube.objects.quantity import parse_quantity

_URL, _QUANTITY, _IP, _CIDR = "__url__", "__quantity__", "__ip__", "__cidr__"


def _tagged(value: Any, tag: str) -> str | None:
    if isinstance(value, dict) and len(value) == 1 and tag in value:
        return str(value[tag])
    return None


def _need(value: Any, tag: str) -> str:
    text = _tagged(value, tag)
    if text is None:
        raise TypeError("no such overload")
    return text


# -- lists -------------------------------------------------------------------------------------

def _is_sorted(items: Any) -> bool:
    if not isinstance(items, list):
        raise TypeError("no such overload")
    return all(a <= b for a, b in zip(items, items[1:]))


def _index_of(receiver: Any, needle: Any, *start: int) -> int:
    if isinstance(receiver, str) and isinstance(needle, str):
        return receiver.find(needle, *start) if start else receiver.find(needle)
    if isinstance(receiver, list) and not start:
        return next((i for i, item in enumerate(receiver) if _same(item, needle)), -1)
    raise TypeError("no such overload")


def _last_index_of(receiver: Any, needle: Any, *end: int) -> int:
    if isinstance(receiver, str) and isinstance(needle, str):
        return receiver.rfind(needle, 0, end[0] + len(needle)) if end else receiver.rfind(needle)
    if isinstance(receiver, list) and not end:
        hits = [i for i, item in enumerate(receiver) if _same(item, needle)]
        return hits[-1] if hits else -1
    raise TypeError("no such overload")


def _same(a: Any, b: Any) -> bool:
    """CEL equality: ``true`` is not ``1``."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


# -- regex -------------------------------------------------------------------------------------

def _regexp(text: Any, pattern: Any) -> regexp.Regexp:
    """The pattern compiled as Go's regexp (RE2: linear time), refused with upstream's text."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise TypeError("no such overload")
    try:
        return regexp.compile(pattern)
    except regexp.RegexpError as exc:
        raise ValueError(f"Illegal regex: {exc}") from None


def _find(text: str, pattern: str) -> str:
    return _regexp(text, pattern).find(text)


def _find_all(text: str, pattern: str, *limit: int) -> list[str]:
    if limit and (not isinstance(limit[0], int) or isinstance(limit[0], bool)):
        raise TypeError("no such overload")
    return _regexp(text, pattern).find_all(text, limit[0] if limit else -1, on_match=_charge_match)


def _charge_match() -> None:
    charge(MATCH_UNITS)


# -- url ---------------------------------------------------------------------------------------

def _parse_url(text: str) -> urllib.parse.SplitResult:
    parts = urllib.parse.urlsplit(text)
    if not (parts.scheme and parts.netloc) and not text.startswith("/"):
        raise ValueError(f"URL parse error during conversion from string: parse {text!r}: invalid URI for request")
    return parts


def _url(text: str) -> dict[str, str]:
    _parse_url(text)
    return {_URL: text}


def _is_url(text: str) -> bool:
    try:
        _parse_url(text)
    except ValueError:
        return False
    return True


def _url_part(part: str) -> Callable[[Any], Any]:
    def get(value: Any) -> Any:
        parts = _parse_url(_need(value, _URL))
        if part == "host":
            return parts.netloc.rpartition("@")[2]
        if part == "hostname":
            return parts.hostname or ""
        if part == "port":
            return str(parts.port) if parts.port is not None else ""
        if part == "path":
            return parts.path
        if part == "query":
            return {k: v for k, v in urllib.parse.parse_qs(parts.query, keep_blank_values=True).items()}
        return parts.scheme
    return get


# -- quantity ----------------------------------------------------------------------------------

def _quantity(text: str) -> dict[str, str]:
    parse_quantity(text)
    return {_QUANTITY: text}


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _amount(value: Any) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return parse_quantity(_need(value, _QUANTITY))


def _compare(a: Any, b: Any) -> int:
    x, y = _amount(a), _amount(b)
    return (x > y) - (x < y)


def _as_integer(value: Any) -> int:
    amount = _amount(value)
    if amount.denominator != 1:
        raise ValueError("cannot convert value to integer")
    return int(amount)


def _sum_quantity(a: Any, b: Any) -> dict[str, str]:
    return {_QUANTITY: _fraction_text(_amount(a) + _amount(b))}


def _difference(a: Any, b: Any) -> dict[str, str]:
    return {_QUANTITY: _fraction_text(_amount(a) - _amount(b))}


def _fraction_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    nanos = value * 10**9
    return f"{int(nanos)}n"


def _sign(value: Any) -> int:
    amount = _amount(value)
    return (amount > 0) - (amount < 0)


# -- ip and cidr -------------------------------------------------------------------------------

def _parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if "%" in text or (text.count(".") == 3 and any(p.startswith("0") and p != "0" for p in text.split("."))):
        raise ValueError(f"IP Address {text!r} parse error during conversion from string")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"IP Address {text!r} parse error during conversion from string") from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def _ip(value: Any) -> dict[str, str]:
    cidr = _tagged(value, _CIDR)
    if cidr is not None:
        return {_IP: str(ipaddress.ip_interface(cidr).ip)}
    if not isinstance(value, str):
        raise TypeError("no such overload")
    return {_IP: str(_parse_ip(value))}


def _is_ip(text: str) -> bool:
    try:
        _parse_ip(text)
    except ValueError:
        return False
    return True


def _address(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if isinstance(value, str):
        return _parse_ip(value)
    return ipaddress.ip_address(_need(value, _IP))


def _ip_test(attribute: str) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        address = _address(value)
        if attribute == "is_global_unicast":
            return not (address.is_multicast or address.is_loopback or address.is_link_local
                        or address.is_unspecified or address == ipaddress.ip_address("255.255.255.255"))
        if attribute == "is_link_local_multicast":
            return address.is_multicast and (
                address in ipaddress.ip_network("224.0.0.0/24") if address.version == 4
                else address in ipaddress.ip_network("ff02::/16"))
        return bool(getattr(address, attribute))
    return test


def _family(value: Any) -> int:
    return _address(value).version


def _parse_cidr(text: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    address, slash, prefix = text.partition("/")
    if not slash:
        raise ValueError(f"network address parse error during conversion from string: netip.ParsePrefix({text!r}): no '/'")
    _parse_ip(address)
    return ipaddress.ip_interface(text)


def _cidr(text: str) -> dict[str, str]:
    return {_CIDR: str(_parse_cidr(text))}


def _is_cidr(text: str) -> bool:
    try:
        _parse_cidr(text)
    except ValueError:
        return False
    return True


def _network(value: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    text = value if isinstance(value, str) else _need(value, _CIDR)
    return _parse_cidr(text).network


def _contains_ip(cidr: Any, value: Any) -> bool:
    address = _address(value)
    network = _network(cidr)
    return address.version == network.version and address in network


def _contains_cidr(cidr: Any, other: Any) -> bool:
    outer, inner = _network(cidr), _network(other)
    return inner.version == outer.version and inner.subnet_of(outer)  # type: ignore[arg-type]


def _prefix_length(cidr: Any) -> int:
    return _network(cidr).prefixlen


def _masked(cidr: Any) -> dict[str, str]:
    return {_CIDR: str(_network(cidr))}


#: Every function this module adds, by the name CEL calls it.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "isSorted": _is_sorted, "indexOf": _index_of, "lastIndexOf": _last_index_of,
    "find": _find, "findAll": _find_all,
    "url": _url, "isURL": _is_url, "getScheme": _url_part("scheme"), "getHost": _url_part("host"),
    "getHostname": _url_part("hostname"), "getPort": _url_part("port"),
    "getEscapedPath": _url_part("path"), "getQuery": _url_part("query"),
    "quantity": _quantity, "isQuantity": _is_quantity, "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0, "compareTo": _compare, "asInteger": _as_integer,
    "isInteger": lambda q: _amount(q).denominator == 1, "asApproximateFloat": lambda q: float(_amount(q)),
    "sign": _sign, "add": _sum_quantity, "sub": _difference,
    "ip": _ip, "isIP": _is_ip, "family": _family, "isUnspecified": _ip_test("is_unspecified"),
    "isLoopback": _ip_test("is_loopback"), "isLinkLocalMulticast": _ip_test("is_link_local_multicast"),
    "isLinkLocalUnicast": _ip_test("is_link_local"), "isGlobalUnicast": _ip_test("is_global_unicast"),
    "cidr": _cidr, "isCIDR": _is_cidr, "containsIP": _contains_ip, "containsCIDR": _contains_cidr,
    "prefixLength": _prefix_length, "masked": _masked,
}
