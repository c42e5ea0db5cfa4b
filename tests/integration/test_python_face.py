"""The Python face's writes and pod streams (``Cluster.apply/patch/update/scale/logs/exec/wait_for``)
answer as the HTTP API does: the same objects, and the same ``Status`` for the same mistake."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import pytest
import requests

from fakekube import Cluster
from fakekube.cluster import ApiError, ExecResult, WaitTimeout

Obj = dict[str, Any]
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def deployment(name: str = "web", replicas: int = 2) -> Obj:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


@pytest.fixture(scope="module")
def served() -> Iterator[Cluster]:
    with Cluster(nodes=2) as cluster:
        yield cluster


@pytest.fixture
def cluster(served: Cluster) -> Cluster:
    served.reset()
    return served


def python_error(call: Callable[[], Any]) -> Obj:
    with pytest.raises(ApiError) as raised:
        call()
    return raised.value.status()


def http_error(response: requests.Response, code: int) -> Obj:
    assert response.status_code == code, response.text
    body: Obj = response.json()
    return body


def test_update_with_a_stale_resource_version_is_the_http_409(cluster: Cluster) -> None:
    stale = cluster.create(deployment())
    cluster.scale("apps/v1", "Deployment", "web", 3)
    over_http = requests.put(f"{cluster.url}{DEPLOYMENTS}/web", json=stale)
    assert python_error(lambda: cluster.update(stale)) == http_error(over_http, 409)


def test_update_writes_and_returns_the_stored_object(cluster: Cluster) -> None:
    cluster.create(deployment())
    current = cluster.get("apps/v1", "Deployment", "web")  # the controller wrote its status since
    current["spec"]["minReadySeconds"] = 7
    updated = cluster.update(current)
    assert updated["spec"]["minReadySeconds"] == 7
    assert int(updated["metadata"]["resourceVersion"]) > int(current["metadata"]["resourceVersion"])
    assert cluster.get("apps/v1", "Deployment", "web")["spec"] == updated["spec"]


def test_update_of_the_status_subresource_changes_only_the_status(cluster: Cluster) -> None:
    current = cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    current["metadata"]["labels"] = {"ignored": "yes"}
    current["status"] = {"phase": "Active", "conditions": [{"type": "Custom", "status": "True"}]}
    updated = cluster.update(current, subresource="status")
    assert [(c["type"], c["status"]) for c in updated["status"]["conditions"]] == [("Custom", "True")]
    assert "ignored" not in updated["metadata"].get("labels", {})


def test_apply_conflict_is_the_http_409_and_force_takes_the_field(cluster: Cluster) -> None:
    cluster.apply(deployment(), field_manager="first")
    other = deployment(replicas=5)
    over_http = requests.patch(f"{cluster.url}{DEPLOYMENTS}/web?fieldManager=second", data=json.dumps(other),
                               headers={"Content-Type": "application/apply-patch+yaml"})
    python = python_error(lambda: cluster.apply(other, field_manager="second"))
    assert python == http_error(over_http, 409)
    assert python["message"] == 'Apply failed with 1 conflict: conflict with "first": .spec.replicas'
    forced = cluster.apply(other, field_manager="second", force=True)
    assert forced["spec"]["replicas"] == 5
    assert {m["manager"] for m in forced["metadata"]["managedFields"]} == {"first", "second"}


def test_create_names_its_field_manager(cluster: Cluster) -> None:
    created = cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}},
                             field_manager="my-operator")
    assert [m["manager"] for m in created["metadata"]["managedFields"]] == ["my-operator"]
    with pytest.raises(ApiError) as raised:
        cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}, field_manager="a" * 129)
    assert (raised.value.code, raised.value.reason) == (422, "Invalid")


def test_apply_without_a_field_manager_is_the_apis_422(cluster: Cluster) -> None:
    over_http = requests.patch(f"{cluster.url}{DEPLOYMENTS}/web", data=json.dumps(deployment()),
                               headers={"Content-Type": "application/apply-patch+yaml", "User-Agent": ""})
    assert python_error(lambda: cluster.apply(deployment(), field_manager="")) == http_error(over_http, 422)


@pytest.mark.parametrize(("patch_type", "body"), [
    ("strategic", {"spec": {"replicas": -1}}),
    ("merge", {"spec": {"replicas": -1}}),
    ("json", [{"op": "replace", "path": "/spec/replicas", "value": -1}]),
])
def test_an_invalid_patch_is_the_http_422(cluster: Cluster, patch_type: str, body: Any) -> None:
    cluster.create(deployment())
    media = {"strategic": "strategic-merge-patch", "merge": "merge-patch", "json": "json-patch"}[patch_type]
    over_http = requests.patch(f"{cluster.url}{DEPLOYMENTS}/web", data=json.dumps(body),
                               headers={"Content-Type": f"application/{media}+json"})
    python = python_error(lambda: cluster.patch("apps/v1", "Deployment", "web", body, patch_type=patch_type))
    assert python == http_error(over_http, 422)


def test_apply_and_update_need_the_objects_name(cluster: Cluster) -> None:
    nameless = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "c-"}}
    with pytest.raises(ValueError, match="^the ConfigMap needs metadata.name: it names the object to write$"):
        cluster.apply(nameless, field_manager="me")
    with pytest.raises(ValueError, match="^the ConfigMap needs metadata.name"):
        cluster.update(nameless)


def test_patch_types_change_the_object(cluster: Cluster) -> None:
    cluster.create(deployment())
    cluster.patch("apps/v1", "Deployment", "web", {"metadata": {"labels": {"a": "1"}}})
    cluster.patch("apps/v1", "Deployment", "web", {"metadata": {"labels": {"b": "2"}}}, patch_type="merge")
    patched = cluster.patch("apps/v1", "Deployment", "web",
                            [{"op": "add", "path": "/metadata/labels/c", "value": "3"}], patch_type="json")
    assert patched["metadata"]["labels"] == {"a": "1", "b": "2", "c": "3"}
    with pytest.raises(ValueError, match="patch_type must be one of strategic, merge, json, got 'apply'"):
        cluster.patch("apps/v1", "Deployment", "web", {}, patch_type="apply")


def test_scale_writes_replicas_and_its_consequences_have_run(cluster: Cluster) -> None:
    cluster.create(deployment(replicas=1))
    scale = cluster.scale("apps/v1", "Deployment", "web", 3)
    assert (scale["kind"], scale["spec"], scale["status"]["selector"]) == ("Scale", {"replicas": 3}, "app=web")
    assert len(cluster.list("v1", "Pod", "default")) == 3  # the ReplicaSet made them before scale returned


def test_scale_of_a_type_without_the_subresource_is_the_http_404(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    over_http = requests.put(f"{cluster.url}/api/v1/namespaces/default/configmaps/c/scale",
                             json={"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "c"},
                                   "spec": {"replicas": 2}})
    assert python_error(lambda: cluster.scale("v1", "ConfigMap", "c", 2)) == http_error(over_http, 404)


def test_scale_to_a_negative_count_is_the_http_422(cluster: Cluster) -> None:
    cluster.create(deployment())
    over_http = requests.put(f"{cluster.url}{DEPLOYMENTS}/web/scale",
                             json={"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"},
                                   "spec": {"replicas": -1}})
    assert python_error(lambda: cluster.scale("apps/v1", "Deployment", "web", -1)) == http_error(over_http, 422)


def test_logs_and_exec_answer_as_the_http_api(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                    "spec": {"containers": [{"name": "c", "image": "busybox",
                                             "command": ["sh", "-c", "echo one; echo two; sleep 3600"]}]}})
    cluster.advance(5)
    assert cluster.logs("p") == requests.get(f"{cluster.url}/api/v1/namespaces/default/pods/p/log").text
    assert cluster.logs("p", tail_lines=1) == "two\n"
    assert cluster.exec("p", ["sh", "-c", "echo out; echo err >&2; exit 4"]) == ExecResult("out\n", "err\n", 4)
    assert cluster.exec("p", ["sed", "s/out/OUT/"], stdin="shout\n").stdout == "shOUT\n"
    over_http = requests.get(f"{cluster.url}/api/v1/namespaces/default/pods/p/log?container=nope")
    assert python_error(lambda: cluster.logs("p", container="nope")) == http_error(over_http, 400)


def test_exec_in_a_pod_no_node_runs_is_the_http_400(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending"},
                    "spec": {"nodeSelector": {"no": "such-node"}, "containers": [{"name": "c", "image": "nginx"}]}})
    over_http = requests.post(f"{cluster.url}/api/v1/namespaces/default/pods/pending/exec?command=date&stdout=true")
    assert python_error(lambda: cluster.exec("pending", ["date"])) == http_error(over_http, 400)
    with pytest.raises(ValueError, match="command must be a non-empty list"):
        cluster.exec("pending", "date")  # type: ignore[arg-type]


def test_wait_for_conditions_as_kubectl_wait_reads_them(cluster: Cluster) -> None:
    web = cluster.create(deployment())
    assert cluster.wait_for(web, "Available", 60)["status"]["availableReplicas"] == 2  # type: ignore[index]
    assert cluster.wait_for(web, "condition=Progressing=true", 1) is not None
    assert cluster.wait_for(web, "jsonpath={.status.readyReplicas}=2", 1) is not None
    assert cluster.wait_for(web, "jsonpath={.status.readyReplicas}", 1) is not None
    reference = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "default"}
    cluster.delete("apps/v1", "Deployment", "web")
    assert cluster.wait_for(reference, "delete", 60) is None
    for bad in ("condition=", "foo=bar", "jsonpath={.status", ""):
        with pytest.raises(ValueError):
            cluster.wait_for(reference, bad, 1)


def test_wait_for_timeout_names_the_object_the_condition_and_its_last_status(cluster: Cluster) -> None:
    pod = cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "crash"},
                          "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["false"]}]}})
    with pytest.raises(WaitTimeout) as raised:
        cluster.wait_for(pod, "Ready", timeout_virtual_s=90)
    message = str(raised.value)
    assert message.startswith("Pod default/crash: condition=Ready=True did not hold within 90 virtual seconds "
                              "(now 2025-01-01T00:01:30+00:00); last status: phase=Running, ")
    assert "Ready=False (ContainersNotReady)" in message
    assert "container c: waiting (CrashLoopBackOff)" in message
    assert raised.value.last is not None and raised.value.last["metadata"]["name"] == "crash"
    assert cluster.now.isoformat() == "2025-01-01T00:01:30+00:00"  # time went exactly to the timeout
