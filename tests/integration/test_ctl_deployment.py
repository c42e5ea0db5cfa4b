"""The Deployment controller at exact virtual times (kube-controller-manager 1.33).

Rolling updates stay within maxSurge/maxUnavailable at every change of the store's
history, a rollout that never becomes ready stops with ProgressDeadlineExceeded one second
after its deadline (upstream's re-check), Recreate never runs old and new pods at once,
``kubectl rollout undo``'s patch brings the old ReplicaSet back as the newest revision,
and scaling in mid-rollout is proportional. Pods are ready about a second after binding.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from fakekube import Cluster
from fakekube.api.admission import CREATE, Attributes, Chain, Handler
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from fakekube.objects.deployments import ANNOTATIONS_TO_SKIP, POD_TEMPLATE_HASH_LABEL, without_hash_label
from fakekube.objects.pods import is_pod_ready
from fakekube.objects.templatehash import compute_hash
from tests.integration.timeline import at

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
NEVER_READY = {"readiness": False}


def template(image: str = "nginx:1.27", behaviour: Obj | None = None, name: str = "web") -> Obj:
    """A pod template; with a ``behaviour``, annotated with it and given a readiness probe."""
    container: Obj = {"name": "c", "image": image}
    meta: Obj = {"labels": {"app": name}}
    if behaviour is not None:
        meta["annotations"] = {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}
        container["readinessProbe"] = {"httpGet": {"path": "/", "port": 80}}
    return {"metadata": meta, "spec": {"containers": [container]}}


def deployment(name: str = "web", replicas: int = 10, strategy: Obj | None = None, **spec: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": spec.pop("template", template(name=name)), **({"strategy": strategy} if strategy else {}),
                     **spec}}


def patch(cluster: Cluster, body: Any, name: str = "web", patch_type: str = MERGE) -> None:
    cluster.api.patch(cluster.resource("apps/v1", "Deployment"), "default", name, patch_type, json.dumps(body).encode())
    cluster.settle()


def set_image(cluster: Cluster, image: str, behaviour: Obj | None = None, name: str = "web") -> None:
    patch(cluster, {"spec": {"template": template(image, behaviour, name)}}, name)


def get(cluster: Cluster, name: str = "web") -> Obj:
    return cluster.get("apps/v1", "Deployment", name)


def condition(cluster: Cluster, condition_type: str, name: str = "web") -> Obj:
    return next(c for c in get(cluster, name)["status"]["conditions"] if c["type"] == condition_type)


def replica_sets(cluster: Cluster) -> dict[str, Obj]:
    return {rs["metadata"]["name"]: rs for rs in cluster.list("apps/v1", "ReplicaSet", "default")}


def sizes(cluster: Cluster) -> dict[str, int]:
    return {name: rs["spec"]["replicas"] for name, rs in replica_sets(cluster).items()}


def rs_name(cluster: Cluster, name: str = "web") -> str:
    """The name the current template's ReplicaSet has: ``<deployment>-<pod-template-hash>``."""
    return f"{name}-{compute_hash(get(cluster, name)['spec']['template'])}"


def messages(cluster: Cluster, name: str = "web") -> list[tuple[str, str, str]]:
    return [(e["lastTimestamp"][11:19], e["reason"], e["message"]) for e in cluster.events(involved_name=name)]


def watch_pods(cluster: Cluster) -> tuple[int, dict[str, Obj]]:
    """Where a pod watch starts: the resourceVersion and the pods at that instant."""
    with cluster.store.lock:
        return cluster.store.resource_version, {p["metadata"]["name"]: p
                                                for p in cluster.store.list(("", "pods"), "default")[0]}


def pod_states(cluster: Cluster, start: tuple[int, dict[str, Obj]]) -> Iterator[dict[str, Obj]]:
    """Every state of the default namespace's pods after ``start``, one per store change."""
    since_rv, pods = start[0], dict(start[1])
    yield pods
    for change in cluster.store.changes_since(since_rv):
        if change.resource != "pods" or change.namespace != "default":
            continue
        if change.type == "DELETED":
            pods.pop(change.name, None)
        else:
            pods[change.name] = change.obj
        yield pods


def active(pods: dict[str, Obj]) -> list[Obj]:
    return [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]


