"""One scripted kubectl session per client version, 1.27 … 1.35, as a user's CI runs it.

The steps the issue names, in the order a user types them: create a namespace, a
Deployment, a ConfigMap, a Secret and a token; apply a manifest client-side twice and
server-side twice, with ``diff`` before and after an edit; ``explain``; ``get`` with
custom columns and JSONPath; ``auth can-i`` with RBAC on; a CRD and its objects with
their printer columns; delete. Every output is compared whole.

kubectl 1.27 and 1.28 read ``/openapi/v2`` (protobuf) for ``create -f``, ``apply``,
``diff`` and ``explain``; the later ones read ``/openapi/v3``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from fakekube import Cluster

from .conftest import Kubectl, kubectl_or_skip

SESSION_VERSIONS = ("1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35")

pytestmark = pytest.mark.fakekube(nodes=1, auto_advance=True)

MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data:
  mode: {mode}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {{app: api}}
  template:
    metadata:
      labels: {{app: api}}
    spec:
      containers:
        - name: api
          image: nginx:1.27
"""

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.shop.example.com
spec:
  group: shop.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  versions:
    - name: v1
      served: true
      storage: true
      additionalPrinterColumns:
        - {name: Size, type: integer, jsonPath: .spec.size}
        - {name: Color, type: string, jsonPath: .spec.color}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer}
                color: {type: string}
"""

WIDGETS = """\
apiVersion: shop.example.com/v1
kind: Widget
metadata: {name: small, namespace: shop}
spec: {size: 1, color: red}
---
apiVersion: shop.example.com/v1
kind: Widget
metadata: {name: large, namespace: shop}
spec: {size: 9, color: blue}
"""


@pytest.fixture(params=SESSION_VERSIONS, ids=lambda v: f"kubectl{v}")
def session_kubectl(request: pytest.FixtureRequest, fakekube: Cluster, kubectl_cache_dir: str) -> Kubectl:
    """kubectl of one of every client version 1.27 … 1.35, talking to this test's cluster."""
    return kubectl_or_skip(request.param, fakekube, kubectl_cache_dir)


def deleted(kubectl: Kubectl, what: str, namespace: str = "") -> str:
    """kubectl's line for a deleted object (1.34 names the namespace it was deleted from)."""
    version = tuple(int(part) for part in kubectl.version.split("."))
    where = f" from {namespace} namespace" if namespace and version >= (1, 34) else ""
    return f"{what} deleted{where}\n"


def test_create_get_and_delete(session_kubectl: Kubectl, fakekube: Cluster) -> None:
    k = session_kubectl
    assert k.ok("create", "namespace", "shop") == "namespace/shop created\n"
    assert k.ok("-n", "shop", "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2") == \
        "deployment.apps/web created\n"
    assert k.ok("-n", "shop", "create", "configmap", "app", "--from-literal=mode=prod") == "configmap/app created\n"
    assert k.ok("-n", "shop", "create", "secret", "generic", "creds", "--from-literal=password=s3cret") == \
        "secret/creds created\n"
    assert base64.b64decode(fakekube.get("v1", "Secret", "creds", "shop")["data"]["password"]) == b"s3cret"
    token = k.ok("-n", "shop", "create", "token", "default").strip()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == "system:serviceaccount:shop:default"

    assert k.ok("-n", "shop", "get", "deployments,configmaps", "-o",
                "custom-columns=KIND:.kind,NAME:.metadata.name,REPLICAS:.spec.replicas") == (
        "KIND         NAME               REPLICAS\n"
        "Deployment   web                2\n"
        "ConfigMap    app                <none>\n"
        "ConfigMap    kube-root-ca.crt   <none>\n")
    assert k.ok("-n", "shop", "get", "deployment", "web", "-o",
                "jsonpath={.spec.template.spec.containers[0].image} {.spec.replicas}") == "nginx:1.27 2"
    assert k.ok("-n", "shop", "get", "configmap", "app", "-o", "jsonpath={.data.mode}") == "prod"

    assert k.ok("-n", "shop", "delete", "configmap", "app") == deleted(k, 'configmap "app"', "shop")
    assert k.ok("delete", "namespace", "shop") == deleted(k, 'namespace "shop"')
    assert [ns["metadata"]["name"] for ns in fakekube.list("v1", "Namespace")] == [
        "default", "kube-node-lease", "kube-public", "kube-system"]


def test_explain(session_kubectl: Kubectl) -> None:
    out = session_kubectl.ok("explain", "deployment.spec.replicas")
    assert "FIELD: replicas <integer>" in out or "FIELD:    replicas <integer>" in out
    assert "Number of desired pods." in out


