"""The endpoints and EndpointSlice controllers, at exact virtual times.

Pods are plain pods with labels, pinned to nodes; a default container is Running and
Ready 1 s after it is bound (the kubelet's default behaviour), so a Service created with
them at t=0 has every pod ready at 00:00:01.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.cluster.nodespec import NodeSpec
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from tests.integration.timeline import at

Obj = dict[str, Any]
TRIGGER = "endpoints.kubernetes.io/last-change-trigger-time"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
SERVICE_NAME = "kubernetes.io/service-name"


def stamp(seconds: int) -> str:
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def pod(name: str, node: str, app: str = "web", behaviour: Obj | None = None, ports: list[Obj] | None = None,
        **spec: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": {"app": app}}
    if behaviour is not None:
        meta["annotations"] = {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}
    container: Obj = {"name": "c", "image": "nginx", "ports": ports if ports is not None else
                      [{"name": "http", "containerPort": 8080}]}
    for probe in ("readinessProbe",):
        if probe in spec:
            container[probe] = spec.pop(probe)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": [container], **spec}}


def service(name: str = "web", app: str = "web", **spec: Any) -> Obj:
    body: Obj = {"selector": {"app": app}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def endpoints(cluster: Cluster, name: str = "web") -> Obj:
    return cluster.get("v1", "Endpoints", name)


def addresses(cluster: Cluster, name: str = "web") -> tuple[list[str], list[str]]:
    """(ready pod names, not-ready pod names) of the Endpoints."""
    ready, not_ready = [], []
    for subset in endpoints(cluster, name).get("subsets") or []:
        ready += [a["targetRef"]["name"] for a in subset.get("addresses") or []]
        not_ready += [a["targetRef"]["name"] for a in subset.get("notReadyAddresses") or []]
    return sorted(ready), sorted(not_ready)


def slices(cluster: Cluster, name: str = "web") -> list[Obj]:
    return cluster.list("discovery.k8s.io/v1", "EndpointSlice", "default", label_selector=f"{SERVICE_NAME}={name}")


def slice_conditions(cluster: Cluster, name: str = "web") -> dict[str, tuple[bool, bool, bool]]:
    """Pod name → (ready, serving, terminating) over the Service's slices."""
    found = {}
    for endpoint_slice in slices(cluster, name):
        for endpoint in endpoint_slice["endpoints"] or []:
            c = endpoint["conditions"]
            found[endpoint["targetRef"]["name"]] = (c["ready"], c["serving"], c["terminating"])
    return found


def three_pods(cluster: Cluster, **extra: Any) -> None:
    for i, node in enumerate(("node-1", "node-2", "node-3")):
        cluster.create(pod(f"web-{i}", node, **extra))


# -- the done-when scenario -------------------------------------------------------------------

