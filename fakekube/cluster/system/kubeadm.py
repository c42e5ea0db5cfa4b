"""What ``kubeadm init`` 1.33 writes through the API besides static pods, as kind runs it.

* ClusterRoleBinding ``kubeadm:cluster-admins`` (group ``kubeadm:cluster-admins`` to
  ``cluster-admin``: kubeadm 1.29+ puts admin.conf's user, ``kubernetes-admin``, in that
  group rather than ``system:masters``; phases/kubeconfig EnsureAdminClusterRoleBinding);
* ConfigMaps ``kube-system/kubeadm-config`` (the ClusterConfiguration), ``kube-system/
  kubelet-config`` (the KubeletConfiguration every node joins with) and ``kube-public/
  cluster-info`` (a kubeconfig with the CA and the control-plane endpoint, readable by
  anyone: phases/bootstraptoken/clusterinfo);
* the DNS add-on (phases/addons/dns/manifests.go): ServiceAccount, ClusterRole and
  ClusterRoleBinding ``system:coredns``, ConfigMap ``coredns`` (the Corefile), Deployment
  ``coredns`` with 2 replicas, Service ``kube-dns`` at the service CIDR's tenth address;
* the proxy add-on (phases/addons/proxy/manifests.go): ServiceAccount, the
  ``kubeadm:node-proxier`` ClusterRoleBinding, Role and RoleBinding ``kube-proxy``,
  ConfigMap ``kube-proxy`` (its KubeProxyConfiguration as kind sets it: iptables mode,
  the pod CIDR) and the DaemonSet ``kube-proxy``.

Every function returns API objects (``apiVersion``/``kind`` set) in the order kubeadm
creates them.
"""

from __future__ import annotations

import base64
import ipaddress
from typing import Any

from fakekube.cluster.system.controlplane import CLUSTER_NAME, CONTROL_PLANE_ENDPOINT
from fakekube.objects.priority import SYSTEM_NODE_CRITICAL

Obj = dict[str, Any]

#: kubeadm 1.33's CoreDNS image (constants.CoreDNSVersion).
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.12.0"
COREDNS_REPLICAS = 2
#: kubeadm's DNS domain and the index of the DNS Service's address in the service CIDR.
DNS_DOMAIN = "cluster.local"
DNS_IP_INDEX = 10
KUBE_DNS_LABELS = {"k8s-app": "kube-dns"}
SYSTEM_CLUSTER_CRITICAL = "system-cluster-critical"
RBAC = "rbac.authorization.k8s.io/v1"
CONTROL_PLANE_TAINT_KEY = "node-role.kubernetes.io/control-plane"


def dns_ip(service_cidr: str) -> str:
    """kubeadm's ``GetDNSIP``: the tenth address of the service CIDR (10.96.0.10 for kind's)."""
    return str(ipaddress.ip_network(service_cidr, strict=False)[DNS_IP_INDEX])


#: admin.conf's client certificate: CN and O (kubeadm constants.KubernetesAdmin and
#: ClusterAdminsGroupAndClusterRoleBinding), as kind's kubeconfig carries it.
ADMIN_USER = "kubernetes-admin"
CLUSTER_ADMINS_GROUP = "kubeadm:cluster-admins"


def admin_cluster_role_binding() -> Obj:
    """What lets admin.conf's group act as cluster-admin; kubeadm creates it first, as
    soon as the apiserver answers."""
    return _cluster_role_binding(CLUSTER_ADMINS_GROUP, "cluster-admin",
                                 [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                   "name": CLUSTER_ADMINS_GROUP}])


def kubeadm_config_maps(version: str, service_cidr: str, cluster_cidr: str, root_ca_pem: str) -> list[Obj]:
    return [
        _config_map("kubeadm-config", "kube-system",
                    {"ClusterConfiguration": _cluster_configuration(version, service_cidr, cluster_cidr)}),
        _config_map("kubelet-config", "kube-system", {"kubelet": _kubelet_configuration(service_cidr)}),
        _config_map("cluster-info", "kube-public", {"kubeconfig": _cluster_info_kubeconfig(root_ca_pem)}),
    ]


# -- CoreDNS --------------------------------------------------------------------------------

def core_dns(service_cidr: str) -> list[Obj]:
    return [
        _service_account("coredns", "kube-system"),
        {"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "system:coredns"},
         "rules": [{"apiGroups": [""], "resources": ["endpoints", "services", "pods", "namespaces"],
                    "verbs": ["list", "watch"]},
                   {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]}]},
        _cluster_role_binding("system:coredns", "system:coredns",
                              [{"kind": "ServiceAccount", "name": "coredns", "namespace": "kube-system"}]),
        _config_map("coredns", "kube-system", {"Corefile": COREFILE}),
        _core_dns_deployment(),
        _kube_dns_service(dns_ip(service_cidr)),
    ]