# -- creation --------------------------------------------------------------------------
def test_a_new_deployment_makes_its_hashed_replica_set_and_reports_progress() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(deployment(replicas=3))
    name = rs_name(cluster)
    rs = replica_sets(cluster)[name]
    hash_ = name.split("-", 1)[1]
    assert rs["metadata"]["labels"] == {"app": "web", POD_TEMPLATE_HASH_LABEL: hash_}
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", POD_TEMPLATE_HASH_LABEL: hash_}}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", POD_TEMPLATE_HASH_LABEL: hash_}
    assert rs["metadata"]["annotations"] == {"deployment.kubernetes.io/desired-replicas": "3",
                                             "deployment.kubernetes.io/max-replicas": "4",
                                             "deployment.kubernetes.io/revision": "1"}
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert get(cluster)["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "1"}
    progressing = condition(cluster, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("True", "ReplicaSetUpdated")
    assert progressing["message"] == f'ReplicaSet "{name}" is progressing.'
    assert condition(cluster, "Available")["reason"] == "MinimumReplicasUnavailable"
    at(cluster, 2)
    status = get(cluster)["status"]
    assert {k: status.get(k) for k in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                       "availableReplicas", "unavailableReplicas")} == {
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
        "unavailableReplicas": None}
    assert [c["type"] for c in status["conditions"]] == ["Available", "Progressing"]
    assert condition(cluster, "Available") | {"lastUpdateTime": "", "lastTransitionTime": ""} == {
        "type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
        "message": "Deployment has minimum availability.", "lastUpdateTime": "", "lastTransitionTime": ""}
    progressing = condition(cluster, "Progressing")
    assert (progressing["reason"], progressing["message"]) == (
        "NewReplicaSetAvailable", f'ReplicaSet "{name}" has successfully progressed.')
    assert progressing["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert messages(cluster) == [("00:00:00", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to 3")]


