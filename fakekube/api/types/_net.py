"""IP and CIDR field checks the strategies share, worded as apimachinery's ``validation/ip.go``
and core validation's ``ValidateEndpointIP``.

Upstream parses the fields it calls *legacy* (pod CIDRs, endpoint addresses, NetworkPolicy
blocks) with ``netutils.ParseIPSloppy``/``ParseCIDRSloppy``: an IPv4 octet with leading
zeros is read as decimal. Python's ``ipaddress`` refuses those, so they are stripped first.
The stricter checks behind the StrictIPCIDRValidation gate (leading zeros, bits beyond the
prefix) are not applied: fakekube accepts what a release with the gate off accepts.
"""

from __future__ import annotations

import ipaddress
import re

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
INVALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_DOTTED_QUAD = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")


def _unsloppy(text: str) -> str:
    """An IPv4 address with leading zeros as ParseIPSloppy reads it (``010.1.1.1`` is 10.1.1.1)."""
    match = _DOTTED_QUAD.match(text)
    return ".".join(str(int(part)) for part in match.groups()) if match else text


def parse_ip_sloppy(text: str) -> IPAddress | None:
    """``netutils.ParseIPSloppy``: the address, or None (no zone suffix: Go's parser has none)."""
    if not isinstance(text, str) or "%" in text:
        return None
    try:
        return ipaddress.ip_address(_unsloppy(text))
    except ValueError:
        return None


def parse_cidr_sloppy(text: str) -> IPNetwork | None:
    """``netutils.ParseCIDRSloppy``: the masked network, or None."""
    if not isinstance(text, str) or "%" in text or text.count("/") != 1:
        return None
    address, _, prefix = text.partition("/")
    if not prefix.isdigit():
        return None
    try:
        return ipaddress.ip_network(f"{_unsloppy(address)}/{int(prefix)}", strict=False)
    except ValueError:
        return None


def legacy_ip_errors(value: str, path: str) -> list[FieldError]:
    """``IsValidIPForLegacyField`` with strict validation off."""
    return [] if parse_ip_sloppy(value) is not None else [errors.invalid(path, value, INVALID_IP)]


def legacy_cidr_errors(value: str, path: str) -> list[FieldError]:
    """``IsValidCIDRForLegacyField`` with strict validation off."""
    return [] if parse_cidr_sloppy(value) is not None else [errors.invalid(path, value, INVALID_CIDR)]


def endpoint_ip_errors(value: str, path: str) -> list[FieldError]:
    """``ValidateEndpointIP``: an address a Service may route to — not unspecified,
    loopback, link-local or link-local multicast."""
    ip = parse_ip_sloppy(value)
    if ip is None:
        return [errors.invalid(path, value, "must be a valid IP address")]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    problems = []
    if ip.is_unspecified:
        problems.append(errors.invalid(path, value, f"may not be unspecified ({value})"))
    if ip.is_loopback:
        problems.append(errors.invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if ip.is_link_local:
        problems.append(errors.invalid(path, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if ip.is_multicast and _link_local_multicast(ip):
        problems.append(errors.invalid(path, value,
                                       "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
    return problems


def _link_local_multicast(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv4Address):
        return ip in ipaddress.ip_network("224.0.0.0/24")
    return ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02