COREFILE = f""".:53 {{
    errors
    health {{
       lameduck 5s
    }}
    ready
    kubernetes {DNS_DOMAIN} in-addr.arpa ip6.arpa {{
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }}
    prometheus :9153
    forward . /etc/resolv.conf {{
       max_concurrent 1000
    }}
    cache 30 {{
       disable success {DNS_DOMAIN}
       disable denial {DNS_DOMAIN}
    }}
    loop
    reload
    loadbalance
}}
"""


def _core_dns_deployment() -> Obj:
    http_probe = {"path": "/health", "port": "liveness-probe", "scheme": "HTTP"}
    container = {
        "name": "coredns", "image": COREDNS_IMAGE, "imagePullPolicy": "IfNotPresent",
        "args": ["-conf", "/etc/coredns/Corefile"],
        "resources": {"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
        "ports": [{"containerPort": 53, "name": "dns", "protocol": "UDP"},
                  {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                  {"containerPort": 9153, "name": "metrics", "protocol": "TCP"},
                  {"containerPort": 8080, "name": "liveness-probe", "protocol": "TCP"},
                  {"containerPort": 8181, "name": "readiness-probe", "protocol": "TCP"}],
        "livenessProbe": {"httpGet": http_probe, "initialDelaySeconds": 60, "timeoutSeconds": 5,
                          "successThreshold": 1, "failureThreshold": 5},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "readiness-probe", "scheme": "HTTP"}},
        "securityContext": {"allowPrivilegeEscalation": False,
                            "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
                            "readOnlyRootFilesystem": True},
    }
    anti_affinity = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
        "labelSelector": {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]},
        "topologyKey": "kubernetes.io/hostname"}}]}
    pod_spec = {
        "priorityClassName": SYSTEM_CLUSTER_CRITICAL, "serviceAccountName": "coredns",
        "affinity": {"podAntiAffinity": anti_affinity},
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                        {"key": CONTROL_PLANE_TAINT_KEY, "effect": "NoSchedule"}],
        "nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [container], "dnsPolicy": "Default",
        "volumes": [{"name": "config-volume",
                     "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}]}}],
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "coredns", "namespace": "kube-system", "labels": dict(KUBE_DNS_LABELS)},
            "spec": {"replicas": COREDNS_REPLICAS,
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
                     "selector": {"matchLabels": dict(KUBE_DNS_LABELS)},
                     "template": {"metadata": {"labels": dict(KUBE_DNS_LABELS)}, "spec": pod_spec}}}


def _kube_dns_service(cluster_ip: str) -> Obj:
    labels = {**KUBE_DNS_LABELS, "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": labels,
                         "annotations": {"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
            "spec": {"clusterIP": cluster_ip, "selector": dict(KUBE_DNS_LABELS),
                     "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                               {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                               {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}}


# -- kube-proxy -----------------------------------------------------------------------------

def kube_proxy(version: str, cluster_cidr: str) -> list[Obj]:
    return [
        _service_account("kube-proxy", "kube-system"),
        _cluster_role_binding("kubeadm:node-proxier", "system:node-proxier",
                              [{"kind": "ServiceAccount", "name": "kube-proxy", "namespace": "kube-system"}]),
        {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["kube-proxy"],
                    "verbs": ["get"]}]},
        {"apiVersion": RBAC, "kind": "RoleBinding", "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kube-proxy"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                       "name": "system:bootstrappers:kubeadm:default-node-token"}]},
        {**_config_map("kube-proxy", "kube-system", {"config.conf": _kube_proxy_configuration(cluster_cidr),
                                                     "kubeconfig.conf": KUBE_PROXY_KUBECONFIG}),
         "metadata": {"name": "kube-proxy", "namespace": "kube-system", "labels": {"app": "kube-proxy"}}},
        _kube_proxy_daemonset(version),
    ]


def kube_proxy_image(version: str) -> str:
    return f"registry.k8s.io/kube-proxy:{version}"


KUBE_PROXY_KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
    server: https://{CONTROL_PLANE_ENDPOINT}
  name: default
contexts:
- context:
    cluster: default
    namespace: default
    user: default
  name: default
current-context: default
users:
- name: default
  user:
    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"""


def _kube_proxy_daemonset(version: str) -> Obj:
    labels = {"k8s-app": "kube-proxy"}
    container = {
        "name": "kube-proxy", "image": kube_proxy_image(version), "imagePullPolicy": "IfNotPresent",
        "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                    "--hostname-override=$(NODE_NAME)"],
        "securityContext": {"privileged": True},
        "volumeMounts": [{"mountPath": "/var/lib/kube-proxy", "name": "kube-proxy"},
                         {"mountPath": "/run/xtables.lock", "name": "xtables-lock", "readOnly": False},
                         {"mountPath": "/lib/modules", "name": "lib-modules", "readOnly": True}],
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
    }
    pod_spec = {
        "priorityClassName": SYSTEM_NODE_CRITICAL, "containers": [container], "hostNetwork": True,
        "serviceAccountName": "kube-proxy",
        "volumes": [{"name": "kube-proxy", "configMap": {"name": "kube-proxy"}},
                    {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
                    {"name": "lib-modules", "hostPath": {"path": "/lib/modules"}}],
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, {"operator": "Exists"}],
        "nodeSelector": {"kubernetes.io/os": "linux"},
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "kube-proxy", "namespace": "kube-system", "labels": dict(labels)},
            "spec": {"selector": {"matchLabels": dict(labels)}, "updateStrategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}}


def _kube_proxy_configuration(cluster_cidr: str) -> str:
    """kind's KubeProxyConfiguration as kubeadm stores it (iptables mode, every other field
    at its zero value, as the marshalled v1alpha1 config reads)."""
    return f"""apiVersion: kubeproxy.config.k8s.io/v1alpha1
