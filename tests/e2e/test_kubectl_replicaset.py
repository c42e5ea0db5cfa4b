"""kubectl against the ReplicaSet controller: create from YAML, get's DESIRED/CURRENT/READY
columns as the pods start, `kubectl scale` up and down, and describe's pod events."""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster

from .conftest import Kubectl
from .test_kubectl import section

pytestmark = pytest.mark.fakekube(nodes=2)

RS_YAML = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"""


def row(kubectl: Kubectl) -> list[str]:
    header, line = kubectl.ok("get", "rs", "web").splitlines()
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    return line.split()[:4]


def pod_names(kubectl: Kubectl) -> list[str]:
    listed = json.loads(kubectl.ok("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    return sorted(p["metadata"]["name"] for p in listed if not p["metadata"].get("deletionTimestamp"))


def test_create_scale_and_get_a_replica_set(kubectl: Kubectl, fakekube: Cluster) -> None:
    assert kubectl.ok("create", "-f", "-", stdin=RS_YAML) == "replicaset.apps/web created\n"
    assert row(kubectl) == ["web", "2", "2", "0"]
    fakekube.advance(1)  # the default behaviour is Ready one second after binding
    assert row(kubectl) == ["web", "2", "2", "2"]
    assert kubectl.ok("scale", "rs/web", "--replicas=5") == "replicaset.apps/web scaled\n"
    assert row(kubectl) == ["web", "5", "5", "2"]
    fakekube.advance(1)
    assert row(kubectl) == ["web", "5", "5", "5"]
    names = pod_names(kubectl)
    assert len(names) == 5 and all(name.startswith("web-") and len(name) == 9 for name in names)
    events = section(kubectl.ok("describe", "rs", "web"), "Events")
    created = [line for line in events if "SuccessfulCreate" in line]
    assert len(created) == 5
    assert all(line.split()[0] == "Normal" and "replicaset-controller" in line for line in created)
    assert sorted(line.split("Created pod: ")[1] for line in created) == names
    assert kubectl.ok("scale", "replicaset", "web", "--replicas=1") == "replicaset.apps/web scaled\n"
    assert row(kubectl) == ["web", "1", "1", "1"]
    assert len(pod_names(kubectl)) == 1
    deleted = [line for line in section(kubectl.ok("describe", "rs", "web"), "Events") if "SuccessfulDelete" in line]
    assert len(deleted) == 4 and all("Deleted pod: web-" in line for line in deleted)
