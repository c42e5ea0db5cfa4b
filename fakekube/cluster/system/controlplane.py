"""The control-plane node and kubeadm's static pods on it.

kind names its control-plane node ``<cluster>-control-plane`` (``kind-control-plane`` for
the default cluster name); fakekube's cluster is called ``fakekube`` (its kubeconfig
context, and the host its scheduler's events name), so the node is
``fakekube-control-plane``. kubeadm labels it ``node-role.kubernetes.io/control-plane``
and ``node.kubernetes.io/exclude-from-external-load-balancers`` and taints it
``node-role.kubernetes.io/control-plane:NoSchedule``; kind removes both the taint and the
exclusion label when the cluster has no other node (kind
pkg/cluster/internal/create/actions/kubeadminit/init.go).

Its kubelet runs kubeadm 1.33's four static pods (cmd/kubeadm/app/phases/controlplane and
etcd): ``etcd``, ``kube-apiserver``, ``kube-controller-manager`` and ``kube-scheduler`` in
``kube-system``, host-network, ``system-node-critical``, with kubeadm's probes (a startup
probe from 10 s, so they are Ready about 11 s after their node registers). The simulated
kubelet makes their mirror pods ``<component>-fakekube-control-plane``
(:mod:`fakekube.kubelet.staticpods`).
"""

from __future__ import annotations

from typing import Any, Callable

from fakekube.cluster.nodespec import NodeSpec
from fakekube.objects.constants import LABEL_NODE_EXCLUDE_FROM_EXTERNAL_LB, LABEL_NODE_ROLE_CONTROL_PLANE
from fakekube.objects.priority import SYSTEM_NODE_CRITICAL

Obj = dict[str, Any]

#: kind's ``<cluster>-control-plane`` for fakekube's cluster name.
CLUSTER_NAME = "fakekube"
CONTROL_PLANE_NODE = f"{CLUSTER_NAME}-control-plane"
CONTROL_PLANE_TAINT: Obj = {"key": LABEL_NODE_ROLE_CONTROL_PLANE, "effect": "NoSchedule"}
#: kube-apiserver's secure port and the address everything inside the cluster reaches it at.
APISERVER_PORT = 6443
CONTROL_PLANE_ENDPOINT = f"{CONTROL_PLANE_NODE}:{APISERVER_PORT}"
#: kubeadm 1.33's etcd image (constants.DefaultEtcdVersion for 1.33).
ETCD_IMAGE = "registry.k8s.io/etcd:3.5.21-0"
PKI = "/etc/kubernetes/pki"


def control_plane_node(tainted: bool, manifests: tuple[Obj, ...]) -> NodeSpec:
    """The control-plane node as kubeadm registers it (and kind adjusts it)."""
    labels = {LABEL_NODE_ROLE_CONTROL_PLANE: ""}
    if tainted:
        labels[LABEL_NODE_EXCLUDE_FROM_EXTERNAL_LB] = ""
    taints = (dict(CONTROL_PLANE_TAINT),) if tainted else ()
    return NodeSpec(name=CONTROL_PLANE_NODE, labels=labels, taints=taints, static_pods=manifests)


def static_pods(node_ip: str, version: str, service_cidr: str, cluster_cidr: str,
                controllers: tuple[str, ...]) -> tuple[Obj, ...]:
    """kubeadm's four static pod manifests for a control plane at ``node_ip`` running
    Kubernetes ``version`` (``v1.33.0``)."""
    return (etcd(node_ip), kube_apiserver(node_ip, version, service_cidr),
            kube_controller_manager(version, service_cidr, cluster_cidr, controllers), kube_scheduler(version))