def test_a_failed_nodes_pods_leave_the_endpoints_the_instant_they_turn_not_ready() -> None:
    cluster = Cluster(nodes=3)
    three_pods(cluster)
    cluster.create(pod("web-3", "node-1"))
    cluster.create(service())
    at(cluster, 1)
    assert addresses(cluster) == (["web-0", "web-1", "web-2", "web-3"], [])
    cluster.fail_node("node-1")
    at(cluster, 54)
    assert addresses(cluster) == (["web-0", "web-1", "web-2", "web-3"], [])
    at(cluster, 55)  # the node lifecycle controller marks node-1 Unknown and its pods NotReady
    ready = next(c for c in cluster.get("v1", "Pod", "web-0")["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["lastTransitionTime"]) == ("False", stamp(55))
    assert addresses(cluster) == (["web-1", "web-2"], ["web-0", "web-3"])
    assert endpoints(cluster)["metadata"]["annotations"][TRIGGER] == stamp(55)
    assert slice_conditions(cluster) == {"web-0": (False, False, False), "web-1": (True, True, False),
                                         "web-2": (True, True, False), "web-3": (False, False, False)}
    assert slices(cluster)[0]["metadata"]["annotations"][TRIGGER] == stamp(55)


def test_the_endpoints_change_in_the_same_instant_as_the_pods() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("web-0", "node-1"))
    cluster.create(service())
    at(cluster, 1)
    start = cluster.store.resource_version
    cluster.fail_node("node-1")
    at(cluster, 60)
    changes = [(c.resource, c.name, c.obj["metadata"].get("resourceVersion")) for c in cluster.store.changes_since(start)
               if c.resource in ("pods", "endpoints", "endpointslices") and c.name.startswith("web")]
    kinds = [resource for resource, _, _ in changes]
    pod_at = kinds.index("pods")
    assert kinds[pod_at + 1:pod_at + 3] == ["endpoints", "endpointslices"]  # right after the pod's NotReady


# -- addresses, ports and conditions ---------------------------------------------------------------

def test_endpoints_list_ready_pods_with_their_node_and_resolved_port() -> None:
    cluster = Cluster(nodes=3)
    three_pods(cluster)
    created = cluster.create(service())
    at(cluster, 1)
    ep = endpoints(cluster)
    assert ep["metadata"]["annotations"] == {TRIGGER: stamp(1)}
    assert "labels" not in ep["metadata"]
    [subset] = ep["subsets"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    first = subset["addresses"][0]
    pod0 = cluster.get("v1", "Pod", first["targetRef"]["name"])
    assert first == {"ip": pod0["status"]["podIP"], "nodeName": pod0["spec"]["nodeName"],
                     "targetRef": {"kind": "Pod", "namespace": "default", "name": pod0["metadata"]["name"],
                                   "uid": pod0["metadata"]["uid"]}}
    assert [a["ip"] for a in subset["addresses"]] == sorted(a["ip"] for a in subset["addresses"])
    [endpoint_slice] = slices(cluster)
    assert endpoint_slice["metadata"]["name"].startswith("web-")
    assert endpoint_slice["metadata"]["generateName"] == "web-"
    assert endpoint_slice["metadata"]["labels"] == {SERVICE_NAME: "web", MANAGED_BY: "endpointslice-controller.k8s.io"}
    assert endpoint_slice["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Service", "name": "web", "uid": created["metadata"]["uid"], "controller": True,
         "blockOwnerDeletion": True}]
    assert endpoint_slice["addressType"] == "IPv4"
    assert endpoint_slice["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    assert [e["targetRef"]["name"] for e in endpoint_slice["endpoints"]] == ["web-0", "web-1", "web-2"]
    assert endpoint_slice["endpoints"][0]["nodeName"] == "node-1"
    assert slice_conditions(cluster) == {f"web-{i}": (True, True, False) for i in range(3)}


def test_a_service_created_after_its_pods_is_triggered_by_its_own_creation() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("web-0", "node-1"))
    at(cluster, 5)
    cluster.create(service())
    assert endpoints(cluster)["metadata"]["annotations"][TRIGGER] == stamp(5)
    assert addresses(cluster) == (["web-0"], [])


def test_a_probe_flip_moves_the_pod_between_ready_and_not_ready() -> None:
    cluster = Cluster(nodes=2)
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 10, "failureThreshold": 3}
    cluster.create(pod("flaky", "node-1", behaviour={"readiness": [[0, True], [30, False]]}, readinessProbe=probe))
    cluster.create(pod("steady", "node-2"))
    cluster.create(service())
    at(cluster, 50)
    assert addresses(cluster) == (["flaky", "steady"], [])
    at(cluster, 51)  # the third failed probe
    assert addresses(cluster) == (["steady"], ["flaky"])
    assert endpoints(cluster)["metadata"]["annotations"][TRIGGER] == stamp(51)
    assert slice_conditions(cluster)["flaky"] == (False, False, False)


def test_unready_pods_are_published_when_the_service_asks() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("never", "node-1", behaviour={"readiness": [[0, False]]},
                       readinessProbe={"exec": {"command": ["true"]}}))
    cluster.create(service(publishNotReadyAddresses=True))
    at(cluster, 5)
    assert addresses(cluster) == (["never"], [])
    assert slice_conditions(cluster) == {"never": (True, False, False)}


def test_a_terminating_pod_leaves_the_endpoints_and_stays_in_the_slice_until_it_is_gone() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("going", "node-1", behaviour={"stop_delay_s": 20}))
    cluster.create(pod("staying", "node-2"))
    cluster.create(service())
    at(cluster, 2)
    cluster.delete("v1", "Pod", "going")  # its container takes 20 s to stop
    assert addresses(cluster) == (["staying"], [])
    assert slice_conditions(cluster)["going"] == (False, True, True)  # still serving, terminating
    at(cluster, 21)
    assert slice_conditions(cluster)["going"] == (False, True, True)
    at(cluster, 22)
    assert "going" not in slice_conditions(cluster)


def test_named_target_ports_resolve_per_pod() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("old", "node-1", ports=[{"name": "http", "containerPort": 8080}]))
    cluster.create(pod("new", "node-2", ports=[{"name": "http", "containerPort": 9090}]))
    cluster.create(pod("bare", "node-2", ports=[]))
    cluster.create(service(ports=[{"name": "http", "port": 80, "targetPort": "http"},
                                  {"name": "raw", "port": 81, "targetPort": 7000}]))
    at(cluster, 1)
    # repacked as upstream does: one subset per set of addresses offering the same ports
    by_ports = {tuple((p["name"], p["port"]) for p in s["ports"]):
                sorted(a["targetRef"]["name"] for a in s["addresses"]) for s in endpoints(cluster)["subsets"]}
    assert by_ports == {(("raw", 7000),): ["bare", "new", "old"], (("http", 8080),): ["old"],
                        (("http", 9090),): ["new"]}
    by_slice = {tuple(p["port"] for p in s["ports"]): [e["targetRef"]["name"] for e in s["endpoints"]]
                for s in slices(cluster)}
    assert by_slice == {(8080, 7000): ["old"], (9090, 7000): ["new"], (7000,): ["bare"]}


