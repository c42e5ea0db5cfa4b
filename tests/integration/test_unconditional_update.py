"""A PUT whose ``metadata.resourceVersion`` is unset or ``"0"`` is unconditional where the
kind's strategy allows it (upstream's ``AllowUnconditionalUpdate``), and a 422 where it
does not.

kubectl's own test/cmd replaces a Node with ``"resourceVersion": "0"`` and expects it to
succeed; a real kube-apiserver answers 200 there, and 422 ``metadata.resourceVersion:
Invalid value: 0: must be specified for an update`` for a Lease (its strategy refuses
unconditional updates, as do custom resources, CRDs and the admission configurations).
"""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster
from tests.integration.test_bad_input import request

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "rv-node"}}
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


@pytest.mark.parametrize("resource_version", ["0", None])
def test_a_node_is_replaced_without_a_resource_version(fakekube: Cluster, resource_version: str | None) -> None:
    fakekube.create(NODE)
    current = fakekube.get("v1", "Node", "rv-node", namespace="")
    body = {**current, "metadata": {**current["metadata"], "annotations": {"a": "b"}}}
    body["metadata"].pop("resourceVersion")
    if resource_version is not None:
        body["metadata"]["resourceVersion"] = resource_version
    status, answer = request(fakekube, "PUT", "/api/v1/nodes/rv-node", json.dumps(body).encode(), "application/json")
    assert status == 200, answer
    assert answer["metadata"]["annotations"] == {"a": "b"}
    assert answer["metadata"]["resourceVersion"] not in ("0", current["metadata"]["resourceVersion"])


@pytest.mark.parametrize("resource_version", ["0", None])
def test_a_lease_needs_a_resource_version_to_be_updated(fakekube: Cluster, resource_version: str | None) -> None:
    fakekube.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                     "metadata": {"name": "rv-lease", "namespace": "default"}})
    body: dict[str, object] = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                               "metadata": {"name": "rv-lease", "labels": {"a": "b"}}}
    if resource_version is not None:
        body["metadata"] = {"name": "rv-lease", "labels": {"a": "b"}, "resourceVersion": resource_version}
    status, answer = request(fakekube, "PUT", f"{LEASES}/rv-lease", json.dumps(body).encode(), "application/json")
    assert status == 422, answer
    assert answer["reason"] == "Invalid"
    assert answer["message"] == ('leases.coordination.k8s.io "rv-lease" is invalid: metadata.resourceVersion: '
                                 "Invalid value: 0: must be specified for an update")
    assert answer["details"]["kind"] == "leases"
    assert answer["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
                                            "message": "Invalid value: 0: must be specified for an update"}]
    assert "labels" not in fakekube.get("coordination.k8s.io/v1", "Lease", "rv-lease", namespace="default")["metadata"]