def etcd(node_ip: str) -> Obj:
    command = ["etcd", f"--advertise-client-urls=https://{node_ip}:2379", f"--cert-file={PKI}/etcd/server.crt",
               "--client-cert-auth=true", "--data-dir=/var/lib/etcd",
               "--experimental-initial-corrupt-check=true", "--experimental-watch-progress-notify-interval=5s",
               f"--initial-advertise-peer-urls=https://{node_ip}:2380",
               f"--initial-cluster={CONTROL_PLANE_NODE}=https://{node_ip}:2380", f"--key-file={PKI}/etcd/server.key",
               f"--listen-client-urls=https://127.0.0.1:2379,https://{node_ip}:2379",
               "--listen-metrics-urls=http://127.0.0.1:2381", f"--listen-peer-urls=https://{node_ip}:2380",
               f"--name={CONTROL_PLANE_NODE}", f"--peer-cert-file={PKI}/etcd/peer.crt",
               "--peer-client-cert-auth=true", f"--peer-key-file={PKI}/etcd/peer.key",
               f"--peer-trusted-ca-file={PKI}/etcd/ca.crt", "--snapshot-count=10000",
               f"--trusted-ca-file={PKI}/etcd/ca.crt"]
    probe = _probe("127.0.0.1", 2381, "HTTP")
    container = {"name": "etcd", "image": ETCD_IMAGE, "imagePullPolicy": "IfNotPresent", "command": command,
                 "livenessProbe": probe("/livez", 8, initial_delay_s=10),
                 "readinessProbe": probe("/readyz", 3, period_s=1),
                 "startupProbe": probe("/readyz", 24, initial_delay_s=10),
                 "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                 "volumeMounts": [{"mountPath": "/var/lib/etcd", "name": "etcd-data"},
                                  {"mountPath": f"{PKI}/etcd", "name": "etcd-certs"}]}
    volumes = [_host_path("etcd-certs", f"{PKI}/etcd", "DirectoryOrCreate"),
               _host_path("etcd-data", "/var/lib/etcd", "DirectoryOrCreate")]
    return _static_pod("etcd", container, volumes,
                       {"kubeadm.kubernetes.io/etcd.advertise-client-urls": f"https://{node_ip}:2379"})


def kube_apiserver(node_ip: str, version: str, service_cidr: str) -> Obj:
    command = ["kube-apiserver", f"--advertise-address={node_ip}", "--allow-privileged=true",
               "--authorization-mode=Node,RBAC", f"--client-ca-file={PKI}/ca.crt",
               "--enable-admission-plugins=NodeRestriction", "--enable-bootstrap-token-auth=true",
               f"--etcd-cafile={PKI}/etcd/ca.crt", f"--etcd-certfile={PKI}/apiserver-etcd-client.crt",
               f"--etcd-keyfile={PKI}/apiserver-etcd-client.key", "--etcd-servers=https://127.0.0.1:2379",
               f"--kubelet-client-certificate={PKI}/apiserver-kubelet-client.crt",
               f"--kubelet-client-key={PKI}/apiserver-kubelet-client.key",
               "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
               f"--proxy-client-cert-file={PKI}/front-proxy-client.crt",
               f"--proxy-client-key-file={PKI}/front-proxy-client.key",
               "--requestheader-allowed-names=front-proxy-client",
               f"--requestheader-client-ca-file={PKI}/front-proxy-ca.crt",
               "--requestheader-extra-headers-prefix=X-Remote-Extra-", "--requestheader-group-headers=X-Remote-Group",
               "--requestheader-username-headers=X-Remote-User", "--runtime-config=",
               f"--secure-port={APISERVER_PORT}", "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
               f"--service-account-key-file={PKI}/sa.pub", f"--service-account-signing-key-file={PKI}/sa.key",
               f"--service-cluster-ip-range={service_cidr}", f"--tls-cert-file={PKI}/apiserver.crt",
               f"--tls-private-key-file={PKI}/apiserver.key"]
    probe = _probe(node_ip, APISERVER_PORT, "HTTPS")
    container = {"name": "kube-apiserver", "image": f"registry.k8s.io/kube-apiserver:{version}",
                 "imagePullPolicy": "IfNotPresent", "command": command,
                 "livenessProbe": probe("/livez", 8, initial_delay_s=10),
                 "readinessProbe": probe("/readyz", 3, period_s=1),
                 "startupProbe": probe("/livez", 24, initial_delay_s=10),
                 "resources": {"requests": {"cpu": "250m"}},
                 "volumeMounts": [{"mountPath": "/etc/ssl/certs", "name": "ca-certs", "readOnly": True},
                                  {"mountPath": "/etc/ca-certificates", "name": "etc-ca-certificates",
                                   "readOnly": True},
                                  {"mountPath": PKI, "name": "k8s-certs", "readOnly": True},
                                  {"mountPath": "/usr/local/share/ca-certificates",
                                   "name": "usr-local-share-ca-certificates", "readOnly": True},
                                  {"mountPath": "/usr/share/ca-certificates", "name": "usr-share-ca-certificates",
                                   "readOnly": True}]}
    volumes = [_host_path("ca-certs", "/etc/ssl/certs", "DirectoryOrCreate"),
               _host_path("etc-ca-certificates", "/etc/ca-certificates", "DirectoryOrCreate"),
               _host_path("k8s-certs", PKI, "DirectoryOrCreate"),
               _host_path("usr-local-share-ca-certificates", "/usr/local/share/ca-certificates", "DirectoryOrCreate"),
               _host_path("usr-share-ca-certificates", "/usr/share/ca-certificates", "DirectoryOrCreate")]
    return _static_pod("kube-apiserver", container, volumes,
                       {"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint":
                        f"{node_ip}:{APISERVER_PORT}"})