def test_hostname_subdomain_and_zone() -> None:
    cluster = Cluster(nodes=(NodeSpec(zone="zone-a"), NodeSpec(zone="zone-b")))
    cluster.create(pod("db-0", "node-1", app="db", hostname="db-0", subdomain="db"))
    cluster.create(pod("db-1", "node-2", app="db", hostname="db-1", subdomain="other"))
    cluster.create(service("db", app="db", clusterIP="None"))
    at(cluster, 1)
    ep = endpoints(cluster, "db")
    assert ep["metadata"]["labels"] == {"service.kubernetes.io/headless": ""}
    hostnames = {a["targetRef"]["name"]: a.get("hostname") for a in ep["subsets"][0]["addresses"]}
    assert hostnames == {"db-0": "db-0", "db-1": None}
    [endpoint_slice] = slices(cluster, "db")
    assert endpoint_slice["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
    found = {e["targetRef"]["name"]: (e.get("hostname"), e["nodeName"], e["zone"]) for e in endpoint_slice["endpoints"]}
    assert found == {"db-0": ("db-0", "node-1", "zone-a"), "db-1": (None, "node-2", "zone-b")}


def test_a_headless_service_without_ports_lists_addresses_only() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("a", "node-1", app="a"))
    cluster.create(service("a", app="a", clusterIP="None", ports=[]))
    at(cluster, 1)
    [subset] = endpoints(cluster, "a")["subsets"]
    assert "ports" not in subset and len(subset["addresses"]) == 1
    assert [s["ports"] for s in slices(cluster, "a")] == [[]] or [s.get("ports") for s in slices(cluster, "a")] == [None]


def test_service_labels_are_copied_and_follow_changes() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("web-0", "node-1"))
    svc = service()
    svc["metadata"]["labels"] = {"tier": "front"}
    cluster.create(svc)
    at(cluster, 1)
    assert endpoints(cluster)["metadata"]["labels"] == {"tier": "front"}
    assert slices(cluster)[0]["metadata"]["labels"]["tier"] == "front"
    cluster.api.patch(cluster.resource("v1", "Service"), "default", "web", "application/merge-patch+json",
                      json.dumps({"metadata": {"labels": {"tier": "back"}}}).encode())
    cluster.settle()
    assert endpoints(cluster)["metadata"]["labels"] == {"tier": "back"}
    assert slices(cluster)[0]["metadata"]["labels"]["tier"] == "back"


def test_a_relabelled_pod_leaves_and_a_deleted_service_takes_its_endpoints() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("web-0", "node-1"))
    cluster.create(pod("web-1", "node-1"))
    cluster.create(service())
    at(cluster, 1)
    cluster.api.patch(cluster.resource("v1", "Pod"), "default", "web-1", "application/merge-patch+json",
                      json.dumps({"metadata": {"labels": {"app": "other"}}}).encode())
    cluster.settle()
    assert addresses(cluster) == (["web-0"], [])
    assert list(slice_conditions(cluster)) == ["web-0"]
    cluster.delete("v1", "Service", "web")
    assert cluster.list("v1", "Endpoints", "default", field_selector="metadata.name=web") == []


def test_a_service_with_no_pods_has_empty_endpoints_and_a_placeholder_slice() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(service())
    assert "subsets" not in endpoints(cluster)
    [placeholder] = slices(cluster)
    assert (placeholder["endpoints"], placeholder["ports"]) in (([], []), (None, None), ([], None), (None, []))
    cluster.create(pod("web-0", "node-1"))
    at(cluster, 1)
    [filled] = slices(cluster)
    assert filled["metadata"]["name"] == placeholder["metadata"]["name"]  # the placeholder is reused
    assert [e["targetRef"]["name"] for e in filled["endpoints"]] == ["web-0"]


def test_selectorless_and_external_name_services_get_nothing_from_the_controllers() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "manual"},
                    "spec": {"ports": [{"port": 80}]}})
    cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
                    "spec": {"type": "ExternalName", "externalName": "example.com", "selector": {"app": "web"}}})
    names = [e["metadata"]["name"] for e in cluster.list("v1", "Endpoints", "default")]
    assert names == ["kubernetes"]
    assert slices(cluster, "manual") == [] and slices(cluster, "ext") == []


