"""kubectl 1.27 and 1.28, which read OpenAPI v2 only as protobuf (``/openapi/v2``): ``explain``,
``apply`` with server-side field validation found through the document, and a client-side
apply that patches with the document's merge keys."""

from __future__ import annotations

import pytest

from fakekube import Cluster

from .conftest import Kubectl, find_kubectl

pytestmark = pytest.mark.fakekube(nodes=1)

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
"""


@pytest.fixture(params=("1.27", "1.28"), ids=lambda v: f"kubectl{v}")
def old_kubectl(request: pytest.FixtureRequest, fakekube: Cluster, kubectl_cache_dir: str) -> Kubectl:
    binary = find_kubectl(request.param)
    if binary is None:
        pytest.skip(f"kubectl {request.param} not found beside the `kubectl` on PATH (Google Cloud CLI package)")
    return Kubectl(binary, request.param, fakekube.kubeconfig, kubectl_cache_dir)


def test_explain(old_kubectl: Kubectl) -> None:
    out = old_kubectl.ok("explain", "deployment.spec.template.spec.containers.ports")
    assert out.startswith("GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: ports <[]ContainerPort>\n")
    assert "  containerPort\t<integer> -required-\n" in out
    assert "  protocol\t<string>\n" in out


def test_apply_validates_on_the_server_and_patches_with_merge_keys(old_kubectl: Kubectl, fakekube: Cluster) -> None:
    bad = old_kubectl("apply", "-f", "-", stdin=DEPLOYMENT.replace("image: nginx:1.27", "image: nginx:1.27\n        bogus: 1"))
    assert bad.rc == 1
    assert bad.stderr == ('Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" '
                          'cannot be handled as a Deployment: strict decoding error: unknown field '
                          '"spec.template.spec.containers[0].bogus"\n')
    assert old_kubectl.ok("apply", "-f", "-", stdin=DEPLOYMENT) == "deployment.apps/web created\n"
    changed = DEPLOYMENT.replace("nginx:1.27", "nginx:1.28")
    assert old_kubectl.ok("apply", "-f", "-", stdin=changed) == "deployment.apps/web configured\n"
    [container] = fakekube.get("apps/v1", "Deployment", "web")["spec"]["template"]["spec"]["containers"]
    assert (container["image"], container["ports"]) == ("nginx:1.28", [{"containerPort": 80, "protocol": "TCP"}])
    assert old_kubectl.ok("apply", "-f", "-", stdin=changed) == "deployment.apps/web unchanged\n"
