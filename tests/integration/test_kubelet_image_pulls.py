"""Images that can be missing, at exact virtual times (kubelet/registry.py, kubelet/imageref.py).

By default (``imagePolicy: plausible``) a made-up Docker Hub name and a tag no release has
fail as on a real registry, with containerd's messages and the kubelet's pull back-off
(10 s doubling to 5 min); references that do not parse are InvalidImageName; pull policies
follow upstream's image manager. Times are seconds since the cluster's epoch.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakekube import Cluster
from tests.integration.timeline import at

Obj = dict[str, Any]

MADE_UP = "i_made_this_up:and_this_too"
MADE_UP_ERROR = ('rpc error: code = Unknown desc = failed to pull and unpack image '
                 '"docker.io/library/i_made_this_up:and_this_too": failed to resolve reference '
                 '"docker.io/library/i_made_this_up:and_this_too": pull access denied, repository does not exist '
                 'or may require authorization: server message: insufficient_scope: authorization failed')


def make_pod(name: str, image: str, node: str = "node-1", **container: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": image, **container}]}}


def state(cluster: Cluster, name: str) -> Obj:
    return cluster.get("v1", "Pod", name)["status"]["containerStatuses"][0]["state"]


def kubelet_events(cluster: Cluster, name: str) -> list[tuple[str, int, str, str]]:
    """(reason, count, last time HH:MM:SS, message) of the kubelet's events about the pod."""
    return [(e["reason"], e["count"], e["lastTimestamp"][11:19], e["message"])
            for e in cluster.events(involved_name=name) if e["source"].get("component") == "kubelet"]


def test_a_made_up_image_backs_off_ten_seconds_doubling_to_five_minutes() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("bad", MADE_UP))
    assert state(cluster, "bad") == {"waiting": {"reason": "ErrImagePull", "message": MADE_UP_ERROR}}
    assert kubelet_events(cluster, "bad") == [
        ("Pulling", 1, "00:00:00", f'Pulling image "{MADE_UP}"'),
        ("Failed", 1, "00:00:00", f'Failed to pull image "{MADE_UP}": {MADE_UP_ERROR}'),
        ("Failed", 1, "00:00:00", "Error: ErrImagePull")]
    at(cluster, 0.999)
    assert state(cluster, "bad")["waiting"]["reason"] == "ErrImagePull"
    at(cluster, 1)
    backing_off = {"waiting": {"reason": "ImagePullBackOff",
                               "message": f'Back-off pulling image "{MADE_UP}": ErrImagePull: {MADE_UP_ERROR}'}}
    assert state(cluster, "bad") == backing_off
    assert kubelet_events(cluster, "bad")[-2:] == [
        ("BackOff", 1, "00:00:01", f'Back-off pulling image "{MADE_UP}"'),
        ("Failed", 1, "00:00:01", "Error: ImagePullBackOff")]
    pulls = []
    for second in range(1, 920):
        at(cluster, second)
        if state(cluster, "bad")["waiting"]["reason"] == "ErrImagePull":
            pulls.append(second)
    # Each failure waits 10, 20, 40, 80, 160, then 300 s (the cap) before the next pull.
    assert pulls == [10, 30, 70, 150, 310, 610, 910]
    assert cluster.get("v1", "Pod", "bad")["status"]["phase"] == "Pending"


def test_a_made_up_tag_of_a_known_image_is_not_found_while_a_real_one_runs() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("real", "nginx:1.27"))
    cluster.create(make_pod("made-up", "nginx:1.0.23449928384992872784"))
    at(cluster, 2)
    assert "running" in state(cluster, "real")
    reference = "docker.io/library/nginx:1.0.23449928384992872784"
    assert state(cluster, "made-up")["waiting"]["message"] == (
        f'Back-off pulling image "nginx:1.0.23449928384992872784": ErrImagePull: rpc error: code = NotFound '
        f'desc = failed to pull and unpack image "{reference}": failed to resolve reference "{reference}": '
        f"{reference}: not found")


def test_a_reference_that_does_not_parse_is_invalid_image_name_at_every_resync() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("upper", "Nginx:1.27"))
    message = ('Failed to apply default image tag "Nginx:1.27": couldn\'t parse image name "Nginx:1.27": '
               "invalid reference format: repository name (library/Nginx) must be lowercase")
    assert state(cluster, "upper") == {"waiting": {"reason": "InvalidImageName", "message": message}}
    at(cluster, 25)
    assert kubelet_events(cluster, "upper") == [("InspectFailed", 3, "00:00:20", message),
                                                ("Failed", 3, "00:00:20", "Error: InvalidImageName")]
    assert cluster.get("v1", "Pod", "upper")["status"]["phase"] == "Pending"