def test_a_hundred_endpoints_per_slice() -> None:
    cluster = Cluster(nodes=2)
    for i in range(101):
        cluster.create(pod(f"web-{i:03d}", f"node-{i % 2 + 1}"))
    cluster.create(service())
    at(cluster, 1)
    sizes = sorted(len(s["endpoints"]) for s in slices(cluster))
    assert sizes == [1, 100]
    assert len(endpoints(cluster)["subsets"][0]["addresses"]) == 101


# -- the kubernetes Service ----------------------------------------------------------------------

def test_the_kubernetes_service_points_at_the_apiserver() -> None:
    cluster = Cluster(nodes=2)
    ep = endpoints(cluster, "kubernetes")
    assert ep["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    assert ep["subsets"] == [{"addresses": [{"ip": "172.18.0.1"}],
                              "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    [endpoint_slice] = slices(cluster, "kubernetes")
    assert endpoint_slice["metadata"]["name"] == "kubernetes"
    assert endpoint_slice["metadata"]["labels"] == {SERVICE_NAME: "kubernetes"}
    assert endpoint_slice["endpoints"] == [{"addresses": ["172.18.0.1"], "conditions": {"ready": True}}]
    assert endpoint_slice["ports"] == [{"name": "https", "protocol": "TCP", "port": 6443}]
    at(cluster, 60)  # nobody rewrites them
    assert endpoints(cluster, "kubernetes")["metadata"]["resourceVersion"] == ep["metadata"]["resourceVersion"]


def test_a_control_plane_node_is_the_apiservers_address() -> None:
    control_plane = NodeSpec(name="control-plane", labels={"node-role.kubernetes.io/control-plane": ""})
    cluster = Cluster(nodes=(control_plane, NodeSpec(count=2)))
    assert endpoints(cluster, "kubernetes")["subsets"][0]["addresses"] == [{"ip": "172.18.0.2"}]


def test_slices_are_named_alike_on_every_run() -> None:
    def names() -> list[str]:
        cluster = Cluster(nodes=2, seed=11)
        three_pods_on_two(cluster)
        cluster.create(service())
        at(cluster, 2)
        return [s["metadata"]["name"] for s in slices(cluster)]

    assert names() == names()


def three_pods_on_two(cluster: Cluster) -> None:
    for i in range(3):
        cluster.create(pod(f"web-{i}", f"node-{i % 2 + 1}"))


def test_every_request_for_endpoints_carries_the_133_deprecation_warning() -> None:
    import http.client
    from urllib.parse import urlsplit

    with Cluster() as cluster:
        url = urlsplit(cluster.url)

        def warning(path: str) -> tuple[int, str | None]:
            connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
            try:
                connection.request("GET", path, headers={"Accept": "application/json"})
                response = connection.getresponse()
                response.read()
                return response.status, response.getheader("Warning")
            finally:
                connection.close()

        expected = '299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"'
        assert warning("/api/v1/namespaces/default/endpoints") == (200, expected)
        assert warning("/api/v1/namespaces/default/endpoints/missing") == (404, expected)
        assert warning("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices") == (200, None)


def test_a_hand_edited_slice_is_put_back_one_second_later() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("web-0", "node-1"))
    cluster.create(service())
    at(cluster, 1)
    [endpoint_slice] = slices(cluster)
    name = endpoint_slice["metadata"]["name"]
    assert endpoint_slice["metadata"]["generation"] == 2  # created empty at 0, filled at 1
    cluster.api.patch(cluster.resource("discovery.k8s.io/v1", "EndpointSlice"), "default", name,
                      "application/merge-patch+json", json.dumps({"endpoints": []}).encode())
    cluster.settle()
    assert slices(cluster)[0]["endpoints"] in ([], None)
    at(cluster, 1.999)
    assert slices(cluster)[0]["endpoints"] in ([], None)
    at(cluster, 2)
    assert [e["targetRef"]["name"] for e in slices(cluster)[0]["endpoints"]] == ["web-0"]
    cluster.delete("discovery.k8s.io/v1", "EndpointSlice", name)
    at(cluster, 3)
    assert [e["targetRef"]["name"] for e in slices(cluster)[0]["endpoints"]] == ["web-0"]
    assert slices(cluster)[0]["metadata"]["name"] != name


def test_a_deleted_services_slices_go_with_it() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("web-0", "node-1"))
    cluster.create(service())
    at(cluster, 1)
    assert len(slices(cluster)) == 1
    cluster.delete("v1", "Service", "web")
    assert slices(cluster) == []  # the garbage collector follows the owner reference