# -- rolling update --------------------------------------------------------------------
def test_a_rolling_update_of_10_stays_within_25_percent_surge_and_unavailability() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(deployment(replicas=10))
    at(cluster, 10)
    old = rs_name(cluster)
    start = watch_pods(cluster)
    set_image(cluster, "nginx:1.28")
    new = rs_name(cluster)
    at(cluster, 30)
    fewest_available, most_pods = 10, 0
    for pods in pod_states(cluster, start):
        running = active(pods)
        fewest_available = min(fewest_available, sum(1 for p in running if is_pod_ready(p)))
        most_pods = max(most_pods, len(running))
    assert (fewest_available, most_pods) == (8, 13)
    assert sizes(cluster) == {old: 0, new: 10}
    status = get(cluster)["status"]
    assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"]) == (10, 10, 10)
    assert condition(cluster, "Progressing")["reason"] == "NewReplicaSetAvailable"
    assert messages(cluster)[1:] == [
        ("00:00:10", "ScalingReplicaSet", f"Scaled up replica set {new} from 0 to 3"),
        ("00:00:10", "ScalingReplicaSet", f"Scaled down replica set {old} from 10 to 8"),
        ("00:00:10", "ScalingReplicaSet", f"Scaled up replica set {new} from 3 to 5"),
        ("00:00:11", "ScalingReplicaSet", f"Scaled down replica set {old} from 8 to 3"),
        ("00:00:11", "ScalingReplicaSet", f"Scaled up replica set {new} from 5 to 10"),
        ("00:00:12", "ScalingReplicaSet", f"Scaled down replica set {old} from 3 to 0"),
    ]
    assert replica_sets(cluster)[new]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert get(cluster)["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_max_surge_zero_replaces_one_pod_at_a_time() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(deployment(replicas=3, strategy={"type": "RollingUpdate",
                                                    "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}))
    at(cluster, 5)
    start = watch_pods(cluster)
    set_image(cluster, "nginx:1.28")
    at(cluster, 20)
    counts = [len(active(pods)) for pods in pod_states(cluster, start)]
    assert max(counts) == 3 and min(counts) == 2
    assert replica_sets(cluster)[rs_name(cluster)]["metadata"]["annotations"][
        "deployment.kubernetes.io/max-replicas"] == "3"


def test_percentages_round_surge_up_and_unavailability_down() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(deployment(replicas=7, strategy={"type": "RollingUpdate",
                                                    "rollingUpdate": {"maxSurge": "10%", "maxUnavailable": "10%"}}))
    at(cluster, 5)
    set_image(cluster, "nginx:1.28", NEVER_READY)
    # surge ceil(0.7) = 1, unavailable floor(0.7) = 0: one new pod, no old pod removed.
    assert sorted(sizes(cluster).values()) == [1, 7]


# -- progress deadline -----------------------------------------------------------------
def test_a_rollout_that_never_becomes_ready_exceeds_its_deadline_one_second_after_it() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(deployment(replicas=10, progressDeadlineSeconds=60))
    at(cluster, 10)
    set_image(cluster, "nginx:1.28", NEVER_READY)
    new = rs_name(cluster)
    at(cluster, 20)
    progressing = condition(cluster, "Progressing")
    assert (progressing["status"], progressing["reason"], progressing["lastUpdateTime"]) == (
        "True", "ReplicaSetUpdated", "2025-01-01T00:00:10Z")
    at(cluster, 70)  # the deadline: no progress for 60 s, not yet more than 60 s
    assert condition(cluster, "Progressing")["reason"] == "ReplicaSetUpdated"
    at(cluster, 70.999)
    assert condition(cluster, "Progressing")["reason"] == "ReplicaSetUpdated"
    at(cluster, 71)
    assert condition(cluster, "Progressing") == {
        "type": "Progressing", "status": "False", "lastUpdateTime": "2025-01-01T00:01:11Z",
        "lastTransitionTime": "2025-01-01T00:01:11Z", "reason": "ProgressDeadlineExceeded",
        "message": f'ReplicaSet "{new}" has timed out progressing.'}
    status = get(cluster)["status"]
    assert (status["availableReplicas"], status["updatedReplicas"], status["unavailableReplicas"]) == (8, 5, 5)
    assert condition(cluster, "Available")["status"] == "True"
    at(cluster, 400)  # it stays stuck, and says so once
    assert condition(cluster, "Progressing")["lastUpdateTime"] == "2025-01-01T00:01:11Z"


def test_a_paused_deployment_does_not_roll_out_or_time_out() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(deployment(replicas=2, progressDeadlineSeconds=30))
    at(cluster, 5)
    patch(cluster, {"spec": {"paused": True}})
    paused = condition(cluster, "Progressing")
    assert (paused["status"], paused["reason"], paused["message"]) == ("Unknown", "DeploymentPaused",
                                                                       "Deployment is paused")
    set_image(cluster, "nginx:1.28")
    at(cluster, 100)
    assert len(replica_sets(cluster)) == 1
    assert condition(cluster, "Progressing")["reason"] == "DeploymentPaused"
    patch(cluster, {"spec": {"paused": False}})
    at(cluster, 110)
    assert condition(cluster, "Progressing")["reason"] == "NewReplicaSetAvailable"
    assert sizes(cluster)[rs_name(cluster)] == 2


# -- undo, history ---------------------------------------------------------------------
def undo(cluster: Cluster, to_revision: int = 0, name: str = "web") -> None:
    """What ``kubectl rollout undo`` does: the old ReplicaSet's template (hash label removed)
    and annotations patched into the Deployment."""
    d = get(cluster, name)
    owned = [rs for rs in replica_sets(cluster).values()]
    by_revision = {int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]): rs for rs in owned}
    target = by_revision[to_revision or sorted(by_revision)[-2]]
    kept = {k: v for k, v in (d["metadata"].get("annotations") or {}).items() if k in ANNOTATIONS_TO_SKIP}
    copied = {k: v for k, v in target["metadata"]["annotations"].items() if k not in ANNOTATIONS_TO_SKIP}
    patch(cluster, [{"op": "replace", "path": "/spec/template", "value": without_hash_label(target["spec"]["template"])},
                    {"op": "replace", "path": "/metadata/annotations", "value": {**kept, **copied}}],
          name, JSON_PATCH)


