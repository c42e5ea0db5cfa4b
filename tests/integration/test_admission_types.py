"""admissionregistration.k8s.io/v1 objects over HTTP: upstream's defaults, its 422
messages, and kubectl's Table columns (the admission they drive is tested in
test_admission_webhooks.py and test_validating_admission_policy.py)."""

from __future__ import annotations

from fakekube import Cluster
from tests.integration.test_request_semantics import request

GROUP = "/apis/admissionregistration.k8s.io/v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def webhook(**overrides: object) -> dict:
    hook = {"name": "deny.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "default", "name": "hooks"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}
    hook.update(overrides)
    return hook


def configuration(kind: str, *hooks: dict) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "hooks"},
            "webhooks": list(hooks)}


def test_a_mutating_webhook_gets_upstreams_defaults_and_generation(fakekube: Cluster) -> None:
    code, created, _ = request(fakekube, "POST", f"{GROUP}/mutatingwebhookconfigurations",
                               configuration("MutatingWebhookConfiguration", webhook()))
    assert code == 201
    [hook] = created["webhooks"]
    assert {k: hook[k] for k in ("failurePolicy", "matchPolicy", "namespaceSelector", "objectSelector",
                                 "timeoutSeconds", "reinvocationPolicy")} == {
        "failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
        "timeoutSeconds": 10, "reinvocationPolicy": "Never"}
    assert hook["clientConfig"]["service"]["port"] == 443 and hook["rules"][0]["scope"] == "*"
    assert created["metadata"]["generation"] == 1
    code, table, _ = request(fakekube, "GET", f"{GROUP}/mutatingwebhookconfigurations", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Webhooks", "Age"]
    assert table["rows"][0]["cells"][:2] == ["hooks", 1]


def test_a_bad_validating_webhook_is_refused_with_upstreams_causes(fakekube: Cluster) -> None:
    bad = webhook(name="deny", sideEffects="Some", timeoutSeconds=31, admissionReviewVersions=[],
                  clientConfig={"url": "http://hooks.example.com/x?y=1"})
    code, status, _ = request(fakekube, "POST", f"{GROUP}/validatingwebhookconfigurations",
                              configuration("ValidatingWebhookConfiguration", bad))
    assert code == 422
    assert status["message"] == (
        'ValidatingWebhookConfiguration.admissionregistration.k8s.io "hooks" is invalid: ['
        'webhooks[0].name: Invalid value: "deny": should be a domain with at least three segments separated by dots, '
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun", '
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, "
        'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired '
        'format: https://host[/path], webhooks[0].clientConfig.url: Invalid value: "y=1": query parameters are not '
        "permitted in the URL, webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1]")


def test_policy_and_binding_defaults_validation_and_tables(fakekube: Cluster) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "replicas"},
              "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                       "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                                                               "apiVersions": ["v1"], "resources": ["deployments"]}]},
                       "validations": [{"expression": "object.spec.replicas <= 5"}]}}
    code, created, _ = request(fakekube, "POST", f"{GROUP}/validatingadmissionpolicies", policy)
    assert code == 201 and created["spec"]["failurePolicy"] == "Fail" and created["status"] == {}
    assert created["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    code, table, _ = request(fakekube, "GET", f"{GROUP}/validatingadmissionpolicies", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Validations", "ParamKind", "Age"]
    assert table["rows"][0]["cells"][:3] == ["replicas", 1, "v1/ConfigMap"]
    empty = {**policy, "metadata": {"name": "empty"}, "spec": {}}
    code, status, _ = request(fakekube, "POST", f"{GROUP}/validatingadmissionpolicies", empty)
    assert code == 422 and [c["field"] for c in status["details"]["causes"]] == [
        "spec.matchConstraints", "spec.validations", "spec.auditAnnotations"]
    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "replicas"},
               "spec": {"policyName": "replicas", "paramRef": {"name": "limits", "namespace": "default"},
                        "validationActions": ["Deny"]}}
    code, created, _ = request(fakekube, "POST", f"{GROUP}/validatingadmissionpolicybindings", binding)
    assert code == 201 and created["spec"]["paramRef"]["parameterNotFoundAction"] == "Deny"
    code, table, _ = request(fakekube, "GET", f"{GROUP}/validatingadmissionpolicybindings", accept=TABLE)
    assert table["rows"][0]["cells"][:3] == ["replicas", "replicas", "default/limits"]
    both = {**binding, "metadata": {"name": "both"}, "spec": {**binding["spec"], "validationActions": ["Deny", "Warn"]}}
    code, status, _ = request(fakekube, "POST", f"{GROUP}/validatingadmissionpolicybindings", both)
    assert code == 422 and status["details"]["causes"][0]["message"].startswith(  # the reference, 1.36
        'Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn')


def test_expressions_must_compile(fakekube: Cluster) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "broken"},
              "spec": {"matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
                                                               "apiVersions": ["v1"], "resources": ["pods"]}]},
                       "validations": [{"expression": "params.max > 1"}]}}
    code, status, _ = request(fakekube, "POST", f"{GROUP}/validatingadmissionpolicies", policy)
    assert code == 422
    [cause] = status["details"]["causes"]
    assert (cause["field"], cause["message"]) == (
        "spec.validations[0].expression",
        'Invalid value: "params.max > 1": compilation failed: ERROR: <input>:1:1: undeclared reference to '
        "'params' (in container '')\n | params.max > 1\n | ^")
    policy["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    assert request(fakekube, "POST", f"{GROUP}/validatingadmissionpolicies", policy)[0] == 201
    bad = webhook(matchConditions=[{"name": "c", "expression": "object.metadata.name =="}])
    code, status, _ = request(fakekube, "POST", f"{GROUP}/validatingwebhookconfigurations",
                              configuration("ValidatingWebhookConfiguration", bad))
    assert code == 422 and status["details"]["causes"][0]["field"] == "webhooks[0].matchConditions[0].expression"
    assert "compilation failed: ERROR: <input>:1:24: Syntax error:" in status["details"]["causes"][0]["message"]
