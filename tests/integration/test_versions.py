"""Each supported release as a user sees it: the knobs that choose it, ``/version``, the 422s,
the embedded ``creationTimestamp``, and the feature gates whose defaults changed (the rows
of fakekube/objects/versions.py that a cluster acts on; the table itself: tests/unit/test_versions.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION

Obj = dict[str, Any]
NS = "default"


def _get(cluster: Cluster, path: str) -> Obj:
    with urllib.request.urlopen(cluster.url + path, timeout=10) as response:
        return json.load(response)


def _post(cluster: Cluster, path: str, body: Obj) -> tuple[int, Obj]:
    request = urllib.request.Request(cluster.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        data = error.read()
        if data == b"404 page not found\n":  # a group the release does not serve: Go's NotFoundHandler
            return error.code, {"reason": "NotFound", "page": data.decode()}
        return error.code, json.loads(data)


def _deployment(name: str, replicas: int, stop_delay_s: float = 0) -> Obj:
    annotations = {BEHAVIOUR_ANNOTATION: json.dumps({"stop_delay_s": stop_delay_s})} if stop_delay_s else {}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}, "annotations": annotations},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
def test_version_and_the_nodes_report_the_release(version: str) -> None:
    """A native binary of the release: its minor, emulated as itself, compatible one below."""
    with Cluster(kubernetes_version=version, patch_version=2, nodes=1) as cluster:
        info = _get(cluster, "/version")
        node = cluster.get("v1", "Node", "node-1", "")
    minor = version.split(".")[1]
    assert (info["major"], info["minor"], info["gitVersion"]) == ("1", minor, f"v{version}.2")
    assert (info["emulationMinor"], info["minCompatibilityMinor"]) == (minor, str(int(minor) - 1))
    assert node["status"]["nodeInfo"]["kubeletVersion"] == f"v{version}.2"


def test_the_default_release_is_1_36() -> None:
    with Cluster() as cluster:
        assert _get(cluster, "/version")["gitVersion"] == "v1.36.0"
        groups = [g["name"] for g in _get(cluster, "/apis")["groups"]]
    assert "resource.k8s.io" in groups


@pytest.mark.parametrize("version,shown", [
    ("1.33", 'map[string]string{"app":"x"}'),  # Go's %#v, apimachinery v0.33
    ("1.36", '{"app":"x"}'),  # the reference, 1.36
])
def test_a_422_over_http_renders_the_value_as_the_release_does(version: str, shown: str) -> None:
    body = _deployment("d", 1)
    body["spec"]["selector"] = {"matchLabels": {"app": "y"}}
    body["spec"]["template"]["metadata"]["labels"] = {"app": "x"}
    with Cluster(kubernetes_version=version) as cluster:
        code, status = _post(cluster, f"/apis/apps/v1/namespaces/{NS}/deployments", body)
    assert code == 422
    assert status["message"] == (f'Deployment.apps "d" is invalid: spec.template.metadata.labels: Invalid value: '
                                 f"{shown}: `selector` does not match template `labels`")
    assert status["details"]["causes"][0]["message"].startswith(f"Invalid value: {shown}: ")


@pytest.mark.parametrize("version,null", [("1.33", True), ("1.34", False), ("1.36", False)])
def test_a_workload_template_has_a_null_creation_timestamp_up_to_1_33(version: str, null: bool) -> None:
    """kubernetes#130989: Go's zero ObjectMeta time is omitted from 1.34 (the reference
    answers a Deployment's template without it)."""
    cluster = Cluster(kubernetes_version=version)
    created = cluster.create(_deployment("d", 0))
    meta = created["spec"]["template"]["metadata"]
    assert ("creationTimestamp" in meta) is null
    if null:
        assert meta["creationTimestamp"] is None


