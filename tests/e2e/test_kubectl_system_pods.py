"""kubectl against a cluster with system pods: what a new kind cluster shows to
`kubectl get nodes`, `kubectl get pods -A` and `kubectl cluster-info`."""

from __future__ import annotations

import re

import pytest

from fakekube import Cluster

from .conftest import Kubectl, server_version

pytestmark = pytest.mark.fakekube(nodes=1, system_pods=True)

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()[1:]]


def test_get_nodes_shows_the_control_plane_role(kubectl: Kubectl, fakekube: Cluster) -> None:
    text = kubectl.ok("get", "nodes")
    assert text.splitlines()[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    release = f"v{server_version(kubectl.version)}.0"
    assert rows(text) == [["fakekube-control-plane", "Ready", "control-plane", "30s", release],
                          ["node-1", "Ready", "<none>", "30s", release]]


def test_get_pods_all_namespaces_lists_kube_system_running(kubectl: Kubectl, fakekube: Cluster) -> None:
    text = kubectl.ok("get", "pods", "-A")
    assert text.splitlines()[0].split() == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    listed = rows(text)
    assert [row[2:] for row in listed] == [["1/1", "Running", "0", "30s"]] * len(listed)
    generated = re.compile(r"(-[0-9a-f]{8,10})?-[a-z0-9]{5}$")  # a controller's hash and generated suffix
    names = [(row[0], row[1] if row[1].endswith("-fakekube-control-plane") else generated.sub("-*", row[1]))
             for row in listed]
    assert names == [
        ("kube-system", "coredns-*"), ("kube-system", "coredns-*"),
        ("kube-system", "etcd-fakekube-control-plane"),
        ("kube-system", "kindnet-*"), ("kube-system", "kindnet-*"),
        ("kube-system", "kube-apiserver-fakekube-control-plane"),
        ("kube-system", "kube-controller-manager-fakekube-control-plane"),
        ("kube-system", "kube-proxy-*"), ("kube-system", "kube-proxy-*"),
        ("kube-system", "kube-scheduler-fakekube-control-plane"),
        ("local-path-storage", "local-path-provisioner-*"),
    ]
    wide = rows(kubectl.ok("get", "pods", "-n", "kube-system", "-l", "k8s-app=kube-dns", "-o", "wide"))
    assert sorted((row[5], row[6]) for row in wide) == [("10.224.0.2", "fakekube-control-plane"),
                                                  ("10.224.0.3", "fakekube-control-plane")]


def test_cluster_info_names_the_control_plane_and_coredns(kubectl: Kubectl, fakekube: Cluster) -> None:
    lines = [line for line in ANSI.sub("", kubectl.ok("cluster-info")).splitlines() if line]
    assert lines == [
        f"Kubernetes control plane is running at {fakekube.url}",
        f"CoreDNS is running at {fakekube.url}/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy",
        "To further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.",
    ]


def test_coredns_service_and_endpoints(kubectl: Kubectl, fakekube: Cluster) -> None:
    services = rows(kubectl.ok("get", "services", "-A"))
    assert [row[:6] for row in services] == [
        ["default", "kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"],
        ["kube-system", "kube-dns", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP,9153/TCP"],
    ]
    endpoints = rows(kubectl.ok("get", "endpoints", "-n", "kube-system", "kube-dns"))
    assert endpoints[0][:2] == ["kube-dns", "10.224.0.2:53,10.224.0.3:53,10.224.0.2:53"]


def test_a_new_namespace_has_its_root_ca_at_once(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "namespace", "team")
    assert [row[:2] for row in rows(kubectl.ok("get", "configmaps", "-n", "team"))] == [["kube-root-ca.crt", "1"]]
