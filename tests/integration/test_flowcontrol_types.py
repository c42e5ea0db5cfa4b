"""flowcontrol.apiserver.k8s.io/v1 over HTTP: the mandatory and suggested FlowSchemas and
PriorityLevelConfigurations every cluster starts with, v1's defaults, the Dangling
condition, upstream's 422s and kubectl's columns."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from fakekube.api.types.flowcontrol import bootstrap_flow_schemas, bootstrap_priority_levels
from tests.integration.test_request_semantics import request

GROUP = "/apis/flowcontrol.apiserver.k8s.io/v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_a_new_cluster_has_the_bootstrap_configuration(fakekube: Cluster) -> None:
    api = client.FlowcontrolApiserverV1Api(fakekube.client())
    levels = {pl.metadata.name: pl for pl in api.list_priority_level_configuration().items}
    assert sorted(levels) == ["catch-all", "exempt", "global-default", "leader-election", "node-high", "system",
                              "workload-high", "workload-low"]
    assert levels["exempt"].spec.exempt.nominal_concurrency_shares == 0
    workload_low = levels["workload-low"].spec.limited
    assert (workload_low.nominal_concurrency_shares, workload_low.lendable_percent,
            workload_low.limit_response.queuing.queues) == (100, 90, 128)
    schemas = {fs.metadata.name: fs for fs in api.list_flow_schema().items}
    assert len(schemas) == 13
    assert schemas["catch-all"].metadata.annotations == {"apf.kubernetes.io/autoupdate-spec": "true"}
    assert {fs.status.conditions[0].reason for fs in schemas.values()} == {"Found"}
    code, table, _ = request(fakekube, "GET", f"{GROUP}/flowschemas/probes", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == \
        ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"]
    assert table["rows"][0]["cells"] == ["probes", "exempt", 2, "<none>", "0s", "False"]
    code, table, _ = request(fakekube, "GET", f"{GROUP}/prioritylevelconfigurations/leader-election", accept=TABLE)
    assert table["rows"][0]["cells"] == ["leader-election", "Limited", 10, 16, 4, 50, "0s"]


@pytest.mark.parametrize("kind", ["prioritylevelconfigurations", "flowschemas"])
def test_the_bootstrap_objects_are_what_the_create_path_stores(fakekube: Cluster, kind: str) -> None:
    """They are written straight to the store at start: the create path must agree."""
    bodies = {"prioritylevelconfigurations": bootstrap_priority_levels, "flowschemas": bootstrap_flow_schemas}[kind]()
    served = {o["metadata"]["name"]: o for o in request(fakekube, "GET", f"{GROUP}/{kind}")[1]["items"]}
    for body in bodies:
        name = body["metadata"]["name"]
        assert request(fakekube, "DELETE", f"{GROUP}/{kind}/{name}")[0] == 200
        code, created, _ = request(fakekube, "POST", f"{GROUP}/{kind}", body)
        assert code == 201, created
        for part in ("spec", "status"):
            assert created[part] == served[name][part], (name, part)
        assert created["metadata"]["annotations"] == served[name]["metadata"]["annotations"]


def test_defaults_and_the_dangling_condition(fakekube: Cluster) -> None:
    api = client.FlowcontrolApiserverV1Api(fakekube.client())
    level = api.create_priority_level_configuration({"metadata": {"name": "batch"}, "spec": {
        "type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}})
    limited = level.spec.limited
    assert (limited.nominal_concurrency_shares, limited.lendable_percent) == (30, 0)
    queuing = limited.limit_response.queuing
    assert (queuing.queues, queuing.hand_size, queuing.queue_length_limit) == (64, 8, 50)
    subjects = [{"kind": "Group", "group": {"name": "batch-jobs"}}]
    rules = [{"subjects": subjects, "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]
    found = api.create_flow_schema({"metadata": {"name": "batch"}, "spec": {
        "priorityLevelConfiguration": {"name": "batch"}, "rules": rules}})
    assert found.spec.matching_precedence == 1000 and found.metadata.generation == 1
    [condition] = found.status.conditions
    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "Dangling", "False", "Found",
        'This FlowSchema references the PriorityLevelConfiguration object named "batch" and it exists')
    dangling = api.create_flow_schema({"metadata": {"name": "lost"}, "spec": {
        "priorityLevelConfiguration": {"name": "nowhere"}, "rules": rules}})
    assert (dangling.status.conditions[0].status, dangling.status.conditions[0].reason) == ("True", "NotFound")


def test_validation(fakekube: Cluster) -> None:
    api = client.FlowcontrolApiserverV1Api(fakekube.client())
    with pytest.raises(ApiException) as bad_level:
        api.create_priority_level_configuration({"metadata": {"name": "x"}, "spec": {
            "type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 2, "handSize": 3}}}}})
    assert bad_level.value.status == 422
    assert json.loads(bad_level.value.body)["message"] == (
        'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "x" is invalid: '
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 3: should not be greater than queues (2)")
    with pytest.raises(ApiException) as bad_schema:
        api.create_flow_schema({"metadata": {"name": "x"}, "spec": {
            "priorityLevelConfiguration": {"name": ""}, "matchingPrecedence": 20000, "rules": [{"subjects": []}]}})
    assert [(c["field"], c["reason"]) for c in json.loads(bad_schema.value.body)["details"]["causes"]] == [
        ("spec.priorityLevelConfiguration.name", "FieldValueRequired"), ("spec.matchingPrecedence", "FieldValueInvalid"),
        ("spec.rules[0].subjects", "FieldValueRequired"), ("spec.rules[0]", "FieldValueRequired")]