def kube_controller_manager(version: str, service_cidr: str, cluster_cidr: str, controllers: tuple[str, ...]) -> Obj:
    kubeconfig = "/etc/kubernetes/controller-manager.conf"
    command = ["kube-controller-manager", "--allocate-node-cidrs=true",
               f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
               "--bind-address=127.0.0.1", f"--client-ca-file={PKI}/ca.crt", f"--cluster-cidr={cluster_cidr}",
               f"--cluster-name={CLUSTER_NAME}", f"--cluster-signing-cert-file={PKI}/ca.crt",
               f"--cluster-signing-key-file={PKI}/ca.key", f"--controllers={','.join(controllers)}",
               "--enable-hostpath-provisioner=true", f"--kubeconfig={kubeconfig}", "--leader-elect=true",
               f"--requestheader-client-ca-file={PKI}/front-proxy-ca.crt", f"--root-ca-file={PKI}/ca.crt",
               f"--service-account-private-key-file={PKI}/sa.key", f"--service-cluster-ip-range={service_cidr}",
               "--use-service-account-credentials=true"]
    probe = _probe("127.0.0.1", 10257, "HTTPS")
    container = {"name": "kube-controller-manager", "image": f"registry.k8s.io/kube-controller-manager:{version}",
                 "imagePullPolicy": "IfNotPresent", "command": command,
                 "livenessProbe": probe("/healthz", 8, initial_delay_s=10),
                 "startupProbe": probe("/healthz", 24, initial_delay_s=10),
                 "resources": {"requests": {"cpu": "200m"}},
                 "volumeMounts": [{"mountPath": "/etc/ssl/certs", "name": "ca-certs", "readOnly": True},
                                  {"mountPath": PKI, "name": "k8s-certs", "readOnly": True},
                                  {"mountPath": kubeconfig, "name": "kubeconfig", "readOnly": True}]}
    volumes = [_host_path("ca-certs", "/etc/ssl/certs", "DirectoryOrCreate"),
               _host_path("k8s-certs", PKI, "DirectoryOrCreate"),
               _host_path("kubeconfig", kubeconfig, "FileOrCreate")]
    return _static_pod("kube-controller-manager", container, volumes)


def kube_scheduler(version: str) -> Obj:
    kubeconfig = "/etc/kubernetes/scheduler.conf"
    command = ["kube-scheduler", f"--authentication-kubeconfig={kubeconfig}",
               f"--authorization-kubeconfig={kubeconfig}", "--bind-address=127.0.0.1",
               f"--kubeconfig={kubeconfig}", "--leader-elect=true"]
    probe = _probe("127.0.0.1", 10259, "HTTPS")
    container = {"name": "kube-scheduler", "image": f"registry.k8s.io/kube-scheduler:{version}",
                 "imagePullPolicy": "IfNotPresent", "command": command,
                 "livenessProbe": probe("/livez", 8, initial_delay_s=10),
                 "readinessProbe": probe("/readyz", 3, period_s=1),
                 "startupProbe": probe("/livez", 24, initial_delay_s=10),
                 "resources": {"requests": {"cpu": "100m"}},
                 "volumeMounts": [{"mountPath": kubeconfig, "name": "kubeconfig", "readOnly": True}]}
    return _static_pod("kube-scheduler", container, [_host_path("kubeconfig", kubeconfig, "FileOrCreate")])


def static_pod_images(version: str) -> tuple[str, ...]:
    """The images the static pods run (kind's node image holds them)."""
    return (ETCD_IMAGE, *(f"registry.k8s.io/{component}:{version}"
                          for component in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")))


def _static_pod(component: str, container: Obj, volumes: list[Obj], annotations: Obj | None = None) -> Obj:
    metadata: Obj = {"name": component, "namespace": "kube-system",
                     "labels": {"component": component, "tier": "control-plane"}}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": [container], "hostNetwork": True, "priorityClassName": SYSTEM_NODE_CRITICAL,
                     "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}, "volumes": volumes}}


def _probe(host: str, port: int, scheme: str) -> Callable[..., Obj]:
    """kubeadm's probe shape (``staticpodutil.createHTTPProbe``): timeout 15 s, period 10 s."""
    def make(path: str, failure_threshold: int, initial_delay_s: int = 0, period_s: int = 10) -> Obj:
        probe: Obj = {"httpGet": {"host": host, "path": path, "port": port, "scheme": scheme},
                      "failureThreshold": failure_threshold, "periodSeconds": period_s, "timeoutSeconds": 15}
        if initial_delay_s:
            probe["initialDelaySeconds"] = initial_delay_s
        return probe
    return make


def _host_path(name: str, path: str, kind: str) -> Obj:
    return {"name": name, "hostPath": {"path": path, "type": kind}}
