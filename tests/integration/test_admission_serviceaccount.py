"""The ServiceAccount admission plugin, as kube-apiserver 1.36 admits a pod.

Expected bodies were measured on a real kube-apiserver 1.36 (a bare apiserver, its
``default`` ServiceAccount created by hand): a pod naming no account runs as ``default``
and every container and init container mounts a projected ``kube-api-access-xxxxx``
volume (a 3607 s token, ``kube-root-ca.crt``'s ``ca.crt``, the namespace) read-only at
``/var/run/secrets/kubernetes.io/serviceaccount``, appended after what the pod has;
``automountServiceAccountToken: false`` on the pod, or on the account when the pod does
not say, turns that off; the fields admission sets are not the caller's in managedFields;
a missing account is a 403. (The reference, built from OpenShift's vendor tree, adds a
fourth ``openshift-service-ca.crt`` source: an OpenShift patch, not upstream's.)
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from tests.integration.support import snapshot

Obj = dict[str, Any]

MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_SOURCES = {
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ],
    "defaultMode": 420,
}
#: ``kube-api-access-`` and five characters of apimachinery's ``utilrand`` alphabet.
VOLUME_NAME = re.compile(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}")


def pod(name: str = "p", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def account(name: str, **fields: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": "default"},
            **fields}


def token_volume(created: Obj) -> Obj | None:
    found = [v for v in created["spec"].get("volumes") or [] if v["name"].startswith("kube-api-access-")]
    assert len(found) <= 1
    return found[0] if found else None


def test_a_pod_gets_the_token_volume_and_a_mount_in_every_container() -> None:
    cluster = Cluster()
    created = cluster.create(pod(
        initContainers=[{"name": "i", "image": "busybox"}],
        containers=[{"name": "c", "image": "nginx", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}],
        volumes=[{"name": "x", "emptyDir": {}}]))
    spec = created["spec"]
    name = spec["volumes"][1]["name"]
    assert VOLUME_NAME.fullmatch(name)
    assert spec["volumes"] == [{"name": "x", "emptyDir": {}}, {"name": name, "projected": TOKEN_SOURCES}]
    mount = {"name": name, "readOnly": True, "mountPath": MOUNT_PATH}
    assert spec["initContainers"][0]["volumeMounts"] == [mount]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "x", "mountPath": "/x"}, mount]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")


def test_the_suffix_comes_from_the_clusters_seed() -> None:
    names = [token_volume(Cluster(seed=seed).create(pod()))["name"] for seed in (1, 1, 2)]  # type: ignore[index]
    assert names[0] == names[1] != names[2]


def test_managed_fields_do_not_give_the_admission_fields_to_the_caller() -> None:
    # The field manager runs before mutating admission: the account's name, the token volume,
    # its mounts, the tolerations and priority are nobody's; a name the client sent is its own.
    cluster = Cluster()
    cluster.create(account("robot"))
    spec_fields = managed_spec(cluster.create(pod("plain")))
    assert sorted(spec_fields) == ["f:containers", "f:dnsPolicy", "f:enableServiceLinks", "f:restartPolicy",
                                   "f:schedulerName", "f:securityContext", "f:terminationGracePeriodSeconds"]
    assert spec_fields["f:containers"] == {'k:{"name":"c"}': {
        ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {},
        "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}}
    named = managed_spec(cluster.create(pod("named", serviceAccountName="robot")))
    assert "f:serviceAccountName" in named and "f:serviceAccount" in named


def managed_spec(created: Obj) -> Obj:
    [entry] = created["metadata"]["managedFields"]
    spec: Obj = entry["fieldsV1"]["f:spec"]
    return spec


def test_automount_false_on_the_pod_or_the_account_turns_it_off() -> None:
    cluster = Cluster()
    cluster.create(account("quiet", automountServiceAccountToken=False))
    assert token_volume(cluster.create(pod("a", automountServiceAccountToken=False))) is None
    quiet = cluster.create(pod("b", serviceAccountName="quiet"))
    assert token_volume(quiet) is None and "volumeMounts" not in quiet["spec"]["containers"][0]
    # The pod's preference wins over the account's (the deprecated field names the account).
    loud = cluster.create(pod("c", serviceAccount="quiet", automountServiceAccountToken=True))
    assert token_volume(loud) is not None and loud["spec"]["serviceAccountName"] == "quiet"


def test_a_mount_at_the_path_or_a_token_volume_the_pod_has_is_kept() -> None:
    cluster = Cluster()
    own = {"name": "mine", "mountPath": MOUNT_PATH}
    created = cluster.create(pod(containers=[{"name": "c", "image": "nginx", "volumeMounts": [own]}],
                                 volumes=[{"name": "mine", "emptyDir": {}}]))
    assert created["spec"]["containers"][0]["volumeMounts"] == [own]
    assert created["spec"]["volumes"] == [{"name": "mine", "emptyDir": {}}]  # nobody needs one
    again = cluster.create(pod("q", volumes=[{"name": "kube-api-access-mine", "emptyDir": {}}]))
    assert again["spec"]["volumes"] == [{"name": "kube-api-access-mine", "emptyDir": {}}]
    assert again["spec"]["containers"][0]["volumeMounts"] == [
        {"name": "kube-api-access-mine", "readOnly": True, "mountPath": MOUNT_PATH}]


def test_a_pod_naming_a_missing_account_is_refused_with_upstreams_403() -> None:
    cluster = Cluster().start()
    try:
        body = pod("x", serviceAccountName="nope")
        body["metadata"] = {"generateName": "p-"}
        code, answer = post(cluster, "/api/v1/namespaces/default/pods", body)
    finally:
        cluster.stop()
    assert (code, answer) == (403, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods "p-" is forbidden: error looking up service account default/nope: '
                   'serviceaccount "nope" not found',
        "reason": "Forbidden", "details": {"name": "p-", "kind": "pods"}, "code": 403})


def post(cluster: Cluster, path: str, body: Obj) -> tuple[int, Obj]:
    request = urllib.request.Request(cluster.url + path, json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_namespace_without_its_default_account_refuses_pods() -> None:
    # Upstream's pods wait on the serviceaccount-controller; with it off they are refused.
    cluster = Cluster(controllers=("*", "-serviceaccount-controller"))
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bare"}})
    before = snapshot(cluster)
    with pytest.raises(ApiError, match='error looking up service account bare/default: serviceaccount "default"'):
        cluster.create({**pod(), "metadata": {"name": "p", "namespace": "bare"}})
    assert snapshot(cluster) == before
    cluster.create({**account("default"), "metadata": {"name": "default", "namespace": "bare"}})
    assert cluster.create({**pod(), "metadata": {"name": "p", "namespace": "bare"}})["spec"]["serviceAccountName"] \
        == "default"


def test_a_pod_without_pull_secrets_gets_its_accounts() -> None:
    cluster = Cluster()
    cluster.create(account("puller", imagePullSecrets=[{"name": "registry"}]))
    assert cluster.create(pod("a", serviceAccountName="puller"))["spec"]["imagePullSecrets"] == [{"name": "registry"}]
    own = cluster.create(pod("b", serviceAccountName="puller", imagePullSecrets=[{"name": "mine"}]))
    assert own["spec"]["imagePullSecrets"] == [{"name": "mine"}]


def test_a_mirror_pod_may_not_name_an_account() -> None:
    cluster = Cluster()
    mirror = pod("m", serviceAccountName="default")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    with pytest.raises(ApiError, match="a mirror pod may not reference service accounts"):
        cluster.create(mirror)
    del mirror["spec"]["serviceAccountName"]
    created = cluster.create(mirror)
    assert "serviceAccountName" not in created["spec"] and "volumes" not in created["spec"]


def test_an_account_enforcing_mountable_secrets_limits_the_pods_secrets() -> None:
    cluster = Cluster()
    cluster.create(account("strict", secrets=[{"name": "allowed"}],
                           metadata={"name": "strict", "namespace": "default",
                                     "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}))
    env = [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}}]
    with pytest.raises(ApiError) as refused:
        cluster.create(pod("a", serviceAccountName="strict", containers=[{"name": "c", "image": "x", "env": env}]))
    assert refused.value.message == (
        'pods "a" is forbidden: container c with envVar E referencing secret.secretName="other" is not allowed '
        "because service account strict does not reference that secret")
    volumes = [{"name": "s", "secret": {"secretName": "allowed"}}]
    assert cluster.create(pod("b", serviceAccountName="strict", volumes=volumes))


def test_controller_made_pods_run_with_the_volume() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                             "template": {"metadata": {"labels": {"app": "web"}},
                                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    cluster.advance(5)
    [running] = cluster.list("v1", "Pod", "default")
    assert token_volume(running) is not None and running["status"]["phase"] == "Running"
