"""Simulated kubelet heartbeats on the virtual clock: leases every 10 s, status every 5 min."""

from fakekube import Cluster


def lease(cluster: Cluster, node: str) -> dict:
    return cluster.get("coordination.k8s.io/v1", "Lease", node, "kube-node-lease")


def ready_heartbeat(cluster: Cluster, node: str) -> str:
    conditions = cluster.get("v1", "Node", node, "")["status"]["conditions"]
    return next(c["lastHeartbeatTime"] for c in conditions if c["type"] == "Ready")


def test_each_node_gets_a_lease_owned_by_its_node() -> None:
    cluster = Cluster(nodes=2)
    first = lease(cluster, "node-1")
    node = cluster.get("v1", "Node", "node-1", "")
    assert first["spec"] == {"holderIdentity": "node-1", "leaseDurationSeconds": 40,
                             "renewTime": "2025-01-01T00:00:00.000000Z"}
    assert first["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": node["metadata"]["uid"]}]


def test_leases_renew_every_ten_seconds() -> None:
    cluster = Cluster(nodes=1)
    cluster.advance(35)
    assert lease(cluster, "node-1")["spec"]["renewTime"] == "2025-01-01T00:00:30.000000Z"


def test_node_status_is_reported_every_five_minutes_when_nothing_changes() -> None:
    cluster = Cluster(nodes=1)
    cluster.advance(299)
    assert ready_heartbeat(cluster, "node-1") == "2025-01-01T00:00:00Z"
    cluster.advance(1)
    assert ready_heartbeat(cluster, "node-1") == "2025-01-01T00:05:00Z"


def test_a_stopped_kubelet_stops_both_heartbeats_until_resumed() -> None:
    cluster = Cluster(nodes=2)
    cluster.advance(20)
    cluster.kubelets.heartbeats.stop("node-1")
    cluster.advance(400)
    assert lease(cluster, "node-1")["spec"]["renewTime"] == "2025-01-01T00:00:20.000000Z"
    assert ready_heartbeat(cluster, "node-1") == "2025-01-01T00:00:00Z"
    assert lease(cluster, "node-2")["spec"]["renewTime"] == "2025-01-01T00:07:00.000000Z"
    cluster.kubelets.heartbeats.resume("node-1", cluster.engine)
    cluster.settle()
    assert lease(cluster, "node-1")["spec"]["renewTime"] == "2025-01-01T00:07:00.000000Z"
    assert ready_heartbeat(cluster, "node-1") == "2025-01-01T00:07:00Z"
