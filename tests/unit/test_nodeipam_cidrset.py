"""Upstream's cidrset allocation order: next free after the last allocation, wrapping round."""

from __future__ import annotations

import ipaddress

import pytest

from fakekube.controllers.nodeipam import CIDRExhausted, CIDRSet, NodeIPAMController


def blocks(cidrs: CIDRSet, count: int) -> list[str]:
    return [str(cidrs.allocate_next()) for _ in range(count)]


def test_the_first_node_gets_the_first_block() -> None:
    assert blocks(CIDRSet("10.244.0.0/16", 24), 3) == ["10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24"]


def test_a_released_block_is_not_reused_until_the_search_wraps() -> None:
    cidrs = CIDRSet("10.0.0.0/22", 24)  # four blocks
    assert blocks(cidrs, 3) == ["10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24"]
    cidrs.release(ipaddress.ip_network("10.0.0.0/24"))
    assert blocks(cidrs, 2) == ["10.0.3.0/24", "10.0.0.0/24"]


def test_exhaustion_raises_until_a_block_is_released() -> None:
    cidrs = CIDRSet("10.0.0.0/23", 24)
    blocks(cidrs, 2)
    with pytest.raises(CIDRExhausted, match="no remaining CIDRs"):
        cidrs.allocate_next()
    cidrs.release(ipaddress.ip_network("10.0.1.0/24"))
    assert blocks(cidrs, 1) == ["10.0.1.0/24"]


def test_occupied_blocks_are_skipped() -> None:
    cidrs = CIDRSet("10.244.0.0/16", 24)
    cidrs.occupy(ipaddress.ip_network("10.244.0.0/23"))  # two blocks, e.g. a node that came with a podCIDR
    cidrs.occupy(ipaddress.ip_network("192.168.0.0/24"))  # outside: ignored
    assert blocks(cidrs, 1) == ["10.244.2.0/24"]
    assert len(cidrs) == 3


def test_blocks_inside_the_service_range_are_never_handed_out() -> None:
    controller = NodeIPAMController("10.0.0.0/8", 16, service_cidr="10.96.0.0/12")
    handed = blocks(controller.cidrs, 97)
    assert handed[95] == "10.95.0.0/16" and handed[96] == "10.112.0.0/16"


def test_ipv6_blocks() -> None:
    assert blocks(CIDRSet("fd00:10:244::/48", 64), 2) == ["fd00:10:244::/64", "fd00:10:244:1::/64"]


@pytest.mark.parametrize(("cidr", "mask", "message"), [
    ("10.244.0.0/16", 8, "must be between"),
    ("10.0.0.0/8", 25, "more than 16 bits longer"),
    ("10.244.1.0/16", 24, "has host bits set"),
])
def test_impossible_settings_are_refused(cidr: str, mask: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CIDRSet(cidr, mask)
