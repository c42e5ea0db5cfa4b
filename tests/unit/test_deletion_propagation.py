"""The apiserver's side of cascading deletion and namespace termination, with no controller
running: which finalizers a delete leaves (upstream's ``deletionFinalizersForGarbageCollection``),
a namespace held by ``spec.finalizers`` until ``namespaces/finalize`` empties them."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from fakekube.api.registry import FINALIZE, STATUS
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.api.verbs.deletion import DeleteOptions

Obj = dict[str, Any]


@pytest.fixture
def cluster() -> Cluster:
    return Cluster(controllers=(), scheduler=None)


def cm(name: str, finalizers: list[str] | None = None) -> Obj:
    meta: Obj = {"name": name}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def delete(cluster: Cluster, kind: str, name: str, namespace: str = "default", api_version: str = "v1",
           **options: Any) -> None:
    cluster.api.delete(cluster.resource(api_version, kind), namespace, name, DeleteOptions(**options))


def finalizers(cluster: Cluster, name: str) -> list[str] | None:
    return cluster.get("v1", "ConfigMap", name)["metadata"].get("finalizers")


def test_the_propagation_policy_sets_the_garbage_collectors_finalizer(cluster: Cluster) -> None:
    cluster.create(cm("fg"))
    cluster.create(cm("orphan"))
    cluster.create(cm("bg"))
    delete(cluster, "ConfigMap", "fg", propagation_policy="Foreground")
    delete(cluster, "ConfigMap", "orphan", orphan_dependents=True)
    delete(cluster, "ConfigMap", "bg", propagation_policy="Background")
    assert finalizers(cluster, "fg") == ["foregroundDeletion"]
    assert finalizers(cluster, "orphan") == ["orphan"]
    assert [c["metadata"]["name"] for c in cluster.list("v1", "ConfigMap", "default")] == ["fg", "orphan"]


def test_a_later_delete_replaces_the_policy_finalizer_and_keeps_the_others(cluster: Cluster) -> None:
    cluster.create(cm("held", ["example.com/hold"]))
    delete(cluster, "ConfigMap", "held", propagation_policy="Orphan")
    assert finalizers(cluster, "held") == ["example.com/hold", "orphan"]
    delete(cluster, "ConfigMap", "held", propagation_policy="Foreground")
    assert finalizers(cluster, "held") == ["example.com/hold", "foregroundDeletion"]
    delete(cluster, "ConfigMap", "held")  # no policy: the finalizer already there decides
    assert finalizers(cluster, "held") == ["example.com/hold", "foregroundDeletion"]
    delete(cluster, "ConfigMap", "held", propagation_policy="Background")
    assert finalizers(cluster, "held") == ["example.com/hold"]


def test_a_background_delete_of_an_object_held_only_by_the_orphan_finalizer_removes_it(cluster: Cluster) -> None:
    cluster.create(cm("stuck"))
    delete(cluster, "ConfigMap", "stuck", propagation_policy="Orphan")
    delete(cluster, "ConfigMap", "stuck", propagation_policy="Background")
    assert cluster.list("v1", "ConfigMap", "default") == []


def test_replication_controllers_and_jobs_orphan_by_default(cluster: Cluster) -> None:
    template = {"metadata": {"labels": {"app": "a"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    cluster.create({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
                    "spec": {"replicas": 0, "selector": {"app": "a"},
                             "template": dict(template, spec=dict(template["spec"], restartPolicy="Always"))}})
    cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
                    "spec": {"template": template}})
    delete(cluster, "ReplicationController", "rc")
    delete(cluster, "Job", "job", api_version="batch/v1")
    assert cluster.get("v1", "ReplicationController", "rc")["metadata"]["finalizers"] == ["orphan"]
    assert cluster.get("batch/v1", "Job", "job")["metadata"]["finalizers"] == ["orphan"]


def namespace(cluster: Cluster, name: str) -> Obj:
    return cluster.get("v1", "Namespace", name, "")


def test_a_terminating_namespace_stays_until_finalize_empties_spec_finalizers(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})
    delete(cluster, "Namespace", "demo", namespace="")
    ns = namespace(cluster, "demo")
    assert ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
    rt = cluster.resource("v1", "Namespace")
    # A status write (the namespace controller's conditions) does not end it.
    ns["status"]["conditions"] = [{"type": "NamespaceContentRemaining", "status": "False",
                                   "reason": "ContentRemoved", "message": "All content successfully removed"}]
    cluster.api.update(rt, "", "demo", ns, WriteOptions(), STATUS)
    # Deleting it again answers it as it is (upstream's namespace REST Delete).
    again, code = cluster.api.delete(rt, "", "demo", DeleteOptions())
    assert (code, again["status"]["phase"], again["spec"]["finalizers"]) == (200, "Terminating", ["kubernetes"])
    ns = namespace(cluster, "demo")
    ns["spec"]["finalizers"] = []
    last = cluster.api.update(rt, "", "demo", ns, WriteOptions(), FINALIZE).obj
    # As upstream's deleteWithoutFinalizers: the emptied version is never stored (the watch's
    # DELETED event carries the last stored state); the answer is the object the update made,
    # at the resourceVersion it replaced (kube-apiserver 1.36 answers `"spec": {}`).
    assert last["metadata"]["name"] == "demo" and "finalizers" not in last["spec"]
    assert last["metadata"]["resourceVersion"] == ns["metadata"]["resourceVersion"]
    assert [n["metadata"]["name"] for n in cluster.list("v1", "Namespace")] == ["default", "kube-node-lease",
                                                                                  "kube-public", "kube-system"]


def test_finalize_writes_the_namespace_but_its_status_and_checks_finalizer_names(cluster: Cluster) -> None:
    """Upstream's finalize strategy keeps only the status: the body's labels are written too
    (the reference answers so); bad names are reported by index."""
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})
    rt = cluster.resource("v1", "Namespace")
    ns = namespace(cluster, "demo")
    ns["spec"]["finalizers"] = ["kubernetes", "example.com/extra"]
    ns["metadata"]["labels"]["team"] = "a"
    updated = cluster.api.update(rt, "", "demo", ns, WriteOptions(), FINALIZE).obj
    assert updated["spec"]["finalizers"] == ["kubernetes", "example.com/extra"]
    assert updated["metadata"]["labels"]["team"] == "a"
    ns = namespace(cluster, "demo")
    ns["spec"]["finalizers"] = ["custom"]
    with pytest.raises(ApiError) as bad:
        cluster.api.update(rt, "", "demo", ns, WriteOptions(), FINALIZE)
    assert bad.value.code == 422
    assert 'spec.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it ' \
           'fully qualified' in bad.value.message


def test_a_namespace_without_spec_finalizers_goes_at_once(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}})
    rt = cluster.resource("v1", "Namespace")
    ns = namespace(cluster, "demo")
    ns["spec"]["finalizers"] = []
    cluster.api.update(rt, "", "demo", ns, WriteOptions(), FINALIZE)
    delete(cluster, "Namespace", "demo", namespace="")
    assert "demo" not in [n["metadata"]["name"] for n in cluster.list("v1", "Namespace")]


def test_removing_the_last_finalizer_is_one_deleted_event_with_the_last_stored_state(cluster: Cluster) -> None:
    cluster.create(cm("held", finalizers=["example.com/hold"]))
    delete(cluster, "ConfigMap", "held")
    rt = cluster.resource("v1", "ConfigMap")
    since = cluster.store.resource_version
    current = cluster.get("v1", "ConfigMap", "held")
    current["metadata"]["finalizers"] = []
    answer = cluster.api.update(rt, "default", "held", current, WriteOptions()).obj
    changes = [c for c in cluster.store.changes_since(since) if c.resource == "configmaps"]
    assert [(c.type, c.name) for c in changes] == [("DELETED", "held")]
    assert changes[0].obj["metadata"]["finalizers"] == ["example.com/hold"]
    # The answer is the object the update made, never stored: no finalizers, at the
    # resourceVersion it replaced (upstream's deleteWithoutFinalizers returns it).
    assert "finalizers" not in answer["metadata"]
    assert answer["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