bindAddress: 0.0.0.0
bindAddressHardFail: false
clientConnection:
  acceptContentTypes: ""
  burst: 0
  contentType: ""
  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
  qps: 0
clusterCIDR: {cluster_cidr}
configSyncPeriod: 0s
conntrack:
  maxPerCore: 0
  min: null
  tcpBeLiberal: false
  tcpCloseWaitTimeout: null
  tcpEstablishedTimeout: null
  udpStreamTimeout: 0s
  udpTimeout: 0s
detectLocal:
  bridgeInterface: ""
  interfaceNamePrefix: ""
detectLocalMode: ""
enableProfiling: false
healthzBindAddress: ""
hostnameOverride: ""
iptables:
  localhostNodePorts: null
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 1s
  syncPeriod: 0s
ipvs:
  excludeCIDRs: null
  minSyncPeriod: 0s
  scheduler: ""
  strictARP: false
  syncPeriod: 0s
  tcpFinTimeout: 0s
  tcpTimeout: 0s
  udpTimeout: 0s
kind: KubeProxyConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
metricsBindAddress: ""
mode: iptables
nftables:
  masqueradeAll: false
  masqueradeBit: null
  minSyncPeriod: 0s
  syncPeriod: 0s
nodePortAddresses: null
oomScoreAdj: null
portRange: ""
showHiddenMetricsForVersion: ""
winkernel:
  enableDSR: false
  forwardHealthCheckVip: false
  networkName: ""
  rootHnsEndpointName: ""
  sourceVip: ""
"""


# -- kubeadm's own ConfigMaps -------------------------------------------------------------------

def _cluster_configuration(version: str, service_cidr: str, cluster_cidr: str) -> str:
    return f"""apiServer:
  certSANs:
  - localhost
  - 127.0.0.1
  extraArgs:
  - name: runtime-config
    value: ""
apiVersion: kubeadm.k8s.io/v1beta4
caCertificateValidityPeriod: 87600h0m0s
certificateValidityPeriod: 8760h0m0s
certificatesDir: /etc/kubernetes/pki
clusterName: {CLUSTER_NAME}
controlPlaneEndpoint: {CONTROL_PLANE_ENDPOINT}
controllerManager:
  extraArgs:
  - name: enable-hostpath-provisioner
    value: "true"
dns: {{}}
encryptionAlgorithm: RSA-2048
etcd:
  local:
    dataDir: /var/lib/etcd
imageRepository: registry.k8s.io
kind: ClusterConfiguration
kubernetesVersion: {version}
networking:
  dnsDomain: {DNS_DOMAIN}
  podSubnet: {cluster_cidr}
  serviceSubnet: {service_cidr}
proxy: {{}}
scheduler: {{}}
"""


def _kubelet_configuration(service_cidr: str) -> str:
    return f"""apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
cgroupRoot: /kubelet
clusterDNS:
- {dns_ip(service_cidr)}
clusterDomain: {DNS_DOMAIN}
containerRuntimeEndpoint: ""
cpuManagerReconcilePeriod: 0s
crashLoopBackOff: {{}}
evictionHard:
  imagefs.available: 0%
  nodefs.available: 0%
  nodefs.inodesFree: 0%
evictionPressureTransitionPeriod: 0s
failSwapOn: false
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
httpCheckFrequency: 0s
imageGCHighThresholdPercent: 100
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {{}}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
"""


def _cluster_info_kubeconfig(root_ca_pem: str) -> str:
    """The kubeconfig kubeadm publishes for joining nodes: the CA and the endpoint, no user."""
    ca_data = base64.b64encode(root_ca_pem.encode()).decode("ascii")
    return f"""apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {ca_data}
    server: https://{CONTROL_PLANE_ENDPOINT}
  name: ""
contexts: null
current-context: ""
kind: Config
users: null
"""


# -- small builders ---------------------------------------------------------------------------

def _config_map(name: str, namespace: str, data: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": data}


def _service_account(name: str, namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}


def _cluster_role_binding(name: str, role: str, subjects: list[Obj]) -> Obj:
    return {"apiVersion": RBAC, "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": subjects}

