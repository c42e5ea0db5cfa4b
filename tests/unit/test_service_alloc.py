"""The Service allocators' order and texts (kube-apiserver 1.33's IPAddress and port
allocators), with a scripted random source so each pick is worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.api.machinery.errors import ApiError, emulating
from fakekube.objects.versions import release
from fakekube.api.types.service_alloc import (
    IPRange,
    PortRange,
    ServiceNetwork,
    allocate_cluster_ips,
    allocate_node_ports,
    init_ip_family_fields,
    scan_with_offset,
)


class Scripted:
    """A random source that answers ``randrange`` from a script (and checks the bounds asked)."""

    def __init__(self, *answers: int) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[int, int]] = []

    def randrange(self, start: int, stop: int) -> int:
        self.asked.append((start, stop))
        value = self.answers.pop(0)
        assert start <= value < stop
        return value

    def choice(self, seq: Any) -> Any:  # pragma: no cover - unused
        return seq[0]

    def uid(self) -> str:  # pragma: no cover - unused
        return "uid"

    def name_suffix(self, length: int = 5) -> str:  # pragma: no cover - unused
        return "x" * length

    def secret(self, label: str, length: int = 32) -> bytes:  # pragma: no cover - unused
        return b"x" * length


def test_the_scan_starts_at_a_random_point_of_the_upper_band_and_moves_forward() -> None:
    taken = {7, 8}
    rng = Scripted(3)
    # size 10, lower band [0, 4): upper band [4, 10) of 6; start 4 + 3 = 7, 7 and 8 taken → 9
    assert scan_with_offset(10, 4, taken.__contains__, rng) == 9
    assert rng.asked == [(0, 6)]


def test_the_scan_wraps_round_the_upper_band_then_falls_back_to_the_lower_band() -> None:
    assert scan_with_offset(10, 4, {9}.__contains__, Scripted(5)) == 4  # 9 taken → wraps to 4
    upper_full = set(range(4, 10)) | {2}
    rng = Scripted(5, 2)
    assert scan_with_offset(10, 4, upper_full.__contains__, rng) == 3  # lower band from 2: taken → 3
    assert rng.asked == [(0, 6), (0, 4)]
    assert scan_with_offset(10, 4, set(range(10)).__contains__, Scripted(0, 0)) is None


def test_ip_range_bands_as_upstream_computes_them() -> None:
    kind = IPRange("10.96.0.0/16")
    assert (kind.first_address, kind.size, kind.offset) == ("10.96.0.1", 65534, 256)
    assert (IPRange("10.96.0.0/12").offset, IPRange("10.0.0.0/24").offset, IPRange("10.0.0.0/28").offset) == (256, 16, 0)
    # offset 256: the dynamic band starts at 10.96.1.1; a draw of 0 gives exactly that address
    assert kind.allocate_next(set(), Scripted(0)) == "10.96.1.1"
    assert kind.allocate_next({"10.96.1.1"}, Scripted(0)) == "10.96.1.2"
    assert kind.allocate_next(set(), Scripted(65277)) == "10.96.255.254"  # the last, never the broadcast
    tiny = IPRange("192.168.0.0/29")  # 6 hosts, no lower band
    assert tiny.allocate_next({"192.168.0.1"}, Scripted(0)) == "192.168.0.2"


def test_port_range_bands_as_upstream_computes_them() -> None:
    ports = PortRange("30000-32767")
    assert (ports.base, ports.size, ports.offset, str(ports)) == (30000, 2768, 86, "30000-32767")
    assert ports.allocate_next(set(), Scripted(0)) == 30086
    assert ports.allocate_next({32767}, Scripted(2681)) == 30086  # wraps past the top of the range
    assert PortRange("30000+99").size == 100
    with pytest.raises(ValueError):
        PortRange("32767-30000")


def test_refusals_carry_upstream_texts() -> None:
    kind = IPRange("10.96.0.0/16")
    assert kind.refusal("10.0.0.5", set()) == "the provided network does not match the current range"
    assert kind.refusal("10.96.0.0", set()) == ("the provided IP (10.96.0.0) is not in the valid range. "
                                                "The range of valid IPs is 10.96.0.0/16")
    assert kind.refusal("10.96.0.10", {"10.96.0.10"}) == "provided IP is already allocated"
    assert kind.refusal("10.96.0.10", set()) is None
    ports = PortRange("30000-32767")
    assert ports.refusal(80, set()) == "provided port is not in the valid range. The range of valid ports is 30000-32767"
    assert ports.refusal(30080, {30080}) == "provided port is already allocated"


def test_service_cidrs_too_large_for_the_dual_written_bitmap_are_refused() -> None:
    with pytest.raises(ValueError, match=r"the mask must be >= /12"):
        ServiceNetwork("10.0.0.0/8")
    with pytest.raises(ValueError, match="shortest allowed prefix length for service CIDR is 64"):
        ServiceNetwork("fd00::/48")
    assert ServiceNetwork("fd00::/108").family == "IPv6"


def _message(error: ApiError) -> str:
    return error.message


def test_an_explicit_ip_in_use_is_refused_with_the_whole_cluster_ips_list() -> None:
    spec = {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "ipFamilies": ["IPv4"]}
    with pytest.raises(ApiError) as refused:
        allocate_cluster_ips("dns", spec, ServiceNetwork(), {"10.96.0.10"}, Scripted())
    assert refused.value.code == 422
    assert _message(refused.value) == ('Service "dns" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: '
                                       'failed to allocate IP 10.96.0.10: provided IP is already allocated')
    with emulating(release("1.33")), pytest.raises(ApiError) as in_1_33:  # Go's %#v up to 1.33
        allocate_cluster_ips("dns", spec, ServiceNetwork(), {"10.96.0.10"}, Scripted())
    assert _message(in_1_33.value) == ('Service "dns" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: '
                                       'failed to allocate IP 10.96.0.10: provided IP is already allocated')


def test_a_full_range_is_an_internal_error() -> None:
    spec = {"type": "ClusterIP", "ipFamilies": ["IPv4"]}
    used = {f"192.168.0.{i}" for i in range(1, 7)}
    with pytest.raises(ApiError) as full:
        allocate_cluster_ips("x", spec, ServiceNetwork("192.168.0.0/29"), used, Scripted(0))
    assert (full.value.code, full.value.message) == (500, "Internal error occurred: failed to allocate a serviceIP: range is full")


def test_ports_of_one_number_share_a_node_port_on_create() -> None:
    spec = {"type": "NodePort", "ports": [{"name": "a", "port": 53, "protocol": "TCP"},
                                          {"name": "b", "port": 53, "protocol": "UDP"},
                                          {"name": "c", "port": 9153, "protocol": "TCP", "nodePort": 30200}]}
    used: set[int] = set()
    allocate_node_ports("dns", spec, None, ServiceNetwork(), used, Scripted(14))  # 30086 + 14
    assert [p["nodePort"] for p in spec["ports"]] == [30100, 30100, 30200]
    assert used == {30100, 30200}


def test_headless_services_without_a_selector_ask_for_both_families() -> None:
    spec: dict[str, Any] = {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}
    init_ip_family_fields("h", spec, None, ServiceNetwork())
    assert (spec["ipFamilyPolicy"], spec["ipFamilies"]) == ("RequireDualStack", ["IPv4", "IPv6"])
    spec = {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"], "selector": {"app": "a"}}
    init_ip_family_fields("h", spec, None, ServiceNetwork())
    assert (spec["ipFamilyPolicy"], spec["ipFamilies"]) == ("SingleStack", ["IPv4"])


def test_families_this_cluster_does_not_serve_are_refused() -> None:
    with pytest.raises(ApiError) as dual:
        init_ip_family_fields("d", {"type": "ClusterIP", "ipFamilyPolicy": "RequireDualStack"}, None, ServiceNetwork())
    assert dual.value.message == ('Service "d" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": '
                                  'this cluster is not configured for dual-stack services')
    with pytest.raises(ApiError) as v6:
        init_ip_family_fields("v6", {"type": "ClusterIP", "ipFamilies": ["IPv6"]}, None, ServiceNetwork())
    assert v6.value.message == 'Service "v6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster'
    spec: dict[str, Any] = {"type": "ClusterIP", "ipFamilyPolicy": "PreferDualStack"}
    init_ip_family_fields("p", spec, None, ServiceNetwork())
    assert spec["ipFamilies"] == ["IPv4"]  # prefer: one family on a single-stack cluster
