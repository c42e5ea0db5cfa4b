"""kubectl against the garbage collector and the namespace controller: ``delete
--cascade=background|foreground|orphan`` (a Deployment with its ReplicaSet and pods, and
ConfigMaps owning ConfigMaps) and ``delete ns`` waiting until the namespace is gone, while
the test moves the clock (the e2e cluster's clock is manual)."""

from __future__ import annotations

import json
import subprocess
from typing import Callable

import pytest

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION

from .conftest import Kubectl, Result, Stream
from .test_kubectl import deleted

pytestmark = pytest.mark.fakekube(nodes=2)


def names(kubectl: Kubectl, *args: str) -> list[str]:
    listing = json.loads(kubectl.ok("get", *args, "-o", "json"))
    return [item["metadata"]["name"] for item in listing["items"]]


def wait_while_the_clock_moves(kubectl: Kubectl, fakekube: Cluster, args: tuple[str, ...], step_s: float,
                               steps: int, done: Callable[[], bool]) -> tuple[Result, float]:
    """Run kubectl in the background (it prints, then waits for the deletion), moving the
    clock ``step_s`` at a time until the deletion is ``done``: its result and the virtual
    seconds it took."""
    stream = kubectl.stream(*args)
    stream.wait_for_lines(1)
    return finish(stream, fakekube, step_s, steps, done)


def finish(stream: Stream, fakekube: Cluster, step_s: float, steps: int,
           done: Callable[[], bool]) -> tuple[Result, float]:
    """Move the clock ``step_s`` at a time until the cluster says the deletion is ``done`` (at
    most ``steps``), checking at each step that kubectl still waits; then kubectl must exit.

    The cluster, not kubectl, says when to stop, so a step costs no wall time waiting for an
    exit that cannot come yet: each still-waiting check gives kubectl ``STILL_WAITING_S`` to
    exit early (under load it may not notice in time, which weakens a check but never fails a
    correct kubectl), and the exit itself gets ``EXIT_WAIT_S``."""
    started = fakekube.now
    for _ in range(steps):
        if done():
            break
        assert not exited(stream, wait_s=STILL_WAITING_S), "kubectl exited before the deletion was done"
        fakekube.advance(step_s)
    assert exited(stream, wait_s=EXIT_WAIT_S), "kubectl still waits after the deletion"
    return stream.stop(), (fakekube.now - started).total_seconds()


#: Wall seconds kubectl is given to exit early at each step, and to exit once the deletion is done.
STILL_WAITING_S, EXIT_WAIT_S = 0.2, 30.0


def exited(stream: Stream, wait_s: float) -> bool:
    """Has kubectl exited (given up to ``wait_s`` of wall time to notice what it watches)?"""
    try:
        stream._process.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def missing(fakekube: Cluster, api_version: str, kind: str, name: str, namespace: str = "") -> bool:
    return not fakekube.list(api_version, kind, namespace, field_selector=f"metadata.name={name}")


def apply(kubectl: Kubectl, obj: dict) -> None:
    kubectl.ok("apply", "-f", "-", stdin=json.dumps(obj))


