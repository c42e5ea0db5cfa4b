"""docs/start-operator.md, as tests: the page's block is this module's test, run as written."""

from __future__ import annotations

# docs:begin docs/start-operator.md#operator
import json

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from fakekube.cluster import ApiError

BACKUP_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "backups.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "backups", "singular": "backup", "kind": "Backup"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "schedule": {"type": "string"}, "keep": {"type": "integer", "default": 7}}}}}}}]}}
# An admission policy: a Backup keeps at most 30 copies (CEL, checked by the apiserver).
POLICY = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
          "metadata": {"name": "backup-keep"},
          "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["example.com"], "apiVersions": ["v1"],
                                                            "operations": ["CREATE", "UPDATE"], "resources": ["backups"]}]},
                   "validations": [{"expression": "object.spec.keep <= 30", "message": "keep at most 30 backups"}]}}
BINDING = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
           "metadata": {"name": "backup-keep"},
           "spec": {"policyName": "backup-keep", "validationActions": ["Deny"]}}
# What the operator's ServiceAccount may do: read and watch Backups, nothing else.
ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "backup-operator", "namespace": "default"},
        "rules": [{"apiGroups": ["example.com"], "resources": ["backups"], "verbs": ["get", "list", "watch"]}]}
ROLE_BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "backup-operator", "namespace": "default"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "backup-operator"},
                "subjects": [{"kind": "ServiceAccount", "name": "backup-operator", "namespace": "default"}]}


def backup(name, **spec):
    return {"apiVersion": "example.com/v1", "kind": "Backup", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


@pytest.mark.fakekube(authorization_mode="RBAC")  # HTTPS, and roles and bindings decide
def test_the_operator_sees_backups_and_may_only_read_them(fakekube):
    for obj in (BACKUP_CRD, POLICY, BINDING, ROLE, ROLE_BINDING,
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "backup-operator"}}):
        fakekube.create(obj)                       # as cluster-admin
    fakekube.advance(1)                            # the CRD is Established

    assert fakekube.create(backup("nightly", schedule="@daily"))["spec"]["keep"] == 7   # the schema's default
    with pytest.raises(ApiError, match="keep at most 30 backups"):
        fakekube.create(backup("forever", schedule="@daily", keep=1000))             # the policy denies it

    # The operator acts with its ServiceAccount's token, through the official client.
    admin = client.CoreV1Api(fakekube.client())
    token = admin.create_namespaced_service_account_token("backup-operator", "default", {"spec": {}}).status.token
    operator = client.CustomObjectsApi(fakekube.client(token))
    stream = watch.Watch().stream(operator.list_namespaced_custom_object, "example.com", "v1", "default",
                                  "backups", resource_version="0", timeout_seconds=10)
    first = next(stream)                           # a watch from "0" starts with what exists
    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "nightly")
    with pytest.raises(ApiException) as denied:
        operator.delete_namespaced_custom_object("example.com", "v1", "default", "backups", "nightly")
    assert denied.value.status == 403              # the Role gives no delete
    assert json.loads(denied.value.body)["message"] == (
        'backups.example.com "nightly" is forbidden: User "system:serviceaccount:default:backup-operator" '
        'cannot delete resource "backups" in API group "example.com" in the namespace "default"')
# docs:end

