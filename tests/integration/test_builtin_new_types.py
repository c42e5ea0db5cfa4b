"""CRUD round trips over HTTP, and kubectl's Table, for types served since the 1.33
coverage test: storage.k8s.io/v1 CSIStorageCapacity, apiregistration.k8s.io/v1 APIService."""

from __future__ import annotations

from fakekube import Cluster
from tests.integration.test_request_semantics import request

CSI = "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities"
APISVC = "/apis/apiregistration.k8s.io/v1/apiservices"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_csi_storage_capacity_round_trip_and_table(fakekube: Cluster) -> None:
    body = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "c1"},
            "storageClassName": "fast", "capacity": "10Gi"}
    code, created, _ = request(fakekube, "POST", CSI, body)
    assert code == 201 and created["capacity"] == "10Gi"
    code, bad, _ = request(fakekube, "POST", CSI, {**body, "metadata": {"name": "c2"}, "storageClassName": ""})
    assert code == 422 and bad["details"]["causes"][0]["field"] == "storageClassName"
    code, table, _ = request(fakekube, "GET", CSI, accept=TABLE)
    # upstream's CSIStorageCapacity storage registers the default table convertor (its printer goes unused)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    assert table["rows"][0]["cells"] == ["c1", created["metadata"]["creationTimestamp"]]
    code, patched, _ = request(fakekube, "PATCH", f"{CSI}/c1", {"capacity": "20Gi"}, "application/merge-patch+json")
    assert code == 200 and patched["capacity"] == "20Gi"
    assert request(fakekube, "DELETE", f"{CSI}/c1")[0] == 200
    assert request(fakekube, "GET", f"{CSI}/c1")[0] == 404


def test_api_service_status_is_a_subresource_and_table(fakekube: Cluster) -> None:
    body = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.example.io"},
            "spec": {"group": "example.io", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10,
                     "service": {"namespace": "default", "name": "ext"}},
            "status": {"conditions": [{"type": "Available", "status": "True"}]}}
    code, created, _ = request(fakekube, "POST", APISVC, body)
    assert code == 201 and created["status"] == {}
    conditions = [{"type": "Available", "status": "False", "reason": "MissingEndpoints",
                   "lastTransitionTime": "2025-01-01T00:00:00Z"}]
    code, updated, _ = request(fakekube, "PATCH", f"{APISVC}/v1.example.io/status",
                               {"status": {"conditions": conditions}}, "application/merge-patch+json")
    assert code == 200 and updated["status"]["conditions"][0]["reason"] == "MissingEndpoints"
    code, table, _ = request(fakekube, "GET", APISVC, accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Service", "Available", "Age"]
    rows = {row["cells"][0]: row["cells"][:3] for row in table["rows"]}
    # kube-apiserver's availability controller then writes what it finds: no Service "ext"
    assert rows["v1.example.io"] == ["v1.example.io", "default/ext", "False (ServiceNotFound)"]
    assert rows["v1.apps"] == ["v1.apps", "Local", "True"]  # kube-aggregator's own
    code, bad, _ = request(fakekube, "POST", APISVC, {**body, "metadata": {"name": "v2.example.io"},
                                                      "spec": {**body["spec"], "versionPriority": 0}})
    assert code == 422
    assert request(fakekube, "DELETE", f"{APISVC}/v1.example.io")[0] == 200
