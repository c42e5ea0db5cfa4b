"""kubectl 1.29 / 1.31 / 1.33 against fakekube, with default flags: what a user observes.

Every test runs once per kubectl version (the ``kubectl`` fixture) and shares its setup
across the commands it checks, so the suite stays fast. Objects are made and inspected
through the Python API; kubectl's printed text, exit codes and the objects' state
afterwards are what the tests assert.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakekube import Cluster
from fakekube.api.verbs.apiserver import MERGE_PATCH

from .conftest import Kubectl, find_kubectl, server_version

pytestmark = pytest.mark.fakekube(nodes=2)

Obj = dict[str, Any]

#: kubectl 1.32+ (1.33, 1.35 here) sends protobuf bodies for `kubectl create <kind> …` (fakekube decodes them); 1.29/1.31 send JSON.
CREATE_GENERATOR_VERSIONS = ("1.29", "1.31", "1.33")


# ----------------------------------------------------------------------------- objects

def pod(name: str, namespace: str = "default", node: str = "", labels: dict[str, str] | None = None,
        image: str = "nginx:1.27", behaviour: Obj | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "web", "image": image}]}
    if node:
        spec["nodeName"] = node
    meta: Obj = {"name": name, "namespace": namespace, "labels": labels or {}}
    if behaviour is not None:
        meta["annotations"] = {"fakekube.io/behaviour": json.dumps(behaviour)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def deployment(name: str, replicas: int = 3, images: tuple[str, ...] = ("nginx:1.27",)) -> Obj:
    containers = [{"name": "web" if i == 0 else f"side{i}", "image": image} for i, image in enumerate(images)]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}}}}


def configmap(name: str, data: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {"k": "v"}}


def namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def run_pod(cluster: Cluster) -> None:
    """Let the simulated kubelets start scheduled pods (a default container starts in 1 s)."""
    cluster.advance(1)


def merge_patch(cluster: Cluster, api_version: str, kind: str, name: str, patch: Obj,
                namespace: str = "default") -> None:
    cluster.api.patch(cluster.resource(api_version, kind), namespace, name, MERGE_PATCH, json.dumps(patch).encode())


# ------------------------------------------------------------------------------ output

def columns(text: str) -> list[dict[str, str]]:
    """kubectl's aligned table output as one dict per row, keyed by header.

    Cells are cut at the header's column starts, so empty cells (a resource with no
    short names) and headers with spaces ("NOMINATED NODE") come out right.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=\s{2}))\S", header)]
    names = [header[a:b].strip() for a, b in zip(starts, starts[1:] + [len(header) + 1000])]
    rows = []
    for line in lines[1:]:
        values = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line) + 1000])]
        rows.append(dict(zip(names, values)))
    return rows


def cells(line: str) -> list[str]:
    """One separately printed row (a watch event): cells are two or more spaces apart."""
    return re.split(r"\s{2,}", line.strip())