def test_rollout_undo_brings_the_previous_template_back_as_the_newest_revision() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(deployment(replicas=4))
    at(cluster, 5)
    first = rs_name(cluster)
    set_image(cluster, "nginx:1.28")
    at(cluster, 20)
    second = rs_name(cluster)
    undo(cluster)
    assert rs_name(cluster) == first
    at(cluster, 40)
    assert sizes(cluster) == {first: 4, second: 0}
    assert get(cluster)["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    annotations = replica_sets(cluster)[first]["metadata"]["annotations"]
    assert (annotations["deployment.kubernetes.io/revision"],
            annotations["deployment.kubernetes.io/revision-history"]) == ("3", "1")
    assert get(cluster)["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert condition(cluster, "Progressing")["message"] == f'ReplicaSet "{first}" has successfully progressed.'


def test_old_replica_sets_past_the_revision_history_limit_are_deleted() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(deployment(replicas=1, revisionHistoryLimit=2))
    for i, image in enumerate(["nginx:1.25", "nginx:1.26", "nginx:1.27-alpine", "nginx:1.28"]):
        at(cluster, 10 * (i + 1))
        set_image(cluster, image)
    at(cluster, 60)
    revisions = sorted(int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"])
                       for rs in replica_sets(cluster).values())
    assert revisions == [3, 4, 5]


def test_the_deprecated_rollback_annotation_rolls_back_on_the_server() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(deployment(replicas=2))
    at(cluster, 5)
    set_image(cluster, "nginx:1.28")
    at(cluster, 15)
    patch(cluster, {"metadata": {"annotations": {"deprecated.deployment.rollback.to": "1"}}})
    at(cluster, 30)
    d = get(cluster)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert "deprecated.deployment.rollback.to" not in d["metadata"]["annotations"]
    assert ("00:00:15", "DeploymentRollback", 'Rolled back deployment "web" to revision 1') in messages(cluster)


# -- Recreate ----------------------------------------------------------------------------
def test_recreate_never_runs_old_and_new_pods_together() -> None:
    cluster = Cluster(nodes=2)
    slow_to_stop = template(behaviour={"stop_delay_s": 5})  # old pods take 5 s to terminate
    cluster.create(deployment(replicas=4, strategy={"type": "Recreate"}, template=slow_to_stop))
    at(cluster, 5)
    old = rs_name(cluster)
    start = watch_pods(cluster)
    set_image(cluster, "nginx:1.28")
    new = rs_name(cluster)
    at(cluster, 9.9)
    assert sizes(cluster) == {old: 0} and len(cluster.list("v1", "Pod", "default")) == 4
    at(cluster, 10)  # the last old pod is gone: the new ReplicaSet is created at once
    assert sizes(cluster) == {old: 0, new: 4}
    at(cluster, 60)
    for pods in pod_states(cluster, start):
        hashes = {p["metadata"]["labels"][POD_TEMPLATE_HASH_LABEL] for p in pods.values()}
        assert len(hashes) <= 1, sorted(pods)
    assert sizes(cluster) == {old: 0, new: 4}
    assert [m[1:] for m in messages(cluster)[1:]] == [
        ("ScalingReplicaSet", f"Scaled down replica set {old} from 4 to 0"),
        ("ScalingReplicaSet", f"Scaled up replica set {new} from 0 to 4")]
    assert condition(cluster, "Progressing")["reason"] == "NewReplicaSetAvailable"


# -- scaling -----------------------------------------------------------------------------
def test_scaling_in_mid_rollout_is_proportional() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(deployment(replicas=10))
    at(cluster, 5)
    old = rs_name(cluster)
    set_image(cluster, "nginx:1.28", NEVER_READY)
    new = rs_name(cluster)
    assert sizes(cluster) == {old: 8, new: 5}
    patch(cluster, {"spec": {"replicas": 20}})
    # 25 allowed (20 + 25 %), 13 there: old 8 * 25 / 13 ≈ 15, new 5 * 25 / 13 ≈ 10.
    assert sizes(cluster) == {old: 15, new: 10}
    annotations = replica_sets(cluster)[old]["metadata"]["annotations"]
    assert (annotations["deployment.kubernetes.io/desired-replicas"],
            annotations["deployment.kubernetes.io/max-replicas"]) == ("20", "25")
    patch(cluster, {"spec": {"replicas": 4}})
    # 5 allowed: old 15 * 5 / 25 = 3, new 10 * 5 / 25 = 2.
    assert sizes(cluster) == {old: 3, new: 2}


def test_min_ready_seconds_delays_availability() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(deployment(replicas=2, minReadySeconds=10))
    at(cluster, 5)
    assert get(cluster)["status"].get("availableReplicas") is None
    assert replica_sets(cluster)[rs_name(cluster)]["spec"]["minReadySeconds"] == 10
    at(cluster, 12)
    assert get(cluster)["status"]["availableReplicas"] == 2
    assert condition(cluster, "Progressing")["reason"] == "NewReplicaSetAvailable"


# -- failures ----------------------------------------------------------------------------
def test_a_replica_set_that_cannot_create_pods_reports_replica_failure_on_the_deployment() -> None:
    cluster = Cluster(nodes=1)
    bad = template()
    bad["spec"]["priorityClassName"] = "missing"
    cluster.create(deployment(replicas=2, template=bad))
    failure = condition(cluster, "ReplicaFailure")
    assert (failure["status"], failure["reason"], failure["message"]) == (
        "True", "FailedCreate", f'pods "{rs_name(cluster)}-" is forbidden: no PriorityClass with name missing was found')
    cluster.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "missing"},
                    "value": 10})
    at(cluster, 30)
    assert [c["type"] for c in get(cluster)["status"]["conditions"]] == ["Available", "Progressing"]


