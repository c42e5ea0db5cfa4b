"""Service defaults, IP and node-port allocation, and the clusterIP update rule."""

from __future__ import annotations

import copy
import ipaddress
import random
from datetime import datetime, timezone

import pytest

from fakekube.api import types
from fakekube.api.machinery.errors import ApiError, emulating
from fakekube.api.registry import WriteContext
from fakekube.objects.versions import release

SERVICES = types.SERVICES.strategy


class _Store:
    def __init__(self, services=()):
        self.services = list(services)

    def get_object(self, group, resource, namespace, name):
        return None

    def list_objects(self, group, resource, namespace=""):
        return self.services if (group, resource) == ("", "services") else []


def _ctx(seed=1, services=()):
    return WriteContext(datetime(2025, 1, 1, tzinfo=timezone.utc), random.Random(seed), _Store(services))


def _create(svc, ctx):
    svc = copy.deepcopy(svc)
    SERVICES.default(svc, ctx)
    SERVICES.prepare_for_create(svc, ctx)
    return svc


def _svc(**spec):
    base = {"selector": {"app": "web"}, "ports": [{"port": 80}]}
    base.update(spec)
    return {"metadata": {"name": "web", "namespace": "default"}, "spec": base}


def test_clusterip_service_defaults_and_allocation():
    svc = _create(_svc(), _ctx())
    spec = svc["spec"]
    assert spec["type"] == "ClusterIP"
    assert spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["internalTrafficPolicy"] == "Cluster"
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    ip = ipaddress.ip_address(spec["clusterIP"])
    assert ip in ipaddress.ip_network("10.96.0.0/12") and str(ip) != "10.96.0.1"
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert "externalTrafficPolicy" not in spec
    assert svc["status"] == {"loadBalancer": {}}
    assert SERVICES.validate(svc) == []


def test_allocation_is_deterministic_and_avoids_used_ips():
    first = _create(_svc(), _ctx(seed=7))["spec"]["clusterIP"]
    assert _create(_svc(), _ctx(seed=7))["spec"]["clusterIP"] == first
    taken = {"spec": {"clusterIPs": [first]}}
    assert _create(_svc(), _ctx(seed=7, services=[taken]))["spec"]["clusterIP"] != first


def test_given_and_headless_cluster_ips_are_kept():
    svc = _create(_svc(clusterIP="10.96.0.1"), _ctx())
    assert svc["spec"]["clusterIPs"] == ["10.96.0.1"]
    headless = _create(_svc(clusterIP="None"), _ctx())
    assert headless["spec"]["clusterIPs"] == ["None"]


def test_nodeport_allocation_and_traffic_policy():
    used = {"spec": {"ports": [{"nodePort": 31000}]}}
    svc = _create(_svc(type="NodePort", ports=[{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]),
                  _ctx(services=[used]))
    spec = svc["spec"]
    ports = [p["nodePort"] for p in spec["ports"]]
    assert all(30000 <= p <= 32767 for p in ports) and len(set(ports)) == 2 and 31000 not in ports
    assert spec["externalTrafficPolicy"] == "Cluster"
    lb = _create(_svc(type="LoadBalancer"), _ctx())
    assert lb["spec"]["allocateLoadBalancerNodePorts"] is True


def test_validation_messages():
    svc = _create(_svc(ports=[{"port": 80}, {"port": 70000, "name": "b"}]), _ctx())
    messages = [e.message() for e in SERVICES.validate(svc)]
    assert "spec.ports[0].name: Required value" in messages
    assert "spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive" in messages
    external = _create({"metadata": {"name": "x"}, "spec": {"type": "ExternalName"}}, _ctx())
    assert [e.message() for e in SERVICES.validate(external)] == ["spec.externalName: Required value"]
    no_ports = _create(_svc(ports=[]), _ctx())
    assert "spec.ports: Required value" in [e.message() for e in SERVICES.validate(no_ports)]


def test_update_keeps_allocated_values_and_rejects_ip_changes():
    ctx = _ctx()
    old = _create(_svc(type="NodePort"), ctx)
    new = _svc(type="NodePort")  # a client that re-sends its original manifest
    SERVICES.default(new, ctx)
    SERVICES.prepare_for_update(new, old, ctx)
    assert new["spec"]["clusterIP"] == old["spec"]["clusterIP"]
    assert new["spec"]["ports"][0]["nodePort"] == old["spec"]["ports"][0]["nodePort"]
    assert SERVICES.validate_update(new, old) == []
    changed = copy.deepcopy(old)
    changed["spec"]["clusterIP"] = "10.96.0.99"
    changed["spec"]["clusterIPs"] = ["10.96.0.99"]
    assert [e.message() for e in SERVICES.validate_update(changed, old)] == [  # the reference, 1.36
        'spec.clusterIPs[0]: Invalid value: ["10.96.0.99"]: may not change once set']
    with emulating(release("1.33")):
        assert [e.message() for e in SERVICES.validate_update(changed, old)] == [
            'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set']


def test_an_update_of_cluster_ip_alone_is_carried_into_cluster_ips():
    """``normalizeClusterIPs`` runs before validation: a client that changed only clusterIP
    is told ``clusterIPs[0]`` may not change (kube-apiserver 1.36's answer), not that the
    two disagree."""
    ctx = _ctx()
    old = _create(_svc(), ctx)
    new = copy.deepcopy(old)
    new["spec"]["clusterIP"] = "10.96.0.99"
    SERVICES.default(new, ctx)
    SERVICES.prepare_for_update(new, old, ctx)
    assert new["spec"]["clusterIPs"] == ["10.96.0.99"]
    causes = [e.cause() for e in SERVICES.validate_update(new, old)]
    assert [c["field"] for c in causes] == ["spec.clusterIPs[0]"]
    assert causes[0]["message"].endswith("may not change once set")


def test_cluster_ips_that_disagree_with_cluster_ip_are_refused_before_validation():
    """The REST layer's pre-validation (``initIPFamilyFields``) answers the disagreement
    alone, before the strategy would add ``clusterIPs[0]: may not change once set``."""
    ctx = _ctx()
    old = _create(_svc(), ctx)
    new = copy.deepcopy(old)
    new["spec"]["clusterIP"], new["spec"]["clusterIPs"] = "10.96.0.98", ["10.96.0.99"]
    SERVICES.default(new, ctx)
    with pytest.raises(ApiError) as refused:
        SERVICES.prepare_for_update(new, old, ctx)
    assert [cause["field"] for cause in refused.value.details["causes"]] == ["spec.clusterIPs"]
    assert refused.value.details["causes"][0]["message"].endswith("first value must match `clusterIP`")


def test_switch_from_nodeport_to_clusterip_drops_node_ports():
    ctx = _ctx()
    old = _create(_svc(type="NodePort"), ctx)
    new = copy.deepcopy(old)
    new["spec"]["type"] = "ClusterIP"
    SERVICES.default(new, ctx)
    SERVICES.prepare_for_update(new, old, ctx)
    assert "nodePort" not in new["spec"]["ports"][0]
    assert "externalTrafficPolicy" not in new["spec"]
    assert SERVICES.validate_update(new, old) == []