def _running_pod(cluster: Cluster) -> Obj:
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    cluster.advance(5)
    return cluster.get("v1", "Pod", "p", NS)


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.36"])
def test_pods_get_a_generation_in_every_release(version: str) -> None:
    """Set unconditionally since 1.33 (kubernetes#130181; the reference answers 1 on create),
    bumped by a spec change and by the graceful deletion."""
    cluster = Cluster(kubernetes_version=version, nodes=1)
    pod = _running_pod(cluster)
    assert pod["metadata"]["generation"] == 1
    pod["spec"]["activeDeadlineSeconds"] = 600
    cluster.api.update(cluster.resource("v1", "Pod"), NS, "p", pod)
    assert cluster.get("v1", "Pod", "p", NS)["metadata"]["generation"] == 2
    pod = cluster.get("v1", "Pod", "p", NS)  # a metadata change leaves the generation alone
    pod["metadata"]["labels"] = {"a": "b"}
    cluster.api.update(cluster.resource("v1", "Pod"), NS, "p", pod)
    assert cluster.get("v1", "Pod", "p", NS)["metadata"]["generation"] == 2


@pytest.mark.parametrize("version,tracked", [("1.33", False), ("1.34", True), ("1.36", True)])
def test_the_kubelet_reports_the_observed_generation_from_1_34(version: str, tracked: bool) -> None:
    """PodObservedGenerationTracking (alpha, off, in 1.33; beta, on, in 1.34)."""
    cluster = Cluster(kubernetes_version=version, nodes=1)
    status = _running_pod(cluster)["status"]
    assert status["phase"] == "Running"
    if tracked:
        assert list(status)[0] == "observedGeneration" and status["observedGeneration"] == 1
        kubelets = [c for c in status["conditions"] if c["type"] in ("Initialized", "Ready", "ContainersReady")]
        assert [list(c)[:2] for c in kubelets] == [["type", "observedGeneration"]] * 3
        assert all(c["observedGeneration"] == 1 for c in kubelets)
    else:
        assert "observedGeneration" not in status
        assert not any("observedGeneration" in c for c in status["conditions"])


def test_with_the_gate_off_a_client_cannot_start_writing_the_observed_generation() -> None:
    """1.33's dropDisabledPodStatusFields; from 1.34 the write stands."""
    for version, kept in (("1.33", False), ("1.36", True)):
        cluster = Cluster(kubernetes_version=version)
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
        pod = cluster.get("v1", "Pod", "p", NS)
        pod["status"] = dict(pod["status"], observedGeneration=1)
        cluster.api.update(cluster.resource("v1", "Pod"), NS, "p", pod, subresource="status")
        assert ("observedGeneration" in cluster.get("v1", "Pod", "p", NS)["status"]) is kept


@pytest.mark.parametrize("version,reported", [("1.34", False), ("1.35", True), ("1.36", True)])
def test_terminating_replicas_are_reported_from_1_35(version: str, reported: bool) -> None:
    """DeploymentReplicaSetTerminatingReplicas (beta, on, from 1.35): a scaled-down pod that
    takes 20 s to stop counts until it is gone, on its ReplicaSet and its Deployment."""
    cluster = Cluster(kubernetes_version=version, nodes=1)
    cluster.create(_deployment("d", 2, stop_delay_s=20))
    cluster.advance(10)
    deployment = cluster.get("apps/v1", "Deployment", "d", NS)
    deployment["spec"]["replicas"] = 1
    cluster.api.update(cluster.resource("apps/v1", "Deployment"), NS, "d", deployment)
    cluster.advance(1)
    [rs] = cluster.list("apps/v1", "ReplicaSet", NS)
    counts = (rs["status"].get("terminatingReplicas"),
              cluster.get("apps/v1", "Deployment", "d", NS)["status"].get("terminatingReplicas"))
    assert counts == ((1, 1) if reported else (None, None))
    if reported:  # Go's field order: after availableReplicas
        assert list(rs["status"])[:6] == ["replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                                          "terminatingReplicas", "observedGeneration"]
    cluster.advance(30)
    [rs] = cluster.list("apps/v1", "ReplicaSet", NS)
    assert rs["status"].get("terminatingReplicas") == (0 if reported else None)


def test_the_release_is_refused_at_the_cli_with_the_supported_list() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--kubernetes-version", "1.32"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == ("fakekube: --kubernetes-version: Kubernetes version '1.32' is not supported: "
                                     "fakekube emulates 1.33, 1.34, 1.35, 1.36 (default 1.36)")


