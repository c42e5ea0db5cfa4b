"""A default ``fakekube serve`` provisions volumes as kind does: a claim of the default class
``standard`` is provisioned by local-path on its pod's node once the pod is scheduled, and
``kubectl wait`` for the pod returns. One server for the module, real time (1x); each wait
is bounded by kubectl's own ``--timeout``.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.e2e.conftest import Kubectl, served

VERSION = "1.33"

MANIFEST = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: x
spec:
  containers:
  - name: app
    image: nginx
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: data
"""


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl 1.33 against one ``fakekube serve`` with its defaults (kind's system pods)."""
    with served(tmp_path_factory.mktemp("serve-volumes"), "--nodes", "2") as server:
        yield server.kubectl


def test_a_pod_with_a_claim_becomes_ready_on_a_provisioned_volume(kubectl: Kubectl) -> None:
    assert kubectl.ok("get", "storageclass", "--no-headers").split()[:2] == ["standard", "(default)"]
    kubectl.ok("apply", "-f", "-", stdin=MANIFEST)
    waited = kubectl("wait", "--for=condition=Ready", "pod/x", "--timeout=60s", timeout_s=70)
    assert (waited.rc, waited.stdout) == (0, "pod/x condition met\n"), waited.stderr
    name, status, volume, capacity, modes, storage_class = kubectl.ok("get", "pvc", "data", "--no-headers").split()[:6]
    uid = kubectl.ok("get", "pvc", "data", "-o", "jsonpath={.metadata.uid}")
    assert (name, status, volume, capacity, modes, storage_class) == (
        "data", "Bound", f"pvc-{uid}", "1Gi", "RWO", "standard")
    node = kubectl.ok("get", "pod", "x", "-o", "jsonpath={.spec.nodeName}")
    assert kubectl.ok("get", "pv", volume, "-o", "jsonpath={.spec.nodeAffinity.required.nodeSelectorTerms[0]"
                      ".matchExpressions[0].values[0]}") == node
    described = kubectl.ok("describe", "pvc", "data")
    assert "Provisioning" in described and "ProvisioningSucceeded" in described, described