def by_name(rows: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {row["NAME"]: row for row in rows}


def describe_fields(text: str) -> dict[str, str]:
    """The top-level ``Key:  value`` lines of ``kubectl describe`` (first occurrence wins)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Z][A-Za-z -]*):\s*(.*)$", line)
        if match and match.group(1) not in fields:
            fields[match.group(1)] = match.group(2).strip()
    return fields


def section(text: str, title: str) -> list[str]:
    """The indented lines under a top-level ``Title:`` line of ``kubectl describe``, with
    runs of blanks squeezed to one (kubectl aligns values per block)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{title}:"))
    body = []
    for line in lines[start + 1:]:
        if line and not line[0].isspace():
            break
        body.append(" ".join(line.split()))
    return body


def write(path: Path, *documents: Obj) -> str:
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return str(path)


# ------------------------------------------------------------------ version, discovery

def test_version_reports_the_release_the_server_emulates(kubectl: Kubectl, fakekube: Cluster) -> None:
    """kubectl 1.33–1.35 against their own release; older ones against the default (1.36),
    outside the ±1 skew kubectl supports, which it says (1.34+: with "Warning:")."""
    release = server_version(kubectl.version)
    result = kubectl("version")
    assert result.rc == 0, result.stderr
    assert f"Client Version: v{kubectl.version}." in result.stdout
    assert f"Server Version: v{release}.0" in result.stdout.splitlines()
    skew = f"version difference between client ({kubectl.version}) and server ({release}) exceeds"
    assert (skew in result.stderr) is (kubectl.version != release)
    server = json.loads(kubectl.ok("version", "-o", "json"))["serverVersion"]
    assert (server["major"], server["minor"], server["gitVersion"]) == ("1", release.split(".")[1], f"v{release}.0")
    info = re.sub(r"\x1b\[[0-9;]*m", "", kubectl.ok("cluster-info"))  # kubectl < 1.33 colours it even for a pipe
    assert info.splitlines()[0] == f"Kubernetes control plane is running at {fakekube.url}"
    assert kubectl.ok("get", "--raw", "/readyz?verbose").splitlines()[-1] == "readyz check passed"


def test_api_versions_lists_every_served_group_version(kubectl: Kubectl, fakekube: Cluster) -> None:
    lines = kubectl.ok("api-versions").splitlines()
    expected = {"v1", "apps/v1", "batch/v1", "autoscaling/v2", "coordination.k8s.io/v1", "discovery.k8s.io/v1",
                "events.k8s.io/v1", "networking.k8s.io/v1", "policy/v1", "rbac.authorization.k8s.io/v1",
                "scheduling.k8s.io/v1", "storage.k8s.io/v1"}
    assert expected <= set(lines)
    assert lines == sorted(lines) and len(lines) == len(set(lines))


def test_api_resources_names_shortnames_and_scope(kubectl: Kubectl) -> None:
    rows = columns(kubectl.ok("api-resources"))
    assert list(rows[0]) == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    table = {(row["NAME"], row["APIVERSION"]): (row["SHORTNAMES"], row["NAMESPACED"], row["KIND"]) for row in rows}
    assert table[("pods", "v1")] == ("po", "true", "Pod")
    assert table[("namespaces", "v1")] == ("ns", "false", "Namespace")
    assert table[("nodes", "v1")] == ("no", "false", "Node")
    assert table[("configmaps", "v1")] == ("cm", "true", "ConfigMap")
    assert table[("secrets", "v1")] == ("", "true", "Secret")
    assert table[("services", "v1")] == ("svc", "true", "Service")
    assert table[("events", "v1")] == ("ev", "true", "Event")
    assert table[("events", "events.k8s.io/v1")] == ("ev", "true", "Event")
    assert table[("deployments", "apps/v1")] == ("deploy", "true", "Deployment")
    assert table[("replicasets", "apps/v1")] == ("rs", "true", "ReplicaSet")
    assert table[("statefulsets", "apps/v1")] == ("sts", "true", "StatefulSet")
    assert table[("jobs", "batch/v1")] == ("", "true", "Job")
    assert table[("cronjobs", "batch/v1")] == ("cj", "true", "CronJob")
    assert table[("ingresses", "networking.k8s.io/v1")] == ("ing", "true", "Ingress")
    assert table[("clusterroles", "rbac.authorization.k8s.io/v1")] == ("", "false", "ClusterRole")

    apps = kubectl.ok("api-resources", "--api-group=apps", "-o", "name").split()
    assert apps == ["controllerrevisions.apps", "daemonsets.apps", "deployments.apps", "replicasets.apps",
                    "statefulsets.apps"]
    cluster_scoped = kubectl.ok("api-resources", "--namespaced=false", "-o", "name").split()
    assert {"namespaces", "nodes", "persistentvolumes", "clusterroles.rbac.authorization.k8s.io"} <= set(cluster_scoped)
    assert "pods" not in cluster_scoped
    wide = by_name(columns(kubectl.ok("api-resources", "-o", "wide", "--api-group=")))
    assert wide["pods"]["VERBS"] == "create,delete,deletecollection,get,list,patch,update,watch"
    assert wide["pods"]["CATEGORIES"] == "all"


def test_explain_pods_spec(kubectl: Kubectl) -> None:
    text = kubectl.ok("explain", "pods.spec")
    lines = text.splitlines()
    assert lines[0].split() == ["KIND:", "Pod"]
    assert lines[1].split() == ["VERSION:", "v1"]
    assert "FIELD: spec <PodSpec>" in lines
    assert "  containers\t<[]Container> -required-" in lines
    assert "  nodeName\t<string>" in lines
    assert "Specification of the desired behavior of the pod." in text
    nested = kubectl.ok("explain", "deployment.spec.strategy.type")
    assert "FIELD: type <string>" in nested.splitlines()


# ----------------------------------------------------------------------------------- get

def _pods_in_two_namespaces(cluster: Cluster) -> None:
    cluster.create(namespace("team"))
    cluster.fail_node("node-2")  # node-2's kubelet is down: web-2 stays Pending
    cluster.create(pod("web-1", node="node-1", labels={"app": "web", "tier": "front"}))
    cluster.create(pod("web-2", node="node-2", labels={"app": "web"}))
    cluster.create(pod("db-1", namespace="team", node="node-1", labels={"app": "db"}, image="postgres:17"))
    cluster.advance(300)  # through the engine: kubelets start pods, heartbeats and node checks run


def test_get_tables_selectors_and_formats(kubectl: Kubectl, fakekube: Cluster) -> None:
    _pods_in_two_namespaces(fakekube)

    plain = kubectl.ok("get", "pods")
    assert plain.splitlines()[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    rows = by_name(columns(plain))
    assert rows["web-1"] == {"NAME": "web-1", "READY": "1/1", "STATUS": "Running", "RESTARTS": "0", "AGE": "5m"}
    # web-2's kubelet is down: it stays Pending (its node is NotReady, not yet evicted at 5 min).
    assert rows["web-2"] == {"NAME": "web-2", "READY": "0/1", "STATUS": "Pending", "RESTARTS": "0", "AGE": "5m"}
    assert set(rows) == {"web-1", "web-2"}

    wide = by_name(columns(kubectl.ok("get", "pods", "-o", "wide")))
    assert wide["web-1"]["IP"] == "10.224.0.2"  # the first pod address of node-1's 10.224.0.0/24
    assert wide["web-1"]["NODE"] == "node-1"
    assert wide["web-2"]["IP"] == "<none>"
    assert wide["web-2"]["NOMINATED NODE"] == "<none>" and wide["web-2"]["READINESS GATES"] == "<none>"

    everywhere = columns(kubectl.ok("get", "pods", "-A"))
    assert [(r["NAMESPACE"], r["NAME"]) for r in everywhere] == [("default", "web-1"), ("default", "web-2"),
                                                                ("team", "db-1")]

    by_node = columns(kubectl.ok("get", "pods", "-A", "--sort-by=.spec.nodeName"))  # rows carry whole objects
    assert [r["NAME"] for r in by_node][-1] == "web-2"

    assert [r["NAME"] for r in columns(kubectl.ok("get", "pods", "-l", "app=web,tier=front"))] == ["web-1"]
    assert [r["NAME"] for r in columns(kubectl.ok("get", "pods", "-A", "-l", "app!=web"))] == ["db-1"]
    on_node_1 = columns(kubectl.ok("get", "pods", "-A", "--field-selector", "spec.nodeName=node-1"))
    assert [r["NAME"] for r in on_node_1] == ["web-1", "db-1"]
    running = kubectl("get", "pods", "--field-selector", "status.phase=Running,metadata.name!=web-2")
    assert [r["NAME"] for r in columns(running.stdout)] == ["web-1"]
    nothing = kubectl("get", "pods", "-l", "app=none")
    assert (nothing.rc, nothing.stdout, nothing.stderr.strip()) == (0, "", "No resources found in default namespace.")

    single = yaml.safe_load(kubectl.ok("get", "pod", "web-1", "-o", "yaml"))
    assert (single["kind"], single["metadata"]["name"], single["spec"]["nodeName"]) == ("Pod", "web-1", "node-1")
    assert single["status"]["podIP"] == "10.224.0.2"
    assert single["metadata"]["resourceVersion"] == fakekube.get("v1", "Pod", "web-1")["metadata"]["resourceVersion"]
    listed = json.loads(kubectl.ok("get", "pods", "-n", "team", "-o", "json"))
    assert listed["kind"] == "List"
    assert [(i["kind"], i["metadata"]["name"]) for i in listed["items"]] == [("Pod", "db-1")]
    assert kubectl.ok("get", "pod", "web-1", "-o", "jsonpath={.status.podIP} {.spec.containers[0].image}") \
        == "10.224.0.2 nginx:1.27"

    nodes = by_name(columns(kubectl.ok("get", "nodes")))
    assert set(nodes) == {"node-1", "node-2"}
    assert (nodes["node-1"]["STATUS"], nodes["node-1"]["ROLES"], nodes["node-1"]["VERSION"]) == \
        ("Ready", "<none>", f"v{server_version(kubectl.version)}.0")

    missing = kubectl("get", "pod", "nope")
    assert missing.rc == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): pods "nope" not found'


def test_get_watch_prints_each_change(kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(pod("seed", node="node-1"))
    plain = kubectl.stream("get", "pods", "-w", "--request-timeout=30s")
    events = kubectl.stream("get", "pods", "--watch", "--output-watch-events", "--request-timeout=30s")
    try:
        # The initial list is printed before the watch starts (from the list's
        # resourceVersion), so every change made after these lines reaches both.
        assert len(plain.wait_for_lines(2)) == 2, plain.lines
        assert len(events.wait_for_lines(2)) == 2, events.lines
        unscheduled = pod("w1", labels={"step": "1"})
        unscheduled["spec"]["schedulerName"] = "manual"  # stays Pending: no scheduler of that name
        fakekube.create(unscheduled)
        merge_patch(fakekube, "v1", "Pod", "w1", {"metadata": {"labels": {"step": "2"}}})
        run_pod(fakekube)
        # Not scheduled: a grace period of 0, so the store writes it marked (MODIFIED,
        # Terminating) and deletes it in the same request, as upstream's store does.
        fakekube.delete("v1", "Pod", "w1")
        plain_lines = plain.wait_for_lines(7)
        event_lines = events.wait_for_lines(7)
    finally:
        plain.stop()
        events.stop()

    assert plain_lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [cells(line)[:3] for line in plain_lines[1:]] == [
        ["seed", "0/1", "ContainerCreating"], ["w1", "0/1", "Pending"], ["w1", "0/1", "Pending"],
        ["seed", "1/1", "Running"], ["w1", "0/1", "Terminating"], ["w1", "0/1", "Terminating"]]
    assert event_lines[0].split() == ["EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert [cells(line)[:2] for line in event_lines[1:]] == [
        ["ADDED", "seed"], ["ADDED", "w1"], ["MODIFIED", "w1"], ["MODIFIED", "seed"], ["MODIFIED", "w1"],
        ["DELETED", "w1"]]


# ------------------------------------------------------------------------------ describe

def test_describe_pod_deployment_node_namespace(kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(namespace("team"))
    fakekube.create(pod("web-1", node="node-1", labels={"app": "web", "tier": "front"}))
    run_pod(fakekube)
    fakekube.create(deployment("shop", replicas=3, images=("nginx:1.27", "busybox:1.36")))

    text = kubectl.ok("describe", "pod", "web-1")
    fields = describe_fields(text)
    assert fields["Name"] == "web-1" and fields["Namespace"] == "default"
    assert fields["Node"] == "node-1/172.18.0.2"
    assert fields["Status"] == "Running"
    assert fields["IP"] == "10.224.0.2"
    assert fields["Labels"] == "app=web"
    assert section(text, "Labels")[0] == "tier=front"
    assert fields["QoS Class"] == "BestEffort"
    containers = section(text, "Containers")
    assert containers[0] == "web:" and "Image: nginx:1.27" in containers
    assert "Ready: True" in containers

    text = kubectl.ok("describe", "deployment", "shop")
    fields = describe_fields(text)
    assert fields["Name"] == "shop"
    assert fields["Selector"] == "app=shop"
    # The deployment controller made its 3 pods; none is ready yet on the manual clock.
    assert fields["Replicas"] == "3 desired | 3 updated | 3 total | 0 available | 3 unavailable"
    assert fields["StrategyType"] == "RollingUpdate"
    assert fields["RollingUpdateStrategy"] == "25% max unavailable, 25% max surge"
    template = section(text, "Pod Template")
    assert template[:3] == ["Labels: app=shop", "Containers:", "web:"]
    assert "Image: nginx:1.27" in template and "Image: busybox:1.36" in template

    text = kubectl.ok("describe", "node", "node-1")
    fields = describe_fields(text)
    assert (fields["Name"], fields["Roles"], fields["Unschedulable"]) == ("node-1", "<none>", "false")
    on_node = [p for p in fakekube.list("v1", "Pod") if p["spec"].get("nodeName") == "node-1"]
    assert fields["Non-terminated Pods"] == f"({len(on_node)} in total)"  # web-1 and the shop pods placed there
    ready = next(line for line in section(text, "Conditions") if line.startswith("Ready"))
    assert ready.split()[:2] == ["Ready", "True"] and "KubeletReady" in ready
    capacity = section(text, "Capacity")
    assert "cpu: 4" in capacity and "pods: 110" in capacity
    assert any(line.split()[:2] == ["default", "web-1"] for line in section(text, "Non-terminated Pods"))

    text = kubectl.ok("describe", "namespace", "team")
    fields = describe_fields(text)
    assert (fields["Name"], fields["Labels"], fields["Status"]) == ("team", "kubernetes.io/metadata.name=team", "Active")
    assert "No resource quota." in text.splitlines() and "No LimitRange resource." in text.splitlines()


# -------------------------------------------------------------------------------- create

@pytest.mark.parametrize("kubectl", CREATE_GENERATOR_VERSIONS, indirect=True, ids=lambda v: f"kubectl{v}")
def test_create_generators(kubectl: Kubectl, fakekube: Cluster) -> None:
    assert kubectl.ok("create", "namespace", "shop") == "namespace/shop created\n"
    assert kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "-n", "shop") \
        == "deployment.apps/web created\n"
    assert kubectl.ok("create", "configmap", "settings", "--from-literal=mode=fast", "--from-literal=level=3") \
        == "configmap/settings created\n"
    assert kubectl.ok("create", "secret", "generic", "login", "--from-literal=user=admin") \
        == "secret/login created\n"

    assert fakekube.get("v1", "Namespace", "shop", "")["status"]["phase"] == "Active"
    web = fakekube.get("apps/v1", "Deployment", "web", "shop")
    assert web["spec"]["replicas"] == 2
    assert web["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert [(c["name"], c["image"]) for c in web["spec"]["template"]["spec"]["containers"]] == [("nginx", "nginx:1.27")]
    assert fakekube.get("v1", "ConfigMap", "settings")["data"] == {"mode": "fast", "level": "3"}
    login = fakekube.get("v1", "Secret", "login")
    assert login["type"] == "Opaque"
    assert base64.b64decode(login["data"]["user"]) == b"admin"

    again = kubectl("create", "namespace", "shop")
    assert again.rc == 1
    assert again.stderr.strip() == 'Error from server (AlreadyExists): namespaces "shop" already exists'


@pytest.mark.parametrize("kubectl", ["1.33"], indirect=True, ids=lambda v: f"kubectl{v}")
def test_create_deployment_with_zero_replicas_over_protobuf(kubectl: Kubectl, fakekube: Cluster) -> None:
    # Replicas is a pointer: protobuf carries an explicit 0, which must not become "absent" (defaulted to 1).
    assert kubectl.ok("create", "deployment", "web", "--image=nginx", "--replicas=0") == "deployment.apps/web created\n"
    web = fakekube.get("apps/v1", "Deployment", "web")
    assert web["spec"]["replicas"] == 0
    assert "generateName" not in web["metadata"]  # empty strings gogo always writes are dropped (omitempty)


#: `kubectl create <generator>` calls whose objects must store the same whether sent as JSON or protobuf.
PARITY_CREATES = (
    ("deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=80"),
    ("configmap", "settings", "--from-literal=mode=fast"),
    ("secret", "generic", "login", "--from-literal=user=admin"),
    ("service", "clusterip", "front", "--tcp=80:8080"),
    ("job", "once", "--image=busybox", "--", "echo", "hi"),
    ("cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *"),
    ("role", "reader", "--verb=get,list", "--resource=pods"),
    ("rolebinding", "readers", "--role=reader", "--user=alice"),
    ("quota", "small", "--hard=cpu=1,memory=1Gi,pods=4"),
    ("poddisruptionbudget", "web-pdb", "--selector=app=web", "--min-available=1"),
    ("ingress", "entry", "--rule=example.com/=front:80"),
    ("serviceaccount", "robot"),
)
_VOLATILE_META = ("namespace", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")


def _comparable(obj: Obj) -> Obj:
    """An object without what differs between two creates anyway (identity, time, status, allocated IPs)."""
    obj = json.loads(json.dumps(obj).replace(obj["metadata"]["uid"], "<uid>"))  # a Job's selector labels
    meta = {k: v for k, v in obj["metadata"].items() if k not in _VOLATILE_META}
    spec = {k: v for k, v in obj.get("spec", {}).items() if k not in ("clusterIP", "clusterIPs")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta, "spec": spec}


def test_protobuf_and_json_creates_store_the_same_objects(fakekube: Cluster, kubectl_cache_dir: str) -> None:
    clients = {version: find_kubectl(version) for version in ("1.29", "1.33")}
    if None in clients.values():
        pytest.skip("needs kubectl 1.29 (JSON bodies) and 1.33 (protobuf bodies)")
    for version, binary in clients.items():
        client = Kubectl(str(binary), version, fakekube.kubeconfig, kubectl_cache_dir)
        namespace = "v" + version.replace(".", "-")
        client.ok("create", "namespace", namespace)
        for args in PARITY_CREATES:
            client.ok("create", "-n", namespace, *args)
    for version_kind in (("apps/v1", "Deployment"), ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "Service"),
                         ("batch/v1", "Job"), ("batch/v1", "CronJob"), ("rbac.authorization.k8s.io/v1", "Role"),
                         ("rbac.authorization.k8s.io/v1", "RoleBinding"), ("v1", "ResourceQuota"),
                         ("policy/v1", "PodDisruptionBudget"), ("networking.k8s.io/v1", "Ingress"),
                         ("v1", "ServiceAccount")):
        by_namespace = {ns: sorted((_comparable(o) for o in fakekube.list(*version_kind, namespace=ns)),
                                   key=lambda o: o["metadata"]["name"])
                        for ns in ("v1-29", "v1-33")}
        assert by_namespace["v1-33"] == by_namespace["v1-29"], version_kind


def test_create_from_file(kubectl: Kubectl, fakekube: Cluster, tmp_path: Path) -> None:
    path = write(tmp_path / "objects.yaml", configmap("from-file", {"a": "1"}), deployment("filed", replicas=1))
    assert kubectl.ok("create", "-f", path).splitlines() == ["configmap/from-file created",
                                                             "deployment.apps/filed created"]
    assert fakekube.get("v1", "ConfigMap", "from-file")["data"] == {"a": "1"}
    assert fakekube.get("apps/v1", "Deployment", "filed")["spec"]["replicas"] == 1


# --------------------------------------------------------------------------------- apply

def _web_manifest() -> Obj:
    web = deployment("web", replicas=2, images=("nginx:1.27", "busybox:1.36"))
    web["metadata"]["labels"]["team"] = "blue"
    web["metadata"]["annotations"] = {"owner": "ops"}
    spec = web["spec"]
    spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    first = spec["template"]["spec"]["containers"][0]
    first["env"] = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    first["ports"] = [{"containerPort": 80, "name": "http"}, {"containerPort": 443, "name": "https"}]
    first["args"] = ["--verbose", "--port=80"]
    return web


def test_apply_twice_then_an_edited_manifest(kubectl: Kubectl, fakekube: Cluster, tmp_path: Path) -> None:
    manifest = _web_manifest()
    settings = configmap("settings", {"mode": "fast", "level": "3"})
    path = write(tmp_path / "app.yaml", manifest, settings)

    assert kubectl.ok("apply", "-f", path).splitlines() == ["deployment.apps/web created", "configmap/settings created"]
    rv = fakekube.get("apps/v1", "Deployment", "web")["metadata"]["resourceVersion"]
    cm_rv = fakekube.get("v1", "ConfigMap", "settings")["metadata"]["resourceVersion"]
    assert kubectl.ok("apply", "-f", path).splitlines() == ["deployment.apps/web unchanged",
                                                            "configmap/settings unchanged"]
    assert fakekube.get("apps/v1", "Deployment", "web")["metadata"]["resourceVersion"] == rv
    assert fakekube.get("v1", "ConfigMap", "settings")["metadata"]["resourceVersion"] == cm_rv

    # Edit: a field changes, list items come and go and reorder, a label and an
    # annotation disappear, the strategy switches type (kubectl sends $retainKeys).
    edited = _web_manifest()
    del edited["metadata"]["labels"]["team"]
    del edited["metadata"]["annotations"]
    edited["spec"]["replicas"] = 4
    edited["spec"]["strategy"] = {"type": "Recreate"}
    web, side = edited["spec"]["template"]["spec"]["containers"]
    web["image"] = "nginx:1.28"
    web["env"] = [{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]
    web["ports"] = [{"containerPort": 443, "name": "https"}]
    web["args"] = ["--port=8080"]
    edited["spec"]["template"]["spec"]["containers"] = [side, web, {"name": "cache", "image": "redis:7"}]
    del settings["data"]["level"]
    write(tmp_path / "app.yaml", edited, settings)

    assert kubectl.ok("apply", "-f", path).splitlines() == ["deployment.apps/web configured",
                                                            "configmap/settings configured"]
    after = fakekube.get("apps/v1", "Deployment", "web")
    assert after["metadata"]["labels"] == {"app": "web"}
    assert "owner" not in after["metadata"].get("annotations", {})
    assert after["spec"]["replicas"] == 4
    assert after["spec"]["strategy"] == {"type": "Recreate"}
    containers = after["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("side1", "busybox:1.36"), ("web", "nginx:1.28"),
                                                             ("cache", "redis:7")]
    assert containers[1]["env"] == [{"name": "C", "value": "3"}, {"name": "A", "value": "1"}]
    assert containers[1]["ports"] == [{"containerPort": 443, "name": "https", "protocol": "TCP"}]
    assert containers[1]["args"] == ["--port=8080"]
    assert fakekube.get("v1", "ConfigMap", "settings")["data"] == {"mode": "fast"}
    assert kubectl.ok("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[*].name}") \
        == "side1 web cache"

    assert kubectl.ok("apply", "-f", path).splitlines() == ["deployment.apps/web unchanged",
                                                            "configmap/settings unchanged"]


COMMON_KINDS = """\
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: edge, namespace: shop}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 443}]
---
apiVersion: v1
kind: Pod
metadata: {name: tool, namespace: shop}
spec:
  containers: [{name: tool, image: busybox:1.36, command: [sleep, infinity]}]
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: shop}
data: {password: aHVudGVyMg==}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres:17}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: busybox:1.36}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox:1.36, command: ["true"]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: shop}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: busybox:1.36}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer, namespace: shop}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: shop}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer-reads, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: ServiceAccount, name: deployer, namespace: shop}
- {kind: User, name: jane, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch, namespace: shop}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-in, namespace: shop}
spec:
  podSelector: {}
  policyTypes: [Ingress]
"""

#: Upstream quirks of client-side apply, reproduced: kubectl always patches a StatefulSet's
#: volumeClaimTemplates (the live ones carry defaults and a status) and a PDB's selector
#: (patch strategy "replace"), so it says "configured" — yet the server writes nothing.
ALWAYS_CONFIGURED = {"statefulset.apps/db", "poddisruptionbudget.policy/web"}


def test_reapplying_common_kinds_writes_nothing(kubectl: Kubectl, fakekube: Cluster, tmp_path: Path) -> None:
    path = tmp_path / "shop.yaml"
    path.write_text(COMMON_KINDS)
    created = kubectl.ok("apply", "-f", str(path)).splitlines()
    assert all(line.endswith(" created") for line in created), created
    before = fakekube.store.resource_version

    again = dict(line.rsplit(" ", 1) for line in kubectl.ok("apply", "-f", str(path)).splitlines())
    assert set(again) == {line.rsplit(" ", 1)[0] for line in created}
    assert {name for name, verdict in again.items() if verdict != "unchanged"} == ALWAYS_CONFIGURED
    assert {again[name] for name in ALWAYS_CONFIGURED} == {"configured"}
    assert fakekube.store.resource_version == before  # no object was written


# --------------------------------------------------------------------------------- patch

def test_patch_with_each_type(kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(deployment("web", replicas=2, images=("nginx:1.27", "busybox:1.36")))

    strategic = '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}'
    assert kubectl.ok("patch", "deployment", "web", "-p", strategic) == "deployment.apps/web patched\n"
    images = "jsonpath={.spec.template.spec.containers[*].image}"
    assert kubectl.ok("get", "deployment", "web", "-o", images) == "nginx:1.28 busybox:1.36"
    assert kubectl.ok("patch", "deployment", "web", "-p", strategic) == "deployment.apps/web patched (no change)\n"

    merge = '{"metadata":{"labels":{"app":null,"tier":"front"}},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.29"}]}}}}'
    assert kubectl.ok("patch", "deployment", "web", "--type", "merge", "-p", merge) == "deployment.apps/web patched\n"
    after = fakekube.get("apps/v1", "Deployment", "web")
    assert after["metadata"]["labels"] == {"tier": "front"}
    assert [c["image"] for c in after["spec"]["template"]["spec"]["containers"]] == ["nginx:1.29"]  # list replaced

    ops = ('[{"op":"replace","path":"/spec/replicas","value":5},'
           '{"op":"add","path":"/metadata/annotations","value":{"note":"json"}},'
           '{"op":"remove","path":"/metadata/labels/tier"}]')
    assert kubectl.ok("patch", "deployment", "web", "--type", "json", "-p", ops) == "deployment.apps/web patched\n"
    after = fakekube.get("apps/v1", "Deployment", "web")
    assert after["spec"]["replicas"] == 5
    # The patch replaced every annotation; the deployment controller writes its revision
    # back (revision 3: the two image changes above each made a ReplicaSet).
    assert after["metadata"]["annotations"] == {"note": "json", "deployment.kubernetes.io/revision": "3"}
    assert after["metadata"].get("labels", {}) == {}

    rv = after["metadata"]["resourceVersion"]
    failed = kubectl("patch", "deployment", "web", "--type", "json", "-p", '[{"op":"test","path":"/spec/replicas","value":9}]')
    assert failed.rc == 1  # upstream's JSON-patch failure is a bare 422 that does not say what failed
    assert failed.stderr.strip() == ("The request is invalid: "
                                     "the server rejected our request due to an error in our request")
    assert fakekube.get("apps/v1", "Deployment", "web")["metadata"]["resourceVersion"] == rv


# ------------------------------------------------------------------------ label, annotate

def test_label_and_annotate(kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(configmap("cm"))

    def labels() -> dict[str, str]:
        return fakekube.get("v1", "ConfigMap", "cm")["metadata"].get("labels") or {}

    def annotations() -> dict[str, str]:
        return fakekube.get("v1", "ConfigMap", "cm")["metadata"].get("annotations") or {}

    assert kubectl.ok("label", "configmap", "cm", "tier=front", "env=dev") == "configmap/cm labeled\n"
    assert labels() == {"tier": "front", "env": "dev"}
    refused = kubectl("label", "configmap", "cm", "tier=back")
    assert refused.rc == 1
    assert refused.stderr.strip() == "error: 'tier' already has a value (front), and --overwrite is false"
    assert kubectl.ok("label", "configmap", "cm", "tier=back", "--overwrite") == "configmap/cm labeled\n"
    assert labels() == {"tier": "back", "env": "dev"}
    assert kubectl.ok("label", "configmap", "cm", "env-") == "configmap/cm unlabeled\n"
    assert labels() == {"tier": "back"}
    assert columns(kubectl.ok("get", "cm", "cm", "--show-labels"))[0]["LABELS"] == "tier=back"

    assert kubectl.ok("annotate", "configmap", "cm", "note=hello") == "configmap/cm annotated\n"
    assert annotations() == {"note": "hello"}
    assert kubectl("annotate", "configmap", "cm", "note=bye").rc == 1
    assert kubectl.ok("annotate", "configmap", "cm", "note=bye", "--overwrite") == "configmap/cm annotated\n"
    assert kubectl.ok("get", "cm", "cm", "-o", "jsonpath={.metadata.annotations.note}") == "bye"
    assert kubectl.ok("annotate", "configmap", "cm", "note-") == "configmap/cm annotated\n"
    assert annotations() == {}


# --------------------------------------------------------------------------------- scale

def test_scale(kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(deployment("web", replicas=2))
    assert kubectl.ok("scale", "deployment", "web", "--replicas=5") == "deployment.apps/web scaled\n"
    assert fakekube.get("apps/v1", "Deployment", "web")["spec"]["replicas"] == 5
    wrong = kubectl("scale", "deployment", "web", "--current-replicas=4", "--replicas=1")
    assert wrong.rc == 1 and wrong.stderr.strip() == "error: Expected replicas to be 4, was 5"
    assert kubectl.ok("scale", "deploy/web", "--current-replicas=5", "--replicas=0") == "deployment.apps/web scaled\n"
    assert kubectl.ok("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}") == "0"


# -------------------------------------------------------------------------------- delete

def deleted(kubectl: Kubectl, what: str, namespace: str = "default", verb: str = "deleted") -> str:
    """What ``kubectl delete`` prints for a namespaced object: kubectl 1.35 names the namespace."""
    where = f" from {namespace} namespace" if tuple(map(int, kubectl.version.split("."))) >= (1, 35) else ""
    return f"{what} {verb}{where}\n"


def test_delete_plain_cascading_and_namespaces(kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(configmap("cm"))
    for name in ("plain", "fg", "orphaned"):
        fakekube.create(deployment(name, replicas=0))  # a ReplicaSet each, no pods
    fakekube.create(pod("pending"))
    # A container that ignores SIGTERM: stopping takes the whole grace period.
    fakekube.create(pod("scheduled", node="node-1", behaviour={"stop_delay_s": 3600}))
    run_pod(fakekube)  # running, so deleting it has a container to stop
    fakekube.create(namespace("doomed"))

    assert kubectl.ok("delete", "configmap", "cm") == deleted(kubectl, 'configmap "cm"')
    assert kubectl.ok("delete", "deployment", "plain") == deleted(kubectl, 'deployment.apps "plain"')
    assert kubectl.ok("delete", "pod", "pending") == deleted(kubectl, 'pod "pending"')
    assert [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap", "default")] == ["kube-root-ca.crt"]
    assert [p["metadata"]["name"] for p in fakekube.list("v1", "Pod", "default")] == ["scheduled"]

    # A scheduled pod waits for its kubelet (grace period 30 s); --force removes it at once.
    assert kubectl.ok("delete", "pod", "scheduled", "--wait=false") == deleted(kubectl, 'pod "scheduled"')
    assert by_name(columns(kubectl.ok("get", "pods")))["scheduled"]["STATUS"] == "Terminating"
    assert fakekube.get("v1", "Pod", "scheduled")["metadata"]["deletionGracePeriodSeconds"] == 30
    forced = kubectl("delete", "pod", "scheduled", "--grace-period=0", "--force")
    assert (forced.rc, forced.stdout) == (0, deleted(kubectl, 'pod "scheduled"', verb="force deleted"))
    assert "Immediate deletion does not wait for confirmation" in forced.stderr
    assert fakekube.list("v1", "Pod", "default") == []

    # The garbage collector finishes both at once: the foreground one once its ReplicaSet
    # is gone, the orphaning one once its ReplicaSet lets go of it (and stays).
    assert kubectl.ok("delete", "deployment", "fg", "--cascade=foreground", "--wait=false") \
        == deleted(kubectl, 'deployment.apps "fg"')
    assert kubectl.ok("delete", "deployment", "orphaned", "--cascade=orphan", "--wait=false") \
        == deleted(kubectl, 'deployment.apps "orphaned"')
    assert fakekube.list("apps/v1", "Deployment", "default") == []
    [kept] = fakekube.list("apps/v1", "ReplicaSet", "default")
    assert kept["metadata"]["name"].startswith("orphaned-") and "ownerReferences" not in kept["metadata"]

    assert kubectl.ok("delete", "namespace", "doomed", "--wait=false") == 'namespace "doomed" deleted\n'
    assert by_name(columns(kubectl.ok("get", "namespaces")))["doomed"]["STATUS"] == "Terminating"
    doomed = fakekube.get("v1", "Namespace", "doomed", "")
    assert doomed["metadata"]["deletionTimestamp"] and doomed["status"]["phase"] == "Terminating"

    gone = kubectl("delete", "configmap", "cm")
    assert gone.rc == 1
    assert gone.stderr.strip() == 'Error from server (NotFound): configmaps "cm" not found'
    assert kubectl("delete", "configmap", "cm", "--ignore-not-found").rc == 0


# ------------------------------------------------------------------------- auth and tokens

#: kubectl 1.32+ sends the review objects and TokenRequests as protobuf; older ones send JSON.
PROTOBUF_REVIEW_VERSIONS = ("1.29", "1.31", "1.33")


def jwt_claims(token: str) -> Obj:
    """The decoded payload of a JWT (base64url without padding)."""
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


@pytest.mark.parametrize("kubectl", PROTOBUF_REVIEW_VERSIONS, indirect=True, ids=lambda v: f"kubectl{v}")
def test_auth_can_i_and_whoami(kubectl: Kubectl, fakekube: Cluster) -> None:
    rv = fakekube.store.resource_version
    assert kubectl.ok("auth", "can-i", "create", "pods") == "yes\n"
    assert kubectl.ok("auth", "can-i", "get", "/healthz") == "yes\n"
    rules = columns(kubectl.ok("auth", "can-i", "--list"))
    assert {"Resources": "*.*", "Non-Resource URLs": "[]", "Resource Names": "[]", "Verbs": "[*]"} in rules
    assert {"Resources": "", "Non-Resource URLs": "[*]", "Resource Names": "[]", "Verbs": "[*]"} in rules
    whoami = kubectl.ok("auth", "whoami").splitlines()
    assert cells(whoami[1]) == ["Username", "fakekube-admin"]
    assert cells(whoami[2]) == ["Groups", "[system:masters system:authenticated]"]
    assert fakekube.store.resource_version == rv  # reviews are never stored


@pytest.mark.parametrize("kubectl", PROTOBUF_REVIEW_VERSIONS, indirect=True, ids=lambda v: f"kubectl{v}")
def test_create_token(kubectl: Kubectl, fakekube: Cluster) -> None:
    # The service account controller keeps a "default" account in every namespace.
    token = kubectl.ok("create", "token", "default").strip()
    assert len(token.split(".")) == 3
    claims = jwt_claims(token)
    assert claims["sub"] == "system:serviceaccount:default:default"
    assert claims["exp"] - claims["iat"] == 3600
    longer = jwt_claims(kubectl.ok("create", "token", "default", "--duration=2h", "--audience=vault").strip())
    assert (longer["exp"] - longer["iat"], longer["aud"]) == (7200, ["vault"])
    short = kubectl("create", "token", "default", "--duration=1m")
    assert short.rc != 0 and "may not specify a duration less than 10 minutes" in short.stderr