def test_serve_emulates_the_release_asked_for(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--kubernetes-version", "1.34",
                             "--no-system-pods", "--kubeconfig", str(tmp_path / "kc")],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        url = line.split(" at ")[1].strip()
        with urllib.request.urlopen(url + "/version", timeout=10) as response:
            info = json.load(response)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert line.startswith("fakekube: serving Kubernetes v1.34.0 at ")
    assert info["gitVersion"] == "v1.34.0"


def test_the_config_file_chooses_the_release(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text('kubernetesVersion: "1.35"\npatchVersion: 1\n')
    cluster = Cluster.from_config_file(config)
    assert (cluster.config.kubernetes_version, cluster.config.kubelet_version) == ("1.35", "v1.35.1")


def test_the_pytest_marker_and_option_choose_the_release(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        def test_option(fakekube):
            assert fakekube.config.kubernetes_version == "1.34"

        @pytest.mark.fakekube(kubernetes_version="1.33")
        def test_marker(fakekube):
            assert fakekube.api.release.version == "1.33"
    """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--fakekube-kubernetes-version", "1.34")
    result.assert_outcomes(passed=2)


def test_an_unsupported_release_never_builds_a_cluster() -> None:
    with pytest.raises(ValueError, match=r"fakekube emulates 1\.33, 1\.34, 1\.35, 1\.36"):
        Cluster(kubernetes_version="1.30")
    with pytest.raises(ValueError, match=r"give the minor release; the patch is patch_version"):
        Cluster(kubernetes_version="v1.36.1")


CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": NS},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}


@pytest.mark.parametrize("version,served", [("1.33", False), ("1.34", True), ("1.36", True)])
def test_the_types_a_release_adds_are_stored_with_upstreams_defaults(version: str, served: bool) -> None:
    """resource.k8s.io/v1 from 1.34: the reference answers this claim with ExactCount, count 1
    and an empty status; 1.33 does not serve the group (the NotFoundHandler's plain 404)."""
    with Cluster(kubernetes_version=version) as cluster:
        code, body = _post(cluster, f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims", CLAIM)
        mutating = _post(cluster, "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies",
                         {"metadata": {"name": "m"}, "spec": {}})
    if not served:
        assert (code, body.get("page")) == (404, "404 page not found\n")
        return
    assert code == 201
    assert body["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                                                 "count": 1}
    assert body["status"] == {}
    if version == "1.36":  # MutatingAdmissionPolicy: GA in 1.36, validated as the reference does
        assert mutating[0] == 422 and mutating[1]["message"] == (
            'MutatingAdmissionPolicy.admissionregistration.k8s.io "m" is invalid: [spec.matchConstraints: Required '
            "value, spec.mutations: Required value: mutations must contain at least one item, "
            "spec.reinvocationPolicy: Required value]")
    else:
        assert mutating[0] == 404


@pytest.mark.parametrize("version,dotted,digit_first", [
    ("1.35", "a DNS-1035 label must consist of", 422),
    ("1.36", "must not contain dots", 201),  # RelaxedServiceNameValidation (beta, on, from 1.36)
])
def test_service_names_are_dns_labels_from_1_36(version: str, dotted: str, digit_first: int) -> None:
    """Both references (1.35 emulated, 1.36) answer exactly these."""
    def service(name: str) -> Obj:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": {"ports": [{"port": 80}]}}
    with Cluster(kubernetes_version=version) as cluster:
        code, body = _post(cluster, f"/api/v1/namespaces/{NS}/services", service("a.b"))
        assert code == 422 and body["message"].startswith(f'Service "a.b" is invalid: metadata.name: Invalid value: "a.b": {dotted}')
        assert _post(cluster, f"/api/v1/namespaces/{NS}/services", service("1abc"))[0] == digit_first
