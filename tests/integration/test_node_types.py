"""node.k8s.io/v1 RuntimeClasses over HTTP: the handler rule and kubectl's columns."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.test_request_semantics import request

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_runtime_class_round_trip(fakekube: Cluster) -> None:
    api = client.NodeV1Api(fakekube.client())
    api.create_runtime_class({"metadata": {"name": "gvisor"}, "handler": "runsc",
                              "overhead": {"podFixed": {"memory": "64Mi"}}})
    code, table, _ = request(fakekube, "GET", "/apis/node.k8s.io/v1/runtimeclasses", accept=TABLE)
    assert [(c["name"], c["description"]) for c in table["columnDefinitions"]][1] == ("Handler", "")
    assert table["rows"][0]["cells"] == ["gvisor", "runsc", "0s"]
    with pytest.raises(ApiException) as changed:
        api.patch_runtime_class("gvisor", {"handler": "kata"})
    assert json.loads(changed.value.body)["message"] == (
        'RuntimeClass.node.k8s.io "gvisor" is invalid: handler: Invalid value: "kata": field is immutable')
    with pytest.raises(ApiException) as bad:
        api.create_runtime_class({"metadata": {"name": "x"}, "handler": "Run_SC"})
    assert json.loads(bad.value.body)["details"]["causes"][0]["field"] == "handler"
    api.delete_runtime_class("gvisor")
    assert api.list_runtime_class().items == []
