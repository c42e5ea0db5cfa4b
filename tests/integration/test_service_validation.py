"""Service validation that needs the whole write path: the load balancer status a status
write may set (after the body's defaulting), the selector and targetPort rules, and the
fields a switch to ExternalName drops. Checked against a real kube-apiserver 1.36."""

from __future__ import annotations

from typing import Any

from fakekube import Cluster
from tests.integration.test_request_semantics import request

SERVICES = "/api/v1/namespaces/default/services"
MERGE = "application/merge-patch+json"


def causes(status: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["reason"], c.get("field", ""), c["message"]) for c in status["details"]["causes"]]


def service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"ports": [{"port": 80}], **spec}}


def test_a_load_balancer_status_is_validated(fakekube: Cluster) -> None:
    """A PUT body without spec.type defaults to ClusterIP, so its ingress gets no ipMode and
    is refused for it; a patch of the whole object gets ``VIP`` and only its address is checked."""
    assert request(fakekube, "POST", SERVICES, service("lb", type="LoadBalancer"))[0] == 201
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
            "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}}
    code, status, _ = request(fakekube, "PUT", f"{SERVICES}/lb/status", body)
    assert code == 422
    assert causes(status) == [("FieldValueRequired", "status.loadBalancer.ingress[0].ipMode",
                               "Required value: must be specified when `ip` is set")]
    code, status, _ = request(fakekube, "PATCH", f"{SERVICES}/lb/status",
                              {"status": {"loadBalancer": {"ingress": [{"ip": "not-an-ip"}]}}}, MERGE)
    assert code == 422
    assert causes(status) == [("FieldValueInvalid", "status.loadBalancer.ingress[0].ip",
                               'Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')]
    code, patched, _ = request(fakekube, "PATCH", f"{SERVICES}/lb/status",
                               {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}}, MERGE)
    assert code == 200 and patched["status"]["loadBalancer"]["ingress"] == [{"ip": "192.0.2.10", "ipMode": "VIP"}]


def test_selector_values_and_target_port_names_are_validated(fakekube: Cluster) -> None:
    code, status, _ = request(fakekube, "POST", SERVICES, service("bad", selector={"app": "a b"}))
    assert code == 422
    assert [(c[0], c[1]) for c in causes(status)] == [("FieldValueInvalid", "spec.selector")]
    code, status, _ = request(fakekube, "POST", SERVICES, {**service("bad"), "spec": {
        "ports": [{"port": 80, "targetPort": "Not_A_Name"}]}})
    assert code == 422
    assert causes(status) == [("FieldValueInvalid", "spec.ports[0].targetPort",
                               'Invalid value: "Not_A_Name": must contain only alpha-numeric characters (a-z, 0-9), '
                               "and hyphens (-)")]


def test_a_switch_to_external_name_drops_the_internal_traffic_policy(fakekube: Cluster) -> None:
    assert request(fakekube, "POST", SERVICES, service("chosen"))[0] == 201
    code, patched, _ = request(fakekube, "PATCH", f"{SERVICES}/chosen",
                               {"spec": {"type": "ExternalName", "externalName": "example.com"}}, MERGE)
    assert code == 200, patched
    assert "internalTrafficPolicy" not in patched["spec"] and "clusterIP" not in patched["spec"]
