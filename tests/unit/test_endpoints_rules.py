"""The endpoints controllers' pure rules on worked examples: pod membership and projection
keys, port lookup, trigger times, subset repacking and truncation, the EndpointSlice plan
(filling, the slice to fill, the placeholder, creates paired with deletes), and the
Endpoints table cell."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from fakekube.api.table.network import _endpoints_cells
from fakekube.controllers.endpoints import build_subsets, repack, truncate
from fakekube.controllers.endpointslice.reconciler import finalize_plan, plan, slice_to_fill
from fakekube.objects.endpoints import (
    PodProjection,
    TriggerTimeTracker,
    find_port,
    pod_projection,
    services_to_update,
    should_pod_be_in_endpoints,
)

Obj = dict[str, Any]
NOW = datetime(2025, 1, 1, tzinfo=timezone.utc)


def pod(name: str, ip: str | None = "10.244.0.5", ready: bool = True, labels: Obj | None = None,
        ports: list[Obj] | None = None, node: str = "node-1", **meta: Any) -> Obj:
    status: Obj = {"phase": "Running",
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                   "lastTransitionTime": "2025-01-01T00:00:01Z"}]}
    if ip:
        status.update(podIP=ip, podIPs=[{"ip": ip}])
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels or {"app": "web"},
                         **meta},
            "spec": {"nodeName": node, "containers": [{"name": "c", "ports": ports or []}]},
            "status": status}


def service(**spec: Any) -> Obj:
    body: Obj = {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
                 "clusterIP": "10.96.5.5", "ipFamilies": ["IPv4"]}
    body.update(spec)
    return {"metadata": {"name": "web", "namespace": "default", "uid": "svc-uid",
                         "creationTimestamp": "2025-01-01T00:00:00Z"}, "spec": body}


# -- membership ----------------------------------------------------------------------------

def test_which_pods_belong_in_endpoints() -> None:
    assert should_pod_be_in_endpoints(pod("a"), False)
    assert not should_pod_be_in_endpoints(pod("no-ip", ip=None), True)
    done = pod("done")
    done["status"]["phase"] = "Succeeded"
    assert not should_pod_be_in_endpoints(done, True)
    going = pod("going", deletionTimestamp="2025-01-01T00:00:30Z")
    assert not should_pod_be_in_endpoints(going, False) and should_pod_be_in_endpoints(going, True)


def test_named_ports_are_looked_up_by_protocol_and_in_sidecars() -> None:
    p = pod("p", ports=[{"name": "dns", "containerPort": 53, "protocol": "UDP"}])
    p["spec"]["initContainers"] = [{"name": "proxy", "restartPolicy": "Always", "ports": [{"name": "admin", "containerPort": 9901}]},
                                   {"name": "init", "ports": [{"name": "setup", "containerPort": 1}]}]
    assert find_port(p, {"targetPort": "dns", "protocol": "UDP"}) == 53
    assert find_port(p, {"targetPort": "dns", "protocol": "TCP"}) is None
    assert find_port(p, {"targetPort": "admin", "protocol": "TCP"}) == 9901
    assert find_port(p, {"targetPort": "setup", "protocol": "TCP"}) is None
    assert find_port(p, {"targetPort": 7000, "protocol": "TCP"}) == 7000


def test_projection_keys_name_only_the_services_concerned() -> None:
    web, db = service(), service(selector={"app": "db"})
    db["metadata"]["name"] = "db"
    nothing = service(selector=None)
    nothing["metadata"]["name"] = "manual"
    before, after = pod("p", labels={"app": "web"}), pod("p", labels={"app": "db"})
    moved = pod_projection(before, after)
    assert moved == PodProjection("default", {"app": "db"}, {"app": "web"}, False)
    assert services_to_update([web, db, nothing], moved) == ["default/web", "default/db"]
    assert PodProjection.from_key(moved.key()) == moved
    annotated = pod("p")
    annotated["metadata"]["annotations"] = {"x": "y"}
    assert pod_projection(pod("p"), annotated) is None  # nothing an endpoint shows
    unready = pod("p", ready=False)
    assert services_to_update([web, db], pod_projection(pod("p"), unready)) == ["default/web"]
    # a pod that changed and moved: every Service it was or is in
    both = pod_projection(pod("p", labels={"app": "web"}), pod("p", ready=False, labels={"app": "db"}))
    assert services_to_update([web, db], both) == ["default/web", "default/db"]


def test_trigger_times_are_the_earliest_change_since_the_last_sync() -> None:
    tracker = TriggerTimeTracker()
    svc = service()
    first = tracker.compute(svc, [pod("a")])
    assert first == datetime(2025, 1, 1, tzinfo=timezone.utc)  # a new Service: its creation
    assert tracker.compute(svc, [pod("a")]) is None  # nothing changed
    later = pod("b")
    later["status"]["conditions"][0]["lastTransitionTime"] = "2025-01-01T00:00:07Z"
    flipped = pod("a")
    flipped["status"]["conditions"][0]["lastTransitionTime"] = "2025-01-01T00:00:05Z"
    assert tracker.compute(svc, [flipped, later]) == datetime(2025, 1, 1, 0, 0, 5, tzinfo=timezone.utc)
    tracker.forget("default", "web")
    assert tracker.compute(svc, [flipped]) == datetime(2025, 1, 1, tzinfo=timezone.utc)
    small = TriggerTimeTracker(limit=1)
    small.compute(svc, [])
    other = service()
    other["metadata"]["name"] = "other"
    small.compute(other, [])
    assert small.compute(svc, []) is not None  # forgotten past the limit: treated as new


# -- Endpoints -----------------------------------------------------------------------------

def test_subsets_are_repacked_by_the_ports_each_address_offers() -> None:
    svc = service(ports=[{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
                         {"name": "raw", "port": 81, "targetPort": 7000, "protocol": "TCP"}])
    a = pod("a", ip="10.244.0.9", ports=[{"name": "http", "containerPort": 8080}])
    b = pod("b", ip="10.244.0.10", ready=False, ports=[{"name": "http", "containerPort": 8080}])
    subsets = build_subsets(svc, [a, b])
    assert subsets == [{
        "addresses": [{"ip": "10.244.0.9", "nodeName": "node-1",
                       "targetRef": {"kind": "Pod", "namespace": "default", "name": "a", "uid": "uid-a"}}],
        "notReadyAddresses": [{"ip": "10.244.0.10", "nodeName": "node-1",
                               "targetRef": {"kind": "Pod", "namespace": "default", "name": "b", "uid": "uid-b"}}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}, {"name": "raw", "port": 7000, "protocol": "TCP"}],
    }]


def test_an_address_ready_for_one_entry_counts_as_ready() -> None:
    address = {"ip": "10.0.0.1", "targetRef": {"uid": "u"}}
    port = {"port": 80, "protocol": "TCP"}
    assert repack([(address, port, False), (address, port, True)]) == [{"addresses": [address], "ports": [port]}]


def test_truncation_keeps_ready_addresses_first_in_proportion() -> None:
    def addresses(prefix: str, count: int) -> list[Obj]:
        return [{"ip": f"{prefix}.{i}"} for i in range(count)]

    subsets = [{"addresses": addresses("a", 3), "notReadyAddresses": addresses("n", 4)},
               {"addresses": addresses("b", 1), "notReadyAddresses": addresses("m", 2)}]
    cut, truncated = truncate(subsets, max_capacity=6)
    # 4 ready fit; 2 places for 6 not-ready ones: ceil(4/6*2) = 2 to the first subset, 0 left
    assert truncated
    assert [(len(s.get("addresses", [])), len(s.get("notReadyAddresses", []))) for s in cut] == [(3, 2), (1, 0)]
    cut, truncated = truncate(subsets, max_capacity=3)  # too many ready: only ready ones, in proportion
    assert [(len(s.get("addresses", [])), len(s.get("notReadyAddresses", []))) for s in cut] == [(3, 0), (0, 0)]
    assert truncate(subsets, max_capacity=10) == (subsets, False)


def test_the_endpoints_cell() -> None:
    ep = {"metadata": {"name": "db", "creationTimestamp": "2025-01-01T00:00:00Z"},
          "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}]}
    assert _endpoints_cells(ep, NOW)[1] == "10.0.0.1,10.0.0.2"  # headless without ports: bare IPs
    many = {"metadata": {"name": "w"}, "subsets": [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(5)],
                                                    "ports": [{"port": 80}]}]}
    assert _endpoints_cells(many, NOW)[1] == "10.0.0.0:80,10.0.0.1:80,10.0.0.2:80 + 2 more..."
    assert _endpoints_cells({"metadata": {"name": "e"}, "subsets": [{"notReadyAddresses": [{"ip": "1.1.1.1"}],
                                                                     "ports": [{"port": 80}]}]}, NOW)[1] == "<none>"


# -- EndpointSlices --------------------------------------------------------------------------

def _slice(name: str, endpoints: list[Obj], ports: list[Obj] | None = None) -> Obj:
    return {"metadata": {"name": name, "namespace": "default",
                         "labels": {"kubernetes.io/service-name": "web",
                                    "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "web", "uid": "svc-uid",
                                              "controller": True, "blockOwnerDeletion": True}]},
            "addressType": "IPv4", "endpoints": endpoints,
            "ports": ports if ports is not None else [{"name": "http", "protocol": "TCP", "port": 8080}]}


def _pods(count: int, start: int = 0) -> list[Obj]:
    return [pod(f"p{i:03d}", ip=f"10.244.{i // 200}.{i % 200 + 1}") for i in range(start, start + count)]


def _node(_: str) -> Obj:
    return {"metadata": {"name": "node-1", "labels": {"topology.kubernetes.io/zone": "z"}}}


def test_new_endpoints_fill_slices_of_at_most_the_maximum() -> None:
    [one], stale = plan(service(), _pods(250), _node, [])
    assert stale == [] and one.updates == [] and one.deletes == []
    assert [len(s["endpoints"]) for s in one.creates] == [100, 100, 50]
    first = one.creates[0]["endpoints"][0]
    assert first == {"addresses": ["10.244.0.1"], "conditions": {"ready": True, "serving": True, "terminating": False},
                     "targetRef": {"kind": "Pod", "namespace": "default", "name": "p000", "uid": "uid-p000"},
                     "nodeName": "node-1", "zone": "z"}


def test_leftovers_go_to_the_slice_closest_to_full() -> None:
    assert slice_to_fill([_slice("a", [{}] * 50), _slice("b", [{}] * 95), _slice("c", [{}] * 97)], 5, 100)["metadata"]["name"] == "b"
    assert slice_to_fill([_slice("a", [{}] * 99)], 5, 100) is None


def test_existing_endpoints_stay_where_they_are_and_changes_are_updates() -> None:
    pods = _pods(3)
    [first], _ = plan(service(), pods, _node, [])
    existing = dict(first.creates[0], metadata=dict(first.creates[0]["metadata"], name="web-abcde"))
    pods[1]["status"]["conditions"][0]["status"] = "False"
    [second], _ = plan(service(), pods + _pods(1, start=3), _node, [existing])
    assert second.creates == [] and second.deletes == []
    [updated] = second.updates
    assert [e["targetRef"]["name"] for e in updated["endpoints"]] == ["p000", "p001", "p002", "p003"]
    assert updated["endpoints"][1]["conditions"] == {"ready": False, "serving": False, "terminating": False}
    [third], _ = plan(service(), pods + _pods(1, start=3), _node, [updated])
    assert (third.creates, third.updates, third.deletes) == ([], [], [])  # nothing to do


def test_an_empty_service_keeps_one_placeholder_and_a_replacement_reuses_a_name() -> None:
    [empty], _ = plan(service(), [], _node, [])
    [placeholder] = empty.creates
    assert (placeholder["endpoints"], placeholder["ports"]) == ([], [])
    kept = dict(placeholder, metadata=dict(placeholder["metadata"], name="web-zzzzz"))
    [again], _ = plan(service(), [], _node, [kept])
    assert (again.creates, again.updates, again.deletes) == ([], [], [])
    # pods with other ports: a new slice and the old one deleted, paired into one update
    old = _slice("web-old", [], ports=[{"name": "http", "protocol": "TCP", "port": 9999}])
    old["endpoints"] = [{"addresses": ["10.244.0.1"], "conditions": {"ready": True},
                         "targetRef": {"kind": "Pod", "namespace": "default", "name": "gone", "uid": "x"}}]
    [moved], _ = plan(service(), _pods(1), _node, [old])
    assert len(moved.creates) == 1 and len(moved.deletes) == 1
    finalize_plan(service(), moved)
    assert moved.creates == [] and moved.deletes == []
    assert [s["metadata"]["name"] for s in moved.updates] == ["web-old"]
    assert moved.updates[0]["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]


def test_a_pod_on_a_missing_node_is_skipped_with_upstreams_error() -> None:
    [one], _ = plan(service(), _pods(1), lambda node: None, [])
    assert one.errors == ["skipping Pod p000 for Service default/web: Node node-1 Not Found"]
    [published], _ = plan(service(publishNotReadyAddresses=True), _pods(1), lambda node: None, [])
    assert published.errors == [] and len(published.creates[0]["endpoints"]) == 1


def test_slices_of_an_address_type_no_longer_served_are_deleted() -> None:
    v6 = _slice("web-v6", [])
    v6["addressType"] = "IPv6"
    _, stale = plan(service(), [], _node, [v6])
    assert stale == [v6]


def test_an_endpoints_over_capacity_is_annotated_truncated_and_the_mark_goes_when_it_fits() -> None:
    from fakekube.controllers.endpoints import _desired

    svc = service()
    subsets = [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(3)], "ports": [{"port": 80, "protocol": "TCP"}]}]
    over = _desired(None, svc, subsets, None, max_capacity=2)
    assert over["metadata"]["annotations"] == {"endpoints.kubernetes.io/over-capacity": "truncated"}
    assert len(over["subsets"][0]["addresses"]) == 2
    fits = _desired(over, svc, subsets, NOW, max_capacity=3)
    assert fits["metadata"]["annotations"] == {"endpoints.kubernetes.io/last-change-trigger-time": "2025-01-01T00:00:00Z"}
    assert len(fits["subsets"][0]["addresses"]) == 3
