"""A cluster with ``system_pods`` on starts like a new kind cluster: a control-plane node,
kube-system's static pods, CoreDNS, kube-proxy, kindnet and local-path storage, all made
through the API and the controllers during a 30 s boot that ends at ``start_time``."""

from __future__ import annotations

import base64
import ssl
from datetime import datetime, timedelta, timezone

import pytest
import yaml

from fakekube import Cluster
from fakekube.cluster.configfile import ConfigError, parse_config
from fakekube.cluster.system import SystemPods

T0 = "2025-01-01T00:00:00Z"
BOOTED = "2024-12-31T23:59:30Z"  # 30 s before start_time
CP = "fakekube-control-plane"
STATIC = [f"{c}-{CP}" for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")]


def names(items: list[dict]) -> list[str]:
    return [i["metadata"]["name"] for i in items]


def condition(pod: dict, kind: str) -> dict:
    return next(c for c in pod["status"]["conditions"] if c["type"] == kind)


def by_prefix(pods: list[dict], prefix: str) -> list[dict]:
    return [p for p in pods if p["metadata"]["name"].startswith(prefix)]


def test_a_fresh_cluster_is_a_fresh_kind_cluster() -> None:
    cluster = Cluster(nodes=2, system_pods=True)
    assert cluster.now == datetime(2025, 1, 1, tzinfo=timezone.utc)
    nodes = cluster.list("v1", "Node")
    assert names(nodes) == [CP, "node-1", "node-2"]
    control_plane, worker = nodes[0], nodes[1]
    assert control_plane["metadata"]["creationTimestamp"] == BOOTED
    assert control_plane["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] == ""
    assert control_plane["metadata"]["labels"]["node.kubernetes.io/exclude-from-external-load-balancers"] == ""
    assert control_plane["spec"]["taints"] == [{"key": "node-role.kubernetes.io/control-plane",
                                                "effect": "NoSchedule"}]
    assert control_plane["spec"]["podCIDR"] == "10.224.0.0/24"
    assert control_plane["status"]["addresses"][0] == {"type": "InternalIP", "address": "172.18.0.2"}
    assert not any(key.startswith("node-role.kubernetes.io/") for key in worker["metadata"]["labels"])
    assert "taints" not in worker["spec"] and worker["spec"]["podCIDR"] == "10.224.1.0/24"

    pods = cluster.list("v1", "Pod", "kube-system")
    assert [p for p in names(pods) if p in STATIC] == STATIC
    assert len(by_prefix(pods, "coredns-")) == 2
    assert sorted(p["spec"]["nodeName"] for p in by_prefix(pods, "kube-proxy-")) == [CP, "node-1", "node-2"]
    assert sorted(p["spec"]["nodeName"] for p in by_prefix(pods, "kindnet-")) == [CP, "node-1", "node-2"]
    assert len(pods) == 4 + 2 + 3 + 3
    for pod in pods:
        assert pod["metadata"]["creationTimestamp"] == BOOTED
        assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        assert condition(pod, "Ready")["status"] == "True"
    # As on kind, CoreDNS runs on the control-plane node (the workers join after the add-ons).
    assert {p["spec"]["nodeName"] for p in by_prefix(pods, "coredns-")} == {CP}
    # Ready 1 s after creation; the static pods after their startup probe (10 s after start).
    assert {condition(p, "Ready")["lastTransitionTime"] for p in by_prefix(pods, "coredns-")} == {
        "2024-12-31T23:59:31Z"}
    assert {condition(p, "Ready")["lastTransitionTime"] for p in pods if p["metadata"]["name"] in STATIC} == {
        "2024-12-31T23:59:41Z"}
    etcd = pods[names(pods).index(f"etcd-{CP}")]
    assert etcd["metadata"]["labels"] == {"component": "etcd", "tier": "control-plane"}
    assert etcd["metadata"]["annotations"]["kubernetes.io/config.source"] == "file"
    assert etcd["metadata"]["ownerReferences"][0]["kind"] == "Node"
    assert etcd["spec"]["priority"] == 2000001000 and etcd["status"]["podIP"] == "172.18.0.2"

    storage = cluster.list("v1", "Pod", "local-path-storage")
    assert [p["status"]["phase"] for p in storage] == ["Running"]
    assert storage[0]["metadata"]["name"].startswith("local-path-provisioner-")


def test_the_add_ons_are_kubeadm_s_and_kind_s_objects() -> None:
    cluster = Cluster(nodes=1, system_pods=True)
    coredns = cluster.get("apps/v1", "Deployment", "coredns", "kube-system")
    assert coredns["metadata"]["labels"] == {"k8s-app": "kube-dns"}
    assert coredns["spec"]["replicas"] == 2
    assert coredns["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.k8s.io/coredns/coredns:v1.12.0"
    assert (coredns["status"]["availableReplicas"], coredns["status"]["readyReplicas"]) == (2, 2)
    service = cluster.get("v1", "Service", "kube-dns", "kube-system")
    assert service["spec"]["clusterIP"] == "10.96.0.10"
    assert [(p["name"], p["port"], p["protocol"]) for p in service["spec"]["ports"]] == [
        ("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9153, "TCP")]
    assert service["metadata"]["labels"]["kubernetes.io/cluster-service"] == "true"
    corefile = cluster.get("v1", "ConfigMap", "coredns", "kube-system")["data"]["Corefile"]
    assert "kubernetes cluster.local in-addr.arpa ip6.arpa {" in corefile
    proxy = cluster.get("apps/v1", "DaemonSet", "kube-proxy", "kube-system")
    assert proxy["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.k8s.io/kube-proxy:v1.36.0"
    assert (proxy["status"]["desiredNumberScheduled"], proxy["status"]["numberReady"]) == (2, 2)
    proxy_config = yaml.safe_load(cluster.get("v1", "ConfigMap", "kube-proxy", "kube-system")["data"]["config.conf"])
    assert (proxy_config["mode"], proxy_config["clusterCIDR"]) == ("iptables", "10.224.0.0/11")
    kindnet = cluster.get("apps/v1", "DaemonSet", "kindnet", "kube-system")
    assert {"name": "POD_SUBNET", "value": "10.224.0.0/11"} in kindnet["spec"]["template"]["spec"]["containers"][0]["env"]
    standard = cluster.get("storage.k8s.io/v1", "StorageClass", "standard", "")
    assert standard["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    assert (standard["provisioner"], standard["volumeBindingMode"]) == ("rancher.io/local-path", "WaitForFirstConsumer")
    kubeadm = yaml.safe_load(cluster.get("v1", "ConfigMap", "kubeadm-config", "kube-system")["data"]["ClusterConfiguration"])
    assert (kubeadm["kubernetesVersion"], kubeadm["networking"]["serviceSubnet"]) == ("v1.36.0", "10.96.0.0/16")
    assert set(names(cluster.list("v1", "ServiceAccount", "kube-system"))) >= {"coredns", "kube-proxy", "kindnet"}


def test_coredns_endpoints_and_the_kubernetes_service() -> None:
    cluster = Cluster(nodes=1, system_pods=True)
    coredns_ips = sorted(p["status"]["podIP"] for p in by_prefix(cluster.list("v1", "Pod", "kube-system"), "coredns-"))
    assert coredns_ips == ["10.224.0.2", "10.224.0.3"]
    endpoints = cluster.get("v1", "Endpoints", "kube-dns", "kube-system")
    (subset,) = endpoints["subsets"]
    assert sorted(a["ip"] for a in subset["addresses"]) == coredns_ips
    assert "notReadyAddresses" not in subset
    assert sorted((p["name"], p["port"], p["protocol"]) for p in subset["ports"]) == [
        ("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9153, "TCP")]
    (dns_slice,) = cluster.list("discovery.k8s.io/v1", "EndpointSlice", "kube-system",
                                label_selector="kubernetes.io/service-name=kube-dns")
    assert sorted(e["addresses"][0] for e in dns_slice["endpoints"] if e["conditions"]["ready"]) == coredns_ips
    # The apiserver's endpoint: the control-plane node's address, port 6443.
    apiserver = cluster.get("v1", "Endpoints", "kubernetes", "default")
    assert apiserver["subsets"] == [{"addresses": [{"ip": "172.18.0.2"}],
                                     "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]


def test_a_single_node_cluster_has_no_control_plane_taint_and_runs_workloads() -> None:
    cluster = Cluster(system_pods=True)  # kind's default cluster: one node
    (node,) = cluster.list("v1", "Node")
    assert node["metadata"]["name"] == CP
    assert "taints" not in node["spec"]
    assert "node.kubernetes.io/exclude-from-external-load-balancers" not in node["metadata"]["labels"]
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]}})
    cluster.advance(1)
    pod = cluster.get("v1", "Pod", "web")
    assert (pod["spec"]["nodeName"], pod["status"]["phase"]) == (CP, "Running")


def test_failed_scheduling_counts_the_tainted_control_plane() -> None:
    cluster = Cluster(nodes=1, system_pods=True)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
                    "spec": {"containers": [{"name": "big", "image": "nginx", "resources": {"requests": {"cpu": "64"}}}]}})
    (event,) = cluster.events("default", "big", "FailedScheduling")
    assert event["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: "
        "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")


def test_the_cluster_ca_is_in_cluster_info_and_every_namespace() -> None:
    cluster = Cluster(system_pods=True)
    roots = {c["metadata"]["namespace"]: c["data"]["ca.crt"]
             for c in cluster.list("v1", "ConfigMap", field_selector="metadata.name=kube-root-ca.crt")}
    assert sorted(roots) == ["default", "kube-node-lease", "kube-public", "kube-system", "local-path-storage"]
    (pem,) = set(roots.values())
    certificate = ssl.create_default_context(cadata=pem).get_ca_certs()[0]
    assert certificate["subject"] == ((("commonName", "kubernetes"),),)
    assert certificate["notBefore"] == "Dec 31 23:59:30 2024 GMT"  # when the cluster booted
    kubeconfig = yaml.safe_load(cluster.get("v1", "ConfigMap", "cluster-info", "kube-public")["data"]["kubeconfig"])
    (entry,) = kubeconfig["clusters"]
    assert entry["cluster"]["server"] == "https://fakekube-control-plane:6443"
    assert base64.b64decode(entry["cluster"]["certificate-authority-data"]).decode() == pem


@pytest.mark.parametrize("parts, kube_system", [
    (SystemPods(core_dns=False, kindnet=False), ["etcd", "kube-apiserver", "kube-controller-manager",
                                                 "kube-proxy", "kube-proxy", "kube-scheduler"]),
    (SystemPods(control_plane=False, kube_proxy=False, local_path_storage=False), ["kindnet", "kube-dns", "kube-dns"]),
])
def test_each_part_can_be_left_out(parts: SystemPods, kube_system: list[str]) -> None:
    cluster = Cluster(nodes=1, system_pods=parts)
    labels = [p["metadata"]["labels"] for p in cluster.list("v1", "Pod", "kube-system")]
    assert sorted(label.get("component") or label["k8s-app"] for label in labels) == kube_system
    for pod in cluster.list("v1", "Pod", "kube-system"):
        assert pod["status"]["phase"] == "Running"
    if not parts.control_plane:
        assert names(cluster.list("v1", "Node")) == ["node-1"]
        assert cluster.list("v1", "ConfigMap", "kube-public", field_selector="metadata.name=cluster-info") == []
    if not parts.local_path_storage:
        assert cluster.list("storage.k8s.io/v1", "StorageClass") == []
        assert "local-path-storage" not in names(cluster.list("v1", "Namespace"))
    if not parts.core_dns:
        assert cluster.list("v1", "Service", "kube-system") == []


def test_the_control_plane_taint_can_be_forced_either_way() -> None:
    untainted = Cluster(nodes=2, system_pods=SystemPods(control_plane_taint=False))
    assert "taints" not in untainted.get("v1", "Node", CP, "")["spec"]
    tainted = Cluster(system_pods=SystemPods(control_plane_taint=True))
    assert tainted.get("v1", "Node", CP, "")["spec"]["taints"][0]["key"] == "node-role.kubernetes.io/control-plane"


def test_off_by_default_in_process_an_empty_cluster() -> None:
    cluster = Cluster(nodes=2)
    assert names(cluster.list("v1", "Node")) == ["node-1", "node-2"]
    assert cluster.list("v1", "Pod") == []
    assert cluster.list("apps/v1", "Deployment") == [] and cluster.list("apps/v1", "DaemonSet") == []
    assert cluster.get("v1", "Namespace", "default", "")["metadata"]["creationTimestamp"] == T0
    assert Cluster(nodes=1, system_pods=False).list("v1", "Pod") == []


def test_system_images_ignore_the_default_behaviour_but_not_an_image_rule() -> None:
    from fakekube.kubelet.behaviour import BehaviourCatalog

    catalog = BehaviourCatalog.from_config({"default": {"run_for_s": 5, "exit_code": 1},
                                            "images": [{"image": "registry.k8s.io/coredns/*", "ready_after_s": 3600}]})
    cluster = Cluster(nodes=1, system_pods=True, behaviours=catalog)
    pods = cluster.list("v1", "Pod", "kube-system")
    assert all(p["status"]["phase"] == "Running" and p["status"]["containerStatuses"][0]["restartCount"] == 0
               for p in pods)
    assert {condition(p, "Ready")["status"] for p in by_prefix(pods, "coredns-")} == {"False"}
    assert {condition(p, "Ready")["status"] for p in by_prefix(pods, "kube-proxy-")} == {"True"}


def test_reset_boots_the_same_cluster_again() -> None:
    cluster = Cluster(nodes=1, system_pods=True, seed=4)
    before = cluster.list("v1", "Pod")
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra"}})
    cluster.advance(60)
    cluster.reset()
    assert cluster.now == datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert cluster.list("v1", "Pod") == before
    assert Cluster(nodes=1, system_pods=True, seed=4).list("v1", "Pod") == before


def test_the_config_file_switches() -> None:
    assert parse_config({"systemPods": True}).system == SystemPods()
    assert parse_config({"systemPods": False}).system == SystemPods.off()
    assert parse_config({}).system_pods is None  # the caller's default: off in-process, on for serve
    assert parse_config({"systemPods": {"coreDNS": False, "controlPlaneTaint": None}}).system == SystemPods(
        core_dns=False)
    assert parse_config({"systemPods": {"controlPlaneTaint": True}}).system.control_plane_taint is True
    with pytest.raises(ConfigError, match=r"^systemPods.coreDns: unknown key \(did you mean coreDNS\?\)"):
        parse_config({"systemPods": {"coreDns": False}})
    with pytest.raises(ConfigError, match=r"^systemPods.kindnet: must be true or false, got a string"):
        parse_config({"systemPods": {"kindnet": "no"}})


def test_a_node_named_like_the_control_plane_is_refused() -> None:
    from fakekube.cluster import NodeSpec

    with pytest.raises(ValueError, match="two nodes are named 'fakekube-control-plane'"):
        Cluster(nodes=(NodeSpec(name=CP),), system_pods=True)


@pytest.mark.parametrize("start_s", range(15))
def test_system_pods_have_metrics_at_start_whatever_second_it_starts(start_s: int) -> None:
    """``serve`` starts at the wall clock's second, anywhere on the 15 s scrape grid; after
    the 30 s boot every system pod has run through two scrapes, so ``kubectl top`` has figures."""
    start = datetime(2025, 1, 1, 0, 0, start_s, tzinfo=timezone.utc)
    cluster = Cluster(system_pods=True, metrics_server=True, start_time=start)
    pods = names(cluster.list("v1", "Pod", "kube-system"))
    metrics = cluster.list("metrics.k8s.io/v1beta1", "PodMetrics", "kube-system")
    assert names(metrics) == pods
    apiserver = next(m for m in metrics if m["metadata"]["name"] == f"kube-apiserver-{CP}")
    assert apiserver["containers"][0]["usage"] == {"cpu": "40m", "memory": "220Mi"}


def test_while_time_flows_a_reset_boots_a_fresh_cluster_at_the_instant_reached() -> None:
    """serve's real time: a reset cluster is as if created now, so kubectl's ages (computed
    from its own clock) stay right; a thousandth of real time keeps this test's instants exact."""
    cluster = Cluster(nodes=1, system_pods=True, time_scale=0.001).start()
    try:
        cluster.advance(90.5)  # the control API's jump: 00:01:30.5 and a bit of flowing time
        cluster.reset()
        reached = datetime(2025, 1, 1, 0, 1, 30, tzinfo=timezone.utc)
        assert cluster.config.start_time == reached
        assert reached <= cluster.now < reached + timedelta(seconds=1)
        apiserver = cluster.get("v1", "Pod", f"kube-apiserver-{CP}", "kube-system")
        assert apiserver["metadata"]["creationTimestamp"] == "2025-01-01T00:01:00Z"  # booted 30 s before
        assert cluster.list("v1", "ConfigMap", "default")[0]["metadata"]["creationTimestamp"].startswith("2025-01-01T00:01")
    finally:
        cluster.stop()


def test_serving_metrics_with_the_add_ons_runs_metrics_servers_pod() -> None:
    """As on kind after ``kubectl apply -f components.yaml`` (with ``--kubelet-insecure-tls``):
    the Deployment is available at start, behind the Service the APIService names."""
    cluster = Cluster(nodes=1, system_pods=True, metrics_server=True)
    deployment = cluster.get("apps/v1", "Deployment", "metrics-server", "kube-system")
    assert deployment["status"]["availableReplicas"] == 1
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.k8s.io/metrics-server/metrics-server:v0.7.2"
    assert "--kubelet-insecure-tls" in container["args"]
    api_service = cluster.get("apiregistration.k8s.io/v1", "APIService", "v1beta1.metrics.k8s.io", "")
    service = api_service["spec"]["service"]
    assert cluster.get("v1", "Service", service["name"], service["namespace"])["spec"]["ports"][0]["port"] == 443
    (pod,) = cluster.list("v1", "Pod", "kube-system", label_selector="k8s-app=metrics-server")
    assert pod["spec"]["nodeName"] == "node-1" and pod["status"]["phase"] == "Running"  # not the tainted control plane
    assert cluster.list("apps/v1", "Deployment", "kube-system", label_selector="k8s-app=metrics-server") != []
    without = Cluster(nodes=1, system_pods=True)
    assert without.list("apps/v1", "Deployment", "kube-system", label_selector="k8s-app=metrics-server") == []