def test_a_refused_replica_set_create_is_a_progressing_false_condition_and_a_warning() -> None:
    cluster = Cluster(nodes=1)
    refusals: list[str] = []

    class NoReplicaSets(Handler):
        name = "NoReplicaSets"
        operations = frozenset((CREATE,))

        def admit(self, a: Attributes) -> None:
            if a.rt.key == ("apps", "replicasets"):
                refusals.append(a.name)
                raise a.forbidden("exceeded quota: rs")
    everything = cluster.api.admission
    cluster.api.admission = Chain(everything.plugins + (NoReplicaSets(),))
    cluster.create(deployment(replicas=2))
    name = refusals[0]
    message = (f'Failed to create new replica set "{name}": replicasets.apps "{name}" is forbidden: '
               "exceeded quota: rs")
    progressing = condition(cluster, "Progressing")
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "False", "ReplicaSetCreateError", message)
    assert ("00:00:00", "ReplicaSetCreateError", message) in messages(cluster)
    cluster.api.admission = everything
    at(cluster, 5)  # the retries back off from 5 ms; the next one creates it
    assert sizes(cluster) == {name: 2}
    assert condition(cluster, "Progressing")["reason"] == "NewReplicaSetAvailable"


# -- node failure ----------------------------------------------------------------------
def test_a_failed_node_makes_the_deployment_unavailable_until_its_pods_are_replaced() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(deployment(replicas=6))
    at(cluster, 2)
    assert sorted(p["spec"]["nodeName"] for p in cluster.list("v1", "Pod", "default")) == [
        "node-1", "node-1", "node-2", "node-2", "node-3", "node-3"]
    cluster.fail_node("node-1")  # its last Lease renewal was at 0 s
    at(cluster, 54.999)
    assert condition(cluster, "Available")["status"] == "True"
    at(cluster, 55)  # NotReady after the 50 s grace, at the lifecycle controller's 5 s pass: pods not ready
    available = condition(cluster, "Available")
    assert (available["status"], available["reason"], available["lastTransitionTime"]) == (
        "False", "MinimumReplicasUnavailable", "2025-01-01T00:00:55Z")  # 4 available < 6 - 1
    status = get(cluster)["status"]
    assert (status["availableReplicas"], status["unavailableReplicas"]) == (4, 2)
    at(cluster, 359.999)
    assert all(p["spec"]["nodeName"] for p in cluster.list("v1", "Pod", "default"))  # nothing replaced yet
    at(cluster, 360)  # evicted at the end of the 300 s toleration (tainted at 60 s), replaced at once
    fresh = [p for p in cluster.list("v1", "Pod", "default") if p["metadata"]["creationTimestamp"] == "2025-01-01T00:06:00Z"]
    assert sorted(p["spec"]["nodeName"] for p in fresh) in (["node-2", "node-3"], ["node-2", "node-2"],
                                                            ["node-3", "node-3"])
    at(cluster, 361)
    available = condition(cluster, "Available")
    assert (available["status"], available["lastTransitionTime"]) == ("True", "2025-01-01T00:06:01Z")
    assert condition(cluster, "Progressing")["reason"] == "NewReplicaSetAvailable"
