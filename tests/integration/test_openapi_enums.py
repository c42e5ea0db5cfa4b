"""Upstream's OpenAPI enums, as kube-apiserver publishes them: a field of a ``+enum`` Go type
carries ``enum`` and a "Possible enum values:" paragraph in v3 and v2, an enum slice or map
its values on ``items``/``additionalProperties``, each release its own constants."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster

STRATEGY_TYPE = ("Type of deployment. Can be \"Recreate\" or \"RollingUpdate\". Default is RollingUpdate.\n\n"
                 "Possible enum values:\n"
                 " - `\"Recreate\"` Kill all existing pods before creating new ones.\n"
                 " - `\"RollingUpdate\"` Replace the old ReplicaSets by new one using rolling update i.e gradually "
                 "scale down the old ReplicaSets and scale up the new one.")


def get_json(cluster: Cluster, path: str) -> Any:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        assert response.status == 200
        return json.loads(response.read())
    finally:
        connection.close()


def v3_schemas(cluster: Cluster, path: str) -> dict[str, Any]:
    return get_json(cluster, "/openapi/v3/" + path)["components"]["schemas"]


def test_an_enum_field_carries_its_values_and_their_paragraph_in_v3_and_v2(fakekube: Cluster) -> None:
    strategy = v3_schemas(fakekube, "apis/apps/v1")["io.k8s.api.apps.v1.DeploymentStrategy"]["properties"]["type"]
    assert strategy == {"description": STRATEGY_TYPE, "type": "string", "enum": ["Recreate", "RollingUpdate"]}
    v2 = get_json(fakekube, "/openapi/v2")["definitions"]
    assert v2["io.k8s.api.apps.v1.DeploymentStrategy"]["properties"]["type"] == strategy
    mode = v2["io.k8s.api.batch.v1.JobSpec"]["properties"]["completionMode"]
    assert mode["enum"] == ["Indexed", "NonIndexed"]
    assert mode["description"].endswith("\n\nPossible enum values:\n"
                                         " - `\"Indexed\"` is a Job completion mode. In this mode, the Pods of a Job get "
                                         "an associated completion index from 0 to (.spec.completions - 1). The Job is "
                                         "considered complete when a Pod completes for each completion index.\n"
                                         " - `\"NonIndexed\"` is a Job completion mode. In this mode, the Job is "
                                         "considered complete when there have been .spec.completions successfully "
                                         "completed Pods. Pod completions are homologous to each other.")


def test_enum_slices_and_maps_carry_the_values_on_their_items(fakekube: Cluster) -> None:
    admission = v3_schemas(fakekube, "apis/admissionregistration.k8s.io/v1")
    operations = admission["io.k8s.api.admissionregistration.v1.RuleWithOperations"]["properties"]["operations"]
    assert operations["items"] == {"type": "string", "enum": ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]}
    assert "Possible enum values" not in operations["description"]
    claim = v3_schemas(fakekube, "api/v1")["io.k8s.api.core.v1.PersistentVolumeClaimStatus"]["properties"]
    assert claim["allocatedResourceStatuses"]["additionalProperties"]["enum"] == [
        "ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress", "NodeResizeInfeasible",
        "NodeResizePending"]


def test_a_doc_comment_ending_in_an_empty_line_keeps_it_before_the_paragraph(fakekube: Cluster) -> None:
    mutation = v3_schemas(fakekube, "apis/admissionregistration.k8s.io/v1")["io.k8s.api.admissionregistration.v1.Mutation"]
    assert "Required.\n\n\nPossible enum values:\n - `\"ApplyConfiguration\"`" in mutation["properties"]["patchType"]["description"]


@pytest.mark.parametrize(("version", "operators"), [("1.33", ["Equal", "Exists"]), ("1.35", ["Equal", "Exists", "Gt", "Lt"])])
def test_each_release_publishes_its_own_constants(version: str, operators: list[str]) -> None:
    """TolerationOperator gained Gt and Lt in 1.35: a 1.33 cluster does not list them."""
    with Cluster(kubernetes_version=version) as cluster:
        toleration = v3_schemas(cluster, "api/v1")["io.k8s.api.core.v1.Toleration"]["properties"]["operator"]
    assert toleration["enum"] == operators
    assert toleration["description"].count("\n - `") == len(operators)
