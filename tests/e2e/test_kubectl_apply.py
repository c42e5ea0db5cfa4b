"""kubectl apply (client- and server-side), diff and managedFields against fakekube."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.fakekube(nodes=1)

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
"""


def managers(kubectl, kind: str = "deployment", name: str = "web") -> list[tuple[str, str]]:
    obj = json.loads(kubectl.ok("get", kind, name, "-o", "json", "--show-managed-fields"))
    return [(entry["manager"], entry["operation"]) for entry in obj["metadata"]["managedFields"]]


def test_server_side_apply_twice_then_diff(kubectl) -> None:
    manifest = DEPLOYMENT.format(replicas=2)
    assert kubectl.ok("apply", "--server-side", "-f", "-", stdin=manifest).strip() == "deployment.apps/web serverside-applied"
    again = kubectl("apply", "--server-side", "-f", "-", stdin=manifest)
    assert again.rc == 0, again.stderr
    assert again.stdout.strip() == "deployment.apps/web serverside-applied"
    assert ("kubectl", "Apply") in managers(kubectl)
    same = kubectl("diff", "--server-side", "-f", "-", stdin=manifest)
    assert (same.rc, same.stdout) == (0, "")
    changed = kubectl("diff", "--server-side", "-f", "-", stdin=DEPLOYMENT.format(replicas=4))
    assert changed.rc == 1, changed.stderr
    assert "-  replicas: 2" in changed.stdout and "+  replicas: 4" in changed.stdout


def test_client_side_apply_then_diff_and_upgrade_to_server_side(kubectl) -> None:
    manifest = DEPLOYMENT.format(replicas=2)
    assert kubectl.ok("apply", "-f", "-", stdin=manifest).strip() == "deployment.apps/web created"
    assert kubectl.ok("apply", "-f", "-", stdin=manifest).strip() == "deployment.apps/web unchanged"
    assert ("kubectl-client-side-apply", "Update") in managers(kubectl)
    same = kubectl("diff", "-f", "-", stdin=manifest)
    assert (same.rc, same.stdout) == (0, "")
    changed = kubectl("diff", "-f", "-", stdin=DEPLOYMENT.format(replicas=3))
    assert changed.rc == 1 and "+  replicas: 3" in changed.stdout
    # The upgrade: kubectl's server-side manager takes over what the annotation shows it set.
    upgraded = kubectl("apply", "--server-side", "-f", "-", stdin=DEPLOYMENT.format(replicas=3))
    assert upgraded.rc == 0, upgraded.stderr
    obj = json.loads(kubectl.ok("get", "deployment", "web", "-o", "json"))
    assert obj["spec"]["replicas"] == 3
    last = json.loads(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 3


def test_conflict_with_another_manager_and_force(kubectl) -> None:
    kubectl.ok("apply", "--server-side", "--field-manager", "team-a", "-f", "-", stdin=DEPLOYMENT.format(replicas=2))
    refused = kubectl("apply", "--server-side", "-f", "-", stdin=DEPLOYMENT.format(replicas=5))
    assert refused.rc == 1
    assert 'Apply failed with 1 conflict: conflict with "team-a": .spec.replicas' in refused.stderr
    forced = kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", stdin=DEPLOYMENT.format(replicas=5))
    assert forced.rc == 0, forced.stderr
    assert json.loads(kubectl.ok("get", "deployment", "web", "-o", "json"))["spec"]["replicas"] == 5


def test_managed_fields_shown_on_request(kubectl) -> None:
    kubectl.ok("create", "configmap", "settings", "--from-literal=mode=fast")
    plain = kubectl.ok("get", "configmap", "settings", "-o", "yaml")
    assert "managedFields" not in plain
    shown = kubectl.ok("get", "configmap", "settings", "-o", "yaml", "--show-managed-fields")
    assert "manager: kubectl-create" in shown and "operation: Update" in shown
    assert "f:mode: {}" in shown