def test_pull_policies_use_the_nodes_images() -> None:
    """IfNotPresent: a second pod on the node finds the image; Never: a missing one waits
    (ErrImageNeverPull, re-checked every 10 s) until a pull puts it on the node; Always
    pulls whatever the node holds."""
    cluster = Cluster(nodes=2)
    cluster.create(make_pod("never", "redis:7.4", imagePullPolicy="Never"))
    never = 'Container image "redis:7.4" is not present with pull policy of Never'
    assert state(cluster, "never") == {"waiting": {"reason": "ErrImageNeverPull", "message": never}}
    cluster.create(make_pod("first", "redis:7.4", node="node-2"))  # another node: no help
    at(cluster, 5)
    cluster.create(make_pod("puller", "redis:7.4", imagePullPolicy="IfNotPresent"))
    cluster.create(make_pod("again", "redis:7.4", imagePullPolicy="Always"))
    assert [e[0] for e in kubelet_events(cluster, "puller")] == ["Pulling", "Pulled"]
    assert [e[0] for e in kubelet_events(cluster, "again")] == ["Pulling", "Pulled"]
    at(cluster, 9.999)
    assert state(cluster, "never")["waiting"]["reason"] == "ErrImageNeverPull"
    at(cluster, 10)  # the re-sync finds it on the node
    assert kubelet_events(cluster, "never")[-1] == (
        "Pulled", 1, "00:00:10", 'Container image "redis:7.4" already present on machine')
    cluster.create(make_pod("second", "redis:7.4"))
    assert kubelet_events(cluster, "second") == [
        ("Pulled", 1, "00:00:10", 'Container image "redis:7.4" already present on machine')]
    at(cluster, 11)
    assert {name: "running" in state(cluster, name) for name in ("never", "second")} == {"never": True, "second": True}


def test_a_rollout_to_a_missing_image_stalls_until_its_progress_deadline() -> None:
    cluster = Cluster(nodes=2)
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 3, "progressDeadlineSeconds": 60, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}
    cluster.create(deployment)
    at(cluster, 10)
    assert cluster.get("apps/v1", "Deployment", "web")["status"]["availableReplicas"] == 3
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "nginx",
                                                            "image": "nginx:1.0.23449928384992872784"}]}}}}
    cluster.api.patch(cluster.resource("apps/v1", "Deployment"), "default", "web",
                      "application/strategic-merge-patch+json", json.dumps(patch).encode())
    at(cluster, 69)
    status = cluster.get("apps/v1", "Deployment", "web")["status"]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert progressing["status"] == "True" and status["availableReplicas"] == 3
    new_pods = [p for p in cluster.list("v1", "Pod", "default")
                if p["spec"]["containers"][0]["image"].startswith("nginx:1.0.")]
    assert new_pods and all(p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
                            in ("ErrImagePull", "ImagePullBackOff") for p in new_pods)
    at(cluster, 71)
    status = cluster.get("apps/v1", "Deployment", "web")["status"]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert status["availableReplicas"] == 3 and status["updatedReplicas"] == 1


@pytest.mark.parametrize(("policy", "image", "pulls"), [
    ("exists", MADE_UP, True),                       # fakekube's old behaviour: everything pulls
    ("plausible", "example/app:1.4.2", True),        # an image fakekube cannot judge
    ("missing", "example/app:1.4.2", False),         # ... is not found when told so
    ("missing", "nginx:1.27", True),                 # a plausible tag of an official image still pulls
    ("missing", "registry.k8s.io/pause:3.10", True),  # kind's node image holds it
    ("plausible", "registry.test/app:1", False),     # a reserved host never resolves
])
def test_the_image_policy_decides_what_nobody_can_judge(policy: str, image: str, pulls: bool) -> None:
    cluster = Cluster(nodes=1, image_policy=policy)
    cluster.create(make_pod("p", image))
    at(cluster, 2)
    assert ("running" in state(cluster, "p")) is pulls


def test_images_and_digests_declared_in_the_policy_pull_and_missing_globs_never_do() -> None:
    digest = "sha256:" + "ab" * 32
    cluster = Cluster(nodes=1, image_policy={"policy": "missing", "images": ["example/app:*"],
                                             "digests": [f"example/tool@{digest}"], "missing": ["nginx:1.26*"]})
    for name, image in (("listed", "example/app:2"), ("digest", f"example/tool@{digest}"),
                        ("other-digest", "example/tool@sha256:" + "cd" * 32), ("forbidden", "nginx:1.26.1")):
        cluster.create(make_pod(name, image))
    at(cluster, 2)
    assert {name: "running" in state(cluster, name) for name in ("listed", "digest", "other-digest", "forbidden")} == {
        "listed": True, "digest": True, "other-digest": False, "forbidden": False}