def test_cascade_background_foreground_and_orphan_on_deployments(kubectl: Kubectl, fakekube: Cluster) -> None:
    for name in ("kept", "gone"):
        assert kubectl.ok("create", "deployment", name, "--image=nginx:1.27", "--replicas=2") \
            == f"deployment.apps/{name} created\n"
    fakekube.advance(2)
    assert len(names(kubectl, "pods")) == 4
    assert kubectl.ok("delete", "deployment", "kept", "--cascade=orphan") == deleted(kubectl, 'deployment.apps "kept"')
    [kept_rs] = names(kubectl, "rs", "-l", "app=kept")
    rs = json.loads(kubectl.ok("get", "rs", kept_rs, "-o", "json"))
    assert "ownerReferences" not in rs["metadata"] and len(names(kubectl, "pods", "-l", "app=kept")) == 2
    assert kubectl.ok("delete", "deployment", "gone") == deleted(kubectl, 'deployment.apps "gone"')  # background
    assert names(kubectl, "rs", "-l", "app=gone") == [] and names(kubectl, "pods", "-l", "app=gone") == []
    # Foreground with pods whose containers take 10 s to stop: kubectl waits for it all.
    apply(kubectl, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "slow"},
                    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "slow"}},
                             "template": {"metadata": {"labels": {"app": "slow"}, "annotations": {
                                 BEHAVIOUR_ANNOTATION: json.dumps({"stop_delay_s": 10})}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    fakekube.advance(2)
    result, took_s = wait_while_the_clock_moves(
        kubectl, fakekube, ("delete", "deployment", "slow", "--cascade=foreground"), 1, 30,
        lambda: missing(fakekube, "apps/v1", "Deployment", "slow", "default"))
    assert (result.rc, result.stdout + "\n") == (0, deleted(kubectl, 'deployment.apps "slow"'))
    assert took_s == 10
    assert names(kubectl, "deployments") == [] and names(kubectl, "pods", "-l", "app=slow") == []


def test_cascade_on_configmaps_owning_configmaps(kubectl: Kubectl, fakekube: Cluster) -> None:
    for owner in ("bg", "fg", "or"):
        kubectl.ok("create", "configmap", owner)
        uid = kubectl.ok("get", "configmap", owner, "-o", "jsonpath={.metadata.uid}")
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid, "blockOwnerDeletion": True}
        apply(kubectl, {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": f"{owner}-child", "ownerReferences": [ref]}})
    assert kubectl.ok("delete", "configmap", "bg", "--cascade=background") == deleted(kubectl, 'configmap "bg"')
    assert kubectl.ok("delete", "configmap", "fg", "--cascade=foreground") == deleted(kubectl, 'configmap "fg"')
    assert kubectl.ok("delete", "configmap", "or", "--cascade=orphan") == deleted(kubectl, 'configmap "or"')
    assert [n for n in names(kubectl, "configmaps") if n != "kube-root-ca.crt"] == ["or-child"]
    child = json.loads(kubectl.ok("get", "configmap", "or-child", "-o", "json"))
    assert "ownerReferences" not in child["metadata"]


def test_delete_namespace_returns_once_the_finalizer_is_removed(kubectl: Kubectl, fakekube: Cluster) -> None:
    assert kubectl.ok("create", "namespace", "demo") == "namespace/demo created\n"
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "-n", "demo")
    kubectl.ok("expose", "deployment", "web", "--port=80", "-n", "demo")
    apply(kubectl, {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "held", "namespace": "demo", "finalizers": ["example.com/hold"]}})
    fakekube.advance(2)
    stream = kubectl.stream("delete", "namespace", "demo")
    assert stream.wait_for_lines(1) == ['namespace "demo" deleted']
    fakekube.advance(30)  # the held ConfigMap keeps it Terminating
    header, line = kubectl.ok("get", "namespace", "demo").splitlines()
    assert line.split()[:2] == ["demo", "Terminating"]
    conditions = {c["type"]: c["message"] for c in
                  json.loads(kubectl.ok("get", "namespace", "demo", "-o", "json"))["status"]["conditions"]}
    assert conditions["NamespaceFinalizersRemaining"] == \
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    refused = kubectl("create", "configmap", "late", "-n", "demo")
    assert refused.rc == 1
    assert refused.stderr.strip() == ('error: failed to create configmap: configmaps "late" is forbidden: unable to '
                                      'create new content in namespace demo because it is being terminated')
    assert not exited(stream, wait_s=0.5)  # still waiting
    kubectl.ok("patch", "configmap", "held", "-n", "demo", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    # Passes at 2 + 5 (pods), 12 (the rest), 17 (its status write), then every 8 s: 25, 33.
    result, took_s = finish(stream, fakekube, 1, 10, lambda: missing(fakekube, "v1", "Namespace", "demo"))
    assert (result.rc, result.stdout, took_s) == (0, 'namespace "demo" deleted', 1)
    gone = kubectl("get", "namespace", "demo")
    assert gone.stderr.strip() == 'Error from server (NotFound): namespaces "demo" not found'


def test_finalize_by_hand_ends_a_stuck_namespace_and_leaves_its_content(kubectl: Kubectl, fakekube: Cluster) -> None:
    """The well-known recipe for a namespace stuck Terminating: PUT .../finalize without
    ``kubernetes``. The namespace goes at once; what held it stays behind, as upstream."""
    kubectl.ok("create", "namespace", "stuck")
    apply(kubectl, {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "held", "namespace": "stuck", "finalizers": ["example.com/hold"]}})
    assert kubectl.ok("delete", "namespace", "stuck", "--wait=false") == 'namespace "stuck" deleted\n'
    fakekube.advance(10)
    # Deleting it again changes nothing: the apiserver answers the terminating namespace (200).
    assert kubectl.ok("delete", "namespace", "stuck", "--wait=false") == 'namespace "stuck" deleted\n'
    ns = json.loads(kubectl.ok("get", "namespace", "stuck", "-o", "json"))
    ns["spec"]["finalizers"] = []
    out = kubectl.ok("replace", "--raw", "/api/v1/namespaces/stuck/finalize", "-f", "-", stdin=json.dumps(ns))
    assert json.loads(out)["metadata"]["name"] == "stuck"
    assert kubectl("get", "namespace", "stuck").rc == 1
    assert [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap", "stuck")] == ["held"]
