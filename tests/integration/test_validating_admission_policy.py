"""ValidatingAdmissionPolicies and their bindings over HTTP, seen through the official
client: CEL validations with params, messages, reasons, Warn, match conditions,
variables, namespace selectors, failure policies and updates."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.test_request_semantics import request

Obj = dict[str, Any]
GROUP = "/apis/admissionregistration.k8s.io/v1"
CONFIGMAP_RULE = {"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                  "resources": ["configmaps"]}


@pytest.fixture
def core(fakekube: Cluster) -> client.CoreV1Api:
    return client.CoreV1Api(fakekube.client())


def policy(cluster: Cluster, name: str, validations: list[Obj], rules: list[Obj] | None = None,
           **spec: Any) -> None:
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": rules or [CONFIGMAP_RULE]}, "validations": validations,
                     **spec}}
    code, answer, _ = request(cluster, "POST", f"{GROUP}/validatingadmissionpolicies", body)
    assert code == 201, answer


def bind(cluster: Cluster, name: str, policy_name: str, actions: tuple[str, ...] = ("Deny",), **spec: Any) -> None:
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {"policyName": policy_name, "validationActions": list(actions), **spec}}
    code, answer, _ = request(cluster, "POST", f"{GROUP}/validatingadmissionpolicybindings", body)
    assert code == 201, answer


def configmap(name: str, data: dict[str, str], namespace: str = "default") -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def refusal(call: Any) -> tuple[int, Obj]:
    with pytest.raises(ApiException) as info:
        call()
    return info.value.status, json.loads(info.value.body)


def test_a_policy_with_params_denies_a_deployment_over_the_limit(fakekube: Cluster) -> None:
    apps = client.AppsV1Api(fakekube.client())
    policy(fakekube, "replica-limit", [{"expression": "object.spec.replicas <= int(params.data.maxReplicas)"}],
           rules=[{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                   "resources": ["deployments"]}],
           paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    bind(fakekube, "replica-limit", "replica-limit", paramRef={"name": "limits", "namespace": "default"})
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    code, status = refusal(lambda: apps.create_namespaced_deployment("default", deployment))
    assert (code, status["reason"], status["message"]) == (
        422, "Invalid", 'deployments.apps "web" is forbidden: ValidatingAdmissionPolicy \'replica-limit\' with '
        "binding 'replica-limit' denied request: failed to configure binding: no params found for policy binding "
        "with `Deny` parameterNotFoundAction")
    fakekube.create(configmap("limits", {"maxReplicas": "3"}))
    code, status = refusal(lambda: apps.create_namespaced_deployment("default", deployment))
    message = ("ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit' denied request: "
               "failed expression: object.spec.replicas <= int(params.data.maxReplicas)")
    assert (code, status["reason"], status["message"]) == (422, "Invalid", f'deployments.apps "web" is forbidden: {message}')
    assert status["details"] == {"name": "web", "group": "apps", "kind": "deployments", "causes": [{"message": message}]}
    deployment["spec"]["replicas"] = 3
    assert apps.create_namespaced_deployment("default", deployment).spec.replicas == 3
    # A scale write is the deployments/scale subresource: a rule for deployments does not match it.
    assert apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 7}}).spec.replicas == 7


def test_message_expression_reason_and_warn(fakekube: Cluster, core: client.CoreV1Api) -> None:
    policy(fakekube, "owner", [{"expression": "has(object.metadata.labels) && 'owner' in object.metadata.labels",
                                "messageExpression": "'configmap ' + object.metadata.name + ' has no owner'",
                                "reason": "Forbidden"}])
    bind(fakekube, "owner-deny", "owner")
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("orphan", {"k": "v"})))
    assert (code, status["reason"]) == (403, "Forbidden")
    assert status["message"].endswith("denied request: configmap orphan has no owner")
    request(fakekube, "DELETE", f"{GROUP}/validatingadmissionpolicybindings/owner-deny")
    bind(fakekube, "owner-warn", "owner", actions=("Warn",))
    code, created, response = request(fakekube, "POST", "/api/v1/namespaces/default/configmaps",
                                      configmap("orphan", {"k": "v"}))
    assert code == 201 and response.headers.get_all("Warning") == [
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'owner' with binding 'owner-warn': "
        "configmap orphan has no owner\""]


def test_conditions_variables_namespace_selector_and_updates(fakekube: Cluster, core: client.CoreV1Api) -> None:
    policy(fakekube, "frozen", [{"expression": "oldObject == null || variables.size == size(oldObject.data)",
                                 "message": "the number of keys is frozen"},
                                {"expression": "namespaceObject.metadata.labels.tier == 'prod'"}],
           matchConditions=[{"name": "not-excluded", "expression": "!object.metadata.name.startsWith('free-')"}],
           variables=[{"name": "size", "expression": "size(object.data)"}])
    bind(fakekube, "frozen", "frozen",
         matchResources={"namespaceSelector": {"matchLabels": {"tier": "prod"}}})
    assert core.create_namespaced_config_map("default", configmap("elsewhere", {"a": "1"})).metadata.name
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="prod", labels={"tier": "prod"})))
    core.create_namespaced_config_map("prod", configmap("settings", {"a": "1"}, "prod"))
    core.patch_namespaced_config_map("settings", "prod", {"data": {"a": "2"}})
    code, status = refusal(lambda: core.patch_namespaced_config_map("settings", "prod", {"data": {"b": "3"}}))
    assert code == 422 and status["message"].endswith("denied request: the number of keys is frozen")
    core.create_namespaced_config_map("prod", configmap("free-x", {"a": "1"}, "prod"))
    core.patch_namespaced_config_map("free-x", "prod", {"data": {"b": "3"}})


def test_failure_policy_decides_on_an_expression_error(fakekube: Cluster, core: client.CoreV1Api) -> None:
    policy(fakekube, "strict", [{"expression": "object.data.missing == 'x'"}])
    bind(fakekube, "strict", "strict")
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("a", {"k": "v"})))
    assert code == 422 and status["message"].endswith(
        "denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing")
    patch = [{"op": "replace", "path": "/spec/failurePolicy", "value": "Ignore"}]
    code, _, _ = request(fakekube, "PATCH", f"{GROUP}/validatingadmissionpolicies/strict", patch,
                         "application/json-patch+json")
    assert code == 200
    assert core.create_namespaced_config_map("default", configmap("a", {"k": "v"})).metadata.name == "a"


def test_an_expression_past_the_per_call_cost_limit_fails_as_upstream_s(fakekube: Cluster,
                                                                         core: client.CoreV1Api) -> None:
    """Three loops over 120 keys: about 12 million units, past the 1,000,000 of one call;
    cancelled before it runs (it ran to the end before), and failurePolicy decides."""
    expression = "object.data.all(a, object.data.all(b, object.data.all(c, a != '' || b != c)))"
    policy(fakekube, "loops", [{"expression": expression}])
    bind(fakekube, "loops", "loops")
    data = {f"key-{i}": "v" for i in range(120)}
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("big", data)))
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"].endswith(f"denied request: expression '{expression}' resulted in error: "
                                      "operation cancelled: actual cost limit exceeded")
    assert core.create_namespaced_config_map("default", configmap("small", {"a": "v"})).metadata.name == "small"


def test_a_binding_s_validations_share_one_cost_budget(fakekube: Cluster, core: client.CoreV1Api) -> None:
    """Each validation runs two loops over 400 keys (about 800,000 units, within one call's
    limit); the thirteenth would pass the 10 million of one evaluation."""
    validations = [{"expression": f"object.data.all(a, object.data.all(b, a != '{i}'))"} for i in range(14)]
    policy(fakekube, "many", validations)
    bind(fakekube, "many", "many")
    data = {f"key-{i}": "v" for i in range(400)}
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("big", data)))
    assert code == 422
    assert status["message"].endswith("denied request: validation failed due to running out of cost budget, "
                                      "no further validation rules will be run")
