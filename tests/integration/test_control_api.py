"""The control API as a test in any language uses it: JSON over HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from fakekube.kubelet.heartbeat import HEALTHY_CONDITIONS


def call(url: str, method: str, path: str, body: object | None = None) -> tuple[int, dict]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url + path, method=method, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def test_read_and_advance_the_clock(fakekube) -> None:
    assert call(fakekube.url, "GET", "/fakekube/v1/clock") == (200, {"now": "2025-01-01T00:00:00Z", "seed": 0})
    status, body = call(fakekube.url, "POST", "/fakekube/v1/clock/advance", {"seconds": 90})
    assert (status, body["now"]) == (200, "2025-01-01T00:01:30Z")
    assert fakekube.now.isoformat() == "2025-01-01T00:01:30+00:00"


def test_objects_created_after_an_advance_carry_the_new_time(fakekube) -> None:
    call(fakekube.url, "POST", "/fakekube/v1/clock/advance", {"seconds": 3600})
    status, created = call(fakekube.url, "POST", "/api/v1/namespaces/default/configmaps",
                           {"metadata": {"name": "later"}})
    assert status == 201 and created["metadata"]["creationTimestamp"] == "2025-01-01T01:00:00Z"


def test_settle_and_reset(fakekube) -> None:
    fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone-after-reset"}})
    call(fakekube.url, "POST", "/fakekube/v1/clock/advance", {"seconds": 5})
    status, settled = call(fakekube.url, "POST", "/fakekube/v1/settle")
    assert status == 200 and settled == {"reconciles": 0, "now": "2025-01-01T00:00:05Z"}
    status, clock = call(fakekube.url, "POST", "/fakekube/v1/reset")
    assert (status, clock["now"]) == (200, "2025-01-01T00:00:00Z")
    # Only what a fresh namespace has: the root CA publisher's kube-root-ca.crt.
    assert [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap", "default")] == ["kube-root-ca.crt"]


@pytest.mark.parametrize("body, code", [
    ({"seconds": -1}, 400),
    ({"seconds": "ten"}, 400),
    ({"seconds": True}, 400),
    ({}, 400),
    (b"{not json", 400),
    ({"seconds": 10**12}, 400),
])
def test_bad_advance_requests_change_nothing(fakekube, body: object, code: int) -> None:
    status, answer = call(fakekube.url, "POST", "/fakekube/v1/clock/advance", body)
    assert (status, answer["kind"], answer["reason"]) == (code, "Status", "BadRequest")
    assert fakekube.now.isoformat() == "2025-01-01T00:00:00+00:00"


def test_unknown_endpoint_and_wrong_method(fakekube) -> None:
    assert call(fakekube.url, "GET", "/fakekube/v1/nope")[0] == 404
    assert call(fakekube.url, "GET", "/fakekube/v1/settle")[0] == 405


@pytest.mark.fakekube(nodes=2)
def test_fail_and_recover_a_node_over_http(fakekube) -> None:
    status, body = call(fakekube.url, "POST", "/fakekube/v1/nodes/node-1/fail")
    assert (status, body["heartbeats"]) == (200, "stopped")
    call(fakekube.url, "POST", "/fakekube/v1/clock/advance", {"seconds": 55})
    node = fakekube.get("v1", "Node", "node-1", "")
    assert {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"] == "Unknown"
    status, body = call(fakekube.url, "POST", "/fakekube/v1/nodes/node-1/recover")
    assert (status, body["heartbeats"]) == (200, "running")
    node = fakekube.get("v1", "Node", "node-1", "")
    assert {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"] == "True"


def test_faults_on_a_missing_node_are_404(fakekube) -> None:
    status, body = call(fakekube.url, "POST", "/fakekube/v1/nodes/ghost/fail")
    assert (status, body["reason"]) == (404, "NotFound")
    assert call(fakekube.url, "POST", "/fakekube/v1/nodes/node-1/explode")[0] == 404


@pytest.mark.fakekube(nodes=2)
def test_partition_heal_and_restart_over_http(fakekube) -> None:
    status, body = call(fakekube.url, "POST", "/fakekube/v1/nodes/node-1/partition")
    assert (status, body["heartbeats"], body["now"]) == (200, "partitioned", "2025-01-01T00:00:00Z")
    call(fakekube.url, "POST", "/fakekube/v1/clock/advance", {"seconds": 45})
    assert call(fakekube.url, "GET", "/fakekube/v1/nodes/node-1")[1]["heartbeats"] == "partitioned"
    status, body = call(fakekube.url, "POST", "/fakekube/v1/nodes/node-1/heal")
    assert (status, body["heartbeats"]) == (200, "running")
    lease = fakekube.get("coordination.k8s.io/v1", "Lease", "node-1", "kube-node-lease")
    assert lease["spec"]["renewTime"] == "2025-01-01T00:00:45.000000Z"
    status, body = call(fakekube.url, "POST", "/fakekube/v1/nodes/node-2/restart")
    assert (status, body["heartbeats"]) == (200, "running")


@pytest.mark.fakekube(nodes=1)
def test_set_and_clear_a_node_condition_over_http(fakekube) -> None:
    status, body = call(fakekube.url, "POST", "/fakekube/v1/nodes/node-1/conditions",
                        {"type": "DiskPressure", "status": "True"})
    assert status == 200
    assert body["conditions"]["DiskPressure"] == {"status": "True", "reason": "KubeletHasDiskPressure",
                                                  "message": "kubelet has disk pressure"}
    call(fakekube.url, "POST", "/fakekube/v1/clock/advance", {"seconds": 10})
    node = fakekube.get("v1", "Node", "node-1", "")
    assert [t["key"] for t in node["spec"]["taints"]] == ["node.kubernetes.io/disk-pressure"]
    status, body = call(fakekube.url, "DELETE", "/fakekube/v1/nodes/node-1/conditions/DiskPressure")
    assert (status, body["conditions"]["DiskPressure"]["status"]) == (200, "False")


@pytest.mark.fakekube(nodes=1)
@pytest.mark.parametrize("method, path, body, code", [
    ("POST", "/nodes/node-1/conditions", {"type": "MemoryPressure"}, 400),
    ("POST", "/nodes/node-1/conditions", {"type": "MemoryPressure", "status": "maybe"}, 400),
    ("POST", "/nodes/node-1/conditions", {"type": "MemoryPressure", "status": True}, 400),
    ("POST", "/nodes/node-1/conditions", {"type": "MemoryPressure", "status": "True", "colour": "red"}, 400),
    ("POST", "/nodes/node-1/conditions", b"[not json", 400),
    ("POST", "/nodes/ghost/conditions", {"type": "MemoryPressure", "status": "True"}, 404),
    ("GET", "/nodes/ghost", None, 404),
    ("GET", "/nodes/node-1/partition", None, 405),
    ("POST", "/nodes/node-1/conditions/DiskPressure", None, 405),
    ("POST", "/nodes/node-1/conditions/a/b", None, 404),
])
def test_bad_node_fault_requests_change_nothing(fakekube, method: str, path: str, body: object, code: int) -> None:
    status, answer = call(fakekube.url, method, "/fakekube/v1" + path, body)
    assert (status, answer["kind"]) == (code, "Status")
    assert fakekube.kubelet_state("node-1") == {
        "heartbeats": "running",
        "conditions": {kind: {"status": status, "reason": reason, "message": message}
                       for kind, (status, reason, message) in HEALTHY_CONDITIONS.items()}}


def test_snapshots_over_http_take_list_restore_and_delete(fakekube) -> None:
    status, taken = call(fakekube.url, "POST", "/fakekube/v1/snapshots")
    assert status == 200 and taken["time"] == "2025-01-01T00:00:00Z"
    fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}})
    call(fakekube.url, "POST", "/fakekube/v1/clock/advance", {"seconds": 600})
    status, listed = call(fakekube.url, "GET", "/fakekube/v1/snapshots")
    assert status == 200 and listed["limit"] == 16 and taken in listed["snapshots"]
    status, clock = call(fakekube.url, "POST", f"/fakekube/v1/snapshots/{taken['id']}/restore")
    assert (status, clock["now"]) == (200, "2025-01-01T00:00:00Z")
    assert "after" not in [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap")]
    assert call(fakekube.url, "DELETE", f"/fakekube/v1/snapshots/{taken['id']}") == (200, taken)
    status, gone = call(fakekube.url, "POST", f"/fakekube/v1/snapshots/{taken['id']}/restore")
    assert (status, gone["reason"], gone["message"]) == (404, "NotFound", f'snapshot "{taken["id"]}" not found')
    assert call(fakekube.url, "GET", f"/fakekube/v1/snapshots/{taken['id']}/restore")[0] == 405


def test_the_control_api_keeps_sixteen_snapshots_and_refuses_a_seventeenth(fakekube) -> None:
    ids = [call(fakekube.url, "POST", "/fakekube/v1/snapshots")[1]["id"] for _ in range(16)]
    status, refused = call(fakekube.url, "POST", "/fakekube/v1/snapshots")
    assert (status, refused["reason"]) == (409, "Conflict")
    assert "at most 16 snapshots" in refused["message"]
    for snapshot_id in ids:
        assert call(fakekube.url, "DELETE", f"/fakekube/v1/snapshots/{snapshot_id}")[0] == 200
    assert call(fakekube.url, "GET", "/fakekube/v1/snapshots")[1]["snapshots"] == []