def test_apply_client_side_twice_and_diff(session_kubectl: Kubectl, tmp_path: Path) -> None:
    k = session_kubectl
    k.ok("create", "namespace", "shop")
    manifest = tmp_path / "shop.yaml"
    manifest.write_text(MANIFEST.format(mode="prod"))
    assert k.ok("apply", "-f", str(manifest)) == "configmap/settings created\ndeployment.apps/api created\n"
    assert k.ok("apply", "-f", str(manifest)) == "configmap/settings unchanged\ndeployment.apps/api unchanged\n"
    assert k("diff", "-f", str(manifest)) == (0, "", "")

    manifest.write_text(MANIFEST.format(mode="dev"))
    diff = k("diff", "-f", str(manifest))
    assert diff.rc == 1, diff.stderr
    changed = [line for line in diff.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["-  mode: prod", "+  mode: dev"]
    assert k.ok("apply", "-f", str(manifest)) == "configmap/settings configured\ndeployment.apps/api unchanged\n"
    assert k.ok("-n", "shop", "get", "configmap", "settings", "-o", "jsonpath={.data.mode}") == "dev"


def test_apply_server_side_twice_and_diff(session_kubectl: Kubectl, tmp_path: Path) -> None:
    k = session_kubectl
    k.ok("create", "namespace", "shop")
    manifest = tmp_path / "shop.yaml"
    manifest.write_text(MANIFEST.format(mode="prod"))
    applied = "configmap/settings serverside-applied\ndeployment.apps/api serverside-applied\n"
    assert k.ok("apply", "--server-side", "-f", str(manifest)) == applied
    assert k.ok("apply", "--server-side", "-f", str(manifest)) == applied
    assert k("diff", "--server-side", "-f", str(manifest)) == (0, "", "")
    manifest.write_text(MANIFEST.format(mode="dev"))
    diff = k("diff", "--server-side", "-f", str(manifest))
    assert diff.rc == 1, diff.stderr
    changed = [line for line in diff.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert "-  mode: prod" in changed and "+  mode: dev" in changed
    k.ok("apply", "--server-side", "-f", str(manifest))
    assert k.ok("-n", "shop", "get", "configmap", "settings", "-o", "jsonpath={.data.mode}") == "dev"


def test_crd_objects_with_printer_columns(session_kubectl: Kubectl, tmp_path: Path) -> None:
    k = session_kubectl
    k.ok("create", "namespace", "shop")
    (tmp_path / "crd.yaml").write_text(CRD)
    (tmp_path / "widgets.yaml").write_text(WIDGETS)
    assert k.ok("create", "-f", str(tmp_path / "crd.yaml")) == \
        "customresourcedefinition.apiextensions.k8s.io/widgets.shop.example.com created\n"
    assert k.ok("wait", "--for=condition=Established", "crd/widgets.shop.example.com", "--timeout=30s") == \
        "customresourcedefinition.apiextensions.k8s.io/widgets.shop.example.com condition met\n"
    assert k.ok("create", "-f", str(tmp_path / "widgets.yaml")) == \
        "widget.shop.example.com/small created\nwidget.shop.example.com/large created\n"
    # the CRD's columns replace the default Age column (upstream's serveDefaultColumnsIfEmpty)
    assert k.ok("-n", "shop", "get", "wdg") == "NAME    SIZE   COLOR\nlarge   9      blue\nsmall   1      red\n"
    assert k.ok("-n", "shop", "get", "widgets", "-o", "custom-columns=NAME:.metadata.name,SIZE:.spec.size",
                "--sort-by=.spec.size") == "NAME    SIZE\nsmall   1\nlarge   9\n"
    assert k.ok("-n", "shop", "delete", "widget", "small") == deleted(k, 'widget.shop.example.com "small"', "shop")
    assert k.ok("delete", "crd", "widgets.shop.example.com") == deleted(
        k, 'customresourcedefinition.apiextensions.k8s.io "widgets.shop.example.com"')


@pytest.mark.fakekube(nodes=1, authorization_mode="RBAC")
def test_auth_can_i_with_rbac(session_kubectl: Kubectl) -> None:
    """The kubeconfig's user is an admin; a ServiceAccount may do what its Role grants, no more."""
    k = session_kubectl
    k.ok("create", "namespace", "shop")
    assert k.ok("-n", "shop", "create", "serviceaccount", "deployer") == "serviceaccount/deployer created\n"
    assert k.ok("-n", "shop", "create", "role", "deployer", "--verb=get,list,watch,create",
                "--resource=deployments") == "role.rbac.authorization.k8s.io/deployer created\n"
    assert k.ok("-n", "shop", "create", "rolebinding", "deployer", "--role=deployer",
                "--serviceaccount=shop:deployer") == "rolebinding.rbac.authorization.k8s.io/deployer created\n"
    assert k("auth", "can-i", "delete", "nodes")[:2] == (0, "yes\n")
    sa = "--as=system:serviceaccount:shop:deployer"
    assert k("-n", "shop", "auth", "can-i", "create", "deployments.apps", sa) == (0, "yes\n", "")
    assert k("-n", "shop", "auth", "can-i", "delete", "deployments.apps", sa).stdout == "no\n"
    assert k("-n", "default", "auth", "can-i", "list", "deployments.apps", sa).stdout == "no\n"
    denied = k("-n", "shop", "delete", "deployment", "web", sa)
    assert denied.rc == 1
    assert denied.stderr == ('Error from server (Forbidden): deployments.apps "web" is forbidden: User '
                             '"system:serviceaccount:shop:deployer" cannot delete resource "deployments" in API '
                             'group "apps" in the namespace "shop"\n')
