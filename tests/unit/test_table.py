"""Table output: upstream's printer columns and HumanDuration, on virtual time."""

from datetime import datetime, timedelta, timezone

import pytest

from fakekube.api.types import builtin_registry
from fakekube.api.table import human_duration, to_table

NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
REG = builtin_registry()


def ts(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rt(group: str, plural: str):
    found = REG.by_group_resource(group, plural)
    assert found is not None
    return found


def cells(group: str, plural: str, obj: dict) -> list:
    return to_table(rt(group, plural), [obj], NOW)["rows"][0]["cells"]


# Cases from k8s.io/apimachinery/pkg/util/duration/duration_test.go (HumanDuration).
@pytest.mark.parametrize("seconds,want", [
    (1, "1s"), (70, "70s"), (190, "3m10s"), (180, "3m"), (70 * 60, "70m"), (47 * 3600, "47h"),
    (49 * 3600, "2d1h"), (48 * 3600, "2d"), ((8 * 24 + 2) * 3600, "8d"), (367 * 24 * 3600, "367d"),
    ((365 * 2 * 24 + 25) * 3600, "2y1d"), ((365 * 8 * 24 + 2) * 3600, "8y"), (3 * 3600 + 5 * 60, "3h5m"),
    (-0.5, "0s"), (-1.9, "0s"), (-2, "<invalid>"), (119.9, "119s"),
])
def test_human_duration(seconds, want):
    assert human_duration(seconds) == want


def pod(name="p", containers=2, statuses=(), init=(), init_statuses=(), phase="Running", **extra):
    obj = {
        "metadata": {"name": name, "creationTimestamp": ts(300), "resourceVersion": "7"},
        "spec": {"containers": [{"name": f"c{i}", "image": "nginx"} for i in range(containers)],
                 "initContainers": list(init)},
        "status": {"phase": phase, "containerStatuses": list(statuses), "initContainerStatuses": list(init_statuses)},
    }
    for key, value in extra.items():
        obj[key] = value
    return obj


RUNNING_READY = {"name": "c0", "ready": True, "restartCount": 3, "state": {"running": {}}}


def test_pod_ready_and_restarts_like_printers_test():
    row = cells("", "pods", pod(statuses=[RUNNING_READY, {"name": "c1", "restartCount": 3, "state": {}}]))
    assert row[:5] == ["p", "1/2", "Running", "6", "5m"]
    assert row[5:] == ["<none>", "<none>", "<none>", "<none>"]


def test_pod_waiting_and_terminated_reasons():
    waiting = {"name": "c1", "restartCount": 3, "state": {"waiting": {"reason": "ContainerWaitingReason"}}}
    assert cells("", "pods", pod(statuses=[RUNNING_READY, waiting]))[1:3] == ["1/2", "ContainerWaitingReason"]
    exit_code = {"name": "c1", "state": {"terminated": {"exitCode": 2}}}
    assert cells("", "pods", pod(statuses=[exit_code]))[2] == "ExitCode:2"
    signal = {"name": "c1", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
    assert cells("", "pods", pod(statuses=[signal]))[2] == "Signal:9"


def test_pod_restarts_show_time_since_last_termination():
    cs = dict(RUNNING_READY, lastState={"terminated": {"finishedAt": ts(10)}})
    assert cells("", "pods", pod(containers=1, statuses=[cs]))[3] == "3 (10s ago)"


def test_pod_init_container_states():
    init = [{"name": "i0"}, {"name": "i1"}]
    done = {"name": "i0", "state": {"terminated": {"exitCode": 0}}}
    running = {"name": "i1", "state": {"running": {}}}
    assert cells("", "pods", pod(init=init, init_statuses=[done, running], phase="Pending"))[2] == "Init:1/2"
    crash = {"name": "i0", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    row = cells("", "pods", pod(init=init, init_statuses=[crash], phase="Pending"))
    assert row[2:4] == ["Init:CrashLoopBackOff", "4"]
    failed = {"name": "i0", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    assert cells("", "pods", pod(init=init, init_statuses=[failed], phase="Pending"))[2] == "Init:Error"


def test_pod_sidecar_counts_towards_ready_total():
    init = [{"name": "side", "restartPolicy": "Always"}]
    side = {"name": "side", "started": True, "ready": True, "state": {"running": {}}}
    row = cells("", "pods", pod(containers=1, init=init, init_statuses=[side], statuses=[RUNNING_READY]))
    assert row[1] == "2/2"


def test_pod_terminating_and_wide_columns():
    obj = pod(statuses=[RUNNING_READY])
    obj["metadata"]["deletionTimestamp"] = ts(1)
    obj["spec"].update(nodeName="node-1", readinessGates=[{"conditionType": "x/ok"}])
    obj["status"].update(podIPs=[{"ip": "10.0.0.5"}], conditions=[{"type": "x/ok", "status": "True"}])
    row = cells("", "pods", obj)
    assert row[2] == "Terminating"
    assert row[5:] == ["10.0.0.5", "node-1", "<none>", "1/1"]


def test_pod_completed_row_condition_and_include_object():
    obj = pod(phase="Succeeded", statuses=[{"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}])
    table = to_table(rt("", "pods"), [obj], NOW)
    row = table["rows"][0]
    assert row["cells"][2] == "Completed"
    assert row["conditions"][0]["reason"] == "Succeeded"
    assert row["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}
    assert table["metadata"] == {"resourceVersion": "7"}
    assert to_table(rt("", "pods"), [obj], NOW, "Object")["rows"][0]["object"] is obj
    assert to_table(rt("", "pods"), [obj], NOW, "None")["rows"][0]["object"] is None  # Go writes the empty RawExtension


def test_pod_columns_and_priorities():
    table = to_table(rt("", "pods"), [], NOW, list_meta={"resourceVersion": "9"})
    cols = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert cols == [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1), ("Node", 1),
                    ("Nominated Node", 1), ("Readiness Gates", 1)]
    assert table["columnDefinitions"][0]["format"] == "name"
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "9"} and table["rows"] == []


def node(ready="True", **spec):
    return {"metadata": {"name": "n1", "creationTimestamp": ts(2 * 86400 + 3600),
                         "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "infra"}},
            "spec": spec,
            "status": {"conditions": [{"type": "Ready", "status": ready}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                       "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Ubuntu"}}}


def test_node_status_roles_and_wide():
    assert cells("", "nodes", node()) == ["n1", "Ready", "control-plane,infra", "2d1h", "v1.33.0", "10.0.0.1",
                                          "<none>", "Ubuntu", "<unknown>", "<unknown>"]
    assert cells("", "nodes", node("Unknown", unschedulable=True))[1] == "NotReady,SchedulingDisabled"
    bare = node()
    bare["status"]["conditions"] = []
    assert cells("", "nodes", bare)[1] == "Unknown"


def test_deployment_and_replicaset():
    dep = {"metadata": {"name": "web", "creationTimestamp": ts(30)},
           "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"spec": {"containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox"}]}}},
           "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}
    assert cells("apps", "deployments", dep) == ["web", "2/3", 3, 2, "30s", "a,b", "nginx:1,busybox", "app=web"]
    assert cells("apps", "replicasets", dep)[:4] == ["web", 3, 0, 2]


def test_service_columns():
    svc = {"metadata": {"name": "s", "creationTimestamp": ts(61)},
           "spec": {"type": "NodePort", "clusterIP": "10.96.0.10",
                    "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                    "selector": {"b": "2", "a": "1"}}}
    assert cells("", "services", svc) == ["s", "NodePort", "10.96.0.10", "<none>", "80:30080/TCP,53/UDP", "61s", "a=1,b=2"]
    svc["spec"]["type"] = "LoadBalancer"
    assert cells("", "services", svc)[3] == "<pending>"
    svc["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}
    assert cells("", "services", svc)[3] == "1.2.3.4"


def test_job_status_completions_duration():
    job = {"metadata": {"name": "j", "creationTimestamp": ts(600)},
           "spec": {"completions": 3, "template": {"spec": {"containers": []}}},
           "status": {"succeeded": 1, "startTime": ts(125)}}
    assert cells("batch", "jobs", job)[:5] == ["j", "Running", "1/3", "2m5s", "10m"]
    job["status"].update(completionTime=ts(5), conditions=[{"type": "Complete", "status": "True"}])
    assert cells("batch", "jobs", job)[1:4] == ["Complete", "1/3", "2m"]
    job["spec"] = {"parallelism": 2}
    assert cells("batch", "jobs", job)[2] == "1/1 of 2"


def test_events_core_and_events_k8s_io():
    ev = {"metadata": {"name": "e1"}, "type": "Normal", "reason": "Scheduled", "message": " hi ",
          "involvedObject": {"kind": "Pod", "name": "p"}, "source": {"component": "default-scheduler"},
          "firstTimestamp": ts(90), "lastTimestamp": ts(30), "count": 2}
    assert cells("", "events", ev) == ["30s", "Normal", "Scheduled", "pod/p", "", "default-scheduler", "hi", "90s", 2, "e1"]
    new = {"metadata": {"name": "e2"}, "type": "Warning", "reason": "Failed", "note": "boom",
           "regarding": {"kind": "Node", "name": "n"}, "eventTime": "2025-01-01T11:59:00.000000Z",
           "reportingController": "kubelet", "reportingInstance": "n"}
    assert cells("events.k8s.io", "events", new) == ["60s", "Warning", "Failed", "node/n", "", "kubelet, n", "boom", "60s", 1, "e2"]


def test_small_printers():
    cm = {"metadata": {"name": "c", "creationTimestamp": ts(5)}, "data": {"a": "1", "b": "2"}}
    assert cells("", "configmaps", cm) == ["c", 2, "5s"]
    sec = {"metadata": {"name": "s", "creationTimestamp": ts(5)}, "type": "Opaque", "data": {"a": "MQ=="}}
    assert cells("", "secrets", sec) == ["s", "Opaque", 1, "5s"]
    ns = {"metadata": {"name": "default", "creationTimestamp": ts(5)}, "status": {"phase": "Active"}}
    assert cells("", "namespaces", ns) == ["default", "Active", "5s"]
    rb = {"metadata": {"name": "rb", "creationTimestamp": ts(5)}, "roleRef": {"kind": "ClusterRole", "name": "view"},
          "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]}
    assert cells("rbac.authorization.k8s.io", "rolebindings", rb) == ["rb", "ClusterRole/view", "5s", "u", "", "ns:sa"]
    sc = {"metadata": {"name": "std", "creationTimestamp": ts(5),
                       "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "p"}
    assert cells("storage.k8s.io", "storageclasses", sc) == ["std (default)", "p", "Delete", "Immediate", False, "5s"]
    pdb = {"metadata": {"name": "pdb", "creationTimestamp": ts(5)}, "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}}
    assert cells("policy", "poddisruptionbudgets", pdb) == ["pdb", "50%", "N/A", 1, "5s"]
    pvc = {"metadata": {"name": "data", "creationTimestamp": ts(5)},
           "spec": {"volumeName": "pv1", "storageClassName": "std"},
           "status": {"phase": "Bound", "accessModes": ["ReadWriteMany", "ReadWriteOnce"], "capacity": {"storage": "1Gi"}}}
    assert cells("", "persistentvolumeclaims", pvc) == ["data", "Bound", "pv1", "1Gi", "RWO,RWX", "std", "<unset>", "5s", "<unset>"]


def test_default_convertor_for_types_without_printer():
    limit = {"metadata": {"name": "lr", "creationTimestamp": "2024-12-31T00:00:00Z"}}
    table = to_table(rt("", "limitranges"), [limit], NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    assert table["columnDefinitions"][1]["type"] == "date"
    assert table["rows"][0]["cells"] == ["lr", "2024-12-31T00:00:00Z"]


def test_every_registered_type_renders_an_empty_object():
    for resource in REG:
        table = to_table(resource, [{"metadata": {"name": "x"}}], NOW)
        extra = 1 if resource.plural == "ipaddresses" else 0  # upstream's printer adds an age with no column
        assert len(table["rows"][0]["cells"]) == len(table["columnDefinitions"]) + extra, resource.plural


def test_missing_creation_timestamp_is_unknown():
    assert cells("", "configmaps", {"metadata": {"name": "c"}}) == ["c", 0, "<unknown>"]


def test_bad_include_object_rejected():
    with pytest.raises(ValueError):
        to_table(rt("", "pods"), [], NOW, "Everything")


def test_every_printers_columns_are_upstreams() -> None:
    """Names, types (several counts are ``string`` upstream), formats and priorities, for
    every built-in type kube-apiserver 1.36 serves that fakekube serves too."""
    from tests.unit.table_reference import UPSTREAM_1_36_COLUMNS
    registry = builtin_registry()
    compared = 0
    for key, wanted in UPSTREAM_1_36_COLUMNS.items():
        *group_version, plural = key.split("/")
        group, version = ("", "v1") if group_version == ["v1"] else tuple(group_version)
        try:
            rt = registry.lookup(group, version, plural)
        except KeyError:
            continue  # not served by this release
        columns = to_table(rt, [], NOW, kubernetes_version="1.36")["columnDefinitions"]
        assert [[c["name"], c["type"], c["format"], c["priority"]] for c in columns] == wanted, key
        compared += 1
    assert compared >= 50


def test_column_descriptions_are_the_fields_documentation_of_the_version() -> None:
    registry = builtin_registry()
    configmaps = to_table(registry.lookup("", "v1", "configmaps"), [], NOW, kubernetes_version="1.36")
    data = configmaps["columnDefinitions"][1]
    assert (data["type"], data["description"]) == ("string", (
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. "
        "Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not "
        "overlap with the keys in the BinaryData field, this is enforced during validation process."))
    ip = to_table(registry.lookup("", "v1", "pods"), [], NOW, kubernetes_version="1.36")["columnDefinitions"][5]
    assert ip["description"] == ("podIP address allocated to the pod. Routable at least within the cluster. "
                                 "Empty if not yet allocated.")
    policies = registry.lookup("networking.k8s.io", "v1", "networkpolicies")
    selector = {v: to_table(policies, [], NOW, kubernetes_version=v)["columnDefinitions"][1]["description"]
                for v in ("1.33", "1.36")}
    assert selector["1.33"].startswith("podSelector selects the pods to which this NetworkPolicy object applies. "
                                       "The array of ingress rules is applied")
    assert selector["1.36"].startswith("podSelector selects the pods to which this NetworkPolicy object applies. "
                                       "The array of rules is applied")


def test_a_printer_follows_the_version() -> None:
    """The ServiceAccount printer lost its Secrets count in 1.35 (kubernetes#117160)."""
    accounts = builtin_registry().lookup("", "v1", "serviceaccounts")
    names = {v: [c["name"] for c in to_table(accounts, [], NOW, kubernetes_version=v)["columnDefinitions"]]
             for v in ("1.34", "1.35")}
    assert names == {"1.34": ["Name", "Secrets", "Age"], "1.35": ["Name", "Age"]}


def test_typed_cells_follow_upstream_s_printers():
    """printHorizontalPodAutoscaler formats MinPods as a string ("<unset>" or the number) and
    MaxPods/Replicas as integers; printIPAddress appends the age with no column for it."""
    hpa = {"metadata": {"name": "h", "creationTimestamp": ts(60)},
           "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"}, "minReplicas": 2, "maxReplicas": 5}}
    assert cells("autoscaling", "horizontalpodautoscalers", hpa)[3:6] == ["2", 5, 0]
    ip = {"metadata": {"name": "10.96.0.10", "creationTimestamp": ts(90)}, "spec": {"parentRef": {
        "resource": "services", "namespace": "default", "name": "web"}}}
    assert cells("networking.k8s.io", "ipaddresses", ip) == ["10.96.0.10", "services/default/web", "90s"]
