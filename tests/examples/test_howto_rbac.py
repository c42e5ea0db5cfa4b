"""How to check that an operator's ServiceAccount has the verbs it needs (docs/api.md
"Authentication and authorization"): turn RBAC on, apply the operator's Role, act with
the account's token."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster

ROLE = {"metadata": {"name": "operator", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create", "update"]}]}
BINDING = {"metadata": {"name": "operator", "namespace": "default"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "operator"},
           "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "default"}]}


@pytest.mark.fakekube(authorization_mode="RBAC")
def test_howto_check_a_service_accounts_permissions(fakekube: Cluster) -> None:
    admin = client.CoreV1Api(fakekube.client())  # the kubeconfig's user is cluster-admin
    admin.create_namespaced_service_account("default", {"metadata": {"name": "operator"}})
    client.RbacAuthorizationV1Api(fakekube.client()).create_namespaced_role("default", ROLE)
    client.RbacAuthorizationV1Api(fakekube.client()).create_namespaced_role_binding("default", BINDING)
    token = admin.create_namespaced_service_account_token("operator", "default", {"spec": {}}).status.token

    operator = client.CoreV1Api(fakekube.client(token))
    operator.create_namespaced_config_map("default", {"metadata": {"name": "state"}})
    with pytest.raises(ApiException) as denied:
        operator.delete_namespaced_config_map("state", "default")
    assert denied.value.status == 403
    assert json.loads(denied.value.body)["message"] == (
        'configmaps "state" is forbidden: User "system:serviceaccount:default:operator" cannot delete resource '
        '"configmaps" in API group "" in the namespace "default"')
